"""Routing across seeds (README.md): `python -m experiments.seeds <recipe> --seeds 0-7 ...`."""
