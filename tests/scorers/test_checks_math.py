"""Math answer equivalence: extraction, normalisation, math-verify, threads."""

from __future__ import annotations

import sys
import threading

import pytest
from waits import HANG_S

from scorers import math_equiv
from scorers.checks import check_math, extract_math_answer, find_boxed, normalize_math_answer

# (completion, target, expected correct)
CASES = [
    # plain and formatting noise
    ("ANSWER: 5", "5", True),
    ("ANSWER: $5$", "5", True),
    ("ANSWER: 5.", "5", True),
    ("ANSWER: x = 5", "5", True),
    ("ANSWER: \\$5", "5", True),
    ("ANSWER: 1,000", "1000", True),
    ("ANSWER: 10.0", "10", True),
    ("ANSWER: 50\\%", "50", True),
    # fractions vs decimals
    ("ANSWER: \\frac{1}{2}", "0.5", True),
    ("ANSWER: 0.5", "\\frac{1}{2}", True),
    ("ANSWER: \\dfrac{3}{4}", "\\frac34", True),
    ("ANSWER: 3/4", "\\frac{3}{4}", True),
    ("ANSWER: 0.75", "\\frac{2}{3}", False),
    # units and degrees
    ("ANSWER: 5 \\text{ cm}", "5", True),
    ("ANSWER: 12 \\mbox{ inches}^2", "12", True),
    ("ANSWER: 30^\\circ", "30", True),
    ("ANSWER: 30^{\\circ}", "30", True),
    ("ANSWER: 30°", "30", True),
    ("ANSWER: 30 degrees", "30", True),
    # \left \right, tuples, intervals, sets
    ("ANSWER: (3, \\frac{\\pi}{2})", "\\left( 3, \\frac{\\pi}{2} \\right)", True),
    ("ANSWER: (3, \\pi/2)", "\\left( 3, \\frac{\\pi}{2} \\right)", True),
    ("ANSWER: (3, \\pi)", "\\left( 3, \\frac{\\pi}{2} \\right)", False),
    ("ANSWER: [1, 2)", "[1,2)", True),
    ("ANSWER: (1, 2]", "[1,2)", False),
    ("ANSWER: (-\\infty, 3]", "(-\\infty,3]", True),
    ("ANSWER: \\{2, 1\\}", "\\{1,2\\}", True),
    ("ANSWER: 1, 2", "2, 1", True),
    # radicals, pi, symbolic
    ("ANSWER: \\sqrt{8}", "2\\sqrt{2}", True),
    ("ANSWER: 2\\sqrt2", "2\\sqrt{2}", True),
    ("ANSWER: \\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}{2}", True),
    ("ANSWER: 2\\sqrt{3}+6", "6+2\\sqrt{3}", True),
    ("ANSWER: 2\\pi", "2 \\pi", True),
    ("ANSWER: \\frac{\\pi}{2}", "\\pi/2", True),
    ("ANSWER: (x+1)^2", "x^2+2x+1", True),
    ("ANSWER: 3.14159", "\\pi", False),
    ("ANSWER: \\text{(C)}", "\\text{(C)}", True),
    # \boxed, nested braces, several answers
    ("so $\\boxed{\\frac{1}{\\sqrt{2}}}$", "\\frac{\\sqrt{2}}{2}", True),
    ("\\boxed{1} first, then \\boxed{\\frac{3}{4}}", "\\frac34", True),
    ("ANSWER: \\boxed{\\left(1, \\frac{2}{3}\\right)}", "(1,\\frac23)", True),
    ("ANSWER: 4\nWait, no.\nANSWER: 7", "7", True),
    ("ANSWER: 7\nWait, no.\nANSWER: 4", "7", False),
    ("\\boxed{9} but ANSWER: 8", "8", True),  # the ANSWER line beats \boxed
    ("Check our answer: 4 works.\nSo \\boxed{5}", "5", True),  # prose "answer:" is no tag
    # false equivalences and hedges (issue 8)
    ("ANSWER: 6 \\text{ and } 8", "68", False),
    ("ANSWER: 1 \\text{ or } 2", "12", False),
    ("ANSWER: 2 \\text{ million}", "2", False),
    ("ANSWER: 8 or 9", "8", False),
    ("ANSWER: between 5 and 10", "5", False),
    ("ANSWER: 1, 2", "2", False),
    ("ANSWER: \\boxed{2} or \\boxed{3}", "2", False),
    # answers with words, equations, notation
    ("ANSWER: 28 percent", "28", True),
    ("ANSWER: x = 2 or x = 3", "2, 3", True),
    ("ANSWER: 2=x", "2", True),
    ("ANSWER: 1.5e3", "1500", True),
    ("ANSWER: 0.\\overline{3}", "\\frac{1}{3}", True),
    ("ANSWER: \\[\\frac{1}{2}\\]", "\\frac12", True),
    ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "\\frac34", True),
    ("<answer>\\sqrt{2}</answer>", "\\sqrt2", True),
    ("\\boxed{5}\nActually the final answer is 6.", "6", True),
    ("ANSWER:\n\\[\nx = 5\n\\]", "5", True),  # display math on the lines after the tag
    ("**Final Answer:**\n\\[\n\\boxed{5}\n\\]", "5", True),
    # a whole solution inside <answer> tags: its own last marker is read
    ("<answer>Let me think.\nStep 1: 2+3.\nSo the result is \\boxed{5}.</answer>", "5", True),
    ("<answer>work\n\\boxed{2} or \\boxed{3}</answer>", "3", False),
    # failures
    ("", "1", False),
    ("I cannot solve it.", "1", False),
    ("ANSWER:", "1", False),
    ("ANSWER: 4", "5", False),
]


