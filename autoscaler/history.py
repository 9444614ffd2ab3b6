"""The history `spec.predictive` forecasts from, cached per metric (docs/predictive.md "Where the
history comes from").

Each External, Object and Pods metric's one-minute history is read from the adapter's
history.promscaler.dev group and kept here, keyed by (namespace, metric source, predictive
settings, and for a Pods metric the target's pod selector), so Autoscalers sharing a metric
share one history. A pass never waits for a read: `forecasts` answers from what is held and,
when a refresh is due, starts it in the background.
A refresh reads only the minutes since the last one (plus a few: the latest steps of a rate move
as samples arrive), once per REFRESH per metric; a failed one keeps the last good history and
is counted. The model is refitted (the season chosen and judged) once per REFIT, in one worker
thread, since a refit costs far more than a forecast; a pass only computes the forecast, once
per minute.

Spread: each history reads and refits at its own phase of REFRESH and REFIT (from a hash of its
key), not at the phase of the pass that first asked for it. After a restart every history is
first asked for within one pass period; without the phase, every later read and refit would come
in the same few seconds of each period: a burst of range queries every 5 minutes and a queue of
refits every 30. The first read and fit of a history are never delayed. One worker thread does
every refit: a refit is pure Python under the GIL, so more threads add no throughput and take
more of the event loop's time.

Incremental: each refit leaves a memo (autoscaler/core/forecast_memo.py) the next one starts from,
and judges the history up to the start of its own REFIT period, so a history's refits are whole
periods apart and the memo's judged forecasts fall where the next refit judges them.

Memory: a history is an `array('d')`, 8 bytes a minute (a list of floats takes about 32), and
its memo about an eighth of that.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import zlib
from array import array
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import orjson

from autoscaler.cluster import ClusterError
from autoscaler.core.fields import DocumentError
from autoscaler.core.forecast import READY, Forecast, ModelFit, Series, forecast
from autoscaler.core.forecast_memo import FitMemo, refit
from autoscaler.core.model import NS
from autoscaler.core.predictive import NO_HISTORY
from autoscaler.core.predictive_document import parse_predictive
from autoscaler.core.predictive_model import PredictiveSpec
from autoscaler.core.predictive_replay import GRID as GRID_NS
from autoscaler.core.predictive_replay import REFIT as REFIT_NS

__all__ = ["REFIT", "REFRESH", "HistoryCache", "HistoryReader"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]

GRID = GRID_NS // NS  # seconds: the adapter's step and the model's grid, as simulate replays
REFRESH = 300.0  # seconds between reads of one metric's history: one range query per 5 minutes
REFIT = REFIT_NS / NS  # seconds between refits, as simulate refits: costly, and slow to move
OVERLAP = 5 * GRID  # re-read the last minutes: a rate's newest steps change as samples arrive
IDLE = 900.0  # seconds unasked after which a history is dropped (its Autoscaler went away)


class HistoryReader(Protocol):
    """Where histories come from (`autoscaler.kube.cluster.KubeCluster.read_history`)."""

    async def read_history(
        self,
        namespace: str,
        metric: Mapping[str, Any],
        *,
        start: int,
        end: int,
        pod_selector: str = "",
    ) -> tuple[int, list[float | None]]:
        """(unix seconds of the first value, one value a minute, None: no sample) over
        [start, end]; a Pods metric's is the sum over the pods of the workload
        `pod_selector` selects; raises ClusterError."""
        ...


@dataclass(slots=True)
class _Track:
    """One metric's history and model."""

    settings: PredictiveSpec
    pod_selector: str = ""  # a Pods metric's: the target's selector its history is read for
    start: int | None = None  # unix seconds of values[0]
    values: array[float] = field(default_factory=lambda: array("d"))  # NaN: no sample
    read_phase: float = 0.0  # in [0, 1): where in each REFRESH this history's read falls
    refit_phase: float = 0.0  # in [0, 1): where in each REFIT its refit falls (at the next read)
    attempted: float | None = None  # unix seconds the last refresh started
    used: float = 0.0  # unix seconds a pass last asked for it
    error: str = ""  # why the last refresh failed ("" when it succeeded)
    task: asyncio.Task[None] | None = None
    model: ModelFit | None = None
    memo: FitMemo | None = None  # what the last refit leaves the next (forecast_memo)
    fitted: float | None = None
    last: tuple[tuple[int, int, int], Forecast] | None = None  # this minute's forecast

    def end(self) -> int:
        """Unix seconds just after the last value held."""
        return (self.start or 0) + len(self.values) * GRID


