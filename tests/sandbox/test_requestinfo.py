"""RequestInfo as kube-apiserver derives it: a list/watch pinned by `metadata.name` has a name."""

import pytest

from sandbox.auth import parse_policy
from sandbox.requestinfo import parse
from tests.support.sandbox import SandboxHttp

CM = "/api/v1/namespaces/kube-system/configmaps"


@pytest.mark.parametrize(
    ("method", "query", "verb", "name"),
    [
        pytest.param("GET", {}, "list", "", id="plain-list"),
        pytest.param("GET", {"fieldSelector": "metadata.name=x"}, "list", "x", id="list-by-name"),
        pytest.param(
            "GET",
            {"fieldSelector": "metadata.name==x", "watch": "true"},
            "watch",
            "x",
            id="watch-by-name",
        ),
        pytest.param("GET", {"fieldSelector": "metadata.name!=x"}, "list", "", id="not-equal"),
        pytest.param(
            "GET", {"fieldSelector": "metadata.namespace=y"}, "list", "", id="other-field"
        ),
        pytest.param("GET", {"fieldSelector": "metadata.name=a/b"}, "list", "", id="not-a-name"),
    ],
)
def test_field_selector_name(method, query, verb, name):
    info = parse(method, CM, query)
    assert (info.verb, info.authorization_name) == (verb, name)
    assert info.name == "", "routing still sees the collection"


async def test_resource_names_rule_allows_a_list_pinned_to_that_name(sandbox_factory):
    policy = parse_policy(
        {
            "users": [{"name": "reader", "token": "reader-token"}],
            "rules": [
                {
                    "users": ["reader"],
                    "verbs": ["get", "list", "watch"],
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "namespaces": ["kube-system"],
                    "resourceNames": ["extension-apiserver-authentication"],
                }
            ],
        }
    )
    sb = await sandbox_factory(policy=policy)
    http = SandboxHttp(sb, token="reader-token")
    try:
        pinned, body = await http.request(
            "GET", f"{CM}?fieldSelector=metadata.name%3Dextension-apiserver-authentication"
        )
        unpinned, _ = await http.request("GET", CM)
    finally:
        await http.close()
    assert pinned == 200
    assert body["kind"] == "ConfigMapList"
    assert [o["metadata"]["name"] for o in body["items"]] == ["extension-apiserver-authentication"]
    assert unpinned == 403
