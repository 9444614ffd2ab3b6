"""Answers with `warnings` (adapter.partial): refused or served by policy, always counted,
logged at most once a minute per rule without credentials; Prometheus 3 `infos` never refused;
the backend's `warnings:` and the flag. The real Prometheus behind the fault proxy is in
test_prometheus_faults.py."""

from __future__ import annotations

import logging

import pytest
from prometheus_client import CollectorRegistry

from adapter.backends import backend_options
from adapter.cli import parse_args
from adapter.errors import PrometheusUnavailable
from adapter.partial import QUOTE_LIMIT, WarningsPolicy, answer_warnings, quote
from adapter.prometheus import PrometheusMetrics, PrometheusOptions
from adapter.rules import load_rules

STORE_DOWN = "receive series from Addr: 10.0.3.7:10901: rpc error: code = Unavailable"
DATA = {"resultType": "vector", "result": []}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def policy(name: str, clock: Clock | None = None) -> tuple[WarningsPolicy, CollectorRegistry]:
    registry = CollectorRegistry()
    m = PrometheusMetrics(registry)
    made = WarningsPolicy(
        backend="thanos", policy=name, warnings=m.warnings, errors=m.errors, clock=clock or Clock()
    )
    return made, registry


def counted(registry: CollectorRegistry) -> tuple[float, float]:
    labels = {"backend": "thanos", "endpoint": "query"}
    warned = registry.get_sample_value("promscaler_adapter_prometheus_warnings_total", labels)
    failed = registry.get_sample_value(
        "promscaler_adapter_prometheus_errors_total", {**labels, "kind": "partial"}
    )
    return warned or 0.0, failed or 0.0


@pytest.mark.parametrize(
    ("name", "extra", "refused", "want_counts"),
    [
        ("reject", {}, False, (0, 0)),
        ("reject", {"warnings": []}, False, (0, 0)),
        ("reject", {"infos": ["PromQL info: metric might not be a counter"]}, False, (0, 0)),
        ("reject", {"warnings": [STORE_DOWN]}, True, (1, 1)),
        ("reject", {"warnings": [STORE_DOWN], "infos": ["PromQL info: x"]}, True, (1, 1)),
        ("reject", {"warnings": "one bare string"}, True, (1, 1)),
        ("accept", {"warnings": [STORE_DOWN]}, False, (1, 0)),
        ("accept", {"infos": ["PromQL info: x"]}, False, (0, 0)),
    ],
    ids=["healthy", "empty-list", "infos-only", "store-down", "warnings-and-infos",
         "malformed-field", "accepted", "accepted-infos"],
)  # fmt: skip
def test_an_answer_is_refused_by_its_warnings_never_by_its_infos(name, extra, refused, want_counts):
    checker, registry = policy(name)
    doc = {"status": "success", "data": DATA, **extra}
    if refused:
        with pytest.raises(PrometheusUnavailable) as caught:
            checker.check("query", doc, rule="config: rules[0]")
        assert caught.value.code == 503
        assert caught.value.message.startswith(
            "unable to fetch metrics: the metrics backend's answer was partial: "
        )
    else:
        checker.check("query", doc, rule="config: rules[0]")
    assert counted(registry) == want_counts


@pytest.mark.parametrize(
    ("warnings", "want"),
    [
        ((STORE_DOWN,), repr(STORE_DOWN)),
        (("a", "b", "c"), "'a' (and 2 more)"),
        (("line one\n\tline two",), "'line one line two'"),
        (("remote read https://adapter:hunter2@thanos:9090/api failed",),
         "'remote read https://***@thanos:9090/api failed'"),
    ],
    ids=["one", "more", "whitespace-collapsed", "url-credentials-masked"],
)  # fmt: skip
def test_the_quote_of_a_warning(warnings, want):
    assert quote(warnings) == want


def test_a_long_warning_is_trimmed():
    text = quote(("x" * 5000,))
    assert len(text) == QUOTE_LIMIT + 2  # the quotes of the repr
    assert text.endswith("...'")


def test_answer_warnings_reads_only_the_warnings():
    assert answer_warnings({"infos": ["i"]}) == ()
    assert answer_warnings({"warnings": ["a", 7]}) == ("a", "7")


def test_the_log_says_which_rule_at_most_once_a_minute(caplog):
    clock = Clock()
    checker, _ = policy("accept", clock)
    doc = {"status": "success", "data": DATA, "warnings": [STORE_DOWN]}
    with caplog.at_level(logging.WARNING, logger="adapter.partial"):
        for step in (0, 10, 20, 61, 62):
            clock.now = 1000.0 + step
            checker.check("query", doc, rule="config: externalRules[2]")
        checker.check("query", doc, rule="config: rules[5]")  # another rule: its own line
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"prometheus thanos query for config: externalRules[2]: answer with warnings served: "
        f"{STORE_DOWN!r}",
        f"prometheus thanos query for config: externalRules[2]: answer with warnings served: "
        f"{STORE_DOWN!r}; 2 more since the last line",
        f"prometheus thanos query for config: rules[5]: answer with warnings served: "
        f"{STORE_DOWN!r}",
    ]


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="warnings: must be one of reject, accept"):
        policy("ignore")


def _backends(extra: str) -> str:
    return f"backends:\n  thanos: {{url: 'https://thanos:9090'{extra}}}\nrules: []\n"


def test_a_backend_sets_its_own_policy_else_the_flags():
    defaults = PrometheusOptions(url="http://127.0.0.1:9090", warnings="accept")
    own = load_rules(_backends(", warnings: reject")).backends["thanos"]
    inherited = load_rules(_backends("")).backends["thanos"]
    assert backend_options(own, defaults=defaults).warnings == "reject"
    assert backend_options(inherited, defaults=defaults).warnings == "accept"


@pytest.mark.parametrize(
    ("argv", "want"),
    [([], "reject"), (["--prometheus-warnings=accept"], "accept")],
    ids=["default-reject", "accept"],
)
def test_the_flag(argv, want):
    assert parse_args(["--config=rules.yaml", *argv]).prometheus.warnings == want


def test_the_flag_refuses_an_unknown_policy(capsys):
    with pytest.raises(SystemExit) as caught:
        parse_args(["--config=rules.yaml", "--prometheus-warnings=ignore"])
    assert caught.value.code == 2
    assert "--prometheus-warnings: invalid choice: 'ignore'" in capsys.readouterr().err
