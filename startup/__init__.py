"""Checks at start, below every other package: how a user's mistake (a bad option, pool or data
file) ends a command with one readable line (`errors`), the option checks solvers and tasks
share (`options`), and what a task says when it starts (`eval_header`)."""
