"""The conductor solver with scripted models: rounds, recursion, rejections, logs."""

import asyncio
import re

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from scripted import scripted, user_texts

from solvers.conducting import Settings, conduct
from solvers.conductor import conductor, few_shot_name
from solvers.executor import Worker
from solvers.few_shot import load_examples
from solvers.team import Conductor, sample_subset
from solvers.workflow import parse_workflow
from workers.pools import Price

QUESTION = "What is 6 x 7? Reply with the number."
TWO_STEPS = 'Plan.\nmodel_id = [0, 1]\nsubtasks = ["Compute it.", "Give the final number."]\naccess_list = [[], "all"]'
KEEP = "model_id = []\nsubtasks = []\naccess_list = []"


def lead(reply) -> Conductor:
    return Conductor(scripted(reply), "scripted-conductor", None, grammar=False)


def workers():
    return [Worker(scripted("41"), "w0", "first"), Worker(scripted("42"), "w1", "second")]


async def test_round_runs_the_written_workflow():
    record = await conduct(QUESTION, lead(TWO_STEPS), workers(), Settings())
    assert record.rejection is None
    assert record.workflow == {
        "model_id": [0, 1],
        "subtasks": ["Compute it.", "Give the final number."],
        "access_list": [[], ["all"]],
    }
    assert [s.model for s in record.steps] == ["w0", "w1"]
    assert record.answer == "42"
    assert record.calls() == 3
    assert record.total_usage().output_tokens == 15


async def test_prompt_lists_workers_by_ordinal_name_only():
    conductor_model = scripted(TWO_STEPS)
    await conduct(QUESTION, Conductor(conductor_model, "c", None, False), workers(), Settings())
    [message] = conductor_model.calls[0]  # one user message, as the paper's prompt
    prompt = message.text
    assert message.role == "user"
    assert "Model 0: first" in prompt and "Model 1: second" in prompt
    assert "w0" not in prompt and "w1" not in prompt
    assert "Example 4" in prompt  # the few-shot workflows


async def test_malformed_workflow_is_a_named_rejection_and_nothing_runs():
    pool = workers()
    hostile = "model_id = [__import__('os').system('id')]\nsubtasks = ['a']\naccess_list = [[]]"
    record = await conduct(QUESTION, lead(hostile), pool, Settings())
    assert record.rejection == "not_literal"
    assert record.answer is None and record.steps == []
    assert all(w.model.calls == [] for w in pool)


def is_recursion_turn(messages) -> bool:
    return len(messages) > 1 and "Your workflow has run" in user_texts(messages)[-1]


def recursive_conductor(nested_reply: str, root: str | None = None):
    """The root round asks itself (Model 2) after step 0; the nested round replies `nested_reply`."""

    def reply(messages):
        if is_recursion_turn(messages):
            return nested_reply
        return root or 'model_id = [0, 2]\nsubtasks = ["Compute it.", "Review."]\naccess_list = [[], ["all"]]'

    return lead(reply)


async def test_recursion_keeps_the_answer_with_three_empty_lists():
    record = await conduct(QUESTION, recursive_conductor(KEEP), workers(), Settings(max_depth=1))
    nested = record.steps[1].round
    assert nested is not None and nested.depth == 1
    assert nested.workflow == {"model_id": [], "subtasks": [], "access_list": []}
    assert record.answer == "41"  # step 0's answer kept by the reviewer
    assert record.calls() == 3 and record.agent_calls() == 1 and record.conductor_calls() == 2


async def test_recursion_continues_the_conductors_own_conversation():
    conductor = recursive_conductor(KEEP)
    record = await conduct(QUESTION, conductor, workers(), Settings(max_depth=1))
    root_call, nested_call = conductor.model.calls
    assert [m.role for m in nested_call] == ["user", "assistant", "user"]
    assert nested_call[0].text == root_call[0].text  # the same first prompt
    assert nested_call[1].text == record.completion  # its own earlier completion
    assert "<response>\n41\n</response>" in nested_call[2].text  # the step before it
    assert "three empty lists" in nested_call[2].text
    nested = record.steps[1].round
    assert [t["role"] for t in nested.conversation] == ["assistant", "user"]
    assert "41" in nested.conversation[1]["content"]


