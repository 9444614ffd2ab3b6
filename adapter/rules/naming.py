"""Series names and labels -> API metric names and Kubernetes resources, per rule.

Metric names: every `seriesFilters` entry and `name.matches` must pass (unanchored search),
then `name.as` is expanded (Go `Regexp.Expand`) against the leftmost match of `name.matches`.

Resources, both directions as the peer (`pkg/naming/resource_converter.go`, `lbl_res.go`):
- label -> resource: an override names it; otherwise the `template` is turned into a pattern
  (`<<.Group>>` and `<<.Resource>>` become captures) and the captured group/resource is
  resolved with the `ResourceResolver`. Unknown resources are skipped.
- resource -> label: the override naming that resource; otherwise the template rendered with
  the resource's singular name and its group with `.`/`-` turned into `_`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from adapter.rules.config import ResourceMapping, Rule
from adapter.rules.errors import TemplateError
from adapter.rules.matchers import is_label_name
from adapter.rules.regexes import expand
from adapter.rules.resources import GroupResource, ResourceInfo, ResourceResolver
from adapter.rules.templating import Record

__all__ = ["NAMESPACES", "ResourceLabels", "metric_name"]

NAMESPACES = GroupResource("", "namespaces")
_GROUP_MARK, _RESOURCE_MARK = "\x00group\x00", "\x00resource\x00"


def metric_name(rule: Rule, series: str) -> str | None:
    """The API metric name for series `series` under `rule`, or None when filtered out."""
    if not all(series_filter.passes(series) for series_filter in rule.filters):
        return None
    match = rule.name.matches.search(series)
    if match is None:
        return None
    return expand(rule.name.as_, match)


def _sanitize_group(group: str) -> str:
    return group.replace(".", "_").replace("-", "_")


def _label_patterns(mapping: ResourceMapping) -> tuple[re.Pattern[str], ...]:
    """Patterns that recognise template-made labels: the peer's lazy one, then one whose group
    capture is greedy and may be empty (so `kube_networking_k8s_io_ingress` finds
    `networking.k8s.io`, and `kube__pod` the core group)."""
    if mapping.template is None:
        return ()
    try:
        rendered = mapping.template.render(
            Record({"Group": _GROUP_MARK, "Resource": _RESOURCE_MARK})
        )
    except TemplateError:
        return ()
    patterns = []
    for group_capture in ("(?P<group>.+?)", "(?P<group>.*)"):
        parts = re.split(f"({_GROUP_MARK}|{_RESOURCE_MARK})", rendered)
        captures = {_GROUP_MARK: group_capture, _RESOURCE_MARK: "(?P<resource>.+?)"}
        seen: set[str] = set()
        body = []
        for part in parts:
            if part in captures and part not in seen:
                body.append(captures[part])
                seen.add(part)
            elif part in captures:  # a repeated field must repeat the same text
                body.append("(?P=group)" if part == _GROUP_MARK else "(?P=resource)")
            else:
                body.append(re.escape(part))
        patterns.append(re.compile("^" + "".join(body) + "$"))
    return tuple(dict.fromkeys(patterns))


@dataclass
class ResourceLabels:
    """One rule's label <-> resource mapping against one resolver, with memoised look-ups.

    Not frozen (it caches): make one per discovery pass or per query, never share across
    resolvers. The caches hold one entry per distinct label name.
    """

    mapping: ResourceMapping
    resolver: ResourceResolver
    _by_label: dict[str, ResourceInfo | None] = field(default_factory=dict)
    _patterns: tuple[re.Pattern[str], ...] | None = None
    unresolved: set[str] = field(default_factory=set)  # overrides naming unknown resources

    def resource_for_label(self, label: str) -> ResourceInfo | None:
        """The resource whose object names label `label` holds, if any."""
        if label in self._by_label:
            return self._by_label[label]
        info = self._lookup(label)
        self._by_label[label] = info
        return info

    def _lookup(self, label: str) -> ResourceInfo | None:
        if label == "__name__":
            return None
        for override in self.mapping.overrides:
            if override.label == label:
                info = self.resolver.resolve(override.resource, override.group)
                if info is None:
                    self.unresolved.add(_describe(override.group, override.resource))
                return info
        if self._patterns is None:
            self._patterns = _label_patterns(self.mapping)
        for pattern in self._patterns:
            match = pattern.match(label)
            if match is None:
                continue
            info = self._resolve(match)
            if info is not None:
                return info
        return None

    def _resolve(self, match: re.Match[str]) -> ResourceInfo | None:
        resource = match.group("resource")
        group = match.groupdict().get("group") or ""
        # the label carries the group with "." and "-" turned into "_": try it as written,
        # then with "_" read back as "." (the peer only tries the former)
        for candidate in dict.fromkeys((group, group.replace("_", "."))):
            info = self.resolver.resolve(resource, candidate)
            if info is not None:
                return info
        return None

    def label_for_resource(self, resource: GroupResource) -> str | None:
        """The label that holds names of `resource`'s objects, or None when unmapped."""
        for override in self.mapping.overrides:
            info = self.resolver.resolve(override.resource, override.group)
            if info is not None and info.group_resource == resource:
                return override.label
        if self.mapping.template is None:
            return None
        info = self.resolver.resolve(resource.resource, resource.group)
        singular = info.singular if info is not None else None
        if not singular:
            return None
        try:
            label = self.mapping.template.render(
                Record({"Group": _sanitize_group(resource.group), "Resource": singular})
            )
        except TemplateError:
            return None
        return label if is_label_name(label) else None


def _describe(group: str, resource: str) -> str:
    return f"{resource}.{group}" if group else resource
