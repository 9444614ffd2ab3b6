"""The sandbox's fault plan: parsing, the admin endpoint, and each fault kind on its own."""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path

import aiohttp
import pytest
import yaml

from sandbox.auth import parse_policy
from sandbox.faultplan import ErrorRule, FaultPlan, Latency, Match, PlanError, parse_plan
from tests.sandbox.test_watch import raw_watch
from tests.support.sandbox import SandboxHttp

CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
AUTOSCALERS = "/apis/promscaler.dev/v1alpha1/namespaces/default/autoscalers"
CRD = Path(__file__).parents[2] / "charts/promscaler/crds/autoscalers.promscaler.dev.yaml"


def configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {}}


def deployment(name: str) -> dict[str, object]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }


@pytest.fixture
async def http(sandbox):
    h = SandboxHttp(sandbox)
    yield h
    await h.close()


async def set_plan(http: SandboxHttp, plan: dict[str, object]) -> None:
    status, body = await http.request("PUT", "/sandbox/faults", json=plan)
    assert status == 200, body


# ---- the plan document -------------------------------------------------------------------


def test_a_full_plan_parses():
    plan = parse_plan(
        {
            "seed": 7,
            "latency": [{"distribution": "uniform", "min": 0.1, "seconds": 0.2, "verbs": ["list"]}],
            "errors": [{"code": 429, "rate": 0.5, "resources": ["pods"], "retryAfterSeconds": 2}],
            "watch": {"cutAfterEvents": 3, "goneOnResume": 0.25},
            "refuseSeconds": 4,
        }
    )
    assert plan.seed == 7
    assert plan.latency == (Latency(Match(("list",), ()), "uniform", 0.2, 0.1, 30.0),)
    assert plan.errors == (ErrorRule(429, 0.5, Match((), ("pods",)), 2),)
    assert (plan.watch.cut_after_events, plan.watch.gone_on_resume) == (3, 0.25)
    assert plan.refuse_seconds == 4
    assert parse_plan({}) == FaultPlan()


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ([], "faults: must be a mapping"),
        ({"bogus": 1}, "faults: unknown field 'bogus'"),
        ({"seed": "x"}, "faults.seed"),
        ({"errors": [{"code": 404}]}, "faults.errors[0].code"),
        ({"errors": [{"code": 503, "rate": 2}]}, "faults.errors[0].rate"),
        ({"errors": [{"code": 503, "verbs": "list"}]}, "faults.errors[0].verbs"),
        ({"latency": [{"distribution": "pareto"}]}, "faults.latency[0].distribution"),
        ({"latency": [{"seconds": -1}]}, "faults.latency[0].seconds"),
        ({"watch": {"goneOnResume": True}}, "faults.watch.goneOnResume"),
        ({"refuseSeconds": 1e6}, "faults.refuseSeconds"),
    ],
    ids=[
        "not-a-mapping",
        "unknown-field",
        "seed-not-int",
        "code-not-offered",
        "rate-above-1",
        "verbs-not-list",
        "unknown-distribution",
        "negative-latency",
        "bool-is-not-a-rate",
        "refuse-too-long",
    ],
)
def test_a_bad_plan_names_the_field(doc, field):
    with pytest.raises(PlanError, match=__import__("re").escape(field)):
        parse_plan(doc)


# ---- the admin endpoint ------------------------------------------------------------------


