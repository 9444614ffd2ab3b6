"""KEDA triggers to Autoscaler metrics: a `prometheus` trigger becomes an External metric and
the adapter rule that serves it; `cpu` and `memory` become Resource metrics."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autoscaler.convert.model import ConvertError, Note, as_int
from autoscaler.convert.promql import QueryError, first_selector

__all__ = ["Converted", "convert_trigger", "number", "prometheus_scalar", "rule_for"]

# metadata keys read below; any other key is named in a note
PROMETHEUS_KEYS = frozenset(
    {"serverAddress", "query", "threshold", "activationThreshold", "metricName", "ignoreNullValues"}
)
# connection settings that the adapter has once, for every rule, on its command line
ADAPTER_WIDE = {
    "namespace": "a tenant query parameter: not supported; point --prometheus-url at the tenant",
    "queryParameters": "extra query parameters: not supported by the adapter",
    "customHeaders": "headers go on the adapter's command line (--prometheus-header NAME=VALUE)",
    "cortexOrgID": "the tenant header goes on the adapter (--prometheus-header X-Scope-OrgID=ID)",
    "authModes": "authentication is the adapter's (--prometheus-token-file, --prometheus-ca-file, "
    "--prometheus-client-tls-cert-file, --prometheus-auth-config)",
    "unsafeSsl": "the adapter always verifies TLS; give it the CA (--prometheus-ca-file)",
    "timeout": "the adapter's --prometheus-timeout applies to every query",
    "awsRegion": "the adapter does not sign requests with AWS SigV4: put a SigV4 proxy "
    "(aws-sigv4-proxy) in front of Amazon Managed Prometheus and point --prometheus-url at it",
    "identityOwner": "KEDA's pod identity: the adapter authenticates with its own flags "
    "(--prometheus-token-file, --prometheus-auth-config)",
}
NAME_CHARS = re.compile(r"[^a-z0-9_.-]+")
# the series a rule whose query reads none is listed by: any Prometheus that scrapes has it
NO_SERIES = "up"
# the closest route through Prometheus for the commonest other scalers, one line each
EXPORTER_ROUTES = {
    "kafka": "kafka_exporter's kafka_consumergroup_lag, in a prometheus trigger",
    "rabbitmq": "RabbitMQ's built-in Prometheus plugin (rabbitmq_queue_messages_ready)",
    "redis": "redis_exporter's redis_key_size / list length metrics",
    "aws-sqs-queue": "CloudWatch through yet-another-cloudwatch-exporter "
    "(aws_sqs_approximate_number_of_messages_visible_average)",
    "postgresql": "postgres_exporter with a custom query",
    "mysql": "mysqld_exporter with a custom query",
    "nats-jetstream": "the NATS prometheus-nats-exporter (jetstream consumer pending)",
    "metrics-api": "expose the value in Prometheus text format and scrape it, or read it "
    "with json_exporter",
    "kubernetes-workload": "kube-state-metrics' kube_pod_status_phase / kube_pod_labels "
    "(count the pods in PromQL)",
    "external": "no general route: export the value to Prometheus",
    "external-push": "no general route: export the value to Prometheus",
}


@dataclass(frozen=True)
class Converted:
    """One trigger: its metric (None when it has no equivalent), its rule, and notes."""

    metric: dict[str, Any] | None
    rule: dict[str, Any] | None
    notes: tuple[Note, ...]


def convert_trigger(
    trigger: Mapping[str, Any], *, at: str, owner: str, scale_to_zero: bool
) -> Converted:
    """`at` is the trigger's path (`spec.triggers[0]`); `owner` the ScaledObject's name, the
    prefix of the metric's name; `scale_to_zero` adds KEDA's activation to the metric."""
    kind = trigger.get("type")
    if kind == "prometheus":
        return _prometheus(trigger, at=at, owner=owner, scale_to_zero=scale_to_zero)
    if kind in ("cpu", "memory"):
        return _resource(trigger, at=at)
    route = EXPORTER_ROUTES.get(str(kind))
    why = f"; {route}" if route else "; export it to Prometheus and use a prometheus trigger"
    note = Note(at, f"trigger type {kind!r} is not converted{why}", True)
    return Converted(None, None, (note,))


def _prometheus(
    trigger: Mapping[str, Any], *, at: str, owner: str, scale_to_zero: bool
) -> Converted:
    meta = _metadata(trigger, at)
    query = _required(meta, "query", at)
    if not isinstance(query, str):
        raise ConvertError(f"{at}.metadata.query: expected a string")
    name = _metric_name(trigger, meta, owner=owner, query=query, at=at)
    metric: dict[str, Any] = {
        "type": "External",
        "external": {"metric": {"name": name}, "target": _target(trigger, meta, at)},
    }
    if scale_to_zero:
        # KEDA's default activation: active when the value is above 0
        threshold = number(
            meta.get("activationThreshold", "0"), f"{at}.metadata.activationThreshold"
        )
        metric["activation"] = {"threshold": threshold}
    rule = _rule(name, query, ignore_null=_bool(meta.get("ignoreNullValues", True)), at=at)
    notes = _prometheus_notes(trigger, meta, at, scale_to_zero)
    if first_selector(query) is None:  # valid: _rule has parsed it
        notes.append(Note(f"{at}.metadata.query", _NO_SERIES, False))
    return Converted(metric, rule, tuple(notes))


_NO_SERIES = (
    "reads no series: the adapter lists the metric while Prometheus has the series `up` "
    "(any Prometheus that scrapes a target)"
)


def _prometheus_notes(
    trigger: Mapping[str, Any], meta: Mapping[str, Any], at: str, scale_to_zero: bool
) -> list[Note]:
    m = f"{at}.metadata"
    notes = [
        Note(
            f"{m}.serverAddress",
            f"the adapter queries its own --prometheus-url (chart: prometheus.url): "
            f"point it at {meta.get('serverAddress')!s}",
            False,
        )
    ]
    if "activationThreshold" in meta and not scale_to_zero:
        notes.append(Note(f"{m}.activationThreshold", "no effect without scale to zero", False))
    if trigger.get("useCachedMetrics"):
        notes.append(Note(f"{at}.useCachedMetrics", "the adapter's --cache-ttl applies", False))
    if trigger.get("authenticationRef"):
        notes.append(Note(f"{at}.authenticationRef", ADAPTER_WIDE["authModes"], True))
    for key in meta:
        if key in ADAPTER_WIDE:
            harmless = key == "timeout" or (key == "unsafeSsl" and not _bool(meta[key]))
            notes.append(Note(f"{m}.{key}", ADAPTER_WIDE[key], not harmless))
        elif key not in PROMETHEUS_KEYS:
            notes.append(Note(f"{m}.{key}", "not a field this converter knows: dropped", True))
    return notes


def prometheus_scalar(trigger: Mapping[str, Any], *, at: str) -> tuple[str, list[Note]]:
    """A prometheus trigger's value as a PromQL scalar, for a formula (more than one series
    is NaN, which the adapter drops: a failed metric, as KEDA's error)."""
    meta = _metadata(trigger, at)
    query = _required(meta, "query", at)
    if not isinstance(query, str):
        raise ConvertError(f"{at}.metadata.query: expected a string")
    _rule("formula", query, ignore_null=True, at=at)  # the same checks as a lone trigger
    inner = f"({query}) or vector(0)" if _bool(meta.get("ignoreNullValues", True)) else query
    notes = [
        n
        for n in _prometheus_notes(trigger, meta, at, True)
        if "activationThreshold" not in n.field
    ]
    if "activationThreshold" in meta:
        notes.append(
            Note(
                f"{at}.metadata.activationThreshold",
                "KEDA ignores it under a formula "
                "(scalingModifiers.activationTarget applies): dropped",
                False,
            )
        )
    return f"scalar({inner})", notes


