"""Who acts on a target: an HPA always, else the oldest Autoscaler; the index follows informer
events and says which targets' claims changed (and only those)."""

from __future__ import annotations

import pytest

from autoscaler.conflicts import HPA, TargetIndex, TargetKey, describe, target_key


def scaler(name, *, created, target="web", kind="Deployment", api="apps/v1", ns="default"):
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{name}",
            "creationTimestamp": created,
        },
        "spec": {"scaleTargetRef": {"apiVersion": api, "kind": kind, "name": target}},
    }


T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z", "2026-01-01T00:01:00Z"


@pytest.mark.parametrize(
    ("autoscalers", "hpas", "asker", "winner"),
    [
        pytest.param([("a", T0)], [], "a", None, id="alone-acts"),
        pytest.param([("a", T0), ("b", T1)], [], "b", "a", id="newer-loses-to-older"),
        pytest.param([("a", T0), ("b", T1)], [], "a", None, id="older-acts"),
        pytest.param([("b", T0), ("a", T0)], [], "b", "a", id="same-second-name-breaks-tie"),
        pytest.param([("a", T0)], [("h", T2)], "a", "h", id="hpa-wins-even-when-newer"),
        pytest.param([("a", T0), ("b", T1)], [("h", T2)], "a", "h", id="hpa-wins-over-oldest"),
    ],
)
def test_the_holder_of_a_target(autoscalers, hpas, asker, winner):
    index = TargetIndex()
    objs = {name: scaler(name, created=t) for name, t in autoscalers}
    for obj in objs.values():
        index.update("Autoscaler", obj)
    for name, t in hpas:
        index.update(HPA, scaler(name, created=t))
    holder = index.holder(objs[asker])
    assert (holder.name if holder else None) == winner


@pytest.mark.parametrize(
    ("other", "conflict"),
    [
        pytest.param({"target": "api"}, False, id="other-name"),
        pytest.param({"ns": "prod"}, False, id="other-namespace"),
        pytest.param({"kind": "StatefulSet"}, False, id="other-kind"),
        pytest.param({"api": "apps/v1beta2"}, True, id="same-group-other-version"),
    ],
)
def test_only_the_same_object_conflicts(other, conflict):
    index = TargetIndex()
    first = scaler("a", created=T0)
    second = scaler("b", created=T1, **other)
    index.update("Autoscaler", first)
    index.update("Autoscaler", second)
    assert (index.holder(second) is not None) == conflict


def test_deleting_the_holder_hands_the_target_to_the_next():
    index = TargetIndex()
    a, b = scaler("a", created=T0), scaler("b", created=T1)
    index.update("Autoscaler", a)
    index.update("Autoscaler", b)
    assert index.holder(b).name == "a"
    changed = index.remove("Autoscaler", a)
    assert changed == {target_key(b)}
    assert index.claimants(target_key(b)) == ["default/b"]
    assert index.holder(b) is None


def test_status_only_changes_report_no_changed_target():
    index = TargetIndex()
    a = scaler("a", created=T0)
    assert index.update("Autoscaler", a) == {target_key(a)}
    with_status = {**a, "status": {"currentReplicas": 3}}
    assert index.update("Autoscaler", with_status) == set(), "no claim moved: wake nobody"


def test_retargeting_moves_the_claim_and_reports_both_targets():
    index = TargetIndex()
    a = scaler("a", created=T0)
    index.update("Autoscaler", a)
    moved = scaler("a", created=T0, target="api")
    assert index.update("Autoscaler", moved) == {target_key(a), target_key(moved)}
    assert index.claimants(target_key(a)) == []


def test_the_message_names_the_holder_and_why():
    target = TargetKey("default", "apps", "Deployment", "web")
    index = TargetIndex()
    index.update(HPA, scaler("h", created=T0))
    claim = index.holder(scaler("a", created=T1))
    text = describe(claim, target)
    assert "HorizontalPodAutoscaler h" in text
    assert "Deployment.apps default/web" in text
    assert "an HPA always wins" in text
