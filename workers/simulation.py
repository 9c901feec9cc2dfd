"""Simulated workers: pure logic (no Inspect import) behind the `sim/<profile>` provider.

SIMULATION, not a model. A profile (workers/sim_profiles.yaml) gives, per domain, the
probability that the worker answers correctly. Whether one call is correct is decided by
a hash of (seed, profile, item, subtask), so a run is reproducible and two workers (or two
subtasks) draw independently. The output is the correct answer in the task's format
(`ANSWER: C`, `ANSWER: <math answer>`, `ANSWER: <number>`, the reference program for
code) or a plausible wrong one (another letter, a perturbed number or expression, the
previous wrong answer repeated, a program that fails).

Verification rule (a step whose conversation shows an earlier answer: the most recent
assistant turn that carries a final answer, or a python block for code):
- that answer is correct: the worker is correct with P = 1 - (1 - p) * (1 - trust);
- that answer is wrong: the worker catches it with P = catch, then solves afresh
  (correct with P = p); otherwise it repeats the wrong answer.
So a step verifying a strong answer does better than its profile alone.

A task's domain and answer format are its benchmark's declaration (`tasks.catalog.Benchmark`:
`domain`, `answer`; `task_domain`).
Tokens: input = characters / 4 of the whole conversation; output = characters / 4 of
the text plus the profile's `reasoning_tokens` (simulated hidden reasoning).
Latency (`latency`, off by default): a seeded lognormal wait per call, to measure
throughput at API latency (benchmarks/bench_api_latency.py).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from statistics import NormalDist
from typing import Any

import yaml

from scorers.checks import check_choice, check_math, check_numeric, final_answer
from scorers.numeric import parse_number
from tasks.catalog import ANSWERS as CHECKS
from tasks.catalog import DOMAINS, benchmark
from tasks.prompts import LETTERS

PROFILES_FILE = Path(__file__).with_name("sim_profiles.yaml")
PROFILE_KEYS = ("description", "accuracy", "trust", "catch", "reasoning_tokens")
CHARS_PER_TOKEN = 4
MAX_SCAN_CHARS = 16_000  # answers are read from the end of a turn
WRONG_PROGRAM = "def solve():\n    # simulated wrong program\n    return None\n\nprint(solve())\n"
_CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]{0,8}\n(.{0,20000}?)```", re.DOTALL)


class SimError(ValueError):
    """A simulated worker cannot answer: no answer key, or a bad profile or key."""


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    accuracy: Mapping[str, float]
    trust: float
    catch: float
    reasoning_tokens: int


@dataclass(frozen=True)
class AnswerKey:
    """What the simulator needs to know about the item being answered."""

    target: str
    domain: str
    check: str
    choices: tuple[str, ...] | None = None
    item_id: str = ""

    def __post_init__(self) -> None:
        if self.domain not in DOMAINS:
            raise SimError(f"answer key domain {self.domain!r} is unknown; use one of {', '.join(DOMAINS)}")
        if self.check not in CHECKS:
            raise SimError(f"answer key check {self.check!r} is unknown; use one of {', '.join(CHECKS)}")
        if self.check == "choice" and self.target.strip().upper() not in LETTERS[: self.n_choices]:
            raise SimError(f"choice target {self.target!r} is not a letter of {self.n_choices} choices")

    @property
    def n_choices(self) -> int:
        return len(self.choices) if self.choices else 4

    @property
    def seed_id(self) -> str:
        """The item's identity in the hash (its id, else its target and choices)."""
        return self.item_id or f"{self.target}|{self.choices}"


def make_key(
    target: str,
    domain: str | None = None,
    check: str | None = None,
    choices: Sequence[str] | None = None,
    item_id: str | int | None = None,
) -> AnswerKey:
    """An AnswerKey; the check defaults from the domain, the domain from the check."""
    if domain is None and check is None:
        raise SimError("an answer key needs a domain or a check (e.g. domain='math')")
    if domain is None:
        domain = {"choice": "mmlu", "math": "math", "numeric": "math"}.get(str(check), "lcb")
    check = check or (DOMAINS[domain].answer if domain in DOMAINS else "")
    return AnswerKey(str(target), domain, check, tuple(choices) if choices else None, str(item_id or ""))


