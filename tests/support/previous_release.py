"""The previous release, built from its own tree into its own venv, for the upgrade tests.

The previous release is the newest `vX.Y.Z` tag reachable from HEAD that is not HEAD itself;
until the first tag exists it is BASE, the commit the first release tag will point at. Its tree
comes out of this repository's history (`git archive`: CI clones with history), is installed
(not editable) into a venv of its own, and is kept under .cache/previous-release/<commit>/, so
a machine builds it once; a lock file keeps two pytest workers from building it together.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# the commit before releases existed (main when issue 38 was opened): the first tag's parent
BASE = "ac63002e761dd02ae76834628e72dc501d594597"
CACHE = REPO / ".cache" / "previous-release"


@dataclass(frozen=True)
class Release:
    """A built previous release."""

    commit: str  # full hash
    name: str  # the tag, or "base-<short hash>"
    src: Path  # its source tree (charts/, the CRD)
    python: Path  # its venv's interpreter: `python -m adapter` runs its code


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


def previous_commit() -> tuple[str, str]:
    """(commit, name) of the previous release."""
    head = git("rev-parse", "HEAD")
    for tag in git("tag", "--merged", "HEAD", "--list", "v*", "--sort=-v:refname").split():
        commit = git("rev-parse", f"{tag}^{{commit}}")
        if commit != head:
            return commit, tag
    try:
        commit = git("rev-parse", "--verify", f"{BASE}^{{commit}}")
    except subprocess.CalledProcessError as err:
        raise RuntimeError(
            f"the base commit {BASE[:12]} is not in this clone's history (a shallow clone?): "
            "fetch with history, e.g. `git fetch --unshallow`"
        ) from err
    return commit, f"base-{commit[:7]}"


def extract(commit: str, into: Path) -> None:
    """The commit's tree, as `git archive` gives it, into `into`."""
    data = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=REPO, capture_output=True, check=True
    ).stdout
    into.mkdir(parents=True)
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")


def build(commit: str, name: str) -> Release:
    """The release at `commit`, built once per machine (cached by commit)."""
    root = CACHE / commit
    release = Release(commit, name, root / "src", root / "venv" / "bin" / "python")
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"{commit}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / "ready").exists():
            return release
        shutil.rmtree(root, ignore_errors=True)
        extract(commit, release.src)
        subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
        pip = [str(release.python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        # its own runtime dependencies, as its pyproject.toml names them (not ours)
        done = subprocess.run(
            [*pip, str(release.src)], capture_output=True, text=True, timeout=900, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"installing {name} failed:\n{done.stderr[-3000:]}")
        (root / "ready").write_text(name + "\n")
    return release


def previous_release() -> Release:
    return build(*previous_commit())