async def test_only_the_admin_may_read_or_change_the_plan(sandbox_factory):
    policy = parse_policy(
        {
            "users": [{"name": "dev", "token": "dev-token"}],
            "rules": [{"users": ["dev"], "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        }
    )
    sb = await sandbox_factory(policy=policy)
    dev, admin = SandboxHttp(sb, "dev-token"), SandboxHttp(sb)
    try:
        for method in ("GET", "PUT"):
            status, body = await dev.request(method, "/sandbox/faults", json={"seed": 1})
            assert (status, body["reason"]) == (403, "Forbidden")
        assert (await dev.request("GET", CMS))[0] == 200  # dev may do everything else
        status, body = await admin.request("PUT", "/sandbox/faults", json={"seed": 3})
        assert (status, body["plan"]["seed"]) == (200, 3)
        status, body = await admin.request("GET", "/sandbox/faults")
        assert (status, body["plan"]["seed"]) == (200, 3)
    finally:
        await dev.close()
        await admin.close()


async def test_a_bad_plan_is_a_400_naming_the_field_and_the_old_plan_stays(http):
    await set_plan(http, {"seed": 5})
    status, body = await http.request("PUT", "/sandbox/faults", json={"errors": [{"code": 1}]})
    assert (status, body["reason"]) == (400, "BadRequest")
    assert "faults.errors[0].code" in body["message"]
    assert (await http.request("GET", "/sandbox/faults"))[1]["plan"]["seed"] == 5


# ---- each fault kind ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "reason", "retry_after"),
    [(500, "InternalError", None), (503, "ServiceUnavailable", "2"), (429, "TooManyRequests", "2")],
    ids=["500", "503-retry-after", "429-retry-after"],
)
async def test_errors_hit_only_the_verb_and_resource_named(http, code, reason, retry_after):
    rule = {"code": code, "verbs": ["list"], "resources": ["configmaps"], "retryAfterSeconds": 2}
    await set_plan(http, {"errors": [rule]})
    async with http.session.get(
        http.sb.url + CMS, headers={"Authorization": f"Bearer {http.token}"}
    ) as resp:
        body = await resp.json()
        assert (resp.status, body["reason"], body["code"]) == (code, reason, code)
        assert resp.headers.get("Retry-After") == retry_after
    assert (await http.request("GET", "/api/v1/namespaces/default/pods"))[0] == 200
    assert (await http.request("POST", CMS, json=configmap("a")))[0] == 201
    assert (await http.request("GET", f"{CMS}/a"))[0] == 200


async def test_409_on_updates_as_a_conflicting_writer_would_cause(http):
    await http.request("POST", CMS, json=configmap("a"))
    await set_plan(http, {"errors": [{"code": 409, "verbs": ["update", "patch"]}]})
    status, body = await http.request("PUT", f"{CMS}/a", json=configmap("a"))
    assert (status, body["reason"]) == (409, "Conflict")
    assert "the object has been modified" in body["message"]
    await set_plan(http, {})
    assert (await http.request("PUT", f"{CMS}/a", json=configmap("a")))[0] == 200


async def test_a_seeded_error_rate_injects_the_same_faults_again(http):
    async def codes() -> list[int]:
        await set_plan(http, {"seed": 42, "errors": [{"code": 503, "rate": 0.5}]})
        return [(await http.request("GET", CMS))[0] for _ in range(30)]

    first = await codes()
    assert set(first) == {200, 503}
    assert await codes() == first


async def test_latency_is_added_to_the_matching_requests(http):
    await set_plan(http, {"latency": [{"seconds": 0.4, "verbs": ["list"]}]})
    started = time.monotonic()
    await http.request("GET", CMS)
    assert time.monotonic() - started >= 0.4
    _, body = await http.request("GET", "/sandbox/faults")
    assert body["injected"] == {"latency": 1}


async def test_watch_streams_are_cut_after_n_events(http):
    _, listed = await http.request("GET", CMS)
    await set_plan(http, {"watch": {"cutAfterEvents": 2}})
    rv = listed["metadata"]["resourceVersion"]

    async def writes():
        await asyncio.sleep(0.2)
        for i in range(5):
            await http.request("POST", CMS, json=configmap(f"c{i}"))

    task = asyncio.create_task(writes())
    status, events = await raw_watch(http.sb, f"{CMS}?watch=1&resourceVersion={rv}")
    await task
    assert status == 200
    assert [e["object"]["metadata"]["name"] for e in events] == ["c0", "c1"]


async def test_watch_streams_are_cut_after_seconds(http):
    await set_plan(http, {"watch": {"cutAfterSeconds": 0.5}})
    started = time.monotonic()
    status, _ = await raw_watch(http.sb, f"{CMS}?watch=1&timeoutSeconds=30")
    assert status == 200
    assert 0.4 < time.monotonic() - started < 3


async def test_a_resumed_watch_gets_410_gone(http):
    _, listed = await http.request("GET", CMS)
    await set_plan(http, {"watch": {"goneOnResume": 1}})
    rv = listed["metadata"]["resourceVersion"]
    _, events = await raw_watch(http.sb, f"{CMS}?watch=1&resourceVersion={rv}")
    assert [(e["type"], e["object"]["code"]) for e in events] == [("ERROR", 410)]
    _, events = await raw_watch(http.sb, f"{CMS}?watch=1&timeoutSeconds=1")
    assert all(e["type"] != "ERROR" for e in events)  # a fresh watch is not a resume


async def test_connections_are_refused_for_a_period_then_served(http):
    await set_plan(http, {"refuseSeconds": 1.0})
    await asyncio.sleep(0.2)
    ctx = ssl.create_default_context(cafile=str(http.sb.ca_file))
    async with aiohttp.ClientSession() as fresh:
        with pytest.raises(aiohttp.ClientConnectionError):
            await fresh.get(http.sb.url + "/healthz", ssl=ctx)
        await asyncio.sleep(1.2)
        async with fresh.get(http.sb.url + "/healthz", ssl=ctx) as resp:
            assert resp.status == 200
    _, body = await http.request("GET", "/sandbox/faults")
    assert body["plan"]["refuse_seconds"] == 1.0


async def test_stats_count_requests_and_audit_scale_writes(http):
    assert (await http.request("POST", DEPLOYMENTS, json=deployment("web")))[0] == 201
    for _ in range(3):
        await http.request("GET", DEPLOYMENTS)
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}}
    scale["spec"] = {"replicas": 2}
    assert (await http.request("PUT", f"{DEPLOYMENTS}/web/scale", json=scale))[0] == 200
    _, stats = await http.request("GET", "/sandbox/stats")
    counts = {(r["verb"], r["resource"]): r["count"] for r in stats["requests"]}
    assert counts[("list", "deployments")] == 3
    (write,) = stats["scaleWrites"]
    assert (write["user"], write["name"], write["verb"]) == ("sandbox-admin", "web", "update")
    _, later = await http.request("GET", f"/sandbox/stats?since={stats['next']}")
    assert later["scaleWrites"] == []


