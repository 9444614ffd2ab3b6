"""The rule file: YAML in, a validated immutable `RulesConfig` out (or a `RuleError`).

The accepted format is prometheus-adapter's (`pkg/config/config.go`, loaded there with
`yaml.UnmarshalStrict`): unknown keys, wrong types and duplicate keys are errors, and every
error names its place, e.g. `config: rules[3].name.matches: invalid regular expression "(":
missing ), unterminated subpattern`. Regexes, templates and durations are compiled here, once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from adapter.rules.durations import find_window, parse_duration
from adapter.rules.errors import RuleError, TemplateError
from adapter.rules.matchers import is_label_name
from adapter.rules.regexes import compile_re2
from adapter.rules.templating import Template, compile_template

__all__ = [
    "QUERY_FIELDS",
    "NameMapping",
    "ResourceMapping",
    "ResourceOverride",
    "ResourceRule",
    "ResourceRules",
    "Rule",
    "RulesConfig",
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


@dataclass(frozen=True)
class ResourceRule:
    """`resourceRules.cpu` / `.memory` (metrics.k8s.io); validated and kept for later use."""

    container_query: Template
    node_query: Template
    resources: ResourceMapping
    container_label: str


@dataclass(frozen=True)
class ResourceRules:
    cpu: ResourceRule
    memory: ResourceRule
    window_seconds: int | None


@dataclass(frozen=True)
class RulesConfig:
    """A loaded rule file."""

    rules: tuple[Rule, ...] = ()
    external_rules: tuple[Rule, ...] = ()
    resource_rules: ResourceRules | None = None
    source: str = "config"

    @property
    def series_queries(self) -> tuple[str, ...]:
        """Distinct seriesQuery strings, in file order: one discovery call each."""
        queries = (rule.series_query for rule in self.rules + self.external_rules)
        return tuple(dict.fromkeys(queries))

    def rules_for(self, series_query: str) -> tuple[Rule, ...]:
        """The custom then external rules sharing `series_query`, in file order."""
        return tuple(r for r in self.rules + self.external_rules if r.series_query == series_query)


# ---- YAML with duplicate-key detection ----------------------------------------------------------


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (as the peer's UnmarshalStrict does)."""


def _strict_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


class _Scalar(str):
    """A plain scalar YAML would type (int, float, bool, timestamp), kept as its text: the
    peer's yaml.v2 fills string fields with the scalar's text (`as: 2xx`, `matches: 123`)."""

    tag: str = ""


def _text_scalar(loader: _StrictLoader, node: yaml.ScalarNode) -> _Scalar:
    scalar = _Scalar(loader.construct_scalar(node))
    scalar.tag = node.tag
    return scalar


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _strict_mapping)
for _tag in ("bool", "int", "float", "timestamp"):
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _text_scalar)
_TRUE = frozenset({"true", "yes", "on"})  # YAML 1.1 booleans, as yaml.v2 reads them


def _boolean(value: Any, place: _Place, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, _Scalar) and value.tag.endswith(":bool"):
        return value.lower() in _TRUE
    raise place.error(f"must be true or false, not {_type_name(value)}")


# ---- validation --------------------------------------------------------------------------------


class _Place:
    """A position in the document, for messages: `config: rules[3].name`."""

    def __init__(self, source: str, rel: str = "") -> None:
        self.source = source
        self.rel = rel

    @property
    def path(self) -> str:
        return f"{self.source}: {self.rel}" if self.rel else self.source

    def __truediv__(self, key: str | int) -> _Place:
        if isinstance(key, int):
            return _Place(self.source, f"{self.rel}[{key}]")
        return _Place(self.source, f"{self.rel}.{key}" if self.rel else key)

    def error(self, problem: str) -> RuleError:
        return RuleError(self.path, problem)


def _mapping(value: Any, place: _Place, allowed: frozenset[str]) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise place.error(f"must be a mapping, not {_type_name(value)}")
    for key in value:
        if key not in allowed:
            raise (place / str(key)).error(
                f"unknown key {key!r} (allowed: {', '.join(sorted(allowed))})"
            )
    return value


