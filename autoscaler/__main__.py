"""`promscaler-autoscaler` / `python -m autoscaler`: dispatch to a subcommand.

Subcommands are imported lazily so that `decide` (a hot, pure path) never pays for the
Kubernetes client's import time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from importlib import import_module

from common.version import version_line

# subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("autoscaler.run_cli", "run the controller against a cluster"),
    "decide": ("autoscaler.decide_cli", "decide one step (JSON on stdin, JSON on stdout)"),
    "simulate": ("autoscaler.simulate_cli", "replay a spec over a metric timeline"),
    "convert": ("autoscaler.convert_cli", "convert KEDA ScaledObjects and HPAs to Autoscalers"),
}

PROG = "promscaler-autoscaler"
USAGE = (
    f"usage: {PROG} {{run,decide,simulate,convert}} [options]\n"
    f"       {PROG} --version\n\n"
    + "\n".join(f"  {name:<9} {text}" for name, (_, text) in SUBCOMMANDS.items())
    + "\n\nRun `promscaler-autoscaler COMMAND --help` for a command's options.\n"
)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    if args[0] == "--version":
        sys.stdout.write(version_line(PROG) + "\n")
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        sys.stderr.write(f"promscaler-autoscaler: unknown command {name!r}\n{USAGE}")
        return 2
    entry: Callable[[list[str]], int] = import_module(SUBCOMMANDS[name][0]).main
    return entry(rest)


if __name__ == "__main__":
    sys.exit(main())
