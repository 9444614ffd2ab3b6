"""The real kubectl reading the sandbox's OpenAPI: v1 Lists, explain, client-side validation."""

import json
import shutil
from pathlib import Path

import pytest

from tests.sandbox.test_kubectl import Kubectl

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

CRD_DIR = Path(__file__).resolve().parents[2] / "charts" / "promscaler" / "crds"


@pytest.fixture
def kubectl(sandbox, tmp_path):
    return Kubectl(sandbox, tmp_path)


def _list(*items):
    return json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": list(items)})


def _configmap(name, **fields):
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **fields}


async def test_apply_of_a_v1_list_as_get_o_json_writes_it(kubectl):
    await kubectl.apply(_list(_configmap("a", data={"x": "1"}), _configmap("b", data={"y": "2"})))
    _, out, _ = await kubectl("get", "configmaps", "-o", "json")
    exported = json.loads(out)
    assert exported["kind"] == "List"
    names = {i["metadata"]["name"] for i in exported["items"]}
    assert {"a", "b"} <= names
    # what `get -o json` wrote applies back
    path = kubectl.tmp / "exported.json"
    path.write_text(out)
    _, out, _ = await kubectl("apply", "-f", str(path))
    assert "configmap/a configured" in out  # the export differs from the last applied one


async def test_a_misspelled_field_in_a_list_fails_client_side_validation(kubectl):
    path = kubectl.tmp / "bad.json"
    path.write_text(_list(_configmap("c", dta={"x": "1"})))
    code, _, err = await kubectl("apply", "-f", str(path), check=False)
    assert code == 1
    assert 'ValidationError(ConfigMap): unknown field "dta" in io.k8s.api.core.v1.ConfigMap' in err
    code, _, _ = await kubectl("get", "configmap", "c", check=False)
    assert code == 1  # nothing was created


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param(
            "deployment.spec.replicas",
            ["KIND:       Deployment", "FIELD: replicas <integer>", "Number of desired pods."],
            id="deployment-replicas",
        ),
        pytest.param(
            "pods.spec.containers.resources.limits",
            ["FIELD: limits <map[string]Quantity>"],
            id="pod-quantity-map",
        ),
        pytest.param(
            "deployment.spec.strategy.rollingUpdate.maxSurge",
            ["FIELD: maxSurge <IntOrString>"],
            id="int-or-string",
        ),
        pytest.param(
            "autoscalers.spec.metrics",
            ["GROUP:      promscaler.dev", "FIELD: metrics <[]Object>", "external\t<Object>"],
            id="autoscaler-metrics",
        ),
    ],
)
async def test_explain(kubectl, path, want):
    await kubectl("apply", "-f", str(CRD_DIR))
    _, out, _ = await kubectl("explain", path)
    for text in want:
        assert text in out


MISSPELLED = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replica: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: main, image: nginx:1, imagePullPolcy: Always}
"""


@pytest.mark.parametrize(
    ("flag", "code", "stderr"),
    [
        pytest.param(
            (),
            1,
            'Error from server (BadRequest): error when creating "{path}": Deployment in version '
            '"v1" cannot be handled as a Deployment: strict decoding error: unknown field '
            '"spec.replica", unknown field "spec.template.spec.containers[0].imagePullPolcy"\n',
            id="default-strict",
        ),
        pytest.param(
            ("--validate=warn",),
            0,
            'Warning: unknown field "spec.replica"\n'
            'Warning: unknown field "spec.template.spec.containers[0].imagePullPolcy"\n',
            id="warn",
        ),
        pytest.param(("--validate=false",), 0, "", id="ignore"),
    ],
)
async def test_apply_of_a_misspelled_field(kubectl, flag, code, stderr):
    path = kubectl.tmp / "web.yaml"
    path.write_text(MISSPELLED)
    got, _, err = await kubectl("apply", "-f", str(path), *flag, check=False)
    assert (got, err) == (code, stderr.format(path=path))
    if code == 0:  # stored without the unknown fields
        _, out, _ = await kubectl("get", "deployment", "web", "-o", "json")
        spec = json.loads(out)["spec"]
        assert "replica" not in spec
        assert spec["replicas"] == 1


async def test_a_misspelled_field_added_by_apply_fails_the_patch(kubectl):
    await kubectl.apply(
        MISSPELLED.replace("replica:", "replicas:").replace("imagePullPolcy", "imagePullPolicy")
    )
    path = kubectl.tmp / "web.yaml"
    path.write_text(MISSPELLED.replace("replica:", "replicas:"))
    code, _, err = await kubectl("apply", "-f", str(path), check=False)
    assert code == 1
    assert err.endswith(
        f'for: "{path}": error when patching "{path}": strict decoding error: unknown field '
        '"spec.template.spec.containers[0].imagePullPolcy"\n'
    )
