"""The provider registry (workers/providers.py): each provider's capabilities declared once, and no
module outside it that reads a model name's provider from its prefix."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from workers.client_secrets import route_secrets, unroutable
from workers.pools import ModelSpec, PoolSpec
from workers.provider_settings import effective_config, sdk_client
from workers.providers import PROVIDERS, Provider, any_simulated, capabilities, model_part, takers

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "workers" / "providers.py"


def test_a_model_name_finds_its_providers_entry():
    assert capabilities("local/smollm2-135m").grammar and not capabilities("openai/gpt-5").grammar
    assert not capabilities("vllm/Qwen/Qwen3-8B").top_k and capabilities("openai/gpt-5").top_k
    assert capabilities("sim/premium").simulated and not capabilities("sim/premium").sends
    assert capabilities("none/none").placeholder and capabilities("conductor/paper").nested_pool
    assert model_part("conductor/paper") == "paper" and model_part("openai-api/gw/m") == "gw/m"


def test_an_unknown_provider_sends_and_has_no_optional_capability():
    assert capabilities("newprovider/m") == Provider("newprovider")
    assert capabilities("newprovider/m").sends and capabilities("newprovider/m").sdk is None


def test_the_capabilities_steer_the_modules_that_ask_for_them(monkeypatch):
    """A provider given a capability in the table is treated so everywhere: here a made-up one."""
    made_up = Provider("madeup", headers=True, body=True, top_k=False)
    monkeypatch.setitem(PROVIDERS, "madeup", made_up)
    config = {"extra_headers": {"X-Key": "k"}, "top_k": 5}
    assert unroutable("madeup/m", config) is None and unroutable("other/m", config) == "extra_headers"
    kept, args = route_secrets("madeup/m", config, {})
    assert "extra_headers" not in kept and args["default_headers"] == {"X-Key": "k"}
    assert "madeup" in takers("headers") and "madeup" in takers("body")
    # the settings-drop table is built at import: the registry's own top_k entries are in it
    assert "top_k" not in effective_config("local/m", {"top_k": 5}) and sdk_client("local/m") is PROVIDERS["local"].sdk


def test_simulated_pools_and_models():
    sim, real = ModelSpec("sim/premium"), ModelSpec("openai/gpt-5")
    assert PoolSpec("p", (real, sim)).simulated and not PoolSpec("p", (real,)).simulated
    assert any_simulated(["openai/gpt-5", "sim/mediocre"]) and not any_simulated(["local/m"])


def _known_prefixes() -> tuple[str, ...]:
    return tuple(f"{name}/" for name in PROVIDERS)


def prefix_tests(path: Path) -> list[int]:
    """The lines where `path` tests a string against a provider's prefix (`x.startswith("sim/")`,
    `x.removeprefix("conductor/")`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("startswith", "removeprefix") and node.args:
                literals = [a.value for a in ast.walk(node.args[0]) if isinstance(a, ast.Constant)]
                if any(isinstance(v, str) and v.startswith(_known_prefixes()) for v in literals):
                    found.append(node.lineno)
    return found


def test_a_prefix_test_is_found(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text('a = "x".startswith("sim/")\nb = "x".startswith(("local/", "y"))\nc = "x".startswith("a/")\n')
    assert prefix_tests(bad) == [1, 2]


@pytest.mark.parametrize("folder", sorted({p.parent.name for p in ROOT.glob("*/*.py")} - {"tests"}) + ["noxfile.py"])
def test_no_module_reads_a_provider_from_a_name_prefix(folder):
    found = (ROOT / folder).rglob("*.py") if (ROOT / folder).is_dir() else [ROOT / folder]
    files = [p for p in sorted(found) if p != REGISTRY]
    assert [f"{path.relative_to(ROOT)}:{line}" for path in files for line in prefix_tests(path)] == []
