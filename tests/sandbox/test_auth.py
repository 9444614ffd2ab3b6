"""Authentication and authorization from the policy; TokenReview and SubjectAccessReview."""

import ssl

import aiohttp
import pytest
from kubernetes_asyncio import client

from sandbox.auth import Attributes, PolicyError, User, parse_policy
from tests.support.sandbox import SandboxHttp

POLICY = {
    "users": [
        {
            "name": "alice",
            "token": "alice-token",
            "groups": ["devs"],
            "extra": {"scopes": ["a", "b"]},
        },
        {"name": "bob", "token": "bob-token"},
    ],
    "rules": [
        {
            "groups": ["devs"],
            "verbs": ["get", "list", "watch"],
            "apiGroups": [""],
            "resources": ["pods"],
            "namespaces": ["default"],
        },
        {
            "users": ["alice"],
            "verbs": ["get", "patch"],
            "apiGroups": ["apps"],
            "resources": ["deployments/scale"],
        },
        {
            "users": ["alice"],
            "verbs": ["get"],
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["public"],
        },
        {
            "groups": ["system:authenticated"],
            "verbs": ["get"],
            "nonResourceURLs": ["/version", "/apis", "/apis/*"],
        },
        {
            "users": ["bob"],
            "verbs": ["create"],
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["tokenreviews"],
        },
    ],
}


def attrs(user, verb, resource="", *, group="", sub="", ns="", name="", path=""):
    return Attributes(user, verb, not path, group, resource, sub, ns, name, path)


ALICE = User("alice", ("devs", "system:authenticated"))
BOB = User("bob", ("system:authenticated",))


@pytest.mark.parametrize(
    ("a", "allowed"),
    [
        pytest.param(attrs(ALICE, "list", "pods", ns="default"), True, id="group-rule"),
        pytest.param(attrs(ALICE, "list", "pods", ns="kube-system"), False, id="other-namespace"),
        pytest.param(
            attrs(ALICE, "delete", "pods", ns="default", name="p"), False, id="verb-not-granted"
        ),
        pytest.param(
            attrs(ALICE, "patch", "deployments", group="apps", sub="scale", ns="x", name="w"),
            True,
            id="subresource",
        ),
        pytest.param(
            attrs(ALICE, "patch", "deployments", group="apps", ns="x", name="w"),
            False,
            id="main-resource-not-subresource",
        ),
        pytest.param(
            attrs(ALICE, "get", "configmaps", ns="x", name="public"), True, id="resource-name"
        ),
        pytest.param(
            attrs(ALICE, "get", "configmaps", ns="x", name="secret"),
            False,
            id="other-resource-name",
        ),
        pytest.param(
            attrs(ALICE, "list", "configmaps", ns="x"), False, id="list-with-resource-names"
        ),
        pytest.param(attrs(BOB, "get", path="/apis/apps/v1"), True, id="non-resource-wildcard"),
        pytest.param(attrs(BOB, "get", path="/metrics"), False, id="non-resource-denied"),
        pytest.param(
            attrs(User("root", ("system:masters",)), "delete", "nodes"), True, id="masters"
        ),
        pytest.param(attrs(BOB, "list", "pods", ns="default"), False, id="nothing-granted"),
    ],
)
def test_policy_rules(a, allowed):
    assert parse_policy(POLICY).authorize(a)[0] is allowed


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        pytest.param({"users": [{"name": "x"}]}, "users[0]", id="user-without-token"),
        pytest.param({"rules": [{"users": ["x"]}]}, "rules[0].verbs", id="rule-without-verbs"),
        pytest.param(
            {"rules": [{"verbs": ["get"], "resource": ["pods"]}]},
            "rules[0]: unknown field 'resource'",
            id="typo",
        ),
        pytest.param({"rules": [{"verbs": "get"}]}, "rules[0].verbs", id="not-a-list"),
        pytest.param({"user": []}, "unknown field 'user'", id="top-level-typo"),
    ],
)
def test_policy_errors_name_the_field(doc, where):
    with pytest.raises(PolicyError, match=where.replace("[", r"\[").replace("]", r"\]")):
        parse_policy(doc)


