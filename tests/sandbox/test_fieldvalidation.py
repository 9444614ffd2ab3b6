"""fieldValidation=Strict|Warn|Ignore on create, update and patch, with kube-apiserver's texts.

The bodies and expected texts follow upstream's integration test (field_validation_test.go).
"""

import json
import ssl
from dataclasses import dataclass

import aiohttp
import pytest

from common.selectors import parse_selector
from sandbox import fieldvalidation
from sandbox.manifests import crd
from sandbox.resources import BUILTIN, ResourceType

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"

INVALID_JSON = """{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "NAME", "unknownMeta": "x", "labels": {"app": "nginx"}},
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{
        "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
        "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}
    }
  }
}"""

INVALID_YAML = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
  unknownMeta: x
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never
"""

VALID = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "NAME"},
    "spec": {
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
        },
    },
}

JSON_FINDINGS = [
    'unknown field "metadata.unknownMeta"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
    'duplicate field "spec.paused"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
]
YAML_LINES = [
    'line 9: key "unknownDupe" already set in map',
    'line 11: key "paused" already set in map',
    'line 23: key "imagePullPolicy" already set in map',
]
YAML_UNKNOWN = [
    'unknown field "metadata.unknownMeta"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
]
DECODE = 'Deployment in version "v1" cannot be handled as a Deployment: '

MERGE_PATCH = """{"spec": {
  "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2",
  "paused": true, "paused": false,
  "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:latest",
    "unknownNested": "val1", "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}"""
PATCH_FINDINGS = [
    'duplicate field "spec.unknownDupe"',
    'duplicate field "spec.paused"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
]
JSON_PATCH = """[
  {"op": "add", "path": "/spec/unknown1", "value": "val1", "foo": "bar"},
  {"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val1"},
  {"op": "add", "path": "/spec/paused", "value": true}
]"""
JSON_PATCH_FINDINGS = [
    'json patch unknown field "[0].foo"',
    'json patch duplicate field "[1].path"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknown3"',
]


@dataclass(frozen=True)
class Case:
    method: str
    body: str
    content_type: str
    directive: str  # "" = parameter absent
    findings: tuple[str, ...]
    strict_prefix: str = ""
    yaml_lines: tuple[str, ...] = ()


def _cases():
    bodies = {
        "json": ("application/json", INVALID_JSON, tuple(JSON_FINDINGS), ()),
        "yaml": ("application/yaml", INVALID_YAML, tuple(YAML_UNKNOWN), tuple(YAML_LINES)),
    }
    for method in ("POST", "PUT"):
        for fmt, (ctype, body, findings, lines) in bodies.items():
            for directive in ("Strict", "Warn", "Ignore", ""):
                case = Case(method, body, ctype, directive, findings, DECODE, lines)
                yield pytest.param(case, id=f"{method}-{fmt}-{directive or 'absent'}")
    patches = {
        "merge": ("application/merge-patch+json", MERGE_PATCH, tuple(PATCH_FINDINGS)),
        "strategic": ("application/strategic-merge-patch+json", MERGE_PATCH, tuple(PATCH_FINDINGS)),
        "json-patch": ("application/json-patch+json", JSON_PATCH, tuple(JSON_PATCH_FINDINGS)),
    }
    for kind, (ctype, body, findings) in patches.items():
        for directive in ("Strict", "Warn", "Ignore", ""):
            case = Case("PATCH", body, ctype, directive, findings)
            yield pytest.param(case, id=f"PATCH-{kind}-{directive or 'absent'}")


async def _send(sandbox, method, path, body, content_type):
    ctx = ssl.create_default_context(cafile=str(sandbox.ca_file))
    headers = {"Authorization": f"Bearer {sandbox.admin_token}", "Content-Type": content_type}
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session,
        session.request(method, sandbox.url + path, data=body, headers=headers) as resp,
    ):
        return resp.status, json.loads(await resp.text()), resp.headers.getall("Warning", [])


@pytest.mark.parametrize("case", list(_cases()))
async def test_field_validation(sandbox, case):
    name = "d"
    if case.method != "POST":
        valid = json.dumps(VALID).replace("NAME", name)
        assert (await _send(sandbox, "POST", DEPLOYMENTS, valid, "application/json"))[0] == 201
    path = DEPLOYMENTS + ("" if case.method == "POST" else f"/{name}")
    if case.directive:
        path += f"?fieldValidation={case.directive}"
    status, body, warnings = await _send(
        sandbox, case.method, path, case.body.replace("NAME", name), case.content_type
    )
    if case.directive == "Strict":
        assert status == 400
        assert body["reason"] == "BadRequest"
        items = list(case.findings)
        if case.yaml_lines:
            lines = "\n".join(f"  {x}" for x in case.yaml_lines)
            items.insert(0, "yaml: unmarshal errors:\n" + lines)
        assert body["message"] == case.strict_prefix + "strict decoding error: " + ", ".join(items)
        return
    assert status in (200, 201), body
    expected = [] if case.directive == "Ignore" else [*case.yaml_lines, *case.findings]
    assert warnings == [fieldvalidation.warning_header(t) for t in expected]
    # unknown fields never reach the store; the known duplicate's last value wins
    spec = body["spec"]
    assert "unknown1" not in spec
    assert "unknownNested" not in spec["template"]["spec"]["containers"][0]
    if "imagePullPolicy" in case.body:
        assert spec["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Never"


async def test_warning_header_is_escaped_as_upstream(sandbox):
    assert fieldvalidation.warning_header('unknown field "a"') == '299 - "unknown field \\"a\\""'


async def test_an_unsupported_directive_is_422(sandbox_http):
    body = json.dumps(VALID).replace("NAME", "x")
    status, out = await sandbox_http.request(
        "POST",
        DEPLOYMENTS + "?fieldValidation=Loud",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    assert status == 422
    assert out["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": '
        'supported values: "Ignore", "Strict", "Warn"'
    )


async def test_custom_resources_report_pruned_fields(sandbox_http):
    widgets = crd(
        "example.com",
        "Widget",
        schema={
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
        },
    )
    base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert (await sandbox_http.request("POST", base, json=widgets))[0] == 201
    widget = '{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},'
    widget += ' "spec": {"size": 1, "size": 2, "colour": "red"}}'
    path = "/apis/example.com/v1/namespaces/default/widgets"
    status, out = await sandbox_http.request(
        "POST",
        path + "?fieldValidation=Strict",
        data=widget,
        headers={"Content-Type": "application/json"},
    )
    assert status == 400
    assert out["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'duplicate field "spec.size", unknown field "spec.colour"'
    )
    status, out = await sandbox_http.request(
        "POST", path, data=widget, headers={"Content-Type": "application/json"}
    )
    assert status == 201
    assert out["spec"] == {"size": 2}


async def test_what_the_sandbox_itself_writes_has_no_unknown_fields(sandbox, kube_client):
    """Its controllers' objects must pass Strict, or `kubectl replace` of them would fail."""
    import asyncio

    valid = json.dumps({**VALID, "spec": {**VALID["spec"], "replicas": 2}}).replace("NAME", "w")
    assert (await _send(sandbox, "POST", DEPLOYMENTS, valid, "application/json"))[0] == 201
    await asyncio.sleep(0.5)  # replicaset, pods, Ready, deployment status
    api = sandbox.rest.api
    checked = 0
    for rt in BUILTIN:
        for obj in api.list(rt, None, labels=parse_selector("")):
            _, findings = fieldvalidation.check(rt, obj, dups={}, document_order=True)
            assert not findings, (rt.kind, findings)
            checked += 1
    assert checked > 5


def _thing_type(spec_fields: list[str]) -> ResourceType:
    props = {f: {"type": "string"} for f in spec_fields}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}
    return ResourceType(
        group="example.com",
        version="v1",
        plural="things",
        kind="Thing",
        namespaced=True,
        custom=True,
        schema=schema,
    )


def _thing(rv: str, **spec: str) -> dict[str, object]:
    meta = {"name": "t", "namespace": "default", "uid": "u-1", "resourceVersion": rv}
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta, "spec": spec}


def test_a_patch_warns_only_of_unknown_fields_it_brings():
    """Fields the stored object already holds are not warned of again, judged under the schema
    served now (a CRD update may have made them unknown); a new stored version without them
    is warned of when a patch brings them back."""
    known_a = _thing_type(["a", "b"])
    stored = _thing("7", a="1", b="2")
    _, unknown = fieldvalidation.unknown_after_patch(
        known_a, stored, _thing("7", a="1", b="3", c="x")
    )
    assert unknown == ['unknown field "spec.c"']
    assert fieldvalidation.unknown_after_patch(known_a, stored, _thing("7", a="9", b="2"))[1] == []
    # the CRD drops `b`: the stored object already holds it, so a patch keeping it is not warned
    # of (what the stored version held was found again under the new schema, not remembered)
    known_a_only = _thing_type(["a"])
    assert known_a_only == known_a  # the same served type: only the schema object differs
    _, unknown = fieldvalidation.unknown_after_patch(
        known_a_only, stored, _thing("7", a="5", b="2")
    )
    assert unknown == []
    # a new stored version without `b`: a patch bringing it back is warned of
    _, unknown = fieldvalidation.unknown_after_patch(
        known_a_only, _thing("8", a="5"), _thing("8", a="5", b="2")
    )
    assert unknown == ['unknown field "spec.b"']