def task_domain(task: str | None) -> tuple[str, str] | None:
    """(domain, check) of a declared benchmark's task name (`pkg/task` allowed), None when unknown."""
    declared = benchmark(task)
    return (declared.domain, declared.answer) if declared is not None else None


@dataclass(frozen=True)
class SimResult:
    text: str
    correct: bool
    mode: str  # "fresh", "confirm" (saw a correct answer), "caught" or "repeat" (saw a wrong one)
    input_tokens: int
    output_tokens: int


def simulate(profile: Profile, key: AnswerKey, turns: Sequence[tuple[str, str]], seed: int = 0) -> SimResult:
    """One simulated generation for a conversation of (role, text) turns."""
    subtask = next((text for role, text in reversed(turns) if role == "user"), "")
    parts = (seed, profile.name, key.seed_id, subtask)
    p = profile.accuracy[key.domain]
    seen = visible_answer(turns, key)
    repeated = None
    if seen is None:
        mode, correct = "fresh", draw(*parts, "solve") < p
    elif is_correct(seen, key):
        mode, correct = "confirm", draw(*parts, "solve") < 1 - (1 - p) * (1 - profile.trust)
    elif draw(*parts, "catch") < profile.catch:
        mode, correct = "caught", draw(*parts, "solve") < p
    else:
        mode, correct, repeated = "repeat", False, _repeat(seen, key)
    correct = correct and has_answer(key)  # a code item without a reference cannot be solved
    body = correct_answer(key) if correct else repeated or _wrong_answer(key, draw(*parts, "wrong"))
    text = f"(simulated answer from sim/{profile.name}; no model ran)\n{body}"
    tokens_in = sum(math.ceil(len(t) / CHARS_PER_TOKEN) for _, t in turns)
    tokens_out = math.ceil(len(text) / CHARS_PER_TOKEN) + profile.reasoning_tokens
    return SimResult(text, correct, mode, tokens_in, tokens_out)


def latency(median: float, sigma: float, *parts: Any) -> float:
    """Seconds one simulated call takes: lognormal with this median (0: no wait) and shape
    `sigma`, drawn from the parts (so a run's latencies are reproducible)."""
    if median <= 0:
        return 0.0
    u = min(max(draw(*parts, "latency"), 1e-12), 1 - 1e-12)
    return median * math.exp(sigma * NormalDist().inv_cdf(u))


