"""What every process of a bench stack spends, over one measured window (bench_controller.py).

- CPU seconds per process from /proc/PID/stat (utime + stime, in clock ticks): the sandbox, the
  adapter, Prometheus and the controller, each its own line; divided by the passes the window saw.
- For each controller process with passes of its own: user and system CPU per pass, and from
  /proc/PID/schedstat how often its loop thread was scheduled in (its wake-ups) per pass, with
  CPU time and run-queue wait per wake-up: what a pass costs in wake-ups as passes thin out.
- API calls by verb and resource from the sandbox's own request counters (`/sandbox/stats`),
  per pass: GET /scale, metric reads through the aggregation layer, status writes, LISTs and
  WATCHes (a watch reconnect is one more `watch` call).
- Optionally a sampling profile of each Python process with py-spy (`--nonblocking`, so the
  profiled process is never paused), summarized as the frames with most samples (own time and
  time including callees).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")  # clock ticks per second (/proc counts CPU time in ticks)
TOP = 8  # frames shown per process and kind: enough to name the top consumers


def _user_system(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process `pid` (/proc/PID/stat); OSError once it is gone."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()  # the name may hold spaces: skip past it
    return int(fields[11]) / TICK, int(fields[12]) / TICK  # utime, stime (fields 14, 15)


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used; NaN once it is gone."""
    try:
        return sum(_user_system(pid))
    except OSError:
        return float("nan")


Sched = tuple[float, float, float, float, int, int, int]


def proc_sched(pid: int) -> Sched | None:
    """(user s, system s) of the whole process from /proc/PID/stat; (on-CPU s, run-queue wait
    s, times scheduled in) of its main thread, the one running the event loop, from
    /proc/PID/schedstat; and that thread's voluntary and involuntary context switches (it
    went to sleep, or was preempted) from /proc/PID/status. None once it is gone."""
    try:
        user, system = _user_system(pid)
        run, wait, slices = Path(f"/proc/{pid}/schedstat").read_text().split()[:3]
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    switches = dict(line.split(":\t", 1) for line in status.splitlines() if "ctxt_switches" in line)
    voluntary = int(switches.get("voluntary_ctxt_switches", "0"))
    preempted = int(switches.get("nonvoluntary_ctxt_switches", "0"))
    return user, system, int(run) / 1e9, int(wait) / 1e9, int(slices), voluntary, preempted


def machine_ticks() -> tuple[int, int, int]:
    """(busy, idle, steal) clock ticks of all CPUs so far, from /proc/stat's first line: busy is
    user + nice + system + irq + softirq, idle includes iowait, steal is time the hypervisor
    ran something else while a CPU of this VM wanted to run."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return user + nice + system + irq + softirq, idle + iowait, steal


def machine_line(before: tuple[int, int, int], after: tuple[int, int, int], wall: float) -> str:
    busy, idle, steal = (a - b for a, b in zip(after, before, strict=True))
    return (
        f"  machine: {busy / TICK / wall:.2f} of {os.cpu_count()} CPUs busy, "
        f"steal {steal / TICK / wall:.3f} CPUs ({100 * steal / max(1, busy + idle + steal):.1f}%)"
    )


def sched_lines(
    before: Mapping[str, Sched | None],
    after: Mapping[str, Sched | None],
    *,
    passes: Mapping[str, int],
) -> list[str]:
    """Per process with its own passes: user and system CPU per pass, and its loop thread's
    wake-ups (times scheduled in) per pass, of them how many followed a sleep (the loop woke for
    I/O or a timer) and how many a preemption, CPU per wake-up and run-queue wait per wake-up."""
    out = []
    for name, n in passes.items():
        b, a = before.get(name), after.get(name)
        if a is None or b is None or n <= 0:
            continue
        user, system, run, wait = (a[i] - b[i] for i in range(4))
        wakes, slept, preempted = a[4] - b[4], a[5] - b[5], a[6] - b[6]
        out.append(
            f"  {name:<12} user {1000 * user / n:.3f} + system {1000 * system / n:.3f} ms per "
            f"pass; loop thread: {wakes / n:.2f} wake-ups per pass ({slept / n:.2f} after a "
            f"sleep, {preempted / n:.2f} after a preemption), "
            f"{1e6 * run / max(1, wakes):.0f} us on CPU and {1e6 * wait / max(1, wakes):.0f} us "
            "run-queue wait per wake-up"
        )
    return out


def this_process() -> int:
    return os.getpid()


def load_passes(path: Path) -> list[list[float]]:
    """A replica's passes (bench/controller_replica.py): [wall start, lag, duration] each."""
    return list(json.loads(path.read_text()))


