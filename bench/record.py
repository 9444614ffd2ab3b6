"""A benchmark's figures as data: what every `bench/bench_*.py` writes beside what it prints.

    parser = argparse.ArgumentParser(...)
    record.add_json_option(parser)              # --json FILE, default bench/results/<bench>.json
    args = parser.parse_args()
    run = record.Run.begin(args)                # the machine's load is read here, before the work
    run.figure("per_pass", "instructions per pass", 1.277e6, "instructions", decides="cost")
    run.goal("cost", "fewer instructions per pass than the code before", figure="per_pass")
    run.write()

A figure is a deterministic count (instructions, API calls, queries, bytes, objects), a ratio
against a control measured in the same run, or context (wall-clock and CPU time, which move by
up to 3x with this shared VM's state). Only the first two decide a goal; a goal no figure here
can decide says why, once, in `undecided`. `bench/report.py` renders the files into
docs/benchmarks.md and the README's headline table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

# counts (instructions, calls, queries, objects), ratios against a control in the same run and
# sizes (bytes, RSS) decide goals; time and rates by the clock move with the VM: context
Kind = Literal["count", "ratio", "size", "time", "rate"]
DECIDING: frozenset[str] = frozenset({"count", "ratio", "size"})


@dataclass(frozen=True)
class Figure:
    key: str  # stable name a document refers to: results file stem + "/" + key
    label: str  # what was measured, in a reader's words
    value: float
    unit: str  # "ms", "instructions", "queries", "MiB", "x" (a ratio) ...
    kind: Kind
    decides: str | None = None  # the goal key this figure decides, when it decides one


@dataclass(frozen=True)
class Goal:
    key: str
    text: str  # the goal as stated, e.g. "one Prometheus query per metric and window"
    figure: str | None  # the deciding figure's key; None: not decidable on this machine
    met: bool | None  # None when undecided


@dataclass
class Run:
    """One run of one benchmark; `write()` saves it as JSON."""

    bench: str
    path: Path
    command: str
    started: str
    load_before: tuple[float, float, float]
    provenance: dict[str, Any]  # commit, Python, CPU: taken at the start, as the load is
    figures: list[Figure] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def begin(cls, args: argparse.Namespace, *, argv: list[str] | None = None) -> Run:
        script = Path(sys.argv[0]).resolve()
        bench = script.stem
        path = Path(args.json) if args.json else RESULTS / f"{bench}.json"
        return cls(
            bench=bench,
            path=path,
            command=_command(script, sys.argv[1:] if argv is None else argv),
            started=datetime.now(UTC).isoformat(timespec="seconds"),
            load_before=os.getloadavg(),
            provenance=_provenance(),
        )

    def figure(
        self,
        key: str,
        label: str,
        value: float,
        unit: str,
        *,
        kind: Kind,
        decides: str | None = None,
    ) -> None:
        if decides is not None and kind not in DECIDING:
            # a CPU or wall-clock figure moves 3x with this VM's state: it cannot decide a goal
            raise ValueError(f"figure {key!r} of kind {kind!r} cannot decide goal {decides!r}")
        if any(f.key == key for f in self.figures):
            raise ValueError(f"figure {key!r} recorded twice")
        self.figures.append(Figure(key, label, float(value), unit, kind, decides))

    def goal(self, key: str, text: str, *, met: bool | None, figure: str | None = None) -> None:
        """`figure` None: no figure here decides it (say why with `cannot_decide`); a figure
        with `met` None: the figure decides between two builds, and the goal states no bound."""
        self.goals.append(Goal(key, text, figure, met if figure is not None else None))

    def cannot_decide(self, text: str) -> None:
        """What this machine or this run's size leaves undecided, said once."""
        self.undecided.append(text)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def write(self) -> Path:
        for g in self.goals:
            if g.figure is not None and not any(f.key == g.figure for f in self.figures):
                raise ValueError(f"goal {g.key!r} names figure {g.figure!r}, not recorded")
        doc = {
            "bench": self.bench,
            "command": self.command,
            **self.provenance,
            "started": self.started,
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "load_before": [round(x, 2) for x in self.load_before],
            "figures": [asdict(f) for f in self.figures],
            "goals": [asdict(g) for g in self.goals],
            "undecided": self.undecided,
            "notes": self.notes,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        print(f"results: {_shown(self.path)}")
        return self.path


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="write the figures as JSON here (default: bench/results/<bench>.json)",
    )


def slug(text: str) -> str:
    """A figure key from a printed label: `"  then its JSON bytes"` -> `then_its_json_bytes`."""
    return "_".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def _command(script: Path, argv: list[str]) -> str:
    # --json only says where the figures went; the command reproduces them without it
    kept: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a == "--json":
            skip = True
        elif not a.startswith("--json="):
            kept.append(a)
    return shlex.join([".venv/bin/python", _shown(script), *kept])


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _provenance() -> dict[str, Any]:
    # code only: the results files, docs and tests do not change what a benchmark measures
    changed = _git(
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        ".",
        ":!bench/results",
        ":!docs",
        ":!tests",
        ":!*.md",
        ":!bench/report.py",
    )
    return {
        "commit": _git("rev-parse", "--short=12", "HEAD") or "unknown",
        "commit_dirty": bool(changed),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
    }
