"""Write autoscaler/core/autoscaler_spec_schema.py: the Autoscaler CRD's schema of `spec`
without descriptions, CEL rules or defaults, as a Python literal for the offline tools' strict
check (autoscaler/core/spec_schema.py). Run after changing the CRD; a test fails until you do.

    .venv/bin/python scripts/crd_spec_schema.py

The module is written in the shape `ruff format` keeps (one entry a line, trailing commas), so
the formatter never rewrites it and the drift test can compare the text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CRD = ROOT / "charts/promscaler/crds/autoscalers.promscaler.dev.yaml"
OUT = ROOT / "autoscaler/core/autoscaler_spec_schema.py"
DROPPED = {"description", "x-kubernetes-validations", "default", "format"}

HEADER = '''# ruff: noqa: E501
"""The Autoscaler CRD's structural schema of `spec` (charts/promscaler/crds/), as plain data.

Written by scripts/crd_spec_schema.py from the CRD; do not edit: run the script after changing
the CRD (tests/convert/test_convert_strict.py fails until you do). Lines may be long: the
CRD's patterns are.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["SPEC_SCHEMA"]

SPEC_SCHEMA: Final[dict[str, Any]] = '''


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


def literal(value: Any, indent: int = 0) -> str:
    """`value` as Python source, keys sorted, every non-empty container exploded."""
    pad, inner = "    " * indent, "    " * (indent + 1)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {literal(value[k], indent + 1)}," for k in sorted(value)]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        items = [f"{inner}{literal(v, indent + 1)}," for v in value]
        return "[\n" + "\n".join(items) + f"\n{pad}]"
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a Python string literal
    if isinstance(value, bool | int | float) or value is None:
        return repr(value)
    return "{}" if isinstance(value, dict) else "[]"


def text() -> str:
    return HEADER + literal(spec_schema()) + "\n"


if __name__ == "__main__":
    OUT.write_text(text())
    sys.stdout.write(f"wrote {OUT.relative_to(ROOT)}\n")
