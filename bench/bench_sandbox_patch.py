"""What the sandbox spends on one Autoscaler status patch before storing it; prints numbers.

Every pass of the controller that changes an Autoscaler's status sends a merge patch of
`status` (about 0.3 per pass at 10,000 Autoscalers, docs/scaling.md). Before the object is
stored, the sandbox applies the patch (RFC 7386) and looks for the unknown fields it brought
(`fieldValidation`). This times those two steps, in this process, for an Autoscaler as the
soak leaves one (a status of about 1.9 KB: four conditions, a decision, a history), with a
patch that moves its timestamps and history as a pass does. CPU per patch, median of rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import record
from sandbox import fieldvalidation
from sandbox.crds import types_of
from sandbox.patchbody import MERGE, apply_patch

ROOT = Path(__file__).resolve().parent.parent
CRD = ROOT / "charts" / "promscaler" / "crds" / "autoscalers.promscaler.dev.yaml"
ROUNDS, PATCHES = 7, 2000

STORED = {
    "apiVersion": "promscaler.dev/v1alpha1",
    "kind": "Autoscaler",
    "metadata": {
        "creationTimestamp": "2026-12-01T21:23:33Z",
        "generation": 1,
        "name": "s110",
        "namespace": "soak",
        "resourceVersion": "18000",
        "uid": "a8bccd0c-6e5b-4b45-ac66-b574a1a18454",
    },
    "spec": {
        "behavior": {
            "scaleDown": {
                "policies": [{"periodSeconds": 15, "type": "Percent", "value": 100}],
                "selectPolicy": "Max",
                "stabilizationWindowSeconds": 4,
            },
            "scaleUp": {
                "policies": [
                    {"periodSeconds": 15, "type": "Pods", "value": 4},
                    {"periodSeconds": 15, "type": "Percent", "value": 100},
                ],
                "selectPolicy": "Max",
                "stabilizationWindowSeconds": 0,
            },
        },
        "maxReplicas": 8,
        "metrics": [
            {
                "external": {
                    "metric": {
                        "name": "soak_queue",
                        "selector": {"matchLabels": {"queue": "s110"}},
                    },
                    "target": {"averageValue": "5", "type": "AverageValue"},
                },
                "type": "External",
            }
        ],
        "minReplicas": 1,
        "scaleTargetRef": {
            "apiVersion": "soak.promscaler.dev/v1",
            "kind": "Worker",
            "name": "s110",
        },
    },
}


def status(second: int) -> dict:
    at = f"2026-12-01T21:{33 + second // 60:02d}:{second % 60:02d}Z"
    selector = "&LabelSelector{MatchLabels:map[string]string{queue: s110,},MatchExpressions:[]}"
    return {
        "conditions": [
            {
                "lastTransitionTime": at,
                "message": "recommended size matches current size",
                "reason": "ReadyForNewScale",
                "status": "True",
                "type": "AbleToScale",
            },
            {
                "lastTransitionTime": "2026-12-01T21:32:52Z",
                "message": "the HPA was able to successfully calculate a replica count from "
                f"external metric soak_queue({selector})",
                "reason": "ValidMetricFound",
                "status": "True",
                "type": "ScalingActive",
            },
            {
                "lastTransitionTime": "2026-12-01T21:24:54Z",
                "message": "the desired count is within the acceptable range",
                "reason": "DesiredWithinRange",
                "status": "False",
                "type": "ScalingLimited",
            },
            {
                "lastTransitionTime": "2026-12-01T21:24:31Z",
                "message": "the HPA controller did not scale the workload to zero",
                "reason": "NotScaledToZero",
                "status": "False",
                "type": "ScaledToZero",
            },
        ],
        "currentMetrics": [
            {
                "external": {
                    "current": {"averageValue": str(second % 7)},
                    "metric": {
                        "name": "soak_queue",
                        "selector": {"matchLabels": {"queue": "s110"}},
                    },
                },
                "type": "External",
            }
        ],
        "currentReplicas": 1,
        "decision": {
            "explanation": [
                "metrics[0] external metric soak_queue: total 600m vs 5 per pod; proposes 1"
            ],
            "summary": "keep 1 replicas: metrics[0] external metric soak_queue: total 600m vs 5 "
            "per pod; proposes 1 (ceil(600m / 5), ratio inf)",
        },
        "desiredReplicas": 1,
        "history": {
            "recommendations": [
                {"replicas": 1, "timestamp": "2026-12-01T21:24:21Z"},
                {"replicas": 1, "timestamp": at},
            ],
            "scaleDownEvents": [
                {"change": 3, "outdated": True, "timestamp": "2026-12-01T21:27:54Z"},
                {"change": 4, "outdated": False, "timestamp": "2026-12-01T21:33:20Z"},
            ],
            "scaleUpEvents": [{"change": 3, "outdated": False, "timestamp": at}],
        },
        "lastScaleTime": "2026-12-01T21:33:20Z",
        "observedGeneration": 1,
        "reference": "Worker/s110",
        "targets": f"{second % 7}/5",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    record.add_json_option(parser)
    run = record.Run.begin(parser.parse_args())
    rt = next(t for t in types_of(yaml.safe_load(CRD.read_text())) if t.version == "v1alpha1")
    stored = {**STORED, "status": status(0)}
    bodies = [json.dumps({"status": status(i)}).encode() for i in range(1, 61)]
    rounds: list[float] = []
    for _ in range(ROUNDS):
        start = time.process_time()
        for i in range(PATCHES):
            patched = apply_patch(rt, stored, MERGE, bodies[i % len(bodies)])
            fieldvalidation.unknown_after_patch(rt, stored, patched)
        rounds.append((time.process_time() - start) / PATCHES)
    size = len(json.dumps(stored))
    print(f"an Autoscaler of {size} bytes, a status patch of {len(bodies[0])} bytes")
    print(
        f"apply the merge patch and find its unknown fields: "
        f"{statistics.median(rounds) * 1e6:.0f} us CPU per patch "
        f"(median of {ROUNDS} rounds of {PATCHES}; range {min(rounds) * 1e6:.0f}-"
        f"{max(rounds) * 1e6:.0f} us)"
    )
    run.figure(
        "cpu_per_patch",
        "apply the merge patch and find its unknown fields, CPU per patch",
        statistics.median(rounds) * 1e6,
        "us",
        kind="time",
    )
    run.figure("status_bytes", "the stored Autoscaler", size, "bytes", kind="count")
    run.note("CPU per patch is context: no goal")
    run.write()


if __name__ == "__main__":
    main()
