"""Protobuf watch streams, read with a decoder written here from generated.proto's numbers.

A frame is a 4-byte big-endian length and a meta/v1 WatchEvent (1 type, 2 RawExtension {1 raw})
written by upstream's raw stream serializer, so without an envelope of its own; `raw` is the
object as the ordinary serializer writes it: `k8s\\x00` and a runtime.Unknown (1 TypeMeta {1
apiVersion, 2 kind}, 2 raw message, 3 contentEncoding, 4 contentType).
"""

import asyncio
import shutil
import ssl
from datetime import datetime

import aiohttp
import pytest

from tests.sandbox.test_crds import crd, widget

PROTOBUF = "application/vnd.kubernetes.protobuf"
STREAM = "application/vnd.kubernetes.protobuf;stream=watch"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


# ---- a small protobuf reader and writer, independent of the sandbox's ----------------------


def _varint(data, pos):
    value = shift = 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if byte < 0x80:
            return value, pos


def _read(message):
    """Field number -> list of values (bytes for wire type 2, int for 0)."""
    fields, pos = {}, 0
    while pos < len(message):
        key, pos = _varint(message, pos)
        if key & 7 == 0:
            value, pos = _varint(message, pos)
        else:
            assert key & 7 == 2, f"unexpected wire type {key & 7}"
            size, pos = _varint(message, pos)
            value, pos = message[pos : pos + size], pos + size
        fields.setdefault(key >> 3, []).append(value)
    return fields


def _event(frame):
    """(type, apiVersion, kind, the object's message fields) of one WatchEvent frame."""
    event = _read(frame)
    raw = _read(event[2][0])[1][0]
    assert raw[:4] == b"k8s\x00"
    unknown = _read(raw[4:])
    assert unknown[3] == [b""]
    assert unknown[4] == [b""]
    type_meta = _read(unknown[1][0])
    return event[1][0].decode(), type_meta[1][0].decode(), type_meta[2][0].decode(), unknown[2][0]


def _uvarint(value):
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out) + bytes([value])


def _ld(number, payload):
    payload = payload.encode() if isinstance(payload, str) else payload
    return _uvarint(number << 3 | 2) + _uvarint(len(payload)) + payload


# ---- helpers ---------------------------------------------------------------------------------


@pytest.fixture
async def http(sandbox):
    ctx = ssl.create_default_context(cafile=str(sandbox.ca_file))
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(ssl=ctx),
        headers={"Authorization": f"Bearer {sandbox.admin_token}"},
    )
    yield session, sandbox.url
    await session.close()


async def _frames(resp, count):
    frames = []
    for _ in range(count):
        size = int.from_bytes(await asyncio.wait_for(resp.content.readexactly(4), 10), "big")
        frames.append(await asyncio.wait_for(resp.content.readexactly(size), 10))
    return frames


async def _post(http, path, body):
    session, url = http
    async with session.post(url + path, json=body) as resp:
        assert resp.status == 201, await resp.text()
        return await resp.json()


def _watch(http, path, accept, query="watch=1&timeoutSeconds=5"):
    session, url = http
    return session.get(f"{url}{path}?{query}", headers={"Accept": accept})


# ---- tests -----------------------------------------------------------------------------------


async def test_a_frame_is_byte_for_byte_the_one_built_from_generated_proto(http):
    cm = await _post(http, CONFIGMAPS, {"metadata": {"name": "c"}, "data": {"a": "b"}})
    meta = cm["metadata"]
    created = datetime.fromisoformat(meta["creationTimestamp"].replace("Z", "+00:00"))
    # ObjectMeta: 1 name, 3 namespace, 5 uid, 6 resourceVersion, 8 creationTimestamp {1 seconds}
    object_meta = (
        _ld(1, "c")
        + _ld(3, "default")
        + _ld(5, meta["uid"])
        + _ld(6, meta["resourceVersion"])
        + _ld(8, b"\x08" + _uvarint(int(created.timestamp())))
    )
    config_map = _ld(1, object_meta) + _ld(2, _ld(1, "a") + _ld(2, "b"))  # 2 data: map entries
    type_meta = _ld(1, "v1") + _ld(2, "ConfigMap")
    raw = b"k8s\x00" + _ld(1, type_meta) + _ld(2, config_map) + _ld(3, b"") + _ld(4, b"")
    event = _ld(1, "ADDED") + _ld(2, _ld(1, raw))
    golden = len(event).to_bytes(4, "big") + event
    async with _watch(http, CONFIGMAPS, STREAM) as resp:
        assert (resp.status, resp.headers["Content-Type"]) == (200, STREAM)
        head = await asyncio.wait_for(resp.content.readexactly(len(golden)), 10)
    assert head == golden