@pytest.mark.parametrize(("completion", "target", "correct"), CASES)
def test_check_math(completion, target, correct):
    result = check_math(completion, target)
    assert result.correct is correct, result.reason


def test_at_least_30_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize(
    ("text", "boxed"),
    [
        ("\\boxed{\\frac{a}{b}}", "\\frac{a}{b}"),
        ("x \\boxed{\\left\\{1,2\\right\\}} y", "\\left\\{1,2\\right\\}"),
        ("\\boxed{1} and \\boxed{{2}}", "{2}"),
        ("\\boxed 5", "5"),
        ("\\fbox{7}", "7"),
        ("\\boxed{unclosed", None),
        ("no box", None),
    ],
)
def test_find_boxed_nested(text, boxed):
    assert find_boxed(text) == boxed


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("\\left( 3, \\dfrac{\\pi}{2} \\right)", "(3,\\frac{\\pi}{2})"),
        ("$1,000,000$.", "1000000"),
        ("90^\\circ", "90"),
        ("5\\text{ cm}", "5 cm"),  # words are kept, never deleted to force a match
        ("6 \\text{ and } 8", "6 and 8"),
        ("\\frac12", "\\frac{1}{2}"),
        ("12.50", "12.5"),
        ("y = 2x + 1", "2x+1"),
        ("\\text{Evelyn}", "Evelyn"),
    ],
)
def test_normalize(raw, normal):
    assert normalize_math_answer(raw) == normal


def test_reasons_name_the_extraction():
    assert extract_math_answer("") == (None, "empty output")
    assert extract_math_answer("ANSWER:")[1] == "last ANSWER line: answer is empty"
    res = check_math("so \\boxed{2}", "3")
    assert res.extracted == "2" and "\\boxed" in res.reason and not res.correct


