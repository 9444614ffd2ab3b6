"""The message table: k8s.io/api's generated.proto field numbers, one line per message.

The grammar is `protomessages`'s (`field=N`, `*` repeated, `?` pointer, `:T` type, `...=N:T`
inlined). A one-of of pointers to messages (a VolumeSource's `emptyDir`) is marked `?`: an
empty message there is a choice, not a zero. A name two groups' messages of different shapes
share gets its version or group in it (`HPAv1`, `EventsV1Event`, `SliceEndpoint`); messages of
one shape are shared (`TransitionCondition`: type, status, lastTransitionTime, reason, message).
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
PodSpec: volumes=1*:Volume containers=2*:Container restartPolicy=3
  terminationGracePeriodSeconds=4?:int activeDeadlineSeconds=5?:int dnsPolicy=6 nodeSelector=7:map
  serviceAccountName=8 serviceAccount=9 nodeName=10 hostNetwork=11:bool hostPID=12:bool
  hostIPC=13:bool securityContext=14:PodSecurityContext imagePullSecrets=15*:LocalObjectReference
  hostname=16 subdomain=17 affinity=18:Affinity schedulerName=19 initContainers=20*:Container
  automountServiceAccountToken=21?:bool tolerations=22*:Toleration priorityClassName=24
  priority=25?:int enableServiceLinks=30?:bool preemptionPolicy=31
  topologySpreadConstraints=33*:TopologySpreadConstraint
Container: name=1 image=2 command=3* args=4* workingDir=5 ports=6*:ContainerPort env=7*:EnvVar
  resources=8:ResourceRequirements volumeMounts=9*:VolumeMount livenessProbe=10:Probe
  readinessProbe=11:Probe terminationMessagePath=13 imagePullPolicy=14
  securityContext=15:SecurityContext stdin=16:bool stdinOnce=17:bool tty=18:bool
  envFrom=19*:EnvFromSource terminationMessagePolicy=20 startupProbe=22:Probe restartPolicy=24
ContainerPort: name=1 hostPort=2:int containerPort=3:int protocol=4 hostIP=5
EnvVar: name=1 value=2 valueFrom=3:EnvVarSource
EnvVarSource: fieldRef=1:ObjectFieldSelector resourceFieldRef=2:ResourceFieldSelector
  configMapKeyRef=3:KeySelector secretKeyRef=4:KeySelector
ObjectFieldSelector: apiVersion=1 fieldPath=2
ResourceFieldSelector: containerName=1 resource=2 divisor=3:quantity
KeySelector: ...=1:LocalObjectReference key=2 optional=3?:bool
EnvFromSource: prefix=1 configMapRef=2:EnvSource secretRef=3:EnvSource
EnvSource: ...=1:LocalObjectReference optional=2?:bool
VolumeMount: name=1 readOnly=2:bool mountPath=3 subPath=4 mountPropagation=5? subPathExpr=6
  recursiveReadOnly=7?
Probe: ...=1:ProbeHandler initialDelaySeconds=2:int timeoutSeconds=3:int periodSeconds=4:int
  successThreshold=5:int failureThreshold=6:int terminationGracePeriodSeconds=7?:int
ProbeHandler: exec=1:ExecAction httpGet=2:HTTPGetAction tcpSocket=3:TCPSocketAction
  grpc=4:GRPCAction
ExecAction: command=1*
HTTPGetAction: path=1 port=2:intstr host=3 scheme=4 httpHeaders=5*:HTTPHeader
HTTPHeader: name=1 value=2
TCPSocketAction: port=1:intstr host=2
GRPCAction: port=1:int service=2?
SecurityContext: capabilities=1:Capabilities privileged=2?:bool runAsUser=4?:int
  runAsNonRoot=5?:bool readOnlyRootFilesystem=6?:bool allowPrivilegeEscalation=7?:bool
  runAsGroup=8?:int procMount=9? seccompProfile=11:SeccompProfile
Capabilities: add=1* drop=2*
SeccompProfile: type=1 localhostProfile=2?
PodSecurityContext: runAsUser=2?:int runAsNonRoot=3?:bool supplementalGroups=4*:int fsGroup=5?:int
  runAsGroup=6?:int fsGroupChangePolicy=9? seccompProfile=10:SeccompProfile
Volume: name=1 ...=2:VolumeSource
VolumeSource: hostPath=1?:HostPathVolumeSource emptyDir=2?:EmptyDirVolumeSource
  secret=6?:SecretVolumeSource persistentVolumeClaim=10?:PersistentVolumeClaimVolumeSource
  configMap=19?:ConfigMapVolumeSource
EmptyDirVolumeSource: medium=1 sizeLimit=2:quantity
SecretVolumeSource: secretName=1 items=2*:KeyToPath defaultMode=3?:int optional=4?:bool
ConfigMapVolumeSource: ...=1:LocalObjectReference items=2*:KeyToPath defaultMode=3?:int
  optional=4?:bool
KeyToPath: key=1 path=2 mode=3?:int
PersistentVolumeClaimVolumeSource: claimName=1 readOnly=2:bool
Toleration: key=1 operator=2 value=3 effect=4 tolerationSeconds=5?:int
Affinity: nodeAffinity=1:NodeAffinity podAffinity=2:PodAffinity podAntiAffinity=3:PodAffinity
NodeAffinity: requiredDuringSchedulingIgnoredDuringExecution=1:NodeSelector
  preferredDuringSchedulingIgnoredDuringExecution=2*:PreferredSchedulingTerm
PreferredSchedulingTerm: weight=1:int preference=2:NodeSelectorTerm
PodAffinity: requiredDuringSchedulingIgnoredDuringExecution=1*:PodAffinityTerm
  preferredDuringSchedulingIgnoredDuringExecution=2*:WeightedPodAffinityTerm
PodAffinityTerm: labelSelector=1:LabelSelector namespaces=2* topologyKey=3
  namespaceSelector=4:LabelSelector matchLabelKeys=5* mismatchLabelKeys=6*
WeightedPodAffinityTerm: weight=1:int podAffinityTerm=2:PodAffinityTerm
TopologySpreadConstraint: maxSkew=1:int topologyKey=2 whenUnsatisfiable=3
  labelSelector=4:LabelSelector minDomains=5?:int nodeAffinityPolicy=6? nodeTaintsPolicy=7?
  matchLabelKeys=8*
ResourceRequirements: limits=1:qmap requests=2:qmap
Pod: metadata=1:ObjectMeta spec=2:PodSpec status=3:PodStatus
PodStatus: phase=1 conditions=2*:PodCondition message=3 reason=4 hostIP=5 podIP=6
  startTime=7:time containerStatuses=8*:ContainerStatus qosClass=9
  initContainerStatuses=10*:ContainerStatus nominatedNodeName=11 podIPs=12*:IP
  ephemeralContainerStatuses=13*:ContainerStatus resize=14 hostIPs=16*:IP observedGeneration=17:int
PodCondition: type=1 status=2 lastProbeTime=3:time lastTransitionTime=4:time reason=5 message=6
  observedGeneration=7:int
IP: ip=1
ContainerStatus: name=1 state=2:ContainerState lastState=3:ContainerState ready=4:bool
  restartCount=5:int image=6 imageID=7 containerID=8 started=9?:bool allocatedResources=10:qmap
  resources=11:ResourceRequirements stopSignal=15?
ContainerState: waiting=1:ContainerStateWaiting running=2:ContainerStateRunning
  terminated=3:ContainerStateTerminated
ContainerStateWaiting: reason=1 message=2
ContainerStateRunning: startedAt=1:time
ContainerStateTerminated: exitCode=1:int signal=2:int reason=3 message=4 startedAt=5:time
  finishedAt=6:time containerID=7
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
TransitionCondition: type=1 status=2 lastTransitionTime=3:time reason=4 message=5
ReplicaSet: metadata=1:ObjectMeta spec=2:ReplicaSetSpec status=3:ReplicaSetStatus
ReplicaSetSpec: replicas=1?:int selector=2:LabelSelector template=3:PodTemplateSpec
  minReadySeconds=4:int
ReplicaSetStatus: replicas=1:int fullyLabeledReplicas=2:int observedGeneration=3:int
  readyReplicas=4:int availableReplicas=5:int conditions=6*:TransitionCondition
  terminatingReplicas=7?:int
StatefulSet: metadata=1:ObjectMeta spec=2:StatefulSetSpec status=3:StatefulSetStatus
StatefulSetSpec: replicas=1?:int selector=2:LabelSelector template=3:PodTemplateSpec
  volumeClaimTemplates=4*:PersistentVolumeClaim serviceName=5 podManagementPolicy=6
  updateStrategy=7:StatefulSetUpdateStrategy revisionHistoryLimit=8?:int minReadySeconds=9:int
  persistentVolumeClaimRetentionPolicy=10:StatefulSetPVCRetentionPolicy
  ordinals=11:StatefulSetOrdinals
StatefulSetUpdateStrategy: type=1 rollingUpdate=2:RollingUpdateStatefulSetStrategy
RollingUpdateStatefulSetStrategy: partition=1?:int maxUnavailable=2?:intstr
StatefulSetPVCRetentionPolicy: whenDeleted=1 whenScaled=2
StatefulSetOrdinals: start=1:int
StatefulSetStatus: observedGeneration=1:int replicas=2:int readyReplicas=3:int
  currentReplicas=4:int updatedReplicas=5:int currentRevision=6 updateRevision=7
  collisionCount=9?:int conditions=10*:TransitionCondition availableReplicas=11:int
DaemonSet: metadata=1:ObjectMeta spec=2:DaemonSetSpec status=3:DaemonSetStatus
DaemonSetSpec: selector=1:LabelSelector template=2:PodTemplateSpec
  updateStrategy=3:DaemonSetUpdateStrategy minReadySeconds=4:int revisionHistoryLimit=6?:int
DaemonSetUpdateStrategy: type=1 rollingUpdate=2:RollingUpdateDaemonSet
RollingUpdateDaemonSet: maxUnavailable=1?:intstr maxSurge=2?:intstr
DaemonSetStatus: currentNumberScheduled=1:int numberMisscheduled=2:int
  desiredNumberScheduled=3:int numberReady=4:int observedGeneration=5:int
  updatedNumberScheduled=6:int numberAvailable=7:int numberUnavailable=8:int
  collisionCount=9?:int conditions=10*:TransitionCondition
Node: metadata=1:ObjectMeta spec=2:NodeSpec status=3:NodeStatus
NodeSpec: podCIDR=1 externalID=2 providerID=3 unschedulable=4:bool taints=5*:Taint podCIDRs=7*
Taint: key=1 value=2 effect=3 timeAdded=4:time
NodeStatus: capacity=1:qmap allocatable=2:qmap phase=3 conditions=4*:NodeCondition
  addresses=5*:NodeAddress daemonEndpoints=6:NodeDaemonEndpoints nodeInfo=7:NodeSystemInfo
  images=8*:ContainerImage volumesInUse=9* volumesAttached=10*:AttachedVolume
  runtimeHandlers=12*:NodeRuntimeHandler features=13:NodeFeatures declaredFeatures=14*
NodeCondition: type=1 status=2 lastHeartbeatTime=3:time lastTransitionTime=4:time reason=5
  message=6
NodeAddress: type=1 address=2
NodeDaemonEndpoints: kubeletEndpoint=1:DaemonEndpoint
DaemonEndpoint: Port=1:int
NodeSystemInfo: machineID=1 systemUUID=2 bootID=3 kernelVersion=4 osImage=5
  containerRuntimeVersion=6 kubeletVersion=7 kubeProxyVersion=8 operatingSystem=9
  architecture=10 swap=11:NodeSwapStatus
NodeSwapStatus: capacity=1?:int
ContainerImage: names=1* sizeBytes=2:int
AttachedVolume: name=1 devicePath=2
NodeRuntimeHandler: name=1 features=2:NodeRuntimeHandlerFeatures
NodeRuntimeHandlerFeatures: recursiveReadOnlyMounts=1?:bool userNamespaces=2?:bool
NodeFeatures: supplementalGroupsPolicy=1?:bool containerUlimits=2?:bool
NodeSelector: nodeSelectorTerms=1*:NodeSelectorTerm
NodeSelectorTerm: matchExpressions=1*:NodeSelectorRequirement
  matchFields=2*:NodeSelectorRequirement
NodeSelectorRequirement: key=1 operator=2 values=3*
Endpoints: metadata=1:ObjectMeta subsets=2*:EndpointSubset
EndpointSubset: addresses=1*:EndpointAddress notReadyAddresses=2*:EndpointAddress
  ports=3*:EndpointPort
EndpointAddress: ip=1 targetRef=2:ObjectReference hostname=3 nodeName=4?
EndpointPort: name=1 port=2:int protocol=3 appProtocol=4?
EndpointSlice: metadata=1:ObjectMeta endpoints=2*:SliceEndpoint ports=3*:SliceEndpointPort
  addressType=4
SliceEndpoint: addresses=1* conditions=2:EndpointConditions hostname=3? targetRef=4:ObjectReference
  deprecatedTopology=5:map nodeName=6? zone=7? hints=8:EndpointHints
EndpointConditions: ready=1?:bool serving=2?:bool terminating=3?:bool
EndpointHints: forZones=1*:ForZone forNodes=2*:ForZone
ForZone: name=1
SliceEndpointPort: name=1? protocol=2? port=3?:int appProtocol=4?
Event: metadata=1:ObjectMeta involvedObject=2:ObjectReference reason=3 message=4
  source=5:EventSource firstTimestamp=6:time lastTimestamp=7:time count=8:int type=9
  eventTime=10:mtime series=11:EventSeries action=12 related=13:ObjectReference
  reportingComponent=14 reportingInstance=15
EventSource: component=1 host=2
EventSeries: count=1:int lastObservedTime=2:mtime
EventsV1Event: metadata=1:ObjectMeta eventTime=2:mtime series=3:EventSeries
  reportingController=4 reportingInstance=5 action=6 reason=7 regarding=8:ObjectReference
  related=9:ObjectReference note=10 type=11 deprecatedSource=12:EventSource
  deprecatedFirstTimestamp=13:time deprecatedLastTimestamp=14:time deprecatedCount=15:int
Lease: metadata=1:ObjectMeta spec=2:LeaseSpec
LeaseSpec: holderIdentity=1? leaseDurationSeconds=2?:int acquireTime=3:mtime renewTime=4:mtime
  leaseTransitions=5?:int strategy=6? preferredHolder=7?
PersistentVolume: metadata=1:ObjectMeta spec=2:PersistentVolumeSpec
  status=3:PersistentVolumeStatus
PersistentVolumeSpec: capacity=1:qmap ...=2:PersistentVolumeSource accessModes=3*
  claimRef=4:ObjectReference persistentVolumeReclaimPolicy=5 storageClassName=6 mountOptions=7*
  volumeMode=8? nodeAffinity=9:VolumeNodeAffinity volumeAttributesClassName=10?
PersistentVolumeSource: hostPath=3?:HostPathVolumeSource nfs=5?:NFSVolumeSource
  local=20?:LocalVolumeSource csi=22?:CSIPersistentVolumeSource
HostPathVolumeSource: path=1 type=2?
NFSVolumeSource: server=1 path=2 readOnly=3:bool
LocalVolumeSource: path=1 fsType=2?
CSIPersistentVolumeSource: driver=1 volumeHandle=2 readOnly=3:bool fsType=4 volumeAttributes=5:map
  controllerPublishSecretRef=6:SecretReference nodeStageSecretRef=7:SecretReference
  nodePublishSecretRef=8:SecretReference controllerExpandSecretRef=9:SecretReference
  nodeExpandSecretRef=10:SecretReference
SecretReference: name=1 namespace=2
VolumeNodeAffinity: required=1:NodeSelector
PersistentVolumeStatus: phase=1 message=2 reason=3 lastPhaseTransitionTime=4:time
PersistentVolumeClaim: metadata=1:ObjectMeta spec=2:PVCSpec status=3:PVCStatus
PVCSpec: accessModes=1* resources=2:VolumeResourceRequirements volumeName=3
  selector=4:LabelSelector storageClassName=5? volumeMode=6? dataSource=7:TypedLocalObjectReference
  dataSourceRef=8:TypedObjectReference volumeAttributesClassName=9?
VolumeResourceRequirements: limits=1:qmap requests=2:qmap
TypedObjectReference: apiGroup=1? kind=2 name=3 namespace=4?
PVCStatus: phase=1 accessModes=2* capacity=3:qmap conditions=4*:PVCCondition
  allocatedResources=5:qmap allocatedResourceStatuses=7:map currentVolumeAttributesClassName=8?
  modifyVolumeStatus=9:ModifyVolumeStatus
PVCCondition: type=1 status=2 lastProbeTime=3:time lastTransitionTime=4:time reason=5 message=6
ModifyVolumeStatus: targetVolumeAttributesClassName=1 status=2
APIService: metadata=1:ObjectMeta spec=2:APIServiceSpec status=3:APIServiceStatus
APIServiceSpec: service=1:APIServiceReference group=2 version=3 insecureSkipTLSVerify=4:bool
  caBundle=5:bytes groupPriorityMinimum=7:int versionPriority=8:int
APIServiceReference: namespace=1 name=2 port=3?:int
APIServiceStatus: conditions=1*:TransitionCondition
CustomResourceDefinition: metadata=1:ObjectMeta spec=2:CRDSpec status=3:CRDStatus
CRDSpec: group=1 names=3:CRDNames scope=4 versions=7*:CRDVersion conversion=9:CRDConversion
  preserveUnknownFields=10:bool
CRDNames: plural=1 singular=2 shortNames=3* kind=4 listKind=5 categories=6*
CRDVersion: name=1 served=2:bool storage=3:bool schema=4:CRDValidation
  subresources=5:CRDSubresources additionalPrinterColumns=6*:CRDColumn deprecated=7:bool
  deprecationWarning=8? selectableFields=9*:SelectableField
SelectableField: jsonPath=1
CRDValidation: openAPIV3Schema=1:JSONSchemaProps
CRDSubresources: status=1?:CRDSubresourceStatus scale=2:CRDSubresourceScale
CRDSubresourceStatus:
CRDSubresourceScale: specReplicasPath=1 statusReplicasPath=2 labelSelectorPath=3?
CRDColumn: name=1 type=2 format=3 description=4 priority=5:int jsonPath=6
CRDConversion: strategy=1 webhook=2:WebhookConversion
WebhookConversion: clientConfig=2:WebhookClientConfig conversionReviewVersions=3*
WebhookClientConfig: service=1:CRDServiceReference caBundle=2:bytes url=3?
CRDServiceReference: namespace=1 name=2 path=3? port=4?:int
CRDStatus: conditions=1*:TransitionCondition acceptedNames=2:CRDNames storedVersions=3*
JSONSchemaProps: id=1 $schema=2 $ref=3 description=4 type=5 format=6 title=7 default=8?:json
  maximum=9?:double exclusiveMaximum=10:bool minimum=11?:double exclusiveMinimum=12:bool
  maxLength=13?:int minLength=14?:int pattern=15 maxItems=16?:int minItems=17?:int
  uniqueItems=18:bool multipleOf=19?:double enum=20*:json maxProperties=21?:int
  minProperties=22?:int required=23* items=24?:schemaOrArray allOf=25*:JSONSchemaProps
  oneOf=26*:JSONSchemaProps anyOf=27*:JSONSchemaProps not=28?:JSONSchemaProps
  properties=29:map:JSONSchemaProps additionalProperties=30?:schemaOrBool
  patternProperties=31:map:JSONSchemaProps dependencies=32:map:schemaOrStrings
  additionalItems=33?:schemaOrBool definitions=34:map:JSONSchemaProps
  externalDocs=35:ExternalDocumentation example=36?:json nullable=37:bool
  x-kubernetes-preserve-unknown-fields=38?:bool x-kubernetes-embedded-resource=39:bool
  x-kubernetes-int-or-string=40:bool x-kubernetes-list-map-keys=41* x-kubernetes-list-type=42?
  x-kubernetes-map-type=43? x-kubernetes-validations=44*:ValidationRule
ExternalDocumentation: description=1 url=2
ValidationRule: rule=1 message=2 messageExpression=3 reason=4? fieldPath=5 optionalOldSelf=6?:bool
"""
