"""`backends:` and `backend:` in the rule file: the model, located errors, no secret in a message,
and which rules a reload may carry over without re-discovery."""

from __future__ import annotations

import pytest

from adapter.rules import RuleError, carry_over, index_series, load_rules
from adapter.rules.resources import STATIC_RESOLVER

RULE = "{seriesQuery: 'up{pod!=\"\"}', metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'"
SECRET = "s3cr3t-value"


def _file(backends: str, *rule_extras: str) -> str:
    rules = "".join(f"\n- {RULE}{extra}}}" for extra in rule_extras) or " []"
    return f"backends:\n{backends}\nrules:{rules}\n"


THANOS = "  thanos: {url: 'http://thanos:9090'}"


def test_a_full_backend_entry_is_read_into_the_model():
    text = _file(
        "  thanos:\n"
        "    url: https://thanos.monitoring.svc:9090/prefix/\n"
        "    headers: {X-Scope-OrgID: team-a, X-Other: 7}\n"
        "    basicAuth: {username: adapter, password: " + SECRET + "}\n"
        "    tls: {caFile: /ca.pem, certFile: /c.pem, keyFile: /k.pem, insecureSkipVerify: true}\n"
        "    timeout: 1m30s\n"
        "    queryParameters: {dedup: true, partial_response: 'false'}\n"
        "    warnings: accept\n",
        ", backend: thanos",
        "",
    )
    config = load_rules(text)
    thanos = config.backends["thanos"]
    assert thanos.url == "https://thanos.monitoring.svc:9090/prefix"
    assert thanos.headers == (("X-Other", "7"), ("X-Scope-OrgID", "team-a"))
    assert thanos.basic_auth is not None
    assert thanos.basic_auth.password == SECRET
    assert thanos.tls.insecure_skip_verify
    assert thanos.tls.ca_file == "/ca.pem"
    assert thanos.timeout == 90.0
    assert thanos.query_parameters == (("dedup", "true"), ("partial_response", "false"))
    assert thanos.warnings == "accept"
    assert [r.backend for r in config.rules] == ["thanos", "default"]
    # the same seriesQuery on two backends is two discovery calls
    assert [(c.backend, c.series_query) for c in config.series_calls] == [
        ("thanos", 'up{pod!=""}'),
        ("default", 'up{pod!=""}'),
    ]
    assert SECRET not in repr(config.backends)
    assert "team-a" not in repr(thanos)


def test_resource_rules_take_a_backend_for_the_block_or_each_resource():
    text = (
        f"backends:\n{THANOS}\n  mimir: {{url: 'http://mimir'}}\n"
        "resourceRules:\n  backend: thanos\n"
        "  cpu: {containerQuery: a, nodeQuery: b, backend: mimir}\n"
        "  memory: {containerQuery: a, nodeQuery: b}\n"
    )
    resource_rules = load_rules(text).resource_rules
    assert resource_rules is not None
    assert (resource_rules.backend, resource_rules.cpu.backend) == ("thanos", "mimir")
    assert resource_rules.memory.backend == "thanos"


