"""Registers the project's solvers (the conductor, the baselines, the routers) with Inspect, and
what they run on (`workers._registry`)."""

import workers._registry  # noqa: F401
from solvers import baselines, conductor  # noqa: F401
from solvers.routers import solvers as router_solvers  # noqa: F401
