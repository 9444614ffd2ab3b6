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
