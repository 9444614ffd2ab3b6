"""The container image (`make image`), run as the chart runs it.

Both programs start from the image with the chart's rendered args, securityContext and volumes
(uid 65532, read-only root filesystem, no capabilities, no privilege escalation, the default
seccomp profile, /tmp an emptyDir) and with every shell of the image masked, against the
sandbox and a real Prometheus on the host network; an Autoscaler then scales a Deployment
through the image's adapter (the only adapter registered). What a cluster gives a pod and this
machine does not is passed as extra flags, each named below: a kubeconfig instead of the
ServiceAccount token, the sandbox's front-proxy CA.

Needs podman and the image (`make image-test` builds it first); skipped, with the reason,
without them. `PROMSCALER_IMAGE` names the image (default promscaler:dev).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sandbox.hpa_controller import HpaControllerConfig
from sandbox.prometheus import PrometheusServer, free_port
from sandbox.server import Sandbox, SandboxConfig
from tests.charts.helm import NAMESPACE, ROOT, Helm, find_helm
from tests.controller.stack import (
    FAST,
    HPA_SYNC_PERIOD,
    RULES,
    Stack,
    _register_adapter,
    eventually,
    external_metric,
    target_ref,
)
from tests.support.podrun import SHELLS, podman, run_command

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.sandbox_only("runs the image's programs on this machine, beside the sandbox"),
]

IMAGE = os.environ.get("PROMSCALER_IMAGE", "promscaler:dev")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
MASK = ["--security-opt", "mask=" + ":".join(SHELLS)]  # no shell reachable in the container
CLUSTER_FILES = "/var/run/promscaler-e2e"  # what a cluster would give the pod, mounted here


async def run(*args: str, check: bool = True, timeout: float = 60) -> tuple[int, str]:
    # the sandbox serves from this event loop: never block it with subprocess.run
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    text = out.decode()
    assert not check or proc.returncode == 0, f"{' '.join(args[-4:])}: {text}"
    return proc.returncode or 0, text


@pytest.fixture
async def image() -> dict[str, Any]:
    """The image's configuration (podman image inspect), or a skip saying what is missing."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed: `make image` installs it (as root, from Debian)")
    if find_helm() is None:
        pytest.skip("helm is not installed: `make install`")
    code, out = await run(*podman(), "image", "inspect", IMAGE, check=False)
    if code != 0:
        pytest.skip(f"the image {IMAGE} is not built: `make image`")
    (doc,) = json.loads(out)
    return dict(doc)


def render(values: dict[str, Any]) -> list[dict[str, Any]]:
    binary = find_helm()
    assert binary is not None
    return list(Helm(binary).template(values).objects)


def deployment(objects: list[dict[str, Any]], component: str) -> dict[str, Any]:
    (found,) = [
        o
        for o in objects
        if o["kind"] == "Deployment"
        and o["metadata"]["labels"].get("app.kubernetes.io/component") == component
    ]
    return dict(found["spec"]["template"]["spec"])


async def test_image_user_labels_help_and_the_charts_security_context(image, tmp_path):
    config = image["Config"]
    assert config["User"] == "65532:65532", "numeric, so that runAsNonRoot can verify it"
    assert not config.get("Entrypoint"), "no entrypoint: the first argument picks the program"
    assert config["Cmd"][0] == "promscaler-adapter", "exec form, no shell"
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == VERSION, "make image passes pyproject's"
    assert labels["org.opencontainers.image.title"] == "promscaler"
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    for key in ("description", "source"):
        assert labels[f"org.opencontainers.image.{key}"], key

    objects = render({})
    pod = deployment(objects, "adapter")
    (container,) = pod["containers"]
    base = run_command(
        name=f"e2e-image-{secrets.token_hex(4)}",
        image=IMAGE,
        pod=pod,
        container={**container, "args": []},
        objects=objects,
        staging=tmp_path / "volumes",
        image_user=config["User"],
        extra_flags=MASK,
    )
    # what the process sees: the chart's user, no capabilities, no new privileges, seccomp on,
    # a read-only root, a writable /tmp, and no shell
    probe = (
        "import os, pathlib; s = pathlib.Path('/proc/self/status').read_text();"
        "f = {l.split(':')[0]: l.split(':')[1].strip() for l in s.splitlines()};"
        "print(os.getuid(), os.getgid(), f['CapEff'], f['NoNewPrivs'], f['Seccomp']);"
        "pathlib.Path('/tmp/ok').write_text('x');"
        "print([os.access(p, os.X_OK) for p in " + repr(list(SHELLS)) + "]);"
        "pathlib.Path('/opt/promscaler/x').write_text('x')"
    )
    code, out = await run(*base, "python", "-c", probe, check=False)
    lines = out.splitlines()
    assert code != 0, "the root filesystem must be read-only"
    assert "Read-only file system" in out, out
    assert lines[0] == "65532 65532 0000000000000000 1 2", out
    assert lines[1] == "[False, False, False]", "every shell is masked"

    for argv, usage in [
        (["promscaler-adapter", "--help"], "usage: promscaler-adapter"),
        (["promscaler-autoscaler", "--help"], "usage: promscaler-autoscaler"),
        (["promscaler-autoscaler", "run", "--help"], "usage: promscaler-autoscaler run"),
    ]:
        _, out = await run(*base, *argv)
        assert out.startswith(usage), out[:200]
    # the sandbox is test tooling: not in the image
    code, out = await run(*base, "promscaler-sandbox", "--help", check=False)
    assert code != 0, out


