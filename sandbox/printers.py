"""`kubectl get` columns of built-in kinds, as kube-apiserver's table printers define them.

Column names and cell texts follow upstream's printers (pkg/printers/internalversion) for the
default (non-wide) view; `tables.py` adds Name first and Age last. A kind without an entry
here shows Name and Age only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
Cells = Callable[[Obj], list[Any]]


def _col(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "type": kind, "format": "", "description": "", "priority": 0}


def _parts(obj: Obj) -> tuple[Obj, Obj]:
    return obj.get("spec") or {}, obj.get("status") or {}


def _deployment(obj: Obj) -> list[Any]:
    spec, status = _parts(obj)
    ready = f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}"
    return [ready, status.get("updatedReplicas", 0), status.get("availableReplicas", 0)]


def _replicaset(obj: Obj) -> list[Any]:
    spec, status = _parts(obj)
    return [spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0)]


def _external_ip(spec: Obj, status: Obj) -> str:
    kind = spec.get("type", "ClusterIP")
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    ips = list(spec.get("externalIPs") or [])
    if kind == "LoadBalancer":
        ingress = (status.get("loadBalancer") or {}).get("ingress") or []
        ips += [i.get("ip") or i.get("hostname", "") for i in ingress]
        return ",".join(ips) if ips else "<pending>"
    return ",".join(ips) if ips else "<none>"


def _ports(spec: Obj) -> str:
    texts = []
    for port in spec.get("ports") or []:
        node = f":{port['nodePort']}" if port.get("nodePort") else ""
        texts.append(f"{port.get('port')}{node}/{port.get('protocol', 'TCP')}")
    return ",".join(texts) if texts else "<none>"


def _service(obj: Obj) -> list[Any]:
    spec, status = _parts(obj)
    kind = spec.get("type", "ClusterIP")
    cluster_ip = spec.get("clusterIP") or ("<none>" if kind == "ExternalName" else "None")
    return [kind, cluster_ip, _external_ip(spec, status), _ports(spec)]


def _configmap(obj: Obj) -> list[Any]:
    return [len(obj.get("data") or {}) + len(obj.get("binaryData") or {})]


def _secret(obj: Obj) -> list[Any]:
    return [obj.get("type", ""), len(obj.get("data") or {})]


def _namespace(obj: Obj) -> list[Any]:
    return [(obj.get("status") or {}).get("phase", "")]


COLUMNS: dict[tuple[str, str], tuple[list[dict[str, Any]], Cells]] = {
    ("apps", "deployments"): (
        [_col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer")],
        _deployment,
    ),
    ("apps", "replicasets"): (
        [_col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer")],
        _replicaset,
    ),
    ("", "services"): (
        [_col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)")],
        _service,
    ),
    ("", "configmaps"): ([_col("Data", "integer")], _configmap),
    ("", "secrets"): ([_col("Type"), _col("Data", "integer")], _secret),
    ("", "namespaces"): ([_col("Status")], _namespace),
}
