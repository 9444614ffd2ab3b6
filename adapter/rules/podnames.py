"""The names a workload's pods had, have and will have, as one RE2 regex (a Pods metric's
history, docs/predictive.md "Where the history comes from").

A label selector names the pods of a workload *now*; over two weeks of history the workload's
pods were others (rollouts, scale-ins, evictions). Kubernetes names a controller's pods after
the controller, so the pods the selector matches now tell which names the workload's pods had:

- a Deployment's pods (and an Argo Rollout's): their ReplicaSet is `<deployment>-<hash>` and
  carries the pod label `pod-template-hash=<hash>`, where hash is `rand.SafeEncodeString` of a
  uint32 in decimal (1 to 10 characters, each digit mapped into `[bcdf4-9]`); the pod is
  `generateName` `<replicaset>-`, cut to 58 characters, plus 5 characters of `rand.String`'s
  alphabet (`names.SimpleNameGenerator`). Any hash matches: earlier rollouts count.
- a StatefulSet's pods: `<statefulset>-<ordinal>`.
- another controller's pods (a DaemonSet, a Job, a ReplicaSet of its own): `generateName`, cut
  to 58 characters, plus 5 random characters.
- a pod without a controller, or whose name is not of the shape its controller gives: its own
  name, exactly.

Each pattern is checked against the pod it came from (a pattern that misses it falls back to
the exact name). Names are regex-escaped, so nothing in them changes the pattern's structure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from adapter.rules.matchers import regex_escape

__all__ = ["HASH_LABEL", "PodLineage", "pod_name_pattern"]

HASH_LABEL = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
RANDOM = "[bcdfghjklmnpqrstvwxz2456789]"  # k8s.io/apimachinery/pkg/util/rand alphanums
RANDOM_LENGTH = 5  # names.SimpleNameGenerator's randomLength
MAX_BASE = 58  # names.MaxGeneratedNameLength (63 - 5): a longer generateName is cut to it
HASH = "[bcdf4-9]"  # SafeEncodeString of '0'..'9' (27-character alphabet, rune % 27)
HASH_LENGTHS = range(1, 11)  # fmt.Sprint of a uint32: 1 to 10 digits
ORDINAL = "-(?:0|[1-9][0-9]*)"  # a StatefulSet pod's `-%d`
_HASH_TEXT = re.compile(f"{HASH}{{1,10}}")


class PodLineage(NamedTuple):
    """What a pod's metadata says about where its name came from."""

    name: str
    generate_name: str = ""  # metadata.generateName
    controller_kind: str = ""  # kind of the ownerReference with `controller: true`
    controller_name: str = ""
    template_hash: str = ""  # the pod-template-hash label


def pod_name_pattern(pods: Iterable[PodLineage]) -> str | None:
    """An RE2 alternation matching (fully, as PromQL's `=~` does) the names of the pods of
    the workloads `pods` belong to; None when there are no pods."""
    patterns = sorted({_pattern(pod) for pod in pods})
    return "|".join(patterns) if patterns else None


def _pattern(pod: PodLineage) -> str:
    for candidate in (_replicaset_of_deployment(pod), _statefulset(pod), _generated(pod)):
        # a controller that named its pod some other way: the pattern must at least match it
        if candidate is not None and re.fullmatch(f"(?:{candidate})", pod.name):
            return candidate
    return regex_escape(pod.name)


def _replicaset_of_deployment(pod: PodLineage) -> str | None:
    h, owner = pod.template_hash, pod.controller_name
    if pod.controller_kind != "ReplicaSet" or not _HASH_TEXT.fullmatch(h):
        return None
    if not owner.endswith(f"-{h}") or pod.generate_name != f"{owner}-":
        return None
    base = owner[: -len(h)]  # "<deployment>-"
    if len(base) + max(HASH_LENGTHS) + 1 <= MAX_BASE:  # never cut: one compact alternative
        n = RANDOM_LENGTH
        return f"{regex_escape(base)}{HASH}{{1,10}}-{RANDOM}{{{n}}}"
    # a long name: the generateName `<deployment>-<hash>-` is cut at 58 characters, at a
    # place that depends on the hash's length; one alternative per length
    shapes = {_render([*base, *[HASH] * n, "-"]) for n in HASH_LENGTHS}
    return "|".join(sorted(shapes))


def _statefulset(pod: PodLineage) -> str | None:
    if pod.controller_kind != "StatefulSet" or not pod.controller_name:
        return None
    return f"{regex_escape(pod.controller_name)}{ORDINAL}"


def _generated(pod: PodLineage) -> str | None:
    if not pod.controller_kind or not pod.generate_name:
        return None  # no controller: nothing says which other pods were the same workload
    return _render(list(pod.generate_name))


def _render(base: list[str]) -> str:
    """`base` (characters, and HASH classes) cut as SimpleNameGenerator cuts a generateName,
    followed by the random suffix, as a regex: literals escaped, repeated classes counted."""
    tokens = [*base[:MAX_BASE], *[RANDOM] * RANDOM_LENGTH]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token not in (HASH, RANDOM):
            out.append(regex_escape(token))
            i += 1
            continue
        run = i
        while run < len(tokens) and tokens[run] == token:
            run += 1
        out.append(token if run - i == 1 else f"{token}{{{run - i}}}")
        i = run
    return "".join(out)
