"""API errors as `metav1.Status` bodies, with the reasons and message texts of the real API.

Every failure the sandbox reports to a client is an `ApiError`; `status()` renders it once, in
one place, the way apimachinery's `k8s.io/apimachinery/pkg/api/errors` constructors do.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A failure with an HTTP code, a `StatusReason` and a human message."""

    def __init__(
        self, code: int, reason: str, message: str, *, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _qualified(resource: str, group: str) -> str:
    # apimachinery prints GroupResource as "deployments.apps", core resources bare
    return f"{resource}.{group}" if group else resource


def _details(resource: str, group: str, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"kind": resource}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    return details


def not_found(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{_qualified(resource, group)} "{name}" not found',
        details=_details(resource, group, name),
    )


def already_exists(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{_qualified(resource, group)} "{name}" already exists',
        details=_details(resource, group, name),
    )


def conflict(resource: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}',
        details=_details(resource, group, name),
    )


STALE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """422 Invalid; causes are (reason, field, message) like field.ErrorList."""
    qualified = f"{kind}.{group}" if group else kind
    text = "; ".join(f"{field}: {message}" for _, field, message in causes)
    if len(causes) > 1:
        text = "[" + ", ".join(f"{field}: {message}" for _, field, message in causes) + "]"
    details: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
    }
    if group:
        details["group"] = group
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {text}', details=details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def method_not_allowed(method: str) -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource"
        if not method
        else f"the server does not allow this method on the requested resource ({method})",
    )


def unsupported_media_type(content_type: str) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format: {content_type}",
    )


def path_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", details={})


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(message: str, *, resource: str = "", group: str = "", name: str = "") -> ApiError:
    details = _details(resource, group, name) if resource else None
    return ApiError(403, "Forbidden", message, details=details)


def service_unavailable(message: str) -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


def not_acceptable(accepted: list[str]) -> ApiError:
    return ApiError(
        406,
        "NotAcceptable",
        f"only the following media types are accepted: {', '.join(accepted)}",
    )


def internal(message: str) -> ApiError:
    return ApiError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        details={"causes": [{"message": message}]},
    )