async def test_recursion_can_write_a_new_workflow_whose_all_steps_see_the_previous_answer():
    redo = 'model_id = [1, 0]\nsubtasks = ["Recompute carefully.", "Final."]\naccess_list = [[], ["all"]]'
    pool = [Worker(scripted("41"), "w0", "first"), Worker(scripted("42"), "w1", "second")]
    record = await conduct(QUESTION, recursive_conductor(redo), pool, Settings(max_depth=1))
    nested = record.steps[1].round
    assert [s.model for s in nested.steps] == ["w1", "w0"]
    assert record.answer == "41"
    # nested step 0 ([]) sees its round's question only; nested step 1 (["all"]) also sees
    # the previous final message (root step 0's turn) before the new step 0
    nested_first, nested_last = pool[1].model.calls[0], pool[0].model.calls[-1]
    assert [m.role for m in nested_first] == ["user"] and QUESTION in nested_first[0].text
    assert [m.text for m in nested_last if m.role == "assistant"] == ["41", "42"]
    assert record.total_usage().output_tokens == 5 * 5


async def test_failed_nested_round_falls_back_to_the_previous_response():
    # at depth 1 of max_depth 1 the conductor is no longer offered: naming it is rejected
    again = 'model_id = [2]\nsubtasks = ["Review again."]\naccess_list = [["all"]]'
    record = await conduct(QUESTION, recursive_conductor(again), workers(), Settings(max_depth=1))
    step = record.steps[1]
    assert step.round.rejection == "unknown_worker"
    assert step.ok and step.output == "41" and "unknown_worker" in step.fallback
    assert record.answer == "41"  # a correct answer is never turned into none


def test_failed_nested_round_is_shown_in_the_log():
    root = 'model_id = [1, 2]\nsubtasks = ["Compute it.", "Review."]\naccess_list = [[], ["all"]]'

    def reply(messages):
        return "I cannot decide." if is_recursion_turn(messages) else root

    log = run_eval(reply, solver=conductor(max_depth=1))
    sample = log.samples[0]
    meta = sample.metadata["conductor"]
    assert sample.scores["includes"].value == "C"  # "The answer is 42" survives the failed review
    assert meta["recursions"] == 1 and meta["fallbacks"] == 1
    step = meta["round"]["steps"][1]
    assert step["round"]["rejection"] == "missing_list" and "previous response is kept" in step["fallback"]
    assert [t["role"] for t in step["round"]["conversation"]] == ["assistant", "user"]
    infos = [e for e in sample.events if e.event == "info" and e.source == "conductor"]
    text = sample.attachments.get(infos[0].data.removeprefix("attachment://"), infos[0].data)
    assert "continuing the conductor's conversation" in text and "fallback:" in text


async def test_max_recursions_bounds_recursive_calls_per_sample():
    root = 'model_id = [0, 2, 2]\nsubtasks = ["Compute it.", "Review.", "Review again."]\naccess_list = [[], [], []]'
    conductor = recursive_conductor(KEEP, root=root)
    record = await conduct(QUESTION, conductor, workers(), Settings(max_depth=1, max_recursions=1))
    assert len(conductor.model.calls) == 2  # the root and one recursive call
    assert record.steps[1].round.workflow is not None
    assert record.steps[2].round.rejection == "recursion_budget"
    assert record.steps[2].fallback and record.answer == "41"
    assert record.conductor_calls() == 2


async def test_recursion_depth_is_bounded():
    again = 'model_id = [2]\nsubtasks = ["Review again."]\naccess_list = [["all"]]'
    conductor = recursive_conductor(again)
    record = await conduct(QUESTION, conductor, workers(), Settings(max_depth=1, max_recursions=5))
    assert len(conductor.model.calls) == 2
    assert "cannot be called again" in user_texts(conductor.model.calls[1])[-1]
    assert record.steps[1].round.rejection == "unknown_worker"


