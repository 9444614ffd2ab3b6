"""`promscaler-autoscaler decide`: one decision step, JSON in and JSON out.

    promscaler-autoscaler decide < step.json          # one document -> one result
    promscaler-autoscaler decide --jsonl < steps.jsonl  # one per line in, one per line out

A document that is not valid gets one line on stderr naming the field and exit status 2. With
`--jsonl` an invalid line gets `{"error": "..."}` on its output line and the run goes on (exit 0).
The contract is docs/decision-document.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import IO, Any

from autoscaler.core import DocumentError, decide_document

__all__ = ["main"]

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


def _decide_line(line: bytes | str) -> dict[str, Any]:
    try:
        doc = json.loads(line)
    except ValueError as e:
        return {"error": f"(document): not JSON: {e}"}
    try:
        return decide_document(doc)
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


def run_jsonl(source: IO[bytes], out: IO[str]) -> int:
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    for batch in _batches(source):
        # blank lines (a trailing newline) carry no document
        results = [dumps(_decide_line(line)) for line in batch if line.strip()]
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
        result = decide_document(doc)
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
