"""Wire shapes: metric value lists, discovery documents, OpenAPI and version documents.

Field names and order follow kubernetes/metrics' types (`custom_metrics/v1beta1|v1beta2`,
`external_metrics/v1beta1`) and apimachinery's discovery types.
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from adapter.provider.history import History
from adapter.provider.seams import (
    CustomMetricInfo,
    CustomValues,
    ExternalMetricInfo,
    ExternalMetricValue,
    MetricValue,
    ObjectReference,
)
from adapter.server.encoding import dumps
from common.kubetime import format_time
from common.selectors import Operator, Selector
from common.version import version as package_version

# every answer's items share a time or a few, and successive answers often repeat them: format
# each once (strftime costs more than the rest of an item)
_format_time = lru_cache(maxsize=256)(format_time)

CUSTOM_GROUP = "custom.metrics.k8s.io"
EXTERNAL_GROUP = "external.metrics.k8s.io"
CUSTOM_VERSIONS = ("v1beta2", "v1beta1")  # preferred first, as custom-metrics-apiserver does
EXTERNAL_VERSIONS = ("v1beta1",)
HISTORY_GROUP = "history.promscaler.dev"  # read-only range reads of the rules' metrics
HISTORY_VERSIONS = ("v1alpha1",)
GROUPS = {
    CUSTOM_GROUP: CUSTOM_VERSIONS,
    EXTERNAL_GROUP: EXTERNAL_VERSIONS,
    HISTORY_GROUP: HISTORY_VERSIONS,
}
VERSION = f"v{package_version()}"  # /version: this build, as a Kubernetes component reports its own

_EXPR_OPS = {
    Operator.IN: "In",
    Operator.NOT_IN: "NotIn",
    Operator.NOT_EQUALS: "NotIn",
    Operator.EXISTS: "Exists",
    Operator.DOES_NOT_EXIST: "DoesNotExist",
}


def label_selector(selector: Selector | None) -> dict[str, Any] | None:
    """A Selector as a metav1.LabelSelector (apimachinery's ParseToLabelSelector); None if empty."""
    if selector is None or selector.empty:
        return None
    match_labels: dict[str, str] = {}
    expressions: list[dict[str, Any]] = []
    for req in selector.requirements:
        if req.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS):
            match_labels[req.key] = req.values[0]
        elif req.operator in _EXPR_OPS:
            expr: dict[str, Any] = {"key": req.key, "operator": _EXPR_OPS[req.operator]}
            if req.values:
                expr["values"] = sorted(req.values)
            expressions.append(expr)
    out: dict[str, Any] = {}
    if match_labels:
        out["matchLabels"] = match_labels
    if expressions:
        out["matchExpressions"] = expressions
    return out


def _described(ref: ObjectReference) -> dict[str, str]:
    if ref.namespace:
        return {
            "kind": ref.kind,
            "namespace": ref.namespace,
            "name": ref.name,
            "apiVersion": ref.api_version,
        }
    return {"kind": ref.kind, "name": ref.name, "apiVersion": ref.api_version}


def custom_item(value: MetricValue, version: str, stamp: str | None = None) -> dict[str, Any]:
    """One item; `stamp` is the formatted timestamp when the caller already has it."""
    return _render([value], version, stamp)[0]


def metric_value_list(values: Iterable[MetricValue], version: str) -> dict[str, Any]:
    """The MetricValueList document (the server sends `metric_value_list_json`'s bytes)."""
    return _value_list(_render(values, version), version)


def _value_list(items: list[dict[str, Any]], version: str) -> dict[str, Any]:
    return {
        "kind": "MetricValueList",
        "apiVersion": f"{CUSTOM_GROUP}/{version}",
        "metadata": {},
        "items": items,
    }


def metric_value_list_json(values: Iterable[MetricValue], version: str) -> bytes:
    """`dumps(metric_value_list(values, version))`, sooner for a provider's answer
    (`_answer_json`)."""
    if isinstance(values, CustomValues):
        return _answer_json(values, version)
    return dumps(metric_value_list(values, version))