async def test_changes_and_bookmarks_arrive_as_frames(sandbox_factory):
    sb = await sandbox_factory(bookmark_interval=0.2)
    ctx = ssl.create_default_context(cafile=str(sb.ca_file))
    auth = {"Authorization": f"Bearer {sb.admin_token}"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx), headers=auth) as s:
        http = (s, sb.url)
        first = await _post(http, CONFIGMAPS, {"metadata": {"name": "c"}})
        query = f"watch=1&resourceVersion={first['metadata']['resourceVersion']}"
        async with _watch(
            http, CONFIGMAPS, f"{PROTOBUF}, application/json", query + "&allowWatchBookmarks=true"
        ) as resp:
            assert resp.headers["Content-Type"] == STREAM
            await _post(http, CONFIGMAPS, {"metadata": {"name": "d"}, "data": {"k": "v"}})
            patch = {"Content-Type": "application/merge-patch+json"}
            body = b'{"data":{"k":"w"}}'
            async with s.patch(f"{sb.url}{CONFIGMAPS}/d", data=body, headers=patch) as patched:
                assert patched.status == 200
            async with s.delete(f"{sb.url}{CONFIGMAPS}/c") as deleted:
                assert deleted.status == 200
            events = [_event(f) for f in await _frames(resp, 4)]
    assert [(t, v, k) for t, v, k, _ in events] == [
        ("ADDED", "v1", "ConfigMap"),
        ("MODIFIED", "v1", "ConfigMap"),
        ("DELETED", "v1", "ConfigMap"),
        ("BOOKMARK", "v1", "ConfigMap"),
    ]
    added, modified = _read(events[0][3]), _read(events[1][3])
    assert _read(added[1][0])[1] == [b"d"]
    assert _read(added[2][0]) == {1: [b"k"], 2: [b"v"]}
    assert _read(modified[2][0]) == {1: [b"k"], 2: [b"w"]}
    bookmark = _read(events[3][3])
    assert set(bookmark) == {1}  # metadata only
    assert int(_read(bookmark[1][0])[6][0]) >= int(first["metadata"]["resourceVersion"]) + 3


async def test_an_expired_resume_is_an_error_frame_with_a_410_status(sandbox_factory):
    sb = await sandbox_factory(history=2)
    ctx = ssl.create_default_context(cafile=str(sb.ca_file))
    auth = {"Authorization": f"Bearer {sb.admin_token}"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx), headers=auth) as s:
        http = (s, sb.url)
        for name in ("a", "b", "c", "d"):
            await _post(http, CONFIGMAPS, {"metadata": {"name": name}})
        async with _watch(http, CONFIGMAPS, STREAM, "watch=1&resourceVersion=1") as resp:
            (frame,) = await _frames(resp, 1)
    kind, api_version, type_name, message = _event(frame)
    assert (kind, api_version, type_name) == ("ERROR", "v1", "Status")
    status = _read(message)  # Status: 2 status, 3 message, 4 reason, 6 code
    assert (status[2], status[4], status[6]) == ([b"Failure"], [b"Expired"], [410])


async def _install_widgets(http):
    await _post(http, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
    for _ in range(100):  # served as soon as the CRD is stored, established a moment later
        session, url = http
        async with session.get(url + WIDGETS) as resp:
            if resp.status == 200:
                return
        await asyncio.sleep(0.02)


@pytest.mark.parametrize(
    ("path", "accept", "want"),
    [
        pytest.param(CONFIGMAPS, STREAM, (200, STREAM), id="builtin-protobuf-only"),
        pytest.param(
            CONFIGMAPS, f"{PROTOBUF}, application/json", (200, STREAM), id="builtin-pb-first"
        ),
        pytest.param(
            CONFIGMAPS,
            f"application/json, {PROTOBUF}",
            (200, "application/json"),
            id="builtin-json-first",
        ),
        pytest.param(
            CONFIGMAPS,
            f"{PROTOBUF};q=0.5, application/json",
            (200, "application/json"),
            id="builtin-weighted",
        ),
        pytest.param(CONFIGMAPS, "*/*", (200, "application/json"), id="builtin-anything"),
        pytest.param(
            CONFIGMAPS,
            f"{PROTOBUF};stream=other",
            (406, "application/json"),
            id="builtin-other-stream",
        ),
        pytest.param(
            CONFIGMAPS,
            f"{PROTOBUF};as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io",
            (200, "application/json"),
            id="builtin-tables",
        ),
        pytest.param(
            WIDGETS, f"{PROTOBUF}, application/json", (200, "application/json"), id="crd-falls-back"
        ),
        pytest.param(WIDGETS, STREAM, (406, "application/json"), id="crd-protobuf-only"),
    ],
)
async def test_which_encoding_a_watch_gets(http, path, accept, want):
    if path == WIDGETS:
        await _install_widgets(http)
        await _post(http, WIDGETS, widget("w"))
    async with _watch(http, path, accept, "watch=1&timeoutSeconds=1") as resp:
        assert (resp.status, resp.content_type) == (want[0], want[1].split(";")[0])
        assert resp.headers["Content-Type"] == want[1]
        if resp.status == 406:
            status = await resp.json()
            assert status["reason"] == "NotAcceptable"
            offered = "application/json;stream=watch"
            if path == CONFIGMAPS:
                offered += f", {STREAM}"
            assert status["message"] == f"only the following media types are accepted: {offered}"


# a real PodSpec field the message table does not describe (so protobuf cannot say the pod)
UNTABLED = {
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "x"}], "setHostnameAsFQDN": True},
}


