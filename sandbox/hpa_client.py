"""The HPA controller's view of the API server: a small JSON client over HTTPS with a bearer
token, a REST mapper from discovery, and the three metrics APIs read as upstream's metrics
client reads them (`pkg/controller/podautoscaler/metrics/client.go`):

- Resource, ContainerResource: `metrics.k8s.io/v1beta1 namespaces/{ns}/pods?labelSelector=`;
- Pods: `custom.metrics.k8s.io/{v} namespaces/{ns}/pods/*/{metric}?labelSelector=&
  metricLabelSelector=`;
- Object: `custom.metrics.k8s.io/{v} namespaces/{ns}/{resource.group}/{name}/{metric}` (a
  Namespace is root-scoped: `namespaces/{name}/metrics/{metric}`);
- External: `external.metrics.k8s.io/v1beta1 namespaces/{ns}/{metric}?labelSelector=`.

`{v}` is v1beta2 when discovery lists it, else v1beta1 (client-go's versioned custom metrics
client does the same); v1beta1 answers are converted to v1beta2's shape. Every failure becomes
the decision document's `{"error": ...}` entry with upstream's wording.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp

from common.selectors import SelectorError, selector_from_label_selector

Obj = dict[str, Any]
CUSTOM = "custom.metrics.k8s.io"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
RESOURCE = "/apis/metrics.k8s.io/v1beta1"
TIMEOUT = 10.0  # seconds per request; a hung metrics backend must not stall a sync forever


class CallError(Exception):
    """A request failed; `status` is the HTTP status (0: no answer), `message` client-go's
    text (the Status message when the server sent one)."""

    def __init__(self, status: int, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason


def _seg(text: str) -> str:
    return quote(text, safe="")


class ApiClient:
    """JSON over HTTPS to one API server, as one identity."""

    def __init__(self, base_url: str, *, ca_file: Path, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        ctx = ssl.create_default_context(cafile=str(ca_file))
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=ctx),
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=aiohttp.ClientTimeout(total=TIMEOUT),
        )

    async def close(self) -> None:
        await self._session.close()

    async def call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Obj:
        url = self.base_url + path + (f"?{urlencode(dict(query))}" if query else "")
        data = None if body is None else json.dumps(body)
        headers = {"Content-Type": content_type} if body is not None else {}
        try:
            async with self._session.request(method, url, data=data, headers=headers) as resp:
                text = await resp.text()
                status = resp.status
        except (aiohttp.ClientError, OSError, TimeoutError) as err:
            raise CallError(0, f"{method} {path}: {err or type(err).__name__}") from err
        try:
            doc = json.loads(text) if text else {}
        except ValueError:
            doc = {}
        if 200 <= status < 300 and isinstance(doc, dict):
            return doc
        if isinstance(doc, dict) and doc.get("kind") == "Status":
            raise CallError(status, str(doc.get("message", "")), str(doc.get("reason", "")))
        raise CallError(status, f"the server responded with the status code {status}")


@dataclass(frozen=True)
class ResourceMapping:
    """A kind's REST resource at one group version."""

    api_path: str  # /api/v1 or /apis/<group>/<version>
    group: str
    plural: str
    namespaced: bool
    has_scale: bool


class RestMapper:
    """Kind -> resource, from discovery, refreshed when a kind is not found."""

    def __init__(self, api: ApiClient) -> None:
        self._api = api
        self._cache: dict[str, list[Obj]] = {}

    async def find(self, api_version: str, kind: str) -> ResourceMapping | None:
        for fresh in (False, True):
            found = await self._lookup(api_version, kind, fresh=fresh)
            if found is not None:
                return found
        return None

    async def _lookup(self, api_version: str, kind: str, *, fresh: bool) -> ResourceMapping | None:
        api_path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if fresh or api_path not in self._cache:
            doc = await self._api.call("GET", api_path)
            self._cache[api_path] = list(doc.get("resources") or [])
        resources = self._cache[api_path]
        names = {r.get("name") for r in resources}
        for r in resources:
            if r.get("kind") == kind and "/" not in str(r.get("name")):
                plural = str(r["name"])
                group = api_version.rpartition("/")[0] if "/" in api_version else ""
                return ResourceMapping(
                    api_path, group, plural, bool(r.get("namespaced")), f"{plural}/scale" in names
                )
        return None

    async def custom_metrics_version(self) -> str:
        """v1beta2 when the custom metrics API serves it, else v1beta1."""
        try:
            doc = await self._api.call("GET", f"/apis/{CUSTOM}")
        except CallError:
            return "v1beta2"  # unknown: ask for the newest and let the request say why it fails
        versions = {v.get("version") for v in doc.get("versions") or []}
        return "v1beta2" if "v1beta2" in versions or not versions else "v1beta1"


