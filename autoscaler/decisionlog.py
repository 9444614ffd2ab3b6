"""The decision log: one JSON line per pass, `{"document": ..., "result": ...}`.

`promscaler-autoscaler run --decision-log FILE` wraps the core's `decide_document` with
`logged()`: each document is encoded exactly as the core received it, with the core's result
(or `"error"` when the core refused the document), on the event loop; the lines are written
by a thread, so a slow disk never stalls a reconcile. Files rotate by size as
`logging.handlers.RotatingFileHandler` does (FILE, FILE.1, ... FILE.N).

`jq -c .document FILE | promscaler-autoscaler decide --jsonl` reproduces every `result`;
`replay()` does that comparison (the soak and the tests use it).
"""

from __future__ import annotations

import argparse
import json
import logging
import logging.handlers
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

__all__ = [
    "DecisionLog",
    "DecisionLogSettings",
    "Mismatch",
    "add_flags",
    "logged",
    "read_log",
    "replay",
    "replay_stream",
    "settings_from",
]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
Decide = Callable[[JSON], JSON]
# compact, and NaN/Infinity kept as Python's json writes them: the core may see them
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
BATCH = 5000  # lines per write at most


def _encode(value: Any) -> str:
    """Compact JSON of `value`, with orjson (several times faster: the log's cost is mostly
    encoding) unless that could lose something: orjson writes both None and a non-finite float
    as null, so a text with a null is encoded again by the standard library, which keeps NaN
    and Infinity as Python's json writes (and reads) them."""
    try:
        data = orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):  # an int beyond 64 bits, say
        return _dumps(value)
    return _dumps(value) if b"null" in data else data.decode()


GATHER = 1.0  # seconds the writer waits for more lines: a wake-up costs more than a line


@dataclass(frozen=True)
class DecisionLogSettings:
    path: Path
    max_bytes: int = 100 * 1024 * 1024  # bytes per file before it rotates: ~30k passes
    backups: int = 5  # rotated files kept beside FILE (FILE.1 .. FILE.5)
    # lines waiting for the writer thread; beyond this a pass's line is dropped (and counted)
    # rather than holding the event loop on a disk that stopped answering
    queue_size: int = 10_000


class DecisionLog:
    """A line queue drained by one writer thread into a size-rotated file."""

    def __init__(self, settings: DecisionLogSettings) -> None:
        self.settings = settings
        self.dropped = 0  # lines lost because the queue was full
        self.written = 0
        self._queue: queue.Queue[str | None] = queue.Queue(maxsize=settings.queue_size)
        settings.path.parent.mkdir(parents=True, exist_ok=True)
        self._handler = logging.handlers.RotatingFileHandler(
            settings.path,
            maxBytes=settings.max_bytes,
            backupCount=settings.backups,
            encoding="utf-8",
        )
        self._handler.setFormatter(logging.Formatter("%(message)s"))
        self._limit = settings.max_bytes // 2  # characters per write: a file ends half full or more
        self._thread = threading.Thread(target=self._drain, name="decision-log", daemon=True)
        self._thread.start()

    def record(self, document: str, key: str, value: Any) -> None:
        """Queue one line (`document` already encoded, `key` "result" or "error"); never
        blocks."""
        line = f'{{"document":{document},"{key}":{_encode(value)}}}'
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.warning("decision log %s: %d lines dropped", self.settings.path, self.dropped)

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued, then stop the thread and close the file."""
        self._queue.put(None)
        self._thread.join(timeout)
        self._handler.close()

    def _drain(self) -> None:
        """Write what is queued in one call per batch, then let more gather for a moment: one
        write and one GIL hand-over per batch instead of per line keeps the log's CPU small."""
        done = False
        while not done:
            batch = [self._queue.get()]
            while not self._queue.empty() and len(batch) < BATCH:
                batch.append(self._queue.get_nowait())
            done = None in batch
            for chunk in _chunks([line for line in batch if line is not None], self._limit):
                # one record per chunk: the handler rotates between chunks, so no file grows
                # past max_bytes (unless one line alone is larger)
                self._handler.emit(logging.makeLogRecord({"msg": "\n".join(chunk)}))
                self.written += len(chunk)
            if not done:
                time.sleep(GATHER)


