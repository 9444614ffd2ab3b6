"""The objects of one resource as the adapter's watch cache holds them: namespace, name, labels,
and where the name came from (generateName and controller, which a Pods metric's history reads),
with a label index and the answers to the selectors asked. Fed by `adapter.kube`'s list-watch;
on its own in benchmarks. Pure: no I/O.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from adapter.rules.podnames import HASH_LABEL, PodLineage
from common.labelindex import LabelIndex
from common.selectors import Selector

__all__ = ["NAMES_MEMO", "ObjectStore"]

NAMES_MEMO = 4096  # remembered selector answers per namespace and resource


def _labels(obj: Mapping[str, Any]) -> tuple[str, str, dict[str, str]]:
    meta = obj.get("metadata") or {}
    labels = {sys.intern(k): sys.intern(v) for k, v in (meta.get("labels") or {}).items()}
    return sys.intern(meta.get("namespace") or ""), meta.get("name") or "", labels


Origin = tuple[str, str, str]  # generateName, controller kind, controller name


def _origin(obj: Mapping[str, Any]) -> Origin | None:
    """Where an object's name came from (a Pods metric's history needs it); None: nothing
    (interned: the pods of one controller share the strings)."""
    meta = obj.get("metadata") or {}
    generated = meta.get("generateName") or ""
    kind = name = ""
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            break
    if not (generated or kind):
        return None
    return sys.intern(str(generated)), sys.intern(kind), sys.intern(name)


class ObjectStore:
    """namespace -> name -> labels of one resource, with a label index and the answers to the
    selectors asked (an HPA asks the same question every sync). Fed by `_ObjectCache`'s
    list-watch; on its own in benchmarks."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, dict[str, str]]] = {}
        # namespace -> name -> where the name came from, for the objects that say
        self._origins: dict[str, dict[str, Origin]] = {}
        self._index: dict[str, LabelIndex[str]] = {}  # namespace -> its names by label
        # namespace (None: all) -> selector -> matching names: dropped for a namespace when an
        # object in it comes, goes or changes labels
        self._names: dict[str | None, dict[Selector, list[str]]] = {}

    def replace(self, items: Iterable[Mapping[str, Any]]) -> None:
        """Everything, from a list (a relist drops what it does not have)."""
        fresh: dict[str, dict[str, dict[str, str]]] = {}
        index: dict[str, LabelIndex[str]] = {}
        origins: dict[str, dict[str, Origin]] = {}
        for item in items:
            namespace, name, labels = _labels(item)
            fresh.setdefault(namespace, {})[name] = labels
            index.setdefault(namespace, LabelIndex()).put(name, labels)
            origin = _origin(item)
            if origin is not None:
                origins.setdefault(namespace, {})[name] = origin
        self._objects, self._index, self._origins = fresh, index, origins
        self._names.clear()

    def apply(self, kind: str, obj: Mapping[str, Any]) -> None:
        """One watch event (ADDED, MODIFIED or DELETED)."""
        namespace, name, labels = _labels(obj)
        origin = None if kind == "DELETED" else _origin(obj)
        if origin is not None:  # an adoption or an orphaning changes it, not the labels
            self._origins.setdefault(namespace, {})[name] = origin
        else:
            self._origins.get(namespace, {}).pop(name, None)
        if kind == "DELETED":
            if self._objects.get(namespace, {}).pop(name, None) is not None:
                self._forget(namespace)
            self._index.get(namespace, LabelIndex()).drop(name)
        elif self._objects.get(namespace, {}).get(name) != labels:
            # a new object, or new labels: answers in its namespace may change. Most events
            # (status, annotations, owners) keep the labels, and the answers with them.
            self._objects.setdefault(namespace, {})[name] = labels
            self._index.setdefault(namespace, LabelIndex()).put(name, labels)
            self._forget(namespace)

    def _forget(self, namespace: str) -> None:
        self._names.pop(namespace, None)
        self._names.pop(None, None)  # all namespaces

    def names(self, namespace: str | None, selector: Selector) -> list[str]:
        """Matching names, sorted; the same list object while nothing in `namespace` changes
        its labels: callers must not modify it."""
        memo = self._names.get(namespace)
        if memo is None:
            memo = self._names[namespace] = {}
        found = memo.get(selector)
        if found is None:
            if len(memo) >= NAMES_MEMO:
                memo.clear()  # bounded: a namespace with more distinct selectors starts over
            found = memo[selector] = sorted(
                name for _, name, _ in self.objects(namespace, selector)
            )
        return found

    def objects(
        self, namespace: str | None, selector: Selector
    ) -> list[tuple[str, str, Mapping[str, str]]]:
        """(namespace, name, labels) matching `selector`, by namespace then name."""
        spaces = [namespace] if namespace else sorted(self._objects)
        return [
            (space, name, labels)
            for space in spaces
            for name, labels in self._candidates(space, selector)
            if selector.matches(labels)
        ]

    def lineage(self, namespace: str, selector: Selector) -> list[PodLineage]:
        """The matching objects, each with where its name came from (pods: by name)."""
        origins = self._origins.get(namespace, {})
        out = []
        for _, name, labels in self.objects(namespace, selector):
            generated, kind, owner = origins.get(name, ("", "", ""))
            out.append(PodLineage(name, generated, kind, owner, labels.get(HASH_LABEL, "")))
        return out

    def _candidates(self, space: str, selector: Selector) -> list[tuple[str, dict[str, str]]]:
        """(name, labels), by name, that may match: from the label index, else all of them."""
        objects = self._objects.get(space, {})
        index = self._index.get(space)
        keys = index.candidates(selector) if index is not None else None
        if keys is None:
            return sorted(objects.items())
        return [(name, objects[name]) for name in sorted(keys) if name in objects]

    def size(self) -> int:
        return sum(len(objects) for objects in self._objects.values())
