"""The sandbox's protobuf encoding: CPU per object and bytes, beside JSON; prints, asserts nothing.

A protobuf watch encodes each change once for all its watchers (`watch._framed`), a protobuf
LIST or GET once per request; both are pure Python over the message table, so their cost per
object is what a client-go informer adds to the sandbox's work. Objects: a pod as the simulated
kubelet leaves it, a deployment with probes, volumes and a security context, and the project's
Autoscaler CRD (JSONSchemaProps, the deepest message) when helm can render the chart.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import record
from sandbox import protobuf, protoencode, protowatch

ROUNDS = 300  # encodes per object; a few hundred milliseconds each on the shared machine
NOW = "2026-01-01T00:00:00Z"
CONTAINER = {
    "name": "web",
    "image": "nginx:1",
    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
    "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
    "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
}
POD_SPEC = {
    "containers": [CONTAINER],
    "volumes": [{"name": "tmp", "emptyDir": {}}],
    "restartPolicy": "Always",
    "nodeName": "sandbox-node-1",
}
META = {"name": "web-1", "namespace": "default", "uid": "u" * 36, "resourceVersion": "42"}


def objects() -> dict[str, dict[str, Any]]:
    condition = {"status": "True", "lastTransitionTime": NOW}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**META, "labels": {"app": "web"}, "creationTimestamp": NOW},
        "spec": POD_SPEC,
        "status": {
            "phase": "Running",
            "conditions": [{"type": t, **condition} for t in ("Ready", "PodScheduled")],
            "hostIP": "10.0.0.1",
            "podIP": "10.244.0.5",
            "podIPs": [{"ip": "10.244.0.5"}],
            "startTime": NOW,
            "containerStatuses": [
                {
                    "name": "web",
                    "ready": True,
                    "restartCount": 0,
                    "image": "nginx:1",
                    "state": {"running": {"startedAt": NOW}},
                    "started": True,
                },
            ],
        },
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {**META, "name": "web", "generation": 3},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC},
        },
    }
    found = {"pod": pod, "deployment": deployment}
    crd = _chart_crd()
    if crd is not None:
        found["autoscaler-crd"] = crd
    return found


def _chart_crd() -> dict[str, Any] | None:
    root = Path(__file__).resolve().parents[1]
    helm = shutil.which("helm") or str(root / ".tools" / "helm")
    if not Path(helm).exists():
        return None
    out = subprocess.run(
        [helm, "template", "b", str(root / "charts" / "promscaler"), "--include-crds"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    return next((d for d in docs if d["kind"] == "CustomResourceDefinition"), None)


def per_call(fn: Any) -> float:
    started = time.process_time()
    for _ in range(ROUNDS):
        fn()
    return (time.process_time() - started) / ROUNDS * 1e6  # microseconds of CPU


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    record.add_json_option(parser)
    run = record.Run.begin(parser.parse_args())
    print(
        f"{'object':16} {'json us':>8} {'frame us':>9} {'decode us':>10} {'json B':>7} {'pb B':>6}"
    )
    for name, doc in objects().items():
        as_json = json.dumps(doc, separators=(",", ":")).encode()
        raw = protoencode.encode(doc)
        json_us = per_call(lambda doc=doc: json.dumps(doc, separators=(",", ":")).encode())
        frame_us = per_call(lambda doc=doc: protowatch.frame("MODIFIED", doc))
        decode_us = per_call(lambda raw=raw: protobuf.decode(raw))
        print(
            f"{name:16} {json_us:8.0f} {frame_us:9.0f} {decode_us:10.0f}"
            f" {len(as_json):7d} {len(raw):6d}"
        )
        run.figure(f"{name}_json_us", f"{name}: JSON encode", json_us, "us", kind="time")
        run.figure(f"{name}_frame_us", f"{name}: protobuf watch frame", frame_us, "us", kind="time")
        run.figure(f"{name}_decode_us", f"{name}: protobuf decode", decode_us, "us", kind="time")
        run.figure(
            f"{name}_pb_over_json",
            f"{name}: protobuf bytes over JSON bytes",
            len(raw) / len(as_json),
            "x",
            kind="ratio",
        )
    run.write()


if __name__ == "__main__":
    main()
