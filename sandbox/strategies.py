"""Per-type behaviour of the registry: defaults on create, validation, initial status.

These mirror the parts of the upstream registry strategies (`pkg/registry/*/strategy.go`) that
the project's clients can observe; everything else is stored as sent.
"""

from __future__ import annotations

import re
from typing import Any

from common.selectors import (
    SelectorError,
    selector_from_label_selector,
    validate_label_key,
    validate_label_value,
)
from sandbox import kinds, replicaset_ranking, schema
from sandbox.resources import ResourceType

Cause = tuple[str, str, str]

_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used"
    " for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and"
    " must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex"
    " used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
# types whose names must be DNS labels rather than subdomains (upstream ValidateNameFunc)
_LABEL_NAMED = {("", "namespaces"), ("", "services")}
WORKLOADS = {("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets")}


def has_generation(rt: ResourceType) -> bool:
    """Whether metadata.generation is maintained (bumped on spec changes) for this type."""
    return (
        rt.custom
        or rt.key in WORKLOADS
        or rt.key in kinds.WITH_GENERATION
        or rt.key
        in {
            ("apiextensions.k8s.io", "customresourcedefinitions"),
            ("apiregistration.k8s.io", "apiservices"),
        }
    )


def validate_name(rt: ResourceType, name: str) -> list[Cause]:
    if rt.key == ("apiregistration.k8s.io", "apiservices"):
        return []  # "<version>.<group>", and "v1." for the core group: checked by _apiservice
    if rt.group == "rbac.authorization.k8s.io":
        # RBAC names are path segments ("system:auth-delegator"), upstream ValidateRBACName
        bad = name in (".", "..") or "/" in name or "%" in name
        msg = f"Invalid value: \"{name}\": may not be '.' or '..' or contain '/' or '%'"
        return [("FieldValueInvalid", "metadata.name", msg)] if bad else []
    if rt.key in _LABEL_NAMED:
        ok, msg, limit = _LABEL.fullmatch(name), _LABEL_MSG, 63
    else:
        ok, msg, limit = _SUBDOMAIN.fullmatch(name), _SUBDOMAIN_MSG, 253
    if len(name) > limit:
        return [
            (
                "FieldValueInvalid",
                "metadata.name",
                f'Invalid value: "{name}": must be no more than {limit} characters',
            )
        ]
    if not ok:
        return [("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {msg}')]
    return []


def _validate_labels(meta: dict[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        return [("FieldValueTypeInvalid", "metadata.labels", "Invalid value: must be an object")]
    for key, value in labels.items():
        try:
            validate_label_key(str(key))
            if not isinstance(value, str):
                raise SelectorError(f"label value must be a string, not {type(value).__name__}")
            validate_label_value(value)
        except SelectorError as err:
            causes.append(
                ("FieldValueInvalid", "metadata.labels", f'Invalid value: "{value}": {err}')
            )
    return causes


def _containers(spec: Any, path: str) -> list[Cause]:
    if not isinstance(spec, dict) or not spec.get("containers"):
        return [("FieldValueRequired", f"{path}.containers", "Required value")]
    causes: list[Cause] = []
    for i, c in enumerate(spec["containers"]):
        if not isinstance(c, dict) or not c.get("name"):
            causes.append(("FieldValueRequired", f"{path}.containers[{i}].name", "Required value"))
        elif not c.get("image"):
            causes.append(("FieldValueRequired", f"{path}.containers[{i}].image", "Required value"))
    return causes


def _workload(obj: dict[str, Any]) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [("FieldValueRequired", "spec", "Required value")]
    causes: list[Cause] = []
    replicas = spec.get("replicas", 1)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        causes.append(
            (
                "FieldValueInvalid",
                "spec.replicas",
                f"Invalid value: {replicas}: must be greater than or equal to 0",
            )
        )
    if not spec.get("selector"):
        return [*causes, ("FieldValueRequired", "spec.selector", "Required value")]
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    try:
        selector = selector_from_label_selector(spec["selector"])
    except SelectorError as err:
        return [*causes, ("FieldValueInvalid", "spec.selector", f"Invalid value: {err}")]
    if selector.empty:
        causes.append(
            (
                "FieldValueInvalid",
                "spec.selector",
                "Invalid value: empty selector is invalid for deployment",
            )
        )
    elif not selector.matches(labels):
        causes.append(
            (
                "FieldValueInvalid",
                "spec.template.metadata.labels",
                f"Invalid value: {labels}: `selector` does not match template `labels`",
            )
        )
    return [*causes, *_containers(template.get("spec"), "spec.template.spec")]


def _crd(obj: dict[str, Any]) -> list[Cause]:
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    causes: list[Cause] = []
    for field, value in (
        ("spec.group", spec.get("group")),
        ("spec.names.plural", names.get("plural")),
        ("spec.names.kind", names.get("kind")),
    ):
        if not value:
            causes.append(("FieldValueRequired", field, "Required value"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(
            (
                "FieldValueNotSupported",
                "spec.scope",
                (
                    f'Unsupported value: "{spec.get("scope", "")}": supported values: '
                    '"Cluster", "Namespaced"'
                ),
            )
        )
    versions = spec.get("versions") or []
    if not versions:
        causes.append(("FieldValueRequired", "spec.versions", "Required value"))
    elif any(
        not isinstance((v.get("schema") or {}).get("openAPIV3Schema", {}), dict) for v in versions
    ):
        causes.append(
            (
                "FieldValueInvalid",
                "spec.versions[].schema.openAPIV3Schema",
                "Invalid value: must be an object",
            )
        )
    elif sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(
            (
                "FieldValueInvalid",
                "spec.versions",
                "Invalid value: must have exactly one version marked as storage version",
            )
        )
    want = f"{names.get('plural')}.{spec.get('group')}"
    if not causes and obj["metadata"]["name"] != want:
        causes.append(
            (
                "FieldValueInvalid",
                "metadata.name",
                (
                    f'Invalid value: "{obj["metadata"]["name"]}": must be '
                    'spec.names.plural+"."+spec.group'
                ),
            )
        )
    return causes


def _apiservice(obj: dict[str, Any]) -> list[Cause]:
    spec = obj.get("spec") or {}
    want = f"{spec.get('version')}.{spec.get('group')}"
    causes: list[Cause] = []
    if not spec.get("version"):
        causes.append(("FieldValueRequired", "spec.version", "Required value"))
    elif obj["metadata"]["name"] != want:
        causes.append(
            (
                "FieldValueInvalid",
                "metadata.name",
                f'Invalid value: "{obj["metadata"]["name"]}": must be {want}',
            )
        )
    service = spec.get("service")
    if service is not None and not (service.get("name") and service.get("namespace")):
        causes.append(("FieldValueRequired", "spec.service.name", "Required value"))
    if spec.get("caBundle") and spec.get("insecureSkipTLSVerify"):
        causes.append(
            (
                "FieldValueInvalid",
                "spec.insecureSkipTLSVerify",
                "Invalid value: true: may not be true if caBundle is present",
            )
        )
    return causes


def validate(
    rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None = None
) -> list[Cause]:
    """All validation errors of `obj` as (reason, field, message); `old` is the stored object
    an update replaces (a custom resource's schema errors ratchet against it)."""
    causes = validate_name(rt, obj["metadata"]["name"]) + _validate_labels(obj["metadata"])
    if rt.custom:
        causes += schema.validate(rt.schema, obj, old=schema.ABSENT if old is None else old)
    elif rt.key == ("", "pods"):
        causes += _containers(obj.get("spec"), "spec")
        causes += replicaset_ranking.annotation_causes(
            _annotations(obj), None if old is None else _annotations(old)
        )
    elif rt.key in WORKLOADS:
        causes += _workload(obj)
        causes += replicaset_ranking.annotation_causes(
            _annotations(obj, template=True),
            None if old is None else _annotations(old, template=True),
            path="spec.template.annotations",
        )
    elif rt.key in kinds.KEYS:
        causes += kinds.validate(rt.key, obj)
    elif rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
        causes += _crd(obj)
    elif rt.key == ("apiregistration.k8s.io", "apiservices"):
        causes += _apiservice(obj)
    elif rt.key in {("", "configmaps"), ("", "secrets")}:
        for field in ("data", "stringData"):
            data = obj.get(field)
            if data is not None and not (
                isinstance(data, dict) and all(isinstance(v, str) for v in data.values())
            ):
                causes.append(
                    ("FieldValueTypeInvalid", field, "Invalid value: values must be strings")
                )
    return causes


def _annotations(obj: dict[str, Any], *, template: bool = False) -> Any:
    """An object's annotations, or its pod template's (None when absent)."""
    if template:
        spec = obj.get("spec")
        obj = (spec.get("template") if isinstance(spec, dict) else None) or {}
        if not isinstance(obj, dict):
            return None
    meta = obj.get("metadata")
    return meta.get("annotations") if isinstance(meta, dict) else None


def _qos(spec: dict[str, Any]) -> str:
    resources = [c.get("resources") or {} for c in spec.get("containers") or []]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        (r.get("limits") or {}).get(k) is not None
        and (r.get("requests") or {}).get(k, (r.get("limits") or {}).get(k))
        == (r.get("limits") or {}).get(k)
        for r in resources
        for k in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


def prepare_create(rt: ResourceType, obj: dict[str, Any], *, cluster_ip: str) -> dict[str, Any]:
    """Defaults and the initial status of a new object (status sent by the client is dropped)."""
    if rt.status_subresource:
        obj.pop("status", None)
    if rt.custom:
        obj = schema.prune(rt.schema, schema.apply_defaults(rt.schema, obj))
    key = rt.key
    spec = obj.get("spec")
    if key == ("", "namespaces"):
        obj["spec"] = {"finalizers": ["kubernetes"], **(spec or {})}
        obj["status"] = {"phase": "Active"}
    elif key == ("", "pods") and isinstance(spec, dict):
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        for c in spec.get("containers") or []:
            c.setdefault("resources", {})
            c.setdefault("imagePullPolicy", "IfNotPresent")
        obj["status"] = {"phase": "Pending", "qosClass": _qos(spec)}
    elif key in WORKLOADS and isinstance(spec, dict):
        spec.setdefault("replicas", 1)
        if key != ("apps", "replicasets"):  # a ReplicaSet has no revision history
            spec.setdefault("revisionHistoryLimit", 10)
        if key == ("apps", "deployments"):
            spec.setdefault("progressDeadlineSeconds", 600)
            spec.setdefault(
                "strategy",
                {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
            )
        if key == ("apps", "statefulsets"):
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault(
                "updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
            )
        # StatefulSetStatus/ReplicaSetStatus.replicas are not omitempty (clients require them)
        obj["status"] = {} if key == ("apps", "deployments") else {"replicas": 0}
        if key == ("apps", "statefulsets"):
            obj["status"]["availableReplicas"] = 0
    elif key == ("", "services") and isinstance(spec, dict):
        _default_service(spec, cluster_ip)
        obj["status"] = {"loadBalancer": {}}
    elif key == ("", "secrets"):
        obj.setdefault("type", "Opaque")
    elif key in kinds.KEYS:
        obj = kinds.prepare(key, obj, now=obj["metadata"].get("creationTimestamp", ""))
    return obj


def _default_service(spec: dict[str, Any], cluster_ip: str) -> None:
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("clusterIP", cluster_ip)
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))


def field_values(rt: ResourceType, obj: dict[str, Any]) -> dict[str, str]:
    """The values a field selector can match (metadata.* plus the type's extra labels)."""
    meta = obj["metadata"]
    fields = {"metadata.name": meta["name"]}
    if rt.namespaced:
        fields["metadata.namespace"] = meta.get("namespace", "")
    for label in rt.field_labels:
        node: Any = obj
        for part in label.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if label == "source" and isinstance(node, dict):
            node = node.get("component")  # events: `source` selects on source.component
        fields[label] = "" if node is None else str(node)
    return fields
