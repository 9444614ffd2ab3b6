"""The decision log: what it records, that `decide --jsonl` replays it exactly, rotation, a disk
that stops answering, and the flags."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from autoscaler.app import serve
from autoscaler.core import decide_document
from autoscaler.decisionlog import DecisionLog, DecisionLogSettings, logged, read_log, replay
from autoscaler.run_cli import build_parser, settings_from
from tests.controller.stack import FAST, e2e_stack, eventually, external_metric, target_ref
from tests.core import builders as b


def documents() -> list[tuple[str, dict[str, Any]]]:
    ext = b.external_metric(average=10)
    return [
        ("scale-up", b.document(metrics_spec=[ext], metrics=[b.external_items([55])], current=1)),
        ("hold", b.document(metrics_spec=[ext], metrics=[b.external_items([20])], current=2)),
        (
            "metric-failed",
            b.document(metrics_spec=[ext], metrics=[{"error": "prometheus down"}], current=3),
        ),
        ("nan", b.document(metrics_spec=[ext], metrics=[b.external_items([0])], current=0)),
        (
            "invalid",
            {**b.document(metrics_spec=[ext], metrics=[], current=1), "controller": "x"},
        ),
    ]


def run_logged(path: Path, docs: list[dict[str, Any]], **kw: Any) -> list[Any]:
    sink = DecisionLog(DecisionLogSettings(path, **kw))
    decide = logged(decide_document, sink)
    outcomes: list[Any] = []
    for doc in docs:
        try:
            outcomes.append(decide(doc))
        except ValueError as e:
            outcomes.append(e)
    sink.close()
    return outcomes


def test_each_pass_is_one_line_with_the_document_and_what_the_core_said(tmp_path):
    cases = documents()
    outcomes = run_logged(tmp_path / "d.jsonl", [d for _, d in cases])
    entries = list(read_log([tmp_path / "d.jsonl"]))
    assert len(entries) == len(cases)
    for (name, doc), outcome, entry in zip(cases, outcomes, entries, strict=True):
        assert entry["document"] == doc, name
        if isinstance(outcome, ValueError):
            assert entry == {"document": doc, "error": str(outcome)}, name
        else:
            assert entry["result"] == json.loads(json.dumps(outcome)), name
    assert "error" in entries[-1]
    assert "controller" in entries[-1]["error"]


def test_decide_jsonl_over_the_documents_reproduces_every_result(tmp_path):
    run_logged(tmp_path / "d.jsonl", [d for _, d in documents()])
    entries = list(read_log([tmp_path / "d.jsonl"]))
    assert replay(entries) == []
    # and the comparison can fail: a changed result is reported with its position
    entries[1] = {**entries[1], "result": {**entries[1]["result"], "desiredReplicas": 99}}
    (mismatch,) = replay(entries)
    assert mismatch.index == 1
    assert '"desiredReplicas":99' in mismatch.logged


def test_the_file_rotates_by_size_and_keeps_the_newest_lines(tmp_path):
    doc = documents()[0][1]
    path = tmp_path / "d.jsonl"
    run_logged(path, [doc] * 60, max_bytes=20_000, backups=2)
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == ["d.jsonl", "d.jsonl.1", "d.jsonl.2"]
    assert all(f.stat().st_size <= 20_000 for f in files)
    kept = list(read_log([path.with_suffix(".jsonl.2"), path.with_suffix(".jsonl.1"), path]))
    assert 0 < len(kept) < 60
    assert all(e["document"] == doc for e in kept)


def test_a_disk_that_stops_answering_never_blocks_a_pass(tmp_path):
    sink = DecisionLog(DecisionLogSettings(tmp_path / "d.jsonl", queue_size=5))
    gate = threading.Event()
    emit = sink._handler.emit
    sink._handler.emit = lambda record: (gate.wait(), emit(record))  # type: ignore[method-assign]
    decide = logged(decide_document, sink)
    doc = documents()[0][1]
    started = time.monotonic()
    for _ in range(50):
        decide(doc)
    assert time.monotonic() - started < 2.0  # 50 decisions, none waiting on the stuck write
    assert sink.dropped >= 50 - 2 * 5  # the queue holds 5, the stuck writer one batch of <= 5
    gate.set()
    sink.close()
    assert sink.written == 50 - sink.dropped


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        ([], None),
        (
            ["--decision-log", "/x/d.jsonl"],
            DecisionLogSettings(Path("/x/d.jsonl"), max_bytes=100 * 2**20, backups=5),
        ),
        (
            ["--decision-log", "d", "--decision-log-max-size", "3", "--decision-log-backups", "1"],
            DecisionLogSettings(Path("d"), max_bytes=3 * 2**20, backups=1),
        ),
    ],
    ids=["off-by-default", "defaults", "size-and-count"],
)
def test_flags(argv, want):
    assert settings_from(build_parser().parse_args(argv)).decision_log == want


def test_flags_refuse_a_size_of_zero(capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["--decision-log", "d", "--decision-log-max-size", "0"])
    assert exit_.value.code == 2
    assert "--decision-log-max-size" in capsys.readouterr().err


@pytest.mark.e2e
@pytest.mark.prometheus
async def test_a_running_controller_logs_every_pass_and_the_log_replays(tmp_path):
    async with e2e_stack(tmp_path) as st:
        path = tmp_path / "decisions.jsonl"
        spec = {
            "scaleTargetRef": target_ref("worker"),
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [external_metric("jobs")],
            "behavior": FAST,
        }
        await st.queue("jobs", 55)
        await st.deployment("worker", 1)
        await st.autoscaler("worker", spec)
        settings = dataclasses.replace(st.settings(), decision_log=DecisionLogSettings(path))
        stop = asyncio.Event()
        task = asyncio.create_task(serve(settings, stop=stop))
        try:
            await eventually(
                lambda: _replicas(st, 6), timeout=40, what="6 replicas"
            )  # generous: CI is loaded
        finally:
            stop.set()
            await asyncio.wait_for(task, 20)
    entries = list(read_log([path]))
    assert entries, "no pass was logged"
    assert any(e["result"].get("rescale") for e in entries)
    assert {e["document"]["autoscaler"]["spec"]["maxReplicas"] for e in entries} == {10}
    assert replay(entries) == []


async def _replicas(st: Any, want: int) -> bool:
    return bool(await st.replicas("worker") == want)


@pytest.mark.parametrize(
    "value",
    [
        {"a": None, "b": [1, 2.5, "é"]},
        {"ratio": float("nan"), "limit": float("inf"), "x": None},
        {"big": 2**70},
        {"tiny": 1e-05},
    ],
    ids=["null", "non-finite-kept", "int-beyond-64-bits", "float-text"],
)
def test_the_fast_encoder_loses_nothing(value):
    from autoscaler.decisionlog import _encode

    text = _encode(value)
    assert json.dumps(json.loads(text)) == json.dumps(value)  # NaN and Infinity survive
