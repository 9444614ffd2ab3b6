"""One Prometheus client per backend: the default one from the `--prometheus-*` flags, the
others from the rule file's `backends:` (`adapter.rules.backends`).

Each backend has its own client, connection pool, timeout and credentials, so a backend that
hangs or refuses connections only slows the requests and discovery calls of its own rules.
A reload (`apply`) keeps the client of every backend whose settings did not change, builds
the new ones first (a bad setting fails the reload and changes nothing), and closes retired
clients once the calls they may still carry are over.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from prometheus_client import CollectorRegistry

from adapter.errors import ConfigError, PrometheusUnavailable
from adapter.prometheus import PrometheusClient, PrometheusMetrics, PrometheusOptions
from adapter.rules.backends import DEFAULT_BACKEND, Backend

log = logging.getLogger(__name__)

RETIRE_GRACE = 60.0  # seconds a replaced client stays open: longer than any call's time limit


def backend_options(backend: Backend, *, defaults: PrometheusOptions) -> PrometheusOptions:
    """The client options of a `backends:` entry; the verb and (unless set) the timeout come
    from the flags. Files are read here: ConfigError names the field, never a secret."""
    basic = None
    if backend.basic_auth is not None:
        password = backend.basic_auth.password
        if backend.basic_auth.password_file:
            password = _read(backend.basic_auth.password_file, f"{backend.where}.basicAuth")
        basic = (backend.basic_auth.username, password)
    if backend.bearer_token_file:
        _read(backend.bearer_token_file, f"{backend.where}.bearerTokenFile")  # fail the load now
    tls = backend.tls
    return PrometheusOptions(
        url=backend.url,
        verb=defaults.verb,
        timeout=backend.timeout or defaults.timeout,
        token_file=backend.bearer_token_file or None,
        ca_file=tls.ca_file or None,
        client_cert_file=tls.cert_file or None,
        client_key_file=tls.key_file or None,
        headers=dict(backend.headers),
        insecure_skip_verify=tls.insecure_skip_verify,
        basic_auth=basic,
        query_parameters=dict(backend.query_parameters),
        compression=backend.compression or defaults.compression,
        warnings=backend.warnings or defaults.warnings,
    )


def _read(path: str, where: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError as err:
        # the path is configuration, not a secret; the content never appears
        raise ConfigError(f"{where}: cannot read {path}: {err.strerror}") from err


class BackendPool:
    """Clients by backend name. Create inside the running event loop; `await close()` at the
    end. Implements `adapter.provider.engine.Backends`."""

    def __init__(self, default: PrometheusOptions, *, registry: CollectorRegistry | None) -> None:
        self._defaults = default
        self._metrics = PrometheusMetrics(registry)
        self._clients: dict[str, PrometheusClient] = {
            DEFAULT_BACKEND: PrometheusClient(
                default, backend=DEFAULT_BACKEND, metrics=self._metrics
            )
        }
        self._settings: Mapping[str, Backend] = MappingProxyType({})
        self._retiring: dict[asyncio.Task[None], PrometheusClient] = {}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._clients)

    def client(self, name: str) -> PrometheusClient:
        """The client of backend `name`. A backend a reload removed stays reachable until its
        client retires, for queries the previous rules still plan until re-discovery ends."""
        client = self._clients.get(name)
        if client is None:
            retired = [c for c in self._retiring.values() if c.backend == name]
            if not retired:  # cannot happen while the planner and the pool agree; 503, not 500
                raise PrometheusUnavailable(f"unable to fetch metrics: no backend {name!r}")
            client = retired[-1]
        return client

    def apply(self, backends: Mapping[str, Backend]) -> None:
        """Switch to a rule file's `backends:`; ConfigError (and nothing changed) when one of
        them cannot be built."""
        fresh = {
            name: self._build(backend)
            for name, backend in backends.items()
            if self._settings.get(name) != backend
        }
        retired = [
            client
            for name, client in self._clients.items()
            if name != DEFAULT_BACKEND and (name in fresh or name not in backends)
        ]
        kept = {n: c for n, c in self._clients.items() if n == DEFAULT_BACKEND or n in backends}
        self._clients = {**kept, **fresh}
        self._settings = MappingProxyType(dict(backends))
        for client in retired:
            self._retire(client)
        if fresh or retired:
            log.info("backends: %s", ", ".join(self._clients))

    def _build(self, backend: Backend) -> PrometheusClient:
        options = backend_options(backend, defaults=self._defaults)
        try:
            return PrometheusClient(options, backend=backend.name, metrics=self._metrics)
        except ConfigError as err:
            raise ConfigError(f"{backend.where}.tls: {err}") from err

    def _retire(self, client: PrometheusClient) -> None:
        async def later() -> None:
            await asyncio.sleep(RETIRE_GRACE)
            await client.close()

        task = asyncio.get_running_loop().create_task(later())
        self._retiring[task] = client
        task.add_done_callback(lambda done: self._retiring.pop(done, None))

    async def close(self) -> None:
        retiring = dict(self._retiring)
        for task in retiring:
            task.cancel()
        await asyncio.gather(*retiring, return_exceptions=True)
        for client in [*retiring.values(), *self._clients.values()]:
            await client.close()  # closing twice is harmless
