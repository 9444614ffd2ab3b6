"""metrics.k8s.io values from query samples (pure): PodMetrics and NodeMetrics.

prometheus-adapter's assembly, kept:
- a sample that is NaN or negative counts as 0 (a counter reset makes `rate()` briefly odd; an
  HPA must never see a negative usage); +Inf is dropped, since no Quantity can carry it;
- a pod is served only when both its CPU and its memory query returned something for it;
  a container with only one of the two gets 0 for the other;
- a pod's or node's `timestamp` is the earliest of its samples' times (conservative for the
  HPA's start-up checks); `window` is the rule file's `resourceRules.window`;
- CPU is `int(cores * 1000)` millicores (truncated, as Go's int64 conversion), memory
  `int(bytes * 1000)` thousandths rendered as a binary-SI Quantity ("512Mi", "1536").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from types import MappingProxyType

from adapter.prometheus import Sample
from common.quantity import format_milli

__all__ = [
    "ContainerUsage",
    "NodeMetrics",
    "PodMetrics",
    "Usage",
    "cpu_quantity",
    "go_duration",
    "group_samples",
    "memory_quantity",
    "node_metrics",
    "pod_metrics",
]

_EMPTY: Mapping[str, str] = MappingProxyType({})
_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


@dataclass(frozen=True)
class Usage:
    """One object's or container's usage: Quantity strings."""

    cpu: str
    memory: str


@dataclass(frozen=True)
class ContainerUsage:
    name: str
    usage: Usage


@dataclass(frozen=True)
class PodMetrics:
    namespace: str
    name: str
    timestamp: datetime
    window_seconds: int
    containers: tuple[ContainerUsage, ...]
    labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True)
class NodeMetrics:
    name: str
    timestamp: datetime
    window_seconds: int
    usage: Usage
    labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY)


# a reading: (value clamped at 0, sample time); per object, per container ("" for nodes)
Reading = tuple[Decimal, float]
Grouped = dict[str, dict[str, Reading]]


def _clamped(value: Decimal) -> Decimal | None:
    if value.is_nan() or value < 0:
        return Decimal(0)
    return value if value.is_finite() else None


def group_samples(
    samples: Iterable[Sample],
    *,
    object_label: str,
    container_label: str = "",
    names: frozenset[str] | None = None,
) -> Grouped:
    """object name -> container name -> reading; samples without the object label, +Inf
    samples and (with `names`) objects not asked for are left out."""
    out: Grouped = {}
    for sample in samples:
        name = sample.labels.get(object_label, "")
        value = _clamped(sample.value)
        if not name or value is None or (names is not None and name not in names):
            continue
        container = sample.labels.get(container_label, "") if container_label else ""
        out.setdefault(name, {})[container] = (value, sample.timestamp)
    return out


def _milli_text(milli: int) -> str:
    # the common case without Decimal work: a fraction of a unit is canonically "<n>m"
    return f"{milli}m" if milli % 1000 else format_milli(milli)


def cpu_quantity(cores: Decimal) -> str:
    """Cores as a decimal-SI Quantity of whole millicores (truncated)."""
    return _milli_text(int(cores * 1000))


def memory_quantity(size: Decimal) -> str:
    """Bytes as apimachinery renders a binary-SI milli-Quantity: exact multiples of a power of
    1024 (from 1Ki) take its suffix, other whole numbers stay plain, fractions fall back to
    decimal-SI ("1500m")."""
    milli = int(size * 1000)
    whole, rest = divmod(milli, 1000)
    if rest or whole < 1024:
        return _milli_text(milli)
    for suffix, power in _BINARY:
        if whole % (1 << power) == 0:
            return f"{whole >> power}{suffix}"
    return str(whole)


@lru_cache(maxsize=16)  # one window per rule file
def go_duration(seconds: int) -> str:
    """A whole number of seconds as Go's time.Duration.String() writes it: "3m0s", "1h0m0s"."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def _stamp(readings: Iterable[Reading]) -> datetime:
    return _second(int(min(at for _, at in readings)))


@lru_cache(maxsize=64)  # the samples of one query share their evaluation time
def _second(unix: int) -> datetime:
    return datetime.fromtimestamp(unix, tz=UTC)


def pod_metrics(
    namespace: str,
    name: str,
    cpu: Mapping[str, Reading] | None,
    memory: Mapping[str, Reading] | None,
    *,
    window_seconds: int,
    labels: Mapping[str, str] = _EMPTY,
) -> PodMetrics | None:
    """One pod's metrics, or None when its CPU or memory query returned nothing for it."""
    if not cpu or not memory:
        return None
    zero: Reading = (Decimal(0), 0.0)
    containers = tuple(
        ContainerUsage(
            container,
            Usage(
                cpu_quantity(cpu.get(container, zero)[0]),
                memory_quantity(memory.get(container, zero)[0]),
            ),
        )
        for container in sorted(set(cpu) | set(memory))
    )
    stamp = _stamp([*cpu.values(), *memory.values()])
    return PodMetrics(namespace, name, stamp, window_seconds, containers, labels)


def node_metrics(
    name: str,
    cpu: Mapping[str, Reading] | None,
    memory: Mapping[str, Reading] | None,
    *,
    window_seconds: int,
    labels: Mapping[str, str] = _EMPTY,
) -> NodeMetrics | None:
    """One node's metrics, or None when either query returned nothing for it."""
    if not cpu or not memory:
        return None
    cpu_reading, memory_reading = next(iter(cpu.values())), next(iter(memory.values()))
    usage = Usage(cpu_quantity(cpu_reading[0]), memory_quantity(memory_reading[0]))
    stamp = _stamp([cpu_reading, memory_reading])
    return NodeMetrics(name, stamp, window_seconds, usage, labels)
