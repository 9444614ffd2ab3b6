"""Raw JSON requests and watch streams over kubernetes-asyncio's `ApiClient`.

kubernetes-asyncio has no typed client for the metrics APIs, Scale of arbitrary resources or our
own CRD, so everything here is plain JSON. The library still owns configuration, TLS and auth
(kubeconfig or in-cluster: its `update_params_for_auth` adds the bearer token, refreshed by its
own hook, and its REST client's aiohttp session, with the client certificate and CA, sends),
and we own the JSON, the timeouts and the mapping of failures to `KubeError`. Requests go
straight to that session rather than through `call_api`, whose generic header, parameter and
body handling was about 8% of the controller's CPU at 10,000 Autoscalers when profiled.
When no proxy is configured, requests that are not watches go over `common.http1` instead, a
lean keep-alive client with the same TLS settings (see `_direct_origin`); watches stream
through the library's session.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import ssl
import urllib.request
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlencode

import aiohttp
import orjson
from kubernetes_asyncio import client as kclient
from kubernetes_asyncio import config as kconfig
from yarl import URL

from common.http1 import HttpError, Origin

__all__ = ["Conflict", "Gone", "KubeClient", "KubeError", "KubeUnavailable", "NotFound", "connect"]

JSON = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"


class KubeError(Exception):
    """The API server answered with an error Status, or could not be reached (status 0)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message


class NotFound(KubeError):
    """404: the object, the resource or the metric does not exist."""


class Conflict(KubeError):
    """409: a write lost an optimistic-concurrency race (resourceVersion) or the name exists."""


class Gone(KubeError):
    """410: a watch's resourceVersion is too old; relist."""


class KubeUnavailable(KubeError):
    """The API server could not be reached or did not answer in time."""


_BY_STATUS: dict[int, type[KubeError]] = {404: NotFound, 409: Conflict, 410: Gone}


def error_from(status: int, body: bytes) -> KubeError:
    """Map an error response (a metav1.Status, or anything else) to a `KubeError`."""
    reason, message = "", body.decode("utf-8", "replace")[:500]
    try:
        doc = json.loads(body)
        if isinstance(doc, dict):
            reason = str(doc.get("reason", ""))
            message = str(doc.get("message", message))
    except ValueError:
        pass  # not JSON (a proxy's HTML page, say): keep the raw text
    return _BY_STATUS.get(status, KubeError)(status, reason or f"HTTP{status}", message)


def _unavailable(what: str, e: BaseException) -> KubeUnavailable:
    return KubeUnavailable(0, "Unavailable", f"{what}: {e or type(e).__name__}")


class KubeClient:
    """JSON in, JSON out; every failure is a `KubeError`.

    `timeout` (seconds) bounds each non-watch request so one hung call never stalls a worker.
    """

    def __init__(self, api: Any, *, timeout: float = 10.0) -> None:
        self._api = api
        self.timeout = timeout
        self._origin = _direct_origin(api)  # None: every request through the library's session

    async def close(self) -> None:
        if self._origin is not None:
            await self._origin.close()
        await self._api.close()

    def set_user_agent(self, agent: str) -> None:
        """How the API server's audit log names this client (client-go sends one too)."""
        self._api.user_agent = agent

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = "application/json",
        request_timeout: float | None = None,
    ) -> JSON:
        if self._origin is not None:
            status, data = await self._send_direct(
                self._origin, method, path, query, body, content_type, request_timeout
            )
            return _document(status, data, path)
        resp = await self._send(
            method, path, query, body, content_type, request_timeout or self.timeout
        )
        try:
            data = await resp.read()
        except (aiohttp.ClientError, TimeoutError) as e:
            raise KubeUnavailable(
                0, "Unavailable", f"{method} {path}: {e or type(e).__name__}"
            ) from e
        finally:
            resp.release()
        return _document(resp.status, data, path)

    async def watch(
        self, path: str, *, query: Sequence[tuple[str, str]] = (), timeout_seconds: int = 300
    ) -> AsyncIterator[JSON]:
        """Yield watch events ({"type", "object"}) until the server ends the stream."""
        params = [*query, ("watch", "true"), ("timeoutSeconds", str(timeout_seconds))]
        params.append(("allowWatchBookmarks", "true"))
        resp = await self._send("GET", path, params, None, "application/json", None)
        try:
            if not 200 <= resp.status < 300:
                raise error_from(resp.status, await resp.read())
            buf = b""
            async for chunk in resp.content.iter_any():
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield orjson.loads(line)
        except (aiohttp.ClientError, TimeoutError) as e:
            raise _unavailable(f"watch {path}", e) from e
        finally:
            resp.release()

    async def _prepare(
        self, path: str, query: Sequence[tuple[str, str]], body: Any, content_type: str
    ) -> tuple[dict[str, str], str, bytes | None]:
        """The request's headers (with the library's auth added: a bearer token, refreshed by
        its hook), its target (path and query string, already encoded) and its body."""
        api = self._api
        headers = {"Accept": "application/json", "Content-Type": content_type}
        headers.update(api.default_headers)  # User-Agent
        if api.cookie:
            headers["Cookie"] = api.cookie
        params = list(query)
        await api.update_params_for_auth(headers, params, ["BearerToken"])
        target = f"{path}?{urlencode(params)}" if params else path
        data = body if body is None or isinstance(body, bytes) else _dumps(body)
        return headers, target, data

    async def _send_direct(
        self,
        origin: Origin,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        body: Any,
        content_type: str,
        request_timeout: float | None,
    ) -> tuple[int, bytes]:
        try:
            async with asyncio.timeout(request_timeout or self.timeout):
                headers, target, data = await self._prepare(path, query, body, content_type)
                answer = await origin.request(method, target, list(headers.items()), data)
        except (HttpError, TimeoutError) as e:
            raise _unavailable(f"{method} {path}", e) from e
        return answer.status, answer.body

    async def _send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        body: Any,
        content_type: str,
        request_timeout: float | None,
    ) -> Any:
        api = self._api
        rest = api.rest_client
        try:
            headers, target, data = await self._prepare(path, query, body, content_type)
            return await rest.pool_manager.request(
                method,
                # our paths quote every segment and urlencode every parameter already
                URL(api.configuration.host + target, encoded=True),
                headers=headers,
                data=data,
                timeout=_timeout(request_timeout) if request_timeout else _NO_TIMEOUT,
                # as kubernetes-asyncio's REST client sends: kubeconfig proxy-url, tls-server-name
                proxy=rest.proxy or None,
                proxy_headers=rest.proxy_headers or None,
                server_hostname=rest.server_hostname or None,
            )
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            raise KubeUnavailable(
                0, "Unavailable", f"{method} {path}: {e or type(e).__name__}"
            ) from e


