"""When a status whose only news is the recommendations' timestamps is written: once per refresh
period, at a point of that period fixed by the Autoscaler's name, so thousands of Autoscalers
that started together do not all refresh in the same sync period."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from autoscaler.options import ControllerOptions
from autoscaler.statuswrite import StatusWriter
from common.kubetime import format_time, parse_time

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SYNC = 15  # seconds between two passes of one Autoscaler


class Store:
    """Status patches merged into objects, as the API server keeps them."""

    def __init__(self) -> None:
        self.status: dict[str, dict[str, Any]] = {}
        self.writes: list[tuple[str, datetime]] = []
        self.now = T0

    async def patch_status(
        self, namespace: str, name: str, patch: dict[str, Any]
    ) -> dict[str, Any]:
        key = f"{namespace}/{name}"
        merged = {**self.status.get(key, {}), **patch}
        self.status[key] = {k: v for k, v in merged.items() if v is not None}
        self.writes.append((key, self.now))
        return {"status": dict(self.status[key])}


def obj(store: Store, key: str, down_window: int | None = None) -> dict[str, Any]:
    namespace, _, name = key.partition("/")
    spec: dict[str, Any] = {"scaleTargetRef": {"kind": "Deployment", "name": name}}
    if down_window is not None:
        spec["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": down_window}}
    return {
        "metadata": {"namespace": namespace, "name": name, "generation": 1},
        "spec": spec,
        "status": dict(store.status.get(key, {})),
    }


async def one_pass(writer: StatusWriter, store: Store, key: str, now: datetime, **kw: Any) -> None:
    """A pass that changes nothing but the time of its (unchanged) recommendation."""
    store.now = now
    o = obj(store, key, **kw)
    history = {
        "recommendations": [{"replicas": 2, "timestamp": format_time(now)}],
        "scaleUpEvents": [],
        "scaleDownEvents": [],
    }
    status = {"currentReplicas": 2, "desiredReplicas": 2}
    await writer.write(o, writer.base(o), status, history)


def persisted_at(store: Store, key: str) -> datetime:
    recs = store.status[key]["history"]["recommendations"]
    return max(parse_time(r["timestamp"]) for r in recs)


def keys(n: int) -> list[str]:
    return [f"team-{i % 7}/worker-{i}" for i in range(n)]


async def run_rounds(
    writers: list[StatusWriter], store: Store, names: list[str], rounds: int
) -> dict[int, int]:
    """`rounds` sync periods, each Autoscaler at its own offset in the period (as the queue
    spreads them); `writers[r * len(writers) // rounds]` runs round r. Writes per round."""
    per_round: Counter[int] = Counter()
    for r in range(rounds):
        writer = writers[r * len(writers) // rounds]
        for i, key in enumerate(names):
            at = T0 + timedelta(seconds=r * SYNC + i * SYNC // len(names))
            before = len(store.writes)
            await one_pass(writer, store, key, at)
            per_round[r] += len(store.writes) - before
    return per_round


async def test_autoscalers_that_start_together_spread_their_refreshes_over_the_period():
    store, names = Store(), keys(1000)
    per_round = await run_rounds(
        [StatusWriter(store, options=ControllerOptions())], store, names, 17
    )

    assert per_round[0] == 1000, "the first pass writes every status"
    steady = [per_round[r] for r in range(1, 17)]
    # 60 s of refresh period over 15 s rounds: a quarter of them each round, not all every 4th
    assert max(steady) <= 330, steady
    assert min(steady) >= 170, steady
    # and no more writes than one refresh per Autoscaler per period
    assert sum(steady) <= 1000 * 16 * SYNC // 60 + 1000, sum(steady)


async def test_each_autoscaler_is_refreshed_once_per_period_and_never_persists_older_history():
    store, names = Store(), keys(50)
    writer = StatusWriter(store, options=ControllerOptions(history_refresh=60))
    for r in range(40):
        for key in names:
            now = T0 + timedelta(seconds=r * SYNC)
            await one_pass(writer, store, key, now)
            assert now - persisted_at(store, key) < timedelta(seconds=60), (key, r)
    for key in names:
        times = [t for k, t in store.writes if k == key]
        gaps = {(b - a).total_seconds() for a, b in itertools.pairwise(times[1:])}
        assert gaps == {60.0}, (key, gaps)  # after the first refresh: exactly one per period
        assert 0 < (times[1] - times[0]).total_seconds() <= 60


async def test_half_the_downscale_window_bounds_the_refresh_when_shorter():
    store, key = Store(), "default/web"
    writer = StatusWriter(store, options=ControllerOptions(history_refresh=60))
    for r in range(30):
        now = T0 + timedelta(seconds=r * 5)
        await one_pass(writer, store, key, now, down_window=40)  # refresh within 20 s
        assert now - persisted_at(store, key) < timedelta(seconds=20), r
    assert 30 * 5 / 20 <= len(store.writes) <= 30 * 5 / 20 + 2


async def test_a_new_writer_keeps_the_refresh_points_of_the_one_before():
    """A restart or a shard handoff: the next process refreshes at the same points."""
    names = keys(200)
    one = Store()
    await run_rounds([StatusWriter(one, options=ControllerOptions())], one, names, 12)
    two = Store()
    writers = [StatusWriter(two, options=ControllerOptions()) for _ in range(3)]
    await run_rounds(writers, two, names, 12)
    assert one.writes == two.writes


def test_the_refresh_points_do_not_depend_on_the_process_hash_seed():
    code = (
        "import json; from autoscaler.statuswrite import _phase;"
        "print(json.dumps([_phase(f'ns/a{i}') for i in range(20)]))"
    )
    root = Path(__file__).resolve().parents[2]
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    (phases,) = outputs
    values = json.loads(phases)
    assert all(0 <= v < 1 for v in values)
    assert len(set(values)) == 20