class HistoryCache:
    """Histories and models of the forecastable metrics of every Autoscaler on this instance.

    `on_refresh(result)` counts each refresh (success, failure); `parallel` bounds the reads in
    flight; `timeout` is the seconds one read may take before it counts as failed."""

    def __init__(
        self,
        reader: HistoryReader,
        *,
        refresh: float = REFRESH,
        refit: float = REFIT,
        parallel: int = 4,
        timeout: float = 30.0,
        on_refresh: Callable[[str], None] = lambda result: None,
    ) -> None:
        self._reader = reader
        self._refresh = refresh
        self._refit = refit
        self._timeout = timeout
        self._gate = asyncio.Semaphore(parallel)
        self._on_refresh = on_refresh
        self._tracks: dict[tuple[Any, ...], _Track] = {}
        self._worker: ThreadPoolExecutor | None = None  # the refits' one thread, made when needed
        self._swept = 0.0  # unix seconds of the last sweep of idle histories
        self.reads = 0  # history reads started; tests and the e2e read it
        self.refits_pending = 0  # refits queued for or running on the refit thread

    def forecasts(
        self, namespace: str, spec: Mapping[str, Any], now: datetime, *, pod_selector: str = ""
    ) -> list[Any] | None:
        """The decide document's `forecasts` (one entry per spec metric), None when the spec
        has no valid `predictive` (the core then reports it). `pod_selector`: the target's
        /scale selector, whose pods a Pods metric's history sums. Never waits for a read."""
        try:
            settings = parse_predictive(spec, "spec")
        except DocumentError:
            return None
        if settings is None:
            return None
        at = now.timestamp()
        if at - self._swept >= 60:
            self._sweep(at)
        out: list[Any] = []
        for metric in spec.get("metrics") or []:
            kind = metric.get("type")
            if kind in ("External", "Object"):
                out.append(self._one(namespace, metric, settings, at))
            elif kind == "Pods" and not pod_selector:  # never every pod of the namespace
                message = "the target's /scale has no selector: no pods to read history for"
                out.append({"verdict": NO_HISTORY, "message": message})
            elif kind == "Pods":
                out.append(self._one(namespace, metric, settings, at, pod_selector))
            else:
                out.append(None)
        return out

    def __len__(self) -> int:
        """Histories held."""
        return len(self._tracks)

    def minutes(self) -> int:
        """One-minute values held, over every history (8 bytes each)."""
        return sum(len(t.values) for t in self._tracks.values())

    def _sweep(self, at: float) -> None:
        """Drop the histories no pass asked for in IDLE (deleted Autoscalers, changed specs)."""
        self._swept = at
        idle = [k for k, t in self._tracks.items() if at - t.used > IDLE and t.task is None]
        for key in idle:
            del self._tracks[key]

    async def settled(self) -> None:
        """Wait for the reads (and refits) in flight: tests, and a clean shutdown."""
        tasks = [t.task for t in self._tracks.values() if t.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        tasks = [t.task for t in self._tracks.values() if t.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)
            self._worker = None

    def _one(
        self,
        namespace: str,
        metric: Mapping[str, Any],
        settings: PredictiveSpec,
        at: float,
        pod_selector: str = "",
    ) -> JSON | None:
        # what names the history: the metric source (with its selector, and for an Object
        # metric the described object), not the target; for a Pods metric the target's pods,
        # so a changed selector starts a history of its own, read afresh
        source = metric.get("external") or metric.get("object") or metric.get("pods") or {}
        what = {k: v for k, v in source.items() if k != "target"}
        # ("" but for a Pods metric, which never comes here without a selector)
        key = (namespace, orjson.dumps(what, option=orjson.OPT_SORT_KEYS), settings, pod_selector)
        track = self._tracks.get(key)
        if track is None:
            # two independent phases: with one, a refit (made at the first read past its
            # phase) would fall in the same few minutes of every REFIT for all histories
            turn = zlib.crc32(repr(key).encode())
            track = self._tracks[key] = _Track(
                settings,
                pod_selector,
                read_phase=(turn & 0xFFFF) / 2**16,
                refit_phase=(turn >> 16) / 2**16,
            )
        track.used = at
        due = _due(track.attempted, at, self._refresh, track.read_phase)
        if due and track.task is None:
            track.attempted = at
            track.task = asyncio.create_task(self._update(track, namespace, metric, at))
        return _entry(track, at)

    async def _update(
        self, track: _Track, namespace: str, metric: Mapping[str, Any], at: float
    ) -> None:
        """Read the minutes since the last read, then refit when due; never raises."""
        try:
            s = track.settings
            end = int(at) // GRID * GRID
            earliest = end - s.history // NS
            begin = earliest if track.start is None else max(earliest, track.end() - OVERLAP)
            async with self._gate:
                self.reads += 1
                try:
                    async with asyncio.timeout(self._timeout):
                        first, values = await self._reader.read_history(
                            namespace, metric, start=begin, end=end, pod_selector=track.pod_selector
                        )
                except (ClusterError, TimeoutError) as e:
                    why = str(e) if isinstance(e, ClusterError) else "the read timed out"
                    track.error = why or type(e).__name__
                    self._on_refresh("failure")
                    log.warning("history read failed: %s", track.error)
                    return
            track.error = ""
            self._on_refresh("success")
            _merge(track, first, values, keep=s.history // NS)
            if _due(track.fitted, at, self._refit, track.refit_phase):
                series = _series(track)
                if self._worker is None:
                    self._worker = ThreadPoolExecutor(1, thread_name_prefix="promscaler-refit")
                # judged up to the start of this history's refit period: successive refits are
                # then whole periods apart, and the memo's judged forecasts fall where the new
                # refit judges them
                now = int(_period_start(at, self._refit, track.refit_phase)) * NS
                job = functools.partial(
                    refit,
                    series,
                    now=now,
                    horizon=s.horizon,
                    seasonality=s.seasonality,
                    memo=track.memo,
                )
                loop = asyncio.get_running_loop()
                self.refits_pending += 1
                try:
                    track.model, track.memo = await loop.run_in_executor(self._worker, job)
                finally:
                    self.refits_pending -= 1
                track.fitted = at
                track.last = None
        except Exception as e:  # a background task's boundary: said and counted, never lost
            track.error = f"{type(e).__name__}: {e}"
            self._on_refresh("failure")
            log.exception("history refresh failed")
        finally:
            track.task = None


def _due(last: float | None, at: float, period: float, phase: float) -> bool:
    """Whether a read or refit last started at `last` (None: never) is due at `at`: once in
    each `period`, the periods starting at `phase` x period past a multiple of it."""
    return last is None or _period_start(at, period, phase) > _period_start(last, period, phase)


def _period_start(at: float, period: float, phase: float) -> float:
    """The start of the `period` (the periods starting at `phase` x period past a multiple of
    it) holding `at`. Whole seconds of it are a whole number of periods apart (`phase` x period
    has a short binary fraction): exact."""
    shift = phase * period
    return shift + (at - shift) // period * period


def _merge(track: _Track, first: int, values: Sequence[float | None], *, keep: int) -> None:
    """Put the read minutes in place (overwriting the overlap), then keep the last `keep` s."""
    new = array("d", [math.nan if v is None else float(v) for v in values])
    if track.start is None or first < track.start or first > track.end():
        track.start, track.values = first, new  # nothing held, or a gap: start again
    else:
        offset = (first - track.start) // GRID
        track.values[offset:] = new
    drop = max(0, len(track.values) - keep // GRID)
    if drop:
        del track.values[:drop]
        track.start += drop * GRID


def _series(track: _Track) -> Series:
    return Series((track.start or 0) * NS, GRID * NS, track.values)


def _entry(track: _Track, at: float) -> JSON | None:
    """What the pass gets: the forecast, or why there is none."""
    failed = f"the last history read failed: {track.error}" if track.error else ""
    if track.model is None:
        return {"verdict": NO_HISTORY, "message": failed} if failed else None
    s = track.settings
    if at - track.end() > max(track.model.period // NS, GRID * 60):
        # the history is older than the season judged: its forecast no longer applies
        return {"verdict": NO_HISTORY, "message": f"the history is out of date; {failed}"}
    series = _series(track)
    now = int(at * NS)
    key = (series.start, len(series.values), series.position(now))
    if track.last is None or track.last[0] != key:
        track.last = (key, forecast(series, track.model, now=now, horizon=s.horizon))
    got = track.last[1]
    if got.fit.verdict == READY and (got.value is None or not math.isfinite(got.value)):
        return {"verdict": NO_HISTORY, "message": "the forecast is not a finite number"}
    entry: JSON = {
        "verdict": got.fit.verdict,
        "horizon": f"{s.horizon // NS}s",
        "season": f"{got.fit.period // NS}s",
        "message": got.fit.message,
    }
    if got.value is not None and math.isfinite(got.value):
        entry["value"] = f"{got.value:.3f}"
    if got.fit.error is not None:
        entry["error"] = got.fit.error
    return entry
