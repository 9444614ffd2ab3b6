"""pytest fixtures for a real Prometheus (the server code lives in sandbox/prometheus.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.prometheus import (
    PrometheusServer,
    Series,
    encode_write_request,
    free_port,
    remote_write,
    remote_write_sync,
    snappy_literal,
)

__all__ = [
    "PrometheusServer",
    "Series",
    "encode_write_request",
    "free_port",
    "prometheus",
    "remote_write",
    "remote_write_sync",
    "snappy_literal",
]


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[PrometheusServer]:
    """A running real Prometheus, private to one test, stopped afterwards."""
    workdir = tmp_path / "prometheus"
    workdir.mkdir()
    server = PrometheusServer(workdir)
    server.start()
    try:
        yield server
    finally:
        server.close()
