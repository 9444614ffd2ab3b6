"""Metrics providers: the seam the server knows (`seams`) and the Prometheus-backed one."""
