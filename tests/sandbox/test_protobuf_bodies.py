"""Protobuf request bodies (k8s\\x00 + runtime.Unknown) decoded from the compact message table."""

import json
import shutil
import struct

import pytest

from sandbox import protobuf, protomessages
from sandbox.gnostic import _bytes, _string, _tag, _varint
from tests.sandbox.test_kubectl import Kubectl

_SCALARS = {
    *("string", "int", "bool", "bytes", "map", "qmap", "bmap", "time", "mtime", "quantity"),
    *("intstr", "double", "json", *protomessages.SCHEMA_OR),
}


def _msg(*parts):
    return b"".join(parts)


def _int(number, value):
    return _tag(number, 0) + _varint(value)


def _envelope(api_version, kind, body):
    type_meta = _string(1, api_version) + _string(2, kind)
    return protobuf.MAGIC + _bytes(1, type_meta) + _bytes(2, body)


def test_every_type_the_table_names_is_described():
    table = protomessages.messages()
    for top in protomessages.KINDS.values():
        assert top in table
    for name, fields in table.items():
        for number, (field, _, kind, _) in fields.items():
            kind = kind.removeprefix("map:")  # map<string, T>
            assert kind in _SCALARS or kind in table, f"{name}.{field}={number}: {kind}"


def test_a_deployment_as_kubectl_create_sends_it():
    labels = _bytes(11, _string(1, "app") + _string(2, "web"))
    meta = _msg(_string(1, "web"), labels, _bytes(8, b""))  # zero creationTimestamp: empty
    container = _msg(
        _string(1, "nginx"),
        _string(2, "nginx:1"),
        _bytes(6, _int(3, 8080) + _string(4, "")),
        _bytes(8, b""),
        _int(16, 0),  # non-pointer zero values are written by Go and dropped here
    )
    template = _msg(_bytes(1, labels), _bytes(2, _bytes(2, container) + _string(3, "")))
    spec = _msg(
        _int(1, 0),  # replicas is a pointer: an explicit 0 stays
        _bytes(2, _bytes(1, _string(1, "app") + _string(2, "web"))),
        _bytes(3, template),
        _bytes(4, _bytes(2, _bytes(1, _int(1, 1) + _string(3, "25%")))),
        _int(5, 0),
    )
    body = _envelope(
        "apps/v1", "Deployment", _msg(_bytes(1, meta), _bytes(2, spec), _bytes(3, b""))
    )
    assert protobuf.decode(body) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1", "ports": [{"containerPort": 8080}]}
                    ]
                },
            },
            "strategy": {"rollingUpdate": {"maxUnavailable": "25%"}},
        },
    }


@pytest.mark.parametrize(
    ("body", "want"),
    [
        pytest.param(
            _int(3, 80) + _bytes(4, _int(2, 8080)), {"port": 80, "targetPort": 8080}, id="int"
        ),
        pytest.param(
            _int(3, 80) + _bytes(4, _int(1, 1) + _string(3, "http")),
            {"port": 80, "targetPort": "http"},
            id="named",
        ),
        pytest.param(
            _int(3, 80) + _int(5, (1 << 64) - 1), {"port": 80, "nodePort": -1}, id="negative"
        ),
    ],
)
def test_service_ports(body, want):
    spec = _bytes(2, _bytes(1, body))
    decoded = protobuf.decode(_envelope("v1", "Service", spec))
    assert decoded["spec"]["ports"] == [want]


def _scale_target(kind, name, api_version):
    return _bytes(1, _string(1, kind) + _string(2, name) + _string(3, api_version))


def test_a_job_as_kubectl_create_job_sends_it():
    container = _msg(_string(1, "j"), _string(2, "busybox"), _bytes(8, b""))
    pod_spec = _bytes(2, container) + _string(3, "Never")
    spec = _msg(_bytes(6, _bytes(1, b"") + _bytes(2, pod_spec)), _int(7, 0))
    body = _envelope("batch/v1", "Job", _msg(_bytes(1, _string(1, "j")), _bytes(2, spec)))
    assert protobuf.decode(body) == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "backoffLimit": 0,  # a pointer: an explicit 0 stays
            "template": {
                "spec": {
                    "containers": [{"name": "j", "image": "busybox"}],
                    "restartPolicy": "Never",
                }
            },
        },
    }


