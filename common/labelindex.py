"""An index of objects by label, so a selector finds its objects without a scan.

Every Pods-metric pass of the controller, and every Pods-metric request to the adapter, asks for
the pods of one selector. A scan of the namespace's pods is O(pods) per request, so O(N^2) per
sync period over N autoscalers with a pod or two each (15% of the controller's CPU and a fifth
of the adapter's at 1,000 Autoscalers and 500 pods in `bench/bench_controller.py`). With the
index a selector that has an equality or `in` requirement (every Deployment's, every `app=x`)
looks only at the objects carrying one of those labels; the caller still matches the full
selector on them, so the answer holds exactly the objects a scan finds. A selector without such
a requirement (`!x`, `x notin (...)`, empty) is answered by a scan.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Generic, TypeVar

from common.selectors import Operator, Selector

__all__ = ["LabelIndex"]

K = TypeVar("K", bound=Hashable)
_NARROWING = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)


class LabelIndex(Generic[K]):
    """(label key, value) -> keys of the objects carrying it."""

    def __init__(self) -> None:
        self._by_label: dict[tuple[str, str], set[K]] = {}
        self._labels: dict[K, dict[str, str]] = {}  # key -> its labels as indexed

    def put(self, key: K, labels: Mapping[str, str]) -> None:
        """`key` now has `labels` (added, or changed)."""
        self.drop(key)
        self._labels[key] = dict(labels)
        for pair in labels.items():
            self._by_label.setdefault(pair, set()).add(key)

    def drop(self, key: K) -> None:
        """`key` is gone."""
        for pair in (self._labels.pop(key, None) or {}).items():
            bucket = self._by_label.get(pair)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del self._by_label[pair]

    def candidates(self, selector: Selector) -> set[K] | None:
        """The keys that may match `selector` (a superset of those that do), or None: any may,
        scan them all."""
        best: set[K] | None = None
        for req in selector.requirements:
            if req.operator not in _NARROWING:
                continue
            keys: set[K] = set()
            for value in req.values:
                keys |= self._by_label.get((req.key, value), set())
            if best is None or len(keys) < len(best):
                best = keys
        return best