async def test_conductor_is_not_offered_without_recursion():
    record = await conduct(QUESTION, recursive_conductor(KEEP), workers(), Settings(max_depth=0))
    assert record.rejection == "unknown_worker"
    no_budget = Settings(max_depth=1, max_recursions=0)
    model = scripted(TWO_STEPS)
    await conduct(QUESTION, Conductor(model, "c", None, False), workers(), no_budget)
    assert "Model 2" not in model.calls[0][0].text
    record = await conduct(QUESTION, recursive_conductor(KEEP), workers(), no_budget)
    assert record.rejection == "unknown_worker"


async def test_nested_round_is_told_when_it_may_recurse_again():
    again = 'model_id = [0, 2]\nsubtasks = ["Compute.", "Review."]\naccess_list = [[], ["all"]]'
    conductor = recursive_conductor(again)
    record = await conduct(QUESTION, conductor, workers(), Settings(max_depth=2, max_recursions=2))
    turns = [user_texts(call)[-1] for call in conductor.model.calls]
    assert len(turns) == 3  # root, depth 1 (may recurse), depth 2 (budget and depth spent)
    assert "cannot be called again" not in turns[1] and "cannot be called again" in turns[2]
    assert record.steps[1].round.steps[1].round.depth == 2


def test_pool_subset_is_seeded_and_per_sample():
    assert sample_subset(7, None, 0, "a") == list(range(7))
    first = sample_subset(7, 3, 0, "sample-1/1")
    assert first == sample_subset(7, 3, 0, "sample-1/1") and len(first) == 3
    draws = {tuple(sample_subset(7, 3, 0, f"sample-{i}/1")) for i in range(20)}
    assert len(draws) > 1
    assert sample_subset(7, 3, 1, "sample-1/1") != first or sample_subset(7, 3, 2, "sample-1/1") != first


def run_eval(conductor_reply, solver=None, **roles):
    task = Task(
        dataset=[Sample(input=QUESTION, target="42", id="q1")],
        solver=solver or conductor(),
        scorer=includes(),
    )
    roles = {
        "conductor": scripted(conductor_reply),
        "workers": [scripted("I think 41"), scripted("The answer is 42")],
        **roles,
    }
    [log] = eval(task, model="mockllm/model", model_roles=roles, display="none", log_dir=None)
    return log


def test_eval_records_the_workflow_in_metadata_and_transcript(tmp_path):
    log = run_eval(TWO_STEPS)
    assert log.status == "success", log.error
    sample = log.samples[0]
    meta = sample.metadata["conductor"]
    assert meta["parsed"] and meta["steps"] == 2 and meta["calls"] == 3
    assert meta["settings"]["access"] == "binary" and meta["settings"]["question"] == "first"
    assert meta["settings"]["few_shot"] == "ood"
    assert meta["workers"] == ["mockllm/model", "mockllm/model"]
    step = meta["round"]["steps"][1]
    assert step["visible"] == [0] and step["output"] == "The answer is 42" and step["latency"] >= 0
    assert sample.scores["includes"].value == "C"
    spans = [e for e in sample.events if e.event == "span_begin" and e.type == "workflow_step"]
    assert len(spans) == 2
    infos = [e for e in sample.events if e.event == "info" and e.source == "conductor"]
    table = sample.attachments.get(infos[0].data.removeprefix("attachment://"), infos[0].data)
    assert "| 1 | Model 1" in table


def test_eval_scores_a_rejected_workflow_as_wrong_with_the_reason():
    log = run_eval("model_id = [0, 1]\nsubtasks = ['only one']\naccess_list = [[]]")
    assert log.status == "success"
    sample = log.samples[0]
    assert sample.metadata["conductor"]["rejection"] == "unequal_lengths"
    assert sample.scores["includes"].value == "I"


def test_eval_worker_failure_does_not_crash_the_eval():
    roles = {"workers": [scripted("x", fail=RuntimeError("503 overloaded")), scripted("42")]}
    log = run_eval('model_id = [0]\nsubtasks = ["Solve."]\naccess_list = [[]]', **roles)
    assert log.status == "success"
    step = log.samples[0].metadata["conductor"]["round"]["steps"][0]
    assert "503 overloaded" in step["error"]
    assert log.samples[0].scores["includes"].value == "I"


