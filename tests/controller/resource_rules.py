"""The resource rules of the end-to-end stack (`e2e_stack(resource_metrics=True)`)."""

# metrics.k8s.io from the sandbox's simulated cAdvisor (e2e_stack(resource_metrics=True)); short
# ranges because the cAdvisor writes every second and tests want answers in seconds
RESOURCE_RULES = """
resourceRules:
  cpu:
    containerQuery: >-
      sum by (<<.GroupBy>>)
      (rate(container_cpu_usage_seconds_total{container!="",<<.LabelMatchers>>}[5s]))
    nodeQuery: >-
      sum by (<<.GroupBy>>) (rate(container_cpu_usage_seconds_total{id="/",<<.LabelMatchers>>}[5s]))
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  memory:
    containerQuery: >-
      sum by (<<.GroupBy>>) (container_memory_working_set_bytes{container!="",<<.LabelMatchers>>})
    nodeQuery: >-
      sum by (<<.GroupBy>>) (container_memory_working_set_bytes{id="/",<<.LabelMatchers>>})
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  window: 5s
"""
