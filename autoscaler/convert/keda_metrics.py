"""A ScaledObject's triggers (and its scalingModifiers formula) to the Autoscaler's metrics,
schedules and the adapter rules they need."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from autoscaler.convert.keda_cron import cron_schedule
from autoscaler.convert.keda_formula import formula_names, formula_promql
from autoscaler.convert.keda_triggers import convert_trigger, number, prometheus_scalar, rule_for
from autoscaler.convert.model import ConvertError, Note

__all__ = ["Triggers", "convert_triggers"]

# the first year of firings a cron pair is checked over (fixed: convert is pure)
CRON_SINCE = datetime(2026, 1, 1)


@dataclass
class Triggers:
    """What the triggers become, filled trigger by trigger (hence not frozen): the metrics,
    the adapter rules they read, the schedules, and whether KEDA would count the
    ScaledObject as always active."""

    metrics: list[dict[str, Any]] = field(default_factory=list)
    rules: list[dict[str, Any]] = field(default_factory=list)
    schedules: list[dict[str, Any]] = field(default_factory=list)
    # cpu/memory alone: KEDA counts the ScaledObject as always active, so never at 0
    always_active: bool = False


def convert_triggers(
    spec: Mapping[str, Any], *, owner: str, to_zero: bool, max_replicas: int, notes: list[Note]
) -> Triggers:
    triggers = spec.get("triggers")
    if not isinstance(triggers, list) or not triggers:
        raise ConvertError("spec.triggers: at least one trigger is required")
    advanced = spec.get("advanced")
    modifiers = advanced.get("scalingModifiers") if isinstance(advanced, Mapping) else None
    formula = modifiers.get("formula") if isinstance(modifiers, Mapping) else None
    out = Triggers()
    folded: list[tuple[int, Mapping[str, Any]]] = []  # the triggers a formula combines
    for i, trigger in enumerate(triggers):
        at = f"spec.triggers[{i}]"
        if not isinstance(trigger, Mapping):
            raise ConvertError(f"{at}: expected an object")
        if formula and trigger.get("type") not in ("cpu", "memory"):
            folded.append((i, trigger))  # KEDA keeps only cpu/memory beside the formula
            continue
        if trigger.get("type") == "cron":
            schedule, cron_notes = cron_schedule(
                trigger, at=at, index=i, max_replicas=max_replicas, since=CRON_SINCE
            )
            notes.extend(cron_notes)
            if schedule is not None:
                out.schedules.append(schedule)
            continue
        got = convert_trigger(trigger, at=at, owner=owner, scale_to_zero=to_zero)
        notes.extend(got.notes)
        if got.metric is not None:
            out.metrics.append(got.metric)
        if got.rule is not None:
            out.rules.append(got.rule)
    if formula and isinstance(modifiers, Mapping):
        _formula(modifiers, folded, owner=owner, to_zero=to_zero, out=out, notes=notes)
    if not out.metrics and not out.schedules:
        dropped = "; ".join(f"{n.field}: {n.message}" for n in notes if n.field.endswith("]"))
        raise ConvertError(f"spec.triggers: no trigger could be converted ({dropped})")
    if not any(m["type"] == "External" for m in out.metrics):
        if not out.schedules and to_zero:
            out.always_active = True  # pkg/scaling/scale_handler.go: "we enforce the IsActive"
            notes.append(Note("spec.minReplicaCount", _ALWAYS_ACTIVE, False))
            return out
        if out.schedules and (to_zero or not out.metrics):
            _idle(owner, to_zero, out, notes)
    return out


_ALWAYS_ACTIVE = (
    "0 with cpu/memory triggers alone: KEDA keeps such a ScaledObject active, never at 0 "
    "(its HPA's minimum is 1); carried as minReplicas of at least 1"
)


def _idle(owner: str, to_zero: bool, out: Triggers, notes: list[Note]) -> None:
    """Schedules only: a metric that is always 0 and never active, so that the Autoscaler
    rests at minReplicas between windows (the HPA API needs a metric to scale on, and an
    External one to reach 0)."""
    name = f"{owner}-idle"
    metric: dict[str, Any] = {
        "type": "External",
        "external": {
            "metric": {"name": name},
            "target": {"type": "AverageValue", "averageValue": "1"},
        },
    }
    if to_zero:
        metric["activation"] = {"threshold": "0"}
    out.metrics.append(metric)
    # discovery lists the metric while the series `up` exists (any Prometheus that scrapes)
    out.rules.append(
        {
            "seriesQuery": "up",
            "resources": {"namespaced": False},
            "name": {"matches": "^up$", "as": name},
            "metricsQuery": "vector(0)",
        }
    )
    notes.append(
        Note(
            "spec.triggers",
            f"only cron triggers scale here: added the metric {name} (always 0, never active; "
            "its rule reads vector(0) and is listed while Prometheus has the series `up`) so "
            "that the Autoscaler rests at minReplicas between the windows",
            False,
        )
    )


def _formula(
    modifiers: Mapping[str, Any],
    folded: list[tuple[int, Mapping[str, Any]]],
    *,
    owner: str,
    to_zero: bool,
    out: Triggers,
    notes: list[Note],
) -> None:
    at = "spec.advanced.scalingModifiers"
    formula = str(modifiers.get("formula"))
    used = formula_names(formula, at=f"{at}.formula")
    scalars = {}
    first_query = ""
    for i, trigger in folded:
        where, kind, name = f"spec.triggers[{i}]", trigger.get("type"), trigger.get("name")
        if not isinstance(name, str) or not name:
            raise ConvertError(
                f"{where}.name: required beside scalingModifiers.formula (KEDA "
                "refuses an unnamed trigger there too)"
            )
        if name not in used:
            notes.append(
                Note(
                    where,
                    "not read by scalingModifiers.formula: no effect (KEDA "
                    "scales on the formula alone): not carried over",
                    False,
                )
            )
        elif kind != "prometheus":
            raise ConvertError(
                f"{at}.formula: {name!r} is a {kind!r} trigger: only prometheus "
                "triggers' values can be computed in the adapter's PromQL"
            )
        else:
            query, trigger_notes = prometheus_scalar(trigger, at=where)
            scalars[str(name)] = query
            notes.extend(trigger_notes)
            first_query = first_query or str(trigger["metadata"]["query"])
    promql = f"vector({formula_promql(formula, scalars, at=f'{at}.formula')})"
    target = modifiers.get("target")
    try:
        if target is None or float(str(target)) <= 0:
            raise ValueError
    except ValueError as err:
        raise ConvertError(f"{at}.target: a positive number is required, not {target!r}") from err
    kind = modifiers.get("metricType") or "AverageValue"
    if kind not in ("AverageValue", "Value"):
        raise ConvertError(f"{at}.metricType: {kind!r}: AverageValue or Value")
    key = "averageValue" if kind == "AverageValue" else "value"
    name = f"{owner}-formula"
    metric: dict[str, Any] = {
        "type": "External",
        "external": {"metric": {"name": name}, "target": {"type": kind, key: str(target)}},
    }
    if to_zero:
        activation = modifiers.get("activationTarget") or "0"
        metric["activation"] = {"threshold": number(activation, f"{at}.activationTarget")}
    elif modifiers.get("activationTarget") is not None:
        notes.append(Note(f"{at}.activationTarget", "no effect without scale to zero", False))
    out.metrics.append(metric)
    out.rules.append(rule_for(name, first_query, promql, at=f"{at}.formula"))
    notes.append(
        Note(
            at,
            f"carried as the metric {name}: one adapter rule computes the formula over the "
            "triggers' queries (KEDA scales on the formula alone, as here)",
            False,
        )
    )