def test_single_worker_baseline_uses_the_same_records():
    from solvers.baselines import single_worker

    log = run_eval("unused", solver=single_worker(worker=1))
    sample = log.samples[0]
    meta = sample.metadata["conductor"]
    assert meta["calls"] == 1 and meta["conductor"] is None
    assert sample.scores["includes"].value == "C"


def test_answer_grammar_follows_the_sample_format():
    from inspect_ai.model import ModelName
    from inspect_ai.solver import TaskState

    from solvers.conductor import sample_answer_constraint

    def state(metadata):
        return TaskState(ModelName("mockllm/model"), "q", 0, 0, "q", [], metadata=metadata)

    letters = sample_answer_constraint(state({"choices": ["x", "y", "z"]}))
    assert '"A" | "B" | "C"' in letters.grammar and '"D"' not in letters.grammar
    assert letters.max_tokens >= len("ANSWER: A")
    assert "ANSWER: " in sample_answer_constraint(state({})).grammar
    assert sample_answer_constraint(state({"answer_format": "code"})) is None


# ---------------------------------------------------------------- the paper's method by default

FIGURE_2 = """The problem needs a careful derivation. The strongest math model should solve it, and a
second model should check the work and state the final answer.

model_id = [1, 0]
subtasks = ["Solve the problem step by step.", "Verify the solution above and give the final number."]
access_list = [[], ["all"]]"""


async def test_paper_figure_2_style_completion_parses_and_runs():
    pool = workers()
    record = await conduct(QUESTION, lead(FIGURE_2), pool, Settings())
    assert record.rejection is None and record.workflow["access_list"] == [[], ["all"]]
    assert record.answer == "41"
    [checker_call] = pool[0].model.calls
    assert [m.role for m in checker_call] == ["user", "assistant", "user"]
    assert checker_call[1].text == "42"


async def test_prompt_follows_the_papers_order_and_allows_free_reasoning():
    model = scripted(TWO_STEPS)
    await conduct(QUESTION, Conductor(model, "c", None, False), workers(), Settings(max_depth=1))
    prompt = model.calls[0][0].text
    marks = [
        "conductor",
        "at most 5 steps",
        "subtask",
        "The first step receives the user question",
        "last step goes back to the user",
        "model_id:",
        "subtasks:",
        "access_list:",
        '["all"]',
        "For instance:",
        "Example 1.",
        "QUESTION:\n" + QUESTION,
        "MODELS:\nModel 0: first",
        "Model 2: yourself",
    ]
    positions = [prompt.find(mark) for mark in marks]
    assert -1 not in positions, [m for m, p in zip(marks, positions, strict=True) if p < 0]
    assert positions == sorted(positions)
    assert "at most a line" not in prompt and "as freely" in prompt
    assert "[0, 2]" not in prompt  # the binary scheme does not mention index lists


@pytest.mark.parametrize("few_shot", ["ood", "in_distribution", "mixed", "legacy"])
@pytest.mark.parametrize("pool_size", [1, 2, 7])
async def test_few_shot_examples_are_valid_workflows_for_the_pool_in_use(few_shot, pool_size):
    access = "indices" if few_shot == "legacy" else "binary"
    model = scripted(TWO_STEPS)
    pool = [Worker(scripted("x"), f"w{i}") for i in range(pool_size)]
    await conduct(QUESTION, Conductor(model, "c", None, False), pool, Settings(few_shot=few_shot, access=access))
    prompt = model.calls[0][0].text
    examples = prompt.split("For instance:")[1].split("QUESTION:")[0].split("Example ")[1:]
    assert len(examples) == 4
    for example in examples:
        result = parse_workflow(example, range(pool_size), access=access)
        assert result.ok, (example, result.error)
    if pool_size == 7 and few_shot == "ood":  # ids span the whole pool
        ids = {i for e in examples for i in parse_workflow(e, range(7)).workflow.model_ids}
        assert ids == set(range(7))


