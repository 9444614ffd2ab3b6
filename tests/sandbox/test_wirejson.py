"""sandbox.wirejson: the sandbox writes JSON as kube-apiserver does (Go's encoding/json):
compact, UTF-8, `<`, `>`, `&`, U+2028 and U+2029 escaped; the same values either way."""

from __future__ import annotations

import json
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from sandbox import wirejson

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_the_same_values_come_back_and_the_escaped_bytes_never_appear_raw(value):
    data = wirejson.dumps(value)
    assert json.loads(data) == value
    for raw in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()):
        assert raw not in data


def test_as_go_writes_it():
    doc = {"a": "<b>&\u00e9\u2028\u2029\U0001f600", "n": [1, 2.5, None, True]}
    assert (
        wirejson.dumps(doc)
        == (
            '{"a":"\\u003cb\\u003e\\u0026\u00e9\\u2028\\u2029\U0001f600","n":[1,2.5,null,true]}'
        ).encode()
    )
    # beyond 64 bits: orjson refuses, the standard library writes it
    assert wirejson.dumps({"big": 2**70}) == b'{"big":1180591620717411303424}'


def test_an_encoding_holds_no_more_than_its_own_size():
    # the store keeps every stored object's encoding: orjson's 4 KB buffer behind each of
    # 10,000 Autoscalers would be 40 MB
    obj = {"metadata": {"name": "a" * 30}, "spec": {"n": list(range(50))}}
    tracemalloc.start()
    try:
        kept = [wirejson.dumps(obj) for _ in range(1000)]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held / len(kept) < 2 * len(kept[0]) + 200


async def test_the_api_server_writes_objects_and_lists_that_way(sandbox_http):
    cm = {"metadata": {"name": "c"}, "data": {"url": "https://x/?a=1&b=<2>", "name": "caf\u00e9"}}
    status, _ = await sandbox_http.request("POST", "/api/v1/namespaces/default/configmaps", json=cm)
    assert status == 201
    headers = {"Authorization": f"Bearer {sandbox_http.token}"}
    for path in ("configmaps/c", "configmaps"):
        url = f"{sandbox_http.sb.url}/api/v1/namespaces/default/{path}"
        async with sandbox_http.session.get(url, headers=headers) as resp:
            body = await resp.read()
        assert b'"https://x/?a=1\\u0026b=\\u003c2\\u003e"' in body
        assert '"caf\u00e9"'.encode() in body
