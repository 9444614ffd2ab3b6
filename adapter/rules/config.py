"""The rule file: YAML in, a validated immutable `RulesConfig` out (or a `RuleError`).

The accepted format is prometheus-adapter's (`pkg/config/config.go`, loaded there with
`yaml.UnmarshalStrict`): unknown keys, wrong types and duplicate keys are errors, and every
error names its place, e.g. `config: rules[3].name.matches: invalid regular expression "(":
missing ), unterminated subpattern`. Regexes, templates and durations are compiled here, once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import yaml

from adapter.rules.backends import DEFAULT_BACKEND, Backend, check_backend_name, load_backends
from adapter.rules.durations import find_window, parse_duration
from adapter.rules.errors import RuleError, TemplateError
from adapter.rules.matchers import is_label_name
from adapter.rules.regexes import compile_re2
from adapter.rules.templating import Template, compile_template
from adapter.rules.yamlfields import (
    ANY_KEYS,
    Place,
    StrictLoader,
    boolean,
    mapping,
    sequence,
    string,
)

__all__ = [
    "QUERY_FIELDS",
    "NameMapping",
    "ResourceMapping",
    "ResourceOverride",
    "ResourceRule",
    "ResourceRules",
    "Rule",
    "RulesConfig",
    "SeriesCall",
    "SeriesFilter",
    "load_rules",
]

QUERY_FIELDS = frozenset(
    {"Series", "LabelMatchers", "LabelValuesByName", "GroupBy", "GroupBySlice"}
)
RESOURCE_FIELDS = frozenset({"Group", "Resource"})
_MATCH_ALL = re.compile(".*")


@dataclass(frozen=True)
class SeriesFilter:
    """`{is: re}` or `{isNot: re}`: an unanchored search on the series (metric) name."""

    pattern: re.Pattern[str]
    keep: bool  # True for `is`, False for `isNot`

    def passes(self, name: str) -> bool:
        return (self.pattern.search(name) is not None) == self.keep


@dataclass(frozen=True)
class ResourceOverride:
    """`overrides: {<label>: {group, resource}}`: the label's value names that object."""

    label: str
    group: str
    resource: str


@dataclass(frozen=True)
class ResourceMapping:
    """How a rule's labels map to Kubernetes resources."""

    overrides: tuple[ResourceOverride, ...] = ()
    template: Template | None = None  # e.g. `kube_<<.Group>>_<<.Resource>>`
    namespaced: bool = True  # external rules: False ignores the request's namespace


@dataclass(frozen=True)
class NameMapping:
    """`name: {matches, as}`: series name -> API metric name."""

    matches: re.Pattern[str] = _MATCH_ALL  # `.*` when absent, as the peer
    as_: str = "$0"  # Go Expand syntax; `$0` with no capture group, `$1` with one


@dataclass(frozen=True, eq=False)
class Rule:
    """One entry of `rules` (kind "custom") or `externalRules` (kind "external").

    Compared by identity: a rule is one place in one file.
    """

    kind: Literal["custom", "external"]
    position: int  # index within its list; later rules win on conflicts, as with the peer
    where: str  # e.g. "config: rules[3]", for messages
    series_query: str
    filters: tuple[SeriesFilter, ...]
    resources: ResourceMapping
    name: NameMapping
    metrics_query: Template
    window_seconds: int | None  # the range of the query's first range selector, if any
    backend: str = DEFAULT_BACKEND  # the `backends:` entry its queries go to
    fingerprint: str = ""  # hash of the rule's text: equal rules need no re-discovery on reload


@dataclass(frozen=True)
class ResourceRule:
    """`resourceRules.cpu` / `.memory` (metrics.k8s.io); validated and kept for later use."""

    container_query: Template
    node_query: Template
    resources: ResourceMapping
    container_label: str
    backend: str = DEFAULT_BACKEND  # its own `backend:`, else `resourceRules.backend`


@dataclass(frozen=True)
class ResourceRules:
    cpu: ResourceRule
    memory: ResourceRule
    window_seconds: int | None
    backend: str = DEFAULT_BACKEND  # `resourceRules.backend`, the default of cpu and memory


