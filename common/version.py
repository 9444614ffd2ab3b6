"""The one version of promscaler: the installed distribution's, which setuptools takes from
pyproject.toml. Read at run time, so a wheel, an editable install and the image all report what
was built; a source tree run without installing falls back to its own pyproject.toml."""

from __future__ import annotations

import platform
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

__all__ = ["DISTRIBUTION", "UNKNOWN", "version", "version_line"]

DISTRIBUTION = "promscaler"
UNKNOWN = "0.0.0+unknown"  # neither installed nor next to its pyproject.toml: still parseable
_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


@cache
def version() -> str:
    """`X.Y.Z` (PEP 440) of the running code."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _from_pyproject(_PYPROJECT)


def _from_pyproject(path: Path) -> str:
    try:
        project = tomllib.loads(path.read_text())["project"]
    except (OSError, tomllib.TOMLDecodeError, KeyError):
        return UNKNOWN
    if project.get("name") != DISTRIBUTION or not project.get("version"):
        return UNKNOWN  # some other project's file
    return str(project["version"])


def version_line(prog: str) -> str:
    """What `--version` prints: the program, its version and the Python running it."""
    return f"{prog} {version()} (Python {platform.python_version()})"
