"""`promscaler-autoscaler convert`: KEDA ScaledObjects and native HPAs to Autoscalers.

    promscaler-autoscaler convert scaledobject.yaml --rules-out keda-rules.yaml > pas.yaml
    kubectl get scaledobjects -A -o yaml | promscaler-autoscaler convert - --rules-out r.yaml

Writes the Autoscalers (YAML, ready for `kubectl apply -f`) to stdout, the adapter rules
their queries need to --rules-out (a prometheus-adapter rule file; the chart takes its list as
`rules.external`), and one line on stderr for every field not carried over as it was.

Exit status: 0 when every Autoscaler behaves as its input; 1 when some field not carried over
changes behaviour or an object is not converted (the output is still written: read the notes);
2 for bad input or usage, or when an Autoscaler would be refused by the API server (nothing is
written then).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import yaml

from autoscaler.convert import Conversion, ConvertError, NotConverted, convert

__all__ = ["main"]

PROG = "promscaler-autoscaler convert"
EXIT_CHANGES_BEHAVIOUR = 1
EXIT_BAD_INPUT = 2
# libyaml's C parser and emitter when PyYAML has them: several times faster on a cluster's List
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Convert KEDA ScaledObjects (prometheus, cron, cpu and memory triggers, "
        "scalingModifiers formulas over prometheus triggers) and HorizontalPodAutoscalers "
        "(autoscaling/v2, v2beta2, v1) to Autoscalers. Each Autoscaler is checked against the "
        "CRD's schema and CEL rules before it is written.",
        epilog="Exit status: 0 converted as it was; 1 some field not carried over changes "
        "behaviour, or an object (a ScaledJob) is not converted (see stderr); 2 bad input, or "
        "an Autoscaler the API server would refuse. docs/migrating.md has the details.",
    )
    p.add_argument("file", help="YAML with one or more objects, or a List ('-' for stdin)")
    p.add_argument(
        "--rules-out",
        metavar="FILE",
        help="where to write the adapter rules (externalRules) the converted queries need; "
        "required when the input has prometheus triggers",
    )
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    conversions: list[Conversion] = []
    skipped: list[str] = []
    try:
        for doc in _objects(_read(args.file)):
            try:
                conversions.append(convert(doc))
            except NotConverted as err:
                skipped.append(str(err))
    except ConvertError as err:
        return _fail(str(err))
    rules = [r for c in conversions for r in c.external_rules]
    if rules and not args.rules_out:
        return _fail("the converted queries need adapter rules: give --rules-out FILE")
    if rules:
        Path(args.rules_out).write_text(_rules_text(conversions))
    if conversions:
        yaml.dump_all(
            [c.autoscaler for c in conversions], sys.stdout, Dumper=DUMPER, sort_keys=False
        )
    _report(conversions, sys.stderr)
    for line in skipped:
        sys.stderr.write(f"{PROG}: {line}\n")
    changed = skipped or any(c.changes_behaviour for c in conversions)
    return EXIT_CHANGES_BEHAVIOUR if changed else 0


def _read(name: str) -> str:
    try:
        return sys.stdin.read() if name == "-" else Path(name).read_text()
    except OSError as err:
        raise ConvertError(f"{name}: {err.strerror}") from err


def _objects(text: str) -> Iterator[Any]:
    """Every object of every YAML document; a `kind: List` (kubectl get -o yaml) unrolled."""
    try:
        docs = [d for d in yaml.load_all(text, Loader=LOADER) if d is not None]
    except yaml.YAMLError as err:
        raise ConvertError(f"not valid YAML: {_one_line(err)}") from err
    if not docs:
        raise ConvertError("the input holds no object")
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "List":
            yield from doc.get("items") or []
        else:
            yield doc


def _one_line(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}" if mark else problem


def _rules_text(conversions: list[Conversion]) -> str:
    header = "".join(
        f"# {c.source}: {', '.join(r['name']['as'] for r in c.external_rules)}\n"
        for c in conversions
        if c.external_rules
    )
    body = {"externalRules": [r for c in conversions for r in c.external_rules]}
    return (
        "# adapter rules written by `promscaler-autoscaler convert` for:\n"
        + header
        + yaml.dump(body, Dumper=DUMPER, sort_keys=False, width=1000)
    )


def _report(conversions: list[Conversion], out: TextIO) -> None:
    for c in conversions:
        for note in c.notes:
            mark = "CHANGES BEHAVIOUR" if note.changes_behaviour else "note"
            out.write(f"{PROG}: {c.source}: {note.field}: {mark}: {note.message}\n")


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: {message}\n")
    return EXIT_BAD_INPUT