async def test_no_few_shot_and_sets_differ():
    prompts_seen = {}
    for few_shot in ("ood", "in_distribution", "mixed", "none"):
        model = scripted(TWO_STEPS)
        await conduct(QUESTION, Conductor(model, "c", None, False), workers(), Settings(few_shot=few_shot))
        prompts_seen[few_shot] = model.calls[0][0].text
    assert "Example 1." not in prompts_seen["none"] and "For instance" not in prompts_seen["none"]
    assert "\n\nQUESTION:\n" in prompts_seen["none"]
    assert "Countdown" not in prompts_seen["ood"]  # no dataset names leak into the prompt
    assert "141" in prompts_seen["ood"] and "141" not in prompts_seen["in_distribution"]
    assert "182" in prompts_seen["mixed"] and "3x^2" in prompts_seen["mixed"]


def test_few_shot_data_files_state_their_provenance():
    for name in ("ood", "in_distribution", "legacy"):
        for example in load_examples(name):
            assert example.provenance and example.reasoning and example.question
    assert {e.id for e in load_examples("mixed")} <= {
        e.id for e in load_examples("ood") + load_examples("in_distribution")
    }


async def test_format_retries_resample_and_every_attempt_counts():
    replies = iter(["no lists here", "model_id = [0]\nsubtasks = ['a', 'b']\naccess_list = [[]]", TWO_STEPS])
    record = await conduct(QUESTION, lead(lambda m: next(replies)), workers(), Settings(format_retries=2))
    assert record.rejection is None and record.answer == "42"
    assert [a["rejection"] for a in record.attempts] == ["missing_list", "unequal_lengths", None]
    assert record.conductor_calls() == 3 and record.agent_calls() == 2
    assert record.usage.output_tokens == 15  # three conductor generations of 5 tokens
    once = await conduct(QUESTION, lead("no lists here"), workers(), Settings())
    assert once.rejection == "missing_list" and len(once.attempts) == 1


async def test_conductor_budget_defaults_to_1024_tokens():
    model = scripted(TWO_STEPS)
    await conduct(QUESTION, Conductor(model, "c", None, False), workers(), Settings())
    assert model.configs[0].max_tokens == 1024


def test_worker_and_conductor_cost_and_calls_are_apart():
    from solvers.conducting import summary

    priced = [
        Worker(scripted("41"), "w0", price=Price(input=1.0, output=1.0)),
        Worker(scripted("42"), "w1", price=Price(input=1.0, output=1.0)),
    ]
    record = asyncio.run(conduct(QUESTION, lead(TWO_STEPS), priced, Settings()))
    meta = summary(record, priced, [0, 1])
    assert meta["conductor_cost_usd"] is None  # an unknown conductor price (a local checkpoint)
    assert meta["worker_cost_usd"] == pytest.approx(record.worker_usage().input_tokens / 1e6 + 10 / 1e6)
    assert meta["cost_usd"] is None
    assert meta["agent_calls"] == 2 and meta["conductor_calls"] == 1 and meta["calls"] == 3


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"max_steps": 0}, "max_steps=0"),
        ({"max_steps": -1}, "max_steps=-1"),
        ({"step_timeout": 0}, "step_timeout=0"),
        ({"step_timeout": -1}, "step_timeout=-1"),
        ({"max_depth": -1}, "max_depth=-1"),
        ({"max_recursions": -2}, "max_recursions=-2"),
        ({"format_retries": -1}, "format_retries=-1"),
        ({"few_shot": "bogus"}, "few_shot='bogus'"),
        ({"few_shot": "legacy"}, "access=indices"),
        ({"access": "some"}, "access='some'"),
        ({"question": "never"}, "question='never'"),
        ({"reasoning_chars": -5}, "reasoning_chars=-5"),
        ({"on_error": "ignore"}, "on_error='ignore'"),
        ({"pool_size": 0}, "pool_size=0"),
        ({"max_tokens": 0}, "max_tokens=0"),
        ({"worker_temperature": -1}, "worker_temperature=-1"),
        ({"seed": "x"}, "seed='x'"),
        ({"grammar": "false"}, "grammar='false'"),
        ({"concurrent": "yes"}, "concurrent='yes'"),
        ({"subtasks": "none"}, "subtasks='none'"),
        ({"replace_workers": "gpt5"}, "replace_workers='gpt5'"),
    ],
)
def test_nonsensical_options_fail_at_start_naming_the_option(options, named):
    with pytest.raises(ValueError, match=re.escape(named)) as error:
        conductor(**options)
    assert "expected" in str(error.value)


