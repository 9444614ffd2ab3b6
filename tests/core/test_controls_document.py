"""The controls in the decide document: bad input is a DocumentError naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from autoscaler.core import DocumentError, decide_document
from tests.core.controls_loop import Loop, external, fast_down


def doc_with(spec_extra: dict[str, Any], **top: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"minReplicas": 0, "maxReplicas": 20, "metrics": [external(None)]}
    spec.update(spec_extra)
    doc = Loop(spec, replicas=1).document(["1"])
    doc.update(top)
    return doc


SCHED = {"name": "a", "schedule": "0 8 * * *", "duration": "1h", "minReplicas": 1}


@pytest.mark.parametrize(
    ("extra", "top", "path"),
    [
        pytest.param(
            {
                "metrics": [
                    {
                        "type": "Pods",
                        "pods": {
                            "metric": {"name": "rps"},
                            "target": {"type": "AverageValue", "averageValue": "1"},
                        },
                        "activation": {"threshold": "1"},
                    }
                ]
            },
            {},
            "autoscaler.spec.metrics[0].activation",
            id="activation-on-a-pods-metric",
        ),
        pytest.param(
            {"metrics": [{**external(None), "activation": {"threshold": "lots"}}]},
            {},
            "autoscaler.spec.metrics[0].activation.threshold",
            id="bad-threshold",
        ),
        pytest.param(
            {"scaleToZero": {"cooldownSeconds": -1}},
            {},
            "autoscaler.spec.scaleToZero.cooldownSeconds",
            id="cooldown-negative",
        ),
        pytest.param(
            {"minReplicas": 1, "scaleToZero": {}},
            {},
            "autoscaler.spec.scaleToZero",
            id="scaleToZero-needs-min-0",
        ),
        pytest.param(
            {"fallback": {"failureThreshold": 3}},
            {},
            "autoscaler.spec.fallback.replicas",
            id="fallback-without-replicas",
        ),
        pytest.param(
            {"fallback": {"replicas": 2, "behavior": "Sometimes"}},
            {},
            "autoscaler.spec.fallback.behavior",
            id="fallback-behavior-enum",
        ),
        pytest.param(
            {"fallback": {"replicas": 2, "recoveryThreshold": 0}},
            {},
            "autoscaler.spec.fallback.recoveryThreshold",
            id="recovery-0",
        ),
        pytest.param(
            {"schedules": [{**SCHED, "schedule": "0 8 * *"}]},
            {},
            "autoscaler.spec.schedules[0].schedule",
            id="four-field-cron",
        ),
        pytest.param(
            {"schedules": [{**SCHED, "timeZone": "Mars/Olympus"}]},
            {},
            "autoscaler.spec.schedules[0].timeZone",
            id="unknown-zone",
        ),
        pytest.param(
            {"schedules": [{**SCHED, "duration": "0s"}]},
            {},
            "autoscaler.spec.schedules[0].duration",
            id="duration-0",
        ),
        pytest.param(
            {"schedules": [{**SCHED, "duration": "-1h"}]},
            {},
            "autoscaler.spec.schedules[0].duration",
            id="negative-duration",
        ),
        pytest.param(
            {"schedules": [{**SCHED, "duration": "soon"}]},
            {},
            "autoscaler.spec.schedules[0].duration",
            id="not-a-duration",
        ),
        pytest.param(
            {"schedules": [{**SCHED, "minReplicas": 5, "maxReplicas": 4}]},
            {},
            "autoscaler.spec.schedules[0].maxReplicas",
            id="schedule-max-below-its-min",
        ),
        pytest.param(
            {"minReplicas": 3, "schedules": [{**SCHED, "maxReplicas": 2}]},
            {},
            "autoscaler.spec.schedules[0].maxReplicas",
            id="schedule-max-below-spec-min",
        ),
        pytest.param(
            {"schedules": [SCHED, SCHED]},
            {},
            "autoscaler.spec.schedules[1].name",
            id="duplicate-name",
        ),
        pytest.param(
            {"metrics": [{**external(None), "activation": {}}]},
            {},
            "autoscaler.spec.metrics[0].activation.threshold",
            id="activation-without-threshold",
        ),
        pytest.param(
            {}, {"conflict": {"reason": "x"}}, "conflict.message", id="conflict-needs-a-message"
        ),
    ],
)
def test_bad_controls_name_the_field(extra: dict[str, Any], top: dict[str, Any], path: str) -> None:
    doc = doc_with(extra, **top)
    with pytest.raises(DocumentError) as err:
        decide_document(doc)
    assert err.value.path == path


def test_an_annotation_that_is_not_a_string_is_named() -> None:
    doc = doc_with({})
    doc["autoscaler"]["metadata"]["annotations"] = {"promscaler.dev/paused": True}
    with pytest.raises(DocumentError, match=r"annotations\[promscaler.dev/paused\]"):
        decide_document(doc)


def test_decide_jsonl_takes_the_controls_through_the_real_cli() -> None:
    from tests.core.test_cli import run

    loop = Loop(
        {
            "minReplicas": 1,
            "maxReplicas": 20,
            "metrics": [external(None)],
            "fallback": {"failureThreshold": 1, "replicas": 7},
        },
        replicas=2,
    )
    loop.step(None)  # one failed pass: its status carries the count into the next document
    in_fallback = loop.document([None])
    bad = doc_with({"schedules": [{**SCHED, "timeZone": "Nowhere/Atlantis"}]})
    stdin = "\n".join(json.dumps(d) for d in (in_fallback, bad)) + "\n"
    proc = run(["--jsonl"], stdin)
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert (first["rescale"], first["desiredReplicas"]) == (True, 4)  # 2 -> 4: scale-up limit
    assert first["status"]["fallback"] is True
    assert [e["reason"] for e in first["events"]] == ["FallbackActivated"]
    assert second["error"].startswith("autoscaler.spec.schedules[0].timeZone: unknown time zone")
    single = run([], json.dumps(bad))
    assert single.returncode == 2
    assert single.stderr.count("\n") == 1
    assert "timeZone" in single.stderr


def test_cooldown_0_is_accepted_and_means_at_once() -> None:
    # KEDA's `cooldownPeriod: 0`: the last step 1 -> 0 on the first pass with nothing active
    spec: dict[str, Any] = {
        "minReplicas": 0,
        "maxReplicas": 20,
        "metrics": [{**external(None), "activation": {"threshold": "0"}}],
        "scaleToZero": {"cooldownSeconds": 0},
        "behavior": fast_down(),  # no stabilization window: the cooldown alone decides
    }
    loop = Loop(spec, replicas=1)
    assert loop.run(["6", "0"]) == [1, 0]
