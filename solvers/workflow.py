"""The Conductor's workflow language: parse and validate a completion.

A conductor completion is free reasoning followed by three assignments, possibly inside a
```python fence (the paper's format):

    model_id = [2, 0]                  # which worker runs each step (int or "Model 2")
    subtasks = ["...", "..."]          # one natural-language instruction per step
    access_list = [[], ["all"]]        # per step: ["all"] / "all" (every earlier step) or []

Access schemes: "binary" (the paper's main model) admits only all-or-nothing entries; a list
of step indices is the `indices_access` rejection. "indices" (the paper's fine-grained
ablation) also admits lists of earlier step indices such as [0, 2].

Where the workflow is: the three names must be assigned by top-level statements that start
a line (column 0). Text before the first such line is free reasoning and is never parsed;
from each such line on, the longest run of lines that parses as Python is read (at most
`_MAX_BLOCKS` runs, a few `ast.parse` calls each, on text capped at MAX_COMPLETION_CHARS:
linear time). Only top-level `name = <literal>` statements count, so an assignment inside a
string literal is never the workflow; the last assignment of each name wins.

Parsing uses `ast.parse` (through `scorers.safe_parse`: pathological nesting is a named
failure, not a RecursionError) and `ast.literal_eval` only: model output is never executed.
Every rejection carries a named reason so logs, reports and rewards can count them; no
input raises. Pure Python: no Inspect import.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from scorers.safe_parse import SYNTAX_ERROR, ParseFailure, safe_parse

LIST_NAMES = ("model_id", "subtasks", "access_list")
DEFAULT_MAX_STEPS = 5
MAX_COMPLETION_CHARS = 32_000  # ~8k tokens: 8x the paper's 1024-token conductor budget
ACCESS_SCHEMES = ("binary", "indices")
AccessScheme = Literal["binary", "indices"]
_MAX_BLOCKS = 8  # candidate statement runs tried per completion
_MAX_TRIMS = 3  # parses per run (each trims the run before the line of the syntax error)
_ASSIGNMENT_LINE = re.compile(r"(?:model_id|subtasks|access_list)[ \t]*=")
_MODEL_NAME = re.compile(r"^\s*(?:model\s*)?(\d{1,6})\s*$", re.IGNORECASE)


class Reason(StrEnum):
    """Why a completion is not a valid workflow."""

    TOO_LONG = "too_long"
    MISSING_LIST = "missing_list"
    NOT_LITERAL = "not_literal"
    NOT_A_LIST = "not_a_list"
    UNEQUAL_LENGTHS = "unequal_lengths"
    EMPTY_WORKFLOW = "empty_workflow"
    TOO_MANY_STEPS = "too_many_steps"
    BAD_MODEL_ID = "bad_model_id"
    UNKNOWN_WORKER = "unknown_worker"
    BAD_SUBTASK = "bad_subtask"
    BAD_ACCESS = "bad_access"
    INDICES_ACCESS = "indices_access"
    ACCESS_NOT_EARLIER = "access_not_earlier"
    UNPARSEABLE = "unparseable"


class WorkflowError(ValueError):
    """A completion that is not a valid workflow; `reason` names the rule it broke."""

    def __init__(self, reason: Reason, message: str):
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Workflow:
    """A validated workflow. `access[i]` is what step i was granted ("all", or indices);
    `visible(i)` resolves it to the earlier step indices step i sees."""

    model_ids: tuple[int, ...]
    subtasks: tuple[str, ...]
    access: tuple[str | tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.model_ids)

    @property
    def keeps_answer(self) -> bool:
        """Three empty lists: in a recursive round, keep the current answer."""
        return len(self.model_ids) == 0

    def visible(self, step: int) -> tuple[int, ...]:
        entry = self.access[step]
        return tuple(range(step)) if entry == "all" else entry

    def sees_all(self, step: int) -> bool:
        return self.access[step] == "all"

    def to_dict(self) -> dict:
        """The lists in the paper's format ("all" written as ["all"])."""
        return {
            "model_id": list(self.model_ids),
            "subtasks": list(self.subtasks),
            "access_list": [["all"] if a == "all" else list(a) for a in self.access],
        }


