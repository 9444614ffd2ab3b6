"""With every control absent the decision is upstream's, byte for byte.

`golden/upstream_corpus.jsonl.gz` holds every document the core tests fed to `decide_document`
on main before the controls existed (189 documents, 31 of them invalid), captured by wrapping
`autoscaler.core.decide_document` during `pytest tests/core` (without the hypothesis tests);
`golden/upstream_results.jsonl.gz` is what main's `promscaler-autoscaler decide --jsonl` printed
for them. This test replays the corpus through today's core and compares the bytes.

Six of the corpus's documents hold a spec the CRD refuses (the core tests reach upstream's
handling of such specs, e.g. an unknown metric type). The core still decides them as upstream
does, byte for byte; the `decide` tool refuses them, naming the field, as `kubectl apply` would
(the offline tools are as strict as the API server with our CRD): every other line of the tool's
output is the golden one.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from autoscaler.core import decide_document
from autoscaler.decide_cli import Decide, decide_checked, run_jsonl

GOLDEN = Path(__file__).parent / "golden"


def _lines(name: str) -> list[bytes]:
    return gzip.decompress((GOLDEN / name).read_bytes()).splitlines(keepends=True)


def _run(lines: list[bytes], decide: Decide = decide_document) -> bytes:
    out = io.StringIO()
    assert run_jsonl(io.BytesIO(b"".join(lines)), out, decide=decide) == 0
    return out.getvalue().encode()


# the corpus lines (1-based) whose spec the CRD refuses, and what `decide` says of each
CRD_REFUSED = {
    9: "autoscaler.spec.metrics[0].resource.target.averageUtilization: "
    "is required when type is Utilization",
    10: "autoscaler.spec.metrics[0].containerResource.target.averageUtilization: "
    "is required when type is Utilization",
    13: "autoscaler.spec.metrics[0].external.target.value: is required when type is Value",
    91: "autoscaler.spec.minReplicas: "
    "minReplicas may be 0 only when at least one metric is of type Object or External",
    105: 'autoscaler.spec.metrics[0].type: Unsupported value: "Bogus": supported values: '
    '"Object", "Pods", "Resource", "ContainerResource", "External"',
    176: "autoscaler.spec.behavior.scaleUp.policies: "
    "must specify at least one policy unless selectPolicy is Disabled",
}


def test_corpus_is_the_one_captured() -> None:
    assert len(_lines("upstream_corpus.jsonl.gz")) == 189
    assert len(_lines("upstream_results.jsonl.gz")) == 189


def test_the_core_output_is_byte_identical_to_main() -> None:
    got = _run(_lines("upstream_corpus.jsonl.gz")).splitlines(keepends=True)
    want = _lines("upstream_results.jsonl.gz")
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"corpus line {i + 1} differs"


def test_decide_jsonl_is_main_except_on_specs_the_crd_refuses() -> None:
    got = _run(_lines("upstream_corpus.jsonl.gz"), decide_checked).splitlines(keepends=True)
    want = _lines("upstream_results.jsonl.gz")
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if i + 1 in CRD_REFUSED:
            assert w != g, f"corpus line {i + 1} was an error already"
            assert json.loads(g) == {"error": CRD_REFUSED[i + 1]}, f"corpus line {i + 1}"
        else:
            assert g == w, f"corpus line {i + 1} differs"


def _with_metadata(doc: Any) -> Any:
    """The same document from a controller that also passes the metadata the controls read,
    with no control in it: a creation time and unrelated annotations."""
    if not isinstance(doc, dict) or not isinstance(doc.get("autoscaler"), dict):
        return doc
    doc = copy.deepcopy(doc)
    doc["autoscaler"]["metadata"] = {
        "creationTimestamp": "2020-01-01T00:00:00Z",
        "annotations": {"example.com/owner": "team-a"},
    }
    return doc


@pytest.mark.parametrize("variant", ["metadata-without-controls"])
def test_metadata_without_controls_changes_nothing(variant: str) -> None:
    corpus = [json.loads(line) for line in _lines("upstream_corpus.jsonl.gz")]
    lines = [(json.dumps(_with_metadata(doc)) + "\n").encode() for doc in corpus]
    got = _run(lines, decide_checked).splitlines(keepends=True)
    want = _lines("upstream_results.jsonl.gz")
    differing = [
        i + 1
        for i, (g, w) in enumerate(zip(got, want, strict=True))
        if g != w and i + 1 not in CRD_REFUSED
    ]
    assert differing == [], f"{variant}: lines {differing[:10]} differ"
