"""Store history, watch translation and patch laws: tables and properties."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.patch import json_patch, merge_patch, strategic_merge
from sandbox.store import Change, Store, TooOld
from sandbox.watch import translate

KEY = ("", "configmaps")


def cm(name, labels=None, ns="default"):
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}}


@pytest.mark.parametrize(
    ("history", "writes", "since", "too_old"),
    [
        pytest.param(10, 5, 1, False, id="nothing-evicted"),
        pytest.param(3, 10, 1, True, id="evicted-before-start"),
        pytest.param(3, 10, 8, False, id="start-at-horizon"),
        pytest.param(3, 10, 7, True, id="one-before-horizon"),
        pytest.param(3, 10, 11, False, id="current"),
    ],
)
def test_changes_since_and_horizon(history, writes, since, too_old):
    store = Store(history=history)
    for i in range(writes):
        store.put(KEY, cm(f"c{i}"))
    if too_old:
        with pytest.raises(TooOld):
            store.changes_since(KEY, since)
    else:
        got = [c.rv for c in store.changes_since(KEY, since)]
        assert got == list(range(since + 1, store.rv + 1))


def test_subscriber_that_stops_reading_is_dropped():
    store = Store(subscriber_limit=3)
    sub = store.subscribe(KEY, None)
    for i in range(5):
        store.put(KEY, cm(f"c{i}"))
    assert sub.overflowed
    assert store.subscriber_count() == 0


def test_subscription_filters_namespace():
    store = Store()
    sub = store.subscribe(KEY, "a")
    store.put(KEY, cm("x", ns="b"))
    store.put(KEY, cm("y", ns="a"))
    assert sub.queue.qsize() == 1


def _has_app_web(obj):
    return obj["metadata"]["labels"].get("app") == "web"


@pytest.mark.parametrize(
    ("kind", "old", "new", "want"),
    [
        pytest.param("ADDED", None, {"app": "web"}, "ADDED", id="added-match"),
        pytest.param("ADDED", None, {"app": "db"}, None, id="added-no-match"),
        pytest.param("MODIFIED", {"app": "web"}, {"app": "web"}, "MODIFIED", id="stays"),
        pytest.param("MODIFIED", {"app": "db"}, {"app": "web"}, "ADDED", id="enters"),
        pytest.param("MODIFIED", {"app": "web"}, {"app": "db"}, "DELETED", id="leaves"),
        pytest.param("MODIFIED", {"app": "db"}, {"app": "db"}, None, id="never-matches"),
        pytest.param("DELETED", {"app": "web"}, {"app": "web"}, "DELETED", id="deleted-match"),
        pytest.param("DELETED", {"app": "db"}, {"app": "db"}, None, id="deleted-no-match"),
    ],
)
def test_translate(kind, old, new, want):
    change = Change(
        kind,
        9,
        KEY,
        {**cm("x", new), "metadata": {**cm("x", new)["metadata"], "resourceVersion": "9"}},
        cm("x", old) if old else None,
    )
    event = translate(change, _has_app_web)
    assert (event[0] if event else None) == want
    if event:
        assert event[1]["metadata"]["resourceVersion"] == "9"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=10,
)
documents = st.dictionaries(st.text(max_size=4), json_values, max_size=4)


@given(documents, documents)
def test_merge_patch_is_idempotent(target, patch):
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once


@given(documents)
def test_empty_patches_change_nothing(target):
    assert merge_patch(target, {}) == target
    assert strategic_merge(target, {}) == target
    assert json_patch(target, []) == target


@given(documents, st.text(max_size=6), json_values)
def test_json_patch_add_then_remove_restores(target, key, value):
    pointer = "/" + key.replace("~", "~0").replace("/", "~1")
    if key in target:
        return
    added = json_patch(target, [{"op": "add", "path": pointer, "value": value}])
    assert added[key] == value
    assert json_patch(added, [{"op": "remove", "path": pointer}]) == target


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param(".spec.size", 3, id="field"),
        pytest.param(".spec.missing", None, id="missing"),
        pytest.param(".spec.items[1]", "b", id="index"),
        pytest.param(".spec.items[9]", None, id="index-out-of-range"),
        pytest.param('.status.conditions[?(@.type=="Ready")].status', "True", id="filter"),
        pytest.param(".status.conditions[?(@.type=='Gone')].status", None, id="filter-no-match"),
    ],
)
def test_printer_column_json_path(path, want):
    from sandbox.tables import json_path

    obj = {
        "spec": {"size": 3, "items": ["a", "b"]},
        "status": {
            "conditions": [
                {"type": "Synced", "status": "False"},
                {"type": "Ready", "status": "True"},
            ]
        },
    }
    assert json_path(obj, path) == want
