"""The chart's operations objects: the PrometheusRule (the same rules as files/alerts.yaml)
and the honorLabels the per-Autoscaler series need."""

from __future__ import annotations

import pytest
import yaml

from tests.charts.helm import CHART, NAMESPACE, Helm, RenderError

ALERTS = CHART / "files" / "alerts.yaml"


def test_prometheus_rule_is_off_by_default(helm: Helm) -> None:
    assert not helm.template().of_kind("PrometheusRule")


def test_prometheus_rule_carries_the_plain_rule_file_unchanged(helm: Helm) -> None:
    rendered = helm.template({"prometheusRule": {"enabled": True, "labels": {"release": "kps"}}})
    (rule,) = rendered.of_kind("PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["namespace"] == NAMESPACE
    assert rule["metadata"]["labels"]["release"] == "kps"
    assert rule["spec"] == yaml.safe_load(ALERTS.read_text())
    # the annotations' Prometheus templates reach the operator as written, not run by helm
    annotations = [r["annotations"]["summary"] for g in rule["spec"]["groups"] for r in g["rules"]]
    assert any("{{ $labels.name }}" in a for a in annotations)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param({"prometheusRule": {"enabled": "yes"}}, "prometheusRule.enabled", id="bool"),
        pytest.param({"prometheusRule": {"label": {}}}, "label", id="unknown-key"),
    ],
)
def test_bad_prometheus_rule_values_are_refused(helm: Helm, values, message) -> None:
    with pytest.raises(RenderError, match=message):
        helm.template(values)


def test_autoscaler_service_monitor_keeps_the_autoscalers_namespace_label(helm: Helm) -> None:
    rendered = helm.template({"serviceMonitor": {"enabled": True}})
    monitor = rendered.component("ServiceMonitor", "autoscaler")
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["honorLabels"] is True
