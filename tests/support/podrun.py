"""Run a container of the rendered chart with podman, as a kubelet would run it.

The pod's and the container's `securityContext`, the container's `args` and `env`, and its
volume mounts (ConfigMap and Secret volumes from the rendered objects, emptyDir as a tmpfs)
become podman flags. Anything else in those fields is refused (`NotMapped`) rather than
silently dropped: a test that claims "as the chart runs it" fails when the chart starts asking
for something this translation does not do. Networking is the host's (the sandbox and
Prometheus listen on loopback); ports, probes and resources are a cluster's business and are
left out on purpose.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# podman on this kind of machine: hybrid cgroups and no CAP_SYS_RESOURCE (docs: test-stack.md)
PODMAN = ["podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "--events-backend", "file"]
RUN_DEFAULTS = ["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096"]
SHELLS = ("/usr/bin/sh", "/usr/bin/dash", "/usr/bin/bash")  # merged /usr: /bin is a link


class NotMapped(Exception):
    """A field of the pod spec that this translation does not turn into podman flags."""


def podman() -> list[str]:
    return [*PODMAN, "--storage-driver", os.environ.get("STORAGE_DRIVER", "overlay")]


def _user(sc: dict[str, Any]) -> tuple[int | None, int | None, bool]:
    return sc.get("runAsUser"), sc.get("runAsGroup"), bool(sc.get("runAsNonRoot"))


def _seccomp(profile: dict[str, Any] | None) -> list[str]:
    kind = (profile or {}).get("type", "RuntimeDefault")
    if kind == "RuntimeDefault":
        return []  # podman's default profile is the runtime default
    if kind == "Unconfined":
        return ["--security-opt", "seccomp=unconfined"]
    raise NotMapped(f"seccompProfile.type {kind}")


POD_KEYS = {"runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup", "seccompProfile"}
CONTAINER_KEYS = {
    "allowPrivilegeEscalation",
    "readOnlyRootFilesystem",
    "runAsNonRoot",
    "runAsUser",
    "runAsGroup",
    "capabilities",
    "seccompProfile",
}


def security_flags(pod: dict[str, Any], container: dict[str, Any], *, image_user: str) -> list[str]:
    """podman flags for the pod's and the container's securityContext (the container's wins)."""
    if unknown := set(pod) - POD_KEYS:
        raise NotMapped(f"pod securityContext {sorted(unknown)}")
    if unknown := set(container) - CONTAINER_KEYS:
        raise NotMapped(f"container securityContext {sorted(unknown)}")
    merged = {**pod, **container}
    uid, gid, non_root = _user(merged)
    image_uid = image_user.partition(":")[0]
    if non_root:
        # the kubelet's check: the effective uid must be known to be non-zero
        effective = uid if uid is not None else (int(image_uid) if image_uid.isdigit() else None)
        if effective is None or effective == 0:
            raise ValueError(f"runAsNonRoot: the image's user {image_user!r} is not a non-zero uid")
    flags: list[str] = []
    if uid is not None:
        flags += ["--user", f"{uid}:{gid}" if gid is not None else str(uid)]
    if "fsGroup" in pod:
        flags += ["--group-add", str(pod["fsGroup"])]
    if merged.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    if merged.get("readOnlyRootFilesystem"):
        flags += ["--read-only", "--read-only-tmpfs=false"]
    caps = merged.get("capabilities") or {}
    if unknown := set(caps) - {"drop", "add"}:
        raise NotMapped(f"capabilities {sorted(unknown)}")
    flags += [f"--cap-drop={c}" for c in caps.get("drop", [])]
    flags += [f"--cap-add={c}" for c in caps.get("add", [])]
    return flags + _seccomp(merged.get("seccompProfile"))


def _find(objects: Sequence[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    if len(found) != 1:
        raise NotMapped(f"{kind}/{name} is not among the rendered objects")
    return found[0]


def _stage(files: dict[str, bytes], into: Path, *, mode: int, group: int | None) -> None:
    into.mkdir(parents=True)
    into.chmod(0o755)
    for name, data in files.items():
        path = into / name
        path.write_bytes(data)
        path.chmod(mode)
        if group is not None:
            os.chown(path, -1, group)  # what the kubelet does with fsGroup


def volume_flags(
    pod: dict[str, Any], container: dict[str, Any], objects: Sequence[dict[str, Any]], staging: Path
) -> list[str]:
    """--volume/--tmpfs flags for the container's mounts; Secret and ConfigMap contents are
    written under `staging` with the volume's defaultMode and the pod's fsGroup."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    group = (pod.get("securityContext") or {}).get("fsGroup")
    flags: list[str] = []
    for mount in container.get("volumeMounts", []):
        if unknown := set(mount) - {"name", "mountPath", "readOnly"}:
            raise NotMapped(f"volumeMount {mount['name']}: {sorted(unknown)}")
        volume = volumes[mount["name"]]
        target = mount["mountPath"]
        ro = ":ro" if mount.get("readOnly") else ""
        if "emptyDir" in volume:
            size = (volume["emptyDir"] or {}).get("sizeLimit", "64Mi").replace("Mi", "m")
            # the kubelet makes an emptyDir world-writable (0777), whatever the pod's user
            flags += ["--tmpfs", f"{target}:rw,size={size},mode=0777"]
            continue
        if "secret" in volume:
            spec = volume["secret"]
            obj = _find(objects, "Secret", spec["secretName"])
            files = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        elif "configMap" in volume:
            spec = volume["configMap"]
            obj = _find(objects, "ConfigMap", spec["name"])
            files = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
        else:
            raise NotMapped(f"volume {volume['name']}: {sorted(set(volume) - {'name'})}")
        if unknown := set(spec) - {"secretName", "name", "defaultMode"}:
            raise NotMapped(f"volume {volume['name']}: {sorted(unknown)}")
        source = staging / volume["name"]
        _stage(files, source, mode=spec.get("defaultMode", 0o644), group=group)
        flags += ["--volume", f"{source}:{target}{ro}"]
    return flags


def env_flags(container: dict[str, Any]) -> list[str]:
    flags: list[str] = []
    for var in container.get("env", []):
        if "value" not in var:
            raise NotMapped(f"env {var['name']}: only literal values")
        flags += ["--env", f"{var['name']}={var['value']}"]
    return flags


def run_command(
    *,
    name: str,
    image: str,
    pod: dict[str, Any],
    container: dict[str, Any],
    objects: Sequence[dict[str, Any]],
    staging: Path,
    image_user: str,
    extra_args: Sequence[str] = (),
    extra_flags: Sequence[str] = (),
) -> list[str]:
    """The `podman run` command line for `container` of `pod` (a rendered pod template spec)."""
    if "command" in container:
        raise NotMapped("command: the chart picks the program by args only")
    return [
        *podman(),
        "run",
        "--rm",
        "--name",
        name,
        "--network",
        "host",
        "--pull",
        "never",
        *RUN_DEFAULTS,
        *security_flags(
            pod.get("securityContext") or {},
            container.get("securityContext") or {},
            image_user=image_user,
        ),
        *volume_flags(pod, container, objects, staging),
        *env_flags(container),
        *extra_flags,
        image,
        *container.get("args", []),
        *extra_args,
    ]
