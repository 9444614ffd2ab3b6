"""A patch's unknown fields, found without walking what the patch left as stored.

`unknown_after_patch` reports the unknown fields a patch brought, not those already stored. For a
custom resource it skips the parts of the patched object that are the stored object's own (a
merge patch shares them), and it builds no cleaned copy (custom resources are pruned later).
These tests hold it to the plain definition: walk both objects whole, keep what is new.
"""

from __future__ import annotations

import copy
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox import fieldvalidation
from sandbox.crds import types_of
from sandbox.manifests import crd
from sandbox.patch import merge_patch
from sandbox.resources import BUILTIN

LEAF = {"type": "string"}
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "a": LEAF,
                "b": {"type": "object", "properties": {"c": LEAF, "d": LEAF}},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": LEAF, "v": LEAF}},
                },
                "labels": {"type": "object", "additionalProperties": LEAF},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "conditions": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"type": LEAF, "status": LEAF}},
                },
                "history": {
                    "type": "object",
                    "properties": {"events": {"type": "array", "items": LEAF}, "at": LEAF},
                },
            },
        },
    },
}
RT = types_of(crd("example.com", "Thing", schema=SCHEMA, status=True))[0]

UNKNOWN = ["bogus", "extra"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["x", "y"]))
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(UNKNOWN), inner, max_size=2)
    ),
    max_leaves=4,
)


def shaped(schema):
    """Values mostly of the schema's shape, with unknown fields and wrong types among them (a
    patch's null, at any depth, deletes)."""
    if "properties" in schema:
        fields = {k: shaped(c) for k, c in schema["properties"].items()}
        fields.update(dict.fromkeys(UNKNOWN, anything))
        return st.fixed_dictionaries({}, optional=fields)
    if isinstance(schema.get("additionalProperties"), dict):
        return st.dictionaries(st.sampled_from(["k", "l", *UNKNOWN]), scalars, max_size=3)
    if schema.get("type") == "array":
        return st.lists(shaped(schema["items"]), max_size=2)
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return st.dictionaries(st.sampled_from(UNKNOWN), anything, max_size=2)
    return st.one_of(scalars, anything)


objects = shaped(SCHEMA)


def plain(rt, old, patched):
    """The definition: every unknown field of the patched object not already in the stored one."""
    _, after = fieldvalidation.check(rt, patched, dups={}, document_order=False)
    _, before = fieldvalidation.check(rt, old, dups={}, document_order=False)
    return [m for m in after.messages if m not in set(before.messages)]


@settings(max_examples=400, deadline=None)
@given(old=objects, patch=objects)
def test_a_custom_resource_patch_reports_what_the_plain_walk_reports(old, patch):
    patched = merge_patch(old, patch)
    cleaned, found = fieldvalidation.unknown_after_patch(RT, old, patched)
    assert found == plain(RT, old, patched)
    assert cleaned is patched  # kept whole: pruned by the schema when stored


@settings(max_examples=200, deadline=None)
@given(old=objects, patch=objects)
def test_a_built_in_patch_is_walked_whole_and_cleaned(old, patch):
    deployments = next(rt for rt in BUILTIN if rt.key == ("apps", "deployments"))
    old = {"apiVersion": "apps/v1", "kind": "Deployment", **old}
    patched = merge_patch(old, patch)
    cleaned, found = fieldvalidation.unknown_after_patch(deployments, old, patched)
    assert found == plain(deployments, old, patched)
    want, _ = fieldvalidation.check(deployments, patched, dups={}, document_order=False)
    assert cleaned == want


def test_an_unknown_field_the_patch_adds_under_a_stored_part_is_found():
    old = {"spec": {"a": "x", "b": {"c": "1"}}, "status": {"history": {"at": "t"}}}
    patched = merge_patch(old, {"spec": {"b": {"nope": "2"}}})
    assert patched["status"] is old["status"]  # shared, so not walked again
    _, found = fieldvalidation.unknown_after_patch(RT, old, patched)
    assert found == ['unknown field "spec.b.nope"']


def test_a_stored_unknown_field_is_not_reported_again():
    old = {"spec": {"bogus": 1}, "status": {"conditions": [{"type": "A", "odd": 1}]}}
    patched = merge_patch(old, {"status": {"history": {"at": "t", "more": 2}}})
    _, found = fieldvalidation.unknown_after_patch(RT, old, patched)
    assert found == ['unknown field "status.history.more"']


@settings(max_examples=300, deadline=None)
@given(old=objects, patch=objects)
def test_merge_patch_copies_what_it_takes_from_the_patch(old, patch):
    """The result shares nothing mutable with the patch (as `copy.deepcopy` made sure before),
    and is RFC 7386's result."""
    before = copy.deepcopy(patch)
    result = merge_patch(old, patch)
    snapshot = json.dumps(result, sort_keys=True)

    def scribble(value):
        if isinstance(value, dict):
            for v in value.values():
                scribble(v)
            value["scribbled"] = True
        elif isinstance(value, list):
            for v in value:
                scribble(v)
            value.append("scribbled")

    scribble(patch)
    assert json.dumps(result, sort_keys=True) == snapshot
    assert result == merge_patch(old, before)