@dataclass(frozen=True)
class ParseResult:
    """Outcome of `parse_workflow`: a workflow, or the reason there is none."""

    workflow: Workflow | None = None
    error: WorkflowError | None = field(default=None)

    @property
    def ok(self) -> bool:
        return self.workflow is not None

    @property
    def reason(self) -> str | None:
        return self.error.reason.value if self.error else None


def parse_workflow(
    completion: str,
    worker_ids: Collection[int],
    max_steps: int = DEFAULT_MAX_STEPS,
    allow_empty: bool = False,
    access: AccessScheme = "binary",
) -> ParseResult:
    """Parse and validate a conductor completion against the offered worker ids.

    `allow_empty` admits three empty lists (a recursive round keeping the answer).
    Never raises on any input; the error of a rejected completion is in the result.
    """
    try:
        lists = extract_lists(completion)
        return ParseResult(workflow=validate(lists, worker_ids, max_steps, allow_empty, access))
    except WorkflowError as error:
        return ParseResult(error=error)
    except Exception as error:  # noqa: BLE001 - a parser bug must never abort an eval
        return ParseResult(error=WorkflowError(Reason.UNPARSEABLE, f"{type(error).__name__} while parsing"))


def extract_lists(completion: str) -> dict[str, object]:
    """The literal value of the last top-level assignment to each of the three names."""
    if len(completion) > MAX_COMPLETION_CHARS:
        raise WorkflowError(
            Reason.TOO_LONG, f"completion has {len(completion)} characters (limit {MAX_COMPLETION_CHARS})"
        )
    lines = completion.splitlines()
    starts = [i for i, line in enumerate(lines) if _ASSIGNMENT_LINE.match(line)]
    found: dict[str, ast.expr] = {}
    broken: dict[str, ParseFailure] = {}  # names whose assignment line starts no parseable run
    position, blocks = 0, 0
    for start in starts:
        if start < position:
            continue
        if blocks == _MAX_BLOCKS:
            break
        blocks += 1
        body, position, failure = _statement_run(lines, start)
        if failure:
            broken[lines[start].split("=", 1)[0].strip()] = failure
        for statement in body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(target := statement.targets[0], ast.Name)
                and target.id in LIST_NAMES
            ):
                found[target.id] = statement.value
    for name in LIST_NAMES:
        if name not in found and name in broken:
            raise WorkflowError(
                Reason.NOT_LITERAL, f"`{name} = ...` is not valid Python list syntax ({broken[name].message})"
            )
        if name not in found:
            raise WorkflowError(
                Reason.MISSING_LIST,
                f"no top-level assignment `{name} = [...]` found; a workflow needs model_id, subtasks"
                " and access_list, each on a line of its own",
            )
    return {name: _literal(found[name], name) for name in LIST_NAMES}


def _statement_run(lines: list[str], start: int) -> tuple[list[ast.stmt], int, ParseFailure | None]:
    """Top-level statements of the longest run of lines from `start` that parses, the line
    index after it, and the failure when the first line itself is broken (or the run is too
    deeply nested to parse). A run that starts inside a string literal (a stray closing
    triple quote follows) yields nothing."""
    end = len(lines)
    for _ in range(_MAX_TRIMS):
        tree = safe_parse("\n".join(lines[start:end]))
        if isinstance(tree, ast.Module):
            return tree.body, end, None
        line = tree.lineno or 1
        if tree.reason == SYNTAX_ERROR and "triple-quoted" in tree.message:
            return [], start + line, None  # resume after the quote
        if tree.reason != SYNTAX_ERROR or line <= 1:
            return [], start + 1, tree
        end = start + line - 1
    return [], start + 1, tree


def _literal(value: ast.expr, name: str) -> object:
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, OverflowError):
        raise WorkflowError(
            Reason.NOT_LITERAL, f"`{name}` must be a literal list; got the expression `{_unparse(value)}`"
        ) from None


