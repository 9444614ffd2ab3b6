"""A CRD's `x-kubernetes-validations` rules, evaluated with cel-python, and remembered.

Evaluated with cel-python when it is installed (the dev extra); without it, rules are not
checked and a real API server stays the judge. Transition rules (`oldSelf`) are skipped: the
sandbox validates every write as a create.

A rule without `oldSelf` is a pure function of the value it sees, so its verdict on a value is
remembered (by a digest of the value's canonical JSON): a status write re-validates the whole
object, and its spec, where the rules live, rarely changes. cel-python's interpreter took about
two thirds of the sandbox's CPU in `bench/bench_controller.py` before (every status patch
evaluated every spec rule again). The verdicts are exactly those of a fresh evaluation.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from typing import Any

__all__ = ["cel_causes"]

Cause = tuple[str, str, str]  # (reason, field, message) as in metav1.StatusCause
REMEMBERED = 65_536  # verdicts kept (about 100 bytes each): a spec's nodes times 10,000 objects


class _Verdicts:
    """Least recently used verdicts: (rules, digest of the value) -> messages of failed rules."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._kept: OrderedDict[tuple[tuple[str, ...], bytes], tuple[str, ...]] = OrderedDict()

    def get(self, key: tuple[tuple[str, ...], bytes]) -> tuple[str, ...] | None:
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def put(self, key: tuple[tuple[str, ...], bytes], failed: tuple[str, ...]) -> None:
        self._kept[key] = failed
        if len(self._kept) > self.size:
            self._kept.popitem(last=False)


_VERDICTS = _Verdicts(REMEMBERED)


def cel_causes(schema: dict[str, Any], value: Any, path: str) -> list[Cause]:
    """The `x-kubernetes-validations` rules of this node that `value` breaks."""
    rules = [r for r in schema.get("x-kubernetes-validations") or [] if "oldSelf" not in r["rule"]]
    if not rules or _celpy() is None:
        return []
    key = _key(rules, value)
    failed = _VERDICTS.get(key) if key is not None else None
    if failed is None:
        failed = _evaluate(rules, value)
        if key is not None:
            _VERDICTS.put(key, failed)
    kind = type(value).__name__.replace("dict", "object").replace("list", "array")
    return [("FieldValueInvalid", path, f'Invalid value: "{kind}": {m}') for m in failed]


def _key(rules: list[dict[str, Any]], value: Any) -> tuple[tuple[str, ...], bytes] | None:
    """What the verdict depends on: the rules (with their messages) and the value; None when
    the value has no canonical JSON (a YAML timestamp, say): evaluated every time."""
    try:  # the stdlib, not orjson: it keeps NaN apart from null and takes any size of int
        raw = json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    except (TypeError, ValueError):
        return None
    texts = tuple(f"{r['rule']}\x00{r.get('message') or ''}" for r in rules)
    return texts, hashlib.blake2b(raw, digest_size=16).digest()


def _evaluate(rules: list[dict[str, Any]], value: Any) -> tuple[str, ...]:
    celpy = _celpy()
    activation = {"self": celpy.json_to_cel(value)}
    failed = []
    for rule in rules:
        message = rule.get("message") or f"failed rule: {rule['rule']}"
        try:
            ok = _cel_program(rule["rule"]).evaluate(activation)
        except Exception as err:  # any evaluation error fails the rule, as upstream
            ok, message = False, f"{message} (evaluation error: {err})"
        if not (isinstance(ok, bool | celpy.celtypes.BoolType) and ok):
            failed.append(message)
    return tuple(failed)


@functools.cache
def _celpy() -> Any:
    try:
        import celpy
    except ImportError:
        return None
    return celpy


@functools.cache
def _cel_program(rule: str) -> Any:
    celpy = _celpy()
    env = celpy.Environment()
    return env.program(env.compile(rule))
