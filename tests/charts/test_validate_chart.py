"""scripts/validate-chart.sh: lint, render, yamllint and strict schemas for 1.27-1.37."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.charts.helm import ROOT, Helm

SCRIPT = ROOT / "scripts" / "validate-chart.sh"


def run(*args: str, helm: Helm | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": sys.executable}
    if helm is not None:
        env["HELM"] = helm.binary
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=110,
        check=False,
    )


def test_every_value_set_lints_renders_and_validates(helm: Helm, tmp_path: Path) -> None:
    proc = run(str(tmp_path), helm=helm)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rendered = sorted(p.stem for p in tmp_path.glob("*.yaml"))
    assert rendered == ["certmanager", "default", "everything", "existingsecret", "only-external"]
    out = proc.stdout
    assert "Kubernetes 1.27, 1.28, 1.29, 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36, 1.37" in out
    assert ", 0 failure(s)" in out
    # CRs without a Kubernetes schema are skipped by name, and said so
    for kind in ("Certificate", "Issuer", "ServiceMonitor"):
        assert f" {kind} object(s): custom resource, no schema in Kubernetes" in out


BAD_APISERVICE = """\
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.custom.metrics.k8s.io
spec:
  group: custom.metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerfy: true
"""

UNKNOWN_KIND = """\
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
"""

NOT_YAMLLINT_CLEAN = """\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
data: {a: b,c: d}
"""


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        pytest.param(
            BAD_APISERVICE, "'insecureSkipTLSVerfy' was unexpected", id="unknown-field-strict"
        ),
        pytest.param(
            UNKNOWN_KIND, "no schema for example.com/v1 Widget", id="unknown-kind-is-an-error"
        ),
        pytest.param(NOT_YAMLLINT_CLEAN, "too few spaces after comma", id="yamllint"),
    ],
)
def test_validation_fails_on_a_bad_manifest(tmp_path: Path, manifest: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(manifest)
    proc = run("--manifests", str(path))
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
