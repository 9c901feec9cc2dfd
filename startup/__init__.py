"""Checks at start, below every other package: how a user's mistake (a bad option, pool or data
file) ends a command with one readable line (`errors`), the option checks solvers and tasks
share (`options`), the `inspect eval` options Inspect would replace (`inspect_command`, reading the
command line with `command_line`), and what
a task says when it starts (`eval_header`)."""
