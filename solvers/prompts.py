"""Texts the conductor and its workers see. Pure Python: no Inspect import.

The conductor gets one user message, ordered like the paper's prompt (its Fig. 13): its role,
its inputs, the objective (up to N steps), what a step is, how steps are prompted and that
the last response is the answer, the three lists and the meaning of ["all"] / [], then
"For instance:" with the few-shot examples (`solvers/few_shot/`), the user question and the
available models. Workers are shown by ordinal name only (Model 0..k-1) with the pool's
optional description, so brand names do not bias it. The wording is the project's own.

Worker prompts (`step_turns`): with question="first" (the paper's) the first step of a
round gets the question and its subtask; a later step gets the turns of the steps it sees
(the first step's turn with the question in it), then its own subtask, and sees the question
only through them or its subtask. With question="every" (the project's earlier behaviour)
the first turn of every step's conversation carries the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from solvers.few_shot import render_examples

QuestionMode = Literal["first", "every"]
QUESTION_MODES = ("first", "every")

ROLE = """\
You are a conductor: you answer questions by directing a team of language models that have \
different skills. You do not answer the question yourself; you plan who does what.

You are given a user question and a numbered list of the models you can use. Your job is to \
write a workflow of at most {max_steps} steps that gets the question answered correctly.

A step hands one model a subtask and decides which earlier steps that model may read. A \
subtask can solve the question from scratch, check or improve an earlier response, or do \
anything else that helps the steps after it.

{prompting} The response of the last step goes back to the user as the final answer, so the \
last subtask must ask for the answer in the form the question requires.

Think about the question and the models first, as freely and as long as you find useful. \
Then write three Python lists of the same length, each as one assignment on its own line:
- model_id: for each step, the number of the model that runs it (0 for Model 0, and so on).
- subtasks: for each step, the instruction that model receives, as a string.
- access_list: for each step, which earlier steps it can read: {access}
{recursion}
{examples}QUESTION:
{question}

MODELS:
{models}"""

PROMPTING = {
    "first": (
        "The first step receives the user question together with its subtask. Every later "
        "step receives, as earlier turns of its own conversation, the subtask and response of "
        "each step it may read, and then its own subtask; it is not given the user question "
        "itself, so a step that reads no earlier step must have the question restated in its "
        "subtask."
    ),
    "every": (
        "Every step receives the user question together with its subtask, preceded by the "
        "subtask and response of each earlier step it may read, as earlier turns of its "
        "conversation."
    ),
}

ACCESS = {
    "binary": '["all"] lets it read every earlier step (their subtasks and responses), [] lets it read none.',
    "indices": (
        '["all"] lets it read every earlier step (their subtasks and responses), [] lets it '
        "read none, and a list of step numbers such as [0, 2] lets it read exactly those "
        "earlier steps (steps are numbered from 0)."
    ),
}

RECURSION_NOTE = """
Model {self_id} is you, the conductor. A step that names Model {self_id} shows you the \
response of the step before it; you can then keep that response or write more steps to improve it.
"""

RECURSION_TURN = """\
Your workflow has run up to the step that called you. The response of the step before it is:

<response>
{response}
</response>

You may now write up to {max_steps} new steps in the same format. In the new access_list, \
["all"] also gives a step this response, besides the new steps before it. If the response \
already answers the question well, keep it by writing three empty lists:
model_id = []
subtasks = []
access_list = []{no_self}"""

NO_SELF = "\nModel {self_id} (yourself) cannot be called again in these new steps."
NO_RESPONSE = "(none: no earlier step gave a response)"
STEP_PROMPT = "{question}\n\nYour subtask: {subtask}"
NEXT_SUBTASK = "Your subtask: {subtask}"


def worker_listing(descriptions: Sequence[str]) -> str:
    """'Model 0: ...' lines, one per offered worker, in ordinal order."""
    return "\n".join(f"Model {i}" + (f": {d}" if d else "") for i, d in enumerate(descriptions))


def conductor_prompt(
    question: str,
    descriptions: Sequence[str],
    max_steps: int,
    *,
    self_id: int | None = None,
    few_shot: str = "ood",
    access: str = "binary",
    question_mode: QuestionMode = "first",
) -> str:
    """The conductor's single user message; `self_id` offers the conductor itself as a worker."""
    listing = worker_listing(descriptions)
    if self_id is not None:
        listing += f"\nModel {self_id}: yourself, the conductor (review the response so far and keep or improve it)"
    examples = render_examples(few_shot, max(1, len(descriptions)))
    return ROLE.format(
        max_steps=max_steps,
        prompting=PROMPTING[question_mode],
        access=ACCESS[access],
        recursion=RECURSION_NOTE.format(self_id=self_id) if self_id is not None else "",
        examples=f"For instance:\n\n{examples}\n\n" if examples else "",
        question=question,
        models=listing,
    )


def recursion_turn(response: str | None, max_steps: int, can_recurse: bool = False, self_id: int = 0) -> str:
    """The user turn that continues the conductor's conversation in a recursive round."""
    return RECURSION_TURN.format(
        response=NO_RESPONSE if response is None else response,
        max_steps=max_steps,
        no_self="" if can_recurse else NO_SELF.format(self_id=self_id),
    )


def step_turns(
    question: str,
    seen: Sequence[tuple[str, str, bool]],
    subtask: str,
    with_question: bool,
) -> list[tuple[str, str]]:
    """A step's conversation as (role, text) turns: each seen (subtask, response, with_question)
    as a past user/assistant pair, then its own subtask; a turn flagged `with_question`
    carries the user question before its subtask."""
    turns: list[tuple[str, str]] = []
    for seen_subtask, response, asks in seen:
        prompt = STEP_PROMPT if asks else NEXT_SUBTASK
        turns += [("user", prompt.format(question=question, subtask=seen_subtask)), ("assistant", response)]
    prompt = STEP_PROMPT if with_question else NEXT_SUBTASK
    turns.append(("user", prompt.format(question=question, subtask=subtask)))
    return turns
