"""`promscaler-autoscaler decide`: one decision step, JSON in and JSON out.

    promscaler-autoscaler decide < step.json          # one document -> one result
    promscaler-autoscaler decide --jsonl < steps.jsonl  # one per line in, one per line out

A document that is not valid gets one line on stderr naming the field and exit status 2. With
`--jsonl` an invalid line gets `{"error": "..."}` on its output line and the run goes on (exit 0).
The contract is docs/decision-document.md.

The document's autoscaler is judged as the API server judges it with our CRD (the schema and
the CEL rules, `autoscaler.core.spec_rules.check_spec`): a spec `kubectl apply` would refuse is
refused here too, never decided. The check runs after the core has parsed the document, so a
document the core refuses keeps its message, and once per distinct spec, so a stream of passes
of one autoscaler pays for it once.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

import orjson

from autoscaler.core import DocumentError, decide_document
from autoscaler.core.spec_rules import check_spec
from common.memo import remember

__all__ = ["decide_checked", "main"]

PROG = "promscaler-autoscaler decide"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Decide one autoscaling step (see docs/decision-document.md): the upstream HPA "
            "decision, with the Autoscaler's controls (pause annotations, activation, "
            "scaleToZero, fallback, schedules, conflict) around it when the document has them."
        ),
    )
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="one document per input line, one result per output line",
    )
    p.add_argument("-i", "--input", metavar="FILE", help="read from FILE instead of stdin")
    p.add_argument(
        "--pretty", action="store_true", help="indent the JSON result (single document only)"
    )
    return p


Decide = Callable[[Any], dict[str, Any]]

# the specs (with their metadata's labels and annotations) already found valid, as JSON bytes
_CHECKED: dict[bytes, bool] = {}
_CHECKED_LIMIT = 4096


def decide_checked(doc: Any) -> dict[str, Any]:
    """`decide_document`, and then the CRD's judgement of the document's autoscaler."""
    result = decide_document(doc)
    autoscaler = doc["autoscaler"]  # decide_document has required it to be an object
    spec, meta = autoscaler["spec"], autoscaler.get("metadata") or {}
    meta = {"labels": meta.get("labels", {}), "annotations": meta.get("annotations", {})}
    try:  # orjson: the key costs a few percent of a decision with json's encoder, not with it
        key: bytes | None = orjson.dumps([spec, meta])
    except TypeError:  # an integer beyond 64 bits: judge it every time
        key = None
    if key is None or key not in _CHECKED:
        check_spec({"metadata": meta, "spec": spec}, where="autoscaler.")
        # orjson writes NaN and infinities as null, which no valid spec holds: never remember
        # a key with null in it, so a spec with NaN is never taken for one already judged
        if key is not None and b"null" not in key:
            remember(_CHECKED, key, True, limit=_CHECKED_LIMIT)
    return result


def _decide_line(line: bytes | str, decide: Decide) -> dict[str, Any]:
    try:
        doc = json.loads(line)
    except ValueError as e:
        return {"error": f"(document): not JSON: {e}"}
    try:
        return decide(doc)
    except DocumentError as e:
        return {"error": str(e)}
    except Exception as e:  # a bug must not stop the stream; say so on this line
        return {"error": f"internal error: {type(e).__name__}: {e}"}


def _batches(source: IO[bytes]) -> Iterator[list[bytes]]:
    """The complete lines available now, batch by batch: a pipe answered line by line still gets
    each answer at once, and a bulk stream pays one write per batch instead of one per line."""
    read1 = getattr(source, "read1", source.read)
    pending = b""
    while True:
        chunk = read1(1 << 16)
        if not chunk:
            if pending.strip():
                yield [pending]
            return
        pending += chunk
        *complete, pending = pending.split(b"\n")
        if complete:
            yield complete


def run_jsonl(source: IO[bytes], out: IO[str], *, decide: Decide = decide_checked) -> int:
    """`decide` is the core's `decide_document` in the test that holds the core to upstream's
    bytes on documents the CRD refuses; the tool always judges the spec."""
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    for batch in _batches(source):
        # blank lines (a trailing newline) carry no document
        results = [dumps(_decide_line(line, decide)) for line in batch if line.strip()]
        if results:
            out.write("\n".join(results))
            out.write("\n")
            out.flush()
    return 0


def run_one(text: bytes, out: IO[str], *, pretty: bool) -> int:
    try:
        doc = json.loads(text)
    except ValueError as e:
        sys.stderr.write(f"{PROG}: (document): not JSON: {e}\n")
        return 2
    try:
        result = decide_checked(doc)
    except DocumentError as e:
        sys.stderr.write(f"{PROG}: invalid document: {e}\n")
        return 2
    out.write(json.dumps(result, indent=2 if pretty else None, ensure_ascii=False))
    out.write("\n")
    return 0


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        source = open(args.input, "rb") if args.input else sys.stdin.buffer  # noqa: SIM115
    except OSError as e:
        sys.stderr.write(f"{PROG}: cannot read {args.input}: {e.strerror}\n")
        return 2
    try:
        if args.jsonl:
            return run_jsonl(source, sys.stdout)
        return run_one(source.read(), sys.stdout, pretty=args.pretty)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if source is not sys.stdin.buffer:
            source.close()
