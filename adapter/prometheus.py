"""The only code that talks to Prometheus: an async HTTP API client over `common.http1`.

Instant queries (`/api/v1/query`) and series look-ups (`/api/v1/series`), GET or POST (POST
automatically when a GET URL would be too long), a timeout on every call, and the peer's auth
options (bearer token file re-read on change, CA, client certificate, extra headers, in-cluster
service account, kubeconfig-format auth file). Every failure leaves as an `adapter.errors`
exception raised `from` its cause; messages never carry URLs or credentials.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Generic, NamedTuple, TypeVar

import orjson
from prometheus_client import CollectorRegistry, Counter, Histogram
from yarl import URL

from adapter.errors import ConfigError, PrometheusQueryError, PrometheusUnavailable
from adapter.partial import WarningsPolicy
from adapter.prometheus_auth import resolve_auth
from common.http1 import HttpError, Origin

log = logging.getLogger(__name__)

# Above this a GET URL risks 414s from Prometheus or proxies in front of it (Go's default
# header limit is 1 MB, but common proxies stop at 8 KB), so the request goes as a POST form.
MAX_GET_URL = 8000
USER_AGENT = "promscaler-adapter"  # how Prometheus' query log and proxies name our calls


class Sample(NamedTuple):
    """One element of an instant vector: labels, sample time (unix seconds) and value (a
    NamedTuple: built per series of every answer, where a frozen dataclass cost showed)."""

    labels: Mapping[str, str]
    timestamp: float
    value: Decimal  # exact decimal of Prometheus' string; may be NaN or ±Infinity


class RangeSeries(NamedTuple):
    """One series of a range query: labels and (unix seconds, value) points in time order."""

    labels: Mapping[str, str]
    points: list[tuple[float, Decimal]]


@dataclass(frozen=True)
class PrometheusOptions:
    """How to reach Prometheus; mirrors the peer's --prometheus-* flags."""

    url: str  # base URL, e.g. https://prometheus.monitoring.svc:9090
    verb: str = "GET"  # GET or POST (--prometheus-verb)
    timeout: float = 5.0  # seconds per call (--prometheus-timeout); the peer has none
    token_file: str | None = None  # bearer token, re-read when the file changes
    ca_file: str | None = None  # PEM CA bundle to verify Prometheus' certificate
    client_cert_file: str | None = None  # client certificate (mTLS)
    client_key_file: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # --prometheus-header k=v
    in_cluster: bool = False  # service account token + CA (--prometheus-auth-incluster)
    auth_config: str | None = None  # kubeconfig-format file (--prometheus-auth-config)
    insecure_skip_verify: bool = False  # from an auth config or a backend's tls that asks for it
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)  # (user, password)
    query_parameters: Mapping[str, str] = field(default_factory=dict)  # added to every call
    compression: str = "auto"  # gzip, none, or auto: none on loopback, else gzip
    warnings: str = "reject"  # an answer with warnings: reject (503) or accept (adapter.partial)


