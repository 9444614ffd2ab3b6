"""The metrics adapter: custom.metrics.k8s.io and external.metrics.k8s.io served from Prometheus."""
