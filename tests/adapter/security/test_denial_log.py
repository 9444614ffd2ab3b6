"""Denials are logged once per (code, user, verb, path) per window, without secrets."""

from __future__ import annotations

import logging

from adapter.auth.guard import DenialLog
from tests.adapter.security.test_authn import Clock


def test_each_denial_is_logged_once_per_window(caplog):
    caplog.set_level(logging.WARNING, logger="adapter.auth.guard")
    clock = Clock()
    denials = DenialLog(clock=clock, window=60)
    for _ in range(5):
        denials.denied(403, "eve", "get", "/apis/x", "no RBAC rule")
    denials.denied(403, "eve", "list", "/apis/x", "no RBAC rule")
    denials.denied(401, "", "get", "/apis/x", "bearer token: rejected")
    assert len(caplog.records) == 3
    assert "user='eve' verb=get path='/apis/x': no RBAC rule" in caplog.records[0].getMessage()
    clock.t = 61
    denials.denied(403, "eve", "get", "/apis/x", "no RBAC rule")
    assert len(caplog.records) == 4


def test_the_log_is_bounded():
    denials = DenialLog(clock=Clock(), max_entries=10)
    for i in range(100):
        denials.denied(403, f"user-{i}", "get", "/", "-")
    assert len(denials._seen) == 10
