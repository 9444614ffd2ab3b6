"""`--state-file`: the sandbox's objects and CAs survive a restart, as etcd's data would.

The file is one JSON document: the store's resourceVersion, every object, and the two CAs (so a
client's kubeconfig, an APIService's trust and a front-proxy certificate stay valid across the
restart). It is written atomically (a temporary file renamed over it) when the store changed,
every 5 seconds, and on a clean stop; a SIGKILLed sandbox loses at most the last 5 seconds.

After a restart, a watch resumed from a resourceVersion before the restart gets 410 Expired and
relists, as after a real API server restart whose watch cache starts at the current revision.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from sandbox.certs import CertKey
from sandbox.store import Change, Store

__all__ = [
    "Keeper",
    "StateError",
    "load",
    "notify_restored",
    "restore",
    "save_loop",
    "snapshot",
    "write",
]

log = logging.getLogger(__name__)
VERSION = 1  # the file's format; a different one is refused rather than misread


class StateError(ValueError):
    """The state file cannot be read; the message names the file and the problem."""


def snapshot(store: Store, cas: dict[str, CertKey]) -> dict[str, Any]:
    objects = [
        {"group": group, "resource": plural, "object": obj}
        for group, plural in store.resource_keys()
        for obj in store.list((group, plural))
    ]
    pems = {
        name: {"cert": ca.cert_pem.decode(), "key": ca.key_pem.decode()} for name, ca in cas.items()
    }
    return {"version": VERSION, "resourceVersion": store.rv, "objects": objects, "cas": pems}


def _encode_and_write(path: Path, doc: dict[str, Any]) -> None:
    write(path, json.dumps(doc, separators=(",", ":")).encode())


def write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # atomic: a reader (or a restart) sees the old or the new file


def load(path: Path) -> dict[str, Any] | None:
    """The saved state, or None when there is no file yet."""
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise StateError(f"{path}: cannot read the state: {err}") from err
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise StateError(f"{path}: not a sandbox state file of version {VERSION}")
    return doc


def cas(doc: dict[str, Any]) -> dict[str, CertKey]:
    out = {}
    for name, pem in (doc.get("cas") or {}).items():
        key = serialization.load_pem_private_key(pem["key"].encode(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        out[name] = CertKey(x509.load_pem_x509_certificate(pem["cert"].encode()), key)
    return out


def restore(store: Store, doc: dict[str, Any]) -> list[Change]:
    """Put the saved objects back without emitting changes; the ADDED changes that the
    internal controllers must see (CRDs first), for `notify_restored`."""
    changes = []
    for entry in doc["objects"]:
        key = (entry["group"], entry["resource"])
        obj = entry["object"]
        meta = obj["metadata"]
        store._objects.setdefault(key, {})[(meta.get("namespace", ""), meta["name"])] = obj
        changes.append(Change("ADDED", int(meta.get("resourceVersion", 0)), key, obj, None))
    store.rv = int(doc["resourceVersion"])
    store._horizon = store.rv  # resuming from before the restart: 410, then a relist
    crds = ("apiextensions.k8s.io", "customresourcedefinitions")
    return sorted(changes, key=lambda c: c.key != crds)


def notify_restored(store: Store, changes: list[Change]) -> None:
    for change in changes:
        for listener in list(store._listeners):
            listener(change)


async def save_loop(store: Store, path: Path, cas: dict[str, CertKey], interval: float) -> None:
    """Save when the store changed, every `interval` seconds, until cancelled."""
    saved = -1
    while True:
        if store.rv != saved:
            saved = store.rv
            # stored objects are never mutated, so the thread may encode them while the loop
            # goes on (the encoder holds the GIL, but the loop gets its turns between)
            doc = snapshot(store, cas)
            try:
                await asyncio.to_thread(_encode_and_write, path, doc)
            except OSError as err:
                log.warning("state file %s not written: %s", path, err)
        await asyncio.sleep(interval)


class Keeper:
    """The state file of one sandbox: load at start, save as the store changes, save at stop."""

    def __init__(self, path: Path | None, *, interval: float = 5.0) -> None:
        self.path = path  # None: nothing is kept
        self.interval = interval  # seconds between saves of a changed store
        self._task: asyncio.Task[None] | None = None
        self._store: Store | None = None
        self._cas: dict[str, CertKey] = {}

    def load(self) -> dict[str, Any] | None:
        return load(self.path) if self.path else None

    def start(self, store: Store, cas: dict[str, CertKey]) -> None:
        if self.path is None:
            return
        self._store, self._cas = store, cas
        self._task = asyncio.create_task(save_loop(store, self.path, cas, self.interval))

    async def stop(self) -> None:
        if self._task is None or self.path is None or self._store is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        write(self.path, json.dumps(snapshot(self._store, self._cas)).encode())
