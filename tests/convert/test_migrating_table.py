"""docs/migrating.md's KEDA table names every ScaledObject field and annotation the converter
reads, and the fields and annotations it names are those KEDA v2.20 defines
(apis/keda/v1alpha1/scaledobject_types.go)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.convert import ConvertError, NotConverted, convert, keda

DOC = Path(__file__).parents[2] / "docs/migrating.md"
# KEDA v2.20's ScaledObjectSpec fields and ScaledObject annotations
KEDA_SPEC = {
    "scaleTargetRef", "pollingInterval", "initialCooldownPeriod", "cooldownPeriod",
    "idleReplicaCount", "minReplicaCount", "maxReplicaCount", "advanced", "triggers", "fallback",
}  # fmt: skip
KEDA_ANNOTATIONS = {
    "scaledobject.keda.sh/transfer-hpa-ownership",
    "scaledobject.keda.sh/hpa-excluded-labels",
    "validations.keda.sh/hpa-ownership",
    "autoscaling.keda.sh/paused-replicas",
    "autoscaling.keda.sh/paused",
    "autoscaling.keda.sh/paused-scale-in",
    "autoscaling.keda.sh/paused-scale-out",
    "autoscaling.keda.sh/force-activation",
}


def first_column() -> str:
    table = DOC.read_text().split("### Field by field", 1)[1].split("###", 1)[0]
    rows = [line for line in table.splitlines()[1:] if line.startswith("| ")]
    assert rows[0].startswith("| KEDA |")
    rows = rows[1:]  # the header
    return "\n".join(row.split(" | ", 1)[0] for row in rows)


def test_the_converter_reads_exactly_keda_s_fields_and_annotations():
    assert set(keda.SPEC_FIELDS) == KEDA_SPEC
    read = {*keda.PAUSE, *keda.PAUSE_DIRECTION, *keda.KEDA_ONLY_ANNOTATIONS, keda.FORCE_ACTIVATION}
    assert read == KEDA_ANNOTATIONS


def test_the_table_names_every_field_and_annotation():
    column = first_column()
    names = set(re.findall(r"`([^`]+)`", column))
    text = " ".join(names)
    missing = [f for f in KEDA_SPEC if f not in text]
    missing += [a for a in KEDA_ANNOTATIONS if a.rsplit("/", 1)[1] not in text]
    assert missing == []
    assert "Checked against KEDA v2.20" in DOC.read_text()


def examples_section() -> str:
    return DOC.read_text().split("#### Every row, as an example", 1)[1].split("\n### ", 1)[0]


def example_rows() -> list[tuple[str, str, str]]:
    rows = []
    for line in examples_section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 3 and cells[1].startswith("`{"):
            rows.append((cells[0], cells[1].strip("`"), cells[2].strip("`")))
    return rows


def base() -> dict[str, Any]:
    text = examples_section().split("```yaml", 1)[1].split("```", 1)[0]
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


def merged(into: Any, patch: Any) -> Any:
    if isinstance(into, dict) and isinstance(patch, dict):
        out = dict(into)
        for key, value in patch.items():
            out[key] = merged(into[key], value) if key in into else value
        return out
    if isinstance(into, list) and isinstance(patch, list):
        out_list = list(into)
        for i, value in enumerate(patch):
            same = (
                i < len(into)
                and isinstance(value, dict)
                and value.get("type")
                in (
                    None,
                    into[i].get("type"),
                )
            )
            if i < len(into) and same:
                out_list[i] = merged(into[i], value)
            elif i < len(into):
                out_list[i] = value
            else:
                out_list.append(value)
        return out_list
    return patch


def holds(part: Any, whole: Any) -> bool:
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            k in whole and holds(v, whole[k]) for k, v in part.items()
        )
    if isinstance(part, list):
        return (
            isinstance(whole, list)
            and len(part) <= len(whole)
            and all(holds(p, w) for p, w in zip(part, whole, strict=False))
        )
    return part == whole or str(part) == str(whole)


ROWS = example_rows()


def test_every_row_of_the_field_table_has_an_example():
    examples = {row for row, _, _ in ROWS}
    fields = [cells.split(" | ", 1)[0].strip("| ") for cells in first_column().splitlines()]
    # the example's row is the start of the field table's first cell
    missing = [f for f in fields if not any(f.startswith(e) for e in examples)]
    assert missing == []
    assert len(ROWS) >= len(fields)


@pytest.mark.parametrize(
    ("row", "patch", "want"), ROWS, ids=[f"{i}:{r[0]}" for i, r in enumerate(ROWS)]
)
def test_every_example_row_is_true_of_convert(row: str, patch: str, want: str):
    doc = merged(base(), yaml.safe_load(patch))
    expect = yaml.safe_load(want)
    if "skipped" in expect:
        with pytest.raises(NotConverted, match=re.escape(expect["skipped"])):
            convert(doc)
        return
    if "error" in expect:
        with pytest.raises(ConvertError, match=re.escape(expect["error"])):
            convert(doc)
        return
    got = convert(doc)
    for key in ("spec", "metadata"):
        if key in expect:
            assert holds(expect[key], got.autoscaler[key]), got.autoscaler[key]
    if "rule" in expect:
        assert holds(expect["rule"], got.external_rules[0]), got.external_rules
    notes = {n.field: n.changes_behaviour for n in got.notes}
    if "note" in expect:
        assert notes.get(expect["note"]) is False, notes
    if "changes" in expect:
        assert notes.get(expect["changes"]) is True, notes
