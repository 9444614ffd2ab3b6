"""--gc-threshold: parsing, the error a bad value gets, and what applying it does to gc."""

from __future__ import annotations

import subprocess
import sys

import pytest

from common import gctune


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("10000,10,10", (10_000, 10, 10)),
        ("700,10,10", (700, 10, 10)),
        (" 50000 , 20 , 100 ", (50_000, 20, 100)),
        ("0,10,10", (0, 10, 10)),  # the collector off, as gc.set_threshold(0) does
    ],
)
def test_good_values(text, want):
    assert gctune.parse(text) == want


def test_the_default_is_ten_thousand_with_pythons_ratios():
    assert gctune.parse(gctune.DEFAULT) == (10_000, 10, 10)
    assert gctune.parse(gctune.PYTHON) == (700, 10, 10)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10000", "'10000' is not three comma-separated integers, e.g. 10000,10,10"),
        ("1,2,3,4", "'1,2,3,4' is not three comma-separated integers"),
        ("", "'' is not three comma-separated integers"),
        ("1e4,10,10", "the young threshold '1e4' is not an integer"),
        ("10000,,10", "the middle threshold '' is not an integer"),
        ("10000,10,-1", "the full threshold -1 must not be negative"),
    ],
)
def test_bad_values_say_which_part(text, message):
    with pytest.raises(gctune.GCThresholdError) as err:
        gctune.parse(text)
    assert str(err.value).startswith(message)


def test_apply_freezes_start_up_and_sets_the_thresholds():
    """In a child process: applying freezes what is alive (so full passes skip it) and sets the
    thresholds gc then runs with."""
    code = (
        "import gc; from common import gctune; "
        "before = gc.get_freeze_count(); gctune.apply((1234, 5, 6)); "
        "print(before, gc.get_freeze_count() > 1000, gc.get_threshold())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split(maxsplit=2) == ["0", "True", "(1234, 5, 6)\n"]


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["-m", "adapter", "--config", "x.yaml"], id="adapter"),
        pytest.param(["-m", "autoscaler", "run"], id="autoscaler"),
        pytest.param(["-m", "sandbox", "serve", "--kubeconfig", "/nonexistent/k"], id="sandbox"),
    ],
)
def test_every_program_takes_the_flag_and_refuses_a_bad_value(argv):
    done = subprocess.run(
        [sys.executable, *argv, "--gc-threshold", "10000,10"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    says = "argument --gc-threshold: '10000,10' is not three comma-separated integers"
    assert says in done.stderr
    assert "Traceback" not in done.stderr