@pytest.fixture
async def policed(sandbox_factory):
    return await sandbox_factory(policy=parse_policy(POLICY))


@pytest.mark.parametrize(
    ("token", "path", "want"),
    [
        pytest.param("", "/api/v1/namespaces/default/pods", 401, id="no-token"),
        pytest.param("wrong", "/api/v1/namespaces/default/pods", 401, id="bad-token"),
        pytest.param("alice-token", "/api/v1/namespaces/default/pods", 200, id="allowed"),
        pytest.param(
            "alice-token", "/api/v1/namespaces/kube-system/pods", 403, id="forbidden-namespace"
        ),
        pytest.param("bob-token", "/version", 200, id="non-resource"),
        pytest.param("bob-token", "/api/v1/pods", 403, id="forbidden-all-namespaces"),
    ],
)
async def test_requests_are_authenticated_and_authorized(policed, token, path, want):
    http = SandboxHttp(policed, token=token)
    try:
        status, body = await http.request("GET", path)
    finally:
        await http.close()
    assert status == want
    if want == 401:
        assert body["reason"] == "Unauthorized"
    if want == 403:
        assert body["reason"] == "Forbidden"
        assert 'cannot list resource "pods" in API group ""' in body["message"]


async def test_token_review_answers_from_the_policy(policed):
    http = SandboxHttp(policed, token="bob-token")
    try:
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": "alice-token"},
        }
        status, body = await http.request(
            "POST", "/apis/authentication.k8s.io/v1/tokenreviews", json=review
        )
        assert status == 201
        assert body["status"]["authenticated"] is True
        assert body["status"]["user"]["username"] == "alice"
        assert body["status"]["user"]["groups"] == ["devs", "system:authenticated"]
        assert body["status"]["user"]["extra"] == {"scopes": ["a", "b"]}
        review["spec"]["token"] = "nope"
        _, body = await http.request(
            "POST", "/apis/authentication.k8s.io/v1/tokenreviews", json=review
        )
        assert body["status"]["authenticated"] is False
    finally:
        await http.close()


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        pytest.param(
            {
                "user": "alice",
                "groups": ["devs"],
                "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "default"},
            },
            True,
            id="allowed",
        ),
        pytest.param(
            {
                "user": "alice",
                "groups": ["devs"],
                "resourceAttributes": {
                    "verb": "delete",
                    "resource": "pods",
                    "namespace": "default",
                },
            },
            False,
            id="denied",
        ),
        pytest.param(
            {
                "user": "bob",
                "groups": ["system:authenticated"],
                "nonResourceAttributes": {"verb": "get", "path": "/version"},
            },
            True,
            id="non-resource",
        ),
    ],
)
async def test_subject_access_review(policed, spec, allowed):
    from tests.support.sandbox import api_client_for

    async with await api_client_for(policed) as api:
        review = client.V1SubjectAccessReview(spec=spec)
        result = await client.AuthorizationV1Api(api).create_subject_access_review(review)
    assert result.status.allowed is allowed


async def test_client_certificate_authenticates(policed):
    cert, key = policed.issue_client_cert("carol", ["system:masters"])
    ctx = ssl.create_default_context(cafile=str(policed.ca_file))
    ctx.load_cert_chain(cert, key)
    async with aiohttp.ClientSession() as session:
        async with session.get(
            policed.url + "/api/v1/namespaces/kube-system/configmaps", ssl=ctx
        ) as resp:
            assert resp.status == 200
        cert2, key2 = policed.issue_client_cert("dave", [])
        ctx2 = ssl.create_default_context(cafile=str(policed.ca_file))
        ctx2.load_cert_chain(cert2, key2)
        async with session.get(
            policed.url + "/api/v1/namespaces/kube-system/configmaps", ssl=ctx2
        ) as resp:
            body = await resp.json()
            assert resp.status == 403
            assert 'User "dave"' in body["message"]
