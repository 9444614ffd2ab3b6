"""`promscaler-adapter` / `python -m adapter`: wire the parts together and serve.

Exit codes: 2 for a bad flag (argparse), 1 for a bad rule file or another start-up problem
(one line naming the file or flag), 0 after SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

from aiohttp import web
from prometheus_client import CollectorRegistry

from adapter.auth.limits import LimitedAppRunner, limits_middleware
from adapter.auth.options import build_guard, client_cas_provider
from adapter.cli import PROG, AdapterOptions, parse_args
from adapter.errors import ConfigError
from adapter.prometheus import PrometheusClient
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery, DiscoveryOptions
from adapter.provider.prometheus_provider import PrometheusProvider
from adapter.provider.rules_engine import RulesEngine, load_engine
from adapter.rules.resources import ResourceResolver
from adapter.server import logs
from adapter.server.app import build_app
from adapter.server.tls import ServingTLS
from common.runtimemetrics import register_asyncio_tasks

log = logging.getLogger("adapter")


def read_rules(path: str) -> RulesEngine:
    """The rule file as an engine; ConfigError (rule index, field, problem) when it is bad."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise ConfigError(f"--config {path}: {err.strerror}") from err
    return load_engine(text, source=path)


@contextlib.asynccontextmanager
async def serving(options: AdapterOptions, engine: RulesEngine) -> AsyncIterator[web.AppRunner]:
    """Everything started in order and stopped in reverse: kube, guard, Prometheus, discovery,
    HTTPS listener."""
    from adapter.kube import KubeAuth, KubeClient, KubeObjects  # kubernetes-asyncio is heavy

    registry = CollectorRegistry()
    register_asyncio_tasks(registry, prefix="promscaler_adapter")
    async with contextlib.AsyncExitStack() as stack:
        lister_client = KubeClient(options.lister_kubeconfig)
        stack.push_async_callback(lister_client.close)
        objects = KubeObjects(lister_client)
        await objects.start()
        stack.push_async_callback(objects.close)
        auth_backend = None
        if options.auth.authorization_mode != "AlwaysAllow":
            authn = KubeClient(options.auth.authentication_kubeconfig or options.lister_kubeconfig)
            authz = KubeClient(options.auth.authorization_kubeconfig or options.lister_kubeconfig)
            stack.push_async_callback(authn.close)
            stack.push_async_callback(authz.close)
            auth_backend = KubeAuth(authentication=authn, authorization=authz)
        guard = build_guard(options.auth, kube=auth_backend)
        start = getattr(guard, "start", None)
        if start is not None:
            await start()
            stack.push_async_callback(guard.close)  # type: ignore[attr-defined]
        client = PrometheusClient(options.prometheus, registry=registry)
        stack.push_async_callback(client.close)
        discovery = Discovery(
            client,
            engine.with_resolver(objects),  # label -> resource mapping from cluster discovery
            options=DiscoveryOptions(
                interval=options.relist_interval,
                max_age=options.max_age,
                timeout=max(options.prometheus.timeout, 30.0),
            ),
            registry=registry,
        )
        provider = PrometheusProvider(
            client=client,
            discovery=discovery,
            resolver=objects,
            lister=objects,
            cache=ResultCache(ttl=options.cache_ttl, registry=registry),
            registry=registry,
        )
        tls = ServingTLS(options.tls, client_cas=client_cas_provider(guard))
        app = build_app(provider, guard=guard, registry=registry, response_ttl=options.cache_ttl)
        # oversized input is refused with a Status before authentication or routing runs
        app.middlewares.insert(0, limits_middleware())
        runner = LimitedAppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        stack.push_async_callback(runner.cleanup)
        site = web.TCPSite(
            runner, options.bind_address, options.secure_port, ssl_context=tls.context
        )
        await site.start()
        task = asyncio.create_task(discovery.run(), name="discovery")
        stack.callback(task.cancel)
        watcher = asyncio.create_task(
            _watch_rules(options, discovery, objects), name="rule-file-watch"
        )
        stack.callback(watcher.cancel)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, lambda: _reload(options, discovery, objects))
        log.info("serving on %s:%d", options.bind_address, options.secure_port)
        yield runner


RULE_FILE_POLL = 5.0  # seconds between rule file checks; ConfigMap updates take ~1 min anyway
_background: set[asyncio.Task[None]] = set()  # keeps reload passes referenced until done


def _file_stamp(path: str) -> tuple[float, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime, st.st_size)


async def _watch_rules(
    options: AdapterOptions, discovery: Discovery, resolver: ResourceResolver
) -> None:
    """Reload the rule file when it changes (a mounted ConfigMap is swapped by symlink)."""
    last = _file_stamp(options.config)
    while True:
        await asyncio.sleep(RULE_FILE_POLL)
        stamp = _file_stamp(options.config)
        if stamp is not None and stamp != last:
            last = stamp
            _reload(options, discovery, resolver)


def _reload(options: AdapterOptions, discovery: Discovery, resolver: ResourceResolver) -> None:
    """Re-read the rule file (SIGHUP or a change); a bad file keeps the running rules."""
    try:
        engine = read_rules(options.config).with_resolver(resolver)
    except ConfigError as err:
        log.error("rule reload failed, keeping the current rules: %s", err)
        return
    discovery.replace_engine(engine)
    task = asyncio.get_running_loop().create_task(discovery.run_once(now=datetime.now(UTC)))
    _background.add(task)
    task.add_done_callback(_background.discard)
    log.info("rules reloaded from %s", options.config)


async def run(options: AdapterOptions, engine: RulesEngine) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with serving(options, engine):
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    logs.configure(options.verbosity)
    try:
        engine = read_rules(options.config)
        asyncio.run(run(options, engine))
    except ConfigError as err:
        sys.stderr.write(f"{PROG}: {err}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
