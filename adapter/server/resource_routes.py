"""Request handling for metrics.k8s.io, v1 and v1beta1 side by side (served only when the rule
file has `resourceRules`): discovery, PodMetrics and NodeMetrics list and get.

Paths, as metrics-server serves them:
`/apis/metrics.k8s.io/{v1 | v1beta1}/{nodes[/NAME] | pods | namespaces/NS/pods[/NAME]}`.
`labelSelector` filters the objects; `fieldSelector` accepts `metadata.name` and
`metadata.namespace` (=, ==, !=) as upstream's object-meta field set; `watch` is refused (405).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from aiohttp import web

from adapter.errors import BadRequest, NotFound
from adapter.provider.resource_provider import ResourceMetricsProvider
from adapter.server import documents as docs
from adapter.server import resource_documents as rdocs
from adapter.server import routes
from adapter.server.routes import (
    ROUTE,
    _get_only,
    _refuse_watch,
    _selector,
    json_response,
)
from common.selectors import FieldRequirement, Selector, SelectorError, parse_field_selector

RESOURCE_PROVIDER = web.AppKey("resource_provider", ResourceMetricsProvider)
_FIELDS = frozenset({"metadata.name", "metadata.namespace"})


def enabled(app: web.Application) -> bool:
    """Whether metrics.k8s.io is served: a provider is wired and its rules are set."""
    provider = app.get(RESOURCE_PROVIDER)
    return provider is not None and provider.enabled


def _fields(request: web.Request) -> tuple[FieldRequirement, ...]:
    try:
        requirements = parse_field_selector(request.query.get("fieldSelector", ""))
    except SelectorError as err:
        raise BadRequest(f"fieldSelector: {err}") from err
    for req in requirements:
        if req.field not in _FIELDS:
            raise BadRequest(
                f'fieldSelector: field label "{req.field}" is not supported '
                f"(only metadata.name and metadata.namespace)"
            )
    return requirements


def _keep(fields: tuple[FieldRequirement, ...], namespace: str, name: str) -> bool:
    values: Mapping[str, str] = {"metadata.name": name, "metadata.namespace": namespace}
    return all(req.matches(values) for req in fields)


async def handle_group(request: web.Request) -> web.Response:
    """/apis/metrics.k8s.io[/...]: ours when enabled, otherwise the generic 404 path."""
    if not enabled(request.app):
        return await routes.handle_apis(request)
    parts = request.match_info.get("tail", "").split("/")
    if parts and parts[-1] == "":
        parts.pop()  # a trailing slash names the same document
    return await handle(request, parts)


async def handle_root(request: web.Request) -> web.Response:
    """/apis: the generic APIGroupList, with metrics.k8s.io when it is served."""
    if request.method != "GET" or not enabled(request.app):
        return await routes.handle_apis(request)
    request[ROUTE] = "discovery"
    body = docs.api_group_list()
    group = rdocs.api_group()
    del group["kind"], group["apiVersion"]
    body["groups"].append(group)
    return json_response(body)


async def handle_openapi_v2(request: web.Request) -> web.Response:
    if not enabled(request.app):
        return await routes.handle_openapi_v2(request)
    request[ROUTE] = "openapi"
    body = docs.openapi_v2()
    body["paths"].update(rdocs.openapi_paths())
    return json_response(body)


async def handle_openapi_v3(request: web.Request) -> web.Response:
    tail = request.match_info.get("tail", "").strip("/")
    served = {f"apis/{rdocs.METRICS_GROUP}/{v}": v for v in rdocs.VERSIONS}
    if not enabled(request.app) or (tail and tail not in served):
        return await routes.handle_openapi_v3(request)
    request[ROUTE] = "openapi"
    if tail:
        return json_response(rdocs.openapi_v3_document(version=served[tail]))
    body = docs.openapi_v3_index()
    for path, version in served.items():
        body["paths"][path] = rdocs.openapi_v3_entry(version=version)
    return json_response(body)


async def handle(request: web.Request, rest: list[str]) -> web.Response:
    """Everything under /apis/metrics.k8s.io (`rest` is the path after the group)."""
    if not rest:
        request[ROUTE] = "discovery"
        _get_only(request)
        return json_response(rdocs.api_group())
    version = rest[0]
    if version not in rdocs.VERSIONS or not all(rest):
        raise NotFound.no_route()
    segments = rest[1:]
    if not segments:
        request[ROUTE] = "discovery"
        _get_only(request)
        return json_response(rdocs.resource_list(version=version))
    now = datetime.now(UTC)  # creationTimestamp of every item, as upstream
    provider = request.app[RESOURCE_PROVIDER]
    if segments[0] == "nodes" and len(segments) <= 2:
        return await _nodes(request, provider, segments[1:], now, version)
    if segments == ["pods"]:
        return await _pods(request, provider, None, [], now, version)
    if len(segments) in (3, 4) and segments[0] == "namespaces" and segments[2] == "pods":
        return await _pods(request, provider, segments[1], segments[3:], now, version)
    raise NotFound.no_route()


def _prepare(request: web.Request, route: str) -> tuple[Selector, tuple[FieldRequirement, ...]]:
    """Upstream's order: method (405), query decoding (400), then the watch refusal (405)."""
    request[ROUTE] = route
    _get_only(request)
    selector = _selector(request, "labelSelector", on_metric=False)
    fields = _fields(request)
    _refuse_watch(request, rdocs.METRICS_GROUP)
    return selector, fields


async def _pods(
    request: web.Request,
    provider: ResourceMetricsProvider,
    namespace: str | None,
    name: list[str],
    now: datetime,
    version: str,
) -> web.Response:
    selector, fields = _prepare(request, "resource_pods")
    if name:
        assert namespace is not None
        metric = await provider.get_pod(namespace=namespace, name=name[0])
        return json_response(rdocs.pod_metrics(metric, now, version=version))
    if fields:
        metrics = await provider.list_pods(
            namespace=namespace, selector=selector, keep=lambda ns, pod: _keep(fields, ns, pod)
        )
    else:  # every pod the selector matches: the provider may query whole namespaces
        metrics = await provider.list_pods(namespace=namespace, selector=selector)
    return json_response(rdocs.pod_metrics_list(metrics, now, version=version))


async def _nodes(
    request: web.Request,
    provider: ResourceMetricsProvider,
    name: list[str],
    now: datetime,
    version: str,
) -> web.Response:
    selector, fields = _prepare(request, "resource_nodes")
    if name:
        metric = await provider.get_node(name=name[0])
        return json_response(rdocs.node_metrics(metric, now, version=version))
    metrics = await provider.list_nodes(
        selector=selector, keep=lambda _, node: _keep(fields, "", node)
    )
    return json_response(rdocs.node_metrics_list(metrics, now, version=version))