class PrometheusMetrics:
    """Self-metrics of the clients, registered once on the adapter's own registry and shared by
    every backend's client (label `backend`)."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        kw: dict[str, Any] = {"registry": registry}
        self.latency = Histogram(
            "promscaler_adapter_prometheus_request_duration_seconds",
            "Latency of Prometheus API calls by backend and endpoint (query, series).",
            ["backend", "endpoint"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            **kw,
        )
        self.errors = Counter(
            "promscaler_adapter_prometheus_errors_total",
            "Failed Prometheus API calls by backend, endpoint and kind "
            "(unavailable, timeout, rejected, partial).",
            ["backend", "endpoint", "kind"],
            **kw,
        )
        self.warnings = Counter(
            "promscaler_adapter_prometheus_warnings_total",
            "Prometheus answers that carried warnings (partial data), refused or served.",
            ["backend", "endpoint"],
            **kw,
        )


class PrometheusClient:
    """Prometheus' HTTP API. Create inside a running event loop; `await close()` when done."""

    def __init__(
        self,
        options: PrometheusOptions,
        *,
        registry: CollectorRegistry | None = None,
        backend: str = "default",
        metrics: PrometheusMetrics | None = None,
    ) -> None:
        if options.verb.upper() not in ("GET", "POST"):
            raise ConfigError(f"--prometheus-verb: must be GET or POST, not {options.verb!r}")
        self._options = options
        self._auth = resolve_auth(options)
        self._metrics = metrics if metrics is not None else PrometheusMetrics(registry)
        self.backend = backend  # the `backend` label of this client's self-metrics
        m = self._metrics
        self._warnings = WarningsPolicy(
            backend=backend, policy=options.warnings, warnings=m.warnings, errors=m.errors
        )
        # the latency child of each endpoint, looked up once (`labels()` locks on every call)
        self._latency = {
            e: m.latency.labels(backend, e) for e in ("query", "query_range", "series")
        }
        try:
            # a lean keep-alive client: aiohttp's cost about twice the CPU per query
            # (common/http1.py)
            self._origin = Origin(options.url, ssl_context=self._auth.ssl_context, limit=64)
        except ValueError as err:
            raise ConfigError(f"--prometheus-url: {err}") from None
        self.calls = 0  # number of HTTP calls made; tests and the benchmark read it

    async def close(self) -> None:
        await self._origin.close()

    async def query(
        self,
        promql: str,
        *,
        at: datetime | None = None,
        time_limit: float | None = None,
        rule: str = "",
    ) -> list[Sample]:
        """Evaluate an instant query; a scalar result is one sample without labels. `rule`
        names the rule the query comes from in log lines."""
        params = [("query", promql)]
        if at is not None:
            params.append(("time", f"{at.timestamp():.3f}"))
        data = await self._call("query", params, time_limit=time_limit, rule=rule)
        return list(_parse_vector(data))

    async def query_keyed(
        self,
        promql: str,
        *,
        label: str,
        time_of: Callable[[Any], T],
        value_of: Callable[[Any], V | None],
        rule: str = "",
    ) -> Keyed[T, V]:
        """Evaluate an instant query and key its samples by the value of `label` (see
        `keyed_vector`): what the custom metrics API reads, without a Sample per series."""
        data = await self._call("query", [("query", promql)], time_limit=None, rule=rule)
        return keyed_vector(data, label, time_of, value_of)

    async def query_range(
        self,
        promql: str,
        *,
        start: float,
        end: float,
        step: float,
        time_limit: float | None = None,
        rule: str = "",
    ) -> list[RangeSeries]:
        """Evaluate a range query over [start, end] (unix seconds) every `step` seconds."""
        params = [
            ("query", promql),
            ("start", f"{start:.3f}"),
            ("end", f"{end:.3f}"),
            ("step", f"{step:g}"),
        ]
        data = await self._call("query_range", params, time_limit=time_limit, rule=rule)
        return list(_parse_matrix(data))

    async def series(
        self,
        matchers: Sequence[str],
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        time_limit: float | None = None,
        rule: str = "",
    ) -> list[dict[str, str]]:
        """Label sets of the series matching any of `matchers` within [start, end]."""
        params = [("match[]", m) for m in matchers]
        if start is not None:
            params.append(("start", f"{start.timestamp():.3f}"))
        if end is not None:
            params.append(("end", f"{end.timestamp():.3f}"))
        data = await self._call("series", params, time_limit=time_limit, rule=rule)
        if not isinstance(data, list):
            raise PrometheusQueryError("unexpected series response from the metrics backend")
        return data

    async def _call(
        self,
        endpoint: str,
        params: list[tuple[str, str]],
        *,
        time_limit: float | None,
        rule: str = "",
    ) -> Any:
        path = f"/api/v1/{endpoint}"
        params = params + list(self._options.query_parameters.items())
        limit = self._options.timeout if time_limit is None else time_limit
        started = time.perf_counter()
        self.calls += 1
        try:
            async with asyncio.timeout(limit):
                body, status = await self._send(path, params)
        except TimeoutError as err:
            self._metrics.errors.labels(self.backend, endpoint, "timeout").inc()
            log.warning("prometheus %s %s timed out after %.3gs", self.backend, endpoint, limit)
            raise PrometheusUnavailable(
                "unable to fetch metrics: the metrics backend timed out"
            ) from err
        except OSError as err:  # HttpError: refused, reset, cut short or malformed
            self._metrics.errors.labels(self.backend, endpoint, "unavailable").inc()
            # an HttpError's message names no URL or header; another error's might
            why = str(err) if isinstance(err, HttpError) else type(err).__name__
            log.warning("prometheus %s %s failed: %s", self.backend, endpoint, why)
            raise PrometheusUnavailable() from err
        finally:
            self._latency[endpoint].observe(time.perf_counter() - started)
        return self._decode(endpoint, status, body, rule)

    async def _send(self, path: str, params: list[tuple[str, str]]) -> tuple[bytes, int]:
        headers = [("User-Agent", USER_AGENT), *self._auth.headers.items()]
        if self._auth.token is not None:
            headers.append(("Authorization", f"Bearer {self._auth.token.get()}"))
        # yarl's encoder is C, urlencode's is Python: 15 against 80 us for a 1 KB query; the
        # same text either way to Prometheus (Go's ParseQuery), ";" and "+" escaped
        form = URL.build(query=params).raw_query_string
        url = self._origin.prefix + path
        if self._options.verb.upper() == "POST" or len(url) + 1 + len(form) > MAX_GET_URL:
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            resp = await self._origin.request("POST", path, headers, form.encode())
        else:
            resp = await self._origin.request("GET", f"{path}?{form}", headers)
        return resp.body, resp.status

    def _decode(self, endpoint: str, status: int, body: bytes, rule: str = "") -> Any:
        try:
            doc = orjson.loads(body)  # several times faster than json.loads on 20 KB answers
        except ValueError as err:  # orjson.JSONDecodeError is a ValueError
            self._metrics.errors.labels(self.backend, endpoint, "unavailable").inc()
            log.warning(
                "prometheus %s %s answered HTTP %d with a non-JSON body",
                self.backend,
                endpoint,
                status,
            )
            raise PrometheusUnavailable() from err
        if isinstance(doc, dict) and doc.get("status") == "success":
            self._warnings.check(endpoint, doc, rule=rule)  # raises: a partial answer refused
            return doc.get("data")
        detail = doc.get("error", "") if isinstance(doc, dict) else ""
        kind = doc.get("errorType", "") if isinstance(doc, dict) else ""
        log.warning(
            "prometheus %s %s answered HTTP %d %s: %s", self.backend, endpoint, status, kind, detail
        )
        # 4xx (bad_data, execution) is our query's fault: a rule problem, not an outage
        if 400 <= status < 500 and status not in (408, 429):
            self._metrics.errors.labels(self.backend, endpoint, "rejected").inc()
            raise PrometheusQueryError()
        self._metrics.errors.labels(self.backend, endpoint, "unavailable").inc()
        raise PrometheusUnavailable()


