"""The kubelets' cAdvisor: per-container CPU and memory series, written into a real Prometheus.

What a Prometheus scraping each kubelet's `/metrics/cadvisor` would store, pushed by remote write
every `interval` seconds instead (the sandbox has no scrape targets):

- `container_cpu_usage_seconds_total` (a counter) and `container_memory_working_set_bytes` for
  every container of every Running pod, labelled `namespace`, `pod`, `container`, `image`, `id`
  (the cgroup), plus what a kubelet scrape config adds: `node`, `instance` (`<node IP>:10250`),
  `job="kubelet"`, `metrics_path="/metrics/cadvisor"`;
- the pod's own cgroup (`container=""`, `id=/kubepods/pod<uid>`), the sum of its containers;
- each node's root cgroup (`id="/"`, no pod labels): its pods plus `SYSTEM_CPU`/`SYSTEM_MEMORY`
  for the system daemons. This is what prometheus-adapter's default `nodeQuery` reads.

A container that goes away gets a staleness marker, as a failed scrape target's series do.

Load (annotations, so tests, the demo and `kubectl annotate` can set it; the pod's own wins over
its workload's, read on every tick):
- `load.sandbox.promscaler.dev/cpu`: CPU per pod, a Quantity ("250m" = a quarter core);
- `load.sandbox.promscaler.dev/cpu-total`: on a workload, CPU shared evenly by its Running pods
  (so scaling out lowers each pod's usage, as with real traffic);
- `load.sandbox.promscaler.dev/memory`: working set per pod ("128Mi").
A pod's usage is split evenly among its containers; without annotations each container idles at
`IDLE_CPU` and `IDLE_MEMORY`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from common.quantity import QuantityError, parse_quantity
from sandbox.nodes import host_ip
from sandbox.operations import Api
from sandbox.prometheus import Series, remote_write
from sandbox.store import Obj

__all__ = [
    "CPU",
    "CPU_TOTAL",
    "MEMORY",
    "Cadvisor",
    "ContainerLoad",
    "container_loads",
    "readings",
    "resource_rules",
]

log = logging.getLogger(__name__)

LOAD = "load.sandbox.promscaler.dev/"
CPU, CPU_TOTAL, MEMORY = f"{LOAD}cpu", f"{LOAD}cpu-total", f"{LOAD}memory"
IDLE_CPU = 0.001  # cores per container without a load: what a sleeping process shows
IDLE_MEMORY = 8 * 2**20  # bytes per container without a load
SYSTEM_CPU = 0.1  # cores the node's system daemons use (what NodeShape keeps out of allocatable)
SYSTEM_MEMORY = 512 * 2**20  # bytes, likewise
# Prometheus' staleness marker: the NaN a failed scrape writes so a series ends at once
STALE_NAN = struct.unpack("<d", (0x7FF0000000000002).to_bytes(8, "little"))[0]
OWNERS = {
    "ReplicaSet": ("apps", "replicasets"),
    "Deployment": ("apps", "deployments"),
    "StatefulSet": ("apps", "statefulsets"),
}

Key = tuple[tuple[str, str], ...]  # a series' labels, sorted


@dataclass(frozen=True)
class ContainerLoad:
    """One running container's usage right now."""

    namespace: str
    pod: str
    uid: str
    container: str
    image: str
    node: str
    instance: str
    cpu: float  # cores
    memory: float  # bytes


