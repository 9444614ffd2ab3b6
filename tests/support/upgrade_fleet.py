"""The upgrade test's Autoscalers and its checks over what the run recorded (pure).

Three groups, each caught mid-way through the state an upgrade must carry: `hold-*` inside a
scale-down stabilization window (status.history), `zero-*` inside a scale-to-zero cooldown
(status.lastActiveTime), `fail-*` in fallback on a metric that never answers
(status.metricHealth's counters); `wave-*` follow a queue that rises and falls every few
seconds, so /scale writes keep coming while leadership moves. Every target is a pod-less
`Worker` with `/scale`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from common.kubetime import parse_time
from soak import fleet
from soak.checks import Check

WINDOW = 60  # seconds of scale-down stabilization and of scale-to-zero cooldown
HIGH, LOW = 40.0, 10.0  # queue lengths: 8 and 2 replicas at 5 per replica
FALLBACK_REPLICAS = 5
GROUPS = {"hold": 10, "zero": 8, "fail": 6, "wave": 6}  # 30 Autoscalers
WAVE_PERIOD = 4.0  # seconds between a wave-* queue's rises and falls


@dataclass(frozen=True)
class Member:
    name: str
    group: str

    @property
    def start(self) -> int | None:
        """Replicas once settled before the roll (None: keeps moving)."""
        return {"hold": 8, "zero": 2, "fail": FALLBACK_REPLICAS}.get(self.group)

    @property
    def end(self) -> int | None:
        """Replicas once the window or cooldown after the drop has passed."""
        return {"hold": 2, "zero": 0, "fail": FALLBACK_REPLICAS}.get(self.group)


def members() -> list[Member]:
    return [Member(f"{g}-{i}", g) for g, n in GROUPS.items() for i in range(n)]


def target(m: Member) -> tuple[str, dict[str, Any]]:
    return fleet.target(fleet.Member(m.name, "External", 1, 10, 0.0, 0))


def autoscaler(m: Member) -> dict[str, Any]:
    # fail-* read a queue nobody writes: the adapter finds no series, every pass fails
    queue = f"missing-{m.name}" if m.group == "fail" else m.name
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": f"{fleet.GROUP}/v1", "kind": "Worker", "name": m.name},
        "minReplicas": 0 if m.group == "zero" else 1,
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "External",
                "external": {
                    "metric": {
                        "name": "soak_queue",
                        "selector": {"matchLabels": {"queue": queue}},
                    },
                    "target": {"type": "AverageValue", "averageValue": "5"},
                },
            }
        ],
        "behavior": {
            # up at once, so the fleet settles in seconds before the roll
            "scaleUp": {
                "stabilizationWindowSeconds": 0,
                "policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}],
            },
            "scaleDown": {
                # zero-*: only the cooldown holds them; hold-*: the window does; wave-*: nothing
                "stabilizationWindowSeconds": WINDOW if m.group == "hold" else 0,
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}],
            },
        },
    }
    if m.group == "zero":
        spec["scaleToZero"] = {"cooldownSeconds": WINDOW}
    if m.group == "fail":
        spec["fallback"] = {"failureThreshold": 2, "replicas": FALLBACK_REPLICAS}
    return {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {"name": m.name, "namespace": fleet.NS},
        "spec": spec,
    }


def queue_values(dropped: bool, *, t: float) -> dict[str, float]:
    """The queue length each Autoscaler reads `t` seconds into the run, before or after the
    drop (fail-* read none)."""
    out = {}
    for i, m in enumerate(members()):
        if m.group == "hold":
            out[m.name] = LOW if dropped else HIGH
        elif m.group == "zero":
            out[m.name] = 0.0 if dropped else LOW
        elif m.group == "wave":
            # each its own phase, so the writes spread over the period
            up = int(t / WAVE_PERIOD + i / GROUPS["wave"]) % 2 == 0
            out[m.name] = HIGH if up else LOW
    return out


# ---- checks over the decision logs and the sandbox's write audit ---------------------------


def _name(e: dict[str, Any]) -> str:
    return str(e["document"]["autoscaler"]["spec"]["scaleTargetRef"]["name"])


def _status(e: dict[str, Any]) -> dict[str, Any]:
    return dict(e["document"]["autoscaler"].get("status") or {})


def by_target(entries: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each target's logged passes, every process's logs merged, in pass order."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in entries:
        out[_name(e)].append(e)
    for passes in out.values():
        passes.sort(key=lambda e: parse_time(e["document"]["now"]))
    return out


def writes_match_decisions(
    logs: dict[str, list[dict[str, Any]]],
    writes: Iterable[dict[str, Any]],
    terms: Iterable[tuple[str, str]],
) -> Check:
    """Every audited /scale write is a rescale the writing replica logged: per replica
    (`logs` by leader-election identity; a write names it in its User-Agent) and target, as
    many writes as logged rescales. One exception: a replica's last pass on a target in a
    lease term may be a rescale with no write, when the term's end (a SIGTERM, a lost lease)
    cancelled the pass between its decision and its write; the next holder decides again.
    The replay check shows each logged rescale is the core's answer."""
    check = Check("each /scale write is a logged decision of the replica that made it")
    written: dict[tuple[str, str], int] = defaultdict(int)
    for w in writes:
        written[(_agent_identity(str(w.get("agent", ""))), str(w["name"]))] += 1
    starts: dict[str, list[float]] = defaultdict(list)
    for holder, at in terms:  # a term's passes are stamped in whole seconds
        starts[holder].append(float(int(parse_time(at).timestamp())))
    decided: dict[tuple[str, str], int] = defaultdict(int)
    may_be_cut: dict[tuple[str, str], int] = defaultdict(int)
    cut = 0
    for identity, entries in logs.items():
        for name, passes in by_target(entries).items():
            # the rescale ending each of this replica's terms (passes before any term: one run)
            last: dict[int, bool] = {}
            for e in passes:
                now = parse_time(e["document"]["now"]).timestamp()
                term = sum(1 for s in starts.get(identity, []) if s <= now)
                rescale = bool((e.get("result") or {}).get("rescale"))
                last[term] = rescale
                decided[(identity, name)] += rescale
            may_be_cut[(identity, name)] = sum(last.values())
    for key in sorted(set(decided) | set(written)):
        check.looked_at += 1
        identity, name = key
        unwritten = decided[key] - written[key]
        if not 0 <= unwritten <= may_be_cut[key]:
            check.breach(
                f"{name} by {identity}: {written[key]} writes, {decided[key]} logged rescales"
                f" ({may_be_cut[key]} of them the last of a lease term)"
            )
        cut += max(0, unwritten)
    check.note = f"{cut} rescales cut short by the end of a term"
    return check


