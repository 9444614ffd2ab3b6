"""Create/read/update/delete semantics through kubernetes-asyncio's typed clients."""

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException


def configmap(name, data=None, labels=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels), data=data or {"k": "v"}
    )


def deployment(name, replicas=1, labels=None):
    labels = labels or {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="main", image="nginx")]),
            ),
        ),
    )


async def test_create_sets_system_fields_and_get_returns_them(kube_client):
    core = client.CoreV1Api(kube_client)
    created, status, _ = await core.create_namespaced_config_map_with_http_info(
        "default", configmap("c1")
    )
    assert status == 201
    assert created.metadata.uid
    assert created.metadata.creation_timestamp
    assert int(created.metadata.resource_version) > 0
    got = await core.read_namespaced_config_map("c1", "default")
    assert got.metadata.uid == created.metadata.uid
    assert got.data == {"k": "v"}


async def test_resource_versions_increase_globally_and_list_carries_one(kube_client):
    core = client.CoreV1Api(kube_client)
    a = await core.create_namespaced_config_map("default", configmap("a"))
    b = await core.create_namespaced_config_map("kube-system", configmap("b"))
    assert int(b.metadata.resource_version) > int(a.metadata.resource_version)
    listed = await core.list_namespaced_config_map("default")
    assert int(listed.metadata.resource_version) >= int(b.metadata.resource_version)
    assert [c.metadata.name for c in listed.items if c.metadata.name in ("a", "b")] == ["a"]


async def test_create_twice_is_409_already_exists(kube_client):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", configmap("dup"))
    with pytest.raises(ApiException) as err:
        await core.create_namespaced_config_map("default", configmap("dup"))
    assert err.value.status == 409
    assert '"reason":"AlreadyExists"' in err.value.body
    assert 'configmaps \\"dup\\" already exists' in err.value.body


async def test_create_in_missing_namespace_is_404(kube_client):
    with pytest.raises(ApiException) as err:
        await client.CoreV1Api(kube_client).create_namespaced_config_map("nope", configmap("x"))
    assert err.value.status == 404
    assert 'namespaces \\"nope\\" not found' in err.value.body


async def test_get_missing_is_404_status_with_upstream_message(kube_client):
    with pytest.raises(ApiException) as err:
        await client.CoreV1Api(kube_client).read_namespaced_pod("web-1", "default")
    assert err.value.status == 404
    assert 'pods \\"web-1\\" not found' in err.value.body


async def test_update_with_stale_resource_version_is_409_conflict(kube_client):
    core = client.CoreV1Api(kube_client)
    first = await core.create_namespaced_config_map("default", configmap("cm"))
    first.data = {"k": "2"}
    await core.replace_namespaced_config_map("cm", "default", first)
    first.data = {"k": "3"}  # still carries the old resourceVersion
    with pytest.raises(ApiException) as err:
        await core.replace_namespaced_config_map("cm", "default", first)
    assert err.value.status == 409
    assert "the object has been modified" in err.value.body
    assert (await core.read_namespaced_config_map("cm", "default")).data == {"k": "2"}


async def test_generation_bumps_on_spec_change_only(kube_client):
    apps = client.AppsV1Api(kube_client)
    d = await apps.create_namespaced_deployment("default", deployment("web", replicas=0))
    assert d.metadata.generation == 1
    d = await apps.read_namespaced_deployment("web", "default")  # the controller wrote status
    d.metadata.labels = {"team": "a"}
    d = await apps.replace_namespaced_deployment("web", "default", d)
    assert d.metadata.generation == 1
    d.spec.replicas = 0
    d.spec.paused = True
    d = await apps.replace_namespaced_deployment("web", "default", d)
    assert d.metadata.generation == 2


async def test_status_subresource_is_separate_from_spec(kube_client):
    core = client.CoreV1Api(kube_client)
    svc = client.V1Service(
        metadata=client.V1ObjectMeta(name="svc"),
        spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)], selector={"app": "x"}),
    )
    await core.create_namespaced_service("default", svc)
    lb = {"ingress": [{"ip": "1.2.3.4"}]}
    after_status = await core.patch_namespaced_service_status(
        "svc", "default", {"status": {"loadBalancer": lb}, "spec": {"selector": {"app": "y"}}}
    )
    assert after_status.status.load_balancer.ingress[0].ip == "1.2.3.4"
    assert after_status.spec.selector == {"app": "x"}  # spec changes through /status are ignored
    after_main = await core.patch_namespaced_service(
        "svc", "default", {"status": {"loadBalancer": {}}, "spec": {"selector": {"app": "z"}}}
    )
    assert after_main.status.load_balancer.ingress[0].ip == "1.2.3.4"  # status ignored here
    assert after_main.spec.selector == {"app": "z"}


