"""`promscaler-adapter` / `python -m adapter`: wire the parts together and serve.

Exit codes: 2 for a bad flag (argparse), 1 for a bad rule file or another start-up problem
(one line naming the file or flag), 0 after SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import AsyncIterator

from aiohttp import web
from prometheus_client import CollectorRegistry

from adapter import eventloop
from adapter.auth.limits import LimitedAppRunner, limits_middleware
from adapter.auth.options import build_guard, client_cas_provider
from adapter.backends import BackendPool
from adapter.cli import PROG, AdapterOptions, parse_args
from adapter.errors import ConfigError
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery, DiscoveryOptions
from adapter.provider.history import RangeHistory
from adapter.provider.prometheus_provider import PrometheusProvider
from adapter.provider.resource_provider import ResourceMetricsProvider
from adapter.provider.rules_engine import RulesEngine
from adapter.reload import RuleReloader, read_rules
from adapter.server import logs
from adapter.server.app import build_app
from adapter.server.tls import ServingTLS
from common import gctune
from common.runtimemetrics import register_build_info, register_runtime

log = logging.getLogger("adapter")


@contextlib.asynccontextmanager
async def serving(options: AdapterOptions, engine: RulesEngine) -> AsyncIterator[web.AppRunner]:
    """Everything started in order and stopped in reverse: kube, guard, Prometheus, discovery,
    HTTPS listener."""
    from adapter.kube import KubeClient, KubeObjects  # kubernetes-asyncio is heavy
    from adapter.kubeauth import KubeAuth

    registry = CollectorRegistry()
    register_runtime(registry, prefix="promscaler_adapter")
    register_build_info(registry, prefix="promscaler_adapter")
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
        backends = BackendPool(options.prometheus, registry=registry)
        stack.push_async_callback(backends.close)
        backends.apply(engine.config.backends)  # a bad backend credential stops start-up
        discovery = Discovery(
            backends,
            engine.with_resolver(objects),  # label -> resource mapping from cluster discovery
            options=DiscoveryOptions(
                interval=options.relist_interval,
                max_age=options.max_age,
                timeout=max(options.prometheus.timeout, 30.0),
            ),
            registry=registry,
        )
        cache: ResultCache[object] = ResultCache(ttl=options.cache_ttl, registry=registry)
        provider = PrometheusProvider(
            backends=backends,
            discovery=discovery,
            resolver=objects,
            lister=objects,
            cache=cache,
            registry=registry,
            batch_window=options.batch_window,
            external_window=options.external_batch_window,
        )
        resources = ResourceMetricsProvider(
            rules=engine.config.resource_rules,
            backends=backends,
            lister=objects,
            resolver=objects,
            cache=cache,  # one cache: coalescing and --cache-ttl apply to both APIs
            registry=registry,
        )
        tls = ServingTLS(options.tls, client_cas=client_cas_provider(guard))
        app = build_app(
            provider,
            guard=guard,
            registry=registry,
            response_ttl=options.cache_ttl,
            resource_provider=resources,
            history=RangeHistory(backends=backends, discovery=discovery, pods=objects),
        )
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
        reloader = RuleReloader(
            options.config,
            discovery=discovery,
            backends=backends,
            resolver=objects,
            registry=registry,
            # metrics.k8s.io follows the file too
            on_reload=(lambda fresh: resources.replace_rules(fresh.config.resource_rules),),
        )
        stack.push_async_callback(reloader.close)
        watcher = asyncio.create_task(reloader.watch(), name="rule-file-watch")
        stack.callback(watcher.cancel)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, reloader.request_reload)
        log.info("serving on %s:%d", options.bind_address, options.secure_port)
        yield runner


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
        gctune.apply(options.gc_threshold)
        eventloop.run(run(options, engine), loop=options.event_loop)
    except ConfigError as err:
        sys.stderr.write(f"{PROG}: {err}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
