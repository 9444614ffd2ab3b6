"""The alert rules: `promtool check rules`, `promtool test rules` with a firing and a quiet case
per alert, and a runbook section per alert."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "charts/promscaler/files/alerts.yaml"
# alerts.test.yaml evaluates every minute; alerts-long.test.yaml every 10 minutes, for `for: 12h`
CASE_FILES = sorted(Path(__file__).parent.glob("*.test.yaml"))
RUNBOOK = ROOT / "docs/operations.md"
RUNBOOK_URL = "https://github.com/promscaler/promscaler/blob/main/docs/operations.md#"


def alert_rules() -> dict[str, dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}


def promtool() -> str:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.fail("promtool is not installed: run `make system-deps` (Debian's prometheus)")
    return binary


def load_cases(path: Path) -> dict[str, Any]:
    cases: dict[str, Any] = yaml.safe_load(path.read_text())
    return cases


def run_promtool_tests(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), "test", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_promtool_checks_the_rule_file():
    result = subprocess.run(
        [promtool(), "check", "rules", str(RULES)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in result.stdout


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: p.name)
def test_promtool_unit_tests_pass(path):
    """The case files are the tests, exactly as `promtool test rules tests/alerts/*.test.yaml`
    runs them from a checkout (their rule_files path is relative to the file)."""
    result = run_promtool_tests(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_unit_tests_catch_a_wrong_expectation(tmp_path):
    """The harness can fail: an alert expected where the data keeps it quiet is reported."""
    cases = load_cases(Path(__file__).with_name("alerts.test.yaml"))
    (quiet,) = [t for t in cases["tests"] if t["name"] == "in-fallback-quiet-when-recovered"]
    (fires,) = [t for t in cases["tests"] if t["name"] == "in-fallback-fires-after-5m"]
    expected = next(c for c in fires["alert_rule_test"] if c.get("exp_alerts"))["exp_alerts"]
    quiet["alert_rule_test"][0]["exp_alerts"] = expected
    cases["tests"] = [quiet]
    cases["rule_files"] = [str(RULES)]
    path = tmp_path / "alerts.test.yaml"
    path.write_text(yaml.safe_dump(cases, sort_keys=False))
    result = run_promtool_tests(path)
    assert result.returncode != 0
    assert "in-fallback-quiet-when-recovered" in result.stdout + result.stderr


def test_every_alert_has_a_firing_and_a_quiet_case():
    fires: set[str] = set()
    quiet: set[str] = set()
    for path in CASE_FILES:
        for test in load_cases(path)["tests"]:
            for check in test["alert_rule_test"]:
                (fires if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = set(alert_rules())
    assert names - fires == set(), "alerts no case fires"
    assert names - quiet == set(), "alerts no case keeps quiet"
    assert (fires | quiet) - names == set(), "cases for alerts that do not exist"


def runbook_anchors() -> set[str]:
    """GitHub's anchors of the runbook's headings (lower case, spaces to dashes)."""
    headings = re.findall(r"^#+ +(.+)$", RUNBOOK.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}


@pytest.mark.parametrize("name", sorted(alert_rules()))
def test_alert_is_labelled_and_has_a_runbook_section(name):
    rule = alert_rules()[name]
    assert rule["labels"]["severity"] in {"critical", "warning", "info"}
    assert {"summary", "description", "runbook_url"} <= set(rule["annotations"])
    url = rule["annotations"]["runbook_url"]
    assert url == RUNBOOK_URL + name.lower()
    assert name.lower() in runbook_anchors(), f"docs/operations.md has no '### {name}'"
