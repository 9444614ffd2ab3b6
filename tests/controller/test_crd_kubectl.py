"""The Autoscaler CRD through real kubectl and the sandbox API server: installs, serves, defaults,
and refuses every upstream-invalid spec: the structural schema (type, required, enum, bounds,
patterns) and the CEL rules, which the sandbox evaluates with cel-python."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
import yaml

from tests.controller.crdcheck import CRD_PATH
from tests.controller.test_crd import ACCEPTED, REJECTED

pytestmark = [pytest.mark.kubectl]


def kubectl(kubeconfig, *args, stdin=""):
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def named(params, prefix):
    docs = {}
    for p in params:
        obj = json.loads(json.dumps(p.values[0]))
        obj["metadata"]["name"] = f"{prefix}-{p.id}"
        docs[p.id] = obj
    return docs


async def test_kubectl_applies_the_crd_and_the_sandbox_enforces_its_schema(tmp_path):
    from sandbox.server import Sandbox, SandboxConfig

    async with Sandbox(SandboxConfig(simulate_kubelet=False)) as sb:
        kc = sb.kubeconfig
        out = await asyncio.to_thread(kubectl, kc, "apply", "--validate=false", "-f", str(CRD_PATH))
        assert out.returncode == 0, out.stderr
        good, bad = named(ACCEPTED, "ok"), named(REJECTED, "no")
        for id_, obj in {**good, **bad}.items():
            out = await asyncio.to_thread(
                kubectl, kc, "create", "--validate=false", "-f", "-", stdin=yaml.safe_dump(obj)
            )
            if id_ in good:
                assert out.returncode == 0, (id_, out.stderr)
            else:
                assert out.returncode != 0, f"{id_} was accepted"
                assert "Invalid" in out.stderr or "invalid" in out.stderr, out.stderr
        out = await asyncio.to_thread(kubectl, kc, "get", "pas", "-o", "json")
        items = {i["metadata"]["name"]: i for i in json.loads(out.stdout)["items"]}
        defaulted = items["ok-all-defaults"]["spec"]
        assert defaulted["minReplicas"] == 1
        assert defaulted["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
