"""The guard's Kubernetes backend: TokenReviews, SubjectAccessReviews, and following a ConfigMap
(`adapter.auth.follow.AuthBackend`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from adapter.auth.authn import TokenReviewResult
from adapter.auth.authz import AccessDecision
from adapter.kubewatch import list_and_watch
from adapter.server.auth_seam import UserInfo

if TYPE_CHECKING:
    from adapter.kube import KubeClient

__all__ = ["KubeAuth"]


class KubeAuth:
    """TokenReviews, SubjectAccessReviews and ConfigMap following (the guard's backend)."""

    def __init__(self, *, authentication: KubeClient, authorization: KubeClient) -> None:
        self._authn = authentication
        self._authz = authorization

    async def review_token(self, token: str) -> TokenReviewResult:
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        path = "/apis/authentication.k8s.io/v1/tokenreviews"
        status = (await self._authn.json("POST", path, body=review)).get("status") or {}
        if not status.get("authenticated"):
            return TokenReviewResult(authenticated=False, error=str(status.get("error", "")))
        user = status.get("user") or {}
        extra = {k: tuple(v or ()) for k, v in (user.get("extra") or {}).items()}
        info = UserInfo(
            name=user.get("username", ""),
            groups=tuple(user.get("groups") or ()),
            extra=extra,
            uid=user.get("uid", ""),
        )
        return TokenReviewResult(authenticated=bool(info.name), user=info)

    async def review_access(self, spec: Mapping[str, object]) -> AccessDecision:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": dict(spec),
        }
        path = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
        status = (await self._authz.json("POST", path, body=review)).get("status") or {}
        allowed = bool(status.get("allowed")) and not status.get("denied")
        reason = str(status.get("reason") or status.get("evaluationError") or "")
        return AccessDecision(allowed=allowed, reason=reason)

    async def watch_configmap(
        self, namespace: str, name: str
    ) -> AsyncIterator[Mapping[str, str] | None]:
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        query = [("fieldSelector", f"metadata.name={name}")]
        last: Mapping[str, str] | bool | None = False  # False: nothing yielded yet
        async for kind, obj in list_and_watch(self._authn, path, query=query):
            if kind == "SYNC":
                items = obj["items"]
                data = (items[0].get("data") or {}) if items else None
            else:
                data = None if kind == "DELETED" else (obj.get("data") or {})
            if data != last:
                last = data
                yield data
