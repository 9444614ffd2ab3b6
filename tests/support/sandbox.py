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
    await config.load_kube_config(config_file=str(sb.kubeconfig), client_configuration=configuration)
    return client.ApiClient(configuration=configuration)


@pytest.fixture
async def kube_client(sandbox: Sandbox) -> AsyncIterator[client.ApiClient]:
    api = await api_client_for(sandbox)
    try:
        yield api
    finally:
        await api.close()
