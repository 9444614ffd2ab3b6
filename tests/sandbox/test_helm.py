"""helm (v3, from .tools/ or PATH) installs, upgrades and uninstalls a chart on the sandbox.

helm keeps releases in Secrets written as protobuf, and creates RBAC objects whose names are
path segments (`x:system:auth-delegator`): both must work here as on a real cluster.
"""

import asyncio
import os
import shutil
from pathlib import Path

import pytest

HELM = shutil.which("helm") or str(Path(__file__).resolve().parents[2] / ".tools" / "helm")
pytestmark = pytest.mark.skipif(not os.access(HELM, os.X_OK), reason="helm is not installed")

TEMPLATES = {
    "sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: {{ .Release.Name }}-sa}\n",
    "rbac.yaml": """apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "{{ .Release.Name }}:system:auth-delegator"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
subjects:
- {kind: ServiceAccount, name: {{ .Release.Name }}-sa, namespace: {{ .Release.Namespace }}}
""",
    "pdb.yaml": """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: {{ .Release.Name }}}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: {{ .Release.Name }}}}}
""",
    "deploy.yaml": """apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      serviceAccountName: {{ .Release.Name }}-sa
      containers: [{name: main, image: nginx}]
""",
}


@pytest.fixture
def chart(tmp_path):
    root = tmp_path / "demo"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (root / "values.yaml").write_text("replicas: 2\n")
    for name, text in TEMPLATES.items():
        (root / "templates" / name).write_text(text)
    return root


async def helm(sandbox, tmp_path, *args):
    env = {
        **os.environ,
        "KUBECONFIG": str(sandbox.kubeconfig),
        "HOME": str(tmp_path),
        "HELM_CACHE_HOME": str(tmp_path / "cache"),
    }
    proc = await asyncio.create_subprocess_exec(
        HELM,
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_install_upgrade_uninstall(sandbox, sandbox_http, chart, tmp_path):
    out = await helm(sandbox, tmp_path, "install", "rel", str(chart), "--wait", "--timeout", "60s")
    assert "STATUS: deployed" in out
    status, deploy = await sandbox_http.request(
        "GET", "/apis/apps/v1/namespaces/default/deployments/rel"
    )
    assert status == 200
    assert deploy["status"]["readyReplicas"] == 2
    status, _ = await sandbox_http.request(
        "GET", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/rel:system:auth-delegator"
    )
    assert status == 200
    _, secrets = await sandbox_http.request(
        "GET", "/api/v1/namespaces/default/secrets?labelSelector=owner%3Dhelm"
    )
    assert [s["metadata"]["labels"]["version"] for s in secrets["items"]] == ["1"]
    await helm(
        sandbox,
        tmp_path,
        "upgrade",
        "rel",
        str(chart),
        "--set",
        "replicas=3",
        "--wait",
        "--timeout",
        "60s",
    )
    _, deploy = await sandbox_http.request(
        "GET", "/apis/apps/v1/namespaces/default/deployments/rel"
    )
    assert deploy["spec"]["replicas"] == 3
    out = await helm(sandbox, tmp_path, "uninstall", "rel")
    assert 'release "rel" uninstalled' in out
    status, _ = await sandbox_http.request(
        "GET", "/apis/apps/v1/namespaces/default/deployments/rel"
    )
    assert status == 404
    _, secrets = await sandbox_http.request(
        "GET", "/api/v1/namespaces/default/secrets?labelSelector=owner%3Dhelm"
    )
    assert secrets["items"] == []
