"""CustomResourceDefinition manifests that tests, benchmarks and the soak create in the sandbox.

The commonest is a pod-less scalable kind: a custom resource with a `/scale` subresource whose
replicas nothing turns into pods, so N targets cost the sandbox N objects and nothing more.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PRESERVE_UNKNOWN", "crd"]

PRESERVE_UNKNOWN: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
SCALE = {  # the paths every scalable kind here uses, as a Deployment's
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".spec.selector",
}


def crd(
    group: str,
    kind: str,
    *,
    version: str = "v1",
    schema: dict[str, Any] | None = None,
    scale: bool = False,
    status: bool = False,
) -> dict[str, Any]:
    """A namespaced CRD of one served and stored version. `schema` is its openAPIV3Schema (any
    field kept by default); `scale` adds the `/scale` subresource, `status` the `/status` one."""
    plural = kind.lower() + "s"
    subresources: dict[str, Any] = {}
    if status:
        subresources["status"] = {}
    if scale:
        subresources["scale"] = dict(SCALE)
    version_doc: dict[str, Any] = {
        "name": version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema if schema is not None else dict(PRESERVE_UNKNOWN)},
    }
    if subresources:
        version_doc["subresources"] = subresources
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
            "versions": [version_doc],
        },
    }