async def test_invalid_object_is_422_with_causes(kube_client):
    bad = deployment("web", labels={"app": "web"})
    bad.spec.template.metadata.labels = {"app": "other"}
    with pytest.raises(ApiException) as err:
        await client.AppsV1Api(kube_client).create_namespaced_deployment("default", bad)
    assert err.value.status == 422
    assert '"reason":"Invalid"' in err.value.body
    assert "spec.template.metadata.labels" in err.value.body


async def test_bad_name_is_422(kube_client):
    with pytest.raises(ApiException) as err:
        await client.CoreV1Api(kube_client).create_namespaced_config_map(
            "default", configmap("Bad_Name")
        )
    assert err.value.status == 422
    assert "RFC 1123" in err.value.body


async def test_generate_name(kube_client):
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="gen-"), data={})
    created = await client.CoreV1Api(kube_client).create_namespaced_config_map("default", cm)
    assert created.metadata.name.startswith("gen-")
    assert len(created.metadata.name) == 9


async def test_delete_returns_status_or_object_as_upstream(sandbox_http):
    await sandbox_http.request(
        "POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}}
    )
    status, body = await sandbox_http.request("DELETE", "/api/v1/namespaces/default/configmaps/c")
    assert status == 200
    assert body["kind"] == "Status"
    assert body["status"] == "Success"
    assert body["details"]["name"] == "c"
    assert body["details"]["kind"] == "configmaps"
    status, body = await sandbox_http.request("DELETE", "/api/v1/namespaces/default/configmaps/c")
    assert status == 404
    assert body["reason"] == "NotFound"


async def test_delete_with_finalizer_marks_then_update_removes(kube_client):
    core = client.CoreV1Api(kube_client)
    cm = configmap("fin")
    cm.metadata.finalizers = ["example.com/hold"]
    await core.create_namespaced_config_map("default", cm)
    await core.delete_namespaced_config_map("fin", "default")
    marked = await core.read_namespaced_config_map("fin", "default")
    assert marked.metadata.deletion_timestamp is not None
    await core.patch_namespaced_config_map("fin", "default", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as err:
        await core.read_namespaced_config_map("fin", "default")
    assert err.value.status == 404


async def test_delete_precondition_mismatch_is_409(kube_client):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", configmap("p"))
    opts = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-the-uid"))
    with pytest.raises(ApiException) as err:
        await core.delete_namespaced_config_map("p", "default", body=opts)
    assert err.value.status == 409
    assert "Precondition failed" in err.value.body


async def test_delete_namespace_deletes_its_objects(kube_client):
    core = client.CoreV1Api(kube_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="tmp")))
    await core.create_namespaced_config_map("tmp", configmap("inside"))
    await core.delete_namespace("tmp")
    assert not [
        c
        for c in (await core.list_config_map_for_all_namespaces()).items
        if c.metadata.namespace == "tmp"
    ]


async def test_all_namespaces_list(kube_client):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", configmap("x1"))
    await core.create_namespaced_config_map("kube-public", configmap("x2"))
    found = {
        (c.metadata.namespace, c.metadata.name)
        for c in (await core.list_config_map_for_all_namespaces()).items
    }
    assert {("default", "x1"), ("kube-public", "x2")} <= found


async def test_dry_run_does_not_persist(kube_client):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", configmap("dry"), dry_run="All")
    with pytest.raises(ApiException) as err:
        await core.read_namespaced_config_map("dry", "default")
    assert err.value.status == 404


async def test_put_creates_endpoints_when_missing(kube_client):
    core = client.CoreV1Api(kube_client)
    ep = client.V1Endpoints(metadata=client.V1ObjectMeta(name="svc"), subsets=[])
    await core.replace_namespaced_endpoints("svc", "default", ep)
    assert (await core.read_namespaced_endpoints("svc", "default")).metadata.name == "svc"


