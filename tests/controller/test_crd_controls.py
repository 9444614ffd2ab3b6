"""The controls in the Autoscaler CRD (controls.md "The API"): accepted and refused locally
(structural schema + CEL through cel-python) and through the real kubectl against the sandbox,
and the ACTIVE / PAUSED / FALLBACK columns of `kubectl get pas -o wide`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml

from tests.controller.crdcheck import CRD_PATH, validate
from tests.controller.test_crd import ext, obj
from tests.controller.test_crd_kubectl import kubectl, named


def act(threshold: Any = "5", metric: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(metric or ext()), "activation": {"threshold": threshold}}


def window(**kw: Any) -> dict[str, Any]:
    w = {"name": "business-hours", "schedule": "0 8 * * 1-5", "duration": "10h", "minReplicas": 2}
    w.update(kw)
    return w


PODS = {
    "type": "Pods",
    "pods": {
        "metric": {"name": "rps"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}

ACCEPTED = [
    pytest.param(
        obj(
            minReplicas=0,
            maxReplicas=20,
            metrics=[act("5")],
            scaleToZero={"cooldownSeconds": 300, "initialCooldownSeconds": 60},
            fallback={
                "failureThreshold": 3,
                "recoveryThreshold": 2,
                "replicas": 6,
                "behavior": "Static",
            },
            schedules=[
                window(timeZone="Europe/Berlin", minReplicas=8, maxReplicas=20),
                window(name="weekend", schedule="*/15 0-6 * * 0,6", duration="90m"),
            ],
        ),
        id="the-contract-example",
    ),
    pytest.param(obj(minReplicas=0, metrics=[act(5)]), id="integer-threshold"),
    pytest.param(obj(minReplicas=0, metrics=[act("500m")]), id="milli-threshold"),
    pytest.param(obj(fallback={"replicas": 0}), id="fallback-to-zero"),
    # KEDA's cooldownPeriod: 0, "as soon as nothing is active"
    pytest.param(
        obj(minReplicas=0, metrics=[act("0")], scaleToZero={"cooldownSeconds": 0}),
        id="cooldown-0",
    ),
    pytest.param(
        obj(schedules=[window(timeZone="America/Argentina/Buenos_Aires", duration="1h30m")]),
        id="three-part-zone-compound-duration",
    ),
    pytest.param(obj(schedules=[window(schedule="0 8 L * MON-FRI")]), id="cron-names-and-last-day"),
    pytest.param(
        obj(minReplicas=3, schedules=[window(maxReplicas=3)]), id="schedule-max-equals-spec-min"
    ),
]

REJECTED = [
    pytest.param(
        obj(minReplicas=1, metrics=[act("5", PODS)]),
        "activation may be set only when type is Object or External",
        id="activation-on-pods",
    ),
    pytest.param(obj(minReplicas=0, metrics=[act("lots")]), "threshold", id="bad-threshold"),
    pytest.param(
        obj(minReplicas=0, metrics=[{**ext(), "activation": {}}]),
        "threshold",
        id="activation-without-threshold",
    ),
    pytest.param(
        obj(minReplicas=1, scaleToZero={}),
        "scaleToZero may be set only when minReplicas is 0",
        id="scale-to-zero-with-min-1",
    ),
    pytest.param(
        obj(minReplicas=0, metrics=[ext()], scaleToZero={"cooldownSeconds": -1}),
        "cooldownSeconds",
        id="cooldown-negative",
    ),
    pytest.param(obj(fallback={"failureThreshold": 3}), "replicas", id="fallback-without-replicas"),
    pytest.param(obj(fallback={"replicas": 2, "behavior": "Sometimes"}), "behavior", id="enum"),
    pytest.param(
        obj(fallback={"replicas": 2, "failureThreshold": 0}), "failureThreshold", id="threshold-0"
    ),
    pytest.param(
        obj(schedules=[window(schedule="0 8 * *")]), "five-field cron", id="four-field-cron"
    ),
    pytest.param(
        obj(schedules=[window(schedule="0 8 * * * *")]), "five-field cron", id="six-field-cron"
    ),
    pytest.param(obj(schedules=[window(schedule="@daily")]), "five-field cron", id="cron-macro"),
    pytest.param(
        obj(schedules=[window(timeZone="../etc/passwd")]), "IANA time zone", id="path-zone"
    ),
    pytest.param(obj(schedules=[window(timeZone="Europe Berlin")]), "IANA", id="space-in-zone"),
    pytest.param(obj(schedules=[window(duration="0s")]), "greater than 0", id="duration-0"),
    pytest.param(obj(schedules=[window(duration="0h0m")]), "greater than 0", id="duration-0h0m"),
    pytest.param(obj(schedules=[window(duration="-1h")]), "duration such as", id="negative"),
    pytest.param(obj(schedules=[window(duration="10")]), "duration such as", id="no-unit"),
    pytest.param(
        obj(schedules=[window(minReplicas=5, maxReplicas=4)]),
        "maxReplicas must be greater than or equal to minReplicas",
        id="schedule-max-below-its-min",
    ),
    pytest.param(
        obj(minReplicas=3, schedules=[window(minReplicas=0, maxReplicas=2)]),
        "a schedule's maxReplicas must be greater than or equal to minReplicas",
        id="schedule-max-below-spec-min",
    ),
    pytest.param(
        obj(schedules=[window(minReplicas=0, maxReplicas=0)]), "maxReplicas", id="schedule-max-0"
    ),
    pytest.param(obj(schedules=[window(), window()]), "names must be unique", id="duplicates"),
]


def columns(table: str) -> dict[str, str]:
    """kubectl's one-row table as {header: cell}, cut at the header's column starts (cells may
    be empty, so splitting on spaces would shift them)."""
    header, row = table.splitlines()
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    bounds = [*starts[1:], None]
    return {header[a:b].strip(): row[a:b].strip() for a, b in zip(starts, bounds, strict=True)}


@pytest.mark.parametrize("autoscaler", ACCEPTED)
def test_accepts_the_controls(autoscaler: dict[str, Any]) -> None:
    _, errors = validate(autoscaler)
    assert errors == []


@pytest.mark.parametrize(("autoscaler", "says"), REJECTED)
def test_refuses_bad_controls_with_a_message(autoscaler: dict[str, Any], says: str) -> None:
    _, errors = validate(autoscaler)
    assert any(says in e for e in errors), errors


def test_defaults_of_the_controls() -> None:
    defaulted, errors = validate(
        obj(
            minReplicas=0,
            metrics=[ext()],
            scaleToZero={},
            fallback={"replicas": 2},
            schedules=[window()],
        )
    )
    assert errors == []
    spec = defaulted["spec"]
    assert spec["scaleToZero"] == {"cooldownSeconds": 300, "initialCooldownSeconds": 0}
    assert spec["fallback"] == {
        "replicas": 2,
        "failureThreshold": 3,
        "recoveryThreshold": 1,
        "behavior": "Static",
    }
    assert spec["schedules"][0]["timeZone"] == "UTC"


@pytest.mark.kubectl
async def test_kubectl_refuses_bad_controls_and_shows_the_columns() -> None:
    from sandbox.server import Sandbox, SandboxConfig

    async with Sandbox(SandboxConfig(simulate_kubelet=False)) as sb:
        kc = sb.kubeconfig
        out = await asyncio.to_thread(kubectl, kc, "apply", "--validate=false", "-f", str(CRD_PATH))
        assert out.returncode == 0, out.stderr
        good, bad = named(ACCEPTED, "ok"), named(REJECTED, "no")
        says = {p.id: p.values[1] for p in REJECTED}
        stream = yaml.safe_dump_all([*good.values(), *bad.values()])
        # one kubectl for all: it creates what it can and reports each refusal on a line
        out = await asyncio.to_thread(
            kubectl, kc, "create", "--validate=false", "-f", "-", stdin=stream
        )
        refusals = {
            id_: next((line for line in out.stderr.splitlines() if f'"no-{id_}"' in line), "")
            for id_ in bad
        }
        for id_, line in refusals.items():
            assert says[id_] in line, (id_, line or out.stderr)
        listed = await asyncio.to_thread(kubectl, kc, "get", "pas", "-o", "name")
        names = {n.split("/", 1)[1] for n in listed.stdout.split()}
        assert names == {f"ok-{id_}" for id_ in good}, out.stderr
        name = "ok-the-contract-example"
        status = {"status": {"active": True, "paused": False, "fallback": True}}
        out = await asyncio.to_thread(
            kubectl,
            kc,
            "patch",
            "pas",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(status),
        )
        assert out.returncode == 0, out.stderr
        out = await asyncio.to_thread(kubectl, kc, "get", "pas", name)
        assert "ACTIVE" not in out.stdout  # wide only: the default view keeps the HPA's columns
        out = await asyncio.to_thread(kubectl, kc, "get", "pas", name, "-o", "wide")
        cells = columns(out.stdout)
        assert (cells["ACTIVE"], cells["PAUSED"], cells["FALLBACK"]) == ("true", "false", "true")