def _chunks(lines: list[str], limit: int) -> Iterator[list[str]]:
    """`lines` in runs of at most `limit` characters (at least one line each)."""
    chunk: list[str] = []
    size = 0
    for line in lines:
        if chunk and size + len(line) + 1 > limit:
            yield chunk
            chunk, size = [], 0
        chunk.append(line)
        size += len(line) + 1
    if chunk:
        yield chunk


def logged(decide: Decide, sink: DecisionLog) -> Decide:
    """`decide` that records each document with its result (or the error it raised)."""

    def decide_and_log(document: JSON) -> JSON:
        encoded = _encode(document)  # before the call: the document as the core got it
        try:
            result = decide(document)
        except ValueError as e:
            sink.record(encoded, "error", str(e))
            raise
        sink.record(encoded, "result", result)
        return result

    return decide_and_log


def read_log(paths: Iterable[Path]) -> Iterator[JSON]:
    """The entries of a decision log's files, oldest file first as given."""
    for path in paths:
        with path.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


@dataclass(frozen=True)
class Mismatch:
    index: int  # the entry's position in the log
    now: str  # the document's `now`
    logged: str  # the logged result (or error), as JSON
    replayed: str  # what `decide --jsonl` gave


def replay(entries: list[JSON], *, command: list[str] | None = None) -> list[Mismatch]:
    """The entries whose result `promscaler-autoscaler decide --jsonl` does not reproduce."""
    return list(replay_stream(entries, command=command))


def replay_stream(
    entries: Iterable[JSON], *, command: list[str] | None = None
) -> Iterator[Mismatch]:
    """Feed the documents to `decide --jsonl` and compare its answers with the logged results
    as they come, compared as JSON text (so NaN equals NaN); an entry with `error` matches a
    replayed `{"error": ...}` with the same text. Streams: a log of any size fits."""
    cmd = command or [sys.executable, "-m", "autoscaler", "decide", "--jsonl"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    assert proc.stdout is not None
    # (index, now, wanted) of each document sent, in order; bounded so memory stays flat
    sent: queue.Queue[tuple[int, str, str] | None] = queue.Queue(maxsize=10_000)

    def feed(stdin: IO[str]) -> None:
        try:
            for i, e in enumerate(entries):
                want = _dumps(e["result"]) if "result" in e else _dumps({"error": e["error"]})
                sent.put((i, str(e["document"].get("now")), want))
                stdin.write(_dumps(e["document"]) + "\n")
        finally:
            sent.put(None)
            stdin.close()

    feeder = threading.Thread(target=feed, args=(proc.stdin,), daemon=True)
    feeder.start()
    with proc, proc.stdout as answers:
        for line in answers:
            item = sent.get()
            if item is None:
                break
            index, now, want = item
            if want != line.rstrip("\n"):
                yield Mismatch(index, now, want, line.rstrip("\n"))
        feeder.join()


def add_flags(parser: argparse.ArgumentParser, *, positive_int: Callable[[str], int]) -> None:
    """`run`'s decision-log flags."""
    d = DecisionLogSettings(Path("-"))
    g = parser.add_argument_group("decision log (docs/autoscaler.md: why did it scale?)")
    g.add_argument(
        "--decision-log",
        type=Path,
        metavar="FILE",
        help="write each pass's decision document and result here, one JSON line each",
    )
    g.add_argument(
        "--decision-log-max-size",
        type=positive_int,
        default=d.max_bytes // (1024 * 1024),
        metavar="MIB",
        help="rotate the file when it reaches this many MiB",
    )
    g.add_argument(
        "--decision-log-backups",
        type=positive_int,
        default=d.backups,
        metavar="N",
        help="rotated files kept beside it (FILE.1 .. FILE.N)",
    )


def settings_from(args: argparse.Namespace) -> DecisionLogSettings | None:
    if args.decision_log is None:
        return None
    return DecisionLogSettings(
        args.decision_log,
        max_bytes=args.decision_log_max_size * 1024 * 1024,
        backups=args.decision_log_backups,
    )