@dataclass(frozen=True)
class SeriesCall:
    """One discovery call: a distinct seriesQuery sent to one backend."""

    backend: str
    series_query: str


@dataclass(frozen=True)
class RulesConfig:
    """A loaded rule file."""

    rules: tuple[Rule, ...] = ()
    external_rules: tuple[Rule, ...] = ()
    resource_rules: ResourceRules | None = None
    source: str = "config"
    backends: Mapping[str, Backend] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def series_queries(self) -> tuple[str, ...]:
        """Distinct seriesQuery strings, in file order (whatever their backend)."""
        return tuple(dict.fromkeys(call.series_query for call in self.series_calls))

    @property
    def series_calls(self) -> tuple[SeriesCall, ...]:
        """Distinct (backend, seriesQuery) pairs in file order: one discovery call each."""
        calls = (SeriesCall(r.backend, r.series_query) for r in self.rules + self.external_rules)
        return tuple(dict.fromkeys(calls))

    def rules_for(self, series_query: str, *, backend: str = DEFAULT_BACKEND) -> tuple[Rule, ...]:
        """The custom then external rules of `backend` sharing `series_query`, in file order."""
        return tuple(
            r
            for r in self.rules + self.external_rules
            if r.series_query == series_query and r.backend == backend
        )


# ---- validation --------------------------------------------------------------------------------


def _regex(value: Any, place: Place) -> re.Pattern[str]:
    text = string(value, place, required=True)
    try:
        return compile_re2(text)
    except ValueError as err:
        raise place.error(f'invalid regular expression "{text}": {err}') from err


def _template(value: Any, place: Place, fields: frozenset[str]) -> Template:
    text = string(value, place, required=True)
    try:
        return compile_template(text, fields=fields)
    except TemplateError as err:
        raise place.error(f"invalid template: {err}") from err


def _filters(value: Any, place: Place) -> tuple[SeriesFilter, ...]:
    filters = []
    for index, entry in enumerate(sequence(value, place)):
        at = place / index
        entry = mapping(entry, at, frozenset({"is", "isNot"}))
        keys = [key for key in ("is", "isNot") if entry.get(key) not in (None, "")]
        if len(keys) != 1:
            both = "cannot have both an `is` and an `isNot` expression in a single filter"
            raise at.error(both if keys else "must have either an `is` or an `isNot` expression")
        filters.append(SeriesFilter(_regex(entry[keys[0]], at / keys[0]), keys[0] == "is"))
    return tuple(filters)


def _resources(value: Any, place: Place) -> ResourceMapping:
    raw = mapping(value, place, frozenset({"template", "overrides", "namespaced"}))
    template = None
    if raw.get("template") not in (None, ""):
        template = _template(raw["template"], place / "template", RESOURCE_FIELDS)
        if "Resource" not in template.source:
            raise (place / "template").error("must include at least <<.Resource>>")
    overrides = []
    for label, target in mapping(raw.get("overrides"), place / "overrides", ANY_KEYS).items():
        at = place / "overrides" / str(label)
        if not isinstance(label, str) or not is_label_name(label):
            raise at.error(f"{label!r} is not a Prometheus label name")
        target = mapping(target, at, frozenset({"group", "resource"}))
        group = string(target.get("group"), at / "group")
        resource = string(target.get("resource"), at / "resource", required=True)
        overrides.append(ResourceOverride(str(label), group, resource))
    namespaced = boolean(raw.get("namespaced"), place / "namespaced", True)
    return ResourceMapping(tuple(overrides), template, namespaced)


def _name(value: Any, place: Place) -> NameMapping:
    raw = mapping(value, place, frozenset({"matches", "as"}))
    matches = _MATCH_ALL
    if raw.get("matches") not in (None, ""):
        matches = _regex(raw["matches"], place / "matches")
    as_ = string(raw.get("as"), place / "as")
    if not as_:
        if matches.groups > 1:
            raise (place / "as").error(
                f"is required when name.matches has {matches.groups} capture groups"
            )
        as_ = "$1" if matches.groups == 1 else "$0"
    return NameMapping(matches, as_)


_RULE_KEYS = frozenset(
    {"seriesQuery", "seriesFilters", "resources", "name", "metricsQuery", "backend"}
)


