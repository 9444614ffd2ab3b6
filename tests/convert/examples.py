"""Inputs for the converter's tests, after KEDA's and Kubernetes' documented examples (the
prometheus scaler page, the ScaledObject specification, the pause and cpu pages; the HPA
walkthrough). Each is a YAML text as a user would keep it."""

from __future__ import annotations

import yaml

# the prometheus scaler page's example
KEDA_PROMETHEUS = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: prometheus-scaledobject
  namespace: default
spec:
  scaleTargetRef:
    name: my-deployment
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus.monitoring.svc:9090
      threshold: '100'
      query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
"""

# the trigger specification: every optional field of the prometheus trigger
KEDA_PROMETHEUS_ALL_FIELDS = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: orders
  namespace: shop
spec:
  scaleTargetRef:
    name: orders
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://thanos-query.monitoring.svc:9090
      query: sum(rate(http_requests_total{deployment="orders"}[2m]))
      queryParameters: key-1=value-1,key-2=value-2
      threshold: '100.50'
      activationThreshold: '5.5'
      namespace: example-namespace
      customHeaders: X-Client-Id=cid,X-Tenant-Id=tid
      ignoreNullValues: "false"
      unsafeSsl: "false"
"""

# the prometheus page's bearer authentication example
KEDA_PROMETHEUS_AUTH = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: prometheus-scaledobject
  namespace: keda
spec:
  scaleTargetRef:
    name: keda-prom-test
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus.monitoring.svc:9090
      query: sum(rate(http_requests_total{app="keda-prom-test"}[2m]))
      threshold: '100'
      authModes: "bearer"
    authenticationRef:
      name: keda-prom-creds
"""

# the ScaledObject specification: every spec field, with a queue on Prometheus
KEDA_SPEC_ALL_FIELDS = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: worker
  namespace: jobs
  labels: {team: platform}
  annotations:
    scaledobject.keda.sh/transfer-hpa-ownership: "true"
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: StatefulSet
    name: worker
    envSourceContainerName: main
  pollingInterval: 30
  cooldownPeriod: 300
  initialCooldownPeriod: 120
  minReplicaCount: 0
  maxReplicaCount: 100
  fallback:
    failureThreshold: 3
    replicas: 6
    behavior: currentReplicasIfHigher
  advanced:
    restoreToOriginalReplicaCount: false
    horizontalPodAutoscalerConfig:
      name: keda-hpa-worker
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 300
          policies:
          - type: Percent
            value: 100
            periodSeconds: 15
  triggers:
  - type: prometheus
    name: queue
    metadata:
      serverAddress: http://prometheus.monitoring.svc:9090
      query: sum(rabbitmq_queue_messages_ready{queue="jobs"})
      threshold: '10'
"""

# idleReplicaCount 0 below minReplicaCount, restore on delete, scalingModifiers: KEDA-only
KEDA_IDLE_AND_MODIFIERS = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: api
  namespace: default
spec:
  scaleTargetRef:
    name: api
  idleReplicaCount: 0
  minReplicaCount: 2
  maxReplicaCount: 20
  advanced:
    restoreToOriginalReplicaCount: true
    scalingModifiers:
      formula: "(trig_one + trig_two) / 2"
      target: "2"
  triggers:
  - type: prometheus
    name: trig_one
    metricType: Value
    metadata:
      serverAddress: http://prometheus:9090
      query: max(api_latency_seconds{quantile="0.99"})
      threshold: '0.5'
  - type: prometheus
    name: trig_two
    metadata:
      serverAddress: http://prometheus:9090
      query: sum(api_inflight_requests)
      threshold: '20'
