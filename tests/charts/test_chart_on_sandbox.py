"""The rendered chart against our sandbox API server, through the real kubectl and helm.

Every kind the chart renders must be accepted (the test fails if the chart starts rendering a
kind the sandbox lacks), except custom resources of CRDs the sandbox does not have
(ServiceMonitor, cert-manager's Certificate and Issuer). `helm install` runs for real too.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox import Sandbox
from tests.charts.helm import CHART, RELEASE, Helm

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


async def run(*args: str) -> str:
    # the sandbox serves from this event loop: never block it with subprocess.run
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, f"{args[:3]}: {err.decode()}"
    return out.decode()


async def kubectl(sb: Sandbox, *args: str) -> str:
    return await run("kubectl", "--kubeconfig", str(sb.kubeconfig), *args)


async def render(helm: Helm, sb: Sandbox, namespace: str, *extra: str) -> list[dict[str, Any]]:
    text = await run(
        helm.binary, "template", RELEASE, str(CHART), "--namespace", namespace,
        "--include-crds", "--kubeconfig", str(sb.kubeconfig), *extra,
    )  # fmt: skip
    return [d for d in yaml.safe_load_all(text) if d]


async def apply(sb: Sandbox, objects: list[dict[str, Any]], tmp_path: Path) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return await kubectl(sb, "apply", "-f", str(path))


async def create_namespace(sb: Sandbox, name: str, tmp_path: Path) -> None:
    await apply(
        sb, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}], tmp_path
    )


def of(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize(
    "values",
    [
        pytest.param((), id="default"),
        pytest.param(("--values", str(CHART / "ci/only-external-values.yaml")), id="only-external"),
        pytest.param(("--values", str(CHART / "ci/everything-values.yaml")), id="everything"),
    ],
)
async def test_the_sandbox_accepts_the_rendered_objects(
    sandbox: Sandbox, helm: Helm, tmp_path: Path, values: tuple[str, ...]
) -> None:
    await create_namespace(sandbox, "monitoring", tmp_path)
    objects = await render(helm, sandbox, "monitoring", *values)
    # CRs whose CRDs the sandbox lacks
    custom = {"ServiceMonitor", "PrometheusRule", "Certificate", "Issuer"}
    # any other kind the sandbox does not serve makes kubectl apply fail
    servable = [o for o in objects if o["kind"] not in custom]
    out = await apply(sandbox, servable, tmp_path)
    created = {line.split("/", 1)[1].removesuffix(" created") for line in out.splitlines()}
    assert created == {o["metadata"]["name"] for o in servable}, out

    got = json.loads(await kubectl(sandbox, "get", "apiservices", "-o", "json"))["items"]
    ours = {a["metadata"]["name"]: a for a in got if a["spec"].get("service")}
    assert set(ours) == {a["metadata"]["name"] for a in of(objects, "APIService")}
    for rendered in of(objects, "APIService"):
        stored = ours[rendered["metadata"]["name"]]
        assert stored["spec"]["caBundle"] == rendered["spec"]["caBundle"]
        assert not stored["spec"].get("insecureSkipTLSVerify")

    # delegated auth and the metrics readers, as an aggregated API server needs them
    bindings = json.loads(await kubectl(sandbox, "get", "clusterrolebindings", "-o", "json"))
    roles = {b["roleRef"]["name"] for b in bindings["items"]}
    assert "system:auth-delegator" in roles
    readers = json.loads(
        await kubectl(sandbox, "get", "rolebindings", "-n", "kube-system", "-o", "json")
    )
    assert "extension-apiserver-authentication-reader" in {
        b["roleRef"]["name"] for b in readers["items"]
    }
    crd = json.loads(
        await kubectl(sandbox, "get", "crd", "autoscalers.promscaler.dev", "-o", "json")
    )
    assert {c["type"]: c["status"] for c in crd["status"]["conditions"]}["Established"] == "True"

    deployments = json.loads(
        await kubectl(sandbox, "get", "deployments", "-n", "monitoring", "-o", "json")
    )
    assert sorted(d["metadata"]["name"] for d in deployments["items"]) == sorted(
        d["metadata"]["name"] for d in of(objects, "Deployment")
    )


async def test_upgrade_keeps_the_generated_certificate(
    sandbox: Sandbox, helm: Helm, tmp_path: Path
) -> None:
    await create_namespace(sandbox, "monitoring", tmp_path)
    first = await render(helm, sandbox, "monitoring", "--dry-run=server")
    (secret,) = of(first, "Secret")
    await apply(sandbox, [secret], tmp_path)

    # what `helm upgrade` renders: lookup finds the Secret and keeps it
    second = await render(helm, sandbox, "monitoring", "--dry-run=server")
    assert of(second, "Secret")[0]["data"] == secret["data"]
    for api in of(second, "APIService"):
        assert api["spec"]["caBundle"] == secret["data"]["ca.crt"]
    ca = base64.b64decode(secret["data"]["ca.crt"])
    assert ca.startswith(b"-----BEGIN CERTIFICATE-----")

    # another namespace has no Secret yet: a fresh CA
    await create_namespace(sandbox, "elsewhere", tmp_path)
    fresh = await render(helm, sandbox, "elsewhere", "--dry-run=server")
    assert of(fresh, "Secret")[0]["data"]["ca.crt"] != secret["data"]["ca.crt"]


async def test_helm_install_and_uninstall(sandbox: Sandbox, helm: Helm) -> None:
    kube = ("--kubeconfig", str(sandbox.kubeconfig))
    await run(
        helm.binary, "install", RELEASE, str(CHART), "--namespace", "monitoring",
        "--create-namespace", "--wait", "--timeout", "60s", *kube,
    )  # fmt: skip
    apiservices = json.loads(await kubectl(sandbox, "get", "apiservices", "-o", "json"))
    ours = [a for a in apiservices["items"] if a["spec"].get("service")]
    assert {a["metadata"]["name"] for a in ours} == {
        "v1beta1.custom.metrics.k8s.io",
        "v1beta2.custom.metrics.k8s.io",
        "v1beta1.external.metrics.k8s.io",
        "v1alpha1.history.promscaler.dev",
    }
    status = await run(helm.binary, "status", RELEASE, "--namespace", "monitoring", *kube)
    assert "STATUS: deployed" in status
    await run(helm.binary, "uninstall", RELEASE, "--namespace", "monitoring", "--wait", *kube)
    apiservices = json.loads(await kubectl(sandbox, "get", "apiservices", "-o", "json"))
    assert not [a for a in apiservices["items"] if a["spec"].get("service")]


def notes_commands(output: str) -> list[list[str]]:
    notes = output.split("\nNOTES:\n", 1)[1]
    return [line.split() for line in notes.splitlines() if line.strip().startswith("kubectl ")]


@pytest.mark.parametrize(
    ("values", "groups"),
    [
        pytest.param((), ("custom.metrics.k8s.io", "external.metrics.k8s.io"), id="default"),
        pytest.param(
            ("--values", str(CHART / "ci/only-external-values.yaml")),
            ("external.metrics.k8s.io",),
            id="only-external",
        ),
    ],
)
async def test_notes_give_first_commands_that_work(
    sandbox: Sandbox, helm: Helm, tmp_path: Path, values: tuple[str, ...], groups: tuple[str, ...]
) -> None:
    output = await run(
        helm.binary, "install", RELEASE, str(CHART), "--namespace", "default", "--dry-run=server",
        "--kubeconfig", str(sandbox.kubeconfig), *values,
    )  # fmt: skip
    commands = notes_commands(output)
    raw = {c[-1].strip('"') for c in commands if c[:3] == ["kubectl", "get", "--raw"]}
    for group in ("custom.metrics.k8s.io", "external.metrics.k8s.io"):
        listed = any(path.startswith(f"/apis/{group}/") for path in raw)
        assert listed == (group in groups), (group, raw)

    # once the objects are in, the notes' object commands run as written
    manifest = output.split("\nNOTES:\n")[0].split("MANIFEST:\n")[1]
    # a dry run installs no CRD: apply crds/ as `helm install` would before the rest
    crds = [d for f in sorted(CHART.glob("crds/*.yaml")) for d in yaml.safe_load_all(f.read_text())]
    await apply(sandbox, [d for d in (*crds, *yaml.safe_load_all(manifest)) if d], tmp_path)
    runnable = [
        c
        for c in commands
        if c[:3] in (["kubectl", "get", "apiservices"], ["kubectl", "get", "pas"])
    ]
    for command in runnable:
        out = await kubectl(sandbox, *command[1:])
        for name in (w for w in command[3:] if not w.startswith("-")):
            assert name in out
    wanted = {"apiservices", "pas"} if "--values" not in values else {"apiservices"}
    assert {c[2] for c in runnable} == wanted
