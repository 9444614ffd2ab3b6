"""The sandbox API server: TLS, authentication, authorization, discovery and dispatch.

`Sandbox` runs it in-process (an async context manager); `sandbox.__main__` runs it as a process.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from sandbox import discovery, errors, hpa_identity, openapi, protoencode, state
from sandbox.aggregator import Aggregator
from sandbox.apiservices import seed_local_apiservices
from sandbox.auth import Attributes, Policy, User, forbidden_message
from sandbox.bodies import error_response, respond
from sandbox.cadvisor import Cadvisor
from sandbox.certs import FRONT_PROXY_CN, Pki, issue
from sandbox.crds import Crds
from sandbox.eventttl import EVENT_TTL, EventExpiry
from sandbox.faultplan import FaultPlan
from sandbox.faults import ADMIN_PATHS, Faults
from sandbox.hpa_controller import HorizontalController, HpaControllerConfig
from sandbox.nodes import NodeShape, register_nodes
from sandbox.operations import Api
from sandbox.requestinfo import RequestInfo, parse
from sandbox.resources import Registry
from sandbox.rest import RestContext, serve_resource
from sandbox.store import Store
from sandbox.workloads import Workloads

log = logging.getLogger(__name__)

HEALTH = {"/healthz", "/livez", "/readyz"}
ADMIN = "sandbox-admin"
START_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass(frozen=True)
class SandboxConfig:
    """How to run a sandbox; every field has a default that suits a fast test."""

    host: str = "127.0.0.1"  # loopback only: the sandbox is for tests and demos
    port: int = 0  # 0 picks a free port
    pod_ready_delay: float = 0.5  # seconds from a pod's start to Ready
    simulate_kubelet: bool = True  # set new pods Running/Ready; off for pure-API tests
    policy: Policy | None = None  # users and rules; the admin user is always added
    dir: Path | None = (
        None  # where certificates and the kubeconfig go; None: a temp dir removed on exit
    )
    kubeconfig: Path | None = None  # default: <dir>/kubeconfig
    admin_token: str | None = None  # default: random
    bookmark_interval: float = 5.0  # seconds of quiet before a watch BOOKMARK (upstream ~60)
    watch_timeout: float = (
        1800.0  # seconds a watch without timeoutSeconds lasts (upstream 1800-3600)
    )
    history: int = 10_000  # changes kept for resuming watches; older resourceVersions get 410
    availability_interval: float = 5.0  # seconds between APIService availability checks
    # kube-controller-manager's HPA controller (`serve --hpa-controller`); None: not running
    hpa_controller: HpaControllerConfig | None = None
    nodes: int = 1  # Ready nodes registered at start (sandbox-node-1...); pods are bound to them
    # a Prometheus (base URL, remote-write receiver on) the simulated cAdvisor writes usage into;
    # None: no usage series
    prometheus_url: str | None = None
    cadvisor_interval: float = 1.0  # seconds between usage writes (a kubelet scrape interval)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), compare=False)
    faults: FaultPlan | None = None  # faults injected from the start (sandbox.faultplan)
    state_file: Path | None = None  # objects survive a restart here (sandbox.state)
    event_ttl: float = EVENT_TTL  # seconds an Event lives after its last write (--event-ttl)


SANDBOX: web.AppKey[Sandbox] = web.AppKey("sandbox")


class Sandbox:
    """A running sandbox API server. `async with Sandbox(SandboxConfig()) as sb: ...`"""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self._own_dir = self.config.dir is None
        self.dir = (
            Path(tempfile.mkdtemp(prefix="sandbox-"))
            if self.config.dir is None
            else self.config.dir
        )
        self.admin_token = self.config.admin_token or secrets.token_urlsafe(24)
        base = self.config.policy or Policy()
        self.policy = base.with_user(self.admin_token, User(ADMIN, ("system:masters",)))
        self._hpa_token = secrets.token_urlsafe(24)  # the HPA controller's service account
        if self.config.hpa_controller is not None:
            self.policy = hpa_identity.with_controller(self.policy, self._hpa_token)
        self.hpa_controller: HorizontalController | None = None
        self.store = Store(history=self.config.history)
        self.registry = Registry()
        self.api = Api(self.store, clock=self.config.clock)
        self.workloads = Workloads(
            self.api,
            self.registry,
            ready_delay=self.config.pod_ready_delay,
            kubelet=self.config.simulate_kubelet,
        )
        self.crds = Crds(self.api, self.registry)
        self.event_expiry = EventExpiry(self.store, ttl=self.config.event_ttl)
        self.faults = Faults(self.config.faults)
        self.faults.refuse = self.refuse_connections
        self.pki: Pki | None = None
        self.cadvisor = (
            Cadvisor(self.api, self.config.prometheus_url, interval=self.config.cadvisor_interval)
            if self.config.prometheus_url
            else None
        )
        self.aggregator: Aggregator | None = None
        self.rest = RestContext(
            self.api,
            self.registry,
            lambda: self.policy,
            self.config.bookmark_interval,
            self.config.watch_timeout,
            self.faults.watch_options,
        )
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self.keeper = state.Keeper(self.config.state_file)
        self.port = 0

    # ---- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        saved = self.keeper.load()
        cas = state.cas(saved) if saved else None
        self.pki = Pki(self.dir, now=self.config.clock(), host=self.config.host, cas=cas)
        restored = state.restore(self.store, saved) if saved else []
        if saved:
            self._publish_authentication()
        else:
            self._seed()
        self.crds.start()
        self.workloads.start()
        self.event_expiry.start()
        if self.cadvisor:
            self.cadvisor.start()
        state.notify_restored(self.store, restored)
        self.keeper.start(
            self.store, {"cluster": self.pki.cluster_ca, "requestheader": self.pki.requestheader_ca}
        )
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app[SANDBOX] = self
        app.router.add_route("*", "/{tail:.*}", dispatch)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, self.config.host, self.config.port, ssl_context=self.pki.server_context()
        )
        await site.start()
        self._site = site
        server = site._server
        sockets = getattr(server, "sockets", None)
        assert sockets
        self.port = int(sockets[0].getsockname()[1])
        self.aggregator = Aggregator(
            self.api, self.registry, self.pki, interval=self.config.availability_interval
        )
        self.aggregator.start()
        if self.config.hpa_controller is not None:
            self.hpa_controller = HorizontalController(
                self.config.hpa_controller,
                url=self.url,
                ca_file=self.ca_file,
                token=self._hpa_token,
            )
            self.hpa_controller.start()
        self.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        self.kubeconfig.write_text(yaml.safe_dump(self.kubeconfig_document()))
        self.kubeconfig.chmod(0o600)

    async def refuse_connections(self, seconds: float) -> None:
        """Stop listening for `seconds` (connections are refused), then listen again; open
        watches end, and requests on open connections are dropped meanwhile (Faults)."""
        if self._site is None or self._runner is None or self.pki is None:
            return
        await self._site.stop()
        self.store.end_subscriptions()
        await asyncio.sleep(seconds)
        if self._runner is None:
            return  # stopped meanwhile
        self._site = web.TCPSite(
            self._runner, self.config.host, self.port, ssl_context=self.pki.server_context()
        )
        await self._site.start()

    async def stop(self) -> None:
        """Stop serving and the controllers; safe to call more than once."""
        if self.hpa_controller:
            await self.hpa_controller.stop()
            self.hpa_controller = None
        if self.aggregator:
            await self.aggregator.stop()
            self.aggregator = None
        await self.keeper.stop()
        await self.workloads.stop()
        await self.event_expiry.stop()
        if self.cadvisor:
            await self.cadvisor.stop()
        self.crds.stop()
        self.store.end_subscriptions()  # open watches end now rather than at shutdown_timeout
        if self._runner:
            await self._runner.cleanup()
            self._runner = None
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _seed(self) -> None:
        ns = self.registry.lookup("", "v1", "namespaces")
        assert ns is not None
        assert self.pki is not None
        for name in START_NAMESPACES:
            self.api.create(ns, "", {"metadata": {"name": name}})
        self._publish_authentication()
        seed_local_apiservices(self.api, self.registry)
        if self.config.hpa_controller is not None:
            hpa_identity.seed(self.api, self.registry)
        register_nodes(self.api, self.registry, self.config.nodes, NodeShape())

    def _publish_authentication(self) -> None:
        assert self.pki is not None
        cm = self.registry.lookup("", "v1", "configmaps")
        assert cm is not None
        data = {
            "client-ca-file": self.pki.cluster_ca.cert_pem.decode(),
            "requestheader-client-ca-file": self.pki.requestheader_ca.cert_pem.decode(),
            "requestheader-allowed-names": f'["{FRONT_PROXY_CN}"]',
            "requestheader-username-headers": '["X-Remote-User"]',
            "requestheader-group-headers": '["X-Remote-Group"]',
            "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
        }
        body = {
            "metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system"},
            "data": data,
        }
        current = self.store.get(cm.key, "kube-system", "extension-apiserver-authentication")
        if current is None:
            self.api.create(cm, "kube-system", body)
        else:
            self.api.update(
                cm, "kube-system", "extension-apiserver-authentication", {**current, "data": data}
            )

    # ---- what tests use ----------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"https://{self.config.host}:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.config.kubeconfig or self.dir / "kubeconfig"

    @property
    def ca_file(self) -> Path:
        assert self.pki is not None
        return self.pki.ca_file

    @property
    def client_ca_file(self) -> Path:
        assert self.pki is not None
        return self.pki.client_ca_file

    @property
    def requestheader_ca_file(self) -> Path:
        assert self.pki is not None
        return self.pki.requestheader_ca_file

    def kubeconfig_document(self) -> dict[str, Any]:
        import base64

        assert self.pki is not None
        ca = base64.b64encode(self.pki.cluster_ca.cert_pem).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "sandbox",
                    "cluster": {"server": self.url, "certificate-authority-data": ca},
                }
            ],
            "users": [{"name": ADMIN, "user": {"token": self.admin_token}}],
            "contexts": [
                {
                    "name": "sandbox",
                    "context": {"cluster": "sandbox", "user": ADMIN, "namespace": "default"},
                }
            ],
            "current-context": "sandbox",
            "preferences": {},
        }

    def issue_client_cert(
        self, cn: str, groups: tuple[str, ...] | list[str] = ()
    ) -> tuple[Path, Path]:
        """A client certificate (CN=user, O=groups) signed by the client CA, as files."""
        assert self.pki is not None
        cert = issue(
            self.pki.cluster_ca, cn, now=self.config.clock(), orgs=tuple(groups), client=True
        )
        return cert.write(self.dir, f"client-{cn.replace(':', '_')}-{secrets.token_hex(3)}")

    async def rotate_requestheader_ca(self) -> None:
        """A new request-header CA and front-proxy certificate; the ConfigMap follows."""
        assert self.pki is not None
        assert self.aggregator is not None
        self.pki.rotate_requestheader(now=self.config.clock())
        self._publish_authentication()
        await self.aggregator.reset_clients()

    # ---- request handling --------------------------------------------------------------------

    def authenticate(self, request: web.Request) -> User:
        header = request.headers.get("Authorization", "")
        if header[:7].lower() == "bearer ":
            user = self.policy.authenticate_token(header[7:].strip())
            if user is not None:
                return user
            raise errors.unauthorized()
        transport = request.transport
        peer = transport.get_extra_info("peercert") if transport else None
        if peer:
            subject = dict(item for rdn in peer.get("subject", ()) for item in rdn)
            orgs = tuple(
                v for rdn in peer.get("subject", ()) for k, v in rdn if k == "organizationName"
            )
            return User(subject.get("commonName", ""), orgs).with_authenticated()
        raise errors.unauthorized()

    def authorize(self, user: User, info: RequestInfo) -> None:
        attrs = Attributes(
            user=user,
            verb=info.verb,
            is_resource=info.is_resource,
            api_group=info.group,
            resource=info.resource,
            subresource=info.subresource,
            namespace=info.namespace,
            name=info.authorization_name,
            path=info.path,
        )
        allowed, _ = self.policy.authorize(attrs)
        if not allowed:
            raise errors.forbidden(
                forbidden_message(attrs), resource=info.resource, group=info.group, name=info.name
            )

    def non_resource(self, info: RequestInfo, *, accept: str = "") -> web.Response:
        segs = [s for s in info.path.split("/") if s]
        if segs == ["version"]:
            return respond(discovery.KUBE_VERSION)
        if segs[:1] == ["openapi"]:
            return openapi.answer(self.registry, segs, accept)
        if segs == ["api"]:
            return respond(discovery.api_versions(f"{self.config.host}:{self.port}"))
        groups = self.registry.groups()
        if self.aggregator:
            groups += [g for g in self.aggregator.groups() if g[0] not in dict(groups)]
        if segs == ["apis"]:
            return respond(discovery.api_group_list(groups))
        if len(segs) == 2 and segs[0] == "apis" and segs[1] in dict(groups):
            return respond(discovery.api_group(segs[1], dict(groups)[segs[1]]))
        if (len(segs) == 2 and segs[0] == "api") or (len(segs) == 3 and segs[0] == "apis"):
            doc = discovery.resource_list(
                self.registry, "" if segs[0] == "api" else segs[1], segs[-1]
            )
            if doc is not None:
                return respond(doc)
        raise errors.path_not_found()


async def dispatch(request: web.Request) -> web.StreamResponse:
    sb = request.app[SANDBOX]
    try:
        if request.path in HEALTH:
            return web.Response(text="ok")
        user = sb.authenticate(request)
        info = parse(request.method, request.path, dict(request.query))
        sb.authorize(user, info)
        if info.path in ADMIN_PATHS:
            return await sb.faults.serve_admin(request, info)
        injected = await sb.faults.before(request, info, user.name)
        if injected is not None:
            return injected
        if sb.aggregator and info.prefix == "apis" and info.group and info.version:
            target = sb.aggregator.route(info.group, info.version)
            if target is not None:
                return await sb.aggregator.proxy(request, target, user)
        if not info.is_resource:
            return sb.non_resource(info, accept=request.headers.get("Accept", ""))
        return protoencode.negotiate(request, await serve_resource(request, sb.rest, info, user))
    except errors.ApiError as err:
        return error_response(err)
    except ConnectionResetError:
        raise  # the client went away (a killed process): nobody to answer, nothing to log
    except Exception as err:  # a bug here must still answer with a Status, never a traceback
        log.exception("internal error on %s %s", request.method, request.path)
        return error_response(
            errors.ApiError(500, "InternalError", f"Internal error occurred: {type(err).__name__}")
        )
