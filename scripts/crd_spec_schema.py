"""Write autoscaler/core/autoscaler_spec_schema.json: the Autoscaler CRD's schema of `spec`
without descriptions, CEL rules or defaults, for the offline tools' strict check
(autoscaler/core/spec_schema.py). Run after changing the CRD; a test fails until you do.

    .venv/bin/python scripts/crd_spec_schema.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CRD = ROOT / "charts/promscaler/crds/autoscalers.promscaler.dev.yaml"
OUT = ROOT / "autoscaler/core/autoscaler_spec_schema.json"
DROPPED = {"description", "x-kubernetes-validations", "default", "format"}


def stripped(node: Any) -> Any:
    if isinstance(node, list):
        return [stripped(n) for n in node]
    if not isinstance(node, dict):
        return node
    return {k: stripped(v) for k, v in node.items() if k not in DROPPED}


def spec_schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return stripped(schema)


def text() -> str:
    return json.dumps(spec_schema(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    OUT.write_text(text())
    sys.stdout.write(f"wrote {OUT.relative_to(ROOT)}\n")