_NO_TIMEOUT = aiohttp.ClientTimeout()  # watches: bounded by the server's timeoutSeconds


def _document(status: int, data: bytes, path: str) -> JSON:
    """An answer's JSON object, or its `KubeError`."""
    if not 200 <= status < 300:
        raise error_from(status, data)
    if not data:
        return {}
    try:
        doc = orjson.loads(data)  # the same values as json.loads, in a third of the time
    except ValueError as e:
        raise KubeError(status, "BadResponse", f"{path}: not JSON") from e
    return doc if isinstance(doc, dict) else {"value": doc}


def _direct_origin(api: Any) -> Origin | None:
    """A `common.http1` client to the API server with the TLS settings kubernetes-asyncio's REST
    client builds from the same configuration (CA, client certificate, verification, server
    name), or None where a proxy may apply (a kubeconfig proxy-url, or proxy variables in the
    environment, which the library's session honours) or the configuration is not one we know.

    aiohttp's client costs about twice the CPU per request (0.65-0.77 against 0.29-0.39 ms for
    a Prometheus query, bench/bench_prometheus_client.py); at 10,000 Autoscalers the switch
    took the controller from 1.53-1.54 to 1.26-1.33 ms of CPU per pass when measured."""
    rest = getattr(api, "rest_client", None)
    config = getattr(api, "configuration", None)
    if rest is None or config is None or getattr(rest, "proxy", None):
        return None
    # any proxy setting but NO_PROXY (which alone sends everything direct) keeps the library's
    # session, which honours them (trust_env)
    proxies = {k for k, v in urllib.request.getproxies().items() if v and k != "no"}
    if any(os.environ.get(v) for v in _PROXY_VARS) or proxies:
        return None
    host = str(config.host or "")
    context: ssl.SSLContext | bool = True
    if host.startswith("https://"):
        context = ssl.create_default_context(cafile=config.ssl_ca_cert)
        if config.cert_file:
            context.load_cert_chain(config.cert_file, keyfile=config.key_file)
        if not config.verify_ssl:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if getattr(config, "disable_strict_ssl_verification", False):
            context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    try:
        return Origin(
            host,
            ssl_context=context,
            server_hostname=getattr(rest, "server_hostname", None) or None,
            limit=max(1, int(config.connection_pool_maxsize or 4)),
        )
    except ValueError:
        return None


def _dumps(body: Any) -> bytes:
    """A request body as JSON (as `json.dumps` would read it: non-string keys become strings)."""
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)


@functools.lru_cache(maxsize=16)
def _timeout(seconds: float) -> aiohttp.ClientTimeout:
    """One ClientTimeout per value (they are immutable): building them per request took 2.9% of
    the controller's CPU at 10,000 Autoscalers (py-spy)."""
    return aiohttp.ClientTimeout(total=seconds)


async def connect(kubeconfig: str | None, *, request_timeout: float = 10.0) -> KubeClient:
    """A client from a kubeconfig file, or from the pod's service account when None."""
    configuration = kclient.Configuration()
    if kubeconfig:
        await kconfig.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    else:
        kconfig.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    configuration.connection_pool_maxsize = 64  # workers share one pool; the default is 4
    api = kclient.ApiClient(configuration)
    _skip_proxy_lookup(api)
    return KubeClient(api, timeout=request_timeout)


_PROXY_VARS = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")


def _skip_proxy_lookup(api: Any) -> None:
    """kubernetes-asyncio's session has trust_env=True, so aiohttp looks up proxy settings in a
    thread for every request; without proxy variables that is pure overhead (~4% of the
    controller's CPU in bench_controller.py)."""
    session = getattr(getattr(api, "rest_client", None), "pool_manager", None)
    if any(os.environ.get(v) for v in _PROXY_VARS) or not hasattr(session, "_trust_env"):
        return
    session._trust_env = False  # type: ignore[union-attr]


def dumps(doc: Any) -> str:
    """Compact JSON, for logs and comparisons."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


async def sleep_or_stop(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep up to `seconds`; True when `stop` was set meanwhile."""
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        return False
    return True
