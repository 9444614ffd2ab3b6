"""The response encoder (orjson) writes the standard library's bytes, over random documents
and over random metric answers rendered the way the handlers render them."""

from __future__ import annotations

import json
import tracemalloc
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.provider.seams import (
    CustomValues,
    ExternalMetricValue,
    MetricValue,
    ObjectReference,
)
from adapter.server import documents as docs
from adapter.server.encoding import dumps
from common.kubetime import format_time
from common.selectors import parse_selector


def _old(body: object) -> bytes:
    """What the handlers sent before: `json.dumps(..., separators=(",", ":"))` as UTF-8."""
    return json.dumps(body, separators=(",", ":")).encode()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400)
@given(JSON)
def test_any_float_free_document_encodes_to_the_old_bytes(body: object) -> None:
    assert dumps(body) == _old(body)


NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
STAMPS = st.integers(0, 4_000_000_000).map(lambda s: datetime.fromtimestamp(s, tz=UTC))
VALUES = st.builds(
    MetricValue,
    st.builds(ObjectReference, st.just("Pod"), NAMES, st.just("v1"), NAMES),
    NAMES,
    STAMPS,
    st.sampled_from(["0", "1500m", "42", "-3", "12345678901234567890", "1e3"]),
    st.none() | st.integers(1, 3600),
    st.sampled_from([None, parse_selector("a=b"), parse_selector("tier in (x,y),!gone")]),
)
EXTERNAL = st.builds(
    ExternalMetricValue,
    NAMES,
    STAMPS,
    st.sampled_from(["0", "250m", "7"]),
    st.dictionaries(NAMES, NAMES, max_size=3),
    st.none() | st.integers(1, 3600),
)


@settings(max_examples=200)
@given(st.lists(VALUES, max_size=8), st.sampled_from(["v1beta1", "v1beta2"]))
def test_custom_metric_answers_are_byte_identical(values, version) -> None:
    body = docs.metric_value_list(values, version)
    assert dumps(body) == _old(body)


def _old_item(value: MetricValue, version: str) -> dict:
    """An item as the renderer built it before parts were shared (one dict per part)."""
    ref = value.described_object
    described = {"kind": ref.kind}
    if ref.namespace:
        described["namespace"] = ref.namespace
    described["name"] = ref.name
    described["apiVersion"] = ref.api_version
    selector = docs.label_selector(value.metric_selector)
    stamp = format_time(value.timestamp)
    if version == "v1beta1":
        item = {"describedObject": described, "metricName": value.metric, "timestamp": stamp}
        if value.window_seconds is not None:
            item["window"] = value.window_seconds
        return {**item, "value": value.value, "selector": selector}
    item = {
        "describedObject": described,
        "metric": {"name": value.metric, "selector": selector},
        "timestamp": stamp,
    }
    if value.window_seconds is not None:
        item["windowSeconds"] = value.window_seconds
    return {**item, "value": value.value}


def _old_list(values: list[MetricValue], version: str) -> bytes:
    body = {
        "kind": "MetricValueList",
        "apiVersion": f"custom.metrics.k8s.io/{version}",
        "metadata": {},
        "items": [_old_item(v, version) for v in values],
    }
    return _old(body)


# answers as the provider builds them: runs of items sharing metric, selector and time, so the
# renderer's sharing of parts between neighbours is exercised, with changes in between
SHARED = st.builds(
    lambda metric, selector, stamp, window, names: [
        MetricValue(ObjectReference("Pod", n, "v1", "ns"), metric, stamp, "1", window, selector)
        for n in names
    ],
    st.sampled_from(["a", "b"]),
    st.sampled_from([None, parse_selector("a=b"), parse_selector("a=b")]),
    STAMPS,
    st.none() | st.integers(1, 3600),
    st.lists(NAMES, min_size=1, max_size=4),
)


@settings(max_examples=150)  # 300 took 4.6 s on the shared machine at load 8
@given(
    st.lists(VALUES | SHARED, max_size=6),
    st.sampled_from(["v1beta1", "v1beta2"]),
)
def test_custom_answers_render_to_the_bytes_of_the_former_renderer(parts, version) -> None:
    values = [v for part in parts for v in (part if isinstance(part, list) else [part])]
    assert dumps(docs.metric_value_list(values, version)) == _old_list(values, version)
    for value in values[:2]:
        assert _old(docs.custom_item(value, version)) == _old(_old_item(value, version))


@settings(max_examples=200)
@given(st.lists(EXTERNAL, max_size=8))
def test_external_metric_answers_are_byte_identical(values) -> None:
    body = docs.external_value_list(values)
    assert dumps(body) == _old(body)


