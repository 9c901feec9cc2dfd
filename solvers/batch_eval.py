"""Inspect options for the project's own `eval()` runs that nobody watches live (regression
suite, held-out experiments, benchmarks).

`log_realtime=False`: events are not written to the live sqlite buffer as they happen, so
`inspect view` shows a sample once it is flushed to the log (every `log_buffer` samples, 10 by
default), not while it runs; the harness spends about a third less CPU per sample at API
latency (docs/benchmarks.md, `benchmarks/bench_api_latency.py`). A person who wants to watch
an `inspect eval` run keeps Inspect's default; at high concurrency pass `--no-log-realtime`.
"""

UNWATCHED = {"display": "none", "log_realtime": False}
