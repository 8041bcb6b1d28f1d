{{/* Names: <release>-chunkweave unless the release is already called so. */}}
{{- define "chunkweave.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "chunkweave.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: chunkweave.selector (dict "ctx" . "component" "api") */}}
{{- define "chunkweave.selector" -}}
app.kubernetes.io/name: {{ .ctx.Chart.Name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "chunkweave.image" -}}
{{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end -}}

{{- define "chunkweave.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "chunkweave.fullname" .)) -}}
{{- end -}}

{{- define "chunkweave.redisHost" -}}
{{- printf "%s-redis" (include "chunkweave.fullname" .) -}}
{{- end -}}

{{- define "chunkweave.weaviateUrl" -}}
{{- if .Values.weaviate.enabled -}}
{{- printf "http://%s-weaviate:8080" (include "chunkweave.fullname" .) -}}
{{- else -}}
{{- required "externalWeaviate.url is required when weaviate.enabled is false" .Values.externalWeaviate.url -}}
{{- end -}}
{{- end -}}

{{- define "chunkweave.weaviateGrpcPort" -}}
{{- if .Values.weaviate.enabled -}}50051{{- else -}}{{ .Values.externalWeaviate.grpcPort }}{{- end -}}
{{- end -}}

{{/* The pod spec parts every chunkweave component shares: env, volumes, security. */}}
{{- define "chunkweave.env" -}}
- name: CHUNKWEAVE_REDIS_URL
  valueFrom:
    secretKeyRef: {name: {{ include "chunkweave.secretName" . }}, key: redis-url}
- name: CHUNKWEAVE_WEAVIATE__API_KEY
  valueFrom:
    secretKeyRef: {name: {{ include "chunkweave.secretName" . }}, key: weaviate-api-key, optional: true}
{{- end -}}

{{- define "chunkweave.envFrom" -}}
- configMapRef:
    name: {{ include "chunkweave.fullname" . }}-config
{{- end -}}

{{- define "chunkweave.volumeMounts" -}}
- {name: data, mountPath: /data}
- {name: inbox, mountPath: /inbox}
- {name: tmp, mountPath: /tmp}
{{- end -}}

{{- define "chunkweave.volumes" -}}
- name: data
  persistentVolumeClaim:
    claimName: {{ .Values.persistence.data.existingClaim | default (printf "%s-data" (include "chunkweave.fullname" .)) }}
- name: inbox
  persistentVolumeClaim:
    claimName: {{ .Values.persistence.inbox.existingClaim | default (printf "%s-inbox" (include "chunkweave.fullname" .)) }}
- name: tmp
  emptyDir: {}
{{- end -}}

{{- define "chunkweave.podSpec" -}}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
securityContext: {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
volumes: {{- include "chunkweave.volumes" . | nindent 2 }}
{{- end -}}
