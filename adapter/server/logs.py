"""Structured logs: one JSON object per line on stderr.

Fields: `ts` (RFC3339, UTC, milliseconds), `level`, `logger`, `msg`, plus whatever a call passes
in `extra=` (the request log adds `request_id`, `method`, `path`, `code`, `route`, `duration_ms`,
`user`). `-v` maps to levels in `level_for`.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, tz=UTC)
        out: dict[str, object] = {
            "ts": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def level_for(verbosity: int) -> int:
    """klog -v to a logging level: 0 warnings, 1-2 info, 3+ debug (with one line per request)."""
    if verbosity <= 0:
        return logging.WARNING
    if verbosity <= 2:
        return logging.INFO
    return logging.DEBUG


def configure(verbosity: int) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level_for(verbosity))
