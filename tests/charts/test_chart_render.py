"""What `helm template` renders: APIServices, TLS, security, args, rules, RBAC."""

from __future__ import annotations

import base64
import datetime as dt
import tomllib
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from cryptography import x509

from tests.charts.helm import CHART, NAMESPACE, ROOT, Helm, Rendered, RenderError

ADAPTER = "promscaler-adapter"
AUTOSCALER = "promscaler-autoscaler"
CUSTOM = ("v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io")
EXTERNAL = ("v1beta1.external.metrics.k8s.io",)
HISTORY = ("v1alpha1.history.promscaler.dev",)
CI_VALUES = sorted(CHART.glob("ci/*-values.yaml"))
VALUE_SETS = [pytest.param((), id="default")] + [
    pytest.param((f,), id=f.name.removesuffix("-values.yaml")) for f in CI_VALUES
]
CONSOLE_SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def container(rendered: Rendered, deployment: str) -> dict[str, Any]:
    dep = rendered.get("Deployment", deployment)
    (only,) = dep["spec"]["template"]["spec"]["containers"]
    return dict(only)


def checksum(rendered: Rendered) -> str:
    dep = rendered.get("Deployment", ADAPTER)
    return str(dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"])


def rule_file_text(rendered: Rendered) -> str:
    return str(rendered.component("ConfigMap", "adapter")["data"]["config.yaml"])


def rule_file(rendered: Rendered) -> dict[str, Any]:
    text = rendered.get("ConfigMap", ADAPTER)["data"]["config.yaml"]
    return dict(yaml.safe_load(text))


# --- APIServices --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Switches:
    custom: bool
    external: bool
    want: tuple[str, ...]
    resource: bool = False
    history: bool = False


RESOURCE = ("v1.metrics.k8s.io", "v1beta1.metrics.k8s.io")  # v1: GA in 1.37, same types
RESOURCE_RULES = {
    "cpu": {
        "containerQuery": "sum(c{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        "nodeQuery": "sum(n{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        "resources": {"template": "<<.Resource>>"},
        "containerLabel": "container",
    },
    "memory": {
        "containerQuery": "sum(m{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        "nodeQuery": "sum(n{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        "resources": {"template": "<<.Resource>>"},
        "containerLabel": "container",
    },
}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Switches(True, True, CUSTOM + EXTERNAL), id="both-groups"),
        pytest.param(Switches(False, True, EXTERNAL), id="only-external-beside-another-adapter"),
        pytest.param(Switches(True, False, CUSTOM), id="only-custom-beside-keda"),
        pytest.param(Switches(False, False, ()), id="no-group"),
        pytest.param(
            Switches(True, True, CUSTOM + EXTERNAL + RESOURCE, resource=True),
            id="all-three-instead-of-metrics-server",
        ),
        pytest.param(Switches(False, False, RESOURCE, resource=True), id="only-resource"),
        pytest.param(
            Switches(True, True, CUSTOM + EXTERNAL + HISTORY, history=True), id="with-history"
        ),
        pytest.param(Switches(False, False, HISTORY, history=True), id="only-history"),
    ],
)
def test_apiservices_follow_the_group_switches(helm: Helm, case: Switches) -> None:
    rendered = helm.template(
        {
            "apiServices": {
                "custom": {"enabled": case.custom},
                "external": {"enabled": case.external},
                "resource": {"enabled": case.resource},
                "history": {"enabled": case.history},
            },
            "rules": {"resource": RESOURCE_RULES if case.resource else {}},
        }
    )
    got = sorted(o["metadata"]["name"] for o in rendered.of_kind("APIService"))
    assert got == sorted(case.want)
    for api in rendered.of_kind("APIService"):
        version, group = api["metadata"]["name"].split(".", 1)
        assert (api["spec"]["group"], api["spec"]["version"]) == (group, version)
        assert api["spec"]["service"] == {"name": ADAPTER, "namespace": NAMESPACE, "port": 443}


def test_apiservice_priorities_prefer_v1beta2_like_prometheus_adapter(helm: Helm) -> None:
    rendered = helm.template()
    prio = {
        a["metadata"]["name"]: (a["spec"]["groupPriorityMinimum"], a["spec"]["versionPriority"])
        for a in rendered.of_kind("APIService")
    }
    assert prio == {
        "v1beta1.custom.metrics.k8s.io": (100, 100),
        "v1beta2.custom.metrics.k8s.io": (100, 200),
        "v1beta1.external.metrics.k8s.io": (100, 100),
        "v1alpha1.history.promscaler.dev": (100, 100),
    }


def test_resource_apiservices_prefer_v1_and_keep_v1beta1(helm: Helm) -> None:
    rendered = helm.template(
        {"apiServices": {"resource": {"enabled": True}}, "rules": {"resource": RESOURCE_RULES}}
    )
    prio = {
        a["metadata"]["name"]: (a["spec"]["groupPriorityMinimum"], a["spec"]["versionPriority"])
        for a in rendered.of_kind("APIService")
        if a["spec"]["group"] == "metrics.k8s.io"
    }
    assert prio == {"v1.metrics.k8s.io": (100, 200), "v1beta1.metrics.k8s.io": (100, 100)}


def test_resource_api_grants_kubectl_top_and_the_hpa(helm: Helm) -> None:
    rendered = helm.template(
        {"apiServices": {"resource": {"enabled": True}}, "rules": {"resource": RESOURCE_RULES}}
    )
    assert rule_file(rendered)["resourceRules"]["cpu"]["containerLabel"] == "container"
    reader = rendered.get("ClusterRole", "promscaler-metrics-reader")
    grant = {
        "apiGroups": ["metrics.k8s.io"],
        "resources": ["pods", "nodes"],
        "verbs": ["get", "list"],
    }
    assert grant in reader["rules"]
    top = rendered.get("ClusterRole", "promscaler-aggregated-metrics-reader")
    labels = top["metadata"]["labels"]
    for role in ("view", "edit", "admin"):
        assert labels[f"rbac.authorization.k8s.io/aggregate-to-{role}"] == "true"
    assert top["rules"] == reader["rules"][-1:]
    names = [o["metadata"]["name"] for o in helm.template().of_kind("ClusterRole")]
    assert "promscaler-aggregated-metrics-reader" not in names


# --- TLS -------------------------------------------------------------------------------------


@pytest.mark.parametrize("files", VALUE_SETS)
def test_no_apiservice_skips_tls_verification(helm: Helm, files: tuple[Any, ...]) -> None:
    rendered = helm.template(files=files)
    for api in rendered.of_kind("APIService"):
        assert "insecureSkipTLSVerify" not in api["spec"]
        injected = "cert-manager.io/inject-ca-from" in (api["metadata"].get("annotations") or {})
        # exactly one source of trust: a caBundle, or cert-manager's injection of one
        assert bool(api["spec"].get("caBundle")) != injected, api["metadata"]["name"]


def test_gen_ca_secret_and_ca_bundle_form_a_verifiable_chain(helm: Helm) -> None:
    rendered = helm.template()
    secret = rendered.get("Secret", f"{ADAPTER}-tls")
    assert secret["type"] == "kubernetes.io/tls"
    data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    ca = x509.load_pem_x509_certificate(data["ca.crt"])
    cert = x509.load_pem_x509_certificate(data["tls.crt"])
    for api in rendered.of_kind("APIService"):
        assert base64.b64decode(api["spec"]["caBundle"]) == data["ca.crt"]
    cert.verify_directly_issued_by(ca)  # raises if the CA did not sign it
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    # the kube-aggregator dials <service>.<namespace>.svc
    assert f"{ADAPTER}.{NAMESPACE}.svc" in names.get_values_for_type(x509.DNSName)
    assert cert.not_valid_after_utc - dt.datetime.now(dt.UTC) > dt.timedelta(days=3000)


def test_cert_manager_mode_injects_the_serving_certificates_ca(helm: Helm) -> None:
    rendered = helm.template({"tls": {"mode": "certManager"}})
    certificate = rendered.get("Certificate", f"{ADAPTER}-serving")
    assert certificate["spec"]["secretName"] == f"{ADAPTER}-tls"
    assert f"{ADAPTER}.{NAMESPACE}.svc" in certificate["spec"]["dnsNames"]
    assert certificate["spec"]["issuerRef"]["name"] == f"{ADAPTER}-ca"
    assert rendered.get("Issuer", f"{ADAPTER}-ca")["spec"]["ca"]["secretName"] == f"{ADAPTER}-ca"
    assert not rendered.of_kind("Secret")  # cert-manager writes it
    for api in rendered.of_kind("APIService"):
        annotation = api["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
        assert annotation == f"{NAMESPACE}/{ADAPTER}-serving"


def test_cert_manager_with_a_given_issuer_creates_no_ca(helm: Helm) -> None:
    ref = {"name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
    rendered = helm.template({"tls": {"mode": "certManager", "certManager": {"issuerRef": ref}}})
    assert rendered.names().count("Issuer/promscaler-adapter-ca") == 0
    assert rendered.get("Certificate", f"{ADAPTER}-serving")["spec"]["issuerRef"] == ref


PEM = "-----BEGIN CERTIFICATE-----\nMIIBexample\n-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(
    "given",
    [
        pytest.param(PEM, id="pem"),
        pytest.param(base64.b64encode(PEM.encode()).decode(), id="base64-pem"),
    ],
)
def test_existing_secret_uses_the_given_ca_bundle(helm: Helm, given: str) -> None:
    tls = {"mode": "existingSecret", "existingSecret": {"name": "mine", "caBundle": given}}
    rendered = helm.template({"tls": tls})
    assert not rendered.of_kind("Secret")
    for api in rendered.of_kind("APIService"):
        assert base64.b64decode(api["spec"]["caBundle"]).decode() == PEM
    volumes = rendered.get("Deployment", ADAPTER)["spec"]["template"]["spec"]["volumes"]
    assert {"name": "serving-cert", "secret": {"secretName": "mine"}} in volumes


# --- pods --------------------------------------------------------------------------------------


@pytest.mark.parametrize("files", VALUE_SETS)
def test_every_container_is_locked_down(helm: Helm, files: tuple[Any, ...]) -> None:
    rendered = helm.template(files=files)
    seen = 0
    for name, pod, c in rendered.containers():
        seen += 1
        sc = c["securityContext"]
        assert sc["runAsNonRoot"] is True, name
        assert sc["readOnlyRootFilesystem"] is True, name
        assert sc["allowPrivilegeEscalation"] is False, name
        assert sc["capabilities"]["drop"] == ["ALL"], name
        assert sc["seccompProfile"]["type"] == "RuntimeDefault", name
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert isinstance(pod["securityContext"]["runAsUser"], int), name
        assert pod["securityContext"]["runAsUser"] != 0, name
        mounts = {m["mountPath"] for m in c["volumeMounts"]}
        assert "/tmp" in mounts, f"{name}: read-only root needs a writable /tmp"
    assert seen >= 1


@pytest.mark.parametrize("files", VALUE_SETS)
def test_first_argument_is_a_console_script_of_the_project(
    helm: Helm, files: tuple[Any, ...]
) -> None:
    rendered = helm.template(files=files)
    for name, _, c in rendered.containers():
        assert "command" not in c, f"{name}: the image has no entrypoint; args pick the program"
        assert c["args"][0] in CONSOLE_SCRIPTS, name


def test_adapter_args_match_prometheus_adapter_and_the_mounts(helm: Helm) -> None:
    rendered = helm.template()
    c = container(rendered, ADAPTER)
    args = c["args"]
    assert args[0] == "promscaler-adapter"
    flags = dict(a.split("=", 1) for a in args[1:])
    assert flags["--config"] == "/etc/adapter/config.yaml"
    assert flags["--prometheus-url"] == "http://prometheus-operated.monitoring.svc:9090"
    assert flags["--metrics-relist-interval"] == "1m"
    assert flags["--prometheus-warnings"] == "reject"  # a partial answer is a failed metric
    assert flags["--secure-port"] == "6443"
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert flags["--tls-cert-file"] == f"{mounts['serving-cert']}/tls.crt"
    assert flags["--tls-private-key-file"] == f"{mounts['serving-cert']}/tls.key"
    assert mounts["config"] == "/etc/adapter"
    assert rule_file(rendered)["rules"], "the default rules must not be empty"
    assert c["ports"] == [{"name": "https", "containerPort": 6443, "protocol": "TCP"}]
    assert c["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "https", "scheme": "HTTPS"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "https", "scheme": "HTTPS"}
    service = rendered.get("Service", ADAPTER)
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}
    ]


@pytest.mark.parametrize("files", VALUE_SETS)
def test_the_programs_accept_the_rendered_command_lines(helm: Helm, files: tuple[Any, ...]) -> None:
    # the real parsers: argparse exits 2 on a flag or a value the program does not accept
    from adapter.cli import parse_args
    from autoscaler.run_cli import build_parser, settings_from

    programs = {
        name.rsplit("-", 1)[-1]: c for name, _, c in helm.template(files=files).containers()
    }
    options = parse_args(programs["adapter"]["args"][1:])
    assert options.config == "/etc/adapter/config.yaml"
    if "autoscaler" in programs:  # only-external runs no controller
        args = programs["autoscaler"]["args"]
        assert args[1] == "run"
        settings_from(build_parser().parse_args(args[2:]))


def test_extra_args_come_last_and_verbatim(helm: Helm) -> None:
    extra = ["--prometheus-header=X-Scope-OrgID=a b", "--metrics-max-age=5m"]
    rendered = helm.template({"adapter": {"extraArgs": extra}, "autoscaler": {"extraArgs": extra}})
    assert container(rendered, ADAPTER)["args"][-2:] == extra
    assert container(rendered, AUTOSCALER)["args"][-2:] == extra


def test_autoscaler_runs_with_leader_election(helm: Helm) -> None:
    rendered = helm.template({"autoscaler": {"namespaces": ["a", "b"], "workers": 4}})
    dep = rendered.get("Deployment", AUTOSCALER)
    assert dep["spec"]["replicas"] == 2
    c = container(rendered, AUTOSCALER)
    assert c["args"][:3] == ["promscaler-autoscaler", "run", "--leader-elect"]
    # the Lease must be where the chart's Role allows it
    assert f"--leader-elect-resource-namespace={NAMESPACE}" in c["args"]
    lease_role = rendered.get("Role", f"{AUTOSCALER}-leader-election")
    assert lease_role["metadata"]["namespace"] == NAMESPACE
    assert "--namespace=a" in c["args"]
    assert "--namespace=b" in c["args"]
    assert "--workers=4" in c["args"]
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}


def test_shared_pod_reads_are_off_unless_asked_for(helm: Helm) -> None:
    off = container(helm.template({}), AUTOSCALER)["args"]
    assert not [a for a in off if a.startswith("--share-pod-metrics")]
    on = container(helm.template({"autoscaler": {"sharePodMetrics": "5s"}}), AUTOSCALER)
    assert "--share-pod-metrics=5s" in on["args"]


@pytest.mark.parametrize("window", ["5 seconds", "5", "-5s", "5us"])
def test_the_schema_refuses_a_share_window_the_controller_cannot_read(
    helm: Helm, window: str
) -> None:
    with pytest.raises(RenderError):
        helm.template({"autoscaler": {"sharePodMetrics": window}})


def test_sharded_autoscaler_shares_leases_and_survives_a_drain(helm: Helm) -> None:
    rendered = helm.template({"autoscaler": {"replicas": 3, "shards": 8, "leaderElect": False}})
    dep = rendered.get("Deployment", AUTOSCALER)
    assert dep["spec"]["replicas"] == 3
    args = container(rendered, AUTOSCALER)["args"]
    assert "--shards=8" in args
    assert "--leader-elect" not in args  # the shard Leases replace the one leader
    assert f"--leader-elect-resource-namespace={NAMESPACE}" in args
    assert f"--leader-elect-resource-name={AUTOSCALER}" in args
    lease = rendered.get("Role", f"{AUTOSCALER}-leader-election")
    assert {"list", "create", "update", "delete"} <= set(lease["rules"][0]["verbs"])
    pdb = rendered.get("PodDisruptionBudget", AUTOSCALER)
    assert pdb["spec"]["maxUnavailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    (term,) = dep["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"


def test_one_autoscaler_replica_has_no_pdb_and_one_shard_means_a_leader(helm: Helm) -> None:
    rendered = helm.template({"autoscaler": {"replicas": 1}})
    pdbs = [p["metadata"]["name"] for p in rendered.of_kind("PodDisruptionBudget")]
    assert AUTOSCALER not in pdbs  # a PDB over one pod would block every drain
    args = container(helm.template(), AUTOSCALER)["args"]
    assert "--leader-elect" in args
    assert not [a for a in args if a.startswith("--shards")]


def test_adapter_is_highly_available(helm: Helm) -> None:
    rendered = helm.template()
    dep = rendered.get("Deployment", ADAPTER)
    assert dep["spec"]["replicas"] == 2
    pdb = rendered.get("PodDisruptionBudget", ADAPTER)
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    (term,) = dep["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert (
        term["podAffinityTerm"]["labelSelector"]["matchLabels"]
        == dep["spec"]["selector"]["matchLabels"]
    )


# --- rules --------------------------------------------------------------------------------------

EXTERNAL_RULE = {
    "seriesQuery": 'queue_depth{queue!=""}',
    "resources": {"namespaced": False},
    "metricsQuery": "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
}


def test_rules_from_values_become_the_rule_file(helm: Helm) -> None:
    resource = {"cpu": {"containerQuery": "x", "nodeQuery": "y", "containerLabel": "container"}}
    rendered = helm.template(
        {"rules": {"custom": [], "external": [EXTERNAL_RULE], "resource": resource}}
    )
    assert rule_file(rendered) == {
        "rules": [],
        "externalRules": [EXTERNAL_RULE],
        "resourceRules": resource,
    }


def test_raw_rule_config_is_used_verbatim(helm: Helm) -> None:
    raw = (
        "# kept as written\nexternalRules:\n"
        "- seriesQuery: 'q{a!=\"\"}'\n  metricsQuery: 'sum(<<.Series>>)'\n"
    )
    rendered = helm.template({"rules": {"config": raw, "external": [EXTERNAL_RULE]}})
    assert rendered.get("ConfigMap", ADAPTER)["data"]["config.yaml"] == raw


@pytest.mark.parametrize("files", VALUE_SETS)
def test_every_rule_file_loads_in_the_adapter(helm: Helm, files: tuple[Any, ...]) -> None:
    from adapter.rules.config import load_rules

    text = helm.template(files=files).component("ConfigMap", "adapter")["data"]["config.yaml"]
    config = load_rules(text, source="chart")
    assert config.rules or config.external_rules


def test_backends_from_values_reach_the_rule_file_and_their_secrets_the_pod(helm: Helm) -> None:
    from adapter.rules.config import load_rules

    thanos = {
        "url": "http://thanos-query.monitoring.svc:9090",
        "headers": {"X-Scope-OrgID": "team-a"},
        "bearerTokenFile": "/var/run/thanos/token",
        "queryParameters": {"dedup": "true"},
    }
    volume = {"name": "thanos", "secret": {"secretName": "thanos-token"}}
    mount = {"name": "thanos", "mountPath": "/var/run/thanos", "readOnly": True}
    rendered = helm.template(
        {
            "rules": {
                "backends": {"thanos": thanos},
                "external": [{**EXTERNAL_RULE, "backend": "thanos"}],
            },
            "adapter": {"extraVolumes": [volume], "extraVolumeMounts": [mount]},
        }
    )
    config = load_rules(rule_file_text(rendered), source="chart")
    assert config.backends["thanos"].bearer_token_file == "/var/run/thanos/token"
    assert [r.backend for r in config.external_rules] == ["thanos"]
    pod = rendered.get("Deployment", ADAPTER)["spec"]["template"]["spec"]
    assert volume in pod["volumes"]
    assert mount in container(rendered, ADAPTER)["volumeMounts"]


@pytest.mark.parametrize(
    "backends",
    [
        pytest.param({"default": {"url": "http://x"}}, id="reserved-name"),
        pytest.param({"thanos": {"headers": {}}}, id="no-url"),
        pytest.param({"thanos": {"url": "http://x", "proxyUrl": "http://p"}}, id="unknown-key"),
    ],
)
def test_the_schema_refuses_bad_backends(helm: Helm, backends: dict[str, Any]) -> None:
    with pytest.raises(RenderError):
        helm.template({"rules": {"backends": backends}})


def test_checksum_rolls_the_adapter_only_when_the_rules_change(helm: Helm) -> None:
    base = helm.template({"adapter": {"replicas": 2}})
    # a fresh render regenerates the certificates, yet the checksum covers the rules only
    same_rules = helm.template({"adapter": {"replicas": 3}})
    other_rules = helm.template({"rules": {"external": [EXTERNAL_RULE]}})
    assert checksum(base) == checksum(same_rules)
    assert checksum(base) != checksum(other_rules)
    assert len(checksum(base)) == 64


# --- RBAC --------------------------------------------------------------------------------------


def subjects(binding: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(s["kind"], s.get("namespace", ""), s["name"]) for s in binding["subjects"]}


def test_rbac_for_delegated_auth_and_metrics_readers(helm: Helm) -> None:
    rendered = helm.template()
    adapter_sa = ("ServiceAccount", NAMESPACE, ADAPTER)
    delegator = rendered.get("ClusterRoleBinding", "promscaler-adapter:system:auth-delegator")
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert subjects(delegator) == {adapter_sa}
    reader = rendered.get("RoleBinding", "promscaler-adapter-auth-reader")
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "extension-apiserver-authentication-reader",
    }
    role = rendered.get("ClusterRole", "promscaler-metrics-reader")
    assert role["rules"][0]["apiGroups"] == ["custom.metrics.k8s.io", "external.metrics.k8s.io"]
    assert set(role["rules"][0]["verbs"]) == {"get", "list"}
    binding = rendered.get("ClusterRoleBinding", "promscaler-metrics-reader")
    assert subjects(binding) == {
        ("ServiceAccount", "kube-system", "horizontal-pod-autoscaler"),
        ("ServiceAccount", NAMESPACE, AUTOSCALER),
    }
    lookups = rendered.get("ClusterRole", "promscaler-adapter-object-reader")
    core = next(r for r in lookups["rules"] if r["apiGroups"] == [""])
    assert {"namespaces", "pods", "services"} <= set(core["resources"])
    assert all(r["verbs"] == ["get", "list", "watch"] for r in lookups["rules"])


def test_autoscaler_rbac_covers_what_the_controller_does(helm: Helm) -> None:
    rendered = helm.template()
    rules = rendered.get("ClusterRole", AUTOSCALER)["rules"]

    def allowed(group: str, resource: str, verb: str) -> bool:
        return any(
            (group in r["apiGroups"] or "*" in r["apiGroups"])
            and resource in r["resources"]
            and verb in r["verbs"]
            for r in rules
        )

    assert allowed("promscaler.dev", "autoscalers", "watch")
    assert allowed("promscaler.dev", "autoscalers/status", "patch")
    assert allowed("apps", "*/scale", "update")
    assert allowed("", "pods", "list")
    assert allowed("", "events", "create")
    assert allowed("metrics.k8s.io", "*", "get")
    assert allowed("external.metrics.k8s.io", "*", "list")
    assert allowed("history.promscaler.dev", "*", "list")  # spec.predictive's history
    assert not allowed("", "secrets", "get")
    lease = rendered.get("Role", f"{AUTOSCALER}-leader-election")
    assert lease["rules"][0]["apiGroups"] == ["coordination.k8s.io"]
    assert subjects(rendered.get("RoleBinding", f"{AUTOSCALER}-leader-election")) == {
        ("ServiceAccount", NAMESPACE, AUTOSCALER)
    }


def test_extra_target_resources_may_be_listed_and_watched(helm: Helm) -> None:
    extra = [{"apiGroups": ["example.com"], "resources": ["workers", "batches"]}]
    rules = helm.template({"autoscaler": {"extraTargetResources": extra}}).get(
        "ClusterRole", AUTOSCALER
    )["rules"]
    granted = [r for r in rules if r["apiGroups"] == ["example.com"]]
    assert granted == [{**extra[0], "verbs": ["list", "watch"]}]
    plain = helm.template().get("ClusterRole", AUTOSCALER)["rules"]
    assert not [r for r in plain if r["apiGroups"] == ["example.com"]]


def test_service_monitors_scrape_both_programs(helm: Helm) -> None:
    rendered = helm.template({"serviceMonitor": {"enabled": True, "labels": {"release": "kps"}}})
    adapter = rendered.get("ServiceMonitor", ADAPTER)
    (endpoint,) = adapter["spec"]["endpoints"]
    assert endpoint["scheme"] == "https"
    assert endpoint["tlsConfig"]["ca"]["secret"] == {"name": f"{ADAPTER}-tls", "key": "ca.crt"}
    assert "insecureSkipVerify" not in endpoint["tlsConfig"]
    controller = rendered.get("ServiceMonitor", AUTOSCALER)
    service = rendered.get("Service", f"{AUTOSCALER}-metrics")
    labels = service["metadata"]["labels"]
    assert controller["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert controller["metadata"]["labels"]["release"] == "kps"
    assert not helm.template().of_kind("ServiceMonitor")


# --- bad values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param({"adapter": {"replica": 3}}, "replica", id="unknown-key"),
        pytest.param({"tls": {"mode": "selfSigned"}}, "tls.mode", id="unknown-tls-mode"),
        pytest.param(
            {"tls": {"mode": "existingSecret", "existingSecret": {"name": "x"}}},
            "tls.existingSecret.caBundle",
            id="existing-secret-without-ca",
        ),
        pytest.param(
            {"prometheus": {"url": "prometheus:9090"}}, "prometheus.url", id="url-without-scheme"
        ),
        pytest.param(
            {"adapter": {"metricsRelistInterval": "ten"}},
            "metricsRelistInterval",
            id="bad-duration",
        ),
        pytest.param(
            {"autoscaler": {"leaderElect": False}},
            "leaderElect",
            id="two-controllers-without-election",
        ),
        pytest.param({"autoscaler": {"shards": 0}}, "shards", id="zero-shards"),
        pytest.param(
            {"autoscaler": {"podDisruptionBudget": {"minAvailable": 1}}},
            "minAvailable",
            id="pdb-takes-max-unavailable",
        ),
        pytest.param(
            {
                "rules": {
                    "external": [{"seriesQuery": "x", "metricsQuery": "y", "metricQuery": "z"}]
                }
            },
            "metricQuery",
            id="typo-in-a-rule",
        ),
        pytest.param(
            {"apiServices": {"resource": {"enabled": True}}},
            "apiServices.resource.enabled needs resource rules",
            id="resource-api-without-resource-rules",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_field(
    helm: Helm, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(RenderError, match=message):
        helm.template(values)
