"""A local stand-in for the Kubernetes control plane, for the demo and the end-to-end tests.

`Sandbox(SandboxConfig(...))` is an HTTPS API server that kubectl and kubernetes-asyncio take
for a real one (for the calls this project makes): resources with resourceVersions, watches,
patches, the scale subresource, CRDs, a workload simulation, token/RBAC-like auth and an
aggregation layer. See sandbox/README.md.
"""

from sandbox.auth import Policy, User, parse_policy
from sandbox.server import Sandbox, SandboxConfig

__all__ = ["Policy", "Sandbox", "SandboxConfig", "User", "parse_policy"]
