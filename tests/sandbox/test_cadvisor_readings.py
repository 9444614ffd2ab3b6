"""The simulated cAdvisor's arithmetic (pure): which load applies, and the series it makes."""

from __future__ import annotations

import pytest

from sandbox import cadvisor

POD = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "annotations": {}},
    "spec": {"nodeName": "n1", "containers": [{"name": "a", "image": "i"}, {"name": "b"}]},
}
NODE = {"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.9"}]}}


def obj(**annotations):
    return {"metadata": {"annotations": annotations}}


@pytest.mark.parametrize(
    ("chain", "peers", "want"),
    [
        pytest.param([obj()], 1, (None, None), id="no-annotation-idles"),
        pytest.param([obj(**{cadvisor.CPU: "250m"})], 1, (0.25, None), id="pod-cpu"),
        pytest.param(
            [obj(**{cadvisor.CPU: "1"}), obj(**{cadvisor.CPU: "2"})], 1, (1.0, None), id="pod-wins"
        ),
        pytest.param([obj(), obj(), obj(**{cadvisor.CPU_TOTAL: "3"})], 4, (0.75, None), id="total"),
        pytest.param([obj(**{cadvisor.CPU_TOTAL: "3"})], 1, (None, None), id="total-not-on-pod"),
        pytest.param([obj(**{cadvisor.MEMORY: "1Gi"})], 1, (None, 2.0**30), id="memory"),
        pytest.param([obj(**{cadvisor.CPU: "lots"})], 1, (None, None), id="bad-quantity-ignored"),
    ],
)
def test_pod_usage_precedence(chain, peers, want):
    assert cadvisor.pod_usage(chain, peers) == want


def test_containers_share_the_pod_load_and_carry_the_node():
    chain = [obj(**{cadvisor.CPU: "500m", cadvisor.MEMORY: "64Mi"})]
    loads = cadvisor.container_loads(POD, chain, 1, {"n1": NODE})
    assert [(c.container, c.cpu, c.memory, c.instance) for c in loads] == [
        ("a", 0.25, 32 * 2**20, "10.0.0.9:10250"),
        ("b", 0.25, 32 * 2**20, "10.0.0.9:10250"),
    ]


def test_readings_add_pod_cgroups_and_node_roots():
    loads = cadvisor.container_loads(POD, [obj(**{cadvisor.CPU: "1"})], 1, {"n1": NODE})
    got = cadvisor.readings(loads, {"n1": "10.0.0.9:10250", "n2": "10.0.0.2:10250"})
    cpu = {
        (dict(key).get("pod", ""), dict(key).get("container"), dict(key)["node"]): value
        for key, (value, kind) in got.items()
        if dict(key)["__name__"] == "container_cpu_usage_seconds_total"
    }
    assert cpu == {
        ("p", "a", "n1"): 0.5,
        ("p", "b", "n1"): 0.5,
        ("p", "", "n1"): 1.0,  # the pod's cgroup
        ("", None, "n1"): 1.0 + cadvisor.SYSTEM_CPU,  # the node's root cgroup, id="/"
        ("", None, "n2"): cadvisor.SYSTEM_CPU,  # an empty node still reports its daemons
    }
