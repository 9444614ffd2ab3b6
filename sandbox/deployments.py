"""The Deployment controller's shape of things: a ReplicaSet per pod template, status summed.

Pure functions; `Workloads` does the writes. A template change creates a new ReplicaSet and
scales the old ones to zero at once (no surge/unavailability pacing).
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

Obj = dict[str, Any]
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # upstream's SafeEncodeString alphabet


def template_hash(template: Any) -> str:
    """A pod-template-hash of upstream's shape (`controller.ComputeHash`): a 32-bit hash of the
    template, in decimal, each digit mapped by `rand.SafeEncodeString` (1 to 10 characters of
    `[bcdf4-9]`). Not upstream's value (an FNV-32a of Go's printed struct), its form: what
    reads pod names (a Pods metric's history) sees the names a cluster gives."""
    # key order must not matter: `rollout undo` writes an old template back in another order
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    number = int.from_bytes(digest[:4], "big")
    return "".join(_ALPHABET[ord(d) % len(_ALPHABET)] for d in str(number))


def revision(rs: Obj) -> int:
    value = (rs["metadata"].get("annotations") or {}).get(REVISION, "0")
    return int(value) if str(value).isdigit() else 0


def with_revision(obj: Obj, rev: int) -> Obj | None:
    """`obj` annotated with revision `rev`, or None when it already says so."""
    annotations = obj["metadata"].get("annotations") or {}
    if annotations.get(REVISION) == str(rev):
        return None
    return {
        **obj,
        "metadata": {**obj["metadata"], "annotations": {**annotations, REVISION: str(rev)}},
    }


def new_revision(new: Obj, owned: list[Obj]) -> int:
    """The new ReplicaSet's revision: above every other one (a rollback reuses an old set)."""
    others = max((revision(r) for r in owned if r is not new), default=0)
    return revision(new) if revision(new) > others else others + 1


def new_replicaset(d: Obj, pod_hash: str, rev: int) -> Obj:
    """The ReplicaSet a Deployment owns for its current pod template."""
    spec = d.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
    meta = d["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{meta['name']}-{pod_hash}",
            "labels": tmeta["labels"],
            "annotations": {REVISION: str(rev)},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": int(spec.get("replicas", 1)),
            "selector": selector,
            "template": template,
        },
    }


def deployment_status(d: Obj, replicasets: list[Obj], new: Obj | None, *, now: str) -> Obj:
    """Deployment status summed over its ReplicaSets (omitempty zeros dropped)."""
    want = int((d.get("spec") or {}).get("replicas", 1))

    def total(field: str, sets: list[Obj]) -> int:
        return sum(int((r.get("status") or {}).get(field, 0)) for r in sets)

    available = total("availableReplicas", replicasets)
    status: Obj = {
        **(d.get("status") or {}),
        "observedGeneration": d["metadata"].get("generation", 1),
        "replicas": total("replicas", replicasets),
        "updatedReplicas": total("replicas", [new] if new else []),
        "readyReplicas": total("readyReplicas", replicasets),
        "availableReplicas": available,
        "unavailableReplicas": max(0, want - available),
    }
    name = new["metadata"]["name"] if new else d["metadata"]["name"]
    status["conditions"] = _conditions(available >= want, name, status.get("conditions"), now)
    for field in (
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ):
        if status.get(field) == 0:
            status.pop(field)  # omitempty, as the Go type serialises
    return status


def _conditions(available: bool, rs_name: str, old: Any, now: str) -> list[Obj]:
    previous = {c.get("type"): c for c in old or []}
    wanted = [
        (
            "Available",
            available,
            "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
            "Deployment has minimum availability."
            if available
            else "Deployment does not have minimum availability.",
        ),
        (
            "Progressing",
            True,
            "NewReplicaSetAvailable",
            f'ReplicaSet "{rs_name}" has successfully progressed.',
        ),
    ]
    conditions = []
    for kind, ok, reason, message in wanted:
        value = "True" if ok else "False"
        prev = previous.get(kind) or {}
        changed = prev.get("status") != value
        same = not changed and prev.get("reason") == reason and prev.get("message") == message
        conditions.append(
            {
                "type": kind,
                "status": value,
                "lastUpdateTime": prev.get("lastUpdateTime", now) if same else now,
                "lastTransitionTime": now if changed else prev.get("lastTransitionTime", now),
                "reason": reason,
                "message": message,
            }
        )
    return conditions
