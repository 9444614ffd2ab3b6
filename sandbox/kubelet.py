"""What a kubelet would write into a pod's status: pure functions of the pod and the time.

The workload simulation calls `running_status` when a pod appears and `ready_status` once the
configured delay has passed.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def condition(kind: str, value: str, ts: str, *, unready: list[str] | None = None) -> Obj:
    cond: Obj = {"type": kind, "status": value, "lastProbeTime": None, "lastTransitionTime": ts}
    if value == "False":
        cond["reason"] = "ContainersNotReady"
        cond["message"] = f"containers with unready status: [{' '.join(unready or [])}]"
    return cond


def pod_ip(n: int) -> str:
    return f"10.244.{n // 250}.{n % 250 + 1}"


def running_status(pod: Obj, *, ts: str, ip: str, ready: bool, host_ip: str = "10.0.0.1") -> Obj:
    """The status of a pod whose containers just started (Ready at once when `ready`)."""
    uid = pod["metadata"]["uid"]
    containers = (pod.get("spec") or {}).get("containers") or []
    names = [c.get("name", "") for c in containers]
    flag = "True" if ready else "False"
    return {
        **(pod.get("status") or {}),
        "phase": "Running",
        "startTime": ts,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "conditions": [
            condition("PodReadyToStartContainers", "True", ts),
            condition("Initialized", "True", ts),
            condition("Ready", flag, ts, unready=names),
            condition("ContainersReady", flag, ts, unready=names),
            condition("PodScheduled", "True", ts),
        ],
        "containerStatuses": [
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": "",
                "containerID": f"sandbox://{uid[:8]}-{c.get('name', '')}",
                "ready": ready,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": ts}},
            }
            for c in containers
        ],
    }


def ready_status(status: Obj, *, ts: str) -> Obj:
    """`status` with Ready/ContainersReady turned True and every container ready."""
    result = dict(status)
    result["conditions"] = [
        condition(c["type"], "True", ts)
        if c.get("type") in ("Ready", "ContainersReady") and c.get("status") != "True"
        else c
        for c in status.get("conditions") or []
    ]
    result["containerStatuses"] = [
        {**c, "ready": True} for c in status.get("containerStatuses") or []
    ]
    return result
