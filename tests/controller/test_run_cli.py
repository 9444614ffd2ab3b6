"""The `run` command line: durations, flag validation, settings."""

from __future__ import annotations

import subprocess
import sys

import pytest

from autoscaler.run_cli import build_parser, main, parse_duration, settings_from


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("15s", 15.0, id="seconds"),
        pytest.param("1m", 60.0, id="minutes"),
        pytest.param("1m30s", 90.0, id="compound"),
        pytest.param("500ms", 0.5, id="milliseconds"),
        pytest.param("1h", 3600.0, id="hours"),
        pytest.param("2.5", 2.5, id="plain-seconds"),
        pytest.param("0", 0.0, id="zero"),
    ],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "1m5", "s", "-1s", "m1", "1 m"])
def test_bad_durations_are_rejected(text):
    with pytest.raises(Exception, match="duration"):
        parse_duration(text)


def test_flags_become_settings():
    args = build_parser().parse_args(
        [
            "--kubeconfig",
            "/k",
            "--namespace",
            "a",
            "--namespace",
            "b",
            "--namespace",
            "a",
            "--sync-period",
            "30s",
            "--zero-poll-interval",
            "500ms",
            "--workers",
            "4",
            "--leader-elect",
            "--leader-elect-lease-duration",
            "20s",
            "--controller-tolerance",
            "0.2",
            "--controller-downscale-stabilization",
            "1m",
            "--shards",
            "8",
            "--history-refresh",
            "2m30s",
            "--share-pod-metrics",
            "5s",
        ]
    )
    s = settings_from(args)
    assert s.kubeconfig == "/k"
    assert s.namespaces == ("a", "b")
    assert (s.controller.sync_period, s.controller.zero_poll_interval, s.controller.workers) == (
        30,
        0.5,
        4,
    )
    assert s.leader_elect
    assert s.lease.lease_duration == 20
    assert s.lease.renew_deadline == 10
    assert s.options.tolerance == 0.2
    assert s.options.downscale_stabilization == 60
    assert s.shards == 8
    assert s.options.history_refresh == 150
    assert s.share_pod_metrics == 5
    defaults = settings_from(build_parser().parse_args([]))
    assert defaults.options.history_refresh == 60
    assert defaults.share_pod_metrics == 0  # off: one read per pass, as upstream


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        pytest.param(["--sync-period", "fast"], "--sync-period", id="bad-duration"),
        pytest.param(["--workers", "0"], "--workers", id="zero-workers"),
        pytest.param(["--shards", "0"], "--shards", id="zero-shards"),
        pytest.param(["--metrics-port", "70000"], "--metrics-port", id="bad-port"),
        pytest.param(["--bogus"], "unrecognized", id="unknown-flag"),
        pytest.param(["--event-loop", "tokio"], "--event-loop", id="unknown-event-loop"),
        pytest.param(
            ["--gc-threshold", "10000,ten,10"],
            "argument --gc-threshold: the middle threshold 'ten' is not an integer",
            id="bad-gc-threshold",
        ),
        pytest.param(["--history-refresh", "0s"], "--history-refresh", id="zero-history-refresh"),
        pytest.param(
            ["--share-pod-metrics", "-5s"], "--share-pod-metrics", id="negative-share-window"
        ),
        pytest.param(["--tls-cert-file", "c.pem"], "--tls-private-key-file", id="cert-without-key"),
        pytest.param(
            ["--leader-elect-renew-deadline", "20s"], "renew-deadline", id="renew-over-lease"
        ),
    ],
)
def test_bad_flag_exits_2_with_one_line(argv, says, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert says in lines[0]


def test_bad_flag_through_the_real_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "autoscaler", "run", "--zero-poll-interval", "soon"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "--zero-poll-interval" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_lists_every_documented_flag():
    text = build_parser().format_help()
    for flag in (
        "--kubeconfig",
        "--sync-period",
        "--zero-poll-interval",
        "--workers",
        "--namespace",
        "--leader-elect-lease-duration",
        "--leader-elect-renew-deadline",
        "--leader-elect-retry-period",
        "--leader-elect-resource-name",
        "--leader-elect-resource-namespace",
        "--metrics-port",
        "--controller-tolerance",
        "--controller-cpu-initialization-period",
        "--controller-initial-readiness-delay",
        "--controller-downscale-stabilization",
    ):
        assert flag in text


def test_every_flag_explains_itself_and_durations_read_as_typed():
    from autoscaler.run_cli import build_parser

    parser = build_parser()
    undocumented = [a.option_strings[0] for a in parser._actions if a.option_strings and not a.help]
    assert undocumented == []
    text = parser.format_help()
    assert "(default: 15s)" in text  # --sync-period, as the flag is written
    assert "(default: 5m)" in text  # --controller-downscale-stabilization
    assert "default: None" not in text
    assert "==SUPPRESS==" not in text


def test_the_controller_runs_on_the_event_loop_asked_for(monkeypatch):
    """--event-loop auto takes uvloop where installed (it is a dependency here), asyncio when
    asked; the coroutine handed over is the controller's."""
    from autoscaler import run_cli

    ran: list[str] = []

    def fake_run(main_coro, *, loop):
        ran.append(loop)
        main_coro.close()
        return 0

    monkeypatch.setattr(run_cli.eventloop, "run", fake_run)
    monkeypatch.setattr(run_cli.gctune, "apply", lambda threshold: None)  # not on pytest's gc
    assert main(["--kubeconfig", "/nowhere"]) == 0
    assert main(["--kubeconfig", "/nowhere", "--event-loop", "asyncio"]) == 0
    assert ran == ["uvloop", "asyncio"]


def test_the_controller_sets_the_collector_before_its_loop_starts(monkeypatch):
    """--gc-threshold reaches gc before the event loop runs; the bundle's default otherwise."""
    from autoscaler import run_cli

    seen: list[object] = []
    monkeypatch.setattr(run_cli.gctune, "apply", lambda threshold: seen.append(threshold))

    def fake_run(main_coro, *, loop):
        seen.append("loop")
        main_coro.close()
        return 0

    monkeypatch.setattr(run_cli.eventloop, "run", fake_run)
    assert main(["--kubeconfig", "/nowhere"]) == 0
    assert main(["--kubeconfig", "/nowhere", "--gc-threshold", "700,10,10"]) == 0
    assert seen == [(10_000, 10, 10), "loop", (700, 10, 10), "loop"]


def test_uvloop_asked_for_but_missing_is_a_flag_error(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else real(name, *a)
    )
    with pytest.raises(SystemExit) as exit_:
        main(["--event-loop", "uvloop"])
    assert exit_.value.code == 2
    assert "uvloop package is not installed" in capsys.readouterr().err