async def test_a_restarted_sandbox_keeps_its_objects_and_cas(sandbox_factory, tmp_path):
    state = tmp_path / "state.json"
    first = await sandbox_factory(state_file=state, admin_token="t", dir=tmp_path / "pki")
    http = SandboxHttp(first)
    await http.request("POST", CMS, json=configmap("kept"))
    crd = yaml.safe_load(CRD.read_text())
    assert (await http.request("POST", CRDS, json=crd))[0] == 201
    autoscaler = {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    }
    for _ in range(50):  # the CRD is served once established
        if (await http.request("POST", AUTOSCALERS, json=autoscaler))[0] == 201:
            break
        await asyncio.sleep(0.1)
    _, listed = await http.request("GET", CMS)
    await http.close()
    port, ca = first.port, first.ca_file.read_bytes()
    await first.stop()
    again = await sandbox_factory(
        state_file=state, admin_token="t", dir=tmp_path / "pki", port=port
    )
    assert again.ca_file.read_bytes() == ca  # old kubeconfigs still trust it
    http = SandboxHttp(again)
    try:
        status, kept = await http.request("GET", f"{CMS}/kept")
        assert status == 200
        assert kept["metadata"]["uid"] == listed["items"][0]["metadata"]["uid"]
        status, restored = await http.request("GET", f"{AUTOSCALERS}/web")
        assert (status, restored["spec"]["maxReplicas"]) == (200, 3)  # the CRD is served again
        rv = listed["metadata"]["resourceVersion"]
        status, created = await http.request("POST", CMS, json=configmap("new"))
        assert int(created["metadata"]["resourceVersion"]) > int(rv)
        old_rv = int(rv) - 1  # from before the restart: the watch cache no longer has it
        _, events = await raw_watch(again, f"{CMS}?watch=1&resourceVersion={old_rv}")
        assert events[0]["type"] == "ERROR"
    finally:
        await http.close()


@pytest.mark.parametrize(
    ("config", "state", "message"),
    [
        ("faults: {errors: [{code: 404}]}\n", None, "faults.errors[0].code"),
        ("faults: {}\n", "{not json", "cannot read the state"),
    ],
    ids=["bad-plan", "bad-state-file"],
)
def test_serve_refuses_a_bad_plan_or_state_file_with_exit_2(
    tmp_path, capsys, config, state, message
):
    from sandbox.__main__ import main

    (tmp_path / "c.yaml").write_text(config)
    argv = ["serve", "--kubeconfig", str(tmp_path / "k"), "--config", str(tmp_path / "c.yaml")]
    if state is not None:
        (tmp_path / "s.json").write_text(state)
        argv += ["--state-file", str(tmp_path / "s.json")]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
