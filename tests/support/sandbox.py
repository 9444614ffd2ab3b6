"""pytest fixtures for the sandbox API server (registered by the root conftest.py).

- `sandbox`: a fresh, running `Sandbox` per test (about 20 ms to start), pods Ready after 0.1 s.
- `kube_client`: a kubernetes-asyncio `ApiClient` for it, as the admin user.
- `sandbox_factory`: start sandboxes with your own `SandboxConfig` fields.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from kubernetes_asyncio import client, config

from sandbox import Sandbox, SandboxConfig


@pytest.fixture
async def sandbox_factory() -> AsyncIterator[Callable[..., Awaitable[Sandbox]]]:
    started: list[Sandbox] = []

    async def start(**fields: Any) -> Sandbox:
        fields.setdefault("pod_ready_delay", 0.1)
        sb = Sandbox(SandboxConfig(**fields))
        await sb.start()
        started.append(sb)
        return sb

    yield start
    for sb in reversed(started):
        await sb.stop()


@pytest.fixture
async def sandbox(sandbox_factory: Callable[..., Awaitable[Sandbox]]) -> Sandbox:
    return await sandbox_factory()


async def api_client_for(sb: Sandbox) -> client.ApiClient:
    """A kubernetes-asyncio ApiClient configured from the sandbox's kubeconfig."""
    configuration = client.Configuration()
    await config.load_kube_config(
        config_file=str(sb.kubeconfig), client_configuration=configuration
    )
    return client.ApiClient(configuration=configuration)


@pytest.fixture
async def kube_client(sandbox: Sandbox) -> AsyncIterator[client.ApiClient]:
    api = await api_client_for(sandbox)
    try:
        yield api
    finally:
        await api.close()


class SandboxHttp:
    """Raw HTTPS requests to a sandbox, for what typed clients cannot express (bad input...)."""

    def __init__(self, sb: Sandbox, token: str | None = None) -> None:
        import ssl

        import aiohttp

        self.sb = sb
        self.token = sb.admin_token if token is None else token
        ctx = ssl.create_default_context(cafile=str(sb.ca_file))
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx))

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        data: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        import json as jsonlib

        hdrs = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        hdrs.update(headers or {})
        if json is not None:
            data = jsonlib.dumps(json)
            hdrs.setdefault("Content-Type", "application/json")
        async with self.session.request(
            method, self.sb.url + path, data=data, headers=hdrs
        ) as resp:
            text = await resp.text()
            try:
                return resp.status, jsonlib.loads(text)
            except ValueError:
                return resp.status, text

    async def close(self) -> None:
        await self.session.close()


@pytest.fixture
async def sandbox_http(sandbox: Sandbox) -> AsyncIterator[SandboxHttp]:
    http = SandboxHttp(sandbox)
    try:
        yield http
    finally:
        await http.close()
