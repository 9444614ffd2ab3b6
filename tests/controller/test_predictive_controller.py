"""The controller with spec.predictive before it reads history (docs/predictive.md "Where the
history comes from"): it decides reactively, writes status.predictive and the Predictive
condition with reason NoHistory, and scales exactly as without predictive."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from autoscaler.core import decide_document
from autoscaler.reconcile import ControllerOptions, Reconciler
from tests.controller.fakes import FakeCluster, autoscaler, external, external_value

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def one_pass(predictive: dict[str, Any] | None) -> tuple[FakeCluster, dict[str, Any]]:
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("55")
    obj = autoscaler(metrics=[external("queue", "10", average=True)])
    if predictive is not None:
        obj["spec"]["predictive"] = predictive
    r = Reconciler(cluster, options=ControllerOptions(), decide=decide_document)
    await r.reconcile(obj, now=NOW)
    ((_, patch),) = cluster.status_patches
    return cluster, patch


async def test_without_history_the_controller_decides_reactively_and_says_so() -> None:
    plain, _ = await one_pass(None)
    cluster, patch = await one_pass({"mode": "Scale"})
    assert cluster.scale_writes == plain.scale_writes == [("web", 4)]
    conditions = {c["type"]: c for c in patch["conditions"]}
    assert (conditions["Predictive"]["status"], conditions["Predictive"]["reason"]) == (
        "False",
        "NoHistory",
    )
    assert patch["predictive"]["metrics"][0]["verdict"] == "NoHistory"
    assert patch["predictive"]["changedDecision"] is False
