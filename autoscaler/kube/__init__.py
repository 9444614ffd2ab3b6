"""The only code in autoscaler/ that talks to Kubernetes (through kubernetes-asyncio)."""

from autoscaler.kube.client import Conflict, KubeClient, KubeError, NotFound, connect
from autoscaler.kube.cluster import KubeCluster

__all__ = ["Conflict", "KubeClient", "KubeCluster", "KubeError", "NotFound", "connect"]
