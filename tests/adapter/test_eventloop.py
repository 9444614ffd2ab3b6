"""--event-loop: which loop runs the adapter, and that it really runs on it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass

import pytest
import uvloop

from adapter import eventloop
from adapter.errors import ConfigError


@dataclass(frozen=True)
class Case:
    name: str
    installed: bool
    want: str


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Case("auto", True, "uvloop"), id="auto-takes-uvloop-when-installed"),
        pytest.param(Case("auto", False, "asyncio"), id="auto-falls-back-to-asyncio"),
        pytest.param(Case("asyncio", True, "asyncio"), id="asyncio-asked"),
        pytest.param(Case("uvloop", True, "uvloop"), id="uvloop-asked"),
    ],
)
def test_choice(case: Case) -> None:
    assert eventloop.chosen(case.name, installed=case.installed) == case.want


@pytest.mark.parametrize(
    ("name", "installed", "message"),
    [
        pytest.param("uvloop", False, "--event-loop uvloop: the uvloop package is not installed"),
        pytest.param("trio", True, "--event-loop: 'trio' is not one of auto, uvloop, asyncio"),
    ],
)
def test_impossible_choice_names_the_flag(name: str, installed: bool, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        eventloop.chosen(name, installed=installed)


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


@pytest.mark.parametrize(("name", "want"), [("uvloop", uvloop.Loop), ("auto", uvloop.Loop)])
def test_runs_on_the_chosen_loop(name: str, want: type) -> None:
    assert issubclass(eventloop.run(_loop_type(), loop=name), want)


def test_asyncio_runs_on_the_standard_loop() -> None:
    assert not issubclass(eventloop.run(_loop_type(), loop="asyncio"), uvloop.Loop)


def test_bad_value_is_a_usage_error_with_the_choices() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "adapter", "--config", "x.yaml", "--event-loop", "trio"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--event-loop: invalid choice: 'trio'" in done.stderr