async def test_an_object_the_table_cannot_say(http):
    await _post(http, PODS, UNTABLED)
    async with _watch(http, PODS, f"{PROTOBUF}, application/json") as resp:
        assert resp.headers["Content-Type"] == "application/json"  # accepted too: JSON
        assert b'"setHostnameAsFQDN":true' in await resp.content.readline()
    async with _watch(http, PODS, STREAM) as resp:
        assert resp.status == 500  # no JSON to fall back on: refused before the stream starts
        assert (await resp.json())["reason"] == "InternalError"


async def test_a_change_the_table_cannot_say_ends_the_stream_with_an_error(http):
    marker = await _post(http, CONFIGMAPS, {"metadata": {"name": "now"}})
    query = f"watch=1&resourceVersion={marker['metadata']['resourceVersion']}"
    async with _watch(http, PODS, STREAM, query) as resp:
        assert resp.headers["Content-Type"] == STREAM
        await _post(http, PODS, UNTABLED)
        (frame,) = await _frames(resp, 1)
        assert await asyncio.wait_for(resp.content.read(), 10) == b""  # the stream ended
    kind, _, type_name, message = _event(frame)
    status = _read(message)
    assert (kind, type_name, status[4], status[6]) == ("ERROR", "Status", [b"InternalError"], [500])
    assert b"setHostnameAsFQDN" in status[3][0]


def _event_doc(name, reason, message):
    return {
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": reason,
        "message": message,
        "type": "Normal",
        "source": {"component": "kubelet"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 1,
    }


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_events_watch_reads_the_frames(http, sandbox):
    # kubectl's typed client watches events with protobuf first, as client-go's informers do
    await _post(http, "/api/v1/namespaces/default/events", _event_doc("e1", "Started", "first"))
    proc = await asyncio.create_subprocess_exec(
        *("kubectl", "--kubeconfig", str(sandbox.kubeconfig), "events", "--watch", "-v=8"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    try:
        lines = [await asyncio.wait_for(proc.stdout.readline(), 20) for _ in range(2)]
        await _post(http, "/api/v1/namespaces/default/events", _event_doc("e2", "Pulled", "second"))
        lines.append(await asyncio.wait_for(proc.stdout.readline(), 20))
    finally:
        proc.kill()
        _, err = await proc.communicate()
    assert lines[0].split() == [b"LAST", b"SEEN", b"TYPE", b"REASON", b"OBJECT", b"MESSAGE"]
    assert [line.split()[1:] for line in lines[1:]] == [
        [b"Normal", b"Started", b"Pod/p", b"first"],
        [b"Normal", b"Pulled", b"Pod/p", b"second"],
    ]
    assert f"Content-Type: {STREAM}".encode() in err


async def test_a_long_backlog_arrives_whole_in_order(http, sandbox):
    # more than one 256-frame write: created in process, the watch reads them over HTTPS
    rt = sandbox.registry.lookup("", "v1", "configmaps")
    names = [f"cm-{i:03d}" for i in range(300)]
    for name in names:
        sandbox.api.create(rt, "default", {"metadata": {"name": name}})
    async with _watch(http, CONFIGMAPS, STREAM) as resp:
        events = [_event(f) for f in await _frames(resp, len(names))]
    assert {t for t, _, _, _ in events} == {"ADDED"}
    assert [_read(_read(m)[1][0])[1][0].decode() for _, _, _, m in events] == names
