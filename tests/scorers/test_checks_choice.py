"""Multiple-choice letter extraction: hand-made tricky completions."""

from __future__ import annotations

import pytest

from scorers.checks import check_choice, extract_choice

# (completion, expected extracted letter or None)
CASES = [
    ("ANSWER: B", "B"),
    ("Reasoning...\nANSWER: C", "C"),
    ("ANSWER: (B)", "B"),
    ("ANSWER: B.", "B"),
    ("ANSWER: **B**", "B"),
    ("**ANSWER:** B", "B"),
    ("**ANSWER: B**", "B"),
    ("ANSWER: b", "B"),
    ("ANSWER: (b)", "B"),
    ("ANSWER: B) because the flux is conserved", "B"),
    ("ANSWER: B because the flux is conserved", "B"),
    ("Answer: B", "B"),
    ("answer: d", "D"),
    ("Final Answer: A", "A"),
    ("ANSWER : C", "C"),
    ("ANSWER: [C]", "C"),
    ("ANSWER: `D`", "D"),
    ("ANSWER: \\boxed{B}", "B"),
    ("ANSWER: $\\boxed{C}$", "C"),
    ("ANSWER: \\text{A}", "A"),
    ("ANSWER: option D.", "D"),
    ("ANSWER: The answer is C", "C"),
    ("ANSWER:\n\nB", "B"),
    ("  ANSWER: A  \n\n", "A"),
    # several ANSWER lines: the last wins
    ("ANSWER: A\nWait, let me reconsider.\nANSWER: C", "C"),
    ("Draft answer: B\n...\nANSWER: D", "D"),
    ("<answer>Reasoning here.\nThe final answer is (B).</answer>", "B"),
    ("<answer>\nB\n</answer>", "B"),
    ("ANSWER: A or B", None),  # hedges
    ("ANSWER: A, B, C, D", None),
    ("ANSWER: $\\mathrm{C}$", "C"),
    ("ANSWER: Ｃ", "C"),
    # fallback phrases only when there is no ANSWER line
    ("I think the answer is (C).", "C"),
    ("So the correct option is B", "B"),
    ("The answer is C. Hmm, actually the answer is A.", "A"),
    ("Therefore $\\boxed{D}$", "D"),
    ("Let me verify my answer: A seems off. The answer is C", "C"),  # prose, not a tag
    # an ANSWER line that names no letter does not fall back to earlier text
    ("The answer is B.\nANSWER: none of these", None),
    ("ANSWER: E", None),  # outside A-D
    ("ANSWER: a detailed derivation follows", None),
    ("ANSWER: Because of symmetry", None),
    ("ANSWER:", None),
    ("", None),
    ("   \n  ", None),
    (None, None),
    ("I am not sure.", None),
    ("B is tempting but A is right", None),  # no marker; an assertion counts only alone or after a belief
    ("I think A is right", "A"),
]


@pytest.mark.parametrize(("completion", "expected"), CASES)
def test_extract_choice(completion, expected):
    letter, reason = extract_choice(completion)
    assert letter == expected, reason


def test_at_least_30_cases():
    assert len(CASES) >= 30


def test_check_choice_correct_and_reason():
    ok = check_choice("blah\nANSWER: (c)", "C")
    assert ok.correct and ok.extracted == "C" and ok.score == 1.0
    wrong = check_choice("ANSWER: A", "C")
    assert not wrong.correct and wrong.extracted == "A" and "A != C" in wrong.reason
    assert wrong.score == 0.0


def test_empty_output_reason():
    res = check_choice("", "A")
    assert not res.correct and res.extracted is None and res.reason == "empty output"


def test_more_letters_when_allowed():
    assert check_choice("ANSWER: E", "E", letters="ABCDE").correct
    assert check_choice("ANSWER: E", "E").correct  # a gold E: the options run at least to E
    assert not check_choice("ANSWER: F", "E").correct  # a letter past the gold is no option
    assert not check_choice("ANSWER: E", "D").correct


def test_target_whitespace_and_case():
    assert check_choice("ANSWER: B", " b ").correct
