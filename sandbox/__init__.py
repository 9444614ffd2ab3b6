"""A local stand-in for the Kubernetes control plane, for the demo and the end-to-end tests."""