def test_single_worker_rejects_bad_options_at_start():
    from solvers.baselines import single_worker

    with pytest.raises(ValueError, match="worker=-1"):
        single_worker(worker=-1)
    with pytest.raises(ValueError, match="step_timeout=0"):
        single_worker(step_timeout=0)


def test_few_shot_true_false_keep_their_meaning_and_case_is_ignored():
    assert few_shot_name(True) == "ood" and few_shot_name(False) == "none" and few_shot_name("OOD") == "ood"
    conductor(access="Indices", question="EVERY", few_shot="Legacy")  # accepted


async def test_earlier_behaviour_with_indices_every_and_no_examples():
    old = 'Plan.\nmodel_id = [0, 1, 0]\nsubtasks = ["A", "B", "C"]\naccess_list = [[], [], [0, 1]]'
    model = scripted(old)
    pool = [Worker(scripted("41"), "w0"), Worker(scripted("42"), "w1")]
    settings = Settings(access="indices", question="every", few_shot="none")
    record = await conduct(QUESTION, Conductor(model, "c", None, False), pool, settings)
    assert record.rejection is None and record.steps[2].visible == [0, 1]
    assert "Example" not in model.calls[0][0].text and "[0, 2]" in model.calls[0][0].text
    # every step's conversation starts with the question, as before
    for call in [*pool[0].model.calls, *pool[1].model.calls]:
        assert call[0].text.startswith(QUESTION)
    # the default (binary) scheme names the index list as its rejection
    assert (await conduct(QUESTION, lead(old), pool, Settings())).rejection == "indices_access"


def test_single_worker_sends_the_benchmark_prompt_alone():
    from solvers.baselines import single_worker

    alone = scripted("42")
    log = run_eval("unused", solver=single_worker(worker=0), workers=[alone])
    assert log.status == "success", log.error
    [call] = alone.calls
    assert [m.text for m in call] == [QUESTION]
    meta = log.samples[0].metadata["conductor"]
    assert meta["agent_calls"] == 1 and meta["conductor_calls"] == 0


# ---------------------------------------------------------------- one code path after generation


async def test_run_completion_is_the_solvers_round_after_generation():
    from solvers.conducting import conductor_messages, run_completion

    conductor_model = scripted(TWO_STEPS)
    solved = await conduct(QUESTION, Conductor(conductor_model, "c", None, False), workers(), Settings())
    direct = await run_completion(TWO_STEPS, QUESTION, workers(), Settings(), conductor_name="c")
    assert direct.to_dict()["workflow"] == solved.to_dict()["workflow"]
    assert [(s.model, s.subtask, s.visible, s.output) for s in direct.steps] == [
        (s.model, s.subtask, s.visible, s.output) for s in solved.steps
    ]
    assert direct.answer == solved.answer == "42" and direct.conductor_calls() == 1
    # the prompt builder is the exact message the solver sent
    [sent] = conductor_model.calls[0]
    [built] = conductor_messages(QUESTION, ["first", "second"], Settings())
    assert sent.role == built.role == "user" and sent.text == built.text


async def test_run_completion_rejects_with_a_reason_and_runs_nothing():
    from solvers.conducting import run_completion

    pool = workers()
    record = await run_completion("no lists here", QUESTION, pool, Settings())
    assert record.rejection == "missing_list" and record.answer is None and record.steps == []
    assert record.attempts[0]["rejection"] == "missing_list"
    assert all(w.model.calls == [] for w in pool)