def _quantity(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(parse_quantity(value))
    except QuantityError:
        log.warning("ignoring a load annotation that is not a quantity: %r", value)
        return None


def _annotation(objs: Iterable[Obj], key: str) -> float | None:
    for obj in objs:  # the pod first, then its owners
        found = _quantity((obj["metadata"].get("annotations") or {}).get(key))
        if found is not None:
            return found
    return None


def pod_usage(chain: list[Obj], peers: int) -> tuple[float | None, float | None]:
    """(cores, bytes) for one pod from its own and its owners' annotations; None: idle."""
    cpu = _annotation(chain, CPU)
    if cpu is None:
        total = _annotation(chain[1:], CPU_TOTAL)
        cpu = None if total is None else total / max(peers, 1)
    return cpu, _annotation(chain, MEMORY)


def container_loads(
    pod: Obj, chain: list[Obj], peers: int, nodes: Mapping[str, Obj]
) -> list[ContainerLoad]:
    """The containers of one Running pod with its load split evenly between them."""
    containers = (pod.get("spec") or {}).get("containers") or []
    if not containers:
        return []
    cpu, memory = pod_usage(chain, peers)
    n = len(containers)
    meta, node = pod["metadata"], (pod.get("spec") or {}).get("nodeName") or ""
    ip = host_ip(nodes[node]) if node in nodes else ""
    return [
        ContainerLoad(
            namespace=meta["namespace"],
            pod=meta["name"],
            uid=meta["uid"],
            container=c.get("name", ""),
            image=c.get("image", ""),
            node=node,
            instance=f"{ip}:10250" if ip else node,
            cpu=IDLE_CPU if cpu is None else cpu / n,
            memory=IDLE_MEMORY if memory is None else memory / n,
        )
        for c in containers
    ]


def _labels(load: ContainerLoad, *, container: str | None) -> dict[str, str]:
    labels = {
        "job": "kubelet",
        "metrics_path": "/metrics/cadvisor",
        "node": load.node,
        "instance": load.instance,
    }
    cgroup = f"/kubepods/pod{load.uid}"
    labels |= {"namespace": load.namespace, "pod": load.pod}
    if container is None:  # the pod's cgroup
        return labels | {"container": "", "id": cgroup}
    return labels | {"container": container, "image": load.image, "id": f"{cgroup}/{container}"}


class UsageCounters:
    """CPU seconds accumulated per series key: counters that only go up while a key lives."""

    def __init__(self) -> None:
        self._totals: dict[Key, tuple[float, float]] = {}  # key -> (last time, total seconds)

    def advance(self, key: Key, cores: float, now: float) -> float:
        last, total = self._totals.get(key, (now, 0.0))
        total += cores * max(now - last, 0.0)
        self._totals[key] = (now, total)
        return total

    def forget(self, keys: Iterable[Key]) -> None:
        for key in keys:
            self._totals.pop(key, None)


def _key(name: str, labels: Mapping[str, str]) -> Key:
    return tuple(sorted({"__name__": name, **labels}.items()))


def _aggregate(
    loads: list[ContainerLoad], by: Callable[[ContainerLoad], str]
) -> dict[str, tuple[ContainerLoad, float, float]]:
    """(a representative, summed cores, summed bytes) per `by` value."""
    out: dict[str, tuple[ContainerLoad, float, float]] = {}
    for load in loads:
        first, cpu, memory = out.get(by(load), (load, 0.0, 0.0))
        out[by(load)] = (first, cpu + load.cpu, memory + load.memory)
    return out


def readings(loads: list[ContainerLoad], nodes: Mapping[str, str]) -> dict[Key, tuple[float, str]]:
    """Every series' current (cores or bytes, kind): containers, pod cgroups, node roots
    (`nodes`: node name -> its `instance` label)."""
    out: dict[Key, tuple[float, str]] = {}

    def put(labels: Mapping[str, str], cpu: float, memory: float) -> None:
        out[_key("container_cpu_usage_seconds_total", labels)] = (cpu, "counter")
        out[_key("container_memory_working_set_bytes", labels)] = (memory, "gauge")

    for load in loads:
        put(_labels(load, container=load.container), load.cpu, load.memory)
    for first, cpu, memory in _aggregate(loads, lambda c: c.uid).values():
        put(_labels(first, container=None), cpu, memory)
    per_node = _aggregate([c for c in loads if c.node], lambda c: c.node)
    for name, instance in nodes.items():
        _, cpu, memory = per_node.get(name, (None, 0.0, 0.0))
        labels = {"job": "kubelet", "metrics_path": "/metrics/cadvisor", "id": "/"}
        put(labels | {"node": name, "instance": instance}, SYSTEM_CPU + cpu, SYSTEM_MEMORY + memory)
    return out


class Cadvisor:
    """Writes the cluster's usage series into Prometheus at `url` every `interval` seconds."""

    def __init__(
        self,
        api: Api,
        url: str,
        *,
        interval: float = 1.0,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.api = api
        self.url = url
        self.interval = interval  # seconds between writes: a scrape interval
        self._wall = wall
        self._counters = UsageCounters()
        self._last_keys: set[Key] = set()
        self._last_time = 0.0
        self._failing = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sandbox-cadvisor")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self.write_once()
            await asyncio.sleep(self.interval)

    def loads(self) -> list[ContainerLoad]:
        """Every Running pod's containers and their load, from the store."""
        store = self.api.store
        nodes = {n["metadata"]["name"]: n for n in store.list(("", "nodes"), "")}
        pods = store.list(("", "pods"))
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        chains = [self._owners(p) for p in running]
        peers: dict[str, int] = {}  # Running pods per top-level owner, for cpu-total
        for chain in chains:
            top = chain[-1]["metadata"]["uid"]
            peers[top] = peers.get(top, 0) + 1
        loads = []
        for pod, chain in zip(running, chains, strict=True):
            count = peers[chain[-1]["metadata"]["uid"]]
            loads += container_loads(pod, chain, count, nodes)
        return loads

    def _owners(self, pod: Obj) -> list[Obj]:
        """The pod and its controllers up to the top one (pod, ReplicaSet, Deployment)."""
        chain = [pod]
        namespace = pod["metadata"]["namespace"]
        while True:
            refs = chain[-1]["metadata"].get("ownerReferences") or []
            ref = next((r for r in refs if r.get("controller")), None)
            key = OWNERS.get(ref.get("kind", "")) if ref else None
            owner = self.api.store.get(key, namespace, ref["name"]) if key and ref else None
            if owner is None or len(chain) > 3:  # a cycle of references cannot loop forever
                return chain
            chain.append(owner)

    def collect(self, now: float) -> list[Series]:
        """The samples of one write at unix time `now` (counters advance, gone series go stale)."""
        nodes = {
            n["metadata"]["name"]: f"{host_ip(n)}:10250"
            for n in self.api.store.list(("", "nodes"), "")
        }
        current = readings(self.loads(), nodes)
        out: list[Series] = []
        for key, (value, kind) in current.items():
            sample = self._counters.advance(key, value, now) if kind == "counter" else value
            out.append((dict(key), [(now, sample)]))
        gone = self._last_keys - current.keys()
        out += [(dict(key), [(now, STALE_NAN)]) for key in gone]
        self._counters.forget(gone)
        self._last_keys = set(current)
        return out

    async def write_once(self) -> None:
        """One write; a Prometheus that is down is logged (once per outage) and retried."""
        now = max(self._wall(), self._last_time + 0.001)  # strictly increasing sample times
        series = self.collect(now)
        self._last_time = now
        try:
            await remote_write(self.url, series)
        except Exception as err:
            if not self._failing:
                log.warning("cadvisor: remote write to %s failed: %s", self.url, err)
            self._failing = True
            return
        if self._failing:
            log.info("cadvisor: remote write to %s works again", self.url)
        self._failing = False


def resource_rules(window: str) -> str:
    """The rule file's `resourceRules` that read what this simulated cAdvisor writes, as
    prometheus-adapter's documented kubelet rules do, with `window` as the rate range and the
    reported window (short in tests and the demo: the series are written every second)."""
    return f"""resourceRules:
  cpu:
    containerQuery: >-
      sum by (<<.GroupBy>>)
      (rate(container_cpu_usage_seconds_total{{container!="",<<.LabelMatchers>>}}[{window}]))
    nodeQuery: >-
      sum by (<<.GroupBy>>)
      (rate(container_cpu_usage_seconds_total{{id="/",<<.LabelMatchers>>}}[{window}]))
    resources: &resources
      overrides:
        node: {{resource: node}}
        namespace: {{resource: namespace}}
        pod: {{resource: pod}}
    containerLabel: container
  memory:
    containerQuery: >-
      sum by (<<.GroupBy>>) (container_memory_working_set_bytes{{container!="",<<.LabelMatchers>>}})
    nodeQuery: >-
      sum by (<<.GroupBy>>) (container_memory_working_set_bytes{{id="/",<<.LabelMatchers>>}})
    resources: *resources
    containerLabel: container
  window: {window}
"""
