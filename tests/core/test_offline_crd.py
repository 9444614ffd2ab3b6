"""`decide` and `simulate` judge a spec as the API server does with our CRD (as `convert` does):
every object the CRD tests' tables refuse is refused, naming the field, with each tool's exit
status for bad input; every object they accept is decided and replayed."""

from __future__ import annotations

import copy
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autoscaler import decide_cli, simulate_cli
from autoscaler.core import DocumentError, decide_document
from autoscaler.core.spec_rules import check_autoscaler
from tests.controller import test_crd, test_crd_controls, test_crd_deletioncost, test_crd_predictive
from tests.controller.test_crd import ext, obj

# unknown fields: structural schemas with strict field validation refuse them
UNKNOWN = [
    pytest.param(obj(minReplica=1), id="unknown-spec-field"),
    pytest.param(
        obj(metrics=[{**ext(), "activaton": {"threshold": "1"}}]), id="unknown-metric-field"
    ),
    pytest.param(
        obj(behavior={"scaleDown": {"stabilisationWindowSeconds": 60}}), id="unknown-rules-field"
    ),
    pytest.param(obj(fallback={"replicas": 2, "treshold": 3}), id="unknown-fallback-field"),
]
REJECTED = [
    *(
        pytest.param(p.values[0], id=p.id)
        for p in [
            *test_crd.REJECTED,
            *test_crd_controls.REJECTED,
            *test_crd_predictive.REJECTED,
            *test_crd_deletioncost.REJECTED,
        ]
    ),
    *UNKNOWN,
]
ACCEPTED = [
    *(
        pytest.param(p.values[0], id=p.id)
        for p in [*test_crd.ACCEPTED, *test_crd_controls.ACCEPTED, *test_crd_predictive.ACCEPTED]
    ),
    *(
        pytest.param(test_crd_deletioncost.with_cost(p.values[0]), id=f"deletion-cost-{p.id}")
        for p in test_crd_deletioncost.ACCEPTED
    ),
]
# what the core decided before the tools judged the spec (the CRD tables' gaps)
CORE_ACCEPTED = {
    "zero-without-object-or-external",
    "unknown-type",
    "utilization-without-value",
    "resource-both-targets",
    "pods-needs-average-value",
    "period-over-1800",
    "window-over-3600",
    "empty-policies",
    "target-without-name",
    *(p.id for p in UNKNOWN),
}
LOCATED = re.compile(r"^(spec|metadata)(\.[A-Za-z]+|\[[^\]]+\])*: \S")


def document(autoscaler: dict[str, Any]) -> dict[str, Any]:
    metrics = autoscaler["spec"].get("metrics")
    count = len(metrics) if isinstance(metrics, list) and metrics else 1
    return {
        "now": "2026-01-01T00:00:00Z",
        "autoscaler": copy.deepcopy(autoscaler),
        "scale": {"spec": {"replicas": 2}, "status": {"replicas": 2, "selector": "app=web"}},
        "metrics": [{"error": "not fetched"}] * count,
    }


def convert_says(autoscaler: dict[str, Any]) -> str:
    with pytest.raises(DocumentError) as err:
        check_autoscaler(copy.deepcopy(autoscaler))
    return str(err.value)


def decide_says(autoscaler: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(document(autoscaler)).encode()))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stdin", stdin)
        assert decide_cli.main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    prefix = f"{decide_cli.PROG}: invalid document: autoscaler."
    assert err.startswith(prefix), err
    return err.removeprefix(prefix).rstrip("\n")


