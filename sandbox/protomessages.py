"""Kubernetes protobuf messages decoded from a compact table of k8s.io/api's generated.proto.

The table is `prototable.TABLE`, one line per message: `Name: field=N ...`, where `field=N` is a
string, `field=N*` a repeated string, `field=N:T` a value of type T and `field=N*:T` a repeated
one. Go's generated code writes every non-pointer field, zero or not, so zero values and empty
messages are dropped as JSON's omitempty would; `field=N?` marks a pointer field, whose zero is a
value and kept. T is a message of this table, or one of: `int` (int32/int64 varint), `bool`,
`bytes` (base64 in JSON), `map` (map<string,string>), `qmap` (map<string,Quantity>), `bmap`
(map<string,bytes>), `time` (meta/v1 Time, RFC 3339 in JSON), `mtime` (meta/v1 MicroTime, six
fractional digits), `quantity`, `intstr`, `double` (wire type 1), `json` (apiextensions JSON: its
raw JSON text), `map:T` (map<string,T>), and `schemaOrArray`, `schemaOrBool`, `schemaOrStrings`
(JSONSchemaProps or a list, a bool or strings, as their JSON has it). A field number the table does
not have is an error (415), never dropped in silence. Field numbers are facts from upstream's
generated.proto files; add a kind by adding its messages and an entry in `KINDS`, keyed by
apiVersion and kind. `...=N:T` inlines message T at field N: Go's `json:",inline"` struct, whose
JSON fields sit in the parent's object while protobuf nests them (IngressRule's IngressRuleValue, a
PersistentVolumeSpec's PersistentVolumeSource, a Volume's VolumeSource). A message whose fields
differ per version gets a version in its name (`HPAv1`, `HPAv2`); the rest are shared (ObjectMeta,
LabelSelector, PodTemplateSpec...).
"""

from __future__ import annotations

import base64
import functools
import json
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from common.kubetime import format_micro_time, format_time
from sandbox.prototable import TABLE

# the bodies this table decodes: (apiVersion, kind) -> top message; keyed by apiVersion because
# a kind's message can differ per version (autoscaling/v1 and v2 HorizontalPodAutoscaler)
KINDS: dict[tuple[str, str], str] = {
    ("apps/v1", "Deployment"): "Deployment",
    ("v1", "Pod"): "Pod",
    ("v1", "Service"): "Service",
    ("v1", "Namespace"): "Namespace",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("batch/v1", "Job"): "Job",
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "HPAv1",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HPAv2",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("rbac.authorization.k8s.io/v1", "Role"): "Role",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "ClusterRole",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "RoleBinding",  # the same fields
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
    ("apps/v1", "DaemonSet"): "DaemonSet",
    ("v1", "Node"): "Node",
    ("v1", "Endpoints"): "Endpoints",
    ("v1", "Event"): "Event",
    ("v1", "PersistentVolume"): "PersistentVolume",
    ("v1", "PersistentVolumeClaim"): "PersistentVolumeClaim",
    ("discovery.k8s.io/v1", "EndpointSlice"): "EndpointSlice",
    ("events.k8s.io/v1", "Event"): "EventsV1Event",
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    ("apiregistration.k8s.io/v1", "APIService"): "APIService",
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): "CustomResourceDefinition",
}


def message_for(api_version: str, kind: str) -> str | None:
    """The table's top message for a body of this apiVersion and kind, if it has one."""
    return KINDS.get((api_version, kind))


Field = tuple[str, bool, str, bool]  # (JSON name, repeated, type, zero is a value)
INLINE = "..."  # the JSON name of an inlined message's field
_ZERO: tuple[Any, ...] = ("", 0, False, None, {})
_VARINTS = ("int", "bool")  # wire type 0; every other type is length-delimited (wire type 2)


class BadField(ValueError):
    """A field the table cannot read: a number it does not describe, or the wrong wire type."""


class UnknownField(BadField):
    """A field number the table does not describe."""


@functools.cache
def messages() -> dict[str, dict[int, Field]]:
    found: dict[str, dict[int, Field]] = {}
    current = ""
    for line in TABLE.strip().splitlines():
        if not line.startswith(" "):
            current, _, line = line.partition(":")
            found[current] = {}
        for item in line.split():
            name, _, rest = item.partition("=")
            number, _, kind = rest.partition(":")
            repeated, pointer = number.endswith("*"), number.endswith("?")
            found[current][int(number.rstrip("*?"))] = (name, repeated, kind or "string", pointer)
    return found


class Fixed64(bytes):
    """The eight bytes of a wire-type-1 value (a double), told apart from a length-delimited one."""


