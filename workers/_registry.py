"""Inspect entry point: importing this module registers the project's model provider,
sandbox type, solvers and scorers with Inspect (see `[project.entry-points.inspect_ai]`)."""

from sandboxes import inspect_bwrap  # noqa: F401
from scorers import code_scorers, inspect_scorers, rlpr  # noqa: F401
from solvers import baselines, conductor  # noqa: F401
from solvers.routers import solvers as router_solvers  # noqa: F401
from workers import conductor_provider, local_provider, scripted_provider, sim_provider  # noqa: F401
