"""Protobuf request bodies (k8s\\x00 + runtime.Unknown) decoded from the compact message table."""

import json
import shutil

import pytest

from sandbox import protobuf, protomessages
from sandbox.gnostic import _bytes, _string, _tag, _varint
from tests.sandbox.test_kubectl import Kubectl

_SCALARS = {"string", "int", "bool", "bytes", "map", "qmap", "bmap", "time", "quantity", "intstr"}


def _msg(*parts):
    return b"".join(parts)


def _int(number, value):
    return _tag(number, 0) + _varint(value)


def _envelope(api_version, kind, body):
    type_meta = _string(1, api_version) + _string(2, kind)
    return protobuf.MAGIC + _bytes(1, type_meta) + _bytes(2, body)


def test_every_type_the_table_names_is_described():
    table = protomessages.messages()
    for kind in protomessages.KINDS:
        assert kind in table
    for name, fields in table.items():
        for number, (field, _, kind, _) in fields.items():
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


def test_a_field_the_table_does_not_know_is_refused_not_dropped():
    spec = _bytes(2, _int(99, 1))
    with pytest.raises(protobuf.ProtobufError, match="field 99 of ServiceSpec is not known"):
        protobuf.decode(_envelope("v1", "Service", spec))


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