BAD = [
    pytest.param(
        _file(THANOS, ", backend: thanos", ", backend: thanso"),
        "config: rules[1].backend: unknown backend 'thanso' (defined: default, thanos)",
        id="unknown-backend-name",
    ),
    pytest.param(
        "resourceRules: {backend: x, cpu: {containerQuery: a, nodeQuery: b}, "
        "memory: {containerQuery: a, nodeQuery: b}}\n",
        "config: resourceRules.backend: unknown backend 'x' (defined: default)",
        id="resource-rules-unknown-backend",
    ),
    pytest.param(
        _file("  thanos: {headers: {a: b}}"),
        "config: backends.thanos.url: is required and must not be empty",
        id="missing-url",
    ),
    pytest.param(
        _file("  thanos: {url: 'ftp://x'}"),
        "config: backends.thanos.url: must be an http:// or https:// URL with a host",
        id="url-scheme",
    ),
    pytest.param(
        _file(f"  thanos: {{url: 'http://user:{SECRET}@x'}}"),
        "config: backends.thanos.url: must not contain credentials (use basicAuth or "
        "bearerTokenFile)",
        id="url-with-credentials",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x?dedup=true'}"),
        "config: backends.thanos.url: must not have a query or fragment (use queryParameters)",
        id="url-with-query",
    ),
    pytest.param(
        _file("  default: {url: 'http://x'}"),
        "config: backends.default: 'default' is reserved for the --prometheus-* flags",
        id="default-is-reserved",
    ),
    pytest.param(
        _file("  Thanos: {url: 'http://x'}"),
        "config: backends.Thanos: backend name 'Thanos' must be 1-63 lower-case letters, "
        "digits, '-' or '_'",
        id="bad-name",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', timeout: 5 seconds}"),
        "config: backends.thanos.timeout: not a valid duration '5 seconds' (e.g. 30s, 5m, 1h30m)",
        id="bad-timeout",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', timeout: 0s}"),
        "config: backends.thanos.timeout: must be greater than 0, not '0s'",
        id="zero-timeout",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', headers: {'bad header': v}}"),
        "config: backends.thanos.headers.bad header: 'bad header' is not a valid HTTP header name",
        id="bad-header-name",
    ),
    pytest.param(
        _file(f'  thanos: {{url: "http://x", headers: {{X-Token: "{SECRET}\\n"}}}}'),
        "config: backends.thanos.headers.X-Token: the value must not contain control characters",
        id="header-value-control-char",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', queryParameters: {query: up}}"),
        "config: backends.thanos.queryParameters.query: 'query' is set by the adapter itself "
        "and cannot be overridden",
        id="reserved-query-parameter",
    ),
    pytest.param(
        _file(
            f"  thanos: {{url: 'http://x', bearerTokenFile: /t, basicAuth: {{username: u, "
            f"password: {SECRET}}}}}"
        ),
        "config: backends.thanos: bearerTokenFile and basicAuth cannot be used together",
        id="two-credentials",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', basicAuth: {username: u}}"),
        "config: backends.thanos.basicAuth: needs exactly one of password and passwordFile",
        id="basic-auth-without-password",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', tls: {certFile: /c}}"),
        "config: backends.thanos.tls: certFile and keyFile go together",
        id="cert-without-key",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', tls: {insecureSkipVerify: maybe}}"),
        "config: backends.thanos.tls.insecureSkipVerify: must be true or false, not a string",
        id="bad-boolean",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', proxyUrl: 'http://p'}"),
        "config: backends.thanos.proxyUrl: unknown key 'proxyUrl' (allowed: basicAuth, "
        "bearerTokenFile, compression, headers, queryParameters, timeout, tls, url, warnings)",
        id="unknown-key",
    ),
    pytest.param(
        _file("  thanos: {url: 'http://x', warnings: ignore}"),
        "config: backends.thanos.warnings: must be one of reject, accept, not 'ignore'",
        id="bad-warnings-policy",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_backend_settings_are_located_errors_without_secrets(text, message):
    with pytest.raises(RuleError) as caught:
        load_rules(text)
    assert str(caught.value) == message
    assert SECRET not in str(caught.value)


def _series(name):
    return [{"__name__": name, "namespace": "n", "pod": "p"}]


def _part(config, backend="default"):
    return index_series(
        config, 'up{pod!=""}', _series("up"), resolver=STATIC_RESOLVER, backend=backend
    )


OVERRIDES = ", resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}"


@pytest.mark.parametrize(
    ("before", "after", "reused"),
    [
        pytest.param(_file(THANOS, OVERRIDES), _file(THANOS, OVERRIDES), True, id="unchanged"),
        pytest.param(
            _file(THANOS, OVERRIDES),
            _file(THANOS, OVERRIDES + ", name: {as: other}"),
            False,
            id="rule-text-changed",
        ),
        pytest.param(
            _file(THANOS, OVERRIDES + ", backend: thanos"),
            _file("  thanos: {url: 'http://elsewhere'}", OVERRIDES + ", backend: thanos"),
            False,
            id="backend-settings-changed",
        ),
    ],
)
def test_a_reload_carries_over_only_unchanged_calls(before, after, reused):
    old, new = load_rules(before), load_rules(after)
    backend = old.rules[0].backend
    part = _part(old, backend)
    moved = carry_over(part, old=old, new=new)
    assert (moved is not None) == reused
    if moved is not None:
        ((_, source),) = {k: v for k, v in moved.custom.items() if k[0].resource == "pods"}.values()
        assert source.rule is new.rules[0]  # re-pointed at the reloaded rule