def validate(
    lists: dict[str, object],
    worker_ids: Collection[int],
    max_steps: int = DEFAULT_MAX_STEPS,
    allow_empty: bool = False,
    access: AccessScheme = "binary",
) -> Workflow:
    """Check the three lists against the workflow rules and build a `Workflow`."""
    for name in LIST_NAMES:
        if not isinstance(lists[name], (list, tuple)):
            raise WorkflowError(Reason.NOT_A_LIST, f"`{name}` must be a list, got {type(lists[name]).__name__}")
    model_ids, subtasks, entries = (list(lists[n]) for n in LIST_NAMES)  # type: ignore[call-overload]
    lengths = (len(model_ids), len(subtasks), len(entries))
    if len(set(lengths)) != 1:
        raise WorkflowError(
            Reason.UNEQUAL_LENGTHS,
            f"model_id, subtasks and access_list have lengths {lengths}; they must be equal",
        )
    steps = lengths[0]
    if steps == 0 and not allow_empty:
        raise WorkflowError(Reason.EMPTY_WORKFLOW, "the workflow has no steps")
    if steps > max_steps:
        raise WorkflowError(Reason.TOO_MANY_STEPS, f"{steps} steps; at most {max_steps} are allowed")
    workers = tuple(_worker(entry, i, worker_ids) for i, entry in enumerate(model_ids))
    for i, subtask in enumerate(subtasks):
        if not isinstance(subtask, str) or not subtask.strip():
            raise WorkflowError(Reason.BAD_SUBTASK, f"subtasks[{i}] must be a non-empty string")
    return Workflow(
        model_ids=workers,
        subtasks=tuple(s.strip() for s in subtasks),
        access=tuple(_access(entry, i, access) for i, entry in enumerate(entries)),
    )


def _worker(entry: object, step: int, worker_ids: Collection[int]) -> int:
    if isinstance(entry, bool):
        entry = None
    if isinstance(entry, str) and (match := _MODEL_NAME.match(entry)):
        entry = int(match.group(1))
    if not isinstance(entry, int):
        raise WorkflowError(
            Reason.BAD_MODEL_ID, f"model_id[{step}] = {_show(entry)} is not a worker number like 0 or 'Model 0'"
        )
    if entry not in worker_ids:
        offered = ", ".join(str(w) for w in sorted(worker_ids))
        raise WorkflowError(
            Reason.UNKNOWN_WORKER, f"model_id[{step}] = {_show(entry)} is not in the pool (offered: {offered})"
        )
    return entry


def _is_all(entry: object) -> bool:
    """ "all" or ["all"] (any case): every earlier step."""
    if isinstance(entry, (list, tuple)) and len(entry) == 1:
        entry = entry[0]
    return isinstance(entry, str) and entry.strip().lower() == "all"


def _access(entry: object, step: int, scheme: AccessScheme) -> str | tuple[int, ...]:
    if _is_all(entry):
        return "all"
    allowed = '["all"] or []' if scheme == "binary" else '["all"], [] or a list of earlier step indices'
    if not isinstance(entry, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in entry):
        raise WorkflowError(Reason.BAD_ACCESS, f"access_list[{step}] = {_show(entry)} must be {allowed}")
    if entry and scheme == "binary":
        raise WorkflowError(
            Reason.INDICES_ACCESS,
            f"access_list[{step}] = {_show(entry)} lists step indices; the binary access scheme allows"
            f" only {allowed} (per-step indices need -S access=indices)",
        )
    late = [i for i in entry if not 0 <= i < step]
    if late:
        raise WorkflowError(
            Reason.ACCESS_NOT_EARLIER,
            f"access_list[{step}] names steps {_show(late)}; step {step} may only see earlier steps"
            f" ({f'0..{step - 1}' if step else 'none'})",
        )
    return tuple(sorted(set(entry)))


def _show(value: object, limit: int = 80) -> str:
    """A clipped repr that never fails (huge integers cannot be printed in full)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError, MemoryError):
        text = f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unparse(node: ast.expr) -> str:
    try:
        return _show(ast.unparse(node)).strip("'\"")
    except (ValueError, RecursionError, MemoryError):
        return "<expression>"


def paper_reward(parsed: bool, correct: bool) -> float:
    """The paper's reward: 0 if the workflow cannot be parsed, else 1 if correct, 0.5 if not."""
    if not parsed:
        return 0.0
    return 1.0 if correct else 0.5
