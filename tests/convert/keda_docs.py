"""Every ScaledObject in KEDA's documentation and in KEDA's own e2e test manifests that uses a
prometheus, cron, cpu or memory trigger, written out here with the same fields and values.

Sources: kedacore/keda-docs content/docs/2.21 (the docs of KEDA 2.21) and kedacore/keda
tests/ at main 8b4f083 (v2.20.1-117). Go template placeholders ({{.Name}}) and the docs'
<placeholders> are filled with plain values; nothing else is changed.
"""

from __future__ import annotations

DOCS: dict[str, str] = {}
# examples KEDA itself refuses, and the converter's message (naming the same field)
REFUSED: dict[str, str] = {
    # the page leaves out `threshold`, which KEDA's prometheus scaler requires
    # (pkg/scalers/prometheus_scaler.go: threshold is not optional)
    "hashicorp-vault-page": "spec.triggers[0].metadata.threshold: required",
}

# keda-docs content/docs/2.21/scalers/prometheus.md: the example
DOCS["prometheus-page"] = """
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
      serverAddress: http://prometheus-host:9090
      threshold: '100'
      query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
"""

# prometheus.md: the authentication examples (bearer, basic, tls, tls+basic, custom); one
# ScaledObject each, differing only in authModes
_AUTH = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: prometheus-scaledobject
  namespace: keda
  labels:
    deploymentName: dummy
spec:
  maxReplicaCount: 12
  scaleTargetRef:
    name: dummy
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-host:9090
        threshold: '100'
        query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
        authModes: "MODE"
      authenticationRef:
        name: keda-prom-creds
"""
for _mode in ("bearer", "basic", "tls", "tls,basic", "custom"):
    DOCS[f"prometheus-auth-{_mode.replace(',', '-')}"] = _AUTH.replace("MODE", _mode)

# prometheus.md: Azure Monitor managed service for Prometheus
DOCS["prometheus-azure-managed"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: azure-managed-prometheus-scaler
spec:
  scaleTargetRef:
    name: deployment-name-to-be-scaled
  minReplicaCount: 1
  maxReplicaCount: 20
  triggers:
  - type: prometheus
    metadata:
      serverAddress: https://test-azure-monitor-workspace-name-9ksc.eastus.prometheus.monitor.azure.com
      query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
      threshold: '100.50'
      activationThreshold: '5.5'
    authenticationRef:
      name: azure-managed-prometheus-trigger-auth
"""

