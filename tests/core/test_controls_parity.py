"""With every control absent the decision is upstream's, byte for byte.

`golden/upstream_corpus.jsonl.gz` holds every document the core tests fed to `decide_document`
on main before the controls existed (189 documents, 31 of them invalid), captured by wrapping
`autoscaler.core.decide_document` during `pytest tests/core` (without the hypothesis tests);
`golden/upstream_results.jsonl.gz` is what main's `promscaler-autoscaler decide --jsonl` printed
for them. This test replays the corpus through today's `decide --jsonl` and compares the bytes.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from autoscaler.decide_cli import run_jsonl

GOLDEN = Path(__file__).parent / "golden"


def _lines(name: str) -> list[bytes]:
    return gzip.decompress((GOLDEN / name).read_bytes()).splitlines(keepends=True)


def _run(lines: list[bytes]) -> bytes:
    out = io.StringIO()
    assert run_jsonl(io.BytesIO(b"".join(lines)), out) == 0
    return out.getvalue().encode()


def test_corpus_is_the_one_captured() -> None:
    assert len(_lines("upstream_corpus.jsonl.gz")) == 189
    assert len(_lines("upstream_results.jsonl.gz")) == 189


def test_decide_jsonl_output_is_byte_identical_to_main() -> None:
    got = _run(_lines("upstream_corpus.jsonl.gz")).splitlines(keepends=True)
    want = _lines("upstream_results.jsonl.gz")
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
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
    got = _run(lines).splitlines(keepends=True)
    want = _lines("upstream_results.jsonl.gz")
    differing = [i + 1 for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    assert differing == [], f"{variant}: lines {differing[:10]} differ"
