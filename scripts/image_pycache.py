"""Compile, for the container image, the modules both programs import at start.

Run inside the image build with PYTHONPYCACHEPREFIX set: the bytecode goes to that separate tree,
which the image ships and the programs read (their root filesystem is read-only, so they could
never write it). Only what is imported is compiled, not every module of every dependency; a
module imported later, or not at all here, is compiled in memory when it is first used.
Checked hashes, not timestamps: the image's copy steps need not keep file times.
"""

from __future__ import annotations

import importlib
import importlib.util
import py_compile
import sys

PROGRAMS = ("adapter.__main__", "autoscaler.__main__")  # the console scripts' modules


def main() -> int:
    for program in PROGRAMS:
        importlib.import_module(program)  # fills sys.modules with everything it imports
    count = 0
    for module in list(sys.modules.values()):
        source = getattr(module, "__file__", None)
        if not source or not source.endswith(".py"):
            continue
        py_compile.compile(
            source,
            cfile=importlib.util.cache_from_source(source),
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        )
        count += 1
    print(f"compiled {count} modules into {sys.pycache_prefix}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
