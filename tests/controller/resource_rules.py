"""The resource rules of the end-to-end stack (`e2e_stack(resource_metrics=True)`)."""

from sandbox.cadvisor import resource_rules

# metrics.k8s.io from the sandbox's simulated cAdvisor; short ranges because the cAdvisor
# writes every second and tests want answers in seconds
RESOURCE_RULES = "\n" + resource_rules("5s")
