"""Following `kube-system/extension-apiserver-authentication` so CA rotations need no restart."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Protocol

from adapter.auth.authn import TokenReviewer
from adapter.auth.authn_config import DynamicAuthnConfig
from adapter.auth.authz import AccessReviewer
from adapter.errors import ConfigError

log = logging.getLogger(__name__)


class ConfigMapSource(Protocol):
    """Reads one ConfigMap and tells of its changes."""

    def watch_configmap(self, namespace: str, name: str) -> AsyncIterator[Mapping[str, str] | None]:
        """Yield the ConfigMap's `data` now, then after every change (None while it is absent).

        Reconnects by itself (relisting when the watch expires) and runs until cancelled.
        """
        ...


class AuthBackend(TokenReviewer, AccessReviewer, ConfigMapSource, Protocol):
    """Everything delegated authentication and authorization need from the cluster."""


class ConfigMapFollower:
    """Feeds a ConfigMap's content into a `DynamicAuthnConfig` for as long as it runs."""

    def __init__(
        self,
        source: ConfigMapSource,
        config: DynamicAuthnConfig,
        *,
        namespace: str,
        name: str,
        tolerate_failure: bool,  # --authentication-tolerate-lookup-failure
        first_sync_timeout: float = 10.0,  # seconds start() waits for the first read
    ) -> None:
        self._source = source
        self._config = config
        self._namespace = namespace
        self._name = name
        self._tolerate = tolerate_failure
        self._timeout = first_sync_timeout
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start following; wait (bounded) for the first read so early requests are judged right.

        Raises ConfigError if the ConfigMap cannot be read in time, unless tolerating failure.
        """
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"follow-{self._name}")
        try:
            await asyncio.wait_for(self._synced.wait(), self._timeout)
        except TimeoutError as exc:
            where = f"{self._namespace}/{self._name}"
            if not self._tolerate:
                await self.stop()
                raise ConfigError(
                    f"cannot read ConfigMap {where} (use --authentication-skip-lookup or "
                    "--authentication-tolerate-lookup-failure)"
                ) from exc
            log.warning("cannot read ConfigMap %s yet; front-proxy requests are refused", where)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            try:
                async for data in self._source.watch_configmap(self._namespace, self._name):
                    self._config.update_from_configmap(data)
                    self._synced.set()
            except Exception:  # the source retries by itself; this is the last line of defence
                log.exception("following ConfigMap %s/%s failed", self._namespace, self._name)
            await asyncio.sleep(1.0)  # do not spin if the source ends or fails at once