def _metric_selector(identifier: Mapping[str, Any]) -> str:
    try:
        return str(selector_from_label_selector(identifier.get("selector") or {}))
    except SelectorError:
        return ""


def _v1beta1_item(item: Obj) -> Obj:
    """A custom.metrics v1beta1 MetricValue in v1beta2's shape (window -> windowSeconds)."""
    out = {k: v for k, v in item.items() if k not in ("metricName", "window")}
    out["metric"] = {"name": item.get("metricName", "")}
    if item.get("window") is not None:
        out["windowSeconds"] = item["window"]
    return out


class MetricsClient:
    """One decision-document metrics entry per spec metric; never raises."""

    def __init__(self, api: ApiClient, mapper: RestMapper) -> None:
        self._api = api
        self._mapper = mapper

    async def fetch(self, namespace: str, metric: Mapping[str, Any], pod_selector: str) -> Obj:
        kind = str(metric.get("type", ""))
        try:
            if kind in ("Resource", "ContainerResource"):
                return await self._resource(namespace, pod_selector)
            if kind == "Pods":
                return await self._pods(namespace, metric.get("pods") or {}, pod_selector)
            if kind == "Object":
                return await self._object(namespace, metric.get("object") or {})
            if kind == "External":
                return await self._external(namespace, metric.get("external") or {})
        except CallError as err:
            api = {"Object": "custom", "Pods": "custom", "External": "external"}.get(
                kind, "resource"
            )
            return {"error": f"unable to fetch metrics from {api} metrics API: {err.message}"}
        return {"error": f"unknown metric source type {kind!r}"}

    async def _resource(self, ns: str, pod_selector: str) -> Obj:
        path = f"{RESOURCE}/namespaces/{_seg(ns)}/pods"
        doc = await self._api.call("GET", path, query={"labelSelector": pod_selector})
        return {"podMetrics": list(doc.get("items") or [])}

    async def _custom(self, path: str, query: dict[str, str]) -> Obj:
        version = await self._mapper.custom_metrics_version()
        doc = await self._api.call("GET", f"/apis/{CUSTOM}/{version}{path}", query=query)
        items = [i for i in doc.get("items") or [] if isinstance(i, dict)]
        if version == "v1beta1":
            items = [_v1beta1_item(i) for i in items]
        return {"items": items}

    async def _pods(self, ns: str, source: Mapping[str, Any], pod_selector: str) -> Obj:
        identifier = source.get("metric") or {}
        query = {"labelSelector": pod_selector}
        if identifier.get("selector"):
            query["metricLabelSelector"] = _metric_selector(identifier)
        name = _seg(str(identifier.get("name", "")))
        return await self._custom(f"/namespaces/{_seg(ns)}/pods/*/{name}", query)

    async def _object(self, ns: str, source: Mapping[str, Any]) -> Obj:
        identifier = source.get("metric") or {}
        ref = source.get("describedObject") or {}
        query = {}
        if identifier.get("selector"):
            query["metricLabelSelector"] = _metric_selector(identifier)
        name, obj = _seg(str(identifier.get("name", ""))), _seg(str(ref.get("name", "")))
        api_version, kind = str(ref.get("apiVersion") or "v1"), str(ref.get("kind", ""))
        if kind == "Namespace" and api_version == "v1":
            return await self._custom(f"/namespaces/{obj}/metrics/{name}", query)
        found = await self._mapper.find(api_version, kind)
        if found is None:
            raise CallError(404, f'no matches for kind "{kind}" in version "{api_version}"')
        resource = f"{found.plural}.{found.group}" if found.group else found.plural
        return await self._custom(f"/namespaces/{_seg(ns)}/{resource}/{obj}/{name}", query)

    async def _external(self, ns: str, source: Mapping[str, Any]) -> Obj:
        identifier = source.get("metric") or {}
        query = {"labelSelector": _metric_selector(identifier)}
        name = _seg(str(identifier.get("name", "")))
        doc = await self._api.call("GET", f"{EXTERNAL}/namespaces/{_seg(ns)}/{name}", query=query)
        return {"items": [i for i in doc.get("items") or [] if isinstance(i, dict)]}