def rule_for(name: str, series_from: str, promql: str, *, at: str) -> dict[str, Any]:
    """An external rule serving `promql` as `name`, listed while the first series that
    `series_from` reads exists."""
    rule = _rule(name, series_from, ignore_null=False, at=at)
    rule["metricsQuery"] = promql
    return rule


def _rule(name: str, query: str, *, ignore_null: bool, at: str) -> dict[str, Any]:
    try:
        selector = first_selector(query)
    except QueryError as err:
        raise ConvertError(f"{at}.metadata.query: not valid PromQL: {err}") from err
    if selector is None:  # `vector(100)`: listed while Prometheus has any `up` series
        series_query, matches = NO_SERIES, f"^{NO_SERIES}$"
    else:
        # discovery lists the metric while any series of the name exists (the query's own
        # matchers may leave none, which the query then reads as 0 or as an error, as in KEDA)
        series_query = selector.name or selector.text
        matches = f"^{re.escape(selector.name)}$" if selector.name else ".*"
    # ignoreNullValues (KEDA's default): an empty result reads as 0, not as an error
    promql = f"({query}) or vector(0)" if ignore_null else query
    return {
        "seriesQuery": series_query,
        "resources": {"namespaced": False},
        "name": {"matches": matches, "as": name},
        "metricsQuery": promql,
    }


