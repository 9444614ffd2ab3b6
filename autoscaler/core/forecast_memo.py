"""Refits that reuse the previous refit's work: bit for bit what `forecast.fit` answers.

Pure: the history, `now` and the previous refit's memo are inputs; no clock, no I/O. Most of a
refit's work is judging forecasts: for each season, at each origin of the stretch it judges, the
forecast from the values before the origin against the highest value after it, one term
(|forecast - highest actual|, |highest actual|) per origin. Thirty minutes later almost every
term reads only values that did not change, so `refit` keeps the terms in a `FitMemo` (keyed by
absolute grid time, start + i * step, so a history whose oldest minutes were dropped keeps them)
and the next refit takes them from it; it computes the new terms, and only the point baselines
those read. The error is then summed over the terms in `fit`'s order, so the float sums, the
verdict, the season and the message are `fit`'s exactly.

What the memo trusts: nothing the caller says. It holds a 16-byte BLAKE2b digest of each block of
BLOCK values on the absolute grid (of the values before `now`) and the next refit compares them
with the new history's: the first block whose digest differs marks where the history may have
changed. A cached term is reused only when every value it read lies before that block, and in no
block that only one of the two holds whole (values that entered or left the history as its start
moved, or that sit in a partly held block at the front). So a history overwritten anywhere, NaN to
number or back, a front drop, a new start after a gap (nothing in common: nothing reused), another
season list or horizon (a term depends on the season and horizon; the verdict is settled afresh
each time) all give `fit`'s answer. The alternative, the caller stating "unchanged before X",
would be one forgotten overwrite away from a wrong answer: the controller's history is rewritten
in place by each read. A digest match of changed values needs a 128-bit collision.

Memory per memo, bounded whatever the calls: 16 bytes per BLOCK values (the digests) and 17 bytes
per term kept (per season at most 336 compared every 30 minutes and 288 judged every 5). For 14
days of one-minute history and seasons [24h, 168h], about 20 kB (tests/core/test_forecast_memo.py
measures it), an eighth of the history it describes. A memo is never changed once made: the same
memo can be given to several refits.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from autoscaler.core.forecast import (
    CYCLES,
    MAX_ERROR,
    Baselines,
    ModelFit,
    Series,
    baseline,
    combined_error,
    origin_term,
    settle,
)

__all__ = ["BLOCK", "FitMemo", "RefitStats", "refit"]

BLOCK = 64  # values per digest: a change is located to within a block (about an hour a minute)
_DIGEST = 16  # bytes per digest


@dataclass(frozen=True, slots=True)
class RefitStats:
    """What the refit that made a memo computed and what it took from the previous memo."""

    baselines_computed: int
    terms_computed: int
    terms_reused: int


@dataclass(frozen=True, slots=True)
class _Terms:
    """A season's terms at the origins first + i * stride (ns) for one horizon; judged[i] == 0:
    that forecast could not be judged (no actual, or no forecast)."""

    first: int
    stride: int
    wrong: array[float]
    total: array[float]
    judged: bytes


@dataclass(frozen=True, slots=True)
class FitMemo:
    """What a refit leaves for the next one on the same history (never changed once made)."""

    step: int  # ns: the grid's; another grid reuses nothing
    offset: int  # ns: start % step (the grid's phase); another phase reuses nothing
    start: int  # the absolute grid index (start // step) of the history's first value
    block: int  # the absolute block number (grid index // BLOCK) of the first digest
    digests: bytes  # one per whole block of the values before `now`
    terms: Mapping[tuple[int, int, int], _Terms]  # by season, horizon and stride (in steps)
    stats: RefitStats


def refit(
    series: Series,
    *,
    now: int,
    horizon: int,
    seasonality: Sequence[int],
    max_error: float = MAX_ERROR,
    memo: FitMemo | None = None,
) -> tuple[ModelFit, FitMemo]:
    """`fit(series, now=now, horizon=horizon, seasonality=seasonality, max_error=max_error)`,
    reusing from `memo` (the previous refit's on this history) what is still valid; returns the
    fit and the memo for the next refit."""
    work = _Refit(series, series.index(now), memo)
    model = settle(
        series,
        now=now,
        horizon=horizon,
        seasonality=seasonality,
        max_error=max_error,
        measure=work.error,
    )
    return model, work.memo()


class _Lazy:
    """A season's point baselines, each computed when first read (and counted)."""

    __slots__ = ("_made", "_p", "_values", "computed")

    def __init__(self, values: Sequence[float], p: int) -> None:
        self._values = values
        self._p = p
        self._made: list[float | None] = [None] * len(values)
        self.computed = 0

    def __getitem__(self, j: int, /) -> float:
        b = self._made[j]
        if b is None:  # (a NaN baseline is kept like any other)
            b = self._made[j] = baseline(self._values, j, self._p)
            self.computed += 1
        return b


class _Refit:
    """One refit's work: each season's terms, from the memo where still valid.

    Indices are the new series' (j: the value at start + j * step). `changed`: the first index
    that may differ from what the memo saw; `moved`: the indices [a, b) that entered or left the
    history as its start moved or that no digest held by both covers (empty when reusing
    nothing)."""

    def __init__(self, series: Series, end: int, memo: FitMemo | None) -> None:
        self.series = series
        step = series.step
        g0 = series.start // step  # the absolute grid index of values[0]
        first, last = -(-g0 // BLOCK), (g0 + end) // BLOCK  # the whole blocks before `end`
        self.start, self.block = g0, first
        self.digests = _digests(series.values, first * BLOCK - g0, max(0, last - first))
        old = memo if memo is not None and _aligned(memo, series) else None
        self.changed = 0
        self.moved = (0, 0)
        if old is not None:
            lo = max(first, old.block)
            hi = min(last, old.block + len(old.digests) // _DIGEST)
            if lo >= hi:  # no whole block in common (a new start after a gap): nothing reused
                old = None
            else:
                same = _same_blocks(old.digests, old.block, self.digests, first, lo, hi)
                self.changed = same * BLOCK - g0
                self.moved = (min(0, old.start - g0), lo * BLOCK - g0)
        self.old = old
        self.lazy: dict[int, _Lazy] = {}  # by season (in steps)
        self.terms: dict[tuple[int, int, int], _Terms] = {}
        self.counts = [0, 0]  # terms computed, reused
        self.eager = 0  # baselines computed in full stretches

    def memo(self) -> FitMemo:
        s = self.series
        computed = self.eager + sum(lazy.computed for lazy in self.lazy.values())
        stats = RefitStats(computed, *self.counts)
        return FitMemo(
            s.step, s.start % s.step, self.start, self.block, self.digests, self.terms, stats
        )

    def error(
        self,
        series: Series,
        end: int,
        period: int,
        steps: int,
        level: int,
        window: int,
        stride: int,
    ) -> float | None:
        """`forecast._error`'s answer, each term taken from the memo when still valid."""
        p, stride = period // series.step, max(1, stride // series.step)
        origins = range(end - window, end - steps, stride)
        terms: list[tuple[float, float] | None] = [None] * len(origins)
        reused = self._reused((p, steps, stride), origins, p, level, terms)
        taken = sum(reused)
        base: Baselines
        if taken:  # only the baselines the new terms read
            lazy = self.lazy.get(p)
            if lazy is None:
                lazy = self.lazy[p] = _Lazy(series.values, p)
            base, lo = lazy, 0
        else:  # every term computed: every baseline, as fit computes them (no call per read)
            lo = end - window - level
            base = [baseline(series.values, j, p) if j >= 0 else math.nan for j in range(lo, end)]
            self.eager += len(base)
        for i, o in enumerate(origins):
            if not reused[i]:
                terms[i] = origin_term(series.values, base, lo, o, p=p, steps=steps, level=level)
        self.counts[0] += len(origins) - taken
        self.counts[1] += taken
        key, first = (p, steps, stride), series.start + origins.start * series.step
        kept = self.terms.get(key)
        if kept is None or len(kept.judged) <= len(terms):  # keep the longer stretch judged
            self.terms[key] = _terms_run(first, stride * series.step, terms)
        return combined_error(terms, planned=len(origins))

    def _reused(
        self,
        key: tuple[int, int, int],
        origins: range,
        p: int,
        level: int,
        terms: list[tuple[float, float] | None],
    ) -> bytearray:
        """Put in `terms` the memo's still valid terms for `key` at `origins`; which were."""
        reused = bytearray(len(origins))
        run = None if self.old is None else self.old.terms.get(key)
        if run is None:
            return reused
        _, steps, stride = key
        d, off = divmod(self._index(run.first) - origins.start, stride)
        if off:  # judged at other origins (refits not a whole number of strides apart)
            return reused
        # a term at o reads the values [o - k * p - level, o - k * p + steps] for k in
        # 0..CYCLES (its baselines, its level's offsets, the windows it forecasts from and the
        # actual one): valid when none lies in a moved stretch, nor at or past `changed`
        a, b = self.moved
        holes = [(a + k * p - steps, b + k * p + level) for k in range(CYCLES + 1) if a < b]
        for lo, hi in _outside(0, self.changed - steps, holes):
            # the origins' indices i in [lo, hi), held by the memo at slot i - d
            first = max(-((origins.start - lo) // stride), d, 0)
            last = min(-((origins.start - hi) // stride), d + len(run.judged), len(origins))
            for i in range(first, last):
                k = i - d
                terms[i] = (run.wrong[k], run.total[k]) if run.judged[k] else None
                reused[i] = 1
        return reused

    def _index(self, at: int) -> int:
        return (at - self.series.start) // self.series.step


def _digests(values: Sequence[float], lo: int, blocks: int) -> bytes:
    """The digest of each of `blocks` blocks of BLOCK values from index lo (the IEEE doubles'
    bytes: NaN equals NaN, -0.0 differs from 0.0)."""
    raw = array("d", values[lo : lo + blocks * BLOCK]).tobytes()
    size = BLOCK * 8
    return b"".join(
        hashlib.blake2b(raw[i : i + size], digest_size=_DIGEST).digest()
        for i in range(0, len(raw), size)
    )


def _same_blocks(old: bytes, old_first: int, new: bytes, new_first: int, lo: int, hi: int) -> int:
    """The first block in [lo, hi) whose digests differ, or hi."""
    for b in range(lo, hi):
        i, j = (b - old_first) * _DIGEST, (b - new_first) * _DIGEST
        if old[i : i + _DIGEST] != new[j : j + _DIGEST]:
            return b
    return hi


def _terms_run(first: int, stride: int, terms: Sequence[tuple[float, float] | None]) -> _Terms:
    wrong = array("d", [t[0] if t else 0.0 for t in terms])
    total = array("d", [t[1] if t else 0.0 for t in terms])
    return _Terms(first, stride, wrong, total, bytes(t is not None for t in terms))


def _aligned(memo: FitMemo, series: Series) -> bool:
    """The memo was made on this grid (a start moved by whole steps)."""
    return memo.step == series.step and memo.offset == series.start % series.step


def _outside(lo: int, hi: int, holes: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The spans of [lo, hi) outside every hole, in order."""
    at = lo
    for a, b in sorted(holes):
        if a >= hi:
            break
        if a > at:
            yield at, a
        at = max(at, b)
    if at < hi:
        yield at, hi
