"""The cycle collector's settings for the bundle's long-running processes.

CPython frees an object when its last reference goes; the cycle collector exists only for
objects that refer to each other in a loop. Its defaults (700, 10, 10) run a young-generation
pass every 700 net container allocations and, every 100 of those, consider a full pass over
every object alive, each of which stops the event loop for as long as it takes.

A process of this bundle holds large, long-lived data (the controller's and the adapter's watch
caches, the sandbox's store) and allocates short-lived dicts and lists by the million while it
answers requests, nearly none of them in a cycle. Measured at 10,000 Autoscalers
(bench/bench_controller.py, gc callbacks timing every pass): under the defaults the controller
spent 18% of its CPU in the collector, 32 full passes of about 0.34 s each over three minutes
finding 4 objects in all; the adapter 13%, the sandbox 6%. With the settings below the
controller spent 4%, and the whole stack 2.75-3.03 ms of CPU per reconcile pass instead of
3.14-3.43 (docs/scaling.md, "Garbage collection").

- A young pass every 10,000 net allocations instead of 700: most temporaries are gone by
  reference counting before any pass sees them, and a pass costs a few ms.
- The older generations keep their default ratios, so a full pass stays as rare relative to
  young passes as before, and CPython's own rule still skips it until a quarter of the
  long-lived objects are new since the last one: cycles are still found, only later.
- `gc.freeze()` at start-up moves what exists then (modules, classes, parsed configuration)
  out of every later pass: it is never garbage, and a full pass no longer walks it.
"""

from __future__ import annotations

import gc

__all__ = ["THRESHOLDS", "tune"]

THRESHOLDS = (10_000, 10, 10)


def tune(thresholds: tuple[int, int, int] = THRESHOLDS) -> None:
    """Set the collector for a long-running server; call once, after start-up imports and
    configuration, before serving."""
    gc.collect()  # whatever start-up left in cycles goes now, not frozen forever
    gc.freeze()
    gc.set_threshold(*thresholds)
