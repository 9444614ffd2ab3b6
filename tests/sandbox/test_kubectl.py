"""The real kubectl (1.32) against the sandbox."""

import asyncio
import json
import shutil

import pytest

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1
        resources:
          requests: {cpu: 100m, memory: 64Mi}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {level: "1"}
"""

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"""


class Kubectl:
    def __init__(self, sandbox, tmp_path):
        self.kubeconfig = str(sandbox.kubeconfig)
        self.tmp = tmp_path

    async def __call__(self, *args, stdin=None, check=True):
        proc = await asyncio.create_subprocess_exec(
            "kubectl",
            "--kubeconfig",
            self.kubeconfig,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else b""), 60)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {err.decode()}")
        return proc.returncode, out.decode(), err.decode()

    async def apply(self, text, *extra):
        path = self.tmp / f"m{abs(hash(text))}.yaml"
        path.write_text(text)
        return await self("apply", "-f", str(path), *extra)


@pytest.fixture
def kubectl(sandbox, tmp_path):
    return Kubectl(sandbox, tmp_path)


async def test_apply_get_reapply(kubectl):
    _, out, _ = await kubectl.apply(MANIFEST)
    assert "deployment.apps/web created" in out
    assert "configmap/settings created" in out
    _, out, _ = await kubectl.apply(
        MANIFEST.replace('level: "1"', 'level: "2"').replace("nginx:1", "nginx:2")
    )
    assert "deployment.apps/web configured" in out
    assert "configmap/settings configured" in out
    _, out, _ = await kubectl("get", "deployment", "web", "-o", "json")
    deploy = json.loads(out)
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert deploy["metadata"]["generation"] == 2
    assert "kubectl.kubernetes.io/last-applied-configuration" in deploy["metadata"]["annotations"]
    _, out, _ = await kubectl("get", "configmap", "settings", "-o", "jsonpath={.data.level}")
    assert out == "2"
    _, out, _ = await kubectl.apply(
        MANIFEST.replace('level: "1"', 'level: "2"').replace("nginx:1", "nginx:2")
    )
    assert "deployment.apps/web unchanged" in out


async def test_apply_removes_a_field_dropped_from_the_manifest(kubectl):
    with_limit = MANIFEST.replace(
        "requests: {cpu: 100m, memory: 64Mi}",
        "requests: {cpu: 100m, memory: 64Mi}\n          limits: {cpu: 200m}",
    )
    await kubectl.apply(with_limit)
    await kubectl.apply(MANIFEST)
    _, out, _ = await kubectl(
        "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].resources}"
    )
    assert json.loads(out) == {"requests": {"cpu": "100m", "memory": "64Mi"}}


async def test_scale_then_wait_for_ready_pods(kubectl):
    await kubectl.apply(MANIFEST)
    _, out, _ = await kubectl("scale", "deployment", "web", "--replicas=5")
    assert "deployment.apps/web scaled" in out
    _, out, _ = await kubectl(
        "wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=30s"
    )
    assert out.count("condition met") == 5
    _, out, _ = await kubectl("get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}")
    assert out == "5"
    _, out, _ = await kubectl("get", "pods", "-l", "app=web")
    assert out.splitlines()[0].split()[:3] == ["NAME", "READY", "STATUS"]
    assert len(out.splitlines()) == 6


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(["-p", '{"data":{"level":"9"}}'], {"level": "9"}, id="strategic"),
        pytest.param(
            ["--type=merge", "-p", '{"data":{"extra":"x"}}'],
            {"level": "1", "extra": "x"},
            id="merge",
        ),
        pytest.param(
            ["--type=json", "-p", '[{"op":"remove","path":"/data/level"}]'], None, id="json"
        ),
    ],
)
async def test_patch(kubectl, args, want):
    await kubectl.apply(MANIFEST)
    await kubectl("patch", "configmap", "settings", *args)
    _, out, _ = await kubectl("get", "configmap", "settings", "-o", "json")
    assert (json.loads(out).get("data") or None) == want


async def test_delete_and_not_found(kubectl):
    await kubectl.apply(MANIFEST)
    _, out, _ = await kubectl("delete", "configmap", "settings")
    assert 'configmap "settings" deleted' in out
    code, _, err = await kubectl("get", "configmap", "settings", check=False)
    assert code == 1
    assert 'configmaps "settings" not found' in err


