"""A kube-aggregator: APIServices with a `spec.service` are proxied to their backend over TLS.

The backend is found as kube-aggregator finds it: the Service's port whose `port` is the
APIService's (default 443), then the Endpoints (or EndpointSlices) port with that port's name,
and a ready address. The proxy presents the front-proxy client certificate (signed by the
request-header CA) and the caller's identity in X-Remote-User / X-Remote-Group /
X-Remote-Extra-*; the backend is verified with `spec.caBundle` for the host
`<service>.<namespace>.svc` (or not at all with `insecureSkipTLSVerify`). The caller has
already been authenticated and authorized by the sandbox, as kube-apiserver does before its
aggregator proxies.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import random
import ssl
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

from common.http1 import HttpError, Origin
from sandbox import errors
from sandbox.apiservices import is_available, set_condition
from sandbox.auth import User
from sandbox.operations import Api
from sandbox.proxyurl import forwarded_path_qs
from sandbox.resources import Registry
from sandbox.store import Change, Obj

if TYPE_CHECKING:
    from sandbox.certs import Pki

log = logging.getLogger(__name__)

APISERVICES = ("apiregistration.k8s.io", "apiservices")
WATCHED = {APISERVICES, ("", "services"), ("", "endpoints"), ("discovery.k8s.io", "endpointslices")}
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "host",
    "authorization",
    "content-length",
    "content-encoding",
}
CHECK_TIMEOUT = 5.0  # seconds; kube-aggregator's discovery check timeout
# bytes: an answer of known length up to this size is relayed in one write (a metrics read is a
# few KB); longer ones, and those without a length (watches), are streamed chunk by chunk
RELAY_WHOLE = 1024 * 1024


class ResolveError(Exception):
    """The backend cannot be found; `reason` is the APIService condition reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Target:
    """A service-backed APIService, as the proxy needs it."""

    name: str
    group: str
    version: str
    namespace: str
    service: str
    port: int
    ca_bundle: bytes | None
    insecure: bool

    @property
    def server_name(self) -> str:
        return f"{self.service}.{self.namespace}.svc"


def target_of(obj: Obj) -> Target | None:
    spec = obj.get("spec") or {}
    svc = spec.get("service")
    if not isinstance(svc, dict):
        return None
    bundle = spec.get("caBundle")
    return Target(
        obj["metadata"]["name"],
        spec.get("group", ""),
        spec.get("version", ""),
        svc.get("namespace", ""),
        svc.get("name", ""),
        int(svc.get("port") or 443),
        base64.b64decode(bundle) if bundle else None,
        bool(spec.get("insecureSkipTLSVerify")),
    )


