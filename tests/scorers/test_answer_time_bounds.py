"""Every answer check finishes in milliseconds of CPU time on adversarial 1 MB outputs.

The checks read only the last MAX_INPUT_CHARS characters, every regex is linear, braces
are matched in one pass; an answer longer than MAX_ANSWER_CHARS never reaches math-verify.
The bound is on CPU time (tests/cpu_clock.py), so a busy machine cannot fail it: the
slowest case takes about 25 ms, a backtracking regex or a quadratic scan of 1 MB seconds.
"""

from __future__ import annotations

import pytest
from cpu_clock import cpu_seconds

from scorers.checks import check_choice, check_math, check_numeric
from scorers.extract import MAX_ANSWER_CHARS, find_boxed, last_answer_line

MB = 1_000_000
LIMIT_CPU_S = 0.25  # 10x the slowest case (about 25 ms of CPU)


def _rep(unit: str, prefix: str = "", suffix: str = "") -> str:
    return prefix + unit * ((MB - len(prefix) - len(suffix)) // len(unit)) + suffix


ADVERSARIAL = {
    "spaces": _rep(" "),
    "spaces after tag": _rep(" ", "ANSWER: 5"),
    "tag after spaces": _rep(" ", suffix="ANSWER: 5"),
    "spaces after tag at the end": _rep("x", suffix="ANSWER:" + " " * 5000),
    "number tag then spaces": _rep(" ", suffix="ANSWER: 12" + " " * 2000 + "x"),
    "unclosed boxes": _rep("\\boxed{"),
    "unclosed boxes, one closed": _rep("\\boxed{", "\\boxed{5}"),
    "unclosed braces": _rep("{"),
    "closing braces": _rep("}"),
    "nested closed boxes": "\\boxed{" * 70_000 + "5" + "}" * 70_000,
    "many ANSWER tags": _rep("ANSWER: "),
    "many ANSWER lines": _rep("ANSWER: 7\n"),
    "many empty ANSWER lines": _rep("ANSWER:\n"),
    "many final answer phrases": _rep("The final answer is $"),
    "many answer tags": _rep("<answer>"),
    "many 'the answer is'": _rep("the answer is "),
    "digits": _rep("1"),
    "digits after tag": "ANSWER: " + _rep("1"),
    "digits on a tag at the end": _rep("x", suffix="ANSWER: " + "9" * (MAX_ANSWER_CHARS - 1)),
    "thousands groups": _rep(",000", "ANSWER: 1"),
    "spaced groups": _rep(" 000", suffix="ANSWER: 1" + " 000" * 100),
    "exponents": _rep("1e1"),
    "dollars": _rep("$"),
    "hedges": _rep("A or ", "ANSWER: "),
    "letters list": _rep("A, B, C, D, ", "ANSWER: "),
    "parens in the answer": _rep("x", suffix="ANSWER: " + "(" * (MAX_ANSWER_CHARS - 1)),
    "braces in the answer": _rep("x", suffix="ANSWER: " + "{" * (MAX_ANSWER_CHARS - 1)),
    "fractions in the answer": _rep("x", suffix="ANSWER: " + "\\frac{1}{2}" * 50),
    "backslashes": _rep("\\"),
    "newlines": _rep("\n"),
    "unicode fractions": _rep("½"),
    "math segments": _rep("$x$ and "),
    "long answer tag": _rep("x", "<answer>", "\\boxed{5}</answer>"),
    "answer tag of open boxes": _rep("\\boxed{", "<answer>", "</answer>"),
    "answer tag of lines": _rep("5\n", "<answer>", "</answer>"),
    "mixed numbers": _rep("1 1/2 ", "ANSWER: "),
    "mixed numbers in the answer": _rep("x", suffix="ANSWER: " + "11 6/6 " * 80),
    "clock times": _rep("10:30 PM "),
    "primes in the answer": _rep("x", suffix="ANSWER: " + "f'" * 290),
    "units in the answer": _rep("x", suffix="ANSWER: " + "5 \\text{ cm}^2 " * 40),
    "doubly escaped commands": _rep("\\\\frac"),
    "display math never closed": _rep("ANSWER: \\[\n"),
    "labelled boxes": _rep("y_1 = \\boxed{1} and "),
    "best answer phrases": _rep("the best answer is:\n"),
    "negated letters": _rep("not A, ", "ANSWER: "),
    "think closers": _rep("</think>"),
    "think closer then spaces": _rep(" ", "</think>"),
    "selections in the answer": _rep("x", suffix="ANSWER: " + "I choose " * 66),
    "selection phrases": _rep("I choose ", "ANSWER: "),
    "lone letters": _rep("A\n"),
    "option after 'is:'": _rep("is:\n\n"),
    "bracket in the answer": _rep("x", suffix="ANSWER: [" + "1" * (MAX_ANSWER_CHARS - 2) + "]"),
    "computation in the answer": _rep("x", suffix="ANSWER: " + "1+" * 290 + "= 5"),
    "unequal computation in the answer": _rep("x", suffix="ANSWER: $" + "|" * (MAX_ANSWER_CHARS - 4) + "= 5"),
    "scientific notation": _rep("1.5 \\times 10^{", "ANSWER: "),
    "scientific notation in the answer": _rep("x", suffix="ANSWER: " + "1.5 \\times 10^{-3} " * 30),
    "matrices in the answer": _rep("x", suffix="ANSWER: " + "\\begin{matrix} 1 \\\\ " * 30),
    "a vector against a list": _rep("x", suffix="ANSWER: \\begin{pmatrix}" + " 1 \\\\" * 70 + " \\end{pmatrix}"),
    "doubly escaped rows": _rep("x", suffix="ANSWER: \\\\begin{matrix}" + " 1 \\\\\\\\" * 60),
    "revisions": _rep("no wait A, ", "ANSWER: "),
    "revisions in the answer": _rep("x", suffix="ANSWER: " + "actually A, no wait B, " * 25),
    "settled on": _rep("settled on ", "ANSWER: "),
    "articles": _rep("A polygenic ", "ANSWER: "),
    "articles in the answer": _rep("x", suffix="ANSWER: E: " + "A risk " * 80),
    "letter pairs": _rep("B/I or ", "ANSWER: "),
    "doubts": _rep("not sure ", "ANSWER: "),
    "final choice lines": _rep("Final choice: c\n"),
    "first-line letter then letters": _rep(" x A", "B\n"),
    "answer-is phrases without a marker": _rep("The answer is: 2", suffix=" and"),
    "a box then values": _rep(" and 34", "\\boxed{33}"),
    "plain-text functions in the answer": _rep("x", suffix="ANSWER: " + "cos(" * 140),
    "open parenthesised powers in the answer": _rep("x", suffix="ANSWER: " + "x**(" * 140),
    "function calls as powers in the answer": _rep("x", suffix="ANSWER: " + "x^log(" * 95),
    "function calls as powers": _rep("x^log(", "ANSWER: "),
    "two-argument logs in the answer": _rep("x", suffix="ANSWER: " + "log(x, 10)*" * 50),
    "long subscripts in the answer": _rep("x", suffix="ANSWER: " + "v_zmf*" * 95),
    "roots as powers in the answer": _rep("x", suffix="ANSWER: " + "x**sqrt(2)*" * 50),
    "open plain roots and abs in the answer": _rep("x", suffix="ANSWER: " + "sqrt(abs(" * 66),
    "nested plain roots in the answer": _rep("x", suffix="ANSWER: " + "sqrt(" * 60 + "x" + ")" * 60),
    "plain pi": _rep("pi*", "ANSWER: "),
    "proposed answer lines": _rep("Proposed answer: 5\n"),
    "answer-is phrases with spaces": _rep("answer is:        "),
    "variables in both cases in the answer": _rep("x", suffix="ANSWER: " + "X+x+" * 145),
    "statements without a marker": _rep("x is 5 = "),
    "statement chains on the last line": _rep("x", suffix="\n" + "y = 1 + " * 300 + "2."),
    "chat tokens after a statement": _rep("<|im_end|>", "So x is 5."),
    "stated letters": _rep("It must be [C] ", "x\n"),
    "doubted answer phrases": _rep("maybe the answer is 4. "),
    "roots with parentheses in the answer": _rep("x", suffix="ANSWER: " + "\\sqrt[3](" * 60),
    "roots with parentheses": _rep("\\sqrt(", "ANSWER: "),
    "grouped numbers in an expression in the answer": _rep("x", suffix="ANSWER: " + "1,000(" * 99),
    "trailing text words in the answer": _rep("x", suffix="ANSWER: 5=" + "\\text{ cm}\\ " * 40),
    "plain-SymPy brackets in the answer": _rep("x", suffix="ANSWER: " + "2*[x+" * 115),
    "glued functions in the answer": _rep("x", suffix="ANSWER: " + "sinx+" * 115),
    "long decimals in the answer": _rep("x", suffix="ANSWER: " + "2.71828182845905*" * 34),
    "revision after the answer": _rep(" 1", "ANSWER: 5\nActually,"),
    "ruled-out values in a revision": _rep("not 5, ", "ANSWER: 5\nActually, it's "),
    "doubt after the answer": _rep(" x", "ANSWER: 5\nBut it might also be"),
    "interjections after the answer": _rep("Hmm. ", "ANSWER: 5\n"),
    "explanations in the answer": _rep("5 apples (the ", "ANSWER: "),
    "explanation openers in the answer": _rep("x", suffix="ANSWER: " + "5 a b, which " * 45),
    "bounds in the answer": _rep("x", suffix="ANSWER: " + "5 max up to " * 50),
    "signs in the answer": _rep("x", suffix="ANSWER: " + "-(-$" * 150),
    "final answer dash lines": _rep("Final Answer - 5\n"),
    "conclusion lines": _rep("Therefore: 5\n"),
    "tally clauses": _rep(", leaving 2"),
    "tally clauses on the last line": _rep("x", suffix="\nFirst 1" + ", then finally 5" * 36 + "."),
    "placeholder '####' lines": _rep("#### N\n"),
    "radical signs": _rep("√", "ANSWER: "),
    "radical signs in the answer": _rep("x", suffix="ANSWER: " + "√(" * 290),
    "lone options": _rep("Option A.\n"),
    "decimals in the answer": _rep("x", suffix="ANSWER: " + "3.14159 " * 70 + "50%"),
    "affirmations after the answer phrase": _rep(" This is confirmed.", "The answer is 99."),
    "next-question lines after an answer": _rep("Question: x\nQ1: y\n[Question] z\n", "The answer is 5.\n"),
    "next-question lines before an answer": _rep("Question: x\n", suffix="\nANSWER: 5"),
    "solution tags": _rep("<SOLUTION>5</SOLUTION>"),
    "self-check questions after an answer": _rep("Is that right? No, it's ", "ANSWER: 5\n"),
    "self-check question, long answer to it": _rep("9", "ANSWER: 5\nIs that right? No, it's "),
    # red team 3 (issue 44): tallies with qualifiers, conclusion lines, option lists, radicals, back-referring questions
    "tally clauses with qualifiers": _rep(", leaving 2 so far", "The answer is 7"),
    "tally with a long qualifier": _rep("un", "He has 5, leaving 2 ", "resolved."),
    "conclusion line that doubts": _rep("intermediate ", "Therefore: 5 "),
    "retractions not verified": _rep("This has not been verified. ", "ANSWER: 5\n"),
    "hash lines of words": _rep("#### insufficient information\n"),
    "option list items": _rep("Option C: 7, correct!\nOption D.\n"),
    "radical signs before digits": _rep("√16", "\\boxed{", "x}"),
    "back-referring question lines": _rep("Problem: I made an error above; wait.\nANSWER: 6\n", "ANSWER: 5\n"),
    "self-checks answered no": _rep("Is that right? No. ", "ANSWER: 5\n"),
    "negations not counting": _rep(" not counting", "ANSWER: 25"),
    "unclosed solution tags": _rep("<solution>"),
}


@pytest.fixture(scope="module", autouse=True)
def _warm():
    check_math("ANSWER: \\frac{1}{2}", "0.5")  # imports sympy / math-verify once


@pytest.mark.parametrize("check", [check_choice, check_math, check_numeric], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_check_is_fast_on_adversarial_output(check, name):
    text = ADVERSARIAL[name]
    assert len(text) >= 0.9 * MB or name == "nested closed boxes"
    result, cpu = cpu_seconds(lambda: check(text, "5"), repeat=2)  # the first may fill a cache
    assert cpu < LIMIT_CPU_S, f"{check.__name__} took {cpu * 1000:.0f} ms of CPU on {name!r}"
    assert result.reason  # every verdict says why


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_extraction_helpers_are_fast(name):
    text = ADVERSARIAL[name]
    _, cpu = cpu_seconds(lambda: (last_answer_line(text), find_boxed(text)), repeat=2)
    assert cpu < LIMIT_CPU_S, f"took {cpu * 1000:.0f} ms of CPU on {name!r}"


@pytest.mark.parametrize("name", ["a vector against a list", "matrices in the answer", "revisions in the answer"])
def test_new_forms_are_fast_against_their_counterpart(name):
    """The vector and revision rules run only against a list reference or a late letter: time those too."""
    text = ADVERSARIAL[name]
    for check, gold in ((check_math, "[1, 2]"), (check_math, "(1, 2)"), (check_choice, "J")):
        _, cpu = cpu_seconds(lambda check=check, gold=gold: check(text, gold), repeat=2)
        assert cpu < LIMIT_CPU_S, f"{check.__name__} took {cpu * 1000:.0f} ms of CPU on {name!r} vs {gold!r}"


def test_the_answer_at_the_end_of_a_long_output_is_still_read():
    text = "reasoning " * 100_000 + "\nANSWER: 5"
    assert check_numeric(text, "5").correct
    assert check_math(text, "5").correct
    assert check_choice(text.replace("5", "B"), "B").correct
