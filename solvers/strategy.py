"""Which strategy a recorded workflow follows, from its graph (pure; no Inspect import).

The input is a round as `solvers.executor.RoundRecord.to_dict()` stores it in the sample's
`metadata["conductor"]["round"]`: `steps`, each with `visible` (the earlier steps it saw) and
`subtask`. Only the root round is classified (a recursive step counts as one step).

The rule, applied in order:

1. no steps (the workflow was rejected, or a baseline ran none): "no workflow";
2. one step: "single call";
3. at least two steps that see no earlier step (independent attempts), and either the last
   step sees two or more of them or no step sees any other (a vote picks the answer):
   "independent attempts then aggregate";
4. the last step sees no earlier step: "single call" (earlier steps are ignored);
5. the first step's subtask asks for a plan: it names one (plan, outline, decompose,
   "break down", approach, strategy, subgoal) and does not start with a verb asking for the
   answer (solve, answer, compute, calculate, find): "plan then execute";
6. otherwise (a later step builds on an earlier answer): "solve then verify/refine".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

NO_WORKFLOW = "no workflow"
SINGLE = "single call"
AGGREGATE = "independent attempts then aggregate"
REFINE = "solve then verify/refine"
PLAN = "plan then execute"
STRATEGIES = (SINGLE, AGGREGATE, REFINE, PLAN, NO_WORKFLOW)

SUBTASK_CHARS = 600  # only the start of a subtask is searched (bounded regex work)
_PLAN = re.compile(
    r"\b(plan|outline|decompos\w*|break\w* (it |this |the problem )?down|approach|strategy|sub-?goals?)\b"
)
_SOLVE = re.compile(r"\W{0,20}(solve|answer|compute|calculate|find)\b")


def strategy(round_: Mapping | None) -> str:
    """The strategy of a recorded round (module docstring: the rule)."""
    steps: Sequence[Mapping] = (round_ or {}).get("steps") or []
    if not steps:
        return NO_WORKFLOW
    if len(steps) == 1:
        return SINGLE
    seen = [set(int(i) for i in (s.get("visible") or [])) for s in steps]
    sources = {i for i, v in enumerate(seen) if not v}
    last = seen[-1]
    if len(sources) >= 2 and (len(last & sources) >= 2 or len(sources) == len(steps)):
        return AGGREGATE
    if not last:
        return SINGLE
    if is_plan(str(steps[0].get("subtask") or "")):
        return PLAN
    return REFINE


def is_plan(subtask: str) -> bool:
    """A subtask that asks for a plan rather than the answer."""
    text = subtask[:SUBTASK_CHARS].lower()
    return bool(_PLAN.search(text)) and not _SOLVE.match(text)


def nested_step_models(round_: Mapping | None) -> list[str]:
    """The worker model of every step inside a recursive (nested) round, depth first (Fig. 10)."""
    out: list[str] = []
    for step in (round_ or {}).get("steps") or []:
        if step.get("round"):
            out += step_models(step["round"])
    return out


def step_models(round_: Mapping | None) -> list[str]:
    """The worker model of every executed step, nested rounds included (depth first)."""
    out: list[str] = []
    for step in (round_ or {}).get("steps") or []:
        if step.get("round"):
            out += step_models(step["round"])
        else:
            out.append(str(step.get("model")))
    return out
