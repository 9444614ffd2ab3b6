"""A PATCH request's body: its media type checked as the real server does (415 for unknown
ones, and for strategic merge on custom resources), decoded, and applied to the stored object
with `sandbox.patch`; errors worded as upstream's (400, or 422 for a JSON patch)."""

from __future__ import annotations

import json
from typing import Any

from sandbox import errors
from sandbox.errors import ApiError
from sandbox.patch import PatchError, json_patch, merge_patch, strategic_merge
from sandbox.resources import ResourceType

__all__ = ["APPLY", "JSON_PATCH", "MERGE", "STRATEGIC", "apply_patch"]

Obj = dict[str, Any]

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"


def apply_patch(rt: ResourceType, old: Obj, content_type: str, raw: bytes) -> Any:
    """The patched document (not yet validated or stored)."""
    ctype = content_type.split(";")[0].strip().lower()
    if ctype not in (MERGE, STRATEGIC, JSON_PATCH):
        raise ApiError(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - accepted media types include:"
            f" {JSON_PATCH}, {MERGE}, {STRATEGIC}",
        )
    if ctype == STRATEGIC and rt.custom:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            (
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json-patch+json, application/merge-patch+json, "
                "application/apply-patch+yaml"
            ),
        )
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        raise errors.bad_request(f"error decoding patch: {err}") from err
    try:
        if ctype == JSON_PATCH:
            return json_patch(old, doc)
        if not isinstance(doc, dict):
            raise PatchError("a merge patch must be a JSON object")
        return merge_patch(old, doc) if ctype == MERGE else strategic_merge(old, doc)
    except PatchError as err:
        if ctype == JSON_PATCH:
            raise ApiError(
                422,
                "Invalid",
                f"the server rejected our request due to an error in our request: {err}",
            ) from err
        raise errors.bad_request(str(err)) from err
