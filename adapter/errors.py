"""The adapter's own exceptions: every failure a request can meet, with its metav1.Status.

Each edge (Prometheus client, Kubernetes client, rule engine, request parsing) catches what its
library raises and raises one of these `from` the cause. The server renders `StatusError` as a
`metav1.Status` in exactly one place (`adapter/server/status.py`); messages are safe to show a
client (no URLs, tokens or raw backend errors: log those instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class AdapterError(Exception):
    """Base of every error the adapter raises on purpose."""


class StatusError(AdapterError):
    """An error with the HTTP code, Status reason and client-safe message to answer with.

    `details` is the Status's `details` object, rendered only when not None: apimachinery's
    constructors differ here (NewNotFound/NewGenericServerResponse set `details: {}` or more,
    custom-metrics-apiserver's metric-not-found errors and NewBadRequest set none).
    """

    code: int = 500
    reason: str = "InternalError"

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        reason: str | None = None,
        details: Mapping[str, Any] | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, {self.message!r})"


class NotFound(StatusError):
    """404: the path names nothing this server serves."""

    code = 404
    reason = "NotFound"

    @classmethod
    def no_route(cls) -> NotFound:
        # what the apiserver's go-restful container answers for a path it has no route for
        # (NewGenericServerResponse(404, ...)): fixed text and an empty `details`
        return cls("the server could not find the requested resource", details={})


class MetricNotFound(NotFound):
    """404: the metric is unknown for the resource, or a named object has no value."""

    metric: str = ""
    resource: str | None = None  # None for external metrics
    name: str | None = None  # the named object without a value

    @classmethod
    def for_resource(cls, metric: str, resource: str) -> MetricNotFound:
        # wording of custom-metrics-apiserver's provider.NewMetricNotFoundError
        err = cls(f"the server could not find the metric {metric} for {resource}")
        err.metric, err.resource = metric, resource
        return err

    @classmethod
    def for_object(cls, metric: str, resource: str, name: str) -> MetricNotFound:
        # wording of provider.NewMetricNotFoundForSelectorError / ...ForError with a name
        err = cls(f"the server could not find the metric {metric} for {resource} {name}")
        err.metric, err.resource, err.name = metric, resource, name
        return err

    @classmethod
    def external(cls, metric: str) -> MetricNotFound:
        err = cls(f"the server could not find the external metric {metric}")
        err.metric = metric
        return err

    def as_requested(self, resource: str) -> MetricNotFound:
        """The same error naming `resource` as the request wrote it ("pod", "deployments"):
        upstream's provider prints the request's GroupResource, not the resolved one."""
        if self.resource is None or self.resource == resource:
            return self
        if self.name is None:
            return self.for_resource(self.metric, resource)
        return self.for_object(self.metric, resource, self.name)


class BadRequest(StatusError):
    """400: request input (a selector, a path segment) is malformed or unsupported."""

    code = 400
    reason = "BadRequest"


class Unauthorized(StatusError):
    """401: the request carries no valid credentials."""

    code = 401
    reason = "Unauthorized"


class Forbidden(StatusError):
    """403: the user is known but not allowed."""

    code = 403
    reason = "Forbidden"


class MethodNotAllowed(StatusError):
    """405: only GET is served, and no watch."""

    code = 405
    reason = "MethodNotAllowed"

    @classmethod
    def for_method(cls) -> MethodNotAllowed:
        # go-restful's 405 through NewGenericServerResponse: fixed text, empty `details`
        return cls("the server does not allow this method on the requested resource", details={})

    @classmethod
    def for_watch(cls, group: str) -> MethodNotAllowed:
        # NewMethodNotSupported(scope.Resource.GroupResource(), "watch"): the metrics storages
        # are registered as resource "*" of the group and implement no Watcher
        return cls(
            f'watch is not supported on resources of kind "*.{group}"',
            details={"group": group, "kind": "*"},
        )


class ServiceUnavailable(StatusError):
    """503: a backend the answer needs cannot be reached right now."""

    code = 503
    reason = "ServiceUnavailable"


class PrometheusUnavailable(ServiceUnavailable):
    """503: Prometheus is down, timing out, or answered with a server error."""

    def __init__(
        self, message: str = "unable to fetch metrics: the metrics backend is unavailable"
    ):
        super().__init__(message)


class PrometheusQueryError(StatusError):
    """500: Prometheus rejected a query a rule produced (a configuration problem, not input)."""

    def __init__(self, message: str = "unable to fetch metrics: the metrics query failed"):
        super().__init__(message)


class KubeUnavailable(ServiceUnavailable):
    """503: the Kubernetes API cannot be reached and the object cache has never synced."""

    def __init__(self, message: str = "unable to list objects: the Kubernetes API is unavailable"):
        super().__init__(message)


class ConfigError(AdapterError):
    """A startup problem (bad flag value, unreadable file); the CLI exits non-zero with it."""