# the same kind's message differs per version: v1 has a CPU target, v2 a metrics list
_HPA_CASES = [
    pytest.param(
        "autoscaling/v1",
        _int(2, 1) + _int(3, 3) + _int(4, 80),
        {"minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 80},
        id="v1",
    ),
    pytest.param(
        "autoscaling/v2",
        _int(2, 0)
        + _int(3, 3)
        + _bytes(
            4,
            _string(1, "Resource")
            + _bytes(4, _string(1, "cpu") + _bytes(2, _string(1, "Utilization") + _int(4, 80))),
        )
        + _bytes(5, _bytes(2, _int(3, 300) + _string(1, "Max"))),
        {
            "minReplicas": 0,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 80},
                    },
                }
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max"}},
        },
        id="v2",
    ),
]


@pytest.mark.parametrize(("api_version", "fields", "want"), _HPA_CASES)
def test_horizontal_pod_autoscalers_per_version(api_version, fields, want):
    spec = _scale_target("Deployment", "web", "apps/v1") + fields
    body = _envelope(api_version, "HorizontalPodAutoscaler", _bytes(2, spec))
    decoded = protobuf.decode(body)
    ref = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
    assert decoded["spec"] == {"scaleTargetRef": ref, **want}


def test_a_v1_hpa_field_is_not_read_with_the_v2_message():
    # field 4 is targetCPUUtilizationPercentage in v1 but the metrics list in v2
    body = _envelope("autoscaling/v2", "HorizontalPodAutoscaler", _bytes(2, _int(4, 80)))
    with pytest.raises(protobuf.ProtobufError):
        protobuf.decode(body)


def test_a_kind_outside_the_table_names_its_version():
    body = _envelope("batch/v1", "CronJob", b"")
    with pytest.raises(protobuf.ProtobufError, match="batch/v1 'CronJob' are not supported"):
        protobuf.decode(body)


def test_a_field_the_table_does_not_know_is_refused_not_dropped():
    spec = _bytes(2, _int(99, 1))
    with pytest.raises(protobuf.ProtobufError, match="field 99 of ServiceSpec is not known"):
        protobuf.decode(_envelope("v1", "Service", spec))


def _ingress_rule(host, path, service, port):
    backend = _bytes(4, _string(1, service) + _bytes(2, _int(2, port)))
    http_path = _string(1, path) + _bytes(2, backend) + _string(3, "Prefix")
    # IngressRule: 1 host, 2 IngressRuleValue (inlined in JSON) {1 http {1 paths}}
    return _string(1, host) + _bytes(2, _bytes(1, _bytes(1, http_path)))


def test_an_ingress_rule_value_is_inlined_in_json():
    spec = _bytes(3, _ingress_rule("example.com", "/api", "web", 80)) + _string(4, "nginx")
    body = _envelope("networking.k8s.io/v1", "Ingress", _bytes(2, spec))
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    assert protobuf.decode(body)["spec"] == {
        "ingressClassName": "nginx",
        "rules": [
            {
                "host": "example.com",
                "http": {"paths": [{"path": "/api", "pathType": "Prefix", "backend": backend}]},
            }
        ],
    }


def test_a_field_unknown_inside_an_inlined_message_is_refused():
    rule = _string(1, "example.com") + _bytes(2, _int(7, 1))
    body = _envelope("networking.k8s.io/v1", "Ingress", _bytes(2, _bytes(3, rule)))
    with pytest.raises(protobuf.ProtobufError, match="field 7 of IngressRuleValue"):
        protobuf.decode(body)


