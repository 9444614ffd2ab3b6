"""`promscaler-autoscaler decide` as a subprocess: a single document, --jsonl, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.core import builders as b


def run(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoscaler", "decide", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def doc(level: int = 2000) -> dict[str, Any]:
    return b.document(
        metrics_spec=[b.pods_metric(1000)],
        metrics=[b.pods_items([level, level])],
        current=2,
        pod_list=b.pods(2),
        history={"recommendations": []},
    )


def test_single_document() -> None:
    proc = run([], json.dumps(doc()))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["desiredReplicas"] == 4


def test_invalid_document_exits_2_with_one_line() -> None:
    bad = doc()
    bad["metrics"][0]["items"][0]["value"] = "many"
    proc = run([], json.dumps(bad))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "metrics[0].items[0].value: invalid quantity 'many'" in lines[0]
    assert "Traceback" not in proc.stderr


def test_not_json_exits_2() -> None:
    proc = run([], "{nope")
    assert proc.returncode == 2
    assert "not JSON" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_jsonl_keeps_going_after_a_bad_line() -> None:
    bad = doc()
    del bad["now"]
    lines = [json.dumps(doc(2000)), "garbage", json.dumps(bad), "", json.dumps(doc(500))]
    proc = run(["--jsonl"], "\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == 4
    assert out[0]["desiredReplicas"] == 4
    assert out[1]["error"].startswith("(document): not JSON")
    assert out[2] == {"error": "now: is required"}
    assert out[3]["desiredReplicas"] == 1


def test_input_file(tmp_path: Any) -> None:
    path = tmp_path / "step.json"
    path.write_text(json.dumps(doc()))
    proc = run(["--input", str(path), "--pretty"], "")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["desiredReplicas"] == 4
    missing = run(["--input", str(tmp_path / "nope.json")], "")
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr


def test_jsonl_answers_each_line_without_waiting_for_more_input() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "autoscaler", "decide", "--jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        for level, want in ((2000, 4), (500, 1)):
            proc.stdin.write(json.dumps(doc(level)) + "\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["desiredReplicas"] == want
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