def _string(value: Any, place: _Place, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise place.error(f"must be a string, not {_type_name(value)}")
    if required and not value.strip():
        raise place.error("is required and must not be empty")
    return str(value)


def _list(value: Any, place: _Place) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise place.error(f"must be a list, not {_type_name(value)}")
    return value


def _type_name(value: Any) -> str:
    if isinstance(value, _Scalar):
        return {"bool": "a boolean", "timestamp": "a timestamp"}.get(
            value.tag.rpartition(":")[2], "a number"
        )
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else "null"


def _regex(value: Any, place: _Place) -> re.Pattern[str]:
    text = _string(value, place, required=True)
    try:
        return compile_re2(text)
    except ValueError as err:
        raise place.error(f'invalid regular expression "{text}": {err}') from err


def _template(value: Any, place: _Place, fields: frozenset[str]) -> Template:
    text = _string(value, place, required=True)
    try:
        return compile_template(text, fields=fields)
    except TemplateError as err:
        raise place.error(f"invalid template: {err}") from err


def _filters(value: Any, place: _Place) -> tuple[SeriesFilter, ...]:
    filters = []
    for index, entry in enumerate(_list(value, place)):
        at = place / index
        entry = _mapping(entry, at, frozenset({"is", "isNot"}))
        keys = [key for key in ("is", "isNot") if entry.get(key) not in (None, "")]
        if len(keys) != 1:
            both = "cannot have both an `is` and an `isNot` expression in a single filter"
            raise at.error(both if keys else "must have either an `is` or an `isNot` expression")
        filters.append(SeriesFilter(_regex(entry[keys[0]], at / keys[0]), keys[0] == "is"))
    return tuple(filters)


def _resources(value: Any, place: _Place) -> ResourceMapping:
    raw = _mapping(value, place, frozenset({"template", "overrides", "namespaced"}))
    template = None
    if raw.get("template") not in (None, ""):
        template = _template(raw["template"], place / "template", RESOURCE_FIELDS)
        if "Resource" not in template.source:
            raise (place / "template").error("must include at least <<.Resource>>")
    overrides = []
    for label, target in _mapping(raw.get("overrides"), place / "overrides", _ANY).items():
        at = place / "overrides" / str(label)
        if not isinstance(label, str) or not is_label_name(label):
            raise at.error(f"{label!r} is not a Prometheus label name")
        target = _mapping(target, at, frozenset({"group", "resource"}))
        group = _string(target.get("group"), at / "group")
        resource = _string(target.get("resource"), at / "resource", required=True)
        overrides.append(ResourceOverride(str(label), group, resource))
    namespaced = _boolean(raw.get("namespaced"), place / "namespaced", True)
    return ResourceMapping(tuple(overrides), template, namespaced)


class _AnyKeys(frozenset[str]):
    def __contains__(self, key: object) -> bool:
        return True


_ANY = _AnyKeys()


def _name(value: Any, place: _Place) -> NameMapping:
    raw = _mapping(value, place, frozenset({"matches", "as"}))
    matches = _MATCH_ALL
    if raw.get("matches") not in (None, ""):
        matches = _regex(raw["matches"], place / "matches")
    as_ = _string(raw.get("as"), place / "as")
    if not as_:
        if matches.groups > 1:
            raise (place / "as").error(
                f"is required when name.matches has {matches.groups} capture groups"
            )
        as_ = "$1" if matches.groups == 1 else "$0"
    return NameMapping(matches, as_)


_RULE_KEYS = frozenset({"seriesQuery", "seriesFilters", "resources", "name", "metricsQuery"})


def _rule(value: Any, place: _Place, kind: Literal["custom", "external"], position: int) -> Rule:
    raw = _mapping(value, place, _RULE_KEYS)
    query = _template(raw.get("metricsQuery"), place / "metricsQuery", QUERY_FIELDS)
    return Rule(
        kind=kind,
        position=position,
        where=place.path,
        series_query=_string(raw.get("seriesQuery"), place / "seriesQuery", required=True),
        filters=_filters(raw.get("seriesFilters"), place / "seriesFilters"),
        resources=_resources(raw.get("resources"), place / "resources"),
        name=_name(raw.get("name"), place / "name"),
        metrics_query=query,
        window_seconds=find_window(query),
    )


def _resource_rule(value: Any, place: _Place) -> ResourceRule:
    keys = frozenset({"containerQuery", "nodeQuery", "resources", "containerLabel"})
    raw = _mapping(value, place, keys)
    if not raw:
        raise place.error("is required (containerQuery, nodeQuery, resources, containerLabel)")
    label = _string(raw.get("containerLabel"), place / "containerLabel")
    if label and not is_label_name(label):
        raise (place / "containerLabel").error(f"{label!r} is not a Prometheus label name")
    container = _template(raw.get("containerQuery"), place / "containerQuery", QUERY_FIELDS)
    return ResourceRule(
        container_query=container,
        node_query=_template(raw.get("nodeQuery"), place / "nodeQuery", QUERY_FIELDS),
        resources=_resources(raw.get("resources"), place / "resources"),
        container_label=label,
    )


def _resource_rules(value: Any, place: _Place) -> ResourceRules | None:
    if value is None:
        return None
    raw = _mapping(value, place, frozenset({"cpu", "memory", "window"}))
    window = None
    if raw.get("window") is not None:
        text = _string(raw["window"], place / "window")
        try:
            window = round(parse_duration(text))
        except ValueError as err:
            raise (place / "window").error(str(err)) from err
    return ResourceRules(
        _resource_rule(raw.get("cpu"), place / "cpu"),
        _resource_rule(raw.get("memory"), place / "memory"),
        window,
    )


def _rules(value: Any, place: _Place, kind: Literal["custom", "external"]) -> tuple[Rule, ...]:
    build: Callable[[Any, int], Rule] = lambda raw, i: _rule(raw, place / i, kind, i)  # noqa: E731
    return tuple(build(raw, index) for index, raw in enumerate(_list(value, place)))


def load_rules(text: str, *, source: str = "config") -> RulesConfig:
    """Parse and validate a rule file; RuleError (a ValueError) names the place of a problem."""
    try:
        document = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass
    except yaml.YAMLError as err:
        raise RuleError(source, f"invalid YAML: {err}") from err
    root = _Place(source)
    raw = _mapping(document, root, frozenset({"rules", "externalRules", "resourceRules"}))
    return RulesConfig(
        rules=_rules(raw.get("rules"), root / "rules", "custom"),
        external_rules=_rules(raw.get("externalRules"), root / "externalRules", "external"),
        resource_rules=_resource_rules(raw.get("resourceRules"), root / "resourceRules"),
        source=source,
    )
