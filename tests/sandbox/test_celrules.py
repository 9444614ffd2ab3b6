"""The sandbox's CEL rules: a remembered verdict is the verdict a fresh evaluation gives."""

from __future__ import annotations

import math
from typing import Any

import pytest

from sandbox import celrules

pytest.importorskip("celpy")

NODE = {
    "type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.max >= self.min", "message": "max below min"},
        {"rule": "self.min > 0"},  # no message: upstream's "failed rule: ..."
    ],
}


@pytest.mark.parametrize(
    ("value", "failed"),
    [
        pytest.param({"min": 1, "max": 2}, [], id="valid"),
        pytest.param({"min": 3, "max": 2}, ["max below min"], id="max-below-min"),
        pytest.param({"min": 0, "max": 2}, ["failed rule: self.min > 0"], id="min-zero"),
        pytest.param(
            {"min": 0, "max": -1}, ["max below min", "failed rule: self.min > 0"], id="both"
        ),
        pytest.param({"max": 2}, ["max below min (evaluation error", "failed rule"], id="absent"),
    ],
)
def test_remembered_verdict_is_the_fresh_one(value: dict[str, Any], failed: list[str]) -> None:
    first = celrules.cel_causes(NODE, value, "spec")
    again = celrules.cel_causes(NODE, dict(value), "spec")  # an equal value, another dict
    assert again == first
    assert len(first) == len(failed)
    for (reason, field, message), want in zip(first, failed, strict=True):
        assert (reason, field) == ("FieldValueInvalid", "spec")
        assert message.startswith('Invalid value: "object": ' + want)


def test_a_remembered_verdict_names_the_path_of_this_write() -> None:
    celrules.cel_causes(NODE, {"min": 3, "max": 2}, "spec")
    causes = celrules.cel_causes(NODE, {"min": 3, "max": 2}, "spec.template")
    assert [c[1] for c in causes] == ["spec.template"]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        pytest.param({"min": 1, "max": 1}, {"min": 1, "max": 1.0}, id="int-vs-double"),
        pytest.param({"min": 1, "max": math.nan}, {"min": 1, "max": None}, id="nan-vs-null"),
        pytest.param({"min": 1, "max": True}, {"min": 1, "max": 1}, id="bool-vs-int"),
    ],
)
def test_values_cel_tells_apart_are_remembered_apart(one: Any, other: Any) -> None:
    rules = NODE["x-kubernetes-validations"]
    assert celrules._key(rules, one) != celrules._key(rules, other)


def test_other_messages_are_other_verdicts() -> None:
    reworded = {"x-kubernetes-validations": [{"rule": "self.min > 0", "message": "positive"}]}
    plain = {"x-kubernetes-validations": [{"rule": "self.min > 0"}]}
    assert celrules.cel_causes(plain, {"min": 0}, "s")[0][2].endswith("failed rule: self.min > 0")
    assert celrules.cel_causes(reworded, {"min": 0}, "s")[0][2].endswith("positive")


def test_verdicts_are_bounded_least_recently_used_first() -> None:
    kept = celrules._Verdicts(2)
    a, b, c = ((("r",), bytes([i])) for i in range(3))
    kept.put(a, ())
    kept.put(b, ("x",))
    assert kept.get(a) == ()  # a is now the most recent
    kept.put(c, ())
    assert kept.get(b) is None
    assert kept.get(a) == ()
    assert kept.get(c) == ()
