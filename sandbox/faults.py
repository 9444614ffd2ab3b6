"""Applying a fault plan to the sandbox's requests, what the sandbox saw, and the admin endpoint.

`Faults.before()` runs for every authenticated, authorized request: it counts it (by verb and
resource: the tests count LISTs), records writes of `/scale` (who wrote what, when: the soak's
"never two writers" check), then adds latency, answers with an error Status, or drops the
connection while the plan refuses connections. `watch_options()` shortens or expires a watch.
Every injected fault is logged (logger `sandbox.faults`) with the plan's seed.

Admin only, through the sandbox's own authorization (non-resource URLs, so `system:masters`
or a `nonResourceURLs` rule):

    GET /sandbox/faults        the plan in force, and counts of injected faults
    PUT /sandbox/faults        a new plan (JSON or YAML, the `faults:` format); {} clears it
    GET /sandbox/stats?since=N requests by verb and resource, /scale writes from index N
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from sandbox import errors
from sandbox.bodies import decode, read_raw, respond
from sandbox.faultplan import FaultPlan, Latency, PlanError, parse_plan
from sandbox.requestinfo import RequestInfo
from sandbox.watch import WatchOptions

__all__ = ["ADMIN_PATHS", "Faults"]

log = logging.getLogger(__name__)
FAULTS_PATH, STATS_PATH = "/sandbox/faults", "/sandbox/stats"
ADMIN_PATHS = frozenset({FAULTS_PATH, STATS_PATH})
SCALE_WRITES_KEPT = 200_000  # a soak hour at a few hundred autoscalers fits
REASONS = {
    409: "Conflict",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}


class Faults:
    """The plan in force, its random source, and the sandbox's request and /scale audit."""

    def __init__(self, plan: FaultPlan | None = None, *, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.requests: Counter[tuple[str, str]] = Counter()  # (verb, resource[/sub]) -> count
        self.injected: Counter[str] = Counter()  # fault kind -> count
        self.scale_writes: deque[dict[str, Any]] = deque(maxlen=SCALE_WRITES_KEPT)
        self.scale_write_count = 0
        self.status_writes: deque[dict[str, Any]] = deque(maxlen=SCALE_WRITES_KEPT)
        self.refuse: Callable[[float], Awaitable[None]] | None = None  # set by the Sandbox
        self._refusing_until = 0.0
        self.set(plan or FaultPlan())

    def set(self, plan: FaultPlan) -> None:
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self._refusing_until = self.clock() + plan.refuse_seconds
        log.info("fault plan set (seed %d): %s", plan.seed, plan)

    def refusing(self) -> bool:
        return self.clock() < self._refusing_until

    # ---- per request ---------------------------------------------------------------------

    async def before(
        self, request: web.Request, info: RequestInfo, user: str
    ) -> web.StreamResponse | None:
        """None to serve the request; else the response that replaces it."""
        full = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        self.requests[(info.verb, full)] += 1
        if self.refusing():
            self._inject("refuse", info)
            if request.transport is not None:
                request.transport.abort()  # like a server that is down: the connection dies
            return web.Response(status=503)
        delay = sum(self._delay(rule) for rule in self.plan.latency if _applies(rule, info))
        if delay > 0:
            self._inject("latency", info)
            await asyncio.sleep(delay)
        for rule in self.plan.errors:
            if rule.match.matches(info.verb, info.resource, info.subresource) and (
                self.rng.random() < rule.rate
            ):
                self._inject(f"http{rule.code}", info)
                return _error_response(rule.code, rule.retry_after, info)
        if info.subresource in ("scale", "status") and info.verb in ("update", "patch"):
            self._audit(info, user, request.headers.get("User-Agent", ""))
        return None

    def watch_options(self, info: RequestInfo, options: WatchOptions) -> WatchOptions:
        """The options of a watch, shortened or expired as the plan says."""
        w = self.plan.watch
        if not w.match.matches("watch", info.resource, info.subresource):
            return options
        changes: dict[str, Any] = {}
        if w.cut_after_events:
            changes["max_events"] = w.cut_after_events
        if w.cut_after_seconds:
            changes["timeout"] = min(options.timeout, w.cut_after_seconds)
        resumed = options.resource_version not in ("", "0")
        if resumed and w.gone_on_resume and self.rng.random() < w.gone_on_resume:
            self._inject("watch410", info)
            changes["expire"] = True
        return dataclasses.replace(options, **changes) if changes else options

    def _delay(self, rule: Latency) -> float:
        if rule.distribution == "uniform":
            value = self.rng.uniform(rule.min, max(rule.min, rule.seconds))
        elif rule.distribution == "exponential":
            value = self.rng.expovariate(1 / rule.seconds) if rule.seconds > 0 else 0.0
        else:
            value = rule.seconds
        return min(value, rule.max)

    def _inject(self, kind: str, info: RequestInfo) -> None:
        self.injected[kind] += 1
        log.info(
            "fault injected: %s on %s %s (seed %d, #%d)",
            kind,
            info.verb,
            info.path,
            self.plan.seed,
            self.injected[kind],
        )

    def _audit(self, info: RequestInfo, user: str, agent: str) -> None:
        entry = {
            "time": self.clock(),
            "user": user,
            "agent": agent,  # the client's User-Agent: which replica, where they share a user
            "verb": info.verb,
            "resource": info.resource,
            "namespace": info.namespace,
            "name": info.name,
        }
        if info.subresource == "status":
            self.status_writes.append(entry)
            return
        self.scale_write_count += 1
        self.scale_writes.append(entry)

    # ---- the admin endpoints -------------------------------------------------------------

    async def serve_admin(self, request: web.Request, info: RequestInfo) -> web.Response:
        if info.path == STATS_PATH and request.method == "GET":
            return respond(self._stats(request.query.get("since", "0")))
        if info.path != FAULTS_PATH:
            raise errors.method_not_allowed(request.method)
        if request.method == "PUT":
            raw = await read_raw(request)
            try:
                plan = parse_plan(decode(raw, request.content_type) if raw.strip() else {})
            except PlanError as err:
                raise errors.bad_request(f"invalid fault plan: {err}") from err
            self.set(plan)
            if plan.refuse_seconds and self.refuse is not None:
                asyncio.get_running_loop().call_soon(self._start_refusing, plan.refuse_seconds)
        elif request.method != "GET":
            raise errors.method_not_allowed(request.method)
        return respond({"plan": _plan_json(self.plan), "injected": dict(self.injected)})

    def _start_refusing(self, seconds: float) -> None:
        assert self.refuse is not None
        task = asyncio.ensure_future(self.refuse(seconds))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def _stats(self, since: str) -> dict[str, Any]:
        try:
            start = int(since)
        except ValueError as err:
            raise errors.bad_request(f"since: not an integer: {since!r}") from err
        first = self.scale_write_count - len(self.scale_writes)  # index of the oldest kept
        writes = list(self.scale_writes)[max(0, start - first) :]
        counts = sorted(self.requests.items())
        return {
            "requests": [{"verb": v, "resource": r, "count": n} for (v, r), n in counts],
            "injected": dict(self.injected),
            "scaleWrites": writes,
            "statusWrites": list(self.status_writes),  # all kept (no `since`)
            "next": self.scale_write_count,
        }


def _applies(rule: Latency, info: RequestInfo) -> bool:
    return rule.match.matches(info.verb, info.resource, info.subresource)


def _error_response(code: int, retry_after: int, info: RequestInfo) -> web.Response:
    if code == 409:
        err = errors.conflict(info.resource, info.group, info.name, errors.STALE)
    else:
        message = {
            429: "Too many requests, please try again later.",
            500: "Internal error occurred: injected fault",
            503: "the server is currently unable to handle the request",
        }[code]
        details = {"retryAfterSeconds": retry_after} if code in (429, 503) else None
        err = errors.ApiError(code, REASONS[code], message, details=details)
    response = respond(err.status(), status=code)
    if code in (429, 503):
        response.headers["Retry-After"] = str(retry_after)
    return response


def _plan_json(plan: FaultPlan) -> dict[str, Any]:
    return dataclasses.asdict(plan)
