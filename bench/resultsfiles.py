"""The committed results files (bench/results/*.json) as a reader quotes them."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import record


@dataclass(frozen=True)
class Results:
    """One results file: its name (the file's stem) and its document."""

    name: str
    doc: dict[str, Any]

    def figure(self, key: str) -> dict[str, Any]:
        for f in self.doc["figures"]:
            if f["key"] == key:
                return dict(f)
        raise KeyError(f"{self.name}.json has no figure {key!r}")

    def value(self, key: str) -> float:
        return float(self.figure(key)["value"])

    def option(self, flag: str, default: str) -> str:
        """A flag's value in the command that produced the file."""
        argv = shlex.split(self.doc["command"])
        return argv[argv.index(flag) + 1] if flag in argv else default


def load_all(directory: Path = record.RESULTS) -> dict[str, Results]:
    """Every results file, by name; bench_controller-1000 before bench_controller-10000."""

    def natural(path: Path) -> tuple[str, int]:
        base, _, size = path.stem.partition("-")
        return base, int(size) if size.isdigit() else -1

    paths = sorted(directory.glob("*.json"), key=natural)
    return {p.stem: Results(p.stem, record.load(p)) for p in paths}


def shown(value: float, unit: str) -> str:
    """A figure as a reader wants it: 3 significant digits, thousands separated, ratios in %."""
    if unit == "x":  # a ratio: a share in %, a multiple as 2.70x
        return f"{value:.2f}x" if value >= 2 else f"{100 * value:.1f}%"
    if unit == "instructions" and abs(value) >= 1e5:
        return f"{value / 1e6:.3f} M"
    if math.isnan(value):
        return "n/a"
    if abs(value) >= 1000 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:#.3g}".rstrip(".")  # 2.00, not 2: the digits measured


SINGULAR = {
    "queries": "query",
    "requests": "request",
    "reviews": "review",
    "passes": "pass",
    "refits": "refit",
}


def quoted(results: Results, key: str) -> str:
    """`0.58 ms` for a figure of a results file: how every region quotes one."""
    f = results.figure(key)
    unit = f["unit"]
    if unit == "x":  # shown as a percentage
        return shown(f["value"], unit)
    if unit.startswith("1/"):  # a rate: 64.8/s
        return f"{shown(f['value'], unit)}/{unit[2:]}"
    if unit == "instructions" and f["value"] >= 1e5:
        return f"{shown(f['value'], unit)} instructions"
    if f["value"] == 1 and unit in SINGULAR:
        unit = SINGULAR[unit]
    return f"{shown(f['value'], unit)} {unit}"
