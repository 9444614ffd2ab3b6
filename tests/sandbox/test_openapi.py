"""/openapi/v2 and /openapi/v3: upstream's schemas for built-in kinds, the CRDs' own for theirs."""

import copy

import pytest

from sandbox import gnostic, openapi, protobuf
from sandbox.manifests import crd
from sandbox.resources import BUILTIN, Registry

WIDGETS = crd(
    "example.com",
    "Widget",
    schema={
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"size": {"type": "integer", "nullable": True}},
            }
        },
    },
)


def _gvk_schema(doc, group, version, kind, *, section):
    for name, schema in doc[section].items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            if (gvk["group"], gvk["version"], gvk["kind"]) == (group, version, kind):
                return name, schema
    return None, None


@pytest.mark.parametrize("rt", BUILTIN, ids=lambda rt: f"{rt.group or 'core'}/{rt.kind}")
def test_every_builtin_kind_has_upstream_schema_in_its_group_version(rt):
    doc = openapi.group_version(Registry(), rt.group, rt.version)
    name, schema = _gvk_schema(doc["components"], rt.group, rt.version, rt.kind, section="schemas")
    assert name is not None, f"no schema for {rt.kind}"
    assert schema["properties"]["metadata"]["$ref"].startswith("#/components/schemas/")
    # every reference resolves inside the same document, as kubectl explain needs
    text = str(doc)
    for ref in {p.split("'")[0] for p in text.split("#/components/schemas/")[1:]}:
        assert ref in doc["components"]["schemas"], ref


def test_upstream_shapes_are_restored():
    defs = openapi.v2(Registry())["definitions"]
    replicas = defs["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]
    assert replicas["type"] == "integer"
    assert replicas["format"] == "int32"
    assert defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    v3 = openapi.group_version(Registry(), "apps", "v1")["components"]["schemas"]
    assert "type" not in v3["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert "enum" not in defs["io.k8s.api.apps.v1.Deployment"]["properties"]["kind"]
    containers = defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"


async def test_index_links_every_group_version_with_a_hash(sandbox_http):
    status, index = await sandbox_http.request("GET", "/openapi/v3")
    assert status == 200
    assert set(index["paths"]) >= {"api/v1", "apis/apps/v1", "apis/apiextensions.k8s.io/v1"}
    url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
    status, doc = await sandbox_http.request("GET", url)
    assert status == 200
    assert "io.k8s.api.apps.v1.Deployment" in doc["components"]["schemas"]


async def test_crd_schema_is_served_and_follows_changes(sandbox_http):
    base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert (await sandbox_http.request("POST", base, json=WIDGETS))[0] == 201
    status, doc = await sandbox_http.request("GET", "/openapi/v3/apis/example.com/v1")
    assert status == 200
    name, schema = _gvk_schema(doc["components"], "example.com", "v1", "Widget", section="schemas")
    assert name == "com.example.v1.Widget"
    assert schema["properties"]["spec"]["properties"]["size"]["type"] == "integer"
    assert schema["properties"]["metadata"]["$ref"] == (
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    status, current = await sandbox_http.request("GET", base + "/widgets.example.com")
    changed = copy.deepcopy(current)
    props = changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    props["spec"]["properties"]["colour"] = {"type": "string"}
    assert (await sandbox_http.request("PUT", base + "/widgets.example.com", json=changed))[
        0
    ] == 200
    _, doc = await sandbox_http.request("GET", "/openapi/v3/apis/example.com/v1")
    _, schema = _gvk_schema(doc["components"], "example.com", "v1", "Widget", section="schemas")
    assert "colour" in schema["properties"]["spec"]["properties"]
    _, v2 = await sandbox_http.request("GET", "/openapi/v2")
    size = v2["definitions"]["com.example.v1.Widget"]["properties"]["spec"]["properties"]["size"]
    assert "nullable" not in size  # not a v2 keyword
    assert (await sandbox_http.request("DELETE", base + "/widgets.example.com"))[0] == 200
    status, _ = await sandbox_http.request("GET", "/openapi/v3/apis/example.com/v1")
    assert status == 404


def _named(entries):
    out = {}
    for entry in entries:
        kv = protobuf.fields(entry)
        out[kv[1][0].decode()] = kv[2][0]
    return out


def test_v2_protobuf_is_a_gnostic_document():
    raw = openapi.v2_protobuf(Registry())
    doc = protobuf.fields(raw)
    assert doc[1] == [b"2.0"]  # swagger
    definitions = _named(protobuf.fields(doc[9][0])[1])
    schema = protobuf.fields(definitions["io.k8s.api.apps.v1.DeploymentSpec"])
    assert "replicas" in _named(protobuf.fields(schema[25][0])[1])  # properties
    assert schema[19] == [b"selector", b"template"]  # required
    extensions = _named(protobuf.fields(definitions["io.k8s.api.apps.v1.Deployment"])[31])
    yaml_text = protobuf.fields(extensions["x-kubernetes-group-version-kind"])[2][0]
    assert b'"kind": "Deployment"' in yaml_text


@pytest.mark.parametrize(
    ("accept", "content_type"),
    [
        pytest.param(gnostic.MEDIA_TYPE, gnostic.CONTENT_TYPE, id="protobuf"),
        pytest.param("application/json", "application/json", id="json"),
    ],
)
async def test_v2_content_negotiation(sandbox, accept, content_type):
    import ssl

    import aiohttp

    ctx = ssl.create_default_context(cafile=str(sandbox.ca_file))
    headers = {"Authorization": f"Bearer {sandbox.admin_token}", "Accept": accept}
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session,
        session.get(sandbox.url + "/openapi/v2", headers=headers) as resp,
    ):
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith(content_type)
        assert len(await resp.read()) > 100_000
