"""Which e2e tests run on the sandbox and which on a real cluster: `pytest --collect-only e2e`
under both settings (in-process), with the skips e2e/conftest.py adds. The same plan prints with
`PROMSCALER_E2E_PLAN=1 pytest --collect-only -q e2e`."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# what needs the sandbox, by test: everything else must run unchanged on a real cluster
SANDBOX_ONLY = {
    "e2e/test_autoscaler_sharding.py::test_lease_errors_and_latency_never_make_two_writers",
    "e2e/test_autoscaler_sharding.py::test_three_replicas_share_eight_shards_through_a_kill_and_a_restart",
    "e2e/test_autoscaler_faults.py::test_failed_scale_writes_hold_replicas_back_off_and_recover[503]",
    "e2e/test_autoscaler_faults.py::test_failed_scale_writes_hold_replicas_back_off_and_recover[409-conflict]",
    "e2e/test_autoscaler_faults.py::test_cut_and_expired_watches_resume_without_a_relist_storm",
    "e2e/test_autoscaler_faults.py::test_latency_and_refused_connections_delay_but_never_break_scaling",
    "e2e/test_autoscaler_faults.py::test_prometheus_nan_hangs_and_partial_answers_hold_replicas_then_scaling_resumes",
    "e2e/test_soak.py::test_a_terminated_soak_stops_everything_it_started",
    "e2e/test_soak.py::test_soak_short_form_holds_every_invariant",
    "e2e/test_resource_metrics.py::test_kubectl_top_pods_and_nodes",
    "e2e/test_resource_metrics.py::test_cpu_utilization_scales_on_simulated_load",
    "e2e/test_resource_metrics.py::test_an_autoscaler_without_metrics_defaults_to_cpu_80_percent",
    "e2e/test_adapter_auth.py::test_allowed_user_gets_metrics_through_the_aggregator",
    "e2e/test_adapter_auth.py::test_denied_user_gets_403_and_bad_token_401",
    "e2e/test_adapter_auth.py::test_the_adapter_asks_the_cluster_when_called_directly",
    "e2e/test_adapter_auth.py::test_spoofed_identity_headers_are_not_trusted",
    "e2e/test_adapter_auth.py::test_rotating_the_request_header_ca_needs_no_restart",
    "e2e/test_adapter_auth.py::test_a_pods_history_is_authorized_as_pods_in_the_history_group",
    "e2e/test_autoscaler_resilience.py::test_prometheus_outage_holds_replicas_and_scaling_resumes",
    "e2e/test_autoscaler_scaling.py::test_cpu_utilization_from_the_resource_metrics_api",
    "e2e/test_demo.py::test_demo_short_form_follows_the_load",
    "e2e/test_native_hpa.py::test_v1beta1_fallback_then_prometheus_gone_holds_the_replicas",
    "e2e/test_upgrade.py::test_rolling_upgrade_and_downgrade_lose_no_decision",
    "e2e/test_image.py::test_image_user_labels_help_and_the_charts_security_context",
    "e2e/test_image.py::test_an_autoscaler_scales_through_the_images_adapter",
    "e2e/test_keda_cooldown.py::test_a_converted_cooldown_period_of_30s_reaches_zero_30s_after_the_last_activity",
    "e2e/test_predictive_scaling.py::test_the_forecast_scales_up_before_the_hourly_peak",
    "e2e/test_predictive_scaling.py::test_a_pods_metric_is_forecast_from_the_deployments_earlier_pods",
}
ON_A_REAL_CLUSTER_TOO = {
    "e2e/test_native_hpa.py::test_pods_metric_scales_a_deployment_up_and_down",
    "e2e/test_native_hpa.py::test_external_metric_with_min_zero_scales_to_zero_and_wakes",
    "e2e/test_autoscaler_scaling.py::test_external_metric_scales_up_then_down_after_the_window",
    "e2e/test_autoscaler_failover.py::test_one_leader_acts_and_a_follower_takes_over_with_the_history",
}


class _Plan:
    """A pytest plugin that keeps the collected items' nodeids and skip reasons."""

    def __init__(self) -> None:
        self.items: dict[str, str] = {}

    def pytest_collection_finish(self, session):
        for item in session.items:
            skip = item.get_closest_marker("skip")
            self.items[item.nodeid] = "run" if skip is None else skip.kwargs.get("reason", "")


def plan(monkeypatch, **env: str) -> dict[str, str]:
    """nodeid -> "run" or the skip reason, from an in-process `pytest --collect-only e2e`."""
    with monkeypatch.context() as m:
        for key in [k for k in os.environ if k.startswith("PROMSCALER_E2E")]:
            m.delenv(key)
        for key, value in env.items():
            m.setenv(key, value)
        m.chdir(REPO)
        collected = _Plan()
        code = pytest.main(
            ["--collect-only", "-q", "-p", "no:cacheprovider", "e2e"], plugins=[collected]
        )
    assert code == 0
    return collected.items


def test_sandbox_runs_everything_and_a_real_cluster_skips_only_what_needs_the_sandbox(
    monkeypatch, capsys
):
    sandbox = plan(monkeypatch)
    real = plan(monkeypatch, PROMSCALER_E2E_KUBECONFIG="/nonexistent/kubeconfig")
    capsys.readouterr()  # the nested runs' listings
    assert sandbox, "the plan lists the e2e tests"
    assert set(sandbox.values()) == {"run"}
    assert set(real) == set(sandbox), "both modes collect the same tests"
    skipped = {nodeid for nodeid, what in real.items() if what != "run"}
    assert skipped == SANDBOX_ONLY
    for nodeid in skipped:
        assert real[nodeid].startswith("needs the sandbox: "), real[nodeid]
        assert len(real[nodeid]) > len("needs the sandbox: ") + 10, "the reason names the need"
    assert {nodeid for nodeid, what in real.items() if what == "run"} >= ON_A_REAL_CLUSTER_TOO
