"""Checks at start, below every other package: how a user's mistake (a bad option, pool or data
file) ends a command with one readable line (`errors`), and the option checks solvers and tasks
share (`options`)."""
