"""`nox -s tests` leaves out the tests marked slow; `nox -s tests -- --full`, the README's full test command,
runs them all, and CI runs that command."""

from __future__ import annotations

import pytest
from test_user_mistakes import ROOT, noxfile  # noqa: F401  (the fixture: noxfile.py with a stand-in nox)

FULL = "nox -s tests -- --full"


@pytest.mark.parametrize(
    ("posargs", "pytest_args"),
    [
        ([], ["-m", "not slow", "-q"]),
        (["--full"], ["-q"]),
        (["tests/startup/test_cli.py", "-x"], ["-m", "not slow", "tests/startup/test_cli.py", "-x"]),
        (["-m", "slow"], ["-m", "not slow", "-m", "slow"]),  # pytest takes the last -m
        (["-x", "--full", "-v"], ["-x", "-v"]),
    ],
)
def test_the_tests_session_leaves_out_slow_tests_unless_full(noxfile, posargs, pytest_args):  # noqa: F811
    assert noxfile.pytest_args(posargs) == pytest_args


@pytest.mark.parametrize("path", ["README.md", ".ci/run", ".github/workflows/ci.yml"])
def test_ci_runs_the_readmes_full_test_command(path):
    assert FULL in (ROOT / path).read_text()