class Aggregator:
    """Routing, proxying and availability of service-backed APIServices."""

    def __init__(self, api: Api, registry: Registry, pki: Pki, *, interval: float) -> None:
        self.api = api
        self.registry = registry
        self.pki = pki
        self.interval = interval  # seconds between availability checks
        self._sessions: dict[Target, aiohttp.ClientSession] = {}  # checks and watches
        self._contexts: dict[Target, ssl.SSLContext] = {}
        # the lean client (common.http1) per backend endpoint: every other proxied request
        # (aiohttp's client costs about twice the CPU per request; the proxy was 23% of the
        # sandbox's CPU samples at 10,000 Autoscalers when it was measured; see git log)
        self._origins: dict[tuple[Target, str, int], Origin] = {}
        # (group, version) -> its Target or None; rebuilt after any APIService change, so a
        # request does not sort every APIService to find its route
        self._routes: dict[tuple[str, str], Target | None] | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.api.store.add_listener(self._on_change)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sandbox-aggregator")

    async def stop(self) -> None:
        self.api.store.remove_listener(self._on_change)
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.reset_clients()

    async def reset_clients(self) -> None:
        sessions, self._sessions = self._sessions, {}
        origins, self._origins = self._origins, {}
        self._contexts = {}
        for s in sessions.values():
            await s.close()
        for o in origins.values():
            await o.close()
        self._wake.set()

    def _on_change(self, change: Change) -> None:
        if change.key == APISERVICES:
            self._routes = None
        if change.key in WATCHED and not (change.key == APISERVICES and _status_only(change)):
            self._wake.set()

    # ---- routing -----------------------------------------------------------------------------

    def _apiservices(self) -> list[Obj]:
        return self.api.store.list(APISERVICES)

    def route(self, group: str, version: str) -> Target | None:
        if self._routes is None:
            routes: dict[tuple[str, str], Target | None] = {}
            for obj in self._apiservices():  # by name: the first of a group/version wins
                spec = obj.get("spec") or {}
                key = (spec.get("group", ""), spec.get("version", ""))
                if key not in routes:
                    routes[key] = target_of(obj)
            self._routes = routes
        return self._routes.get((group, version))

    def groups(self) -> list[tuple[str, list[str]]]:
        found: dict[str, list[tuple[int, str]]] = {}
        for obj in self._apiservices():
            t = target_of(obj)
            if t is not None and is_available(obj):
                found.setdefault(t.group, []).append(
                    (-int(obj["spec"].get("versionPriority", 0)), t.version)
                )
        return [(g, [v for _, v in sorted(vs)]) for g, vs in sorted(found.items())]

    def resolve(self, t: Target) -> tuple[str, int]:
        store = self.api.store
        svc = store.get(("", "services"), t.namespace, t.service)
        if svc is None:
            raise ResolveError(
                "ServiceNotFound", f'service/{t.service} in "{t.namespace}" is not present'
            )
        ports = [
            p for p in (svc.get("spec") or {}).get("ports") or [] if int(p.get("port", 0)) == t.port
        ]
        if not ports:
            raise ResolveError(
                "ServicePortError",
                f'service/{t.service} in "{t.namespace}" is not listening on port {t.port}',
            )
        port_name = ports[0].get("name", "")
        endpoints = self._endpoints(t, port_name)
        if endpoints:
            # kube-aggregator picks one ready endpoint at random per request (ResolveEndpoint)
            return random.choice(endpoints)
        raise ResolveError(
            "MissingEndpoints",
            (
                f'endpoints for service/{t.service} in "{t.namespace}" have no addresses with '
                f'port name "{port_name}"'
            ),
        )

    def _endpoints(self, t: Target, port_name: str) -> list[tuple[str, int]]:
        store = self.api.store
        found: list[tuple[str, int]] = []
        eps = store.get(("", "endpoints"), t.namespace, t.service)
        for subset in (eps or {}).get("subsets") or []:
            ports = [p for p in subset.get("ports") or [] if p.get("name", "") == port_name]
            for addr in subset.get("addresses") or []:
                found += [(addr["ip"], int(p["port"])) for p in ports if addr.get("ip")]
        for slice_ in store.list(("discovery.k8s.io", "endpointslices"), t.namespace):
            if (slice_["metadata"].get("labels") or {}).get(
                "kubernetes.io/service-name"
            ) != t.service:
                continue
            ports = [p for p in slice_.get("ports") or [] if (p.get("name") or "") == port_name]
            for ep in slice_.get("endpoints") or []:
                if (ep.get("conditions") or {}).get("ready") is False:
                    continue
                found += [(a, int(p["port"])) for a in ep.get("addresses") or [] for p in ports]
        if eps is None and not found:
            has_slices = any(
                (s["metadata"].get("labels") or {}).get("kubernetes.io/service-name") == t.service
                for s in store.list(("discovery.k8s.io", "endpointslices"), t.namespace)
            )
            if not has_slices:
                raise ResolveError(
                    "EndpointsNotFound",
                    f'cannot find endpoints for service/{t.service} in "{t.namespace}"',
                )
        return found

    # ---- TLS clients -------------------------------------------------------------------------

    def _context(self, t: Target) -> ssl.SSLContext:
        ctx = self._contexts.get(t)
        if ctx is None:
            ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
            if t.insecure:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            elif t.ca_bundle:
                ctx = ssl.create_default_context(
                    ssl.Purpose.SERVER_AUTH, cadata=t.ca_bundle.decode()
                )
            ctx.load_cert_chain(self.pki.front_proxy_cert, self.pki.front_proxy_key)
            self._contexts[t] = ctx
        return ctx

    def _origin(self, t: Target, host: str, port: int) -> Origin:
        origin = self._origins.get((t, host, port))
        if origin is None:
            origin = Origin(
                f"https://{host}:{port}",
                ssl_context=self._context(t),
                server_hostname=t.server_name,
            )
            self._origins[(t, host, port)] = origin
        return origin

    def _session(self, t: Target) -> aiohttp.ClientSession:
        session = self._sessions.get(t)
        if session is None or session.closed:
            connector = aiohttp.TCPConnector(ssl=self._context(t))
            # no cookie jar: Go's proxy transport keeps no cookies from a backend
            session = aiohttp.ClientSession(
                connector=connector, auto_decompress=True, cookie_jar=aiohttp.DummyCookieJar()
            )
            self._sessions[t] = session
        return session

    @staticmethod
    def identity_headers(user: User) -> CIMultiDict[str]:
        headers: CIMultiDict[str] = CIMultiDict()
        headers.add("X-Remote-User", user.name)
        for group in user.groups:
            headers.add("X-Remote-Group", group)
        for key, values in user.extra.items():
            for value in values:
                headers.add(f"X-Remote-Extra-{urllib.parse.quote(key, safe='')}", value)
        return headers

    async def proxy(self, request: web.Request, t: Target, user: User) -> web.StreamResponse:
        try:
            host, port = self.resolve(t)
        except ResolveError as err:
            raise errors.service_unavailable(f"service unavailable: {err.message}") from err
        headers: CIMultiDict[str] = CIMultiDict(
            (k, v)
            for k, v in request.headers.items()
            if k.lower() not in HOP_BY_HOP and not k.lower().startswith("x-remote-")
        )
        headers.extend(self.identity_headers(user))
        # as kube-aggregator writes it: the decoded path and the parsed query, re-encoded by Go
        target = forwarded_path_qs(request.rel_url.raw_path, request.rel_url.raw_query_string)
        body = await request.read()
        # one whole answer (not a watch's stream, nor HEAD's bodiless one): the lean client
        if request.method != "HEAD" and request.query.get("watch", "") in ("", "0", "false"):
            try:
                answer = await self._origin(t, host, port).request(
                    request.method, target, list(headers.items()), body or None
                )
            except HttpError as err:
                raise errors.service_unavailable(f"error trying to reach service: {err}") from err
            whole = web.Response(status=answer.status, body=answer.body)
            whole.headers.pop("Content-Type", None)  # the backend's own, below, or none at all
            for k, v in answer.headers:
                if k.lower() not in HOP_BY_HOP:
                    whole.headers.add(k, v)
            return whole
        url = URL(f"https://{host}:{port}{target}", encoded=True)
        try:
            upstream = await self._session(t).request(
                request.method,
                url,
                headers=headers,
                data=body or None,
                server_hostname=t.server_name,
                allow_redirects=False,
            )
        except (aiohttp.ClientError, OSError, ssl.SSLError) as err:
            raise errors.service_unavailable(f"error trying to reach service: {err}") from err
        async with upstream:
            if upstream.content_length is not None and upstream.content_length <= RELAY_WHOLE:
                return await _relay_whole(upstream)
            response = web.StreamResponse(status=upstream.status)
            for k, v in upstream.headers.items():
                if k.lower() not in HOP_BY_HOP:
                    response.headers.add(k, v)
            await response.prepare(request)
            with contextlib.suppress(ConnectionError, aiohttp.ClientError):
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
            return response

    # ---- availability ------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()
            await asyncio.sleep(0.05)  # let a burst of related writes (Service, Endpoints) land
            for obj in self._apiservices():
                t = target_of(obj)
                if t is None:
                    continue
                try:
                    available, reason, message = await self.check(t)
                except Exception:  # a bug in one check must not stop the others
                    log.exception("availability check of %s failed", t.name)
                    continue
                self._set_available(t.name, available, reason, message)

    async def check(self, t: Target) -> tuple[bool, str, str]:
        try:
            host, port = self.resolve(t)
        except ResolveError as err:
            return False, err.reason, err.message
        url = f"https://{host}:{port}/apis/{t.group}/{t.version}"
        headers = self.identity_headers(User("system:kube-aggregator", ("system:masters",)))
        try:
            timeout = aiohttp.ClientTimeout(total=CHECK_TIMEOUT)
            async with self._session(t).get(
                url, headers=headers, server_hostname=t.server_name, timeout=timeout
            ) as resp:
                if 200 <= resp.status < 300:
                    return True, "Passed", "all checks passed"
                why = f"bad status from {url}: {resp.status}"
        except (aiohttp.ClientError, OSError, ssl.SSLError, TimeoutError) as err:
            why = str(err) or type(err).__name__
        return False, "FailedDiscoveryCheck", f"failing or missing response from {url}: {why}"

    def _set_available(self, name: str, available: bool, reason: str, message: str) -> None:
        obj = self.api.store.get(APISERVICES, "", name)
        rt = self.registry.lookup("apiregistration.k8s.io", "v1", "apiservices")
        if obj is None or rt is None:
            return
        set_condition(self.api, rt, obj, available, reason, message)


async def _relay_whole(upstream: aiohttp.ClientResponse) -> web.StreamResponse:
    """The backend's answer as one response: the same status, headers and body as streaming
    it, in one write instead of one per chunk (most of the proxy's cost was TLS writes)."""
    try:
        body = await upstream.read()
    except (aiohttp.ClientError, OSError) as err:
        raise errors.service_unavailable(f"error trying to reach service: {err}") from err
    response = web.Response(status=upstream.status, body=body)
    response.headers.pop("Content-Type", None)  # the backend's own, below, or none at all
    for k, v in upstream.headers.items():
        if k.lower() not in HOP_BY_HOP:
            response.headers.add(k, v)
    return response


def _status_only(change: Change) -> bool:
    if change.old is None:
        return False
    skip = ("status", "metadata")
    before = {k: v for k, v in change.old.items() if k not in skip}
    return before == {k: v for k, v in change.obj.items() if k not in skip}
