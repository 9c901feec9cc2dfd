"""Time and retry budget of one model call (pure logic; `eval_call_budget` reads Inspect).

A call may make several attempts; it ends with an error once it has used up
`max_retries` retries or `timeout` seconds overall, whichever comes first, and no
attempt runs longer than `attempt_timeout` or past the overall deadline. The names
are Inspect's `GenerateConfig` fields, and a value set there wins over the
provider's defaults.

API workers (the bundled `paper*` pools) carry a budget derived from their token budget
(`api_call_budget`), and the eval's own `--attempt-timeout`, `--timeout` and
`--max-retries` win over it (`eval_call_budget`, applied by solvers/team.py).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

DEFAULT_TIMEOUT = 600.0  # seconds for a whole call, retries included
DEFAULT_ATTEMPT_TIMEOUT = 240.0  # seconds for one attempt (a local generation takes far less)
DEFAULT_MAX_RETRIES = 2
RETRY_WAIT_INITIAL = 1.0  # backoff between attempts: 1, 2, 4, 8 s (+ up to 1 s jitter), at most 8
RETRY_WAIT_MAX = 8.0
RETRY_WAIT_JITTER = 1.0
BUDGET_FIELDS = ("attempt_timeout", "timeout", "max_retries")
# API workers: an attempt must be able to produce its whole token budget (reasoning included)
API_TOKENS_PER_SECOND = 30.0  # conservative decode speed: below the usual speed of GPT-5, Gemini 2.5 Pro,
# Claude Sonnet 4 and of a 32B model on a loaded vLLM server
API_MARGIN_S = 60.0  # queueing, prefill of a long prompt, time to the first token
SMALL_BUDGET_TOKENS = 8192  # a stalled retry of a budget this small costs cents


def _positive(name: str, value: Any, integer: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    ok = number >= 0 if integer else number > 0
    if not ok or (integer and number != int(number)):
        kind = "a whole number >= 0" if integer else "a number of seconds > 0"
        raise ValueError(f"local provider: {name} must be {kind}, got {value!r} (e.g. -M {name}=60)")
    return number


@dataclass(frozen=True)
class CallBudget:
    timeout: float = DEFAULT_TIMEOUT
    attempt_timeout: float = DEFAULT_ATTEMPT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES

    @classmethod
    def from_args(cls, timeout: Any = None, attempt_timeout: Any = None, max_retries: Any = None) -> CallBudget:
        """Provider defaults from model args (-M); None keeps the built-in default."""
        return cls().override(timeout, attempt_timeout, max_retries)

    def override(self, timeout: Any = None, attempt_timeout: Any = None, max_retries: Any = None) -> CallBudget:
        """This budget with the given (non-None) values replacing its own, validated."""
        changes: dict[str, Any] = {}
        if timeout is not None:
            changes["timeout"] = _positive("timeout", timeout)
        if attempt_timeout is not None:
            changes["attempt_timeout"] = _positive("attempt_timeout", attempt_timeout)
        if max_retries is not None:
            changes["max_retries"] = int(_positive("max_retries", max_retries, integer=True))
        return replace(self, **changes)

    def describe(self) -> str:
        return f"timeout={self.timeout:g} s, attempt_timeout={self.attempt_timeout:g} s, max_retries={self.max_retries}"


def api_call_budget(max_tokens: int) -> CallBudget:
    """The budget of an API worker with this token budget: an attempt may take
    max_tokens / API_TOKENS_PER_SECOND + API_MARGIN_S seconds, rounded up to whole minutes;
    the whole call twice that (Inspect stops retrying once `timeout` has passed, so at most
    two attempts can stall to their end); retries: a retry after a stalled attempt may bill
    the whole budget again, so budgets above SMALL_BUDGET_TOKENS get 2, smaller ones 4 (rides
    out a short run of 429s: Inspect waits about 3, 6, 12, 24 s)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"api_call_budget: max_tokens must be a whole number >= 1, got {max_tokens!r}")
    attempt = 60 * math.ceil((max_tokens / API_TOKENS_PER_SECOND + API_MARGIN_S) / 60)
    retries = 4 if max_tokens <= SMALL_BUDGET_TOKENS else 2
    return CallBudget(timeout=2 * attempt, attempt_timeout=attempt, max_retries=retries)


def eval_call_budget() -> dict[str, Any]:
    """The budget fields the running eval sets (`--attempt-timeout`, `--timeout`,
    `--max-retries` or its task's config); {} outside an eval.

    Inspect 0.3.285 passes `timeout` and `max_retries` on to every model but
    `attempt_timeout` only to the eval's own model, so a stalled worker or role conductor
    ran to its SDK's timeout. Inspect has no public accessor of the eval's GenerateConfig
    (`get_model().config` lacks it when the eval has no `--model`), hence the private import.
    """
    from inspect_ai.model._generate_config import active_generate_config

    config = active_generate_config()
    return {k: v for k in BUDGET_FIELDS if (v := getattr(config, k)) is not None}


def max_retry_wait(attempts: int) -> float:
    """Upper bound of the backoff after the `attempts`-th failed attempt."""
    return min(RETRY_WAIT_INITIAL * 2 ** (attempts - 1) + RETRY_WAIT_JITTER, RETRY_WAIT_MAX)


@dataclass
class Call:
    """One call's progress: when it started, how many attempts it began, and the last one's failure
    (named when the call gives up later, at an attempt that finds no time left)."""

    budget: CallBudget
    start: float
    attempts: int = 0
    last_error: BaseException | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def remaining(self) -> float:
        return self.budget.timeout - self.elapsed()

    def attempt_limit(self) -> float:
        """Seconds the next attempt may take (never past the overall deadline)."""
        return min(self.budget.attempt_timeout, self.remaining())

    def exhausted(self) -> bool:
        """No further attempt may start."""
        return self.attempts > self.budget.max_retries or self.remaining() <= 0

    def give_up_after_failure(self) -> bool:
        """After a failed attempt: True when no retry could start and finish in budget."""
        return self.attempts > self.budget.max_retries or self.remaining() - max_retry_wait(self.attempts) <= 0


class CallLedger:
    """Calls in progress, keyed by an object that stays the same across one call's attempts
    (Inspect passes the same resolved GenerateConfig to every attempt of a call)."""

    def __init__(self) -> None:
        self._calls: dict[int, tuple[object, Call]] = {}

    def begin(self, key: object, budget: CallBudget) -> Call:
        entry = self._calls.get(id(key))
        if entry is not None and entry[0] is key:
            return entry[1]
        self._drop_stale()
        call = Call(budget, time.monotonic())
        self._calls[id(key)] = (key, call)  # holding `key` keeps its id from being reused
        return call

    def end(self, key: object) -> None:
        self._calls.pop(id(key), None)

    def __len__(self) -> int:
        return len(self._calls)

    def _drop_stale(self) -> None:
        """Forget calls cancelled from outside (they never reached end())."""
        for k, (_, call) in list(self._calls.items()):
            if call.remaining() < -RETRY_WAIT_MAX - 60:
                del self._calls[k]
