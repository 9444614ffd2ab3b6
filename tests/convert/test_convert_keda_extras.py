"""cron triggers, force-activation, cooldownPeriod 0, formulas that cannot be said, ScaledJob
and unsupported trigger types: what they become, or the message that names them."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from autoscaler.convert import ConvertError, convert
from tests.convert import examples as ex
from tests.convert.keda_docs import DOCS, REFUSED


def test_the_cron_page_example_becomes_a_schedule_and_an_idle_metric():
    got = convert(ex.load(ex.KEDA_CRON))
    spec = got.autoscaler["spec"]
    assert spec["schedules"] == [
        {
            "name": "cron-0",
            "schedule": "0 6 * * *",
            "timeZone": "Asia/Kolkata",
            "duration": "14h",
            "minReplicas": 10,
        }
    ]
    assert spec["minReplicas"] == 0
    (metric,) = spec["metrics"]
    assert metric["external"]["metric"]["name"] == "cron-scaledobject-idle"
    assert metric["activation"] == {"threshold": "0"}
    (rule,) = got.external_rules
    assert rule["metricsQuery"] == "vector(0)"
    assert not got.changes_behaviour


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        pytest.param("0 8 * * 1-5", "0 18 * * 1-4,6", "not all as long (10h, 34h)", id="uneven"),
        pytest.param("0 * * * *", "0 8 * * *", "another start before an end", id="starts-pile"),
    ],
)
def test_a_cron_pair_that_is_not_one_window_is_named(start, end, message):
    doc = ex.load(ex.KEDA_CRON)
    doc["spec"]["triggers"].append(
        {"type": "prometheus", "metadata": {"query": "sum(q)", "threshold": "1"}}
    )
    doc["spec"]["triggers"][0]["metadata"].update(start=start, end=end)
    got = convert(doc)
    (note,) = [n for n in got.notes if n.field == "spec.triggers[0]"]
    assert message in note.message
    assert note.changes_behaviour
    assert "schedules" not in got.autoscaler["spec"]


def test_a_window_crossing_dst_is_named():
    doc = ex.load(ex.KEDA_CRON)
    doc["spec"]["triggers"][0]["metadata"].update(
        timezone="Europe/Berlin", start="0 1 * * *", end="0 5 * * *"
    )
    got = convert(doc)
    assert [n.message[:40] for n in got.notes if n.changes_behaviour] == [
        "a window that a DST change in Europe/Ber"
    ]


def test_cooldown_0_maps_to_0_and_absent_to_keda_300():
    assert convert(ex.load(ex.KEDA_COOLDOWN_0)).autoscaler["spec"]["scaleToZero"] == {
        "cooldownSeconds": 0
    }
    assert convert(ex.load(ex.KEDA_PROMETHEUS)).autoscaler["spec"]["scaleToZero"] == {
        "cooldownSeconds": 300
    }


def test_force_activation_is_a_floor_of_at_least_1():
    got = convert(ex.load(ex.KEDA_FORCED_COOLDOWN_0))
    spec = got.autoscaler["spec"]
    assert (spec["minReplicas"], "scaleToZero" in spec) == (2, False)
    assert "annotations" not in got.autoscaler["metadata"]
    (note,) = [n for n in got.notes if "force-activation" in n.field]
    assert "minReplicas of at least 1" in note.message


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        pytest.param("max(trig_one, 2)", "function max() is not converted", id="function"),
        pytest.param("trig_one ?? 1", "`??`", id="nil-coalescing"),
        pytest.param("trig_three + 1", "'trig_three' is not the name", id="unknown-name"),
        pytest.param("trig_one % 2", "'% 2' is not in the subset", id="modulo"),
        pytest.param("(trig_one", "expected ')'", id="unclosed"),
    ],
)
def test_a_formula_outside_the_subset_is_refused_naming_it(formula, message):
    doc = ex.load(ex.KEDA_IDLE_AND_MODIFIERS)
    doc["spec"]["advanced"]["scalingModifiers"]["formula"] = formula
    with pytest.raises(ConvertError, match=r"spec\.advanced\.scalingModifiers\.formula: ") as err:
        convert(doc)
    assert message in str(err.value)


def test_a_formula_with_a_ternary_and_comparisons():
    doc = ex.load(ex.KEDA_IDLE_AND_MODIFIERS)
    doc["spec"]["advanced"]["scalingModifiers"].update(
        formula="trig_one > 1 && trig_two >= 2 ? trig_two : 0", activationTarget="3"
    )
    got = convert(doc)
    (metric,) = got.autoscaler["spec"]["metrics"]
    assert metric["activation"] == {"threshold": "3"}
    (rule,) = got.external_rules
    assert rule["metricsQuery"].startswith("vector(scalar((vector(")


def test_an_unsupported_trigger_alone_names_itself_and_the_route():
    with pytest.raises(ConvertError) as err:
        convert(ex.load(ex.UNSUPPORTED_WORKLOAD_ONLY))
    assert "spec.triggers[0]: trigger type 'kubernetes-workload' is not converted" in str(err.value)
    assert "kube-state-metrics" in str(err.value)


def test_a_scaled_job_is_named_and_exits_1_while_the_rest_converts(tmp_path):
    job = "apiVersion: keda.sh/v1alpha1\nkind: ScaledJob\nmetadata: {name: j}\nspec: {}\n"
    out = subprocess.run(
        [sys.executable, "-m", "autoscaler", "convert", "-", "--rules-out", str(tmp_path / "r")],
        input=ex.KEDA_PROMETHEUS + "---\n" + job,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 1, out.stderr
    assert "kind: Autoscaler" in out.stdout
    assert "ScaledJob default/j: not converted" in out.stderr


KAFKA = {"type": "kafka", "name": "lag", "metadata": {"topic": "t"}}
CRON = {
    "type": "cron",
    "name": "day",
    "metadata": {
        "timezone": "UTC",
        "start": "0 8 * * *",
        "end": "0 18 * * *",
        "desiredReplicas": "3",
    },
}


@pytest.mark.parametrize(
    ("extra", "formula", "message"),
    [
        pytest.param(KAFKA, "trig_one + lag", "'lag' is a 'kafka' trigger", id="kafka-in-formula"),
        pytest.param(
            {"type": "prometheus", "metadata": {}},
            "trig_one",
            "spec.triggers[2].name: required",
            id="unnamed",
        ),
        pytest.param(CRON, "trig_one + day", "'day' is a 'cron' trigger", id="cron-in-formula"),
    ],
)
def test_what_a_formula_cannot_combine_is_refused(extra, formula, message):
    doc = ex.load(ex.KEDA_IDLE_AND_MODIFIERS)
    doc["spec"]["triggers"].append(extra)
    doc["spec"]["advanced"]["scalingModifiers"]["formula"] = formula
    with pytest.raises(ConvertError) as err:
        convert(doc)
    assert message in str(err.value)


@pytest.mark.parametrize("extra", [KAFKA, CRON], ids=["kafka", "cron"])
def test_a_trigger_the_formula_does_not_read_has_no_effect_as_in_keda(extra):
    doc = ex.load(ex.KEDA_IDLE_AND_MODIFIERS)
    doc["spec"]["triggers"].append(extra)
    got = convert(doc)
    assert "schedules" not in got.autoscaler["spec"]
    (note,) = [n for n in got.notes if n.field == "spec.triggers[2]"]
    assert (note.changes_behaviour, "not read by scalingModifiers.formula" in note.message) == (
        False,
        True,
    )


def test_cpu_beside_a_formula_stays_a_resource_metric():
    doc = ex.load(ex.KEDA_IDLE_AND_MODIFIERS)
    doc["spec"]["triggers"].append(
        {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "70"}}
    )
    kinds = [m["type"] for m in convert(doc).autoscaler["spec"]["metrics"]]
    assert kinds == ["Resource", "External"]


def test_a_query_that_reads_no_series_is_listed_by_up():
    doc = ex.load(ex.KEDA_PROMETHEUS)
    doc["spec"]["triggers"][0]["metadata"]["query"] = "vector(100)"
    got = convert(doc)
    (rule,) = got.external_rules
    assert (rule["seriesQuery"], rule["metricsQuery"]) == ("up", "(vector(100)) or vector(0)")
    assert "spec.triggers[0].metadata.query" in {n.field for n in got.notes}


@pytest.mark.parametrize(
    ("keda_min", "idle", "want"),
    [
        pytest.param(None, None, 1, id="default-0-is-1"),
        pytest.param(0, None, 1, id="0-is-1"),
        pytest.param(2, 0, 2, id="idle-0-never-idles"),
    ],
)
def test_cpu_alone_never_rests_at_0_as_in_keda(keda_min, idle, want):
    doc = ex.load(ex.KEDA_PROMETHEUS)
    doc["spec"]["triggers"] = [
        {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50"}}
    ]
    for key, value in (("minReplicaCount", keda_min), ("idleReplicaCount", idle)):
        if value is not None:
            doc["spec"][key] = value
    got = convert(doc)
    assert got.autoscaler["spec"]["minReplicas"] == want
    assert "scaleToZero" not in got.autoscaler["spec"]
    assert not got.changes_behaviour


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_keda_docs_example_converts_or_is_refused_as_keda_refuses_it(name):
    doc = yaml.safe_load(DOCS[name])
    if name in REFUSED:
        with pytest.raises(ConvertError, match=re.escape(REFUSED[name])):
            convert(doc)
        return
    got = convert(doc)
    assert got.autoscaler["kind"] == "Autoscaler"
    # what changes behaviour is only what KEDA does that the adapter does elsewhere:
    # authentication, and the trigger types with no equivalent
    changed = {n.field for n in got.notes if n.changes_behaviour}
    assert changed <= {
        "spec.triggers[0].authenticationRef",
        "spec.triggers[0].metadata.authModes",
        "spec.triggers[0].metadata.awsRegion",
        "spec.triggers[0].metadata.identityOwner",
        "spec.triggers[1]",  # kubernetes-workload, in KEDA's cpu/memory to-zero tests
        "spec.idleReplicaCount",  # KEDA's jump from 0 to minReplicaCount
    }, changed


def test_an_unknown_keda_annotation_is_named_and_a_non_string_one_refused():
    doc = ex.load(ex.KEDA_PROMETHEUS)
    doc["metadata"]["annotations"] = {"autoscaling.keda.sh/new-thing": "x", "team": "a"}
    got = convert(doc)
    assert got.autoscaler["metadata"]["annotations"] == {"team": "a"}
    (note,) = [n for n in got.notes if "new-thing" in n.field]
    assert note.changes_behaviour
    doc["metadata"]["annotations"] = {"team": 1}
    with pytest.raises(ConvertError, match=r"metadata\.annotations\[team\]: must be a string"):
        convert(doc)


def test_a_cron_trigger_with_value_is_named_and_a_long_name_fits_the_crd():
    doc = ex.load(ex.KEDA_CRON)
    trigger = doc["spec"]["triggers"][0]
    trigger.update(metricType="Value", name="Business Hours " + "x" * 80)
    got = convert(doc)
    (schedule,) = got.autoscaler["spec"]["schedules"]
    assert schedule["name"] == ("business-hours-" + "x" * 80)[:63]
    assert {n.field for n in got.notes if n.changes_behaviour} == {"spec.triggers[0].metricType"}
