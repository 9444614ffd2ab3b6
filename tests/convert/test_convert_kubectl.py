"""What `convert` writes is accepted by the Autoscaler CRD: applied with the real kubectl to
the sandbox API server, which enforces the CRD's schema and CEL rules, and read back with
every converted field kept (nothing pruned)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
import yaml

from tests.controller.crdcheck import CRD_PATH
from tests.convert import examples as ex
from tests.convert.keda_docs import DOCS, REFUSED

pytestmark = [pytest.mark.kubectl]

EXAMPLES = {
    name: getattr(ex, name)
    for name in dir(ex)
    if name.startswith(("KEDA_", "HPA_")) and isinstance(getattr(ex, name), str)
}
# every KEDA documentation and e2e example with a prometheus, cron, cpu or memory trigger
EXAMPLES.update({f"docs-{name}": text for name, text in DOCS.items() if name not in REFUSED})


def kubectl(kubeconfig, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def converted(text: str, rules_out) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "autoscaler", "convert", "-", "--rules-out", str(rules_out)],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr  # 1: converted, with a behaviour note
    doc = yaml.safe_load(out.stdout)
    assert isinstance(doc, dict)
    return doc


def kept(sent: Any, stored: Any, path: str = "spec") -> list[str]:
    """Paths of `sent` that the server dropped or changed (it may add defaults)."""
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [path]
        return [p for k, v in sent.items() for p in kept(v, stored.get(k), f"{path}.{k}")]
    if isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [path]
        return [p for i, v in enumerate(sent) for p in kept(v, stored[i], f"{path}[{i}]")]
    return [] if sent == stored or str(sent) == str(stored) else [path]


async def test_every_converted_example_is_accepted_by_the_crd(sandbox, tmp_path):
    kc = sandbox.kubeconfig
    out = await asyncio.to_thread(kubectl, kc, "apply", "--validate=false", "-f", str(CRD_PATH))
    assert out.returncode == 0, out.stderr
    docs = {n: converted(t, tmp_path / f"{n}.rules.yaml") for n, t in EXAMPLES.items()}
    namespaces = {d["metadata"].get("namespace", "default") for d in docs.values()}
    for namespace in sorted(namespaces - {"default"}):
        out = await asyncio.to_thread(kubectl, kc, "create", "namespace", namespace)
        assert out.returncode == 0, out.stderr
    for name, doc in docs.items():
        doc["metadata"]["name"] = name.lower().replace("_", "-")  # the HPA examples share one
        doc["metadata"].setdefault("namespace", "default")
        text = yaml.safe_dump(doc)
        for _ in range(50):  # the CRD is established within a moment
            out = await asyncio.to_thread(kubectl, kc, "apply", "-f", "-", stdin=text)
            if "the server doesn't have a resource type" not in out.stderr:
                break
            await asyncio.sleep(0.1)
        assert out.returncode == 0, (name, out.stderr)
        meta = doc["metadata"]
        got = await asyncio.to_thread(
            kubectl, kc, "get", "pas", "-n", meta["namespace"], meta["name"], "-o", "json"
        )
        assert got.returncode == 0, got.stderr
        stored = json.loads(got.stdout)
        assert kept(doc["spec"], stored["spec"]) == [], name
        assert (
            kept(meta.get("annotations") or {}, stored["metadata"].get("annotations") or {}) == []
        )
