"""The chart's operations objects: the PrometheusRule (the same rules as files/alerts.yaml),
the Grafana dashboard ConfigMap (files/dashboard.json), and the honorLabels the per-Autoscaler
series need."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.charts.helm import CHART, NAMESPACE, Helm, RenderError

ALERTS = CHART / "files" / "alerts.yaml"
DASHBOARD = CHART / "files" / "dashboard.json"


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


def test_dashboard_is_off_by_default(helm: Helm) -> None:
    names = [o["metadata"]["name"] for o in helm.template().of_kind("ConfigMap")]
    assert not [n for n in names if n.endswith("-dashboard")]


def test_dashboard_config_map_carries_the_json_with_the_sidecar_label(helm: Helm) -> None:
    rendered = helm.template({"dashboard": {"enabled": True}})
    config_map = rendered.get("ConfigMap", "promscaler-dashboard")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["namespace"] == NAMESPACE
    assert json.loads(config_map["data"]["promscaler.json"]) == json.loads(DASHBOARD.read_text())


def test_dashboard_labels_annotations_and_namespace_are_settable(helm: Helm) -> None:
    values = {
        "enabled": True,
        "labels": {"grafana_dashboard": "promscaler"},
        "annotations": {"grafana_folder": "Autoscaling"},
        "namespace": "grafana",
    }
    config_map = helm.template({"dashboard": values}).get("ConfigMap", "promscaler-dashboard")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "promscaler"
    assert config_map["metadata"]["annotations"] == {"grafana_folder": "Autoscaling"}
    assert config_map["metadata"]["namespace"] == "grafana"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param({"dashboard": {"enabled": 1}}, "dashboard.enabled", id="bool"),
        pytest.param({"dashboard": {"namespace": "Bad_NS"}}, "dashboard.namespace", id="namespace"),
        pytest.param({"dashboard": {"folder": "x"}}, "folder", id="unknown-key"),
    ],
)
def test_bad_dashboard_values_are_refused(helm: Helm, values, message) -> None:
    with pytest.raises(RenderError, match=message):
        helm.template(values)


def test_every_dashboard_panel_has_a_title_description_and_queries() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(panels) >= 12
    for panel in panels:
        assert panel["title"], panel["id"]
        assert panel["description"], panel["title"]
        assert panel["targets"], panel["title"]
        assert all(t["expr"] for t in panel["targets"]), panel["title"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