def test_a_persistent_volume_source_is_inlined_and_a_chosen_empty_source_kept():
    # PersistentVolumeSpec: 1 capacity, 2 PersistentVolumeSource (inlined) {3 hostPath {1 path}},
    # 3 accessModes; PodSpec 1 volumes: Volume {1 name, 2 VolumeSource (inlined) {2 emptyDir}}
    capacity = _bytes(1, _string(1, "storage") + _bytes(2, _string(1, "1Gi")))
    spec = capacity + _bytes(2, _bytes(3, _string(1, "/data"))) + _string(3, "ReadWriteOnce")
    pv = protobuf.decode(_envelope("v1", "PersistentVolume", _bytes(2, spec)))
    assert pv["spec"] == {
        "capacity": {"storage": "1Gi"},
        "hostPath": {"path": "/data"},
        "accessModes": ["ReadWriteOnce"],
    }
    volume = _string(1, "scratch") + _bytes(2, _bytes(2, b""))  # emptyDir: {} is a choice
    pod = protobuf.decode(_envelope("v1", "Pod", _bytes(2, _bytes(1, volume))))
    assert pod["spec"]["volumes"] == [{"name": "scratch", "emptyDir": {}}]


def test_a_lease_keeps_its_micro_times():
    # LeaseSpec: 1 holderIdentity, 2 leaseDurationSeconds, 4 renewTime (MicroTime {1 s, 2 ns})
    renew = _int(1, 1_767_225_600) + _int(2, 123_456_000)  # 2026-01-01T00:00:00.123456Z
    spec = _string(1, "me") + _int(2, 15) + _bytes(4, renew)
    lease = protobuf.decode(_envelope("coordination.k8s.io/v1", "Lease", _bytes(2, spec)))
    assert lease["spec"] == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "renewTime": "2026-01-01T00:00:00.123456Z",
    }


def test_a_crd_schema_with_doubles_raw_json_maps_and_or_messages():
    # JSONSchemaProps: 5 type, 8 default (JSON {1 raw}), 11 minimum (double, wire type 1),
    # 24 items (OrArray {2 schemas}), 29 properties (map<string, JSONSchemaProps>),
    # 30 additionalProperties (OrBool {1 allows, 2 schema})
    string = _string(5, "string")
    schema = _msg(
        _string(5, "object"),
        _bytes(8, _bytes(1, b'{"a":"x"}')),
        _tag(11, 1) + struct.pack("<d", -1.5),
        _bytes(24, _bytes(2, string) + _bytes(2, _string(5, "integer"))),
        _bytes(29, _string(1, "a") + _bytes(2, string)),
        _bytes(30, _int(1, 0)),
    )
    version = _string(1, "v1") + _bytes(4, _bytes(1, schema))  # CRDVersion 4 {1 openAPIV3Schema}
    body = _envelope(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", _bytes(2, _bytes(7, version))
    )
    decoded = protobuf.decode(body)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert decoded == {
        "type": "object",
        "default": {"a": "x"},
        "minimum": -1.5,
        "items": [{"type": "string"}, {"type": "integer"}],
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,  # a pointer: false stays
    }


@pytest.mark.parametrize(
    ("body", "match"),
    [
        pytest.param(
            _tag(4, 1) + b"\x00" * 8,
            r"field 4 \(immutable\) of ConfigMap has the wrong wire type",
            id="double-where-a-bool-is",
        ),
        pytest.param(_tag(4, 1) + b"\x00" * 4, "field 4 is truncated", id="cut-double"),
        pytest.param(_tag(9, 5) + b"\x00" * 4, "field 9 has a fixed-width value", id="fixed32"),
        pytest.param(_tag(1, 2) + _varint(50) + b"short", "field 1 is truncated", id="truncated"),
        pytest.param(_tag(1, 0) + b"\x80", "truncated varint", id="cut-varint"),
    ],
)
def test_a_malformed_body_is_refused_not_skipped(body, match):
    with pytest.raises(protobuf.ProtobufError, match=match):
        protobuf.decode(_envelope("v1", "ConfigMap", _bytes(1, _string(1, "c")) + body))


async def test_a_malformed_body_is_a_415_naming_the_field(sandbox_http):
    body = _envelope("v1", "ConfigMap", _bytes(1, _string(1, "c")) + _tag(9, 5) + b"\x00" * 4)
    status, doc = await sandbox_http.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        data=body,
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert (status, doc["reason"]) == (415, "UnsupportedMediaType")
    assert "field 9 has a fixed-width value" in doc["message"]


