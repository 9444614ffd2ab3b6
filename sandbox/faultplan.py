"""A fault plan: what the sandbox API server does wrong, on purpose, and how often.

Pure data and its parser. `sandbox.faults` applies a plan to requests; the plan comes from the
sandbox config (`faults:` in `--config`) or `PUT /sandbox/faults` (docs/faults.md has
the format). Every random choice comes from one `random.Random(seed)`, so a run with the same
seed and the same request order injects the same faults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DISTRIBUTIONS = ("fixed", "uniform", "exponential")
ERROR_CODES = (409, 429, 500, 503)  # what a real API server (or its proxy) answers under stress


class PlanError(ValueError):
    """The plan document is malformed; the message names the field."""


@dataclass(frozen=True)
class Match:
    """Which requests a rule applies to; empty tuples match every verb / resource."""

    verbs: tuple[str, ...] = ()  # get, list, watch, create, update, patch, delete
    resources: tuple[str, ...] = ()  # plural, or plural/subresource (deployments/scale)

    def matches(self, verb: str, resource: str, subresource: str) -> bool:
        if self.verbs and verb not in self.verbs:
            return False
        full = f"{resource}/{subresource}" if subresource else resource
        return not self.resources or resource in self.resources or full in self.resources


@dataclass(frozen=True)
class Latency:
    """Added delay before a request is served."""

    match: Match = field(default_factory=Match)
    distribution: str = "fixed"
    seconds: float = 0.0  # fixed: the delay; uniform: the upper bound; exponential: the mean
    min: float = 0.0  # uniform: the lower bound
    max: float = 30.0  # seconds: no single delay beyond this (an exponential's tail)


@dataclass(frozen=True)
class ErrorRule:
    """Answer a share of matching requests with an error Status instead of serving them."""

    code: int
    rate: float  # 0..1: the share of matching requests
    match: Match = field(default_factory=Match)
    retry_after: int = 1  # seconds, sent as Retry-After (and details) on 429 and 503


@dataclass(frozen=True)
class WatchFaults:
    """How watch streams break."""

    match: Match = field(default_factory=Match)
    cut_after_events: int = 0  # end a stream after this many events (0: never)
    cut_after_seconds: float = 0.0  # end a stream after this long (0: never)
    gone_on_resume: float = 0.0  # 0..1: share of resumed watches answered with 410 Expired


@dataclass(frozen=True)
class FaultPlan:
    seed: int = 0
    latency: tuple[Latency, ...] = ()
    errors: tuple[ErrorRule, ...] = ()
    watch: WatchFaults = field(default_factory=WatchFaults)
    refuse_seconds: float = 0.0  # refuse connections for this long once the plan is set

    @property
    def empty(self) -> bool:
        return self == FaultPlan(seed=self.seed)


def _number(doc: dict[str, Any], key: str, where: str, *, default: float, top: float) -> float:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PlanError(f"{where}.{key}: must be a number")
    if not 0 <= value <= top:
        raise PlanError(f"{where}.{key}: must be between 0 and {top:g}, got {value!r}")
    return float(value)


def _strings(doc: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = doc.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PlanError(f"{where}.{key}: must be a list of strings")
    return tuple(value)


def _mapping(value: Any, where: str, known: set[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PlanError(f"{where}: must be a mapping")
    unknown = sorted(set(value) - known)
    if unknown:
        raise PlanError(f"{where}: unknown field {unknown[0]!r}")
    return value


def _match(doc: dict[str, Any], where: str) -> Match:
    return Match(_strings(doc, "verbs", where), _strings(doc, "resources", where))


def _latency(doc: Any, where: str) -> Latency:
    d = _mapping(doc, where, {"verbs", "resources", "distribution", "seconds", "min", "max"})
    dist = d.get("distribution", "fixed")
    if dist not in DISTRIBUTIONS:
        raise PlanError(f"{where}.distribution: must be one of {', '.join(DISTRIBUTIONS)}")
    return Latency(
        _match(d, where),
        dist,
        _number(d, "seconds", where, default=0.0, top=600),
        _number(d, "min", where, default=0.0, top=600),
        _number(d, "max", where, default=30.0, top=600),
    )


def _error(doc: Any, where: str) -> ErrorRule:
    d = _mapping(doc, where, {"verbs", "resources", "code", "rate", "retryAfterSeconds"})
    if d.get("code") not in ERROR_CODES:
        raise PlanError(f"{where}.code: must be one of {', '.join(map(str, ERROR_CODES))}")
    return ErrorRule(
        int(d["code"]),
        _number(d, "rate", where, default=1.0, top=1),
        _match(d, where),
        int(_number(d, "retryAfterSeconds", where, default=1, top=3600)),
    )


def _watch(doc: Any, where: str) -> WatchFaults:
    known = {"verbs", "resources", "cutAfterEvents", "cutAfterSeconds", "goneOnResume"}
    d = _mapping(doc, where, known)
    return WatchFaults(
        _match(d, where),
        int(_number(d, "cutAfterEvents", where, default=0, top=1e9)),
        _number(d, "cutAfterSeconds", where, default=0.0, top=86400),
        _number(d, "goneOnResume", where, default=0.0, top=1),
    )


def _list(doc: dict[str, Any], key: str) -> list[Any]:
    value = doc.get(key) or []
    if not isinstance(value, list):
        raise PlanError(f"faults.{key}: must be a list")
    return value


def parse_plan(doc: Any) -> FaultPlan:
    """A FaultPlan from its document (`faults:` in the sandbox config, or the admin PUT)."""
    known = {"seed", "latency", "errors", "watch", "refuseSeconds"}
    d = _mapping(doc, "faults", known)
    seed = d.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise PlanError("faults.seed: must be an integer")
    return FaultPlan(
        seed,
        tuple(_latency(x, f"faults.latency[{i}]") for i, x in enumerate(_list(d, "latency"))),
        tuple(_error(x, f"faults.errors[{i}]") for i, x in enumerate(_list(d, "errors"))),
        _watch(d.get("watch"), "faults.watch"),
        _number(d, "refuseSeconds", "faults", default=0.0, top=3600),
    )
