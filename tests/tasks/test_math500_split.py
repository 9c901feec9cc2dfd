"""MATH500 split: seeded 300/100/100, disjoint, stable (pinned against the real 500 ids)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from tasks.math500 import assign_splits, math500

FIXTURES = Path(__file__).parents[1] / "fixtures"


def pinned() -> dict[str, str]:
    lines = (FIXTURES / "math500_split.tsv").read_text().splitlines()
    return dict(line.split("\t") for line in lines if not line.startswith("#"))


def test_real_math500_ids_split_as_pinned():
    """The assignment of the 500 real unique_ids never changes (a changed hash, salt or cut
    would silently move items between train and test)."""
    expected = pinned()
    assert len(expected) == 500
    assert assign_splits(expected) == expected
    assert Counter(expected.values()) == {"train": 300, "validation": 100, "test": 100}


def test_assignment_ignores_order_and_is_proportional():
    ids = [f"test/algebra/{i}.json" for i in range(1000)]
    forward, backward = assign_splits(ids), assign_splits(reversed(ids))
    assert forward == backward
    assert Counter(forward.values()) == {"train": 600, "validation": 200, "test": 200}


@pytest.fixture
def math_file(tmp_path):
    """500 records in the MATH-500 format (the real ids, synthetic problems)."""
    path = tmp_path / "math500.jsonl"
    with path.open("w") as f:
        for i, uid in enumerate(pinned()):
            record = {"problem": f"Compute {i}+1.", "solution": "", "answer": str(i + 1),
                      "subject": "Algebra", "level": 1 + i % 5, "unique_id": uid}  # fmt: skip
            f.write(json.dumps(record) + "\n")
    return str(path)


def test_task_splits_are_disjoint_and_sized(math_file):
    ids = {}
    for split in ("train", "validation", "test", "all"):
        ids[split] = {s.id for s in math500(split=split, data_file=math_file).dataset}
    assert [len(ids[s]) for s in ("train", "validation", "test", "all")] == [300, 100, 100, 500]
    assert not ids["train"] & ids["test"] and not ids["train"] & ids["validation"]
    assert not ids["validation"] & ids["test"]
    assert ids["train"] | ids["validation"] | ids["test"] == ids["all"]
    assert ids["test"] == {uid for uid, split in pinned().items() if split == "test"}


def test_filters_apply_within_the_split(math_file):
    test_ids = {s.id for s in math500(split="test", data_file=math_file).dataset}
    level5 = math500(split="test", level="5", data_file=math_file).dataset
    assert 0 < len(level5) < 100 and {s.id for s in level5} <= test_ids


def test_user_file_is_whole_by_default_and_bad_split_is_named(math_file):
    assert len(math500(data_file=math_file).dataset) == 500
    with pytest.raises(ValueError, match="unknown split 'dev'.*train, validation, test, all"):
        math500(split="dev", data_file=math_file)


def test_bundled_data_defaults_to_the_test_split(monkeypatch):
    """Without a data file the default is the 100-item test split (the paper's protocol)."""
    import tasks.math500 as module

    seen = {}

    def fake_build(benchmark, sources, record_to_sample, **kwargs):
        from inspect_ai.dataset import MemoryDataset

        seen.update(kwargs)
        records = [{"problem": f"p{i}", "answer": "1", "unique_id": uid} for i, uid in enumerate(pinned())]
        return MemoryDataset([record_to_sample(r) for r in records])

    monkeypatch.setattr(module, "build_dataset", fake_build)
    dataset = module.math500().dataset
    assert seen["data_file"] is None
    assert {s.id for s in dataset} == {uid for uid, split in pinned().items() if split == "test"}


def test_record_missing_a_field_is_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"problem": "1+1?", "unique_id": "x"}) + "\n")
    with pytest.raises(ValueError, match=r"math500 record without answer \(fields: problem, unique_id\)"):
        math500(data_file=str(path))
