"""`make demo`: the whole bundle on the local sandbox, with a real Prometheus.

A load generator plays a load shape (ramp, plateau, idle, burst) against two workloads in the
sandbox: `web`, whose pods serve requests (a Pods metric through custom.metrics.k8s.io), and
`worker`, which drains a queue (an External metric through external.metrics.k8s.io, with
`minReplicas: 0`). The adapter answers both from Prometheus; the autoscaler scales both. The
demo shows a live view and ends with a picture of load and replicas over time.
"""
