"""Shared task plumbing: records from a declared source -> an Inspect dataset."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from inspect_ai.dataset import MemoryDataset, Sample

from startup.eval_header import report_on
from startup.inspect_command import check_inspect_command
from startup.options import checked
from tasks.sources import DataRecordError, Downloader, LoadedRecords, Source, SourceError, load_records

RecordToSample = Callable[[dict[str, Any]], Sample | None]
F = TypeVar("F", bound=Callable[..., Any])


def checked_task(factory: F) -> F:
    """Under `@task`: a bad -T option or data file, or an `inspect eval` option Inspect would
    silently replace (`startup.inspect_command`), ends the eval with one line before any
    sample runs (`solvers.options.checked`); the tasks raise ValueError or SourceError only
    for those. When it starts, the eval names its conductor and pool (`startup.eval_header`)."""
    report_on(factory.__name__)
    return checked(factory, "-T", ValueError, SourceError, check=check_inspect_command)


def samples_from_records(benchmark: str, loaded: LoadedRecords, record_to_sample: RecordToSample) -> list[Sample]:
    """Convert records; default ids `<benchmark>_<row>`; stamp `metadata["data_source"]`."""
    samples: list[Sample] = []
    for row, record in enumerate(loaded.records):
        try:
            sample = record_to_sample(record)
        except (KeyError, ValueError, TypeError, IndexError, AttributeError) as ex:
            raise DataRecordError(
                f"{benchmark}: record {row + 1} of {loaded.label}: {_problem(ex, record)}. Fix or remove "
                "that record (or use a declared source: -T source=wheel|hub)"
            ) from ex
        if sample is None:
            continue
        if sample.id is None:
            sample.id = f"{benchmark}_{row:05d}"
        sample.metadata = {**(sample.metadata or {}), "data_source": loaded.label}
        samples.append(sample)
    return samples


def _problem(ex: Exception, record: dict[str, Any]) -> str:
    if isinstance(ex, ValueError):  # RecordError, or a task's own message
        return str(ex)[:500]
    if isinstance(ex, KeyError):
        shown = ", ".join(sorted(map(str, record))[:20])
        return f"field {ex.args[0]!r} is missing (the record has: {shown})"
    return f"unusable record ({type(ex).__name__}: {str(ex)[:200]})"


def build_dataset(
    benchmark: str,
    sources: Sequence[Source],
    record_to_sample: RecordToSample,
    *,
    data_file: str | None = None,
    source: str | None = None,
    filter_field: str | None = None,
    filter_values: str | Iterable[str] | None = None,
    shuffle: bool = False,
    seed: int = 0,
    downloader: Downloader | None = None,
) -> MemoryDataset:
    """Load records (first working source), convert, filter, optionally shuffle.

    `filter_values` ("a,b" or a list) keeps samples whose `metadata[filter_field]`
    matches one of them, ignoring case and '_' vs ' '.
    """
    loaded = load_records(benchmark, sources, data_file=data_file, source=source,
                          downloader=downloader)  # fmt: skip
    samples = samples_from_records(benchmark, loaded, record_to_sample)
    wanted = parse_filter(filter_values)
    if filter_field and wanted:
        check_filter(filter_field, wanted, benchmark, samples)
        samples = [s for s in samples if norm_name(str(s.metadata[filter_field])) in wanted]
    if not samples:
        raise ValueError(f"{benchmark}: no samples left (source {loaded.label})")
    dataset = MemoryDataset(samples, name=f"{benchmark} ({loaded.label})", location=loaded.label)
    if shuffle:
        dataset.shuffle(seed)
    return dataset


def parse_filter(value: str | Iterable[str] | None) -> set[str] | None:
    """'a,b' or ['a', 'b'] -> {'a', 'b'} normalised (lower case, '_' -> ' ')."""
    if value is None or value == "":
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    return {norm_name(v) for v in items if v.strip()}


def norm_name(value: str) -> str:
    return " ".join(value.replace("_", " ").strip().lower().split())


def check_filter(field: str, wanted: set[str] | None, benchmark: str, samples: list[Sample]) -> None:
    """Raise a helpful error when a filter value matches nothing."""
    if wanted is None:
        return
    present = {norm_name(str((s.metadata or {}).get(field, ""))) for s in samples}
    unknown = wanted - present
    if unknown:
        raise ValueError(f"{benchmark}: unknown {field} {sorted(unknown)}; available: {sorted(present)}")
