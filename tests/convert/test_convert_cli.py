"""`promscaler-autoscaler convert` as a user runs it: files and stdin, the rules file, the
notes on stderr, and the exit status."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from adapter.rules.config import load_rules
from tests.convert import examples as ex

CONVERT = [sys.executable, "-m", "autoscaler", "convert"]


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CONVERT, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


def test_help_reads_well():
    out = run("--help")
    assert out.returncode == 0
    assert "usage: promscaler-autoscaler convert" in out.stdout
    assert "--rules-out FILE" in out.stdout
    assert "Exit status: 0" in out.stdout


def test_a_faithful_conversion_exits_0_and_writes_loadable_rules(tmp_path):
    rules = tmp_path / "rules.yaml"
    source = tmp_path / "so.yaml"
    source.write_text(ex.KEDA_PROMETHEUS)
    out = run(str(source), "--rules-out", str(rules))
    assert out.returncode == 0, out.stderr
    (autoscaler,) = yaml.safe_load_all(out.stdout)
    assert autoscaler["kind"] == "Autoscaler"
    assert autoscaler["metadata"]["name"] == "prometheus-scaledobject"
    # the adapter's own loader accepts the file, with the query as the metricsQuery
    config = load_rules(rules.read_text(), source=str(rules))
    (rule,) = config.external_rules
    assert rule.metrics_query.source == (
        '(sum(rate(http_requests_total{deployment="my-deployment"}[2m]))) or vector(0)'
    )
    assert "# ScaledObject default/prometheus-scaledobject: prometheus-scaledobject-" in (
        rules.read_text()
    )
    # notes, one line each, naming the object and the field
    lines = out.stderr.splitlines()
    assert any("spec.cooldownPeriod: note:" in line for line in lines), out.stderr
    assert all(line.startswith("promscaler-autoscaler convert: ScaledObject ") for line in lines)


def test_a_field_that_changes_behaviour_exits_1_and_still_writes(tmp_path):
    rules = tmp_path / "rules.yaml"
    out = run("-", "--rules-out", str(rules), stdin=ex.KEDA_IDLE_AND_MODIFIERS)
    assert out.returncode == 1, out.stderr
    assert yaml.safe_load(out.stdout)["kind"] == "Autoscaler"
    assert "spec.advanced.scalingModifiers: note: carried as the metric api-formula" in out.stderr
    assert "spec.idleReplicaCount: CHANGES BEHAVIOUR:" in out.stderr
    assert len(load_rules(rules.read_text()).external_rules) == 1  # the formula's one rule


def test_a_kubectl_list_of_several_kinds(tmp_path):
    items = [ex.load(t) for t in (ex.KEDA_PROMETHEUS, ex.HPA_V2, ex.HPA_V1)]
    items[2]["metadata"]["name"] = "php-apache-v1"
    listing = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})
    out = run("-", "--rules-out", str(tmp_path / "r.yaml"), stdin=listing)
    assert out.returncode == 0, out.stderr
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(out.stdout)]
    assert names == ["prometheus-scaledobject", "php-apache", "php-apache-v1"]


def test_an_hpa_needs_no_rules_file():
    out = run("-", stdin=ex.HPA_V1)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        pytest.param(["-"], ex.KEDA_PROMETHEUS, "give --rules-out FILE", id="rules-out-missing"),
        pytest.param(
            ["/nonexistent/so.yaml"], "", "/nonexistent/so.yaml: No such file", id="no-file"
        ),
        pytest.param(["-"], "kind: [", "not valid YAML", id="bad-yaml"),
        pytest.param(["-"], "", "the input holds no object", id="empty"),
        pytest.param(
            ["-"], "kind: Deployment\nmetadata: {name: x}\n", "kind 'Deployment'", id="kind"
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(args, stdin, message):
    out = run(*args, stdin=stdin)
    assert out.returncode == 2
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()
    assert line.startswith("promscaler-autoscaler convert: ")
    assert message in line


def test_the_top_level_usage_lists_convert():
    out = subprocess.run(
        [sys.executable, "-m", "autoscaler", "--help"], capture_output=True, text=True, check=False
    )
    assert "convert" in out.stdout
