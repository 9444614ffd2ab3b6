"""Who may scale a target: the index of Autoscalers and HPAs by the object they scale.

Two scalers on one target fight (each undoes the other's writes), so exactly one acts: an
`autoscaling/v2` HorizontalPodAutoscaler always (it is the platform's own, and we cannot stop
it), else the oldest Autoscaler (creationTimestamp; name, then uid, break ties the same way on
every replica of the controller). The others get `AbleToScale=False/AmbiguousTarget` and write
nothing (controls.md, Conflicts). Pure: the informers feed it, the reconciler asks it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["HPA", "Claim", "TargetIndex", "TargetKey", "describe", "target_key"]

JSON = dict[str, Any]
HPA = "HorizontalPodAutoscaler"


@dataclass(frozen=True)
class TargetKey:
    """A scaled object: the API group (not the version: one object is served in several), the
    kind, its namespace and name."""

    namespace: str
    group: str
    kind: str
    name: str

    def __str__(self) -> str:
        group = f".{self.group}" if self.group else ""
        return f"{self.kind}{group} {self.namespace}/{self.name}"


@dataclass(frozen=True, order=True)
class Claim:
    """One scaler's claim on a target; ordered so that the winner sorts first."""

    rank: int  # 0 for an HPA (always wins), 1 for an Autoscaler
    created: str  # RFC3339 creationTimestamp; this format sorts as time
    name: str
    uid: str
    kind: str


def target_key(obj: Mapping[str, Any]) -> TargetKey | None:
    """The target of an Autoscaler or HPA, or None without a usable scaleTargetRef."""
    meta = obj.get("metadata") or {}
    ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
    if not ref.get("kind") or not ref.get("name"):
        return None
    api_version = str(ref.get("apiVersion") or "v1")
    group = api_version.rpartition("/")[0]
    return TargetKey(str(meta.get("namespace", "")), group, str(ref["kind"]), str(ref["name"]))


def _claim(obj: Mapping[str, Any], kind: str) -> Claim:
    meta = obj.get("metadata") or {}
    return Claim(
        rank=0 if kind == HPA else 1,
        created=str(meta.get("creationTimestamp") or ""),
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        kind=kind,
    )


class TargetIndex:
    """Claims by target, updated from informer events: O(scalers of one target) per call."""

    def __init__(self) -> None:
        self._claims: dict[TargetKey, dict[tuple[str, str], Claim]] = defaultdict(dict)
        self._where: dict[tuple[str, str], TargetKey] = {}  # (kind, ns/name) -> target

    def update(self, kind: str, obj: Mapping[str, Any]) -> set[TargetKey]:
        """Add or move a scaler; returns the targets whose claims changed (none when only
        its status or other fields did)."""
        ident = (kind, _ns_name(obj))
        target = target_key(obj)
        if target is not None and self._claims.get(target, {}).get(ident) == _claim(obj, kind):
            return set()
        changed = self.remove(kind, obj)
        if target is not None:
            self._claims[target][ident] = _claim(obj, kind)
            self._where[ident] = target
            changed.add(target)
        return changed

    def remove(self, kind: str, obj: Mapping[str, Any]) -> set[TargetKey]:
        ident = (kind, _ns_name(obj))
        old = self._where.pop(ident, None)
        if old is None:
            return set()
        claims = self._claims[old]
        claims.pop(ident, None)
        if not claims:
            del self._claims[old]
        return {old}

    def claimants(self, target: TargetKey, kind: str | None = None) -> list[str]:
        """`namespace/name` of the scalers of `target` (of one kind, when given)."""
        claims = self._sorted(target)
        return [f"{target.namespace}/{c.name}" for c in claims if kind in (None, c.kind)]

    def holder(self, obj: Mapping[str, Any]) -> Claim | None:
        """The claim that wins `obj`'s target when it is not `obj`'s own; None when `obj` may
        act (it wins, or is the only one)."""
        target = target_key(obj)
        if target is None:
            return None
        claims = self._sorted(target)
        mine = _claim(obj, "Autoscaler")
        others = [c for c in claims if (c.kind, c.name) != (mine.kind, mine.name)]
        if not others:
            return None
        best = min(others)
        return best if best < mine else None

    def _sorted(self, target: TargetKey) -> list[Claim]:
        return sorted(self._claims.get(target, {}).values())


def _ns_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def describe(claim: Claim, target: TargetKey) -> str:
    """The condition message of a scaler that lost `target` to `claim`."""
    who = "HorizontalPodAutoscaler" if claim.kind == HPA else "Autoscaler"
    why = "an HPA always wins" if claim.kind == HPA else "the oldest Autoscaler acts"
    return (
        f"the target {target} is also scaled by {who} {claim.name} ({why}); "
        "this Autoscaler writes nothing until that one is gone"
    )
