"""Hot reload of the rule file: notice a change, re-read it, switch to it, say how it went.

The file is polled (`os.stat`, which follows symlinks) rather than watched with inotify: a
mounted ConfigMap changes by swapping its `..data` symlink, which a stat of the file's path
sees as a new inode without watching the directory; polling works on every filesystem
(inotify misses changes on some network and overlay mounts) and costs a few microseconds per
check, so a half-second period serves a change within about a second with no dependency.

A reload re-reads the file, builds the clients of new or changed `backends:` entries, and
re-discovers only the seriesQuery calls whose rules changed; the running rules serve until
then. A bad file (or an unreadable backend credential) is logged and changes nothing.
`promscaler_adapter_config_last_reload_successful` and `..._success_timestamp_seconds` report
the outcome under the names Prometheus uses for its own configuration.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge

from adapter.backends import BackendPool
from adapter.errors import ConfigError
from adapter.provider.discovery import Discovery
from adapter.provider.rules_engine import RulesEngine, load_engine
from adapter.rules.resources import ResourceResolver

log = logging.getLogger(__name__)

RULE_FILE_POLL = 0.5  # seconds between checks of the rule file: a change is served within ~1 s


def read_rules(path: str) -> RulesEngine:
    """The rule file as an engine; ConfigError (rule index, field, problem) when it is bad."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise ConfigError(f"--config {path}: {err.strerror}") from err
    return load_engine(text, source=path)


def file_stamp(path: str) -> tuple[int, int, int, int] | None:
    """What changes when the file (or the symlink chain to it) changes; None when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


class ReloadMetrics:
    """`promscaler_adapter_config_last_reload_*`, Prometheus' own names with our prefix."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.successful = Gauge(
            "promscaler_adapter_config_last_reload_successful",
            "Whether the last rule file (re)load succeeded (1) or failed and kept the old rules.",
            registry=registry,
        )
        self.timestamp = Gauge(
            "promscaler_adapter_config_last_reload_success_timestamp_seconds",
            "When the rule file was last loaded successfully (unix seconds).",
            registry=registry,
        )


class RuleReloader:
    """Applies the rule file at `path` to discovery and the backend clients."""

    def __init__(
        self,
        path: str,
        *,
        discovery: Discovery,
        backends: BackendPool,
        resolver: ResourceResolver,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] = time.time,
        on_reload: Sequence[Callable[[RulesEngine], None]] = (),
    ) -> None:
        self._path = path
        self._discovery = discovery
        self._backends = backends
        self._resolver = resolver
        self._clock = clock
        self._on_reload = tuple(on_reload)  # other users of the rules (metrics.k8s.io)
        self._stamp = file_stamp(path)
        self._tasks: set[asyncio.Task[object]] = set()  # reloads and re-discovery passes
        self._lock = asyncio.Lock()  # one reload at a time, so the newest file wins
        self.metrics = ReloadMetrics(registry)
        self.metrics.successful.set(1)  # the program started with this file, so it loaded
        self.metrics.timestamp.set(clock())

    def request_reload(self) -> None:
        """Reload in the background (the SIGHUP handler)."""
        self._keep(self.reload())

    async def reload(self) -> bool:
        """Re-read the file now (SIGHUP, or a change seen by `watch`); False when it was bad
        and the running rules stay. Parsing runs in a thread: compiling a few hundred rules'
        regexes and templates takes about a second on a busy machine, which would otherwise
        stall every request for that long."""
        async with self._lock:
            try:
                engine = await asyncio.to_thread(read_rules, self._path)
                engine = engine.with_resolver(self._resolver)
                self._backends.apply(engine.config.backends)
            except ConfigError as err:
                self.metrics.successful.set(0)
                log.error("rule reload failed, keeping the current rules: %s", err)
                return False
            changed = self._discovery.replace_engine(engine)
            for listener in self._on_reload:
                listener(engine)
        self.metrics.successful.set(1)
        self.metrics.timestamp.set(self._clock())
        self._keep(self._discovery.run_once(now=datetime.now(UTC), only=changed))
        log.info(
            "rules reloaded from %s: %d of %d seriesQuery calls to re-discover",
            self._path,
            len(changed),
            len(engine.series_calls),
        )
        return True

    def _keep(self, work: Coroutine[None, None, object]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def watch(self, *, poll: float = RULE_FILE_POLL) -> None:
        """Reload whenever the file's stamp changes; cancel the task to stop."""
        while True:
            await asyncio.sleep(poll)
            stamp = file_stamp(self._path)
            if stamp is not None and stamp != self._stamp:
                self._stamp = stamp
                await self.reload()

    async def settled(self) -> None:
        """Wait for the reloads and re-discovery passes started so far."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