def test_works_off_the_main_thread():
    """math-verify's SIGALRM timeout fails off the main thread; we use a process pool."""
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["eq"] = check_math("ANSWER: 0.5", "\\frac{1}{2}")
            out["ne"] = check_math("ANSWER: 0.75", "\\frac{1}{2}")
        except Exception as ex:  # pragma: no cover - reported below
            out["error"] = ex

    t = threading.Thread(target=run)
    t.start()
    t.join(HANG_S)  # a hang guard: the first answer starts a worker, seconds of CPU on a busy machine
    assert "error" not in out, out.get("error")
    assert out["eq"].correct and "math-verify" in out["eq"].reason
    assert not out["ne"].correct


def stand_in(after_request: str) -> math_equiv._Worker:
    """A worker child that reads one request and then runs `after_request` (Python)."""
    return math_equiv._Worker(cmd=[sys.executable, "-c", f"import sys, time\nsys.stdin.readline()\n{after_request}"])


def test_a_worker_is_waited_for_by_its_cpu_time_not_the_clock():
    """A busy machine makes a comparison take long in wall time, not in CPU time: an answer that
    comes after 3 s of waiting, 30 times its 0.1 s CPU limit (the old wall backstop refused past
    10 times), is the verdict, not a time-out."""
    slow = stand_in("time.sleep(3)\nprint('{\"equal\": true}', flush=True)")
    assert slow.ask("1", "1", timeout=0.1) is True  # type: ignore[arg-type]
    slow.kill()


def test_a_worker_past_its_cpu_limit_is_killed_as_a_time_out(monkeypatch):
    """A child that computes past its limit without answering (its own signal failed) ends by
    its CPU time: 0.3 CPU-s here, however long that takes on the wall."""
    monkeypatch.setattr(math_equiv, "CPU_OVERRUN_S", 0.0)
    monkeypatch.setattr(math_equiv, "STARTUP_CPU_S", 0.0)
    spinning = stand_in("while True: pass")
    assert spinning.ask("1", "1", timeout=0.3) is None  # type: ignore[arg-type]
    assert not spinning.alive()


def test_a_worker_that_gets_no_cpu_is_killed_as_hung_not_as_a_verdict():
    hung = stand_in("time.sleep(600)")  # blocked: no CPU at all
    with pytest.raises(math_equiv.ComparisonHung, match="no CPU for 0.5 s"):
        hung.ask("1", "1", timeout=1, hang_s=0.5)
    assert not hung.alive()


def test_a_hung_comparison_is_said_plainly(monkeypatch):
    def hung(*_a, **_k):
        raise math_equiv.ComparisonHung("math-verify's worker got no CPU for 60 s (hung): killed")

    monkeypatch.setattr(math_equiv, "symbolic_equal", hung)
    res = check_math("ANSWER: x^{x^{x}}", "y")
    assert not res.correct and res.reason.startswith("no verdict: math-verify's worker got no CPU")
    assert check_math("ANSWER: 2x", "2x").correct  # equal strings need no comparison


def test_timeout_in_main_thread_is_reported(monkeypatch):
    from math_verify.errors import TimeoutException

    def slow(*_a):
        raise TimeoutException("Operation timed out!")

    monkeypatch.setattr(math_equiv, "_verify_in_process", slow)
    res = check_math("ANSWER: x^{x^{x}}", "y", timeout=1)
    assert not res.correct and "timed out" in res.reason


def test_the_math_verify_limit_is_cpu_time_so_a_busy_machine_cannot_change_a_verdict():
    """Waiting (what a loaded machine does to a call) does not spend the limit; computing does."""
    import time

    from math_verify.errors import TimeoutException

    from scorers.math_equiv import _cpu_limit

    with _cpu_limit(1):
        time.sleep(1.5)  # wall time past the limit, no CPU: not a time-out

    def spin() -> None:  # 1.2 s of CPU in its own thread
        while time.thread_time() < 1.2:
            pass

    with _cpu_limit(1):  # another thread's CPU time, past the limit, is not the comparison's
        spinner = threading.Thread(target=spin)
        spinner.start()
        spinner.join()
    with pytest.raises(TimeoutException), _cpu_limit(1):
        while True:
            pass
