"""Workflow diagnostics of recorded rounds (pure: dicts in, numbers out; no Inspect import).

One module for the training metrics (`training.rollouts.batch_metrics`: `conductor/diag/...`)
and the reports. The input is a round as `solvers.executor.RoundRecord.to_dict()` stores it
(the sample's `metadata["conductor"]["round"]`, or the training reward's record): `steps`, each
with `worker`, `model`, `subtask`, `visible`, `output`, `error` and `round` (a nested round).
Only the root round is described; a recursive step counts as one step of its model.

Per round, `round_features(round_, question, domain, final_correct=, prior_correct=)`:

- copied steps: a step's subtask only restates the question (`restates_question`: it holds at
  least `COPY_MIN_COVERAGE` of the question's distinct words and at most `COPY_MAX_EXTRA_WORDS`
  words not in the question, e.g. "Solve step by step: <question>");
- single step (exactly one step), single worker (every step on one model, one-step rounds
  included: single_worker >= single_step);
- verify/refine: the round's strategy is "solve then verify/refine" (`solvers.strategy`);
- answer change: the final answer against the answer of the latest earlier step the final
  step was shown (`prior_output`): "same", "changed", or, when both correctness flags are
  given, "better" (wrong -> correct) / "worse" (correct -> wrong); None when the final step saw
  no earlier step or either answer is missing. Answers compare by their marked final answer
  (`ANSWER:` line, boxed, ...; else the whole text), case and spacing ignored.

Over rounds, `summarize(features)` returns: copy_rate (copied steps / all steps),
single_step_share, single_worker_share and verify_refine_share (rounds with steps),
answer_compared (rounds with an answer change), answer_changed_share, answer_better_share,
answer_worse_share (of those; "changed" counts better and worse too), and
worker_entropy/<domain> (bits, of the models of all executed steps in that domain's rounds,
0 = always the same worker).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from scorers.extract import final_answer
from solvers.strategy import REFINE, strategy

COPY_MIN_COVERAGE = 0.8  # share of the question's distinct words a restating subtask holds
COPY_MAX_EXTRA_WORDS = 8  # words of its own a restating subtask may add ("Solve step by step:")
MAX_TEXT_CHARS = 20_000  # only this much of a question, subtask or answer is read (bounded work)
CHANGES = ("same", "changed", "better", "worse")
_WORD = re.compile(r"\w+")


def words(text: str | None) -> list[str]:
    """Lower-case word tokens of the first `MAX_TEXT_CHARS` characters."""
    return _WORD.findall(str(text or "")[:MAX_TEXT_CHARS].casefold())


def restates_question(subtask: str | None, question: str | None) -> bool:
    """Whether a subtask only restates the question (module docstring: the rule)."""
    said, asked = words(subtask), set(words(question))
    if not said or not asked:
        return False
    coverage = len(asked.intersection(said)) / len(asked)
    extra = sum(1 for w in said if w not in asked)
    return coverage >= COPY_MIN_COVERAGE and extra <= COPY_MAX_EXTRA_WORDS


def _steps(round_: Mapping | None) -> Sequence[Mapping]:
    return (round_ or {}).get("steps") or []


def prior_output(round_: Mapping | None) -> str | None:
    """The output of the latest earlier step the final step was shown; None when it saw
    none or that step failed."""
    steps = _steps(round_)
    if not steps:
        return None
    seen = [i for i in steps[-1].get("visible") or [] if isinstance(i, int) and 0 <= i < len(steps) - 1]
    if not seen:
        return None
    prior = steps[max(seen)]
    return None if prior.get("error") else prior.get("output")


def answer_key(text: str) -> str:
    """What two answers are compared by: the marked final answer (else the text), case and
    spacing ignored."""
    marked, _ = final_answer(text[-MAX_TEXT_CHARS:])
    return " ".join((text[-MAX_TEXT_CHARS:] if marked is None else marked).split()).casefold()


def answer_change(
    final: str | None,
    prior: str | None,
    final_correct: bool | None = None,
    prior_correct: bool | None = None,
) -> str | None:
    """None (nothing to compare), "same", or, for a different answer, "better" / "worse" when
    the correctness flags say so, else "changed"."""
    if final is None or prior is None:
        return None
    if answer_key(final) == answer_key(prior):
        return "same"
    if final_correct is not None and prior_correct is not None and final_correct != prior_correct:
        return "better" if final_correct else "worse"
    return "changed"


def round_features(
    round_: Mapping | None,
    question: str,
    domain: str | None = None,
    *,
    final_correct: bool | None = None,
    prior_correct: bool | None = None,
) -> dict:
    """The diagnostics of one recorded round (module docstring); JSON-ready."""
    steps = _steps(round_)
    models = [str(s.get("model")) for s in steps]
    final = steps[-1].get("output") if steps and not steps[-1].get("error") else None
    return {
        "domain": domain,
        "steps": len(steps),
        "copied_steps": sum(restates_question(s.get("subtask"), question) for s in steps),
        "models": models,
        "single_step": len(steps) == 1,
        "single_worker": len(set(models)) == 1,
        "verify_refine": strategy(round_) == REFINE,
        "answer_change": answer_change(final, prior_output(round_), final_correct, prior_correct),
    }


def entropy_bits(counts: Iterable[int]) -> float:
    """Shannon entropy (bits) of a distribution given by counts."""
    counts = [c for c in counts if c > 0]
    total = sum(counts)
    return sum(c / total * math.log2(total / c) for c in counts) if total else 0.0


def summarize(features: Iterable[Mapping]) -> dict[str, float]:
    """Aggregate diagnostics over rounds' `round_features` (module docstring: the keys); a
    share is left out when nothing is counted for it."""
    rounds = list(features)
    ran = [f for f in rounds if f["steps"]]
    out: dict[str, float] = {}
    if ran:
        out["copy_rate"] = sum(f["copied_steps"] for f in ran) / sum(f["steps"] for f in ran)
        for key in ("single_step", "single_worker", "verify_refine"):
            out[f"{key}_share"] = sum(bool(f[key]) for f in ran) / len(ran)
    compared = [f["answer_change"] for f in rounds if f.get("answer_change") in CHANGES]
    if compared:
        out["answer_compared"] = float(len(compared))
        out["answer_changed_share"] = sum(c != "same" for c in compared) / len(compared)
        out["answer_better_share"] = compared.count("better") / len(compared)
        out["answer_worse_share"] = compared.count("worse") / len(compared)
    for domain in sorted({str(f.get("domain")) for f in ran}):
        models = Counter(m for f in ran if str(f.get("domain")) == domain for m in f["models"])
        out[f"worker_entropy/{domain}"] = entropy_bits(models.values())
    return out