async def test_get_raw_and_api_resources(kubectl):
    _, out, _ = await kubectl("get", "--raw", "/apis/apps/v1")
    assert json.loads(out)["groupVersion"] == "apps/v1"
    _, out, _ = await kubectl("api-resources")
    rows = {line.split()[0] for line in out.splitlines()[1:]}
    assert {
        "pods",
        "deployments",
        "leases",
        "customresourcedefinitions",
        "apiservices",
        "endpointslices",
    } <= rows
    _, out, _ = await kubectl("api-resources", "--api-group=apps", "-o", "name")
    assert out.split() == [
        "daemonsets.apps",
        "deployments.apps",
        "replicasets.apps",
        "statefulsets.apps",
    ]


async def test_crd_then_custom_resource(kubectl):
    await kubectl.apply(CRD)
    await kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=10s")
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3}\n"
    _, out, _ = await kubectl.apply(widget)
    assert "widget.example.com/w created" in out
    _, out, _ = await kubectl.apply(widget.replace("size: 3", "size: 4"))
    assert "configured" in out
    _, out, _ = await kubectl("get", "wd", "w", "-o", "jsonpath={.spec.size}")
    assert out == "4"
    _, out, _ = await kubectl("get", "widgets")
    header, row = out.splitlines()
    assert header.split() == ["NAME", "SIZE", "READY", "AGE"]
    assert row.split()[:2] == ["w", "4"]  # Ready is absent: an empty cell


async def test_server_side_dry_run_and_auth_can_i(kubectl):
    _, out, _ = await kubectl.apply(MANIFEST, "--dry-run=server")
    assert "(server dry run)" in out
    code, _, _ = await kubectl("get", "deployment", "web", check=False)
    assert code == 1
    _, out, _ = await kubectl("auth", "can-i", "delete", "pods")
    assert out.strip() == "yes"


async def test_invalid_manifest_is_reported(kubectl):
    bad = MANIFEST.replace("labels: {app: web}\n    spec:", "labels: {app: other}\n    spec:")
    code, _, err = await _apply_unchecked(kubectl, bad)
    assert code == 1
    assert "is invalid" in err


async def _apply_unchecked(kubectl, text):
    path = kubectl.tmp / "bad.yaml"
    path.write_text(text)
    return await kubectl("apply", "-f", str(path), check=False)


async def test_imperative_create_sends_protobuf_and_works(kubectl):
    # kubectl's typed clients send these bodies as application/vnd.kubernetes.protobuf
    await kubectl("create", "namespace", "team")
    await kubectl("create", "configmap", "c", "--from-literal=a=b", "-n", "team")
    await kubectl("create", "secret", "generic", "s", "--from-literal=p=q", "-n", "team")
    _, out, _ = await kubectl("get", "configmap", "c", "-n", "team", "-o", "jsonpath={.data}")
    assert json.loads(out) == {"a": "b"}
    _, out, _ = await kubectl("get", "secret", "s", "-n", "team", "-o", "jsonpath={.data.p}")
    assert out == "cQ=="  # base64 of "q"


async def test_rollout_status_and_describe(kubectl):
    await kubectl.apply(MANIFEST)
    _, out, _ = await kubectl("rollout", "status", "deployment/web", "--timeout=20s")
    assert 'deployment "web" successfully rolled out' in out
    _, out, _ = await kubectl("describe", "deployment", "web")
    assert "2 desired | 2 updated | 2 total | 2 available | 0 unavailable" in out


async def test_server_side_apply_approximation(kubectl):
    _, out, _ = await kubectl.apply(MANIFEST, "--server-side")
    assert "deployment.apps/web serverside-applied" in out
    _, out, _ = await kubectl.apply(MANIFEST.replace("replicas: 2", "replicas: 3"), "--server-side")
    assert "serverside-applied" in out
    _, out, _ = await kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
    assert out == "3"


async def test_get_in_chunks(kubectl):
    for i in range(5):
        await kubectl("create", "configmap", f"chunk-{i}")
    _, out, _ = await kubectl("get", "configmaps", "--chunk-size=2", "-o", "name")
    assert out.split() == [f"configmap/chunk-{i}" for i in range(5)]