# prometheus.md: Amazon Managed Service for Prometheus
DOCS["prometheus-amazon-managed"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: keda-so
  labels:
    app: keda-deploy
spec:
  scaleTargetRef:
    name: keda-deploy
  maxReplicaCount: 2
  minReplicaCount: 0
  cooldownPeriod: 1
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 15
  triggers:
    - type: prometheus
      authenticationRef:
        name: keda-trigger-auth-aws-credentials
      metadata:
        awsRegion: us-east-1
        serverAddress: "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1"
        query: "vector(100)"
        threshold: "50.0"
        identityOwner: operator
"""

# prometheus.md: Google Managed Service for Prometheus
DOCS["prometheus-google-managed"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: google-managed-prometheus-scaler
spec:
  scaleTargetRef:
    name: deployment-name-to-be-scaled
  minReplicaCount: 1
  maxReplicaCount: 20
  triggers:
  - type: prometheus
    metadata:
      serverAddress: https://monitoring.googleapis.com/v1/projects/my-google-project/location/global/prometheus
      query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
      threshold: '50.0'
    authenticationRef:
      kind: ClusterTriggerAuthentication
      name: google-workload-identity-auth
"""

# keda-docs content/docs/2.21/deploy.md: "Create a ScaledObject Manifest"
DOCS["deploy-page"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
   name: http-app-scaledobject
spec:
   scaleTargetRef:
      name: http-app
   minReplicaCount: 1
   maxReplicaCount: 10
   triggers:
      - type: prometheus
        metadata:
           serverAddress: http://prometheus-server.default.svc.cluster.local:9090
           threshold: '5'
           query: sum(rate(http_requests_total[1m]))
"""

# keda-docs content/docs/2.21/authentication-providers/hashicorp-vault.md
DOCS["hashicorp-vault-page"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: vault-so
  namespace: default
spec:
  scaleTargetRef:
    name: my-deployment
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-host:9090
        query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
        authModes: "tls"
      authenticationRef:
        name: vault-trigger-auth
"""

# keda-docs content/docs/2.21/reference/scaledobject-spec.md: the full specification, with a
# prometheus trigger (the page leaves `triggers:` for the scaler pages)
DOCS["scaledobject-spec-page"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: spec-example
  annotations:
    scaledobject.keda.sh/transfer-hpa-ownership: "true"
    validations.keda.sh/hpa-ownership: "true"
    autoscaling.keda.sh/paused: "true"
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: my-deployment
    envSourceContainerName: main
  pollingInterval:  30
  cooldownPeriod:   300
  initialCooldownPeriod:  0
  idleReplicaCount: 0
  minReplicaCount:  1
  maxReplicaCount:  100
  fallback:
    failureThreshold: 3
    replicas: 6
    behavior: static
  advanced:
    restoreToOriginalReplicaCount: false
    horizontalPodAutoscalerConfig:
      name: keda-hpa-spec-example
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 300
          policies:
          - type: Percent
            value: 100
            periodSeconds: 15
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus-host:9090
      threshold: '100'
      query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
"""

# keda-docs content/docs/2.21/scalers/cpu.md and memory.md: with and without containerName
for _kind in ("cpu", "memory"):
    _so = f"""
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {_kind}-scaledobject
  namespace: default
spec:
  scaleTargetRef:
    name: my-deployment
  triggers:
  - type: {_kind}
    metricType: Utilization
    metadata:
      value: "50"
"""
    DOCS[f"{_kind}-page"] = _so
    DOCS[f"{_kind}-page-container"] = _so + '      containerName: "foo"\n'

# keda-docs content/docs/2.21/scalers/cron.md: the example, and cron with cpu
DOCS["cron-page"] = """
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
DOCS["cron-page-with-cpu"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: cron-scaledobject
  namespace: default
spec:
  scaleTargetRef:
    name: my-deployment
  minReplicaCount: 0
  maxReplicaCount: 4
  cooldownPeriod: 300
  triggers:
    - type: cron
      metadata:
        timezone: Asia/Kolkata
        start: 0 6 * * *
        end: 0 20 * * *
        desiredReplicas: "1"
    - type: cpu
      metricType: Utilization
      metadata:
        value: "80"
"""

# kedacore/keda tests/scalers/prometheus/prometheus_test.go
DOCS["keda-e2e-prometheus"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: prometheus-test-so
  namespace: prometheus-test-ns
spec:
  scaleTargetRef:
    name: prometheus-test-deployment
  minReplicaCount: 0
  maxReplicaCount: 5
  pollingInterval: 3
  cooldownPeriod:  1
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus-test-server.prometheus-test-ns.svc
      threshold: '20'
      activationThreshold: '20'
      query: sum(rate(http_requests_total{app="prometheus-test-monitored-app"}[2m]))
"""

# kedacore/keda tests/scalers/cron/cron_test.go (its start/end minutes come from the clock)
DOCS["keda-e2e-cron"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: cron-test-so
  namespace: cron-test-ns
spec:
  scaleTargetRef:
    name: cron-test-deployment
  pollingInterval: 5
  cooldownPeriod: 5
  minReplicaCount: 1
  maxReplicaCount: 10
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 15
  triggers:
  - type: cron
    metadata:
      timezone: Etc/UTC
      start: 14 * * * *
      end: 15 * * * *
      desiredReplicas: '4'
"""

# kedacore/keda tests/scalers/cpu/cpu_test.go and memory_test.go: the first ScaledObjects,
# and the scale-to-zero ones (cpu/memory beside a kubernetes-workload trigger, min 0)
DOCS["keda-e2e-cpu"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: cpu-test-so
  namespace: cpu-test-ns
  labels:
    run: cpu-test-deployment
spec:
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 0
  maxReplicaCount: 2
  minReplicaCount: 1
  scaleTargetRef:
    name: cpu-test-deployment
  triggers:
  - type: cpu
    metricType: Utilization
    metadata:
      value: "50"
"""
DOCS["keda-e2e-memory"] = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: memory-test-so
  namespace: memory-test-ns
  labels:
    run: memory-test-deployment
spec:
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          policies:
          - type: Pods
            value: 1
            periodSeconds: 10
          stabilizationWindowSeconds: 0
  maxReplicaCount: 2
  minReplicaCount: 1
  scaleTargetRef:
    name: memory-test-deployment
  triggers:
  - type: memory
    metricType: Utilization
    metadata:
      value: "10"
"""
for _kind in ("cpu", "memory"):
    DOCS[f"keda-e2e-{_kind}-to-zero"] = f"""
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {_kind}-zero-so
  namespace: {_kind}-test-ns
  labels:
    run: {_kind}-test-deployment
spec:
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 1
  pollingInterval: 1
  scaleTargetRef:
    name: {_kind}-test-deployment
  minReplicaCount: 0
  maxReplicaCount: 2
  cooldownPeriod: 1
  triggers:
  - type: {_kind}
    metricType: Utilization
    metadata:
      value: "50"
  - type: kubernetes-workload
    metadata:
      podSelector: 'pod=workload-test-deployment'
      value: '1'
"""