async def test_pod_created_pending_by_api_then_started_by_kubelet(kube_client, sandbox):
    core = client.CoreV1Api(kube_client)
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="solo"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
    )
    created = await core.create_namespaced_pod("default", pod)
    assert created.status.phase == "Pending"


LABELED = {
    "a": {"app": "web", "tier": "front", "n": "3"},
    "b": {"app": "web", "tier": "back", "n": "7"},
    "c": {"app": "db"},
}


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param("app=web", {"a", "b"}, id="equals"),
        pytest.param("app==web", {"a", "b"}, id="double-equals"),
        pytest.param("app!=web", {"c"}, id="not-equals-includes-missing"),
        pytest.param("tier in (front,middle)", {"a"}, id="in"),
        pytest.param("tier notin (front)", {"b", "c"}, id="notin-includes-missing"),
        pytest.param("tier", {"a", "b"}, id="exists"),
        pytest.param("!tier", {"c"}, id="does-not-exist"),
        pytest.param("n>5", {"b"}, id="gt"),
        pytest.param("n<5", {"a"}, id="lt"),
        pytest.param("app=web,tier=back", {"b"}, id="conjunction"),
        pytest.param("", {"a", "b", "c"}, id="empty-selects-all"),
    ],
)
async def test_label_selectors(kube_client, selector, want):
    core = client.CoreV1Api(kube_client)
    for name, labels in LABELED.items():
        await core.create_namespaced_config_map("default", configmap(name, labels=labels))
    got = await core.list_namespaced_config_map("default", label_selector=selector)
    assert {c.metadata.name for c in got.items} - {"kube-root-ca.crt"} == want


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param("metadata.name=a", {("default", "a")}, id="name"),
        pytest.param("metadata.name!=a", {("default", "b"), ("kube-public", "c")}, id="name-not"),
        pytest.param("metadata.namespace=kube-public", {("kube-public", "c")}, id="namespace"),
        pytest.param(
            "metadata.namespace!=default,metadata.name=c", {("kube-public", "c")}, id="both"
        ),
    ],
)
async def test_field_selectors_across_namespaces(kube_client, selector, want):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", configmap("a"))
    await core.create_namespaced_config_map("default", configmap("b"))
    await core.create_namespaced_config_map("kube-public", configmap("c"))
    got = await core.list_config_map_for_all_namespaces(field_selector=selector)
    names = {(c.metadata.namespace, c.metadata.name) for c in got.items}
    names -= {(ns, "extension-apiserver-authentication") for ns in ("kube-system",)}
    assert names == want


async def test_pod_phase_field_selector(kube_client, sandbox):
    core = client.CoreV1Api(kube_client)
    for name in ("p1", "p2"):
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name=name),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
        )
        await core.create_namespaced_pod("default", pod)
    await core.patch_namespaced_pod_status("p2", "default", {"status": {"phase": "Failed"}})
    failed = await core.list_namespaced_pod("default", field_selector="status.phase=Failed")
    assert [p.metadata.name for p in failed.items] == ["p2"]


async def test_table_for_kubectl_get(sandbox_http):
    await sandbox_http.request(
        "POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "t"}}
    )
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    status, table = await sandbox_http.request(
        "GET", "/api/v1/namespaces/default/configmaps", headers={"Accept": accept}
    )
    assert status == 200
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Data",
        "Age",
    ]  # upstream ConfigMap columns
    assert [r["cells"][0] for r in table["rows"]] == ["t"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


async def test_list_pages_with_limit_and_continue(kube_client):
    core = client.CoreV1Api(kube_client)
    for i in range(5):
        await core.create_namespaced_config_map("default", configmap(f"page-{i}"))
    seen, token, pages = [], None, 0
    while True:
        page = await core.list_namespaced_config_map("default", limit=2, _continue=token)
        seen += [c.metadata.name for c in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count == 5 - len(seen)
    assert seen == [f"page-{i}" for i in range(5)]
    assert pages == 3


async def test_bad_continue_token_is_400(sandbox_http):
    status, body = await sandbox_http.request(
        "GET", "/api/v1/namespaces/default/configmaps?limit=1&continue=garbage"
    )
    assert status == 400
    assert body["reason"] == "BadRequest"
