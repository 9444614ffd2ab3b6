"""Which end-to-end tests run where.

By default the e2e tests run on the sandbox (`sandbox/`), with a real Prometheus and the adapter
started by the test stack. With `PROMSCALER_E2E_KUBECONFIG` (and `PROMSCALER_E2E_PROMETHEUS_URL`)
they run against a real cluster, unchanged, except the tests marked
`@pytest.mark.sandbox_only("what it needs")`: those are skipped, the reason naming what they need
from the sandbox. docs/e2e.md says how to run them on kind.

`PROMSCALER_E2E_PLAN=1 pytest --collect-only -q e2e` prints the plan (`run <test>` or
`skip <test>: <reason>`) without running anything; tests/test_e2e_selection.py checks it.
"""

from __future__ import annotations

import os

import pytest

REAL_CLUSTER = "PROMSCALER_E2E_KUBECONFIG"


def real_cluster() -> bool:
    return bool(os.environ.get(REAL_CLUSTER))


def skip_reason(item: pytest.Item) -> str | None:
    """Why `item` does not run in this mode, or None when it runs."""
    marker = item.get_closest_marker("sandbox_only")
    if marker is None or not real_cluster():
        return None
    need = marker.args[0] if marker.args else "the sandbox"
    return f"needs the sandbox: {need}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        reason = skip_reason(item)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_collection_finish(session: pytest.Session) -> None:
    if not (session.config.option.collectonly and os.environ.get("PROMSCALER_E2E_PLAN")):
        return
    for item in session.items:
        reason = skip_reason(item)
        print(f"run {item.nodeid}" if reason is None else f"skip {item.nodeid}: {reason}")
