"""sandbox.schema.validate with the old value of an update: ratcheting (KEP-4008) drops the
errors of unchanged values except `required`, and never invents an error."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sandbox import schema

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                "n": {"type": "integer", "minimum": 0, "maximum": 3},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "items": {
                    "type": "array",
                    "maxItems": 2,
                    "items": {"type": "object", "required": ["k"], "properties": {"k": {}}},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "status": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    },
}

VALUES = st.one_of(st.none(), st.integers(-5, 9), st.text("abZ9", max_size=7), st.booleans())
SPECS = st.fixed_dictionaries(
    {},
    optional={
        "name": VALUES,
        "n": VALUES,
        "mode": VALUES,
        "items": st.lists(st.dictionaries(st.sampled_from(["k", "x"]), VALUES), max_size=3)
        | VALUES,
        "labels": st.dictionaries(st.sampled_from(["a", "b"]), VALUES) | VALUES,
    },
)
OBJECTS = st.fixed_dictionaries(
    {"spec": SPECS}, optional={"status": st.fixed_dictionaries({}, optional={"n": VALUES})}
)


@given(OBJECTS, OBJECTS)
def test_ratcheted_errors_are_a_subset_and_required_ones_all_stay(new, old):
    full = schema.validate(SCHEMA, new)
    ratcheted = schema.validate(SCHEMA, new, old=old)
    assert set(ratcheted) <= set(full)
    required = [c for c in full if c[0] == "FieldValueRequired"]
    assert [c for c in ratcheted if c[0] == "FieldValueRequired"] == required


@given(OBJECTS)
def test_an_unchanged_object_keeps_only_its_required_errors(obj):
    full = schema.validate(SCHEMA, obj)
    assert schema.validate(SCHEMA, obj, old=obj) == [
        c for c in full if c[0] == "FieldValueRequired"
    ]


def test_what_changed_is_validated_and_what_did_not_is_not():
    old = {"spec": {"name": "TOO-LONG", "n": 7}, "status": {"n": 1}}
    # a status write over an invalid spec: nothing to report
    assert schema.validate(SCHEMA, {**old, "status": {"n": 2}}, old=old) == []
    # the spec's name changed (to another invalid value): its errors, and only its
    new = {"spec": {"name": "ALSO-BAD", "n": 7}, "status": {"n": 1}}
    fields = {field for _, field, _ in schema.validate(SCHEMA, new, old=old)}
    assert fields == {"spec.name"}
    # a field the update adds has no old value to ratchet against
    new = {"spec": {"name": "TOO-LONG", "n": 7, "mode": "z"}, "status": {"n": 1}}
    assert {f for _, f, _ in schema.validate(SCHEMA, new, old=old)} == {"spec.mode"}
    # a type change is a change, though Python's == takes True for 1 and 1.0 for 1
    for before, after in [(1, True), (2, 2.0)]:
        old = {"spec": {"name": "ok", "n": before}}
        new = {"spec": {"name": "ok", "n": after}}
        assert {f for _, f, _ in schema.validate(SCHEMA, new, old=old)} == {"spec.n"}
    # lists compare whole: one item changed, every item is validated
    old = {"spec": {"name": "ok", "items": [{"x": 1}, {"k": 1}]}}
    new = {"spec": {"name": "ok", "items": [{"x": 1}, {"k": 2}]}}
    assert {f for _, f, _ in schema.validate(SCHEMA, new, old=old)} == {"spec.items[0].k"}
