"""The cost-weight sweep (README.md): `python -m experiments.cost_sweep <recipe> --weights ...`."""
