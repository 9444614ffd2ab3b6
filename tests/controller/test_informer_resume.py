"""A broken watch is resumed from the last resourceVersion seen; only 410 Gone lists again
(a reconnect at 10,000 Autoscalers must not LIST them all)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from autoscaler.kube.client import Gone, KubeError
from autoscaler.kube.informer import Informer
from tests.controller.test_scalecache import COLLECTION, FakeApi


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    ("error", "lists"),
    [
        pytest.param(None, 0, id="connection-reset-resumes"),
        pytest.param(KubeError(500, "InternalError", "etcd hiccup"), 0, id="error-resumes"),
        pytest.param(Gone(410, "Expired", "too old resource version"), 1, id="gone-relists"),
    ],
)
async def test_reconnect(error: Exception | None, lists: int) -> None:
    api = FakeApi()
    seen: list[tuple[str, Any]] = []
    informer = Informer(
        api,  # type: ignore[arg-type]
        COLLECTION,
        on_event=lambda kind, obj: seen.append((kind, obj["spec"]["replicas"])),
        max_backoff=0.01,
    )
    informer.start()
    try:
        await settle()
        before = api.lists
        api.break_watches(error)
        await asyncio.sleep(0.25)  # the backoff (0.2 s), then the watch is back
        assert api.lists - before == lists
        api.change(7)  # an event on the resumed watch still arrives
        await settle()
        assert informer.objects["ns/web"]["spec"]["replicas"] == 7
        assert seen[-1] == ("MODIFIED", 7)
    finally:
        await informer.stop()


async def test_managed_fields_are_not_kept_from_lists_or_watch_events() -> None:
    """A real API server sets metadata.managedFields on every object; the caches drop it."""
    managed = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]

    class ManagedApi(FakeApi):
        def obj(self) -> dict[str, Any]:
            doc = super().obj()
            doc["metadata"]["managedFields"] = managed
            return doc

    api = ManagedApi()
    seen: list[dict[str, Any]] = []
    informer = Informer(api, COLLECTION, on_event=lambda kind, obj: seen.append(obj))  # type: ignore[arg-type]
    informer.start()
    try:
        await settle()
        listed = informer.objects["ns/web"]
        assert "managedFields" not in listed["metadata"]
        assert listed["metadata"]["resourceVersion"] == "10"
        api.change(5)
        await settle()
        watched = informer.objects["ns/web"]
        assert watched["spec"]["replicas"] == 5
        assert "managedFields" not in watched["metadata"]
        assert seen
        assert all("managedFields" not in o["metadata"] for o in seen)
    finally:
        await informer.stop()
