"""Tests live by package: a module's tests are in tests/<its package>/ (docs/index.md, "Layout"),
each file's name unique, each folder on pytest's import path (tests import each other by basename)."""

import tomllib
from collections import Counter

from test_layers import LAYERS, ROOT

TESTS = ROOT / "tests"
OTHER_FOLDERS = {"docs", "project"}  # the docs pages' tests; the layout's and the noxfile's


def test_every_test_file_is_in_a_package_folder():
    folders = {path.parent.relative_to(TESTS).as_posix() for path in TESTS.rglob("test_*.py")}
    assert folders - set(LAYERS) - OTHER_FOLDERS == set(), "put a test file in tests/<the package it tests>/"


def test_test_file_names_are_unique_across_folders():
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []


def test_every_test_folder_is_on_pytests_path():
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    folders = {path.parent.relative_to(ROOT).as_posix() for path in TESTS.rglob("test_*.py")}
    assert folders - set(settings["pythonpath"]) == set()
    assert settings["pythonpath"][:2] == [".", "tests"], "the packages first, then the helpers"
