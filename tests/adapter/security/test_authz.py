"""The delegating authorizer: SubjectAccessReviews, caching, privileged group."""

from __future__ import annotations

import pytest

from adapter.auth.attributes import request_attributes
from adapter.auth.authz import AlwaysAllowPaths, Authorizer, review_spec
from adapter.errors import KubeUnavailable
from adapter.server.auth_seam import UserInfo
from tests.adapter.security.fakes import FakeCluster
from tests.adapter.security.test_authn import Clock

HPA = UserInfo(name="system:serviceaccount:kube-system:hpa", groups=("system:serviceaccounts",))
PODS = request_attributes("GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/m", {})


def make(cluster, clock, authorized=10.0, unauthorized=5.0):
    return Authorizer(
        reviewer=cluster, authorized_ttl=authorized, unauthorized_ttl=unauthorized, clock=clock
    )


def test_review_spec_carries_the_user_and_the_resource_attributes():
    user = UserInfo(name="u", groups=("g",), extra={"scopes": ("a", "b")}, uid="1")
    assert review_spec(user, PODS) == {
        "user": "u",
        "groups": ["g"],
        "uid": "1",
        "extra": {"scopes": ["a", "b"]},
        "resourceAttributes": {
            "namespace": "ns",
            "verb": "get",
            "group": "custom.metrics.k8s.io",
            "version": "v1beta2",
            "resource": "pods",
            "subresource": "m",
            "name": "*",
        },
    }


async def test_allowed_answers_are_cached_for_the_authorized_ttl():
    cluster, clock = FakeCluster(allow={(HPA.name, "get", "pods")}), Clock()
    authz = make(cluster, clock)
    for _ in range(3):
        assert (await authz.authorize(HPA, PODS)).allowed
    assert len(cluster.access_reviews) == 1
    clock.t = 10.01
    assert (await authz.authorize(HPA, PODS)).allowed
    assert len(cluster.access_reviews) == 2


async def test_denied_answers_are_cached_for_the_unauthorized_ttl():
    cluster, clock = FakeCluster(), Clock()
    authz = make(cluster, clock)
    decision = await authz.authorize(HPA, PODS)
    assert not decision.allowed
    assert decision.reason == "no RBAC rule"
    clock.t = 4.9
    await authz.authorize(HPA, PODS)
    assert len(cluster.access_reviews) == 1
    clock.t = 5.1
    cluster.allow.add((HPA.name, "get", "pods"))
    assert (await authz.authorize(HPA, PODS)).allowed, "a new RBAC rule applies after the TTL"


async def test_errors_are_not_cached():
    cluster, clock = FakeCluster(allow={(HPA.name, "get", "pods")}), Clock()
    cluster.down = True
    authz = make(cluster, clock)
    with pytest.raises(KubeUnavailable):
        await authz.authorize(HPA, PODS)
    cluster.down = False
    assert (await authz.authorize(HPA, PODS)).allowed


async def test_different_users_and_groups_are_different_decisions():
    cluster, clock = FakeCluster(allow={(HPA.name, "get", "pods")}), Clock()
    authz = make(cluster, clock)
    assert (await authz.authorize(HPA, PODS)).allowed
    other = UserInfo(name=HPA.name, groups=("other",))
    await authz.authorize(other, PODS)
    assert len(cluster.access_reviews) == 2


async def test_system_masters_is_allowed_without_asking():
    cluster = FakeCluster()
    authz = make(cluster, Clock())
    admin = UserInfo(name="admin", groups=("system:masters",))
    assert (await authz.authorize(admin, PODS)).allowed
    assert cluster.access_reviews == []


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        pytest.param("/healthz", True, id="exact"),
        pytest.param("/healthz/ping", False, id="exact-is-not-prefix"),
        pytest.param("/debug/pprof/heap", True, id="star-prefix"),
        pytest.param("/metrics", False, id="not-listed"),
    ],
)
def test_always_allow_paths(path, allowed):
    assert AlwaysAllowPaths(["/healthz", "/livez", "/debug/*"]).allows(path) is allowed
