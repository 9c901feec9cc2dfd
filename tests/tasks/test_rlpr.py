"""RLPR: records in RLPR's format or flat, the seeded split, and grading by rule then by a
scripted judge bound to the `grader` role, end to end through Inspect, offline."""

import json
from pathlib import Path

import pytest
from inspect_ai import eval
from scripted import scripted, user_texts

from scorers.rlpr import judge_prompt, parse_verdict
from tasks.rlpr import RecordError, record_to_sample, rlpr

FIXTURE = str(Path(__file__).parents[1] / "fixtures" / "rlpr_sample.jsonl")

# what the solver answers per question (by a word of it), and what the judge rules per answer
ANSWERS = {"apples": "3 x 4 = 12\nANSWER: 12", "photosynthesis": "ANSWER: CO2",
           "coin": "ANSWER: 0.3", "resistance": "It is the ohm."}  # fmt: skip
JUDGE = {"CO2": "CO2 is carbon dioxide.\nFinal Decision: Yes", "0.3": "Not 1/4.\nFinal Decision: No",
         "12": "Same number.\nFinal Decision: Yes"}  # fmt: skip


def solver_model():
    def reply(messages):
        text = user_texts(messages)[-1]
        return next(answer for word, answer in ANSWERS.items() if word in text)

    return scripted(reply)


def judge_model():
    def reply(messages):
        text = user_texts(messages)[-1]
        answer = text.split("Student's final answer:\n", 1)[1].split("\n", 1)[0]
        return JUDGE[answer]

    return scripted(reply)


def run(judge_mode: str, grader=None):
    roles = {"grader": grader} if grader is not None else None
    task = rlpr(data_file=FIXTURE, judge=judge_mode)
    [log] = eval(task, model=solver_model(), model_roles=roles, display="none", log_dir=None)
    return log


def verdicts(log) -> dict[str, tuple[str, str]]:
    out = {}
    for sample in log.samples:
        [score] = sample.scores.values()
        out[sample.metadata["question"].split()[1]] = (score.value, score.metadata["graded_by"])
    return out


def test_records_in_rlpr_format_and_flat():
    rows = [json.loads(line) for line in Path(FIXTURE).read_text().splitlines()]
    verl = record_to_sample(rows[1])
    assert verl.metadata["question"] == "Which gas do plants take in from the air for photosynthesis?"
    assert verl.target == "carbon dioxide" and verl.id == "rlpr_1" and verl.metadata["ability"] == "Biology"
    assert verl.input.startswith(verl.metadata["question"]) and '"ANSWER: <answer>"' in verl.input
    flat = record_to_sample(rows[3])
    assert (flat.target, flat.id) == ("ohm", "rlpr_flat-3")
    with pytest.raises(RecordError, match=r"no reference answer \(fields: prompt\).*reward_model\.ground_truth"):
        record_to_sample({"prompt": [{"role": "user", "content": "q"}]})
    with pytest.raises(RecordError, match="no question"):
        record_to_sample({"answer": "1"})


def test_verdict_parsing():
    assert parse_verdict("reasoning...\nFinal Decision: Yes") is True
    assert parse_verdict("final decision: no") is False
    assert parse_verdict("Final Decision: Yes ... on reflection\nFinal Decision: No") is False
    assert parse_verdict("**Final Decision:** Yes") is True  # markdown around the line is tolerated
    assert parse_verdict("Final Decision: **Yes**") is True
    assert parse_verdict("Yes, it matches.") is None and parse_verdict(None) is None
    assert parse_verdict("x" * 200_000 + "Final Decision: Yes") is True


def test_judge_prompt_carries_question_reference_and_answer_only():
    prompt = judge_prompt("Q?" + "q" * 10_000, "ref", "ans" * 1000)
    assert "Q?" in prompt and "Reference answer:\nref" in prompt
    assert len(prompt) < 6000 + 1000 + 1000 + 2000


def test_auto_grades_by_rule_then_by_the_grader_role():
    judge = judge_model()
    log = run("auto", judge)
    assert log.status == "success", log.error
    assert verdicts(log) == {
        "box": ("C", "rule"),  # 12 == 12: no judge call
        "gas": ("C", "mockllm/model"),  # CO2 vs carbon dioxide: the judge says yes
        "fair": ("I", "mockllm/model"),  # 0.3 vs 1/4: the judge says no
        "is": ("I", "format"),  # no final answer: never reaches the judge
    }
    assert len(judge.calls) == 2
    asked = user_texts(judge.calls[0])[-1]
    assert "Reference answer:\n" in asked and "Final Decision" in asked
    assert log.results.scores[0].metrics["accuracy"].value == 0.5


def test_judge_mode_sends_every_answered_sample_to_the_judge():
    judge = judge_model()
    log = run("judge", judge)
    assert log.status == "success", log.error
    assert verdicts(log)["box"] == ("C", "mockllm/model")
    assert len(judge.calls) == 3


def test_rule_mode_and_auto_without_a_grader_never_call_a_judge():
    for mode in ("rule", "auto"):
        log = run(mode)
        assert log.status == "success", log.error
        assert {k: v[0] for k, v in verdicts(log).items()} == {"box": "C", "gas": "I", "fair": "I", "is": "I"}
    explanations = [next(iter(s.scores.values())).explanation for s in log.samples]
    assert any("no grader role bound" in e for e in explanations)


def test_judge_mode_without_a_grader_says_how_to_bind_one():
    log = run("judge")
    assert log.status == "error"
    assert "--model-role grader=" in str(log.error)


def test_options_are_checked_and_the_split_is_seeded(tmp_path):
    with pytest.raises(ValueError, match="unknown judge mode 'gpt'"):
        rlpr(data_file=FIXTURE, judge="gpt")
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        rlpr(data_file=FIXTURE, split="dev")
    assert [s.target for s in rlpr(data_file=FIXTURE, ability="biology").dataset] == ["carbon dioxide"]
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": str(i)}) + "\n" for i in range(50)))
    ids = {
        split: {s.id for s in rlpr(data_file=str(path), split=split).dataset}
        for split in ("train", "validation", "test")
    }
    assert [len(ids[s]) for s in ("train", "validation", "test")] == [30, 10, 10]
    assert not (ids["train"] & ids["test"]) and not (ids["validation"] & ids["test"])
    assert ids == {split: {s.id for s in rlpr(data_file=str(path), split=split, shuffle=True).dataset} for split in ids}
    assert len(rlpr(data_file=str(path)).dataset) == 50


def test_task_file_runs_as_a_user_would_type_it(monkeypatch):
    """`inspect eval tasks/rlpr.py -T data_file=... -T judge=rule`, through Inspect's loader."""
    monkeypatch.chdir(Path(__file__).parents[2])
    task_args = {"data_file": "tests/fixtures/rlpr_sample.jsonl", "judge": "rule"}
    [log] = eval("tasks/rlpr.py", task_args=task_args, model=solver_model(), display="none")
    assert log.status == "success", log.error
    assert log.eval.task.endswith("rlpr") and len(log.samples) == 4
    assert log.results.scores[0].metrics["accuracy"].value == 0.25