def _target(trigger: Mapping[str, Any], meta: Mapping[str, Any], at: str) -> dict[str, Any]:
    kind = trigger.get("metricType", "AverageValue")
    threshold = number(_required(meta, "threshold", at), f"{at}.metadata.threshold")
    if kind == "AverageValue":
        return {"type": "AverageValue", "averageValue": threshold}
    if kind == "Value":
        return {"type": "Value", "value": threshold}
    raise ConvertError(
        f"{at}.metricType: {kind!r}: a prometheus trigger takes AverageValue or Value"
    )


def _resource(trigger: Mapping[str, Any], *, at: str) -> Converted:
    meta = _metadata(trigger, at)
    kind = trigger.get("metricType") or meta.get("type") or "Utilization"
    value = _required(meta, "value", at)
    if kind == "Utilization":
        percent = as_int(value, f"{at}.metadata.value")
        target: dict[str, Any] = {"type": "Utilization", "averageUtilization": percent}
    elif kind == "AverageValue":
        target = {"type": "AverageValue", "averageValue": str(value)}
    else:
        raise ConvertError(
            f"{at}.metricType: {kind!r}: cpu and memory take Utilization or AverageValue"
        )
    body: dict[str, Any] = {"name": trigger["type"], "target": target}
    if meta.get("containerName"):
        body["container"] = meta["containerName"]
        return Converted({"type": "ContainerResource", "containerResource": body}, None, ())
    return Converted({"type": "Resource", "resource": body}, None, ())


def _metric_name(
    trigger: Mapping[str, Any], meta: Mapping[str, Any], *, owner: str, query: str, at: str
) -> str:
    """`<scaledobject>-<trigger name>`, else `-<metricName>`, else `-<first metric read>`:
    names people recognise, unlike KEDA's `s0-prometheus`."""
    base = trigger.get("name") or meta.get("metricName")
    if not base:
        try:
            selector = first_selector(query)
        except QueryError as err:
            raise ConvertError(f"{at}.metadata.query: not valid PromQL: {err}") from err
        base = selector.name if selector and selector.name else "query"
    return NAME_CHARS.sub("-", f"{owner}-{base}".lower()).strip("-")


def _metadata(trigger: Mapping[str, Any], at: str) -> Mapping[str, Any]:
    meta = trigger.get("metadata")
    if not isinstance(meta, Mapping):
        raise ConvertError(f"{at}.metadata: expected an object")
    return meta


def _required(meta: Mapping[str, Any], key: str, at: str) -> Any:
    if meta.get(key) in (None, ""):
        raise ConvertError(f"{at}.metadata.{key}: required")
    return meta[key]


def number(value: Any, field: str) -> str:
    """A KEDA threshold (a string or a number) as a Kubernetes quantity string."""
    try:
        float(str(value))
    except ValueError as err:
        raise ConvertError(f"{field}: {value!r} is not a number") from err
    return str(value)


def _bool(value: Any) -> bool:
    return str(value).strip().lower() == "true"