def proc_rss_mib(pid: int) -> float:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return float("nan")
    for line in lines:
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass(frozen=True)
class CpuMark:
    """CPU seconds of each named process at one moment."""

    seconds: dict[str, float]

    @classmethod
    def take(cls, pids: Mapping[str, int]) -> CpuMark:
        return cls({name: proc_cpu(pid) for name, pid in pids.items()})

    def since(self, earlier: CpuMark) -> dict[str, float]:
        return {n: s - earlier.seconds.get(n, 0.0) for n, s in self.seconds.items()}


def cpu_lines(used: Mapping[str, float], *, wall: float, passes: int) -> list[str]:
    """One line per process: cores over the window and milliseconds of CPU per pass."""
    out = []
    for name, seconds in sorted(used.items(), key=lambda kv: -kv[1]):
        per_pass = 1000 * seconds / passes if passes else float("nan")
        out.append(f"  {name:<12} {seconds / wall:5.2f} cores   {per_pass:6.2f} ms CPU per pass")
    total = sum(used.values())
    out.append(f"  {'all':<12} {total / wall:5.2f} cores   {1000 * total / max(1, passes):6.2f} ms")
    return out


def request_counts(stats: Mapping[str, Any]) -> Counter[tuple[str, str]]:
    """(verb, resource[/subresource]) -> requests, from a `/sandbox/stats` answer."""
    return Counter({(r["verb"], r["resource"]): int(r["count"]) for r in stats["requests"]})


def call_lines(
    before: Counter[tuple[str, str]], after: Counter[tuple[str, str]], *, passes: int
) -> list[str]:
    """Requests per pass by verb and resource, most frequent first (the sandbox counts metric
    reads through the aggregator under the metric's resource: `pods`, a metric name, ...)."""
    diff = after - before
    rows = sorted(diff.items(), key=lambda kv: -kv[1])
    total = sum(diff.values())
    out = [f"  {'all':<8} {'':<40} {total:7d}  {total / max(1, passes):6.3f} per pass"]
    for (verb, resource), n in rows:
        out.append(f"  {verb:<8} {resource:<40} {n:7d}  {n / max(1, passes):6.3f} per pass")
    return out


class Profiler:
    """py-spy record on each process for a fixed time, then a summary of where it spent it."""

    def __init__(self, out: Path, pids: Mapping[str, int], *, seconds: float, rate: int = 50):
        self.out = out
        self.pids = dict(pids)
        self.seconds = seconds
        self.rate = rate  # samples per second: low, so the profiler costs the machine little
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self) -> None:
        spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        self.out.mkdir(parents=True, exist_ok=True)
        for name, pid in self.pids.items():
            argv = [spy, "record", "--nonblocking", "--format", "raw", "-r", str(self.rate)]
            argv += ["-d", str(int(self.seconds)), "-p", str(pid), "-o", str(self._file(name))]
            log = (self.out / f"{name}.log").open("wb")
            self._procs[name] = subprocess.Popen(argv, stdout=log, stderr=log)

    def finish(self) -> list[str]:
        lines = []
        for name, proc in self._procs.items():
            try:
                proc.wait(self.seconds + 30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            lines += summarize(name, self._file(name))
        return lines

    def _file(self, name: str) -> Path:
        return self.out / f"{name}.txt"


def summarize(name: str, path: Path) -> list[str]:
    """The top frames of a py-spy raw (collapsed) file: own samples and inclusive samples."""
    if not path.exists():
        return [f"  {name}: no profile ({path.with_suffix('.log')})"]
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        n = int(count)
        total += n
        if frames:
            own[_short(frames[-1])] += n
        for frame in {_short(f) for f in frames}:
            inclusive[frame] += n
    out = [f"  {name}: {total} samples"]
    out += [f"    own  {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(TOP)]
    out += [f"    incl {100 * n / total:5.1f}%  {f}" for f, n in _informative(inclusive, total)]
    return out


def _short(frame: str) -> str:
    """`func (path/to/module.py:12)` -> `func (module.py:12)`."""
    func, _, where = frame.partition(" (")
    return f"{func} ({where.rsplit('/', 1)[-1]}" if where else func


def _informative(inclusive: Counter[str], total: int) -> list[tuple[str, int]]:
    """Inclusive frames below the event loop's own (those hold nearly every sample)."""
    skip = ("run_forever", "_run_once", "_run (events.py", "run (runners.py", "<module>", "main (")
    kept = [(f, n) for f, n in inclusive.most_common() if not f.startswith(skip)]
    return [(f, n) for f, n in kept if n < 0.9 * total][: 2 * TOP]