def _fingerprint(kind: str, raw: Mapping[str, Any]) -> str:
    # plain scalars are str subclasses holding their text, so the dump is the rule as written
    text = json.dumps([kind, raw], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _rule(
    value: Any,
    place: Place,
    kind: Literal["custom", "external"],
    position: int,
    backends: Mapping[str, Backend],
) -> Rule:
    raw = mapping(value, place, _RULE_KEYS)
    query = _template(raw.get("metricsQuery"), place / "metricsQuery", QUERY_FIELDS)
    return Rule(
        kind=kind,
        position=position,
        where=place.path,
        series_query=string(raw.get("seriesQuery"), place / "seriesQuery", required=True),
        filters=_filters(raw.get("seriesFilters"), place / "seriesFilters"),
        resources=_resources(raw.get("resources"), place / "resources"),
        name=_name(raw.get("name"), place / "name"),
        metrics_query=query,
        window_seconds=find_window(query),
        backend=check_backend_name(raw.get("backend"), place / "backend", backends),
        fingerprint=_fingerprint(kind, raw),
    )


def _resource_rule(
    value: Any, place: Place, backends: Mapping[str, Backend], default: str
) -> ResourceRule:
    keys = frozenset({"containerQuery", "nodeQuery", "resources", "containerLabel", "backend"})
    raw = mapping(value, place, keys)
    if not raw:
        raise place.error("is required (containerQuery, nodeQuery, resources, containerLabel)")
    label = string(raw.get("containerLabel"), place / "containerLabel")
    if label and not is_label_name(label):
        raise (place / "containerLabel").error(f"{label!r} is not a Prometheus label name")
    container = _template(raw.get("containerQuery"), place / "containerQuery", QUERY_FIELDS)
    return ResourceRule(
        container_query=container,
        node_query=_template(raw.get("nodeQuery"), place / "nodeQuery", QUERY_FIELDS),
        resources=_resources(raw.get("resources"), place / "resources"),
        container_label=label,
        backend=_backend_or(raw.get("backend"), place / "backend", backends, default),
    )


def _backend_or(value: Any, place: Place, backends: Mapping[str, Backend], default: str) -> str:
    return default if value is None else check_backend_name(value, place, backends)


def _resource_rules(
    value: Any, place: Place, backends: Mapping[str, Backend]
) -> ResourceRules | None:
    if value is None:
        return None
    raw = mapping(value, place, frozenset({"cpu", "memory", "window", "backend"}))
    backend = check_backend_name(raw.get("backend"), place / "backend", backends)
    window = None
    if raw.get("window") is not None:
        text = string(raw["window"], place / "window")
        try:
            window = round(parse_duration(text))
        except ValueError as err:
            raise (place / "window").error(str(err)) from err
    return ResourceRules(
        _resource_rule(raw.get("cpu"), place / "cpu", backends, backend),
        _resource_rule(raw.get("memory"), place / "memory", backends, backend),
        window,
        backend,
    )


def _rules(
    value: Any, place: Place, kind: Literal["custom", "external"], backends: Mapping[str, Backend]
) -> tuple[Rule, ...]:
    build: Callable[[Any, int], Rule] = lambda raw, i: _rule(  # noqa: E731
        raw, place / i, kind, i, backends
    )
    return tuple(build(raw, index) for index, raw in enumerate(sequence(value, place)))


def load_rules(text: str, *, source: str = "config") -> RulesConfig:
    """Parse and validate a rule file; RuleError (a ValueError) names the place of a problem."""
    try:
        document = yaml.load(text, Loader=StrictLoader)  # a SafeLoader subclass
    except yaml.YAMLError as err:
        raise RuleError(source, f"invalid YAML: {err}") from err
    root = Place(source)
    keys = frozenset({"rules", "externalRules", "resourceRules", "backends"})
    raw = mapping(document, root, keys)
    backends = load_backends(raw.get("backends"), root / "backends")
    return RulesConfig(
        rules=_rules(raw.get("rules"), root / "rules", "custom", backends),
        external_rules=_rules(
            raw.get("externalRules"), root / "externalRules", "external", backends
        ),
        resource_rules=_resource_rules(raw.get("resourceRules"), root / "resourceRules", backends),
        source=source,
        backends=backends,
    )