def test_non_ascii_text_keeps_the_old_escapes() -> None:
    body = {"metricLabels": {"city": "Zürich", "emoji": "\U0001f600"}}
    assert (
        dumps(body)
        == _old(body)
        == b'{"metricLabels":{"city":"Z\\u00fcrich","emoji":"\\ud83d\\ude00"}}'
    )


# answers as the Prometheus provider hands them over: names asked (some without a point, some
# repeated), points shared by name (some for names not asked), everything else once
POINTS = st.tuples(
    st.sampled_from([datetime(2026, 12, 2, tzinfo=UTC), datetime(1999, 1, 1, tzinfo=UTC)]) | STAMPS,
    st.sampled_from(["0", "1500m", "42"]),
)


@st.composite
def answers(draw: st.DrawFn) -> CustomValues:
    names = draw(st.lists(NAMES, max_size=8))
    points = {name: draw(POINTS) for name in names if draw(st.booleans())}
    points.update(draw(st.dictionaries(NAMES, POINTS, max_size=2)))
    return CustomValues(
        kind=draw(st.sampled_from(["Pod", "Namespace"])),
        api_version="v1",
        namespace=draw(st.sampled_from(["", "default", "ünï"])),
        metric=draw(NAMES),
        window_seconds=draw(st.none() | st.integers(1, 3600)),
        metric_selector=draw(
            st.sampled_from([None, parse_selector("a=b"), parse_selector("tier in (x,y),!gone")])
        ),
        names=names,
        points=points,
    )


@settings(max_examples=300)
@given(answers(), st.sampled_from(["v1beta1", "v1beta2"]))
def test_answers_render_from_their_points_to_the_bytes_of_their_values(answer, version) -> None:
    values = list(answer)  # the MetricValues the answer stands for, rendered the general way
    assert values == [answer[i] for i in range(len(answer))]
    assert docs.metric_value_list(answer, version) == docs.metric_value_list(values, version)
    assert dumps(docs.metric_value_list(answer, version)) == _old_list(values, version)
    # with the described objects from the memo, twice (the second time all from it), and
    # from a memo so small it starts afresh in the middle of an answer
    assert docs.metric_value_list_json(answer, version) == _old_list(values, version)
    assert docs.metric_value_list_json(answer, version) == _old_list(values, version)
    assert docs.metric_value_list_json(values, version) == _old_list(values, version)
    small = docs._DescribedMemo(limit=2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(docs, "_DESCRIBED", small)
        assert docs.metric_value_list_json(answer, version) == _old_list(values, version)


def test_an_answer_reads_as_the_values_it_stands_for() -> None:
    when = datetime(2026, 12, 2, tzinfo=UTC)
    answer = CustomValues(
        kind="Pod",
        api_version="v1",
        namespace="shop",
        metric="rps",
        window_seconds=60,
        metric_selector=None,
        names=["b", "gone", "a"],
        points={"a": (when, "1"), "b": (when, "2"), "other": (when, "3")},
    )
    want = [
        MetricValue(ObjectReference("Pod", "b", "v1", "shop"), "rps", when, "2", 60, None),
        MetricValue(ObjectReference("Pod", "a", "v1", "shop"), "rps", when, "1", 60, None),
    ]
    assert len(answer) == 2
    assert list(answer) == want
    assert answer == want
    assert want == answer
    assert answer[-1] == want[-1]
    assert list(answer[:1]) == want[:1]
    assert list(answer.found()) == [("b", when, "2"), ("a", when, "1")]
    assert answer != want[:1]


def test_the_described_memo_stays_within_its_limit() -> None:
    memo = docs._DescribedMemo(limit=3)
    spaces = ("ns0", "ns1")
    for i in range(10):
        space = spaces[i % 2]
        group = memo.group("Pod", "v1", space)
        encoded = memo.add(group, "Pod", "v1", space, f"p{i}")
        want = {"kind": "Pod", "namespace": space, "name": f"p{i}", "apiVersion": "v1"}
        assert encoded == dumps(want).decode()
        assert sum(len(memo.group("Pod", "v1", s)) for s in spaces) <= 3
    # what fits is kept: the same object for the same name
    group = memo.group("Pod", "v1", "ns0")
    kept = memo.add(group, "Pod", "v1", "ns0", "web")
    assert memo.group("Pod", "v1", "ns0").get("web") is kept


def test_the_described_memo_keeps_no_encoder_buffer() -> None:
    """orjson's output keeps a 4 KB buffer behind it: the memo must hold copies."""
    memo = docs._DescribedMemo(limit=10_000)
    names = [f"web-{i:05d}" for i in range(2_000)]
    group = memo.group("Pod", "v1", "production")
    tracemalloc.start()
    try:
        for name in names:
            memo.add(group, "Pod", "v1", "production", name)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held / len(names) < 1_000  # about 200 bytes; 4 KB without the copy
