"""Optional libraries in tests, not imported while the suite is collected: torch, transformers
and TRL take seconds to import, the API SDKs (openai, anthropic, google-genai) 0.4-1.2 s each,
which a module-level `pytest.importorskip` or `import torch` spends even when no test of the
module runs (tests/project/test_collection.py checks)."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import pytest


def needs(*modules: str, extra: str = "train") -> pytest.MarkDecorator:
    """A skip mark (`pytestmark = needs("trl")`) unless every module is installed, found without
    importing it (a dotted name imports only its parents); `extra` is the one that installs them."""
    missing = [m for m in modules if not _found(m)]
    return pytest.mark.skipif(bool(missing), reason=f'{", ".join(missing)} missing: pip install -e ".[{extra}]"')


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a missing parent package
        return False


class Deferred:
    """A module imported at its first use: `torch = Deferred("torch")` at a test module's top
    costs nothing while collecting. Read-only: monkeypatch the module by its dotted name. The
    names pytest probes every module global for while it collects (dunders such as `__wrapped__`,
    and `_mock_name`) are answered as absent, without the import."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr == "_mock_name":
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)
