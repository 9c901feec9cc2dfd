"""What each model provider can do, declared once on the provider (a pure table; no Inspect import).

An Inspect model name is `<provider>/<model>`; `capabilities(name)` is its provider's entry, and
the one place a model name's provider is read: pools, prices, the client settings and the reports
ask it, never the name's prefix. A provider missing from `PROVIDERS` sends requests and has none
of the optional capabilities. The entries describe Inspect 0.3.285's providers (checked against
their real SDKs by tests/workers/test_api_settings.py, test_sdk_timeouts.py and test_client_secrets.py).
To add a provider, add its entry here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SdkClient:
    """How a provider builds its SDK's HTTP client (workers/provider_settings.py uses it)."""

    read_timeout: float  # seconds, when nothing sets it
    retries: int  # the SDK's own retries within one Inspect attempt, when nothing sets them
    timeout_arg: str | None = None  # the model arg that sets the read timeout
    retries_arg: str | None = None  # the model arg that sets the SDK's retries
    timeout_from_config: bool = False  # Inspect sends GenerateConfig.timeout as the SDK's timeout
    flex_timeout: float | None = None  # the read timeout under `service_tier: flex`


@dataclass(frozen=True)
class Provider:
    """One provider's capabilities."""

    name: str
    sends: bool = True  # its client sends requests (False: answers in this process, takes no header or body)
    simulated: bool = False  # made-up answers from profiles (workers/sim_provider.py): says nothing of real models
    scripted: bool = False  # fixed workflows, no model (workers/scripted_provider.py)
    placeholder: bool = False  # Inspect's model of an eval run without --model: never generates
    nested_pool: bool = False  # `conductor/<pool>`: a conductor round on another pool (conductor_model/)
    local_server: bool = False  # a server this process starts on 127.0.0.1: no key, HTTP(S)_PROXY ignored
    offline_args: frozenset[str] | None = None  # in-process: the model args that keep it offline
    grammar: bool = False  # takes a llama.cpp grammar in extra_body
    top_k: bool = True  # its requests carry GenerateConfig.top_k (False: a pool puts it in extra_body)
    headers: bool = False  # its client takes a `default_headers` model arg (a pool's extra_headers go there)
    body: bool = False  # an OpenAI-SDK client: takes an `http_client` model arg (a pool's body strings go there)
    unsent: tuple[str, ...] = ()  # GenerateConfig fields it never sends
    unsent_reason: str = ""
    sdk: SdkClient | None = None
    # what a network worker contacts (workers/endpoints.py): its default host, and the prefix of
    # Inspect's `<PREFIX>_BASE_URL` / `_API_KEY` variables (None: the provider's name), taken from
    # the model name's service part where `env_from_service` (`openai-api/<service>/<model>`)
    host: str = "the provider default host"
    env_prefix: str | None = None
    env_from_service: bool = False
    key_var: str | None = "{prefix}_API_KEY"  # the credential's variable; None: none is sent

    def env(self, model: object) -> str:
        """The prefix of the provider's environment variables for `model` (`OPENAI`, `MY_GW`)."""
        prefix = model_part(model).partition("/")[0] if self.env_from_service else self.env_prefix or self.name
        return prefix.upper().replace("-", "_")


_SIM_ARGS = frozenset({"seed", "profiles", "latency", "latency_sigma"})
_ANTHROPIC = "the API version the anthropic SDK sends (2026-10-21) removed sampling parameters: the API default applies"
_GOOGLE = "Inspect's google provider does not send seed"

PROVIDERS = {
    p.name: p
    for p in (
        Provider("openai", headers=True, body=True, host="api.openai.com",
                 sdk=SdkClient(600.0, 2, "client_timeout", "max_retries", flex_timeout=900.0)),
        Provider("openai-api", headers=True, body=True, top_k=False, env_from_service=True,
                 sdk=SdkClient(600.0, 2, "client_timeout", "max_retries")),
        Provider("anthropic", headers=True, unsent=("temperature", "top_p", "top_k"), unsent_reason=_ANTHROPIC,
                 host="api.anthropic.com", sdk=SdkClient(600.0, 2, "timeout", "max_retries")),
        # google-genai: no retries unless asked
        Provider("google", unsent=("seed",), unsent_reason=_GOOGLE, host="generativelanguage.googleapis.com",
                 sdk=SdkClient(3600.0, 0, timeout_from_config=True)),
        # other model args go to the vLLM server
        Provider("vllm", top_k=False, host="a vLLM server started on localhost",
                 sdk=SdkClient(600.0, 2, "client_timeout")),
        # no model arg reaches its client
        Provider("sglang", top_k=False, host="an SGLang server started on localhost", sdk=SdkClient(600.0, 2)),
        # llama.cpp (workers/local_provider.py, which turns the SDK's retries off itself)
        Provider("local", local_server=True, grammar=True, top_k=False, headers=True, body=True,
                 sdk=SdkClient(600.0, 0, "client_timeout")),
        Provider("sim", sends=False, simulated=True, offline_args=_SIM_ARGS),
        Provider("scripted", sends=False, scripted=True, offline_args=frozenset()),
        Provider("mockllm", sends=False, offline_args=frozenset({"custom_outputs"})),
        Provider("conductor", sends=False, nested_pool=True),
        Provider("none", sends=False, placeholder=True),
        Provider("mistral", host="api.mistral.ai"),
        Provider("groq", host="api.groq.com"),
        Provider("together", host="api.together.xyz"),
        Provider("openrouter", host="openrouter.ai"),
        Provider("grok", host="api.x.ai", env_prefix="XAI"),
        Provider("fireworks", host="api.fireworks.ai"),
        Provider("deepseek", host="api.deepseek.com"),
        Provider("perplexity", host="api.perplexity.ai"),
        Provider("ollama", host="localhost:11434", key_var=None),
        Provider("hf", host="huggingface.co (model download)", key_var="HF_TOKEN"),
        Provider("bedrock", key_var="AWS credentials"),
    )
}  # fmt: skip


def provider_name(model: object) -> str:
    """The provider part of an Inspect model name (`openai/gpt-5` -> `openai`)."""
    return str(model).split("/", 1)[0]


def capabilities(model: object) -> Provider:
    """The entry of the provider of `model` (an Inspect model name, or a Model: its name)."""
    name = provider_name(model)
    return PROVIDERS.get(name) or Provider(name)


def model_part(model: object) -> str:
    """An Inspect model name without its provider (`conductor/paper` -> `paper`)."""
    return str(model).split("/", 1)[-1]


def any_simulated(models: Iterable[object]) -> bool:
    """Whether any of `models` (names or Models) is simulated."""
    return any(capabilities(m).simulated for m in models)


def takers(capability: str) -> list[str]:
    """The providers that have `capability` (a boolean field), in table order."""
    return [p.name for p in PROVIDERS.values() if getattr(p, capability)]
