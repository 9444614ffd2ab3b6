"""The one place a failure becomes a `metav1.Status` response."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from adapter.errors import StatusError


def status_body(
    code: int, reason: str, message: str, details: Mapping[str, Any] | None = None
) -> dict[str, object]:
    """metav1.Status in its JSON field order; `details` only when given (it is omitempty)."""
    body: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = dict(details)
    body["code"] = code
    return body


def status_response(err: StatusError) -> web.Response:
    """A StatusError as the JSON Status the Kubernetes API machinery expects."""
    message, details = err.message, err.details
    if err.reason == "InternalError" and details is None:
        # as apimachinery's NewInternalError: the cause behind a fixed prefix and in `causes`
        message = f"Internal error occurred: {err.message}"
        details = {"causes": [{"message": err.message}]}
    body = json.dumps(status_body(err.code, err.reason, message, details), separators=(",", ":"))
    return web.Response(status=err.code, text=body, content_type="application/json")
