"""A KEDA ScaledObject with `cooldownPeriod: 30`, converted by `promscaler-autoscaler convert`,
applied with kubectl and run by the controller on the sandbox with a real Prometheus and the
adapter serving the converted rule: once the queue empties, the target goes N -> 1 under its
`behavior.scaleDown` and reaches 0 between 30 s and 30 s + one sync period after the last
active pass (`status.lastActiveTime`), the cooldown and the scale-down window running side by
side (docs/autoscaler.md, "When zero comes").

The ScaledObject asks for a scale-down window of 0 (KEDA's
`advanced.horizontalPodAutoscalerConfig.behavior`), so the cooldown is what the last step waits
for; the controller syncs every second. The whole test costs the 30 s cooldown plus a few
seconds of setup.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from common.kubetime import parse_time_ns
from tests.controller.stack import Stack, e2e_stack, eventually

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.kubectl,
    pytest.mark.sandbox_only("the converted adapter rule served by the sandbox's adapter"),
]

SYNC = 1.0  # seconds: the controller's sync period (the stack's)
COOLDOWN = 30  # seconds: the ScaledObject's cooldownPeriod
# the replicas are polled every POLL seconds; a pass's scale write and our read of it take a
# few milliseconds on an idle machine: the bound allows half a second for both under load
POLL = 0.05
SEEN_WITHIN = 0.5

SCALED_OBJECT = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: cooler
  namespace: default
spec:
  scaleTargetRef:
    name: cooler
  cooldownPeriod: 30
  minReplicaCount: 0
  maxReplicaCount: 5
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 0
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus.monitoring:9090
      query: sum(e2e_queue_depth{queue="cooler"})
      threshold: "10"
"""


def convert(tmp: Path) -> tuple[str, str, list[dict[str, Any]]]:
    """`promscaler-autoscaler convert`'s Autoscaler (YAML text), the external metric it names,
    and the adapter rules."""
    rules = tmp / "converted-rules.yaml"
    out = subprocess.run(
        [sys.executable, "-m", "autoscaler", "convert", "-", "--rules-out", str(rules)],
        input=SCALED_OBJECT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr  # nothing dropped that changes behaviour
    autoscaler = yaml.safe_load(out.stdout)
    assert autoscaler["spec"]["scaleToZero"]["cooldownSeconds"] == COOLDOWN
    assert autoscaler["spec"]["minReplicas"] == 0
    (metric,) = autoscaler["spec"]["metrics"]
    name = metric["external"]["metric"]["name"]
    return out.stdout, name, yaml.safe_load(rules.read_text())["externalRules"]


async def kubectl_apply(st: Stack, text: str) -> None:
    """`kubectl apply`, off the event loop (the sandbox answers it from this loop)."""
    out = await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "--kubeconfig", str(st.kubeconfig), "apply", "-f", "-"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr


async def timeline(st: Stack, name: str, *, until: int, timeout: float) -> list[tuple[float, int]]:
    """(wall-clock time, replicas) at each change, until the replicas are `until`."""
    seen: list[tuple[float, int]] = []
    deadline = time.monotonic() + timeout
    while not seen or seen[-1][1] != until:
        assert time.monotonic() < deadline, f"never reached {until}: {seen}"
        n = await st.replicas(name)
        if not seen or seen[-1][1] != n:
            seen.append((time.time(), n))
        await asyncio.sleep(POLL)
    return seen


async def test_a_converted_cooldown_period_of_30s_reaches_zero_30s_after_the_last_activity(
    tmp_path: Path,
) -> None:
    text, metric, rules = convert(tmp_path)
    async with e2e_stack(tmp_path, external_rules=tuple(rules)) as st:
        await st.queue("cooler", 25)  # 25 over 10 per replica: 3 replicas
        await st.deployment("cooler", 1)
        served = f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{st.namespace}/{metric}"
        await eventually(lambda: st.served(served), timeout=20, what="the converted rule served")
        await kubectl_apply(st, text)
        async with st.controller():
            await eventually(lambda: _is(st, 3), timeout=15, what="3 replicas while active")
            await st.queue("cooler", 0)
            emptied = time.time()
            seen = await timeline(st, "cooler", until=0, timeout=COOLDOWN + 20)
            status = (await st.get_autoscaler("cooler")).get("status") or {}
    assert [n for _, n in seen] == [3, 1, 0], f"N -> 1 under behavior, then 1 -> 0: {seen}"
    last_active = parse_time_ns(status["lastActiveTime"]) / 1e9
    at_one, at_zero = seen[1][0], seen[2][0]
    assert at_one - emptied < COOLDOWN / 2, "N -> 1 by the behaviour, not by the cooldown"
    after = at_zero - last_active
    print(  # the run's timings, for the report (pytest -s)
        f"\nzero {after:.2f}s after lastActiveTime, {at_zero - emptied:.2f}s after the queue "
        f"emptied; 1 replica {at_one - emptied:.2f}s after it"
    )
    assert after >= COOLDOWN, f"zero {after:.2f}s after the last active pass, before the cooldown"
    assert after <= COOLDOWN + SYNC + SEEN_WITHIN, f"zero {after:.2f}s after the last active pass"


async def _is(st: Stack, replicas: int) -> bool:
    return await st.replicas("cooler") == replicas