class _DescribedMemo:
    """`describedObject`s as JSON text by (kind, apiVersion, namespace), then object name: an
    HPA asks for the same objects every sync. At most `limit` in all (about 200 bytes each); when
    full it starts afresh, as `common.memo.remember` does. Not one flat dict with `remember`:
    a key built and hashed per item cost 3% more instructions per wildcard request (2.15 ->
    2.22 M under `bench_adapter_callgrind.py`); here each item is one look-up by name."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._size = 0
        self._groups: dict[tuple[str, str, str], dict[str, str]] = {}

    def group(self, kind: str, api_version: str, namespace: str) -> dict[str, str]:
        """The memo of one kind of object in one namespace, by name (look names up in it)."""
        key = (kind, api_version, namespace)
        found = self._groups.get(key)
        if found is None:
            found = self._groups[key] = {}
        return found

    def add(
        self, group: dict[str, str], kind: str, api_version: str, namespace: str, name: str
    ) -> str:
        """Encode the object `name` of `group` (missing from it) and remember it there."""
        if self._size >= self._limit:  # start afresh; `group` is let go with the rest
            self._groups = {}
            self._size = 0
        self._size += 1
        ref = ObjectReference(kind, name, api_version, namespace)
        # a str decoded from the bytes: nothing of orjson's buffer is kept (`encoding`)
        encoded = group[name] = dumps(_described(ref)).decode()
        return encoded


_DESCRIBED = _DescribedMemo(limit=32_768)


# the JSON text of Quantities by their text: gauges repeat their values from one answer to the
# next, and `dumps` costs more than a look-up (started afresh when full, as `_DescribedMemo`)
_QUANTITY_JSON: dict[str, str] = {}
_QUANTITY_JSON_LIMIT = 8_192


def _quantity_json(quantity: str) -> str:
    found = _QUANTITY_JSON.get(quantity)
    if found is None:
        if len(_QUANTITY_JSON) >= _QUANTITY_JSON_LIMIT:
            _QUANTITY_JSON.clear()
        found = _QUANTITY_JSON[quantity] = dumps(quantity).decode()
    return found


def _answer_json(values: CustomValues, version: str) -> bytes:
    """`dumps(metric_value_list(values, version))` written as text: each item is its described
    object's JSON (`_DESCRIBED`), the text all items of the answer share around its time and
    value, the time's and the Quantity's JSON. Every piece is `dumps`' own (ASCII, with the
    standard library's escapes), so the whole is the bytes `dumps` writes for the document
    (`tests/adapter/test_encoding.py`), without building a dict per item for the encoder to
    walk (a wildcard request over 100 pods: 1.83 M instructions against 1.92 M when its items
    were dicts with encoded fragments, `bench_adapter_callgrind.py`)."""
    kind, space, api_version = values.kind, values.namespace, values.api_version
    metric = dumps(values.metric).decode()
    selector = dumps(label_selector(values.metric_selector)).decode()
    window = values.window_seconds
    if version == "v1beta1":  # the fields in the order of the Go types, as `_render` has them
        before_time = f',"metricName":{metric},"timestamp":'
        after_time = ',"value":' if window is None else f',"window":{window},"value":'
        after_value = f',"selector":{selector}}}'
    else:
        before_time = f',"metric":{{"name":{metric},"selector":{selector}}},"timestamp":'
        after_time = ',"value":' if window is None else f',"windowSeconds":{window},"value":'
        after_value = "}"
    memo = _DESCRIBED.group(kind, api_version, space)
    last: datetime | None = None
    middle = ""
    items: list[str] = []
    add = items.append
    point_of = values.points.get
    for name in values.names:
        point = point_of(name)
        if point is None:
            continue
        when, quantity = point
        if when is not last:  # the points of one answer share their time object
            last = when
            middle = before_time + dumps(_format_time(when)).decode() + after_time
        described = memo.get(name) or _DESCRIBED.add(memo, kind, api_version, space, name)
        add(f'{{"describedObject":{described}{middle}{_quantity_json(quantity)}{after_value}')
    head = f'{{"kind":"MetricValueList","apiVersion":"{CUSTOM_GROUP}/{version}","metadata":{{}}'
    return f'{head},"items":[{",".join(items)}]}}'.encode()


def _render(
    values: Iterable[MetricValue], version: str, stamp: str | None = None
) -> list[dict[str, Any]]:
    """The items of one answer. Those of a wildcard answer share their metric, selector and
    time: what they share is rendered once, when it changes from the item before, and the
    same object is put in each item (the per-item work was a wildcard's largest Python cost)."""
    v1beta1 = version == "v1beta1"
    stamps: dict[datetime, str] = {}
    last: tuple[str, Selector | None] | None = None
    shared: Any = None  # v1beta1: the rendered `selector`; v1beta2: the `metric` object
    items: list[dict[str, Any]] = []
    for ref, metric, when, quantity, window, selector in values:
        if last is None or last[0] != metric or last[1] is not selector:
            last, shared = (metric, selector), label_selector(selector)
            if not v1beta1:
                shared = {"name": metric, "selector": shared}
        text = stamp or stamps.get(when)
        if text is None:
            text = stamps[when] = _format_time(when)
        if v1beta1:
            item: dict[str, Any] = {
                "describedObject": _described(ref),
                "metricName": metric,
                "timestamp": text,
            }
            if window is not None:
                item["window"] = window
            item["value"] = quantity
            item["selector"] = shared
        else:
            item = {"describedObject": _described(ref), "metric": shared, "timestamp": text}
            if window is not None:
                item["windowSeconds"] = window
            item["value"] = quantity
        items.append(item)
    return items


def external_value_list(values: Iterable[ExternalMetricValue]) -> dict[str, Any]:
    items = []
    for v in values:
        item: dict[str, Any] = {
            "metricName": v.metric,
            "metricLabels": dict(v.labels),
            "timestamp": _format_time(v.timestamp),
        }
        if v.window_seconds is not None:
            item["window"] = v.window_seconds
        item["value"] = v.value
        items.append(item)
    return {
        "kind": "ExternalMetricValueList",
        "apiVersion": f"{EXTERNAL_GROUP}/v1beta1",
        "metadata": {},
        "items": items,
    }


def custom_resource_list(metrics: Sequence[CustomMetricInfo], version: str) -> dict[str, Any]:
    resources = [
        {
            "name": info.api_name,
            "singularName": "",
            "namespaced": info.namespaced,
            "kind": "MetricValueList",
            "verbs": ["get"],
        }
        for info in sorted(set(metrics), key=lambda i: i.api_name)
    ]
    return _resource_list(f"{CUSTOM_GROUP}/{version}", resources)


def external_resource_list(metrics: Sequence[ExternalMetricInfo]) -> dict[str, Any]:
    resources = [
        {
            "name": name,
            "singularName": "",
            "namespaced": True,
            "kind": "ExternalMetricValueList",
            "verbs": ["get"],
        }
        for name in sorted({m.metric for m in metrics})
    ]
    return _resource_list(f"{EXTERNAL_GROUP}/v1beta1", resources)


def history_resource_list(
    external: Sequence[ExternalMetricInfo], custom: Sequence[CustomMetricInfo]
) -> dict[str, Any]:
    """The external metrics by name, and the namespaced custom ones as `<resource>/<metric>`
    (an object's history: `namespaces/{ns}/{resource}/{name}/{metric}`)."""
    names = {m.metric for m in external} | {i.api_name for i in custom if i.namespaced}
    resources = [
        {
            "name": name,
            "singularName": "",
            "namespaced": True,
            "kind": "MetricHistory",
            "verbs": ["get"],
        }
        for name in sorted(names)
    ]
    return _resource_list(f"{HISTORY_GROUP}/v1alpha1", resources)


def history(h: History) -> dict[str, Any]:
    """A MetricHistory: the grid of `adapter.provider.history.History`."""
    return {
        "kind": "MetricHistory",
        "apiVersion": f"{HISTORY_GROUP}/v1alpha1",
        "metadata": {},
        "metricName": h.metric,
        "start": h.start,
        "step": h.step,
        "values": h.values,
    }


def _resource_list(group_version: str, resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }


def api_group(name: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in GROUPS[name]]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def api_group_list() -> dict[str, Any]:
    groups = []
    for name in GROUPS:
        group = api_group(name)
        del group["kind"], group["apiVersion"]
        groups.append(group)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def version_info() -> dict[str, str]:
    major, minor = VERSION.lstrip("v").split(".")[:2]
    return {
        "major": major,
        "minor": minor,
        "gitVersion": VERSION,
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "cpython",
        "platform": f"{platform.system().lower()}/{platform.machine()}",
    }


# ---- OpenAPI --------------------------------------------------------------------------------


def _openapi_paths(group: str, version: str) -> dict[str, Any]:
    base = f"/apis/{group}/{version}"
    kind = {EXTERNAL_GROUP: "ExternalMetricValueList", HISTORY_GROUP: "MetricHistory"}.get(
        group, "MetricValueList"
    )
    ok = {"description": "OK"}
    paths: dict[str, Any] = {
        f"{base}/": {
            "get": {
                "operationId": f"getResources{_camel(group, version)}",
                "responses": {"200": ok},
            }
        },
    }
    if group in (EXTERNAL_GROUP, HISTORY_GROUP):
        route = f"{base}/namespaces/{{namespace}}/{{metric}}"
    else:
        route = f"{base}/namespaces/{{namespace}}/{{resource}}/{{name}}/{{metric}}"
    paths[route] = {
        "get": {
            "operationId": f"get{kind}{_camel(group, version)}",
            "responses": {"200": ok},
        }
    }
    if group == HISTORY_GROUP:  # and one object's custom metric
        paths[f"{base}/namespaces/{{namespace}}/{{resource}}/{{name}}/{{metric}}"] = {
            "get": {
                "operationId": f"getObject{kind}{_camel(group, version)}",
                "responses": {"200": ok},
            }
        }
    return paths


def _camel(group: str, version: str) -> str:
    head = group.split(".")[0].capitalize()
    if group == HISTORY_GROUP:
        return f"{head}{version.capitalize()}"
    return f"{head}Metrics{version.capitalize()}"


def openapi_v2() -> dict[str, Any]:
    """A minimal Swagger 2.0 document the aggregator can merge (paths only, no schemas)."""
    paths: dict[str, Any] = {}
    for group, versions in GROUPS.items():
        for version in versions:
            paths.update(_openapi_paths(group, version))
    return {
        "swagger": "2.0",
        "info": {"title": "promscaler-adapter", "version": VERSION},
        "paths": paths,
        "definitions": {},
    }


def openapi_v3_document(group: str, version: str) -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": "promscaler-adapter", "version": VERSION},
        "paths": _openapi_paths(group, version),
        "components": {"schemas": {}},
    }


def openapi_v3_index() -> dict[str, Any]:
    """The /openapi/v3 discovery: one entry per group-version with a content hash."""
    paths = {}
    for group, versions in GROUPS.items():
        for version in versions:
            doc = json.dumps(openapi_v3_document(group, version), sort_keys=True).encode()
            digest = hashlib.sha512(doc).hexdigest()[:32].upper()
            paths[f"apis/{group}/{version}"] = {
                "serverRelativeURL": f"/openapi/v3/apis/{group}/{version}?hash={digest}"
            }
    return {"paths": paths}
