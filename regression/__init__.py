"""The regression gate (`nox -s regression`): a deterministic offline eval compared with a
committed baseline (regression/baseline.json). Pure comparison in `compare`, the suite and its
Inspect glue in `suite`, the command line in `__main__`."""