async def test_run_completion_without_a_lead_does_not_offer_recursion():
    from solvers.conducting import run_completion

    calls_self = 'model_id = [0, 2]\nsubtasks = ["Compute it.", "Review."]\naccess_list = [[], ["all"]]'
    record = await run_completion(calls_self, QUESTION, workers(), Settings(max_depth=1))
    assert record.rejection == "unknown_worker"


async def test_run_completion_with_a_lead_recurses():
    from solvers.conducting import run_completion

    calls_self = 'model_id = [0, 2]\nsubtasks = ["Compute it.", "Review."]\naccess_list = [[], ["all"]]'
    reviewer = recursive_conductor(KEEP)
    record = await run_completion(calls_self, QUESTION, workers(), Settings(max_depth=1), reviewer)
    assert record.answer == "41" and record.steps[1].round.workflow == {
        "model_id": [],
        "subtasks": [],
        "access_list": [],
    }
    [nested_call] = reviewer.model.calls  # only the recursive round generated
    assert nested_call[1].text == calls_self and "Model 2: yourself" in nested_call[0].text


async def test_a_failing_conductor_is_a_named_rejection_not_an_error():
    dead = Conductor(scripted("x", fail=ConnectionError("server gone")), "local/dead", None, False)
    record = await conduct(QUESTION, dead, workers(), Settings(format_retries=2))
    assert record.rejection == "conductor_error" and "server gone" in record.rejection_message
    assert record.answer is None and record.steps == [] and len(record.attempts) == 1


def test_eval_with_a_dead_conductor_scores_the_sample_wrong():
    roles = {"conductor": scripted("x", fail=ConnectionError("server gone"))}
    log = run_eval("unused", **roles)
    assert log.status == "success", log.error
    meta = log.samples[0].metadata["conductor"]
    assert meta["rejection"] == "conductor_error" and meta["method"] == "conductor"
    assert log.samples[0].scores["includes"].value == "I"


async def test_fixed_subtasks_replace_every_subtask_and_restate_the_question_where_unseen():
    three = 'model_id = [0, 1, 0]\nsubtasks = ["A", "B", "C"]\naccess_list = [[], [], ["all"]]'
    pool = workers()
    record = await conduct(QUESTION, lead(three), pool, Settings(subtasks="fixed"))
    assert record.workflow["subtasks"] == ["A", "B", "C"]  # what the conductor wrote is kept
    first, unseen, sees_all = (s.subtask for s in record.steps)
    assert first == sees_all == "Solve the question."
    assert unseen.startswith("Solve this question") and QUESTION in unseen
    texts = [m.text for call in pool[0].model.calls + pool[1].model.calls for m in call]
    assert not {"A", "B", "C"} & {t.rsplit(": ", 1)[-1] for t in texts}


def test_eval_replace_workers_runs_every_slot_on_one_model_and_records_it(monkeypatch):
    import solvers.team

    replacement = scripted("The answer is 42")
    monkeypatch.setattr(solvers.team, "get_model", lambda name, **_: replacement if name == "mockllm/one" else None)
    workers_role = [scripted("I think 41"), scripted("I think 40")]
    log = run_eval(TWO_STEPS, solver=conductor(replace_workers="mockllm/one"), workers=workers_role)
    assert log.status == "success", log.error
    meta = log.samples[0].metadata["conductor"]
    assert meta["settings"]["replace_workers"] == "mockllm/one" and meta["settings"]["subtasks"] == "written"
    assert meta["workers"] == ["mockllm/one", "mockllm/one"]
    assert len(replacement.calls) == 2 and all(w.calls == [] for w in workers_role)
    assert log.samples[0].scores["includes"].value == "C"


async def test_replaced_workers_keep_their_descriptions():
    from solvers.team import replaced_workers

    pool = [Worker(scripted("41"), "w0", "good at algebra"), Worker(scripted("42"), "w1", "good at code")]
    replaced = replaced_workers(pool, "mockllm/model", None)
    assert [w.description for w in replaced] == ["good at algebra", "good at code"]
    assert {w.name for w in replaced} == {"mockllm/model"}
