"""Experiments run with the training library (`training/`): one folder each, with its command, its
results and plots, and a page (README.md) that the docs site shows; `heldout` is the held-out
protocol they share."""
