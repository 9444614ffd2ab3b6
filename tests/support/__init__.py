"""Test support shared by tests/ and e2e/: real Prometheus, remote write, the sandbox."""
