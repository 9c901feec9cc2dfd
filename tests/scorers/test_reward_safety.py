"""GRPO reward safety: no fixed output (hedge, list, empty, refusal) beats chance.

Multiple choice: an output is credited for at most one of the letters A-D, so against
targets spread over the letters its mean reward is at most chance (1/4). Math and
numeric: fixed outputs and hedges built around the true answer score 0 on every item.
Items come from the test fixtures through the tasks' own record -> sample mapping.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from scorers.checks import check_choice, check_math, check_numeric
from tasks import aime2025, gpqa, gsm8k, math500, mmlu

FIXTURES = Path(__file__).parents[1] / "fixtures"

FIXED_CHOICE_OUTPUTS = [
    "",
    "   ",
    "I cannot help with that.",
    "ANSWER:",
    "ANSWER: none of them",
    "ANSWER: ABCD",
    "ANSWER: A B C D",
    "ANSWER: A, B, C, D",
    "ANSWER: A, B, C, or D",
    "ANSWER: A or B or C or D",
    "ANSWER: (A) (B) (C) (D)",
    "ANSWER: A/B/C/D",
    "ANSWER: all of A, B, C and D",
    "ANSWER: $A$, $B$, $C$, $D$",
    "<answer>A, B, C, D</answer>",
    "<answer>A or B</answer>",
    "\\boxed{A}\\boxed{B}\\boxed{C}\\boxed{D}",
    "\\boxed{A} or \\boxed{B}",
    "The final answer is $A$ or $B$.",
    "The answer is A or B or C or D",
    "ANSWER: A\nANSWER: B\nANSWER: C\nANSWER: D",
    "ANSWER: Ａ, Ｂ",
]

CANDIDATES = ", ".join(str(i) for i in range(0, 120))
FIXED_VALUE_OUTPUTS = [
    "",
    "I cannot help with that.",
    "ANSWER:",
    "ANSWER: " + CANDIDATES,
    "ANSWER: " + " or ".join(str(i) for i in range(0, 60)),
    "<answer>" + CANDIDATES + "</answer>",
    "\\boxed{" + CANDIDATES + "}",
    " ".join(f"\\boxed{{{i}}}" for i in range(0, 120)),
    "ANSWER: between -1000000 and 1000000",
    "ANSWER: any real number",
    "ANSWER: x",
    "ANSWER: \\infty",
    "ANSWER: \\mathbb{R}",
    "ANSWER: (-\\infty, \\infty)",
    "ANSWER: 0",
]


def _choice_samples():
    with (FIXTURES / "gpqa_diamond.csv").open(newline="", encoding="utf-8") as f:
        gp = [gpqa.record_to_sample(r) for r in csv.DictReader(f)]
    mm = [mmlu.record_to_sample(json.loads(x)) for x in (FIXTURES / "mmlu.jsonl").read_text().splitlines() if x]
    return [s for s in gp + mm if s is not None]


def _jsonl(name: str, to_sample):
    return [to_sample(json.loads(x)) for x in (FIXTURES / name).read_text().splitlines() if x.strip()]


MATH = _jsonl("math500.jsonl", math500.record_to_sample)
NUMERIC = _jsonl("gsm8k.jsonl", gsm8k.record_to_sample) + _jsonl("aime2025.jsonl", aime2025.record_to_sample)


def test_fixtures_give_items():
    samples = _choice_samples()
    assert samples and all(s.target in ("A", "B", "C", "D") for s in samples)
    assert MATH and NUMERIC


@pytest.mark.parametrize("output", FIXED_CHOICE_OUTPUTS)
def test_choice_output_is_credited_for_at_most_one_letter(output):
    credited = [t for t in "ABCD" if check_choice(output, t).correct]
    assert len(credited) <= 1, f"{output!r} is credited for {credited}"


@pytest.mark.parametrize("output", FIXED_CHOICE_OUTPUTS)
def test_fixed_choice_output_is_at_most_chance_on_rotated_targets(output):
    """Each fixture item asked four times, its answer under each letter: chance is 1/4."""
    items = [(s, t) for s in _choice_samples() for t in "ABCD"]
    reward = sum(check_choice(output, t).score for _, t in items) / len(items)
    assert reward <= 0.25 + 1e-9


@pytest.mark.parametrize("output", FIXED_VALUE_OUTPUTS)
def test_fixed_value_output_scores_zero(output):
    for s in MATH:
        assert check_math(output, str(s.target)).score == 0.0, (output[:60], s.target)
    for s in NUMERIC:
        assert check_numeric(output, str(s.target)).score == 0.0, (output[:60], s.target)


def _hedges(target: str, wrong: str) -> list[str]:
    return [
        f"ANSWER: {target} or {wrong}",
        f"ANSWER: {wrong} or {target}",
        f"ANSWER: {wrong}, {target}",
        f"ANSWER: {target}, {wrong}",
        f"ANSWER: either {wrong} or {target}",
        f"<answer>{wrong} or {target}</answer>",
        f"\\boxed{{{wrong}}} or \\boxed{{{target}}}",
        f"\\boxed{{{wrong}}}, \\boxed{{{target}}}",
        f"The final answer is ${wrong}$ or ${target}$.",
        f"ANSWER: {wrong} \\\\ {target}",
        f"ANSWER: {wrong} \\lor {target}",
        f"ANSWER: {wrong}; {target}",
        f"ANSWER: {wrong} \\quad {target}",
    ]


def test_hedges_around_the_true_answer_score_zero():
    for s in MATH:
        target = str(s.target)
        assert check_math(f"ANSWER: {target}", target).correct  # the true answer alone does score
        for out in _hedges(target, "17"):
            assert not check_math(out, target).correct, out
    for s in NUMERIC:
        target = str(s.target)
        assert check_numeric(f"ANSWER: {target}", target).correct
        for out in _hedges(target, "17") + [f"ANSWER: between 0 and {target}", f"ANSWER: {target} ± 1"]:
            assert not check_numeric(out, target).correct, out


def test_hedged_letters_score_zero_on_the_true_letter():
    for s in _choice_samples():
        other = "A" if s.target != "A" else "B"
        assert check_choice(f"ANSWER: {s.target}", s.target).correct
        for out in _hedges(s.target, other):
            assert not check_choice(out, s.target).correct, out


# two values @A, @B joined in many syntaxes: no output may be credited for both
JOINS = [
    "@A or @B",
    "@A/@B",
    "@A \\text{ or } @B",
    "@A,@B",
    "@A and @B",
    "\\{@A, @B\\}",
    "[@A, @B]",
    "@A \\pm @B",
    "@A \\cup @B",
    "@A to @B",
    "@A-@B",
    "@A \\to @B",
    "@A \\text{ vs } @B",
    "@A~@B",
    "@A\\ @B",
    "@A\\,@B",
    "@A\\quad\\text{or}\\quad@B",
    "$@A$ $@B$",
    "@A (or @B)",
    "@A \\\\ @B",
    "\\boxed{@A}\\boxed{@B}",
    "@A\\text{ maybe }@B",
    "@A \\lor @B",
    "@A \\vee @B",
    "@A \\mid @B",
    "@A | @B",
    "@A; @B",
    "@A \\text{, } @B",
    "\\text{either }@A\\text{ or }@B",
    "@A\\text{ if } n \\text{ is even, } @B\\text{ otherwise}",
    "@A \\text{ else } @B",
    "@A = @B",
    "@A \\approx @B",
    "@A...@B",
    "@A, \\ldots, @B",
    "@A @B",
    "@A\\hspace{1cm}@B",
    "\\{@A\\} \\text{ or } \\{@B\\}",
    "@A (resp. @B)",
    "\\max(@A, @B)",
    "@A, @B, \\text{or both}",
    "x \\in \\{@A, @B\\}",
    "x=@A \\text{ or } x=@B",
    "@A; @B",
    "<answer>@A</answer><answer>@B</answer>",
    "\\begin{cases}@A\\\\@B\\end{cases}",
]
PAIRS = [("5", "7"), ("\\frac{1}{2}", "\\frac{1}{3}"), ("12", "13"), ("-3", "3")]


@pytest.mark.parametrize("join", JOINS)
def test_no_output_is_credited_for_two_different_answers(join):
    for a, b in PAIRS:
        out = "ANSWER: " + join.replace("@A", a).replace("@B", b)
        for check in (check_math, check_numeric):
            credited = [t for t in (a, b) if check(out, t).correct]
            assert len(credited) <= 1, (check.__name__, out, credited)
    out = "ANSWER: " + join.replace("@A", "A").replace("@B", "B")
    assert not (check_choice(out, "A").correct and check_choice(out, "B").correct), out