# Decimal is immutable and gauges repeat their values from one query to the next: parse each
# distinct string once (a failure is not cached, so a bad one raises every time)
_decimal = lru_cache(maxsize=8192)(Decimal)


T = TypeVar("T")
V = TypeVar("V")


class Keyed(NamedTuple, Generic[T, V]):
    """An instant vector keyed by one label: {label value: (time, value)}, and how many samples
    were left out (a NaN or an infinity, which the caller counts)."""

    points: dict[str, tuple[T, V]]
    dropped: int


def keyed_vector(
    data: Any, label: str, time_of: Callable[[Any], T], value_of: Callable[[Any], V | None]
) -> Keyed[T, V]:
    """The samples of an instant query's `data` as {value of `label` ("" when absent): (time,
    value)}: `time_of` turns a sample's time (unix seconds as Prometheus wrote it) into the
    caller's, once per distinct time (an instant vector's samples share theirs), and
    `value_of` its value text, or into None to leave the sample out. One loop over the
    answer's JSON with no Sample or Decimal per series: a wildcard over 100 pods spent 2.5x as
    long going through `query`'s Samples. A converter raising ValueError, TypeError or
    ArithmeticError (a malformed time or value) is a malformed answer, as in `query`."""
    if not isinstance(data, dict):
        raise PrometheusQueryError("unexpected query response from the metrics backend")
    kind: Any = data.get("resultType")
    result: Any = data.get("result")
    points: dict[str, tuple[T, V]] = {}
    dropped = 0
    try:
        if kind == "vector":
            seen: Any = None  # the last time converted, and what it became
            when: Any = None
            for item in result:
                ts, text = item["value"]
                value = value_of(text)
                if value is None:
                    dropped += 1
                    continue
                if ts != seen or when is None:
                    when, seen = time_of(ts), ts
                metric = item.get("metric")
                points[metric.get(label, "") if metric else ""] = (when, value)
        elif kind == "scalar":
            ts, text = result
            value = value_of(text)
            if value is None:
                dropped += 1
            else:
                points[""] = (time_of(ts), value)
        else:
            raise PrometheusQueryError(
                f"the metrics query returned a {kind}, not an instant vector"
            )
    except (TypeError, KeyError, ValueError, AttributeError, ArithmeticError) as err:
        raise PrometheusQueryError("unexpected query response from the metrics backend") from err
    return Keyed(points, dropped)


def _parse_vector(data: Any) -> Iterator[Sample]:
    if not isinstance(data, dict):
        raise PrometheusQueryError("unexpected query response from the metrics backend")
    kind: Any = data.get("resultType")
    result: Any = data.get("result")
    try:
        if kind == "vector":
            for item in result:
                ts, value = item["value"]
                yield Sample(item.get("metric") or {}, float(ts), _decimal(value))
        elif kind == "scalar":
            ts, value = result
            yield Sample({}, float(ts), _decimal(value))
        else:
            raise PrometheusQueryError(
                f"the metrics query returned a {kind}, not an instant vector"
            )
    except (TypeError, KeyError, ValueError, InvalidOperation) as err:
        raise PrometheusQueryError("unexpected query response from the metrics backend") from err


def _parse_matrix(data: Any) -> Iterator[RangeSeries]:
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        raise PrometheusQueryError("unexpected range query response from the metrics backend")
    try:
        for item in data.get("result") or []:
            points = [(float(ts), _decimal(value)) for ts, value in item["values"]]
            yield RangeSeries(item.get("metric") or {}, points)
    except (TypeError, KeyError, ValueError, InvalidOperation) as err:
        raise PrometheusQueryError("unexpected query response from the metrics backend") from err
