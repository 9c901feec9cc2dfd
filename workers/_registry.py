"""Registers the workers' model providers (local, simulated, scripted), the sandbox type and the
scorers with Inspect, and how the eval header names a team (`eval_header`); `solvers._registry`
adds the solvers, `conductor_model._registry` the rest."""

from sandboxes import inspect_bwrap  # noqa: F401
from scorers import code_scorers, inspect_scorers, rlpr  # noqa: F401
from workers import eval_header, local_provider, scripted_provider, sim_provider  # noqa: F401
