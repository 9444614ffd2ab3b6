"""Render the chart with the real helm binary and give the objects back as dicts."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "promscaler"
NAMESPACE = "monitoring"
RELEASE = "promscaler"


def find_helm() -> str | None:
    """`$HELM`, else the project's `.tools/helm`, else helm on PATH."""
    for candidate in (os.environ.get("HELM"), str(ROOT / ".tools" / "helm")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("helm")


class RenderError(Exception):
    """helm refused the values; the message is helm's stderr."""


@dataclass(frozen=True)
class Rendered:
    """The objects `helm template` produced, in order."""

    objects: tuple[dict[str, Any], ...]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == kind]

    def get(self, kind: str, name: str) -> dict[str, Any]:
        found = [o for o in self.of_kind(kind) if o["metadata"]["name"] == name]
        assert len(found) == 1, f"{kind}/{name}: {len(found)} found in {self.names()}"
        return found[0]

    def component(self, kind: str, component: str) -> dict[str, Any]:
        """The one object of `kind` labelled app.kubernetes.io/component=`component`."""
        found = [
            o
            for o in self.of_kind(kind)
            if (o["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == component
        ]
        assert len(found) == 1, f"{kind} of {component}: {len(found)} found in {self.names()}"
        return found[0]

    def names(self) -> list[str]:
        return [f"{o['kind']}/{o['metadata']['name']}" for o in self.objects]

    def containers(self) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
        """(deployment name, pod spec, container) for every Deployment's container."""
        for dep in self.of_kind("Deployment"):
            pod = dep["spec"]["template"]["spec"]
            for container in pod["containers"]:
                yield dep["metadata"]["name"], pod, container


@dataclass(frozen=True)
class Helm:
    binary: str

    def template(
        self, values: Mapping[str, Any] | None = None, *, files: tuple[Path, ...] = ()
    ) -> Rendered:
        # cached by the JSON text: renders cost ~0.3 s and many tests share value sets
        text = json.dumps(values or {}, sort_keys=True)
        return _template(self.binary, text, tuple(str(f) for f in files))


@functools.lru_cache(maxsize=64)
def _template(binary: str, values_json: str, files: tuple[str, ...]) -> Rendered:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as extra:
        extra.write(values_json)  # JSON is YAML: helm reads it as a values file
        extra.flush()
        args = [binary, "template", RELEASE, str(CHART), "--namespace", NAMESPACE, "--include-crds"]
        for f in (*files, extra.name):
            args += ["--values", f]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RenderError(proc.stderr.strip())
    return Rendered(tuple(d for d in yaml.safe_load_all(proc.stdout) if d))