def _agent_identity(agent: str) -> str:
    """The leader-election identity in a controller's User-Agent, `promscaler-autoscaler (ID)`."""
    return agent.rpartition("(")[2].partition(")")[0]


def history_carried(
    passes: dict[str, list[dict[str, Any]]], *, after: float, before: float
) -> Check:
    """hold-*: every pass between the drop and the end of the rolls stabilized over a history
    holding a recommendation of the high replicas (a new process continues from the history
    the old one left in status, so it keeps the window the old one opened)."""
    check = Check("status history carried across (hold-*)")
    for name, entries in passes.items():
        if not name.startswith("hold-"):
            continue
        for e in entries:
            now = parse_time(e["document"]["now"]).timestamp()
            if not after <= now <= before:
                continue
            check.looked_at += 1
            recs = (e["document"].get("history") or {}).get("recommendations") or []
            if not any(int(r["replicas"]) == 8 for r in recs):
                check.breach(f"{name} at {e['document']['now']}: no recommendation of 8 in {recs}")
    return check


def cooldown_carried(passes: dict[str, list[dict[str, Any]]], *, after: float) -> Check:
    """zero-*: after the queue empties, every pass saw a status.lastActiveTime, never an earlier
    one than a pass before it saw (a lost or reset cooldown shows as absent or going back)."""
    check = Check("cooldown (lastActiveTime) carried across (zero-*)")
    for name, entries in passes.items():
        if not name.startswith("zero-"):
            continue
        latest = 0.0
        for e in entries:
            if parse_time(e["document"]["now"]).timestamp() < after:
                continue
            check.looked_at += 1
            seen = _status(e).get("lastActiveTime")
            at = parse_time(seen).timestamp() if seen else None
            if at is None or at < latest:
                check.breach(
                    f"{name} at {e['document']['now']}: lastActiveTime {seen} after {latest}"
                )
            latest = max(latest, at or 0.0)
    return check


