"""Warnings in a backend's answer, and what the adapter does with them (`warnings:` of a
backend, `--prometheus-warnings` for the default one).

A Prometheus-compatible API may answer `status: success` and still say, in `warnings`, that
the data is not all there or not to be trusted:

- Thanos Query with partial response allowed (`partial_response=true`, or its
  `--query.partial-response` default) answers with the series of the stores that replied and
  one warning per store that did not;
- Prometheus treats every remote-read endpoint as best effort: one that fails becomes a
  warning and contributes no series;
- PromQL's own warnings ("PromQL warning: ...", e.g. a quantile outside [0, 1], a histogram
  bucket without a valid `le`, a mix of floats and histograms) say the value was computed
  from something other than what the query meant.

A sum over such an answer underestimates, and an autoscaler would scale down on a metric that
in truth failed. So by default (`reject`) an answer with warnings is refused like any other
backend failure: a 503 Status quoting the first warning, counted among the backend's errors
(kind `partial`). `accept` serves it. Either way it is counted
(`promscaler_adapter_prometheus_warnings_total`) and logged, at most once a minute per rule.

Prometheus 3 reports info-level annotations apart, in `infos` ("PromQL info: metric might not
be a counter, ..."): hints about the query that may be false positives, which never change
the data. They are never refused, counted or logged above debug level.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import Counter

from adapter.errors import PrometheusUnavailable

__all__ = ["WARNINGS_POLICIES", "WarningsPolicy", "answer_warnings", "partial_message"]

log = logging.getLogger(__name__)

WARNINGS_POLICIES = ("reject", "accept")
# characters of the first warning quoted in a Status and a log line: a Thanos store error can
# run to kilobytes of gRPC detail, and the message is read by a person in `kubectl describe`
QUOTE_LIMIT = 200
LOG_EVERY = 60.0  # seconds between log lines per backend, endpoint and rule: a hot metric
# asked every second would otherwise write a line per request while a store is away
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")  # `user:password@` of a URL inside a warning


def answer_warnings(doc: Mapping[str, Any]) -> tuple[str, ...]:
    """The `warnings` of a decoded answer (`infos` are not warnings); anything that is not a
    list of strings counts as text, so a malformed field still counts as a warning."""
    raw = doc.get("warnings")
    if not raw:
        return ()
    items = raw if isinstance(raw, list) else [raw]
    return tuple(item if isinstance(item, str) else repr(item) for item in items)


def quote(warnings: tuple[str, ...]) -> str:
    """The first warning, trimmed, credentials in URLs masked, with how many more there were."""
    first = _USERINFO.sub("***@", " ".join(warnings[0].split()))
    if len(first) > QUOTE_LIMIT:
        first = first[: QUOTE_LIMIT - 3] + "..."
    more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
    return f"{first!r}{more}"


def partial_message(warnings: tuple[str, ...]) -> str:
    return f"unable to fetch metrics: the metrics backend's answer was partial: {quote(warnings)}"


class WarningsPolicy:
    """One backend's handling of answers with warnings: count, log (rate-limited), and with
    `reject` raise the 503 the request answers with. The clock is passed in for the tests."""

    def __init__(
        self,
        *,
        backend: str,
        policy: str,
        warnings: Counter,
        errors: Counter,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if policy not in WARNINGS_POLICIES:
            raise ValueError(f"warnings: must be one of {', '.join(WARNINGS_POLICIES)}")
        self.backend, self.policy = backend, policy
        self._warnings, self._errors = warnings, errors
        self._clock = clock
        self._logged: dict[tuple[str, str], tuple[float, int]] = {}  # last line, since then

    def check(self, endpoint: str, doc: Mapping[str, Any], *, rule: str) -> None:
        """Raise PrometheusUnavailable for an answer with warnings under `reject`."""
        if doc.get("infos"):
            log.debug(
                "prometheus %s %s infos for %s: %s", self.backend, endpoint, rule, doc["infos"]
            )
        found = answer_warnings(doc)
        if not found:
            return
        self._warnings.labels(self.backend, endpoint).inc()
        self._log(endpoint, rule, found)
        if self.policy == "reject":
            self._errors.labels(self.backend, endpoint, "partial").inc()
            raise PrometheusUnavailable(partial_message(found))

    def _log(self, endpoint: str, rule: str, found: tuple[str, ...]) -> None:
        now = self._clock()
        last, held = self._logged.get((endpoint, rule), (float("-inf"), 0))
        if now - last < LOG_EVERY:
            self._logged[(endpoint, rule)] = (last, held + 1)
            return
        self._logged[(endpoint, rule)] = (now, 0)
        action = "refused" if self.policy == "reject" else "served"
        since = f"; {held} more since the last line" if held else ""
        log.warning(
            "prometheus %s %s for %s: answer with warnings %s: %s%s",
            self.backend,
            endpoint,
            rule or "(no rule)",
            action,
            quote(found),
            since,
        )
