"""The engine: a conductor round (write a workflow, run it on the workers, recurse, pick the answer)
apart from Inspect's solver API. The `conductor` solver, the conductor-as-a-model, training and the
credit report import it from here, by the names below; its modules are its internals."""

from solvers.conducting.records import round_secrets, summary, workflow_markdown
from solvers.conducting.rounds import (
    CONDUCTOR_ERROR,
    Budget,
    answer_constraint_for,
    conduct,
    conductor_messages,
    continue_round,
    fixed_subtasks,
    run_completion,
)
from solvers.conducting.settings import REASONING_CHARS, Settings, check_generation, check_settings

__all__ = [
    "CONDUCTOR_ERROR",
    "REASONING_CHARS",
    "Budget",
    "Settings",
    "answer_constraint_for",
    "check_generation",
    "check_settings",
    "conduct",
    "conductor_messages",
    "continue_round",
    "fixed_subtasks",
    "round_secrets",
    "run_completion",
    "summary",
    "workflow_markdown",
]
