"""Delegated authentication and authorization, and input limits, for the metrics API server.

`options.build_guard` turns k8s.io/apiserver's flags into the `RequestGuard` the server calls
for every request; `limits` bounds what a request may send. See docs/security.md.
"""
