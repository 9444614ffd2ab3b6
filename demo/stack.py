"""Start the bundle as real processes, register it in the sandbox, and stop it all.

Processes: a real Prometheus, `promscaler-sandbox serve` (the control plane, with
kube-controller-manager's HPA controller),
`promscaler-adapter` (registered through APIServices, authentication and authorization on,
delegated to the sandbox), and `promscaler-autoscaler run`. Each runs in its own process group
and is stopped with SIGTERM (then SIGKILL) on the way out, whatever happened.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sandbox.prometheus import PrometheusServer, free_port

from . import manifests
from .scrape import scrape_programs

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Process:
    """One child process, its log file and how to stop it."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Stack:
    """Everything the demo started, and where it is."""

    workdir: Path
    prometheus: PrometheusServer
    admin_kubeconfig: Path = field(init=False)
    processes: list[Process] = field(default_factory=list)
    # name -> (interpreter, working directory) of a process that runs other code than this
    # tree's (the upgrade test runs the previous release from its own venv); default: this tree
    runtimes: dict[str, tuple[Path, Path]] = field(default_factory=dict)

    def start(self, name: str, args: Sequence[str]) -> Process:
        log = self.workdir / f"{name}.log"
        python, cwd = self.runtimes.get(name, (Path(sys.executable), REPO))
        with log.open("ab") as out:
            popen = subprocess.Popen(
                [str(python), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                start_new_session=True,  # its own process group: we stop it and its children
            )
        proc = Process(name, popen, log)
        self.processes.append(proc)
        return proc

    def check_alive(self) -> None:
        for proc in self.processes:
            if not proc.alive():
                raise RuntimeError(
                    f"{proc.name} exited with {proc.popen.returncode}; its log ends:\n{proc.tail()}"
                )

    def stop(self) -> None:
        for proc in reversed(self.processes):
            proc.stop()
        self.prometheus.close()


async def wait_for(path: Path, *, timeout: float, proc: Process) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited early; its log ends:\n{proc.tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{proc.name} did not write {path} within {timeout}s")
        await asyncio.sleep(0.05)


def write_kubeconfig(path: Path, *, server: str, ca_data: str, token: str, user: str) -> None:
    """A kubeconfig for one user of the sandbox (bearer token)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "sandbox",
                "cluster": {"server": server, "certificate-authority-data": ca_data},
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "sandbox", "user": user}}],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)


@contextlib.asynccontextmanager
async def running_stack(
    workdir: Path, *, pod_ready_delay: float, sync_period: str, hpa_controller: bool = True
) -> AsyncIterator[tuple[Stack, dict[str, Any]]]:
    """Start Prometheus, the sandbox (with kube-controller-manager's HPA controller unless
    `hpa_controller` is False), the adapter and the autoscaler; yield them; stop them."""
    workdir.mkdir(parents=True, exist_ok=True)
    prom_dir = workdir / "prometheus"
    prom_dir.mkdir(exist_ok=True)
    stack = Stack(workdir, PrometheusServer(prom_dir))
    try:
        stack.prometheus.start()
        policy = manifests.sandbox_policy()
        (workdir / "sandbox.yaml").write_text(yaml.safe_dump(policy))
        admin = workdir / "admin.kubeconfig"
        sandbox = stack.start(
            "sandbox",
            [
                "-m", "sandbox", "serve",
                "--port", "0",
                "--kubeconfig", str(admin),
                "--config", str(workdir / "sandbox.yaml"),
                "--dir", str(workdir / "sandbox"),
                "--pod-ready-delay", str(pod_ready_delay),
                *(["--hpa-controller", f"--horizontal-pod-autoscaler-sync-period={sync_period}"]
                  if hpa_controller else []),
                "--nodes", "2",
                f"--prometheus-url={stack.prometheus.url}",  # the simulated cAdvisor's usage
            ],
        )  # fmt: skip
        await wait_for(admin, timeout=20, proc=sandbox)
        stack.admin_kubeconfig = admin
        cluster = yaml.safe_load(admin.read_text())["clusters"][0]["cluster"]
        server, ca_data = cluster["server"], cluster["certificate-authority-data"]
        for user in manifests.USERS:
            write_kubeconfig(
                workdir / f"{user.short}.kubeconfig",
                server=server,
                ca_data=ca_data,
                token=user.token,
                user=user.name,
            )

        adapter_port = free_port()
        ca_pem, cert_path, key_path = manifests.adapter_serving_cert(workdir / "adapter-tls")
        (workdir / "rules.yaml").write_text(manifests.RULES)
        stack.start(
            "adapter",
            [
                "-m", "adapter",
                f"--prometheus-url={stack.prometheus.url}",
                f"--config={workdir / 'rules.yaml'}",
                "--metrics-relist-interval=2s",
                f"--secure-port={adapter_port}",
                f"--tls-cert-file={cert_path}",
                f"--tls-private-key-file={key_path}",
                f"--lister-kubeconfig={workdir / 'adapter.kubeconfig'}",
                f"--authentication-kubeconfig={workdir / 'adapter.kubeconfig'}",
                f"--authorization-kubeconfig={workdir / 'adapter.kubeconfig'}",
                "--cache-ttl=500ms",
                "--batch-window=500ms",  # well under the demo's short sync periods
                "-v=2",
            ],
        )  # fmt: skip
        metrics_port = free_port()
        stack.start(
            "autoscaler",
            [
                "-m", "autoscaler", "run",
                f"--kubeconfig={workdir / 'autoscaler.kubeconfig'}",
                f"--sync-period={sync_period}",
                "--zero-poll-interval=1s",
                f"--metrics-port={metrics_port}",
            ],
        )  # fmt: skip
        scrape_programs(
            stack.prometheus,
            adapter_port=adapter_port,
            autoscaler_port=metrics_port,
            ca_pem=ca_pem,
            token=manifests.USERS[2].token,  # the viewer: may get /metrics
        )
        info = {
            "server": server,
            "adapter_port": adapter_port,
            "ca_bundle": base64.b64encode(ca_pem).decode(),
            "autoscaler_metrics": f"http://127.0.0.1:{metrics_port}/metrics",
        }
        yield stack, info
    finally:
        stack.stop()
