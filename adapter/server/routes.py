"""Request handlers: parse a metrics API path, ask the provider, render the answer.

Paths are parsed here rather than by aiohttp's router so every shape of custom-metrics-apiserver
(group-qualified and singular resources, `namespaces/{ns}/metrics/{m}`, cluster-scoped objects)
and every 404 is decided in one readable place.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from aiohttp import web

from adapter.errors import BadRequest, MethodNotAllowed, MetricNotFound, NotFound
from adapter.provider.history import RangeHistory
from adapter.provider.seams import MetricsProvider
from adapter.rules.resources import GroupResource
from adapter.server import documents as docs
from adapter.server.encoding import dumps
from adapter.server.responses import ResponseCache
from common.selectors import EVERYTHING, Operator, Selector, SelectorError, parse_selector

PROVIDER: web.AppKey[MetricsProvider] = web.AppKey("provider", MetricsProvider)
RESPONSES = web.AppKey("responses", ResponseCache)
HISTORY = web.AppKey("history", RangeHistory)  # set when the history group is served
ROUTE = web.RequestKey("route", str)  # the route name used in metrics and logs
PODS = GroupResource("", "pods")


# Selectors are immutable and an HPA sends the same one every sync: parse each text once (a
# failure is not kept, so a bad one is refused every time). Each Autoscaler of Pods metrics
# sends its own target's selector: room for 16,384 of them (a few MB), or a large cluster's
# selectors would cycle through a smaller cache and none would ever be found in it.
_parse = lru_cache(maxsize=16_384)(parse_selector)


def json_response(body: Any, status: int = 200) -> web.Response:
    return encoded_response(dumps(body), status)


def encoded_response(body: bytes, status: int = 200) -> web.Response:
    # charset as `text=` set it before: the Content-Type header is unchanged too
    return web.Response(status=status, body=body, content_type="application/json", charset="utf-8")


def _selector(request: web.Request, param: str, *, on_metric: bool) -> Selector:
    text = request.query.get(param, "")
    if not text:
        return EVERYTHING
    try:
        selector = _parse(text)
    except SelectorError as err:
        raise BadRequest(f"{param}: {err}") from err
    if on_metric:
        for req in selector.requirements:
            # PromQL label matchers have no numeric comparison (upstream rejects gt/lt too)
            if req.operator in (Operator.GT, Operator.LT):
                raise BadRequest(
                    f"{param}: operator {req.operator.value!r} on {req.key!r} is not supported"
                )
    return selector


def _get_only(request: web.Request) -> None:
    """405 for a routable path asked with a method other than GET (called once the path is
    known to name something, so an unroutable one stays a 404 as in go-restful)."""
    if request.method != "GET":
        raise MethodNotAllowed.for_method()


def _refuse_watch(request: web.Request, group: str) -> None:
    """405 for `?watch`: the metrics APIs are list-only (a Go bool parameter is true for any
    value but "0" and "false", case-insensitive, even an empty one)."""
    if "watch" not in request.query:
        return
    value = request.query["watch"]
    if value != "0" and value.lower() != "false":
        raise MethodNotAllowed.for_watch(group)


async def handle_apis(request: web.Request) -> web.Response:
    """Everything under /apis: group list, groups, resource lists and metric values."""
    parts = request.match_info.get("tail", "").split("/")
    if parts == [""]:
        parts = []
    if parts and parts[-1] == "":
        parts.pop()  # a trailing slash names the same document
    if not parts:
        request[ROUTE] = "discovery"
        _get_only(request)
        return json_response(docs.api_group_list())
    group, rest = parts[0], parts[1:]
    if group not in docs.GROUPS:
        raise NotFound.no_route()
    if not rest:
        request[ROUTE] = "discovery"
        _get_only(request)
        return json_response(docs.api_group(group))
    version, segments = rest[0], rest[1:]
    if version not in docs.GROUPS[group]:
        raise NotFound.no_route()
    provider = request.app[PROVIDER]
    if group == docs.HISTORY_GROUP:  # never kept: each read names its own range
        return await _history(request, provider, segments)
    responses = request.app[RESPONSES]
    if segments and request.method == "GET":  # a kept metric value (only GETs are kept)
        kept = responses.get(request.path_qs)
        if kept is not None:
            request[ROUTE] = kept[0]
            return web.Response(body=kept[1], content_type="application/json")
    if group == docs.EXTERNAL_GROUP:
        response = await _external(request, provider, segments)
    else:
        response = await _custom(request, provider, version, segments)
    if segments and response.status == 200 and isinstance(response.body, bytes):
        responses.put(request.path_qs, request.get(ROUTE, "other"), response.body)
    return response


async def _external(
    request: web.Request, provider: MetricsProvider, segments: list[str]
) -> web.Response:
    if not segments:
        request[ROUTE] = "discovery"
        _get_only(request)
        return json_response(docs.external_resource_list(provider.list_external_metrics()))
    if len(segments) != 3 or segments[0] != "namespaces" or not all(segments):
        raise NotFound.no_route()
    request[ROUTE] = "external"
    _get_only(request)
    # upstream's list handler decodes the query (400) before it refuses a watch (405)
    selector = _selector(request, "labelSelector", on_metric=True)
    _refuse_watch(request, docs.EXTERNAL_GROUP)
    values = await provider.external_metric(segments[2], namespace=segments[1], selector=selector)
    return json_response(docs.external_value_list(values))


async def _history(
    request: web.Request, provider: MetricsProvider, segments: list[str]
) -> web.Response:
    history = request.app.get(HISTORY)
    if history is None:
        raise NotFound.no_route()
    if not segments:
        request[ROUTE] = "discovery"
        _get_only(request)
        external, custom = provider.list_external_metrics(), provider.list_custom_metrics()
        return json_response(docs.history_resource_list(external, custom))
    # namespaces/{ns}/{metric}: an external metric; namespaces/{ns}/{resource}/{name}/{metric}:
    # one namespaced object's custom metric (an HPA Object metric); namespaces/{ns}/pods/*/
    # {metric} with a labelSelector: the pods' (an HPA Pods metric); nothing else
    if len(segments) not in (3, 5) or segments[0] != "namespaces" or not all(segments):
        raise NotFound.no_route()
    request[ROUTE] = "history"
    _get_only(request)
    wildcard = len(segments) == 5 and segments[3] == "*"
    pod_selector = _selector(request, "labelSelector", on_metric=False) if wildcard else None
    param = "labelSelector" if len(segments) == 3 else "metricLabelSelector"
    selector = _selector(request, param, on_metric=True)
    _refuse_watch(request, docs.HISTORY_GROUP)
    start = _seconds(request, "start", None)
    end = _seconds(request, "end", None)
    step = _seconds(request, "step", 60)
    namespace, metric = segments[1], segments[-1]
    if len(segments) == 3:
        answer = await history.external_history(
            metric, namespace=namespace, selector=selector, start=start, end=end, step=step
        )
        return json_response(docs.history(answer))
    resource_name, name = segments[2], segments[3]
    resource = provider.resolve_resource(resource_name)
    if resource is None or not resource.namespaced:
        raise MetricNotFound.for_resource(metric, resource_name)
    if pod_selector is not None and resource.group_resource != PODS:
        raise MetricNotFound.for_resource(metric, resource_name)  # no HPA metric is of those
    try:
        if pod_selector is not None:
            answer = await history.pods_history(
                resource,
                metric,
                namespace=namespace,
                selector=pod_selector,
                metric_selector=selector,
                start=start,
                end=end,
                step=step,
            )
        else:
            answer = await history.object_history(
                resource,
                metric,
                namespace=namespace,
                name=name,
                metric_selector=selector,
                start=start,
                end=end,
                step=step,
            )
    except MetricNotFound as err:
        raise err.as_requested(resource_name) from err
    return json_response(docs.history(answer))


def _seconds(request: web.Request, param: str, default: int | None) -> int:
    """A whole number of (unix) seconds; 400 naming `param` when missing or malformed."""
    text = request.query.get(param)
    if text is None or text == "":
        if default is None:
            raise BadRequest(f"{param}: required (unix seconds)")
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > 12:  # int() takes '²' too
        raise BadRequest(f"{param}: must be a whole number of seconds, not {text[:40]!r}")
    return int(text)


def _custom_path(segments: list[str]) -> tuple[str | None, str, str, str]:
    """(namespace, resource as written, object name or "*", metric) of a custom metric path;
    404 for any other shape."""
    if not all(segments):
        raise NotFound.no_route()
    if len(segments) == 4 and segments[0] == "namespaces" and segments[2] == "metrics":
        return None, "namespaces", segments[1], segments[3]  # the Namespace object itself
    if len(segments) == 5 and segments[0] == "namespaces":
        return segments[1], segments[2], segments[3], segments[4]
    if len(segments) == 3:
        return None, segments[0], segments[1], segments[2]
    raise NotFound.no_route()


async def _custom(
    request: web.Request, provider: MetricsProvider, version: str, segments: list[str]
) -> web.Response:
    if not segments:
        request[ROUTE] = "discovery"
        _get_only(request)
        return json_response(docs.custom_resource_list(provider.list_custom_metrics(), version))
    namespace, resource_name, name, metric = _custom_path(segments)
    _get_only(request)
    # upstream order: the query's labelSelector (400, parsed for named objects too), then the
    # watch refusal (405), then metricLabelSelector (400), and only then the provider (404)
    selector = _selector(request, "labelSelector", on_metric=False)
    _refuse_watch(request, docs.CUSTOM_GROUP)
    metric_selector = _selector(request, "metricLabelSelector", on_metric=True)
    resource = provider.resolve_resource(resource_name)
    if resource is None or resource.namespaced != (namespace is not None):
        # an unknown resource, or a namespaced one asked without a namespace (and vice versa)
        raise MetricNotFound.for_resource(metric, resource_name)
    try:
        if name == "*":
            request[ROUTE] = "custom_selector"
            values = await provider.custom_metric_by_selector(
                resource,
                metric,
                namespace=namespace,
                selector=selector,
                metric_selector=metric_selector,
            )
        else:
            request[ROUTE] = "custom_object"
            values = [
                await provider.custom_metric_by_name(
                    resource,
                    metric,
                    namespace=namespace,
                    name=name,
                    metric_selector=metric_selector,
                )
            ]
    except MetricNotFound as err:
        raise err.as_requested(resource_name) from err
    return encoded_response(docs.metric_value_list_json(values, version))


async def handle_openapi_v2(request: web.Request) -> web.Response:
    request[ROUTE] = "openapi"
    return json_response(docs.openapi_v2())


async def handle_openapi_v3(request: web.Request) -> web.Response:
    request[ROUTE] = "openapi"
    tail = request.match_info.get("tail", "").strip("/")
    if not tail:
        return json_response(docs.openapi_v3_index())
    parts = tail.split("/")
    if len(parts) == 3 and parts[0] == "apis" and parts[2] in docs.GROUPS.get(parts[1], ()):
        return json_response(docs.openapi_v3_document(parts[1], parts[2]))
    raise NotFound.no_route()


async def handle_version(request: web.Request) -> web.Response:
    request[ROUTE] = "version"
    return json_response(docs.version_info())
