"""The one place a failure becomes a `metav1.Status` response."""

from __future__ import annotations

import json

from aiohttp import web

from adapter.errors import StatusError


def status_body(code: int, reason: str, message: str) -> dict[str, object]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def status_response(err: StatusError) -> web.Response:
    """A StatusError as the JSON Status the Kubernetes API machinery expects."""
    body = json.dumps(status_body(err.code, err.reason, err.message), separators=(",", ":"))
    return web.Response(status=err.code, text=body, content_type="application/json")
