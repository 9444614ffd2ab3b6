"""What can be checked of the Dockerfile without a Docker engine."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.charts.helm import ROOT

DOCKERFILE = ROOT / "Dockerfile"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONSOLE_SCRIPTS: dict[str, str] = PYPROJECT["project"]["scripts"]


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [i.args for i in self.instructions if i.keyword == keyword]


def instructions(text: str) -> list[Instruction]:
    """Logical instructions: comments dropped, backslash continuations joined."""
    out: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = pending + line
        pending = ""
        keyword, _, args = full.partition(" ")
        out.append(Instruction(keyword.upper(), args.strip()))
    return out


def stages(text: str) -> list[Stage]:
    args: dict[str, str] = {}
    result: list[Stage] = []
    for ins in instructions(text):
        if ins.keyword == "ARG" and not result:
            # ARGs before the first FROM parameterise the FROM lines
            name, _, default = ins.args.partition("=")
            args[name] = default
        elif ins.keyword == "FROM":
            words = [w for w in ins.args.split() if not w.startswith("--platform")]
            base = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m[1] or m[2]], words[0])
            alias = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            result.append(Stage(base, alias))
        else:
            result[-1].instructions.append(ins)
    return result


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list), f"not exec form: {args}"
    return [str(v) for v in value]


def docker_ignored(path: str) -> bool:
    """.dockerignore semantics that matter here: patterns in order, the last match wins."""
    ignored = False
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.removeprefix("!").rstrip("/")
        if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
            ignored = not negate
    return ignored


STAGES = stages(DOCKERFILE.read_text())
FINAL = STAGES[-1]


def root(stage: Stage) -> str:
    """The image a stage starts from, through the stages it builds on."""
    named = {s.name: s for s in STAGES if s.name}
    while stage.base in named:
        stage = named[stage.base]
    return stage.base


def test_every_stage_uses_the_pinned_slim_bookworm_python() -> None:
    for stage in STAGES:
        assert re.fullmatch(
            r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", root(stage)
        ), stage.base
    # same base everywhere: the venv's python symlink must resolve in the final stage
    assert len({root(s) for s in STAGES}) == 1


def test_the_final_stage_only_copies_from_build_stages() -> None:
    assert len(STAGES) >= 2
    assert not FINAL.all("RUN"), "the final stage runs nothing (no shell needed at all)"
    copies = [shlex.split(c) for c in FINAL.all("COPY")]
    assert copies, "the final stage must copy the venv"
    names = {s.name for s in STAGES[:-1]}
    for words in copies:
        assert words[0].removeprefix("--from=") in names, words
    assert re.search(r"-m venv (\S+)", " ".join(r for s in STAGES for r in s.all("RUN")))


def ancestry(stage: Stage) -> list[Stage]:
    named = {s.name: s for s in STAGES if s.name}
    chain = [stage]
    while chain[-1].base in named:
        chain.append(named[chain[-1].base])
    return chain


def source_copies(stage: Stage) -> list[str]:
    return [c for c in stage.all("COPY") if not c.startswith("--from")]


def test_dependencies_are_installed_before_any_source_is_copied() -> None:
    # a source change must not reinstall the dependencies: the stage that installs them (and
    # every stage it builds on) copies no source, only the requirements extracted from pyproject
    (deps,) = [s for s in STAGES if any("-r /tmp/requirements.txt" in r for r in s.all("RUN"))]
    for stage in ancestry(deps):
        for copy in source_copies(stage):
            assert shlex.split(copy)[:-1] == ["pyproject.toml"], f"{stage.name}: COPY {copy}"
    # the project goes in on top, without its dependencies
    (app,) = [s for s in STAGES if any(c.startswith("adapter ") for c in source_copies(s))]
    assert deps in ancestry(app)
    assert any("pip install --no-deps" in r for r in app.all("RUN"))


def test_only_runtime_dependencies_are_installed() -> None:
    runs = [r for stage in STAGES for r in stage.all("RUN")]
    for run in runs:
        for command in run.split("&&"):
            if "pip install" in command:
                assert "[" not in command, f"no extras (dev/tools) in the image: {command}"
                assert " -e " not in command, command
        # the requirements are the project's dependencies and its build backend, no extras
        assert "optional-dependencies" not in run
    assert any('p["project"]["dependencies"]' in r for r in runs)
    assert any("pip uninstall --yes pip setuptools" in r for r in runs)


def test_runs_as_a_numeric_non_root_user() -> None:
    (user,) = FINAL.all("USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit(), "numeric, so that runAsNonRoot can verify it"
    assert int(uid) != 0
    assert not gid or (gid.isdigit() and int(gid) != 0)
    # the chart runs it as the same user
    values = (ROOT / "charts/promscaler/values.yaml").read_text()
    assert f"runAsUser: {uid}" in values


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(src, id=src)
        for stage in STAGES
        for copy in stage.all("COPY")
        if not copy.startswith("--from")
        for src in shlex.split(copy)[:-1]
        if not src.startswith("--")
    ],
)
def test_every_copied_path_exists_and_is_in_the_build_context(source: str) -> None:
    assert (ROOT / source).exists(), source
    assert not docker_ignored(source), f"{source} is excluded by .dockerignore"


def copied_sources() -> set[str]:
    return {
        Path(src).parts[0]
        for stage in STAGES
        for copy in stage.all("COPY")
        if not copy.startswith("--from")
        for src in shlex.split(copy)[:-1]
    }


PROGRAMS = {
    name: target for name, target in CONSOLE_SCRIPTS.items() if name != "promscaler-sandbox"
}


def test_the_programs_packages_and_the_readme_are_copied_and_the_sandbox_is_not() -> None:
    copied = copied_sources()
    for target in PROGRAMS.values():
        assert target.split(".")[0] in copied, target
    assert "common" in copied, "both programs import it"
    assert PYPROJECT["project"]["readme"] in copied, "setuptools needs the readme to build"
    # the sandbox is test tooling: not in the build context, and its console script is removed
    assert "sandbox" not in copied
    assert docker_ignored("sandbox/server.py")
    assert any("rm -f /app-bin/promscaler-sandbox" in r for s in STAGES for r in s.all("RUN"))


def test_the_program_is_chosen_by_the_first_argument() -> None:
    assert not FINAL.all("ENTRYPOINT"), "no entrypoint: args name the console script"
    (cmd,) = FINAL.all("CMD")
    assert exec_form(cmd)[0] in CONSOLE_SCRIPTS
    env = " ".join(FINAL.all("ENV"))
    venv = re.search(r"-m venv (\S+)", " ".join(r for s in STAGES for r in s.all("RUN")))
    assert venv is not None
    assert f"PATH={venv[1]}/bin:" in env, "the console scripts must be on PATH"
    assert any(f"{venv[1]} {venv[1]}" in c for c in FINAL.all("COPY"))


def test_image_is_labelled() -> None:
    labels = " ".join(FINAL.all("LABEL"))
    for key in ("title", "description", "version", "licenses", "source"):
        assert f"org.opencontainers.image.{key}=" in labels
    # `make image` passes pyproject's version as the build argument VERSION
    assert any(a.startswith("VERSION") for a in FINAL.all("ARG"))
    assert 'org.opencontainers.image.version="${VERSION}"' in labels


def test_parser_sees_through_continuations_and_args() -> None:
    text = "ARG B=python:3.11.9-slim-bookworm\nFROM ${B} AS b\nRUN a \\\n && b\nFROM $B\nUSER 1:1\n"
    got = stages(text)
    base = "python:3.11.9-slim-bookworm"
    assert [(s.base, s.name) for s in got] == [(base, "b"), (base, None)]
    assert got[0].all("RUN") == ["a  && b"]