@contextlib.asynccontextmanager
async def container(argv: list[str], *, name: str, log: Path) -> AsyncIterator[None]:
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=asyncio.subprocess.STDOUT
        )
    try:
        yield
    finally:
        await run(*podman(), "stop", "--time", "10", name, check=False)
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        await run(*podman(), "rm", "--force", "--ignore", name, check=False)


def cluster_files(tmp: Path, kubeconfig: Path, front_ca: Path) -> list[str]:
    """The kubeconfig and front-proxy CA, readable by the pod's user (as a projected token is)."""
    where = tmp / "cluster"
    where.mkdir()
    where.chmod(0o755)
    for src, name in [(kubeconfig, "kubeconfig"), (front_ca, "front-proxy-ca.crt")]:
        shutil.copyfile(src, where / name)
        (where / name).chmod(0o644)
    return ["--volume", f"{where}:{CLUSTER_FILES}:ro"]


async def test_an_autoscaler_scales_through_the_images_adapter(image, tmp_path):
    adapter_port, metrics_port = free_port(), free_port()
    (tmp_path / "prometheus").mkdir()
    prom = PrometheusServer(tmp_path / "prometheus")
    prom.start()
    config = SandboxConfig(
        pod_ready_delay=0.2,
        availability_interval=0.5,
        hpa_controller=HpaControllerConfig(sync_period=HPA_SYNC_PERIOD),
    )
    objects = render(
        {
            "prometheus": {"url": prom.url},
            "rules": {"config": RULES},
            "adapter": {
                "securePort": adapter_port,
                "metricsRelistInterval": "1s",
                "batchWindow": "500ms",
                "metricsMaxAge": "30m",
                "extraArgs": [
                    f"--lister-kubeconfig={CLUSTER_FILES}/kubeconfig",
                    "--authentication-skip-lookup",
                    f"--requestheader-client-ca-file={CLUSTER_FILES}/front-proxy-ca.crt",
                    "--authorization-mode=AlwaysAllow",
                ],
            },
            "autoscaler": {
                "syncPeriod": "1s",
                "metricsPort": metrics_port,
                "logFormat": "text",
                "extraArgs": [f"--kubeconfig={CLUSTER_FILES}/kubeconfig"],
            },
        }
    )
    try:
        async with Sandbox(config) as sb:
            from autoscaler.kube import connect

            kube = await connect(str(sb.kubeconfig))
            try:
                await scale_through_the_image(
                    image, tmp_path, sb, kube, prom, objects, adapter_port
                )
            finally:
                await kube.close()
    finally:
        prom.close()


async def scale_through_the_image(image, tmp_path, sb, kube, prom, objects, adapter_port):
    await kube.request(
        "POST",
        "/api/v1/namespaces",
        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
    )  # the release namespace: the controller's leader-election Lease lives there
    mounts = cluster_files(tmp_path, sb.kubeconfig, sb.pki.requestheader_ca_file)
    runs = {}
    for component in ("adapter", "autoscaler"):
        pod = deployment(objects, component)
        (spec,) = pod["containers"]
        name = f"e2e-{component}-{secrets.token_hex(4)}"
        argv = run_command(
            name=name,
            image=IMAGE,
            pod=pod,
            container=spec,
            objects=objects,
            staging=tmp_path / component,
            image_user=image["Config"]["User"],
            extra_flags=[*mounts, *MASK],
        )
        runs[component] = (argv, name, tmp_path / f"{component}.log")
    await _register_adapter(kube, adapter_port)
    st = Stack(sb.kubeconfig, kube, prom, prom.url, tmp=tmp_path)
    await st.apply_crd()
    spec = {
        "scaleTargetRef": target_ref("worker"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [external_metric("jobs")],
        "behavior": {**FAST, "scaleDown": {**FAST["scaleDown"], "stabilizationWindowSeconds": 0}},
    }
    await st.queue("jobs", 55)
    await st.deployment("worker", 1)
    await st.autoscaler("worker", spec)

    async def replicas(want: int) -> bool:
        return await st.replicas("worker") == want

    argv_a, name_a, log_a = runs["adapter"]
    argv_c, name_c, log_c = runs["autoscaler"]
    async with (
        container(argv_a, name=name_a, log=log_a),
        container(argv_c, name=name_c, log=log_c),
    ):
        try:
            # 55 jobs at 10 per pod: 6 replicas; then 12: 2 (the decision core's own answer
            # for these inputs, as e2e/test_autoscaler_scaling.py checks)
            await eventually(lambda: replicas(6), timeout=60, what="6 replicas")
            await st.queue("jobs", 12)
            await eventually(lambda: replicas(2), timeout=30, what="2 replicas")
        except AssertionError as e:
            logs = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in (log_a, log_c))
            raise AssertionError(f"{e}\n{logs}") from e

        # the controller that acted is the image's: its pass left its events and status (an
        # event is recorded after the /scale write it reports, so it may land a moment later)
        async def rescales() -> list[str]:
            events = await st.events("worker")
            return [
                e["message"].split(";")[0] for e in events if e["reason"] == "SuccessfulRescale"
            ]

        async def both_recorded() -> bool:
            return len(await rescales()) >= 2

        await eventually(both_recorded, timeout=10, what="the second rescale's event")
        assert await rescales() == ["New size: 6", "New size: 2"]
        code, out = await run(*podman(), "top", name_c, "user", "args", check=False)
        assert code == 0, out
        assert "65532" in out, out
        assert "promscaler-autoscaler run --leader-elect" in out, out