Raw = dict[int, list[bytes | int]]
# the JSON shapes of apiextensions' "or" messages: a schema, or a list / a bool / strings
SCHEMA_OR = ("schemaOrArray", "schemaOrBool", "schemaOrStrings")


def is_map(kind: str) -> bool:
    """map<string,string>, map<string,Quantity>, map<string,bytes>, or `map:T` (map<string,T>)."""
    return kind in ("map", "qmap", "bmap") or kind.startswith("map:")


def _wire(value: bytes | int) -> int:
    return 0 if isinstance(value, int) else 1 if isinstance(value, Fixed64) else 2


def _wire_of(kind: str) -> int:
    return 0 if kind in _VARINTS else 1 if kind == "double" else 2


def decode_message(name: str, raw: Raw, fields_of: Any) -> dict[str, Any]:
    """A parsed message (field number -> raw values) as its JSON object."""
    table = messages()[name]
    out: dict[str, Any] = {}
    for number, values in raw.items():
        if number not in table:
            raise UnknownField(f"field {number} of {name} is not known to the sandbox")
        field, repeated, kind, pointer = table[number]
        if any(_wire(v) != _wire_of(kind) for v in values):
            raise BadField(f"field {number} ({field}) of {name} has the wrong wire type")
        decoded = [_value(kind, v, fields_of) for v in values]
        if field == INLINE:  # the inlined message's fields belong to this object in JSON
            out.update(decoded[-1])
            continue
        if is_map(kind):
            value: Any = {k: v for item in decoded for k, v in item.items()}
        else:
            value = decoded if repeated else decoded[-1]
        if pointer or not any(value == zero and type(value) is type(zero) for zero in _ZERO):
            out[field] = value
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: bytes | int) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _value(kind: str, value: bytes | int, fields_of: Any) -> Any:
    if kind == "string":
        return _text(value)
    if kind == "int":
        return _signed(value) if isinstance(value, int) else 0
    if kind == "bool":
        return bool(value)
    if kind == "bytes":
        return base64.b64encode(value if isinstance(value, bytes) else b"").decode()
    if kind == "double":  # little-endian IEEE 754; Go's JSON writes a whole one without ".0"
        number = struct.unpack("<d", value if isinstance(value, bytes) else b"\0" * 8)[0]
        return int(number) if number.is_integer() else number
    msg = fields_of(value if isinstance(value, bytes) else b"")
    return _special(kind, msg, fields_of)


def _special(kind: str, msg: Raw, fields_of: Any) -> Any:
    if is_map(kind):  # map entry: 1 key, 2 value
        inner = {"map": "string", "qmap": "quantity", "bmap": "bytes"}.get(kind, kind[4:])
        value = msg.get(2, [b""])[-1]
        return {_text(msg.get(1, [b""])[-1]): _value(inner, value, fields_of)}
    if kind == "quantity":  # resource.Quantity: 1 string
        return _text(msg.get(1, [b""])[-1])
    if kind == "intstr":  # IntOrString: 1 type (0 int, 1 string), 2 intVal, 3 strVal
        if msg.get(1, [0])[-1] == 1:
            return _text(msg.get(3, [b""])[-1])
        number = msg.get(2, [0])[-1]
        return _signed(number) if isinstance(number, int) else 0
    if kind in ("time", "mtime"):  # meta/v1 Time and MicroTime: 1 seconds, 2 nanos
        if not msg:
            return None  # the zero time is written as an empty message
        instant = datetime.fromtimestamp(int(msg.get(1, [0])[-1]), UTC)
        if kind == "time":
            return format_time(instant)  # JSON has whole seconds: the nanos are dropped
        return format_micro_time(instant + timedelta(microseconds=int(msg.get(2, [0])[-1]) // 1000))
    if kind == "json":  # apiextensions JSON: 1 raw, the value's JSON text
        return json.loads(_text(msg.get(1, [b"null"])[-1]))
    if kind in SCHEMA_OR:
        return _schema_or(kind, msg, fields_of)
    return decode_message(kind, msg, fields_of)


def _schema_or(kind: str, msg: Raw, fields_of: Any) -> Any:
    """JSONSchemaPropsOr{Array,Bool,StringArray} as their JSON: the schema, or the other form."""
    schema = _value("JSONSchemaProps", msg[1][-1], fields_of) if 1 in msg else None
    if kind == "schemaOrBool":  # 1 allows, 2 schema
        schema = _value("JSONSchemaProps", msg[2][-1], fields_of) if 2 in msg else None
        return schema if schema is not None else bool(msg.get(1, [0])[-1])
    if schema is not None:  # OrArray and OrStringArray: 1 schema, 2 the list
        return schema
    inner = "JSONSchemaProps" if kind == "schemaOrArray" else "string"
    return [_value(inner, v, fields_of) for v in msg.get(2, [])]
