"""The collector settings every long-running program of the bundle starts with (common/gctune.py).

`gc.freeze()` and the thresholds are process-wide, so each check runs in a fresh interpreter
rather than in the test process."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_tune_sets_the_thresholds_and_freezes_what_start_up_left():
    out = run(
        """
        import gc
        from common import gctune
        assert gc.get_freeze_count() == 0
        gctune.tune()
        print(gc.get_threshold() == gctune.THRESHOLDS, gc.get_freeze_count() > 1000)
        """
    )
    assert out == "True True"


def test_a_cycle_made_after_tuning_is_still_collected_without_an_explicit_collect():
    # a cycle that reference counting alone never frees; then 3 x the young threshold of live
    # containers, so the collector must have run on its own by the end
    out = run(
        """
        import gc, weakref
        from common import gctune
        gctune.tune()
        class Node:
            pass
        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
        keep = [[] for _ in range(3 * gctune.THRESHOLDS[0])]
        print(alive() is None)
        """
    )
    assert out == "True"


def test_before_the_young_threshold_the_cycle_waits():
    # the other side of the setting: fewer net allocations than the threshold run no pass
    # (this is what saves the CPU), so the same cycle is still there
    out = run(
        """
        import gc, weakref
        from common import gctune
        gctune.tune()
        class Node:
            pass
        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
        keep = [[] for _ in range(100)]
        print(alive() is None, gc.get_count()[0] < gctune.THRESHOLDS[0])
        """
    )
    assert out == "False True"


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("autoscaler.run_cli", ["--kubeconfig", "/nonexistent/kubeconfig"]),
        ("adapter.__main__", ["--config", "RULES", "--secure-port", "0"]),
        ("sandbox.__main__", ["serve", "--port", "0", "--kubeconfig", "KUBECONFIG"]),
    ],
)
def test_each_program_tunes_the_collector_before_its_loop_starts(module, argv, tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules: []\n")
    argv = [
        a.replace("RULES", str(rules)).replace("KUBECONFIG", str(tmp_path / "kubeconfig"))
        for a in argv
    ]
    out = run(
        f"""
        import gc, importlib
        from common import eventloop, gctune
        seen = []
        def run(main, *, loop):
            seen.append((gc.get_threshold() == gctune.THRESHOLDS, gc.get_freeze_count() > 0))
            main.close()
            return 0
        eventloop.run = run
        m = importlib.import_module({module!r})
        m.main({argv!r})
        print(seen)
        """
    )
    assert out == "[(True, True)]"
