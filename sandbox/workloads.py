"""Workload simulation: the ReplicaSet/StatefulSet controllers, garbage collection and a kubelet.

Deployments, ReplicaSets and StatefulSets own pods (no ReplicaSet between a Deployment and its
pods) and keep as many as `spec.replicas`; pods start Running at once and turn Ready after
`ready_delay` seconds; workload status (replicas, readyReplicas, availableReplicas,
observedGeneration...) follows. Runs as one asyncio task fed by store changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import logging
from typing import Any

from common.kubetime import format_time
from sandbox import deployments, errors, kubelet, nodes
from sandbox import replicaset_ranking as ranking
from sandbox.operations import Api
from sandbox.resources import Registry, ResourceType
from sandbox.store import Change, Obj

log = logging.getLogger(__name__)

PODS = ("", "pods")
REPLICASETS = ("apps", "replicasets")
KINDS = {"Deployment": "deployments", "ReplicaSet": "replicasets", "StatefulSet": "statefulsets"}
WORKLOAD_KEYS = {("apps", plural) for plural in KINDS.values()}


def controller_ref(obj: Obj) -> dict[str, Any] | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


class Workloads:
    """The controllers; `start()` once the event loop runs, `stop()` to end the task."""

    def __init__(
        self, api: Api, registry: Registry, *, ready_delay: float, kubelet: bool = True
    ) -> None:
        self.api = api
        self.registry = registry
        self.ready_delay = ready_delay  # seconds from Running to Ready for every new pod
        self.kubelet = kubelet  # simulate the kubelet (Running, Ready) for every new pod
        self._dirty: set[tuple[str, str, str]] = set()  # (plural, namespace, name)
        self._new_pods: list[tuple[str, str, str]] = []  # (namespace, name, uid)
        self._ready_due: list[tuple[float, str, str, str]] = []
        self._gc: list[tuple[str, str]] = []  # (namespace, owner uid) of deleted workloads
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ips = itertools.count(2)

    def start(self) -> None:
        self.api.store.add_listener(self._on_change)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sandbox-workloads")

    async def stop(self) -> None:
        self.api.store.remove_listener(self._on_change)
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _on_change(self, change: Change) -> None:
        meta = change.obj["metadata"]
        if change.key in WORKLOAD_KEYS:
            if change.type == "DELETED":
                self._gc.append((meta.get("namespace", ""), meta["uid"]))
            else:
                self._dirty.add((change.key[1], meta.get("namespace", ""), meta["name"]))
            ref = controller_ref(change.obj)
            if change.key == REPLICASETS and ref and ref.get("kind") == "Deployment":
                self._dirty.add(("deployments", meta.get("namespace", ""), ref.get("name", "")))
        elif change.key == PODS:
            ref = controller_ref(change.obj)
            if ref and ref.get("kind") in KINDS:
                self._dirty.add(
                    (KINDS[ref["kind"]], meta.get("namespace", ""), ref.get("name", ""))
                )
            if change.type == "ADDED" and self.kubelet:
                self._new_pods.append((meta.get("namespace", ""), meta["name"], meta["uid"]))
        else:
            return
        self._wake.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            timeout = None
            if self._ready_due:
                timeout = max(0.0, min(d[0] for d in self._ready_due) - loop.time())
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow the cancel of
            # stop() when it races the timeout, and this loop would then never end
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
            self._wake.clear()
            try:
                self.step(loop.time())
            except Exception:  # a controller bug must not stop the simulation
                log.exception("workload simulation step failed")
            await asyncio.sleep(0)

    # ---- one reconciliation pass (synchronous, so tests can drive it) -------------------------

    def step(self, now: float) -> None:
        new_pods, self._new_pods = self._new_pods, []
        for ns, name, uid in new_pods:
            self._start_pod(ns, name, uid, now)
        due = [d for d in self._ready_due if d[0] <= now]
        self._ready_due = [d for d in self._ready_due if d[0] > now]
        for _, ns, name, uid in due:
            self._make_ready(ns, name, uid)
        gc, self._gc = self._gc, []
        for ns, uid in gc:
            self._collect(ns, uid)
        dirty, self._dirty = self._dirty, set()
        for plural, ns, name in sorted(dirty):
            self._reconcile(plural, ns, name)

    def _rt(self, plural: str) -> ResourceType:
        rt = self.registry.lookup("apps" if plural != "pods" else "", "v1", plural)
        assert rt is not None
        return rt

    def _owned(self, ns: str, uid: str, key: tuple[str, str] = PODS) -> list[Obj]:
        return [
            p
            for p in self.api.store.list(key, ns)
            if (controller_ref(p) or {}).get("uid") == uid
            and not p["metadata"].get("deletionTimestamp")
        ]

    def _collect(self, ns: str, uid: str) -> None:
        # the garbage collector: dependents (pods, a deployment's replicasets) go with the owner
        for plural, key in (("pods", PODS), ("replicasets", REPLICASETS)):
            for obj in self._owned(ns, uid, key):
                with contextlib.suppress(errors.ApiError):
                    self.api.delete(self._rt(plural), ns, obj["metadata"]["name"])

    def _reconcile(self, plural: str, ns: str, name: str) -> None:
        if plural == "deployments":
            self._reconcile_deployment(ns, name)
            return
        rt = self._rt(plural)
        w = self.api.store.get(rt.key, ns, name)
        if w is None or w["metadata"].get("deletionTimestamp"):
            return
        pods = self._owned(ns, w["metadata"]["uid"])
        want = int((w.get("spec") or {}).get("replicas", 1))
        if len(pods) < want:
            pods += self._create_pods(rt, w, pods, want - len(pods))
        elif len(pods) > want:
            pods = self._delete_pods(rt, pods, len(pods) - want)
        self._write_status(rt, w, pods)

    def _create_pods(self, rt: ResourceType, w: Obj, existing: list[Obj], n: int) -> list[Obj]:
        created = []
        ordinals = iter(
            i
            for i in itertools.count()
            if f"{w['metadata']['name']}-{i}" not in {p["metadata"]["name"] for p in existing}
        )
        for _ in range(n):
            pod = self._pod_from_template(rt, w, next(ordinals))
            try:
                created.append(self.api.create(self._rt("pods"), w["metadata"]["namespace"], pod))
            except errors.ApiError as err:
                log.warning(
                    "cannot create a pod for %s/%s: %s",
                    rt.plural,
                    w["metadata"]["name"],
                    err.message,
                )
                break
        return created

    def _pod_from_template(self, rt: ResourceType, w: Obj, ordinal: int) -> Obj:
        template = copy.deepcopy((w.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        wname = w["metadata"]["name"]
        labels = dict(tmeta.get("labels") or {})
        spec = template.get("spec") or {}
        if rt.plural == "statefulsets":
            name = f"{wname}-{ordinal}"
            labels["statefulset.kubernetes.io/pod-name"] = name
            labels["apps.kubernetes.io/pod-index"] = str(ordinal)
            spec.setdefault("hostname", name)
            if (w.get("spec") or {}).get("serviceName"):
                spec.setdefault("subdomain", w["spec"]["serviceName"])
        else:
            name = ""  # the API server names it from generateName, as the pod controllers ask
        meta: Obj = {
            "name": name,
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": rt.api_version,
                    "kind": rt.kind,
                    "name": wname,
                    "uid": w["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        if not name:  # controller_utils getPodsPrefix: "<controller>-"
            del meta["name"]
            meta["generateName"] = f"{wname}-"
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def _delete_pods(self, rt: ResourceType, pods: list[Obj], n: int) -> list[Obj]:
        if rt.plural == "statefulsets":
            # highest ordinal first, like the StatefulSet controller
            victims = sorted(
                pods, key=lambda p: int(p["metadata"]["name"].rsplit("-", 1)[-1]), reverse=True
            )[:n]
        else:
            # the ReplicaSet controller's choice, pod-deletion-cost included (replicaset_ranking)
            ns = pods[0]["metadata"].get("namespace", "") if pods else ""
            rs = self.api.store.get(rt.key, ns, _owner_name(pods))
            related = ranking.related_pods(
                rs or {}, self.api.store.list(rt.key, ns), self.api.store.list(PODS, ns)
            )
            now = int(self.api.clock().timestamp() * 1e9)
            victims = ranking.pods_to_delete(pods, related, n, now=now)
        names = {v["metadata"]["name"] for v in victims}
        for v in victims:
            with contextlib.suppress(errors.ApiError):
                self.api.delete(self._rt("pods"), v["metadata"]["namespace"], v["metadata"]["name"])
        return [p for p in pods if p["metadata"]["name"] not in names]

    def _write_status(self, rt: ResourceType, w: Obj, pods: list[Obj]) -> None:
        current = {
            p["metadata"]["name"]: p
            for p in self._owned(w["metadata"]["namespace"], w["metadata"]["uid"])
        }
        pods = list(current.values())
        ready = sum(1 for p in pods if is_ready(p))
        status: Obj = dict(w.get("status") or {})
        status.update(
            {
                "observedGeneration": w["metadata"].get("generation", 1),
                "replicas": len(pods),
                "readyReplicas": ready,
                "availableReplicas": ready,
            }
        )
        if rt.plural == "statefulsets":
            status.update({"currentReplicas": len(pods), "updatedReplicas": len(pods)})
        else:
            status["fullyLabeledReplicas"] = len(pods)
        omitempty = ["readyReplicas", "unavailableReplicas"]
        if rt.plural != "statefulsets":
            omitempty.append("availableReplicas")
        for field in omitempty:
            if status.get(field) == 0:
                status.pop(field)  # omitempty, as the Go types serialise
        if status == w.get("status"):
            return
        with contextlib.suppress(errors.ApiError):
            self.api.update(
                rt,
                w["metadata"]["namespace"],
                w["metadata"]["name"],
                {**w, "status": status},
                subresource="status",
            )

    def _reconcile_deployment(self, ns: str, name: str) -> None:
        d = self.api.store.get(("apps", "deployments"), ns, name)
        if d is None or d["metadata"].get("deletionTimestamp"):
            return
        rs_rt = self._rt("replicasets")
        owned = self._owned(ns, d["metadata"]["uid"], REPLICASETS)
        pod_hash = deployments.template_hash((d.get("spec") or {}).get("template"))
        want = int((d.get("spec") or {}).get("replicas", 1))
        new = next(
            (r for r in owned if r["metadata"]["labels"].get(deployments.HASH_LABEL) == pod_hash),
            None,
        )
        try:
            if new is None:
                rev = 1 + max((deployments.revision(r) for r in owned), default=0)
                new = self.api.create(rs_rt, ns, deployments.new_replicaset(d, pod_hash, rev))
                owned.append(new)
            for rs in owned:
                # the new ReplicaSet gets every replica, old ones none (no rolling pace)
                size = want if rs is new else 0
                if int(rs["spec"].get("replicas", 1)) != size:
                    spec = {**rs["spec"], "replicas": size}
                    self.api.update(rs_rt, ns, rs["metadata"]["name"], {**rs, "spec": spec})
            d = self._sync_revision(d, new, owned)
        except errors.ApiError as err:
            log.warning("deployment %s/%s: %s", ns, name, err.message)
            return
        current = self._owned(ns, d["metadata"]["uid"], REPLICASETS)
        fresh = next((r for r in current if r["metadata"]["name"] == new["metadata"]["name"]), None)
        now = format_time(self.api.clock())
        status = deployments.deployment_status(d, current, fresh, now=now)
        if status != d.get("status"):
            with contextlib.suppress(errors.ApiError):
                self.api.update(
                    self._rt("deployments"), ns, name, {**d, "status": status}, subresource="status"
                )

    def _sync_revision(self, d: Obj, new: Obj, owned: list[Obj]) -> Obj:
        """The new ReplicaSet's revision on it and on the Deployment, as upstream keeps them
        (`kubectl rollout undo` and `rollout history` read them)."""
        rev = deployments.new_revision(new, owned)
        new = self.api.store.get(REPLICASETS, *_ns_name(new)) or new  # scaled just now
        updated = deployments.with_revision(new, rev)
        if updated is not None:
            self.api.update(self._rt("replicasets"), *_ns_name(new), updated)
        updated = deployments.with_revision(d, rev)
        if updated is None:
            return d
        return self.api.update(self._rt("deployments"), *_ns_name(d), updated)[0]

    # ---- the kubelet -------------------------------------------------------------------------

    def _start_pod(self, ns: str, name: str, uid: str, now: float) -> None:
        pod = self.api.store.get(PODS, ns, name)
        if pod is None or pod["metadata"]["uid"] != uid:
            return
        status = pod.get("status") or {}
        if status.get("phase", "Pending") != "Pending" or status.get("startTime"):
            return  # someone else (a test) owns this pod's status
        pod, host_ip = nodes.bind(self.api, self.registry, pod)  # the scheduler's part
        immediate = self.ready_delay <= 0
        ts = format_time(self.api.clock())
        ip = kubelet.pod_ip(next(self._ips))
        new = kubelet.running_status(
            pod, ts=ts, ip=ip, ready=immediate, host_ip=host_ip or "10.0.0.1"
        )
        self._write_pod_status(pod, new)
        if not immediate:
            self._ready_due.append((now + self.ready_delay, ns, name, uid))

    def _make_ready(self, ns: str, name: str, uid: str) -> None:
        pod = self.api.store.get(PODS, ns, name)
        if pod is None or pod["metadata"]["uid"] != uid:
            return
        if (pod.get("status") or {}).get("phase") != "Running":
            return  # stopped, or someone else took over its status
        self._write_pod_status(
            pod, kubelet.ready_status(pod["status"], ts=format_time(self.api.clock()))
        )

    def _write_pod_status(self, pod: Obj, status: Obj) -> None:
        meta = pod["metadata"]
        with contextlib.suppress(errors.ApiError):
            self.api.update(
                self._rt("pods"),
                meta["namespace"],
                meta["name"],
                {**pod, "status": status},
                subresource="status",
            )


def _owner_name(pods: list[Obj]) -> str:
    ref = controller_ref(pods[0]) if pods else None
    return str((ref or {}).get("name", ""))


def _ns_name(obj: Obj) -> tuple[str, str]:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
