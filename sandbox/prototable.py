"""The message table: k8s.io/api's generated.proto field numbers, one line per message.

The grammar is `protomessages`'s (`field=N`, `*` repeated, `?` pointer, `:T` type, `...=N:T`
inlined). Messages are grouped by API group; a name shared by two groups' messages of different
shapes gets the group or version in it (`HPAv1`, `EventsV1Event`, `SliceEndpoint`).
"""

TABLE = """
ObjectMeta: name=1 generateName=2 namespace=3 selfLink=4 uid=5 resourceVersion=6 generation=7:int
  creationTimestamp=8:time deletionTimestamp=9:time deletionGracePeriodSeconds=10?:int
  labels=11:map annotations=12:map ownerReferences=13*:OwnerReference finalizers=14*
OwnerReference: kind=1 name=3 uid=4 apiVersion=5 controller=6?:bool blockOwnerDeletion=7?:bool
LabelSelector: matchLabels=1:map matchExpressions=2*:LabelSelectorRequirement
LabelSelectorRequirement: key=1 operator=2 values=3*
Condition: type=1 status=2 observedGeneration=3:int lastTransitionTime=4:time reason=5 message=6
Deployment: metadata=1:ObjectMeta spec=2:DeploymentSpec status=3:DeploymentStatus
DeploymentSpec: replicas=1?:int selector=2:LabelSelector template=3:PodTemplateSpec
  strategy=4:DeploymentStrategy minReadySeconds=5:int revisionHistoryLimit=6?:int paused=7:bool
  progressDeadlineSeconds=9?:int podReplacementPolicy=10
DeploymentStrategy: type=1 rollingUpdate=2:RollingUpdateDeployment
RollingUpdateDeployment: maxUnavailable=1:intstr maxSurge=2:intstr
DeploymentStatus: observedGeneration=1:int replicas=2:int updatedReplicas=3:int
  availableReplicas=4:int unavailableReplicas=5:int conditions=6*:DeploymentCondition
  readyReplicas=7:int collisionCount=8?:int terminatingReplicas=9?:int
DeploymentCondition: type=1 status=2 reason=4 message=5 lastUpdateTime=6:time
  lastTransitionTime=7:time
PodTemplateSpec: metadata=1:ObjectMeta spec=2:PodSpec
PodSpec: containers=2*:Container restartPolicy=3 terminationGracePeriodSeconds=4?:int
  activeDeadlineSeconds=5?:int dnsPolicy=6 nodeSelector=7:map serviceAccountName=8
  serviceAccount=9 nodeName=10 hostNetwork=11:bool hostPID=12:bool hostIPC=13:bool
  hostname=16 subdomain=17 schedulerName=19 initContainers=20*:Container
  automountServiceAccountToken=21?:bool priorityClassName=24 priority=25?:int
  enableServiceLinks=30?:bool preemptionPolicy=31
Container: name=1 image=2 command=3* args=4* workingDir=5 ports=6*:ContainerPort env=7*:EnvVar
  resources=8:ResourceRequirements terminationMessagePath=13 imagePullPolicy=14 stdin=16:bool
  stdinOnce=17:bool tty=18:bool terminationMessagePolicy=20 restartPolicy=24
ContainerPort: name=1 hostPort=2:int containerPort=3:int protocol=4 hostIP=5
EnvVar: name=1 value=2
ResourceRequirements: limits=1:qmap requests=2:qmap
Pod: metadata=1:ObjectMeta spec=2:PodSpec status=3:PodStatus
PodStatus: phase=1 message=3 reason=4 hostIP=5 podIP=6 startTime=7:time qosClass=9
  nominatedNodeName=11 resize=14
Service: metadata=1:ObjectMeta spec=2:ServiceSpec status=3:ServiceStatus
ServiceSpec: ports=1*:ServicePort selector=2:map clusterIP=3 type=4 externalIPs=5*
  sessionAffinity=7 loadBalancerIP=8 loadBalancerSourceRanges=9* externalName=10
  externalTrafficPolicy=11 healthCheckNodePort=12:int publishNotReadyAddresses=13:bool
  ipFamilyPolicy=17 clusterIPs=18* ipFamilies=19* allocateLoadBalancerNodePorts=20?:bool
  loadBalancerClass=21 internalTrafficPolicy=22 trafficDistribution=23
ServicePort: name=1 protocol=2 port=3:int targetPort=4:intstr nodePort=5:int appProtocol=6
ServiceStatus: loadBalancer=1:LoadBalancerStatus conditions=2*:Condition
LoadBalancerStatus: ingress=1*:LoadBalancerIngress
LoadBalancerIngress: ip=1 hostname=2
Namespace: metadata=1:ObjectMeta spec=2:NamespaceSpec status=3:NamespaceStatus
NamespaceSpec: finalizers=1*
NamespaceStatus: phase=1
ConfigMap: metadata=1:ObjectMeta data=2:map binaryData=3:bmap immutable=4?:bool
Secret: metadata=1:ObjectMeta data=2:bmap type=3 stringData=4:map immutable=5?:bool
Job: metadata=1:ObjectMeta spec=2:JobSpec status=3:JobStatus
JobSpec: parallelism=1?:int completions=2?:int activeDeadlineSeconds=3?:int
  selector=4:LabelSelector manualSelector=5?:bool template=6:PodTemplateSpec backoffLimit=7?:int
  ttlSecondsAfterFinished=8?:int completionMode=9? suspend=10?:bool
  podFailurePolicy=11:PodFailurePolicy backoffLimitPerIndex=12?:int maxFailedIndexes=13?:int
  podReplacementPolicy=14? managedBy=15? successPolicy=16:SuccessPolicy
PodFailurePolicy: rules=1*:PodFailurePolicyRule
PodFailurePolicyRule: action=1 onExitCodes=2:PodFailurePolicyOnExitCodesRequirement
  onPodConditions=3*:PodFailurePolicyOnPodConditionsPattern
PodFailurePolicyOnExitCodesRequirement: containerName=1? operator=2 values=3*:int
PodFailurePolicyOnPodConditionsPattern: type=1 status=2
SuccessPolicy: rules=1*:SuccessPolicyRule
SuccessPolicyRule: succeededIndexes=1? succeededCount=2?:int
JobStatus: conditions=1*:JobCondition startTime=2:time completionTime=3:time active=4:int
  succeeded=5:int failed=6:int completedIndexes=7 uncountedTerminatedPods=8:UncountedTerminatedPods
  ready=9?:int failedIndexes=10? terminating=11?:int
JobCondition: type=1 status=2 lastProbeTime=3:time lastTransitionTime=4:time reason=5 message=6
UncountedTerminatedPods: succeeded=1* failed=2*
CrossVersionObjectReference: kind=1 name=2 apiVersion=3
HPAv1: metadata=1:ObjectMeta spec=2:HPAv1Spec status=3:HPAv1Status
HPAv1Spec: scaleTargetRef=1:CrossVersionObjectReference minReplicas=2?:int maxReplicas=3:int
  targetCPUUtilizationPercentage=4?:int
HPAv1Status: observedGeneration=1?:int lastScaleTime=2:time currentReplicas=3:int
  desiredReplicas=4:int currentCPUUtilizationPercentage=5?:int
HPAv2: metadata=1:ObjectMeta spec=2:HPAv2Spec status=3:HPAv2Status
HPAv2Spec: scaleTargetRef=1:CrossVersionObjectReference minReplicas=2?:int maxReplicas=3:int
  metrics=4*:MetricSpec behavior=5:HPABehavior
HPABehavior: scaleUp=1:HPAScalingRules scaleDown=2:HPAScalingRules
HPAScalingRules: selectPolicy=1? policies=2*:HPAScalingPolicy stabilizationWindowSeconds=3?:int
  tolerance=4:quantity
HPAScalingPolicy: type=1 value=2:int periodSeconds=3:int
MetricSpec: type=1 object=2:ObjectMetricSource pods=3:PodsMetricSource
  resource=4:ResourceMetricSource external=5:ExternalMetricSource
  containerResource=7:ContainerResourceMetricSource
ObjectMetricSource: describedObject=1:CrossVersionObjectReference target=2:MetricTarget
  metric=3:MetricIdentifier
PodsMetricSource: metric=1:MetricIdentifier target=2:MetricTarget
ResourceMetricSource: name=1 target=2:MetricTarget
ExternalMetricSource: metric=1:MetricIdentifier target=2:MetricTarget
ContainerResourceMetricSource: name=1 target=2:MetricTarget container=3
MetricIdentifier: name=1 selector=2:LabelSelector
MetricTarget: type=1 value=2:quantity averageValue=3:quantity averageUtilization=4?:int
HPAv2Status: observedGeneration=1?:int lastScaleTime=2:time currentReplicas=3:int
  desiredReplicas=4:int currentMetrics=5*:MetricStatus conditions=6*:HPACondition
MetricStatus: type=1 object=2:ObjectMetricStatus pods=3:PodsMetricStatus
  resource=4:ResourceMetricStatus external=5:ExternalMetricStatus
  containerResource=7:ContainerResourceMetricStatus
ObjectMetricStatus: metric=1:MetricIdentifier current=2:MetricValueStatus
  describedObject=3:CrossVersionObjectReference
PodsMetricStatus: metric=1:MetricIdentifier current=2:MetricValueStatus
ResourceMetricStatus: name=1 current=2:MetricValueStatus
ExternalMetricStatus: metric=1:MetricIdentifier current=2:MetricValueStatus
ContainerResourceMetricStatus: name=1 current=2:MetricValueStatus container=3
MetricValueStatus: value=1:quantity averageValue=2:quantity averageUtilization=3?:int
HPACondition: type=1 status=2 lastTransitionTime=3:time reason=4 message=5
ServiceAccount: metadata=1:ObjectMeta secrets=2*:ObjectReference
  imagePullSecrets=3*:LocalObjectReference automountServiceAccountToken=4?:bool
ObjectReference: kind=1 namespace=2 name=3 uid=4 apiVersion=5 resourceVersion=6 fieldPath=7
LocalObjectReference: name=1
Role: metadata=1:ObjectMeta rules=2*:PolicyRule
ClusterRole: metadata=1:ObjectMeta rules=2*:PolicyRule aggregationRule=3:AggregationRule
AggregationRule: clusterRoleSelectors=1*:LabelSelector
PolicyRule: verbs=1* apiGroups=2* resources=3* resourceNames=4* nonResourceURLs=5*
RoleBinding: metadata=1:ObjectMeta subjects=2*:Subject roleRef=3:RoleRef
RoleRef: apiGroup=1 kind=2 name=3
Subject: kind=1 apiGroup=2 name=3 namespace=4
PodDisruptionBudget: metadata=1:ObjectMeta spec=2:PDBSpec status=3:PDBStatus
PDBSpec: minAvailable=1?:intstr selector=2:LabelSelector maxUnavailable=3?:intstr
PDBStatus: observedGeneration=1:int disruptionsAllowed=3:int currentHealthy=4:int
  desiredHealthy=5:int expectedPods=6:int conditions=7*:Condition
ListMeta: selfLink=1 resourceVersion=2 continue=3 remainingItemCount=4?:int
Status: metadata=1:ListMeta status=2 message=3 reason=4 details=5:StatusDetails code=6:int
StatusDetails: name=1 group=2 kind=3 causes=4*:StatusCause retryAfterSeconds=5:int uid=6
StatusCause: reason=1 message=2 field=3
Ingress: metadata=1:ObjectMeta spec=2:IngressSpec status=3:IngressStatus
IngressSpec: defaultBackend=1:IngressBackend tls=2*:IngressTLS rules=3*:IngressRule
  ingressClassName=4?
IngressBackend: resource=3:TypedLocalObjectReference service=4:IngressServiceBackend
TypedLocalObjectReference: apiGroup=1? kind=2 name=3
IngressServiceBackend: name=1 port=2:ServiceBackendPort
ServiceBackendPort: name=1 number=2:int
IngressTLS: hosts=1* secretName=2
IngressRule: host=1 ...=2:IngressRuleValue
IngressRuleValue: http=1:HTTPIngressRuleValue
HTTPIngressRuleValue: paths=1*:HTTPIngressPath
HTTPIngressPath: path=1 backend=2:IngressBackend pathType=3?
IngressStatus: loadBalancer=1:IngressLoadBalancerStatus
IngressLoadBalancerStatus: ingress=1*:IngressLoadBalancerIngress
IngressLoadBalancerIngress: ip=1 hostname=2 ports=4*:IngressPortStatus
IngressPortStatus: port=1:int protocol=2 error=3?
"""