def zero_after_cooldown(
    passes: dict[str, list[dict[str, Any]]], writes: Iterable[dict[str, Any]], *, cooldown: float
) -> Check:
    """zero-*: the write to 0 came a whole cooldown after the last lastActiveTime any pass saw
    (status times have second precision)."""
    check = Check("zero-*: to 0 no earlier than the cooldown allows")
    last_write: dict[str, float] = {}
    for w in writes:
        last_write[str(w["name"])] = max(last_write.get(str(w["name"]), 0.0), float(w["time"]))
    for name, entries in passes.items():
        if not name.startswith("zero-"):
            continue
        check.looked_at += 1
        active = max(
            (parse_time(t).timestamp() for e in entries if (t := _status(e).get("lastActiveTime"))),
            default=0.0,
        )
        if last_write.get(name, 0.0) < active + cooldown - 1.0:
            check.breach(f"{name}: to 0 at {last_write.get(name)}, last active {active}")
    return check


def fallback_carried(passes: dict[str, list[dict[str, Any]]]) -> Check:
    """fail-*: the failure counter never goes back, and once in fallback it stays there."""
    check = Check("fallback counters carried across (fail-*)")
    for name, entries in passes.items():
        if not name.startswith("fail-"):
            continue
        last, was_fallback = -1, False
        for e in entries:
            check.looked_at += 1
            status = _status(e)
            health = (status.get("metricHealth") or [{}])[0]
            failures = int(health.get("consecutiveFailures", 0))
            if failures < last:
                check.breach(f"{name} at {e['document']['now']}: failures {last} -> {failures}")
            if was_fallback and not status.get("fallback"):
                check.breach(f"{name} at {e['document']['now']}: out of fallback")
            last, was_fallback = failures, was_fallback or bool(status.get("fallback"))
    return check


def not_before(
    writes: Iterable[dict[str, Any]], *, group: str, replicas: dict[str, int], at: float
) -> Check:
    """The group's last write (to its end replicas) came no earlier than `at`."""
    check = Check(f"{group}-*: reached the end no earlier than the window allows")
    last: dict[str, float] = {}
    for w in writes:
        if str(w["name"]).startswith(group + "-"):
            last[str(w["name"])] = max(last.get(str(w["name"]), 0.0), float(w["time"]))
    for m in members():
        if m.group != group:
            continue
        check.looked_at += 1
        if replicas.get(m.name) != m.end:
            check.breach(f"{m.name}: {replicas.get(m.name)} replicas, want {m.end}")
        elif last.get(m.name, 0.0) < at:
            check.breach(f"{m.name}: last write {at - last.get(m.name, 0.0):.1f}s too early")
    return check


def _slot(name: str) -> str:
    """The controller replica ("0" or "1") of a user (`...:autoscaler-0`) or a leader-election
    identity (`autoscaler-0`, `autoscaler-0-3` for a later incarnation)."""
    return name.rsplit(":", 1)[-1].split("-")[1]


def writers_hold_the_lease(
    writes: Iterable[dict[str, Any]], terms: Iterable[tuple[str, str]]
) -> Check:
    """Every /scale write came from the replica that held the Lease at that instant: terms are
    (holderIdentity, acquireTime) as polled, each lasting until the next one's acquireTime."""
    check = Check("never two writers in a lease term (write audit vs the Lease's terms)")
    starts = sorted({(parse_time(at).timestamp(), holder) for holder, at in terms})
    for w in sorted(writes, key=lambda w: float(w["time"])):
        check.looked_at += 1
        t = float(w["time"])
        held = [holder for start, holder in starts if start <= t]
        if not held:
            check.breach(f"{w['name']} at {t:.2f}: written before any term")
        elif _slot(held[-1]) != _slot(str(w["user"])):
            check.breach(f"{w['name']} at {t:.2f} by {w['user']} in {held[-1]}'s term")
    check.note = f"{len(starts)} terms"
    return check


def longest_outage(probes: Iterable[tuple[float, bool]]) -> float:
    """Seconds from the first failed probe of a run of failures to the next good one."""
    longest, began = 0.0, None
    for t, ok in sorted(probes):
        if not ok and began is None:
            began = t
        elif ok and began is not None:
            longest, began = max(longest, t - began), None
    return longest if began is None else float("inf")
