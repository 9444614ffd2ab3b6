"""`make release`'s checks, run by the real script in a throw-away git repository holding just
the files it reads: every refusal names what is wrong and builds nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]

PYPROJECT = '[project]\nname = "promscaler"\nversion = "{v}"\n'
CHART = 'apiVersion: v2\nname: promscaler\nversion: {v}\nappVersion: "{v}"\n'
CHANGELOG = "# Changelog\n\n## [Unreleased]\n\n## [{v}] - 2026-12-04\n\n- first\n"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        [*GIT, *args], cwd=root, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts/release.sh", root / "scripts/release.sh")
    (root / "charts/promscaler").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT.format(v="1.4.0"))
    (root / "charts/promscaler/Chart.yaml").write_text(CHART.format(v="1.4.0"))
    (root / "CHANGELOG.md").write_text(CHANGELOG.format(v="1.4.0"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "release 1.4.0")
    return root


def release(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "scripts/release.sh", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "HOME": str(root)},
        check=False,
    )


def test_a_ready_tree_passes_the_checks(repo):
    done = release(repo, "1.4.0", "--check")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("release 1.4.0: checks passed at ")
    assert not (repo / "dist").exists(), "--check builds nothing"


def _edit(path: str, old: str, new: str, *, commit: bool = True) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        target = root / path
        target.write_text(target.read_text().replace(old, new))
        if commit:
            git(root, "commit", "-q", "-am", f"edit {path}")

    return apply


def _untracked(root: Path) -> None:
    (root / "notes.txt").write_text("scratch\n")


def _tag_elsewhere(root: Path) -> None:
    git(root, "tag", "v1.4.0")
    (root / "README").write_text("later\n")
    git(root, "add", "README")
    git(root, "commit", "-q", "-m", "after the tag")


@pytest.mark.parametrize(
    ("change", "version", "says"),
    [
        pytest.param(None, "", "no version", id="no-version"),
        pytest.param(None, "1.4", "is not X.Y.Z", id="two-numbers"),
        pytest.param(None, "v1.4.0", "is not X.Y.Z", id="v-prefix"),
        pytest.param(None, "1.4.0-rc.1", "is not X.Y.Z", id="pre-release"),
        pytest.param(
            _edit("CHANGELOG.md", "first", "second", commit=False),
            "1.4.0",
            "not clean",
            id="modified",
        ),
        pytest.param(_untracked, "1.4.0", "?? notes.txt", id="untracked-file"),
        pytest.param(None, "1.5.0", "pyproject.toml: [project] version is 1.4.0", id="pyproject"),
        pytest.param(
            _edit("charts/promscaler/Chart.yaml", 'appVersion: "1.4.0"', 'appVersion: "1.3.0"'),
            "1.4.0",
            "Chart.yaml: appVersion is 1.3.0, not 1.4.0",
            id="chart-app-version",
        ),
        pytest.param(
            _edit("charts/promscaler/Chart.yaml", "version: 1.4.0\n", "version: 1.4.1\n"),
            "1.4.0",
            "Chart.yaml: version is 1.4.1, not 1.4.0",
            id="chart-version",
        ),
        pytest.param(
            _edit("CHANGELOG.md", "## [1.4.0] - 2026-12-04", "## [Unreleased 1.4.0]"),
            "1.4.0",
            'CHANGELOG.md has no "## [1.4.0]',
            id="no-changelog-section",
        ),
        pytest.param(
            _edit("CHANGELOG.md", "## [1.4.0] - 2026-12-04", "## [1.4.01] - 2026-12-04"),
            "1.4.0",
            'CHANGELOG.md has no "## [1.4.0]',
            id="changelog-section-of-another-version",
        ),
        pytest.param(_tag_elsewhere, "1.4.0", "tag v1.4.0 exists and is not HEAD", id="tag"),
    ],
)
def test_refuses_naming_what_is_wrong(repo, change, version, says):
    if change is not None:
        change(repo)
    done = release(repo, version)
    assert done.returncode == 1, done.stdout
    assert says in done.stderr
    assert done.stderr.startswith("release: ")
    assert not (repo / "dist").exists(), "a refused release builds nothing"


def test_outside_a_git_tree_it_refuses(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts/release.sh", tmp_path / "scripts/release.sh")
    done = release(tmp_path, "1.4.0")
    assert done.returncode == 1
    assert "is not a git work tree" in done.stderr
