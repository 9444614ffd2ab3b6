{{/* Chart name, overridable. */}}
{{- define "promscaler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name prefix: <release>-<chart>, or <release> when it already contains the chart name. */}}
{{- define "promscaler.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "promscaler.adapter.fullname" -}}
{{- printf "%s-adapter" (include "promscaler.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "promscaler.autoscaler.fullname" -}}
{{- printf "%s-autoscaler" (include "promscaler.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "promscaler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "promscaler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: promscaler
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels; call with (dict "ctx" $ "component" "adapter"). */}}
{{- define "promscaler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "promscaler.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* All labels of a component's objects; call with (dict "ctx" $ "component" "adapter"). */}}
{{- define "promscaler.componentLabels" -}}
{{ include "promscaler.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "promscaler.adapter.serviceAccountName" -}}
{{- default (include "promscaler.adapter.fullname" .) .Values.adapter.serviceAccount.name }}
{{- end }}

{{- define "promscaler.autoscaler.serviceAccountName" -}}
{{- default (include "promscaler.autoscaler.fullname" .) .Values.autoscaler.serviceAccount.name }}
{{- end }}

{{/* The image reference: digest wins over tag; tag defaults to appVersion. */}}
{{- define "promscaler.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Secret holding the adapter's serving certificate (tls.crt, tls.key, and ca.crt when known). */}}
{{- define "promscaler.adapter.tlsSecretName" -}}
{{- if eq .Values.tls.mode "existingSecret" }}
{{- required "tls.existingSecret.name is required when tls.mode is existingSecret" .Values.tls.existingSecret.name }}
{{- else }}
{{- printf "%s-tls" (include "promscaler.adapter.fullname" .) }}
{{- end }}
{{- end }}

{{/* Name of the cert-manager Certificate for the serving certificate. */}}
{{- define "promscaler.adapter.certificateName" -}}
{{- printf "%s-serving" (include "promscaler.adapter.fullname" .) }}
{{- end }}

{{/* The rule file the adapter reads (--config). */}}
{{- define "promscaler.adapter.ruleFile" -}}
{{- if .Values.rules.config }}
{{- .Values.rules.config }}
{{- else }}
{{- $file := dict "rules" .Values.rules.custom }}
{{- if .Values.rules.external }}
{{- $_ := set $file "externalRules" .Values.rules.external }}
{{- end }}
{{- if .Values.rules.resource }}
{{- $_ := set $file "resourceRules" .Values.rules.resource }}
{{- end }}
{{- if .Values.rules.backends }}
{{- $_ := set $file "backends" .Values.rules.backends }}
{{- end }}
{{- toYaml $file }}
{{- end }}
{{- end }}

{{/* Preferred hostname anti-affinity for a component; call with (dict "ctx" $ "component" "adapter"). */}}
{{- define "promscaler.defaultAffinity" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "promscaler.selectorLabels" . | nindent 12 }}
{{- end }}
