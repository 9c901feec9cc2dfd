"""Inspect entry point: importing this module registers the project's model providers (the
conductor as a model included), sandbox type, solvers and scorers with Inspect (see
`[project.entry-points.inspect_ai]`)."""

import solvers._registry  # noqa: F401
from conductor_model import provider  # noqa: F401