def draw(*parts: Any) -> float:
    """A uniform number in [0, 1) fixed by the parts."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def has_answer(key: AnswerKey) -> bool:
    """False for a code item without a reference program (its answers are all wrong)."""
    return key.check not in ("lcb", "code") or bool(key.target.strip())


def correct_answer(key: AnswerKey) -> str:
    if key.check in ("lcb", "code"):
        return _program(key.target)
    target = key.target.strip().upper() if key.check == "choice" else key.target.strip()
    return f"ANSWER: {target}"


def is_correct(answer: str, key: AnswerKey) -> bool:
    """Whether a response's final answer is right, by the project's pure checks (code: the
    reference program itself, as the simulator writes it)."""
    if key.check in ("lcb", "code"):
        code = _last_code(answer)
        return bool(key.target.strip()) and code is not None and code.strip() == key.target.strip()
    check = {"choice": check_choice, "math": check_math, "numeric": check_numeric}[key.check]
    return check(answer, key.target).correct


def visible_answer(turns: Sequence[tuple[str, str]], key: AnswerKey) -> str | None:
    """The most recent assistant turn that carries a final answer (code: a python block)."""
    for role, text in reversed(turns):
        if role != "assistant":
            continue
        text = text[-MAX_SCAN_CHARS:]
        found = _last_code(text) if key.check in ("lcb", "code") else final_answer(text)[0]
        if found:
            return text
    return None


def _repeat(seen: str, key: AnswerKey) -> str | None:
    if key.check in ("lcb", "code"):
        code = _last_code(seen)
        return _program(code) if code else None
    answer = final_answer(seen)[0]
    return f"ANSWER: {answer}" if answer else None


def _wrong_answer(key: AnswerKey, u: float) -> str:
    """A plausible wrong answer, checked to be wrong by the same check."""
    if key.check in ("lcb", "code"):
        return _program(WRONG_PROGRAM)
    if key.check == "choice":
        right = LETTERS.index(key.target.strip().upper())
        others = [c for c in LETTERS[: key.n_choices] if LETTERS.index(c) != right]
        return f"ANSWER: {others[int(u * len(others))]}"
    for candidate in _perturbed(key.target.strip(), 1 + int(u * 9)):
        text = f"ANSWER: {candidate}"
        if not is_correct(text, key):
            return text
    raise SimError(f"no wrong answer found for target {key.target!r}")  # pragma: no cover


def _perturbed(target: str, k: int) -> list[str]:
    value = parse_number(target)
    candidates = [] if value is None else [_number(value + k), _number(value * (k + 1) + k)]
    if value is None and target:
        candidates.append(f"{target} + {k}")
    return [*candidates, str(k + 10), "-7"]


def _number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.6g}"


def _program(code: str) -> str:
    return f"```python\n{code.strip()}\n```"


def _last_code(text: str) -> str | None:
    blocks = _CODE_BLOCK.findall(text[-MAX_SCAN_CHARS:])
    return blocks[-1] if blocks else None


def parse_profiles(data: Any, where: str) -> dict[str, Profile]:
    """Validated profiles from the YAML data of a profiles file."""
    if not isinstance(data, Mapping) or not isinstance(data.get("profiles"), Mapping) or not data["profiles"]:
        raise SimError(f"{where}: expected a top-level `profiles:` mapping of name -> profile")
    profiles = {}
    for name, entry in data["profiles"].items():
        at = f"{where}: profiles.{name}"
        if not isinstance(entry, Mapping):
            raise SimError(f"{at}: expected a mapping with {', '.join(PROFILE_KEYS)}")
        unknown = sorted(set(entry) - set(PROFILE_KEYS))
        if unknown:
            raise SimError(f"{at}: unknown key(s) {unknown}; allowed: {', '.join(PROFILE_KEYS)}")
        accuracy = entry.get("accuracy")
        if not isinstance(accuracy, Mapping) or set(accuracy) != set(DOMAINS):
            raise SimError(f"{at}.accuracy: give a probability for exactly these domains: {', '.join(DOMAINS)}")
        numbers = {f"accuracy.{d}": accuracy[d] for d in DOMAINS}
        numbers.update(trust=entry.get("trust"), catch=entry.get("catch"))
        for field, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise SimError(f"{at}.{field}: expected a probability between 0 and 1, got {value!r}")
        tokens = entry.get("reasoning_tokens", 0)
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise SimError(f"{at}.reasoning_tokens: expected a whole number >= 0, got {tokens!r}")
        profiles[str(name)] = Profile(
            str(name),
            str(entry.get("description", "")),
            {d: float(accuracy[d]) for d in DOMAINS},
            float(entry["trust"]),
            float(entry["catch"]),
            tokens,
        )
    return profiles


@cache
def load_profiles(path: str | None = None) -> dict[str, Profile]:
    """The profiles of a YAML file (default: the bundled workers/sim_profiles.yaml)."""
    file = Path(path) if path else PROFILES_FILE
    try:
        data = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise SimError(f"simulated profiles file {file} cannot be read: {error}") from None
    return parse_profiles(data, str(file))
