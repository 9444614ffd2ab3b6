"""The demo's live terminal view: one line per second, or a redrawn panel on a terminal."""

from __future__ import annotations

import sys

from .timeline import Sample

HEADER = (
    f"{'t':>5} {'phase':<8} {'web req/s':>9} {'per pod':>8} {'replicas':>8} {'ready':>5} | "
    f"{'arrivals':>8} {'queue':>6} {'metric':>8} {'workers':>7}"
)


class View:
    """Prints what the demo sees; redraws in place when `plain` is False."""

    def __init__(self, *, plain: bool) -> None:
        self.plain = plain
        self.rows: list[str] = []
        self.notes: list[str] = []
        self.conditions: dict[str, str] = {}  # last printed, per workload (plain mode)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"-- {text}", flush=True)

    def show(self, s: Sample) -> None:
        row = (
            f"{s.t:>5.0f} {s.phase:<8} {s.web_rps:>9.0f} {s.web_metric or '-':>8} "
            f"{s.web_replicas:>8} {s.web_ready:>5} | {s.arrivals:>8.1f} {s.queue_depth:>6.0f} "
            f"{s.worker_metric or '-':>8} {s.worker_replicas:>7}"
        )
        if self.plain:
            if not self.rows:
                print(HEADER, flush=True)
            self.rows.append(row)
            print(row, flush=True)
            for name, conditions in (("web", s.web_conditions), ("worker", s.worker_conditions)):
                if conditions and self.conditions.get(name) != conditions:
                    print(f"      {name} conditions: {conditions}", flush=True)
                    self.conditions[name] = conditions
            return
        self.rows.append(row)
        lines = [HEADER, *self.rows[-12:], "", f"web:    {s.web_conditions}",
                 f"worker: {s.worker_conditions}"]  # fmt: skip
        sys.stdout.write("\x1b[2J\x1b[H" + "\n".join([*self.notes[-3:], "", *lines]) + "\n")
        sys.stdout.flush()

    def done(self) -> None:
        if not self.plain:
            print()