@pytest.fixture
def kubectl(sandbox, tmp_path):
    return Kubectl(sandbox, tmp_path)


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_the_imperative_creates_that_send_protobuf(kubectl):
    _, out, _ = await kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    assert out == "deployment.apps/web created\n"
    _, out, _ = await kubectl("create", "service", "clusterip", "api", "--tcp=80:8080")
    assert out == "service/api created\n"
    _, out, _ = await kubectl("expose", "deployment", "web", "--port=80", "--target-port=8080")
    assert out == "service/web exposed\n"
    _, out, _ = await kubectl("get", "deployment", "web", "-o", "json")
    spec = json.loads(out)["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert spec["template"]["spec"]["containers"][0]["image"] == "nginx:1"
    _, out, _ = await kubectl("get", "service", "web", "api", "-o", "json")
    services = {s["metadata"]["name"]: s["spec"] for s in json.loads(out)["items"]}
    assert services["web"]["selector"] == {"app": "web"}
    assert services["web"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert services["api"]["ports"][0]["name"] == "80-8080"
    await kubectl("rollout", "status", "deployment/web", "--timeout=20s")


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_job_hpa_rbac_and_pdb_bodies_arrive_whole(kubectl):
    await kubectl("create", "deployment", "web", "--image=nginx:1")
    await kubectl("create", "job", "j", "--image=busybox", "--", "echo", "hi")
    await kubectl("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=60")
    await kubectl("create", "role", "r", "--verb=get,list", "--resource=pods,deployments.apps")
    await kubectl("create", "rolebinding", "rb", "--role=r", "--serviceaccount=default:app")
    await kubectl("create", "pdb", "p", "--selector=app=web", "--min-available=0")
    _, out, _ = await kubectl("get", "job", "j", "-o", "json")
    container = json.loads(out)["spec"]["template"]["spec"]["containers"][0]
    assert (container["image"], container["command"]) == ("busybox", ["echo", "hi"])
    _, out, _ = await kubectl("get", "hpa.v2.autoscaling", "web", "-o", "json")
    spec = json.loads(out)["spec"]
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 5)
    assert spec["scaleTargetRef"] == {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
    assert spec["metrics"][0]["resource"]["target"]["averageUtilization"] == 60
    _, out, _ = await kubectl("get", "role", "r", "-o", "json")
    rules = json.loads(out)["rules"]
    assert {(tuple(r["apiGroups"]), tuple(r["resources"])) for r in rules} == {
        (("",), ("pods",)),
        (("apps",), ("deployments",)),
    }
    _, out, _ = await kubectl("get", "rolebinding", "rb", "-o", "json")
    binding = json.loads(out)
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "app", "namespace": "default"}
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "r",
    }
    _, out, _ = await kubectl("get", "pdb", "p", "-o", "json")
    assert json.loads(out)["spec"]["minAvailable"] == 0  # a pointer: an explicit 0 stays


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_create_ingress_arrives_whole(kubectl):
    await kubectl(
        "create",
        "ingress",
        "web",
        "--class=nginx",
        "--rule=example.com/api*=web:80",
        "--rule=example.com/=web:http,tls=cert",
        "--default-backend=fallback:8080",
    )
    _, out, _ = await kubectl("get", "ingress", "web", "-o", "json")
    spec = json.loads(out)["spec"]
    assert spec["ingressClassName"] == "nginx"
    assert spec["defaultBackend"] == {"service": {"name": "fallback", "port": {"number": 8080}}}
    assert spec["tls"] == [{"hosts": ["example.com"], "secretName": "cert"}]
    paths = [p for rule in spec["rules"] for p in rule["http"]["paths"]]
    assert [(p["path"], p["pathType"], p["backend"]["service"]["port"]) for p in paths] == [
        ("/api", "Prefix", {"number": 80}),
        ("/", "Exact", {"name": "http"}),
    ]
