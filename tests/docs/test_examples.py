"""Every Autoscaler the README and the docs show is one the CRD accepts and the core decides on.

A reader copies these examples first; a field that the CRD prunes or refuses, or that the core
cannot read, would fail them on their first `kubectl apply`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.core import decide_document
from tests.controller.crdcheck import validate

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"```ya?ml\n(.*?)```", re.S)


def autoscalers() -> list[Any]:
    found = []
    for page in PAGES:
        for n, block in enumerate(FENCE.findall(page.read_text())):
            try:
                docs = list(yaml.safe_load_all(block))
            except yaml.YAMLError:
                continue  # fragments (values excerpts, rule snippets) are not objects
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") == "Autoscaler":
                    name = (doc.get("metadata") or {}).get("name", "?")
                    found.append(pytest.param(doc, id=f"{page.name}-{n}-{name}"))
    return found


EXAMPLES = autoscalers()


def test_the_readme_shows_an_autoscaler_with_the_controls() -> None:
    readme = [p.values[0] for p in EXAMPLES if p.id.startswith("README.md")]
    assert readme, "the README's Autoscaler example was not found"
    spec = readme[0]["spec"]
    assert "activation" in spec["metrics"][0]
    assert "fallback" in spec


@pytest.mark.parametrize("obj", EXAMPLES)
def test_the_crd_accepts_the_example(obj: dict[str, Any]) -> None:
    _, errors = validate(obj)
    assert errors == []


@pytest.mark.parametrize("obj", EXAMPLES)
def test_the_core_decides_on_the_example(obj: dict[str, Any]) -> None:
    defaulted, _ = validate(obj)
    n = len(defaulted["spec"].get("metrics") or [{}])
    doc = {
        "now": "2026-01-01T00:00:00Z",
        "autoscaler": defaulted,
        "scale": {"spec": {"replicas": 1}, "status": {"replicas": 1, "selector": "app=x"}},
        "pods": [],
        "metrics": [{"error": "not measured in this test"}] * n,
    }
    result = decide_document(doc)
    # every metric failed: nothing is written (never a scale-down), and the decision says why
    assert result["rescale"] is False
    assert "invalid metrics" in result["summary"]
