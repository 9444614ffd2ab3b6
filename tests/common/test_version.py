"""One version, from pyproject.toml: what both programs print for --version, what their
/metrics say in `*_build_info`, what the chart's version and appVersion carry, and the image's
default version label."""

from __future__ import annotations

import platform
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry

from autoscaler.selfmetrics import SelfMetrics
from common import version as version_module
from common.runtimemetrics import register_build_info
from common.version import UNKNOWN, version

REPO = Path(__file__).resolve().parents[2]


def pyproject_version() -> str:
    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


def test_the_running_version_is_pyprojects():
    # the editable install's metadata was written from pyproject.toml by `make install`
    assert version() == pyproject_version()


def test_chart_version_and_app_version_are_pyprojects():
    chart = yaml.safe_load((REPO / "charts/promscaler/Chart.yaml").read_text())
    assert chart["appVersion"] == pyproject_version(), "appVersion follows pyproject.toml"
    assert chart["version"] == pyproject_version(), "the chart is released with the code"


def test_the_dockerfiles_default_version_label_is_pyprojects():
    # `make image` passes VERSION; a plain `docker build` takes the Dockerfile's default
    defaults = [
        line.split("=", 1)[1]
        for line in (REPO / "Dockerfile").read_text().splitlines()
        if line.startswith("ARG VERSION=")
    ]
    assert defaults == [pyproject_version()]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param('[project]\nname = "promscaler"\nversion = "1.2.3"\n', "1.2.3", id="ours"),
        pytest.param('[project]\nname = "other"\nversion = "9.9.9"\n', UNKNOWN, id="other-project"),
        pytest.param('[project]\nname = "promscaler"\n', UNKNOWN, id="no-version"),
        pytest.param("[project\n", UNKNOWN, id="not-toml"),
        pytest.param(None, UNKNOWN, id="no-file"),
    ],
)
def test_fallback_when_not_installed_reads_the_source_trees_pyproject(tmp_path, text, want):
    path = tmp_path / "pyproject.toml"
    if text is not None:
        path.write_text(text)
    assert version_module._from_pyproject(path) == want


@pytest.mark.parametrize(
    "program",
    [
        pytest.param(["adapter"], id="adapter"),
        pytest.param(["autoscaler"], id="autoscaler"),
    ],
)
def test_both_programs_print_their_version(program):
    proc = subprocess.run(
        [sys.executable, "-m", *program, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    want = f"promscaler-{program[0]} {pyproject_version()} (Python {platform.python_version()})"
    assert proc.stdout.strip() == want


def test_build_info_gauge_carries_the_version():
    registry = CollectorRegistry()
    register_build_info(registry, prefix="demo")
    labels = {"version": pyproject_version(), "python_version": platform.python_version()}
    assert registry.get_sample_value("demo_build_info", labels) == 1


def test_the_controllers_registry_has_its_build_info():
    metrics = SelfMetrics()
    labels = {"version": pyproject_version(), "python_version": platform.python_version()}
    assert metrics.registry.get_sample_value("promscaler_autoscaler_build_info", labels) == 1
