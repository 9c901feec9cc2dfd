"""Imports point only downward: a package imports itself and the layers below it, never one above.

The layer order is written once, here (and shown on the docs home page, "Layout"); a module that imports
upward fails with the import named, so a new arrow is a decision, not an accident. The engine
(`solvers.conducting`) is imported from outside only by the names its `__all__` lists, and imports no solver."""

from __future__ import annotations

import ast
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

import solvers.conducting

ROOT = Path(__file__).resolve().parents[2]
# bottom to top; a package may import any package at its own index or below
LAYERS = [
    "startup",  # how a user's mistake ends a command; option checks shared by tasks and solvers
    "sandboxes",  # the code sandbox
    "scorers",  # pure answer checks and the sandboxed code graders
    "tasks",  # benchmarks: data sources, samples, the scorer each uses
    "workers",  # pools, prices and model providers of workers
    "solvers",  # the workflow language, the executor, the conductor solver and the baselines
    "conductor_model",  # the conductor as an Inspect model and an OpenAI endpoint; the Inspect entry point
    "reports",  # tables and plots from logs
    "training",  # GRPO on the real executor
    "regression",  # the CI gate
    "experiments",  # experiments run with training/: commands, results, plots
    "benchmarks",  # performance tables
]
ENGINE = "solvers.conducting"  # a conductor round apart from Inspect's solver API
SOLVER_GLUE = ("inspect_ai.solver", "solvers.conductor", "solvers.baselines", "solvers.routers")


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in a file, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def upward(package: str) -> list[str]:
    rank = LAYERS.index(package)
    return [
        f"{path.relative_to(ROOT)}:{line} imports {target} (layer {LAYERS.index(target)}) from layer {rank}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, target in imports(path)
        if target in LAYERS and LAYERS.index(target) > rank
    ]


def test_every_top_level_package_has_a_layer():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} | {"benchmarks"}
    assert packages - {"tests"} <= set(LAYERS), "add the new package to LAYERS, in its place"


def test_every_package_is_installed():
    """An editable install maps only the packages `pyproject.toml` includes: a new one left out
    imports in the checkout and nowhere else."""
    included = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert {p for p in packages if not any(fnmatch(p, pattern) for pattern in included)} == set()


def test_an_upward_import_is_found(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("import os\nfrom reports.tables import x\n\ndef f():\n    import training.train\n")
    assert imports(bad) == [(1, "os"), (2, "reports"), (5, "training")]


@pytest.mark.parametrize("package", LAYERS)
def test_imports_point_only_downward(package):
    assert upward(package) == []


def engine_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None for `import module`) of every import of the engine or its modules in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names if alias.name.startswith(ENGINE)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(ENGINE):
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
    return found


def internal(module: str, name: str | None) -> bool:
    """An import of one of the engine's modules, or of a name its `__all__` does not list."""
    return module != ENGINE or (name is not None and name not in solvers.conducting.__all__)


def outside_engine() -> list[Path]:
    engine = ROOT.joinpath(*ENGINE.split("."))
    files = [p for package in [*LAYERS, "tests"] for p in (ROOT / package).rglob("*.py")]
    return sorted(p for p in files if engine not in p.parents)


def test_an_import_of_the_engines_internals_is_found(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text(f"from {ENGINE} import conduct, _x\nfrom {ENGINE}.rounds import conduct\nimport {ENGINE}.records\n")
    found = [(line, module, name) for line, module, name in engine_imports(bad) if internal(module, name)]
    assert found == [(1, ENGINE, "_x"), (2, f"{ENGINE}.rounds", "conduct"), (3, f"{ENGINE}.records", None)]


def test_the_engine_is_imported_only_by_its_public_names():
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module} {name or ''}"
        for path in outside_engine()
        for line, module, name in engine_imports(path)
        if internal(module, name)
    ]
    assert found == []
    assert all(hasattr(solvers.conducting, name) for name in solvers.conducting.__all__)


def test_the_engine_imports_no_solver():
    """The engine runs without Inspect's solver API: the solvers wrap it, never the reverse."""
    engine = ROOT.joinpath(*ENGINE.split("."))
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno} imports {module}"
        for path in sorted(engine.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for module in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
        if module.startswith(SOLVER_GLUE)
    ]
    assert found == []
