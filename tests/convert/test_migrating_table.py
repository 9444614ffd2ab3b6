"""docs/migrating.md's KEDA table names every ScaledObject field and annotation the converter
reads, and the fields and annotations it names are those KEDA v2.20 defines
(apis/keda/v1alpha1/scaledobject_types.go)."""

from __future__ import annotations

import re
from pathlib import Path

from autoscaler.convert import keda

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
    rows = [line for line in table.splitlines() if line.startswith("| ")]
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