"""

# the pause page: paused-replicas and one-direction pauses; a cpu trigger beside prometheus
KEDA_PAUSED_WITH_CPU = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: web
  namespace: default
  annotations:
    autoscaling.keda.sh/paused-replicas: "4"
    autoscaling.keda.sh/paused-scale-in: "true"
spec:
  scaleTargetRef:
    name: web
  minReplicaCount: 1
  maxReplicaCount: 10
  cooldownPeriod: 60
  triggers:
  - type: cpu
    metricType: Utilization
    metadata:
      value: "60"
  - type: prometheus
    metadata:
      serverAddress: http://prometheus:9090
      query: sum(rate(http_requests_total{app="web"}[1m]))
      threshold: '50'
      activationThreshold: '1'
"""

# a trigger with no equivalent here
KEDA_KAFKA = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: consumer
  namespace: default
spec:
  scaleTargetRef:
    name: consumer
  minReplicaCount: 1
  triggers:
  - type: kafka
    metadata:
      bootstrapServers: kafka:9092
      consumerGroup: my-group
      topic: test-topic
      lagThreshold: '5'
  - type: prometheus
    metadata:
      serverAddress: http://prometheus:9090
      query: sum(kafka_consumergroup_lag{consumergroup="my-group"})
      threshold: '5'
"""

# the HPA walkthrough's php-apache, as autoscaling/v2 with an external metric and behavior
HPA_V2 = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: php-apache
  namespace: default
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{}'
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: php-apache
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 50
  - type: External
    external:
      metric:
        name: queue_messages_ready
        selector:
          matchLabels:
            queue: worker_tasks
      target:
        type: AverageValue
        averageValue: "30"
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 60
      policies:
      - type: Percent
        value: 10
        periodSeconds: 60
status:
  currentReplicas: 1
  desiredReplicas: 1
"""

# the walkthrough's `kubectl autoscale` result, as autoscaling/v1
HPA_V1 = """
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: php-apache
  namespace: default
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: php-apache
  minReplicas: 1
  maxReplicas: 10
  targetCPUUtilizationPercentage: 50
"""


def load(text: str) -> dict:
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


# keda-docs content/docs/2.21/scalers/cron.md (KEDA 2.21): the cron scaler page's ScaledObject
KEDA_CRON = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: cron-scaledobject
  namespace: default
spec:
  scaleTargetRef:
    name: my-deployment
  minReplicaCount: 0
  cooldownPeriod: 300
  triggers:
    - type: cron
      metadata:
        timezone: Asia/Kolkata
        start: 0 6 * * *
        end: 0 20 * * *
        desiredReplicas: "10"
"""

# kedacore/keda tests/internals/force_activation/force_activation_test.go (main, v2.20.1-117):
# cooldownPeriod 0 and the force-activation annotation, with a prometheus trigger in place of
# its kubernetes-workload one (same fields otherwise)
KEDA_FORCED_COOLDOWN_0 = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: force-activation-so
  namespace: default
  annotations:
    autoscaling.keda.sh/force-activation: "true"
spec:
  scaleTargetRef:
    name: force-activation-deployment
  pollingInterval: 5
  idleReplicaCount: 0
  minReplicaCount: 2
  maxReplicaCount: 5
  cooldownPeriod: 0
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus:9090
        query: sum(kube_deployment_status_replicas{deployment="monitored"})
        threshold: '1'
"""

# the same, without the annotation: cooldownPeriod 0 with scale to zero
KEDA_COOLDOWN_0 = KEDA_FORCED_COOLDOWN_0.replace(
    '  annotations:\n    autoscaling.keda.sh/force-activation: "true"\n', ""
).replace("idleReplicaCount: 0\n  minReplicaCount: 2", "minReplicaCount: 0")

# kedacore/keda tests/internals/force_activation (v2.20): its kubernetes-workload trigger
UNSUPPORTED_WORKLOAD_ONLY = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: workload
  namespace: default
spec:
  scaleTargetRef:
    name: worker
  minReplicaCount: 1
  triggers:
    - type: kubernetes-workload
      metadata:
        podSelector: 'app=monitored'
        value: '1'
"""
