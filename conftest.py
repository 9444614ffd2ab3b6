"""Root conftest: shared fixtures for tests/ and e2e/ (a real Prometheus, the sandbox)."""

from importlib.util import find_spec

pytest_plugins = ["tests.support.prometheus"]
if find_spec("tests.support.sandbox") is not None:
    pytest_plugins.append("tests.support.sandbox")
