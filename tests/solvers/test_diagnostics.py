"""Workflow diagnostics (solvers/diagnostics.py): hand-computed values on hand-made rounds."""

import math

import pytest

from solvers.diagnostics import (
    answer_change,
    entropy_bits,
    prior_output,
    restates_question,
    round_features,
    summarize,
)

Q = "What is the sum of the first ten positive integers?"


def step(worker, subtask="Solve it.", visible=(), output="ANSWER: 55", model=None, error=None):
    return {"worker": worker, "model": model or f"w{worker}", "subtask": subtask, "visible": list(visible),
            "output": output, "error": error, "round": None}  # fmt: skip


def test_a_subtask_that_only_restates_the_question_is_a_copy():
    assert restates_question(Q, Q)
    assert restates_question("Solve step by step: " + Q.upper(), Q)  # 4 words of its own, all of the question's
    assert not restates_question("Add 1 through 10 with Gauss's formula n(n+1)/2.", Q)
    assert not restates_question("What is the sum?", Q)  # 3 of the question's 9 distinct words
    padded = "Please think very carefully and then explain every single step: " + Q  # 10 words of its own
    assert not restates_question(padded, Q)
    assert not restates_question("", Q) and not restates_question(Q, "")


def test_prior_output_is_the_latest_earlier_step_the_final_step_saw():
    rnd = {"steps": [step(0, output="ANSWER: 54"), step(1, output="ANSWER: 56"), step(2, visible=[0, 1])]}
    assert prior_output(rnd) == "ANSWER: 56"
    assert prior_output({"steps": [step(0), step(1)]}) is None  # the final step saw nothing
    assert prior_output({"steps": [step(0, error="timeout"), step(1, visible=[0])]}) is None
    assert prior_output({"steps": [step(0), step(1, visible=["0", 7])]}) is None  # not a recorded earlier step
    assert prior_output(None) is None and prior_output({"steps": []}) is None


def test_answer_change_compares_marked_answers_and_tells_better_from_worse():
    assert answer_change("So ANSWER: 55", "answer:  55 ") == "same"  # case and spacing ignored
    assert answer_change("The final answer is \\boxed{55}", "ANSWER: 55") == "same"
    assert answer_change("ANSWER: 55", "ANSWER: 54") == "changed"  # correctness unknown
    assert answer_change("ANSWER: 55", "ANSWER: 54", True, False) == "better"
    assert answer_change("ANSWER: 54", "ANSWER: 55", False, True) == "worse"
    assert answer_change("ANSWER: 53", "ANSWER: 54", False, False) == "changed"
    assert answer_change(None, "ANSWER: 54") is None and answer_change("ANSWER: 54", None) is None


def test_round_features():
    rnd = {"steps": [step(0, subtask=Q, model="a"), step(1, subtask="Check the answer above.", visible=[0],
                                                        output="ANSWER: 56", model="a")]}  # fmt: skip
    f = round_features(rnd, Q, "math", final_correct=False, prior_correct=True)
    assert f == {"domain": "math", "steps": 2, "copied_steps": 1, "models": ["a", "a"], "single_step": False,
                 "single_worker": True, "verify_refine": True, "answer_change": "worse"}  # fmt: skip
    rejected = round_features({"steps": [], "rejection": "missing_list"}, Q)
    assert rejected["steps"] == 0 and not rejected["single_worker"] and rejected["answer_change"] is None


def test_entropy_bits():
    assert entropy_bits([4]) == 0.0
    assert entropy_bits([2, 2]) == pytest.approx(1.0)
    assert entropy_bits([1, 1, 2]) == pytest.approx(1.5)  # 0.25*2 + 0.25*2 + 0.5*1
    assert entropy_bits([]) == 0.0 and entropy_bits([0, 3]) == 0.0


def test_summarize_hand_computed():
    a, b = "sim/a", "sim/b"
    rounds = [
        # math: one copied step on a
        {"domain": "math", "steps": 1, "copied_steps": 1, "models": [a], "single_step": True,
         "single_worker": True, "verify_refine": False, "answer_change": None},
        # math: a then b, b refines and fixes the answer
        {"domain": "math", "steps": 2, "copied_steps": 0, "models": [a, b], "single_step": False,
         "single_worker": False, "verify_refine": True, "answer_change": "better"},
        # mmlu: b, b, the last keeps the answer
        {"domain": "mmlu", "steps": 2, "copied_steps": 1, "models": [b, b], "single_step": False,
         "single_worker": True, "verify_refine": True, "answer_change": "same"},
        # unparseable: counts only where rounds without steps count
        {"domain": "mmlu", "steps": 0, "copied_steps": 0, "models": [], "single_step": False,
         "single_worker": False, "verify_refine": False, "answer_change": None},
    ]  # fmt: skip
    s = summarize(rounds)
    assert s["copy_rate"] == pytest.approx(2 / 5)
    assert s["single_step_share"] == pytest.approx(1 / 3)
    assert s["single_worker_share"] == pytest.approx(2 / 3)
    assert s["verify_refine_share"] == pytest.approx(2 / 3)
    assert s["answer_compared"] == 2 and s["answer_changed_share"] == 0.5
    assert s["answer_better_share"] == 0.5 and s["answer_worse_share"] == 0.0
    assert s["worker_entropy/math"] == pytest.approx(-(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3))
    assert s["worker_entropy/mmlu"] == 0.0  # collapsed onto b
    assert summarize([]) == {}
    assert summarize(rounds[3:]) == {}  # nothing ran, nothing compared


def test_untrusted_text_is_read_in_bounded_time():
    from cpu_clock import cpu_seconds

    huge = "x " * 2_000_000 + "ANSWER: " + "(" * 200_000
    _, cpu = cpu_seconds(lambda: (restates_question(huge, huge), answer_change(huge, huge + "1")))
    assert cpu < 1.0, cpu  # CPU seconds, not wall time (about 6 ms)
