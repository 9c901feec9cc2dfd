"""An HTTP client for the OpenAI SDK that adds fields to every JSON request body it sends.

A pool's `extra_body` fields that hold a string travel here instead of in Inspect's
GenerateConfig, which the log records whole (workers/client_secrets.py). The client is Inspect's
own HTTP client for its providers (Inspect's timeouts, connection limits, proxies and event-loop
scoping, from `inspect_ai._util.http_defaults_httpx2.default_client_kwargs`: a private name, the
only one here; tests/workers/test_client_secrets.py fails if it moves), with its transports wrapped.
A field the request already has keeps the request's value, as `extra_body` merges in the SDK.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import httpx2
from openai import DefaultAsyncHttpxClient

JSON = "application/json"


class BodyFields(httpx2.AsyncBaseTransport):
    """A transport that sends each JSON object body with `fields` added."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, fields: dict[str, Any]) -> None:
        self.inner, self.fields = inner, fields

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self.inner.handle_async_request(self.with_fields(request))

    def with_fields(self, request: httpx2.Request) -> httpx2.Request:
        if not request.headers.get("content-type", "").startswith(JSON):
            return request
        body = json.loads(request.content)
        if not isinstance(body, dict):
            return request
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
        return httpx2.Request(request.method, request.url, headers=headers, json={**self.fields, **body},
                              extensions=request.extensions)  # fmt: skip

    async def aclose(self) -> None:
        await self.inner.aclose()


class BodyFieldsClient(DefaultAsyncHttpxClient):
    """The OpenAI SDK's HTTP client, its requests carrying `body_fields`."""

    def __init__(self, body_fields: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.body_fields = body_fields


def body_fields_client(fields: dict[str, Any], trust_env: bool = True) -> BodyFieldsClient:
    """One client per set of fields (and proxy setting), shared by the models that send them."""
    return _client(json.dumps(fields, sort_keys=True), trust_env)


@cache
def _client(fields_json: str, trust_env: bool) -> BodyFieldsClient:
    from inspect_ai._util.http_defaults_httpx2 import default_client_kwargs  # private: see the module docstring

    fields = json.loads(fields_json)
    kwargs = default_client_kwargs(trust_env=trust_env)
    kwargs["transport"] = BodyFields(kwargs["transport"], fields)
    kwargs["mounts"] = {url: t and BodyFields(t, fields) for url, t in kwargs.get("mounts", {}).items()}
    return BodyFieldsClient(fields, **kwargs)