def simulate_says(
    autoscaler: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> str:
    spec, timeline = tmp_path / "spec.json", tmp_path / "load.csv"
    spec.write_text(json.dumps(autoscaler))
    timeline.write_text("time,m\n0,1\n")
    assert simulate_cli.main(["--spec", str(spec), "--timeline", str(timeline)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    prefix = f"{simulate_cli.PROG}: {spec}: "
    assert err.startswith(prefix), err
    return err.removeprefix(prefix).rstrip("\n")


@pytest.mark.parametrize("autoscaler", REJECTED)
def test_decide_refuses_what_the_crd_refuses(
    autoscaler: dict[str, Any], capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    says = decide_says(autoscaler, capsys)
    assert LOCATED.match(says), says
    if request.node.callspec.id in CORE_ACCEPTED:  # refused by the CRD's check, as convert does
        assert says == convert_says(autoscaler)


@pytest.mark.parametrize("autoscaler", REJECTED)
def test_simulate_refuses_what_the_crd_refuses(
    autoscaler: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    says = simulate_says(autoscaler, tmp_path, capsys)
    assert LOCATED.match(says), says
    if request.node.callspec.id in CORE_ACCEPTED:
        assert says == convert_says(autoscaler)


@pytest.mark.parametrize("autoscaler", ACCEPTED)
def test_decide_decides_what_the_crd_accepts(autoscaler: dict[str, Any]) -> None:
    doc = document(autoscaler)
    assert decide_cli.decide_checked(copy.deepcopy(doc)) == decide_document(doc)


@pytest.mark.parametrize("autoscaler", ACCEPTED)
def test_simulate_replays_what_the_crd_accepts(autoscaler: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(autoscaler))
    spec, _ = simulate_cli.load_spec(str(path))
    assert spec.max_replicas == autoscaler["spec"]["maxReplicas"]


def test_a_bare_spec_is_judged_too(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps({**obj()["spec"], "minReplica": 1}))
    with pytest.raises(simulate_cli.InputError, match=r"spec\.minReplica: field not declared"):
        simulate_cli.load_spec(str(path))


def test_jsonl_reports_the_refused_spec_on_its_line_and_goes_on() -> None:
    bad = document(obj(metrics=[{"type": "Bogus"}]))
    good = document(obj(metrics=[ext()]))
    lines = [json.dumps(d) for d in (good, bad, good, bad)]
    out = io.StringIO()
    assert decide_cli.run_jsonl(io.BytesIO(("\n".join(lines) + "\n").encode()), out) == 0
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert results[0] == results[2] == decide_document(good)
    assert results[1] == results[3]
    assert results[1]["error"].startswith("autoscaler.spec.metrics[0].type: Unsupported value")


def test_a_non_string_annotation_is_refused() -> None:
    autoscaler = obj(metrics=[ext()])
    autoscaler["metadata"]["annotations"] = {"example.com/owner": 7}
    with pytest.raises(DocumentError, match=r"^autoscaler\.metadata\.annotations\[example"):
        decide_cli.decide_checked(document(autoscaler))


@pytest.mark.parametrize("tool", ["decide", "simulate"])
def test_the_commands_exit_2_naming_the_field(tool: str, tmp_path: Path) -> None:
    autoscaler = obj(metrics=[ext()], behavior={"scaleUp": {"policies": []}})
    if tool == "decide":
        args, stdin = [], json.dumps(document(autoscaler))
    else:
        spec, timeline = tmp_path / "spec.json", tmp_path / "load.csv"
        spec.write_text(json.dumps(autoscaler))
        timeline.write_text("time,m\n0,1\n")
        args, stdin = ["--spec", str(spec), "--timeline", str(timeline)], ""
    proc = subprocess.run(
        [sys.executable, "-m", "autoscaler", tool, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "spec.behavior.scaleUp.policies: must specify at least one policy" in proc.stderr


@pytest.mark.parametrize(
    "line",
    [
        pytest.param('"name": NaN', id="nan"),  # json.loads reads NaN; the core never reads it
        pytest.param('"name": 1e999', id="infinity"),
        pytest.param('"name": 123456789012345678901234567890', id="beyond-64-bits"),
    ],
)
def test_a_target_name_that_is_no_string_is_refused(line: str) -> None:
    text = json.dumps(document(obj(metrics=[ext()])))
    text = text.replace('"name": "php-apache"}, "maxReplicas"', line + '}, "maxReplicas"')
    assert line in text
    with pytest.raises(DocumentError, match=r"^autoscaler\.spec\.scaleTargetRef\.name: must be"):
        decide_cli.decide_checked(json.loads(text))


def test_the_target_may_be_left_out_as_neither_tool_reads_it(tmp_path: Path) -> None:
    autoscaler = obj(metrics=[ext()])
    del autoscaler["spec"]["scaleTargetRef"]
    doc = document(autoscaler)
    assert decide_cli.decide_checked(copy.deepcopy(doc)) == decide_document(doc)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(autoscaler["spec"]))
    assert simulate_cli.load_spec(str(path))[0].max_replicas == 10
    assert convert_says(autoscaler) == "spec.scaleTargetRef: Required value"  # convert writes one
