"""Test isolation: Inspect writes traces and logs under temp dirs, never the user's home."""

import atexit
import os
import shutil
import tempfile

import pytest

_tmp = tempfile.mkdtemp(prefix="conductor-bench-tests-")
atexit.register(shutil.rmtree, _tmp, ignore_errors=True)  # this process's own dir; a nested pytest makes its own
os.environ.setdefault("XDG_DATA_HOME", os.path.join(_tmp, "xdg"))
os.environ.setdefault("INSPECT_LOG_DIR", os.path.join(_tmp, "logs"))
os.environ.setdefault("CONDUCTOR_BENCH_CACHE", os.path.join(_tmp, "cache"))
os.environ.pop("INSPECT_EVAL_MODEL", None)


@pytest.fixture(scope="session")
def runner():
    """The real bubblewrap runner for agreement tests. Skipped (with the fix) where bwrap
    cannot run, except under CI, where a missing sandbox is a failure."""
    from sandboxes.bwrap import BwrapRunner, BwrapUnavailableError, check_bwrap

    try:
        check_bwrap()
    except BwrapUnavailableError as ex:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"bubblewrap sandbox unavailable: {ex}")
    return BwrapRunner()


@pytest.fixture
def declare(monkeypatch):
    """Register benchmarks as their task files would (`register(Benchmark(...))`), for this test only."""
    from tasks import catalog

    catalog.benchmarks()  # the bundled task files first
    monkeypatch.setattr(catalog, "_REGISTERED", dict(catalog._REGISTERED))
    return catalog.register


def pytest_terminal_summary(terminalreporter):
    """The docs steps the tests did not run (tests/docs/test_docs_tutorial.py), counted, with each page's reason."""
    notes = dict.fromkeys(
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        for name, value in getattr(report, "user_properties", ())
        if name == "docs step not run"
    )
    if notes:
        terminalreporter.write_sep("-", f"{len(notes)} docs step(s) not run, as their pages say")
        for note in notes:
            terminalreporter.write_line(note)
