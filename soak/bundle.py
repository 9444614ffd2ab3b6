"""The soak's processes: the sandbox (with a state file, so it can be restarted), two adapter
replicas behind one APIService, two autoscaler replicas with leader election and a decision
log each. Prometheus is the real one; the adapters read it through the fault proxy.

Each replica runs as its own user (token) so the sandbox's audit of /scale writes tells the
autoscaler replicas apart. `kill()` is SIGKILL; `restart()` starts the same command again.
"""

from __future__ import annotations

import base64
import copy
import secrets
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from demo import manifests
from demo.stack import Process, Stack, wait_for, write_kubeconfig
from sandbox.prometheus import free_port

from . import fleet

__all__ = ["Bundle", "Timing"]

AUTOSCALER_USERS = tuple(f"system:serviceaccount:promscaler:autoscaler-{i}" for i in range(2))
ADAPTER_USERS = tuple(f"system:serviceaccount:promscaler:adapter-{i}" for i in range(2))


@dataclass(frozen=True)
class Timing:
    # seconds; the autoscalers' --sync-period: a few hundred Autoscalers on a shared 2-core
    # machine pass about 10-20 times a second, so each comes round every ~10 s
    sync_period: float = 10.0
    workers: int = 16  # the autoscalers' --workers: passes wait on the metrics APIs
    lease_duration: float = 6.0  # seconds; short, so a failover is seen within the run
    renew_deadline: float = 4.0
    retry_period: float = 1.0
    prometheus_timeout: float = 2.0  # seconds; the adapters' --prometheus-timeout


def policy() -> dict[str, Any]:
    """The demo's users and rules, with one user per replica in place of the demo's two."""
    base = manifests.sandbox_policy()
    tokens = {name: secrets.token_urlsafe(16) for name in (*AUTOSCALER_USERS, *ADAPTER_USERS)}
    groups = ["system:serviceaccounts", "system:serviceaccounts:promscaler"]
    users = [{"name": n, "token": t, "groups": groups} for n, t in tokens.items()]
    renamed = {
        "system:serviceaccount:promscaler:autoscaler": list(AUTOSCALER_USERS),
        "system:serviceaccount:promscaler:adapter": list(ADAPTER_USERS),
    }
    rules = []
    for rule in copy.deepcopy(base["rules"]):
        rule["users"] = [u for name in rule.get("users", []) for u in renamed.get(name, [name])]
        rules.append(rule)
    # the soak creates Workers and reads them; the autoscalers scale them
    return {"users": users, "rules": rules}


@dataclass
class Bundle:
    workdir: Path
    stack: Stack
    proxy_url: str
    timing: Timing
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    sandbox_port: int = field(default_factory=free_port)
    adapter_ports: tuple[int, int] = field(default_factory=lambda: (free_port(), free_port()))
    metrics_ports: tuple[int, int] = field(default_factory=lambda: (free_port(), free_port()))
    procs: dict[str, Process] = field(default_factory=dict)
    commands: dict[str, list[str]] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    ca_bundle: str = ""

    @property
    def admin_kubeconfig(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.sandbox_port}"

    def decision_log(self, i: int) -> Path:
        return self.workdir / f"decisions-{i}.jsonl"

    async def start_sandbox(self) -> None:
        doc = policy()
        self.tokens = {u["name"]: u["token"] for u in doc["users"]}
        (self.workdir / "sandbox.yaml").write_text(yaml.safe_dump(doc))
        self.commands["sandbox"] = [
            "-m", "sandbox", "serve",
            "--port", str(self.sandbox_port),
            "--kubeconfig", str(self.admin_kubeconfig),
            "--config", str(self.workdir / "sandbox.yaml"),
            "--dir", str(self.workdir / "sandbox"),
            "--state-file", str(self.workdir / "sandbox-state.json"),
            # one argument with its flag: a random token may start with "-"
            f"--admin-token={self.admin_token}",
            "--pod-ready-delay", "0.5",
        ]  # fmt: skip
        await self._launch("sandbox")
        cluster = yaml.safe_load(self.admin_kubeconfig.read_text())["clusters"][0]["cluster"]
        ca_data = cluster["certificate-authority-data"]
        for name, token in self.tokens.items():
            short = name.rsplit(":", 1)[-1]
            write_kubeconfig(
                self.workdir / f"{short}.kubeconfig",
                server=self.server,
                ca_data=ca_data,
                token=token,
                user=name,
            )

    def start_adapters(self) -> None:
        ca_pem, cert, key = manifests.adapter_serving_cert(self.workdir / "adapter-tls")
        self.ca_bundle = base64.b64encode(ca_pem).decode()
        (self.workdir / "rules.yaml").write_text(fleet.RULES)
        for i, port in enumerate(self.adapter_ports):
            kubeconfig = self.workdir / f"adapter-{i}.kubeconfig"
            self.commands[f"adapter-{i}"] = [
                "-m", "adapter",
                f"--prometheus-url={self.proxy_url}",
                f"--prometheus-timeout={self.timing.prometheus_timeout:g}s",
                f"--config={self.workdir / 'rules.yaml'}",
                "--metrics-relist-interval=2s",
                f"--secure-port={port}",
                "--bind-address=127.0.0.1",
                f"--tls-cert-file={cert}",
                f"--tls-private-key-file={key}",
                f"--lister-kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--cache-ttl=500ms",
                "-v=1",
            ]  # fmt: skip
            self._spawn(f"adapter-{i}")

    def start_autoscalers(self) -> None:
        t = self.timing
        for i in range(2):
            self.commands[f"autoscaler-{i}"] = [
                "-m", "autoscaler", "run",
                f"--kubeconfig={self.workdir / f'autoscaler-{i}.kubeconfig'}",
                f"--namespace={fleet.NS}",
                f"--sync-period={t.sync_period:g}s",
                "--zero-poll-interval=1s",
                f"--workers={t.workers}",
                f"--metrics-port={self.metrics_ports[i]}",
                "--metrics-bind-address=127.0.0.1",
                "--leader-elect",
                f"--leader-elect-lease-duration={t.lease_duration:g}s",
                f"--leader-elect-renew-deadline={t.renew_deadline:g}s",
                f"--leader-elect-retry-period={t.retry_period:g}s",
                f"--leader-elect-identity=autoscaler-{i}",
                "--leader-elect-resource-namespace=soak",
                f"--decision-log={self.decision_log(i)}",
                "--request-timeout=5s",
            ]  # fmt: skip
            self._spawn(f"autoscaler-{i}")

    def registration(self) -> list[tuple[str, dict[str, Any]]]:
        """Service, Endpoints (both adapter replicas) and the APIServices."""
        objects = manifests.registration(self.adapter_ports[0], self.ca_bundle)
        for _, obj in objects:
            if obj["kind"] == "Endpoints":
                obj["subsets"] = [
                    {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": p}]}
                    for p in self.adapter_ports
                ]
        return objects

    def _spawn(self, name: str) -> Process:
        proc = self.stack.start(name, self.commands[name])
        self.procs[name] = proc
        return proc

    async def _launch(self, name: str) -> None:
        self.admin_kubeconfig.unlink(missing_ok=True)
        proc = self._spawn(name)
        await wait_for(self.admin_kubeconfig, timeout=30, proc=proc)

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        if proc.alive():
            proc.popen.send_signal(signal.SIGKILL)
            proc.popen.wait()

    def stop(self, name: str) -> None:
        self.procs[name].stop(timeout=10)

    async def restart(self, name: str) -> None:
        self.stack.processes.remove(self.procs[name])
        if name == "sandbox":
            await self._launch(name)
        else:
            self._spawn(name)
