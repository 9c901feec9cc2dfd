"""Collecting the suite stays cheap and leaves nothing behind: none of the `HEAVY` libraries is
imported while the suite is collected (the tests that use them import them; README: "Set-up"), and
the temp dir tests/conftest.py makes is gone when pytest exits.

One `pytest --collect-only` of the whole suite in a subprocess: what it imported is read, not timed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_layers import ROOT

# each takes 0.4 s (openai, google-genai) to seconds (torch) of CPU to import; matplotlib (0.5 s) is left
# in: tests/scorers/test_bcb_figures.py parametrizes with matplotlib objects
HEAVY = ("anthropic", "google.genai", "openai", "scipy", "torch", "transformers", "trl")
COLLECT = f"""
import json, sys
import pytest
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"])
print(json.dumps({{
    "code": int(code),
    "heavy": sorted(m for m in {HEAVY!r} if m in sys.modules),
    "tmp": sys.modules["conftest"]._tmp,
}}))
"""


@pytest.fixture(scope="module")
def collected() -> dict:
    """The collecting subprocess's exit code, the heavy modules it imported and its temp dir."""
    done = subprocess.run([sys.executable, "-c", COLLECT], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_collecting_the_suite_imports_no_heavy_library(collected):
    assert collected["code"] == 0
    assert collected["heavy"] == [], "import these inside the tests (or fixtures) that use them"


@pytest.mark.slow
def test_the_tests_temp_dir_is_removed_when_pytest_exits(collected):
    assert Path(collected["tmp"]).name.startswith("conductor-bench-tests-")
    assert not Path(collected["tmp"]).exists()
