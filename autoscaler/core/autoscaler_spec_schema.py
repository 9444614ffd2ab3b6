# ruff: noqa: E501
"""The Autoscaler CRD's structural schema of `spec` (charts/promscaler/crds/), as plain data.

Written by scripts/crd_spec_schema.py from the CRD; do not edit: run the script after changing
the CRD (tests/convert/test_convert_strict.py fails until you do). Lines may be long: the
CRD's patterns are.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["SPEC_SCHEMA"]

SPEC_SCHEMA: Final[dict[str, Any]] = {
    "properties": {
        "behavior": {
            "properties": {
                "scaleDown": {
                    "properties": {
                        "podDeletionCost": {
                            "properties": {
                                "metric": {
                                    "properties": {
                                        "name": {
                                            "minLength": 1,
                                            "type": "string",
                                        },
                                        "selector": {
                                            "properties": {
                                                "matchExpressions": {
                                                    "items": {
                                                        "properties": {
                                                            "key": {
                                                                "type": "string",
                                                            },
                                                            "operator": {
                                                                "enum": [
                                                                    "In",
                                                                    "NotIn",
                                                                    "Exists",
                                                                    "DoesNotExist",
                                                                ],
                                                                "maxLength": 32,
                                                                "type": "string",
                                                            },
                                                            "values": {
                                                                "items": {
                                                                    "type": "string",
                                                                },
                                                                "type": "array",
                                                                "x-kubernetes-list-type": "atomic",
                                                            },
                                                        },
                                                        "required": [
                                                            "key",
                                                            "operator",
                                                        ],
                                                        "type": "object",
                                                    },
                                                    "type": "array",
                                                    "x-kubernetes-list-type": "atomic",
                                                },
                                                "matchLabels": {
                                                    "additionalProperties": {
                                                        "type": "string",
                                                    },
                                                    "type": "object",
                                                },
                                            },
                                            "type": "object",
                                            "x-kubernetes-map-type": "atomic",
                                        },
                                    },
                                    "required": [
                                        "name",
                                    ],
                                    "type": "object",
                                },
                            },
                            "required": [
                                "metric",
                            ],
                            "type": "object",
                        },
                        "policies": {
                            "items": {
                                "properties": {
                                    "periodSeconds": {
                                        "maximum": 1800,
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                    "type": {
                                        "enum": [
                                            "Pods",
                                            "Percent",
                                        ],
                                        "maxLength": 32,
                                        "type": "string",
                                    },
                                    "value": {
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                },
                                "required": [
                                    "type",
                                    "value",
                                    "periodSeconds",
                                ],
                                "type": "object",
                            },
                            "maxItems": 16,
                            "type": "array",
                            "x-kubernetes-list-type": "atomic",
                        },
                        "selectPolicy": {
                            "enum": [
                                "Max",
                                "Min",
                                "Disabled",
                            ],
                            "maxLength": 32,
                            "type": "string",
                        },
                        "stabilizationWindowSeconds": {
                            "maximum": 3600,
                            "minimum": 0,
                            "type": "integer",
                        },
                        "tolerance": {
                            "anyOf": [
                                {
                                    "type": "integer",
                                },
                                {
                                    "type": "string",
                                },
                            ],
                            "pattern": "^\\+?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                            "x-kubernetes-int-or-string": True,
                        },
                    },
                    "type": "object",
                },
                "scaleUp": {
                    "properties": {
                        "policies": {
                            "items": {
                                "properties": {
                                    "periodSeconds": {
                                        "maximum": 1800,
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                    "type": {
                                        "enum": [
                                            "Pods",
                                            "Percent",
                                        ],
                                        "maxLength": 32,
                                        "type": "string",
                                    },
                                    "value": {
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                },
                                "required": [
                                    "type",
                                    "value",
                                    "periodSeconds",
                                ],
                                "type": "object",
                            },
                            "maxItems": 16,
                            "type": "array",
                            "x-kubernetes-list-type": "atomic",
                        },
                        "selectPolicy": {
                            "enum": [
                                "Max",
                                "Min",
                                "Disabled",
                            ],
                            "maxLength": 32,
                            "type": "string",
                        },
                        "stabilizationWindowSeconds": {
                            "maximum": 3600,
                            "minimum": 0,
                            "type": "integer",
                        },
                        "tolerance": {
                            "anyOf": [
                                {
                                    "type": "integer",
                                },
                                {
                                    "type": "string",
                                },
                            ],
                            "pattern": "^\\+?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                            "x-kubernetes-int-or-string": True,
                        },
                    },
                    "type": "object",
                },
            },
            "type": "object",
        },
        "fallback": {
            "properties": {
                "behavior": {
                    "enum": [
                        "Static",
                        "CurrentReplicas",
                        "CurrentReplicasIfHigher",
                        "CurrentReplicasIfLower",
                    ],
                    "type": "string",
                },
                "failureThreshold": {
                    "minimum": 1,
                    "type": "integer",
                },
                "recoveryThreshold": {
                    "minimum": 1,
                    "type": "integer",
                },
                "replicas": {
                    "minimum": 0,
                    "type": "integer",
                },
            },
            "required": [
                "replicas",
            ],
            "type": "object",
        },
        "maxReplicas": {
            "minimum": 1,
            "type": "integer",
        },
        "metrics": {
            "items": {
                "properties": {
                    "activation": {
                        "properties": {
                            "threshold": {
                                "anyOf": [
                                    {
                                        "type": "integer",
                                    },
                                    {
                                        "type": "string",
                                    },
                                ],
                                "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                "x-kubernetes-int-or-string": True,
                            },
                        },
                        "required": [
                            "threshold",
                        ],
                        "type": "object",
                    },
                    "containerResource": {
                        "properties": {
                            "container": {
                                "minLength": 1,
                                "type": "string",
                            },
                            "name": {
                                "minLength": 1,
                                "type": "string",
                            },
                            "target": {
                                "properties": {
                                    "averageUtilization": {
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                    "averageValue": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                    "type": {
                                        "enum": [
                                            "Utilization",
                                            "Value",
                                            "AverageValue",
                                        ],
                                        "maxLength": 32,
                                        "type": "string",
                                    },
                                    "value": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                },
                                "required": [
                                    "type",
                                ],
                                "type": "object",
                            },
                        },
                        "required": [
                            "name",
                            "container",
                            "target",
                        ],
                        "type": "object",
                    },
                    "external": {
                        "properties": {
                            "metric": {
                                "properties": {
                                    "name": {
                                        "minLength": 1,
                                        "type": "string",
                                    },
                                    "selector": {
                                        "properties": {
                                            "matchExpressions": {
                                                "items": {
                                                    "properties": {
                                                        "key": {
                                                            "type": "string",
                                                        },
                                                        "operator": {
                                                            "enum": [
                                                                "In",
                                                                "NotIn",
                                                                "Exists",
                                                                "DoesNotExist",
                                                            ],
                                                            "maxLength": 32,
                                                            "type": "string",
                                                        },
                                                        "values": {
                                                            "items": {
                                                                "type": "string",
                                                            },
                                                            "type": "array",
                                                            "x-kubernetes-list-type": "atomic",
                                                        },
                                                    },
                                                    "required": [
                                                        "key",
                                                        "operator",
                                                    ],
                                                    "type": "object",
                                                },
                                                "type": "array",
                                                "x-kubernetes-list-type": "atomic",
                                            },
                                            "matchLabels": {
                                                "additionalProperties": {
                                                    "type": "string",
                                                },
                                                "type": "object",
                                            },
                                        },
                                        "type": "object",
                                        "x-kubernetes-map-type": "atomic",
                                    },
                                },
                                "required": [
                                    "name",
                                ],
                                "type": "object",
                            },
                            "target": {
                                "properties": {
                                    "averageUtilization": {
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                    "averageValue": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                    "type": {
                                        "enum": [
                                            "Utilization",
                                            "Value",
                                            "AverageValue",
                                        ],
                                        "maxLength": 32,
                                        "type": "string",
                                    },
                                    "value": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                },
                                "required": [
                                    "type",
                                ],
                                "type": "object",
                            },
                        },
                        "required": [
                            "metric",
                            "target",
                        ],
                        "type": "object",
                    },
                    "object": {
                        "properties": {
                            "describedObject": {
                                "properties": {
                                    "apiVersion": {
                                        "type": "string",
                                    },
                                    "kind": {
                                        "minLength": 1,
                                        "type": "string",
                                    },
                                    "name": {
                                        "minLength": 1,
                                        "type": "string",
                                    },
                                },
                                "required": [
                                    "kind",
                                    "name",
                                ],
                                "type": "object",
                                "x-kubernetes-map-type": "atomic",
                            },
                            "metric": {
                                "properties": {
                                    "name": {
                                        "minLength": 1,
                                        "type": "string",
                                    },
                                    "selector": {
                                        "properties": {
                                            "matchExpressions": {
                                                "items": {
                                                    "properties": {
                                                        "key": {
                                                            "type": "string",
                                                        },
                                                        "operator": {
                                                            "enum": [
                                                                "In",
                                                                "NotIn",
                                                                "Exists",
                                                                "DoesNotExist",
                                                            ],
                                                            "maxLength": 32,
                                                            "type": "string",
                                                        },
                                                        "values": {
                                                            "items": {
                                                                "type": "string",
                                                            },
                                                            "type": "array",
                                                            "x-kubernetes-list-type": "atomic",
                                                        },
                                                    },
                                                    "required": [
                                                        "key",
                                                        "operator",
                                                    ],
                                                    "type": "object",
                                                },
                                                "type": "array",
                                                "x-kubernetes-list-type": "atomic",
                                            },
                                            "matchLabels": {
                                                "additionalProperties": {
                                                    "type": "string",
                                                },
                                                "type": "object",
                                            },
                                        },
                                        "type": "object",
                                        "x-kubernetes-map-type": "atomic",
                                    },
                                },
                                "required": [
                                    "name",
                                ],
                                "type": "object",
                            },
                            "target": {
                                "properties": {
                                    "averageUtilization": {
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                    "averageValue": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                    "type": {
                                        "enum": [
                                            "Utilization",
                                            "Value",
                                            "AverageValue",
                                        ],
                                        "maxLength": 32,
                                        "type": "string",
                                    },
                                    "value": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                },
                                "required": [
                                    "type",
                                ],
                                "type": "object",
                            },
                        },
                        "required": [
                            "describedObject",
                            "metric",
                            "target",
                        ],
                        "type": "object",
                    },
                    "pods": {
                        "properties": {
                            "metric": {
                                "properties": {
                                    "name": {
                                        "minLength": 1,
                                        "type": "string",
                                    },
                                    "selector": {
                                        "properties": {
                                            "matchExpressions": {
                                                "items": {
                                                    "properties": {
                                                        "key": {
                                                            "type": "string",
                                                        },
                                                        "operator": {
                                                            "enum": [
                                                                "In",
                                                                "NotIn",
                                                                "Exists",
                                                                "DoesNotExist",
                                                            ],
                                                            "maxLength": 32,
                                                            "type": "string",
                                                        },
                                                        "values": {
                                                            "items": {
                                                                "type": "string",
                                                            },
                                                            "type": "array",
                                                            "x-kubernetes-list-type": "atomic",
                                                        },
                                                    },
                                                    "required": [
                                                        "key",
                                                        "operator",
                                                    ],
                                                    "type": "object",
                                                },
                                                "type": "array",
                                                "x-kubernetes-list-type": "atomic",
                                            },
                                            "matchLabels": {
                                                "additionalProperties": {
                                                    "type": "string",
                                                },
                                                "type": "object",
                                            },
                                        },
                                        "type": "object",
                                        "x-kubernetes-map-type": "atomic",
                                    },
                                },
                                "required": [
                                    "name",
                                ],
                                "type": "object",
                            },
                            "target": {
                                "properties": {
                                    "averageUtilization": {
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                    "averageValue": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                    "type": {
                                        "enum": [
                                            "Utilization",
                                            "Value",
                                            "AverageValue",
                                        ],
                                        "maxLength": 32,
                                        "type": "string",
                                    },
                                    "value": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                },
                                "required": [
                                    "type",
                                ],
                                "type": "object",
                            },
                        },
                        "required": [
                            "metric",
                            "target",
                        ],
                        "type": "object",
                    },
                    "resource": {
                        "properties": {
                            "name": {
                                "minLength": 1,
                                "type": "string",
                            },
                            "target": {
                                "properties": {
                                    "averageUtilization": {
                                        "minimum": 1,
                                        "type": "integer",
                                    },
                                    "averageValue": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                    "type": {
                                        "enum": [
                                            "Utilization",
                                            "Value",
                                            "AverageValue",
                                        ],
                                        "maxLength": 32,
                                        "type": "string",
                                    },
                                    "value": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                            },
                                            {
                                                "type": "string",
                                            },
                                        ],
                                        "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                                        "x-kubernetes-int-or-string": True,
                                    },
                                },
                                "required": [
                                    "type",
                                ],
                                "type": "object",
                            },
                        },
                        "required": [
                            "name",
                            "target",
                        ],
                        "type": "object",
                    },
                    "type": {
                        "enum": [
                            "Object",
                            "Pods",
                            "Resource",
                            "ContainerResource",
                            "External",
                        ],
                        "maxLength": 32,
                        "type": "string",
                    },
                },
                "required": [
                    "type",
                ],
                "type": "object",
            },
            "maxItems": 64,
            "type": "array",
            "x-kubernetes-list-type": "atomic",
        },
        "minReplicas": {
            "minimum": 0,
            "type": "integer",
        },
        "predictive": {
            "properties": {
                "history": {
                    "maxLength": 64,
                    "type": "string",
                },
                "horizon": {
                    "maxLength": 64,
                    "type": "string",
                },
                "mode": {
                    "enum": [
                        "Scale",
                        "ForecastOnly",
                    ],
                    "type": "string",
                },
                "seasonality": {
                    "items": {
                        "maxLength": 64,
                        "type": "string",
                    },
                    "maxItems": 4,
                    "minItems": 1,
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                },
                "tolerance": {
                    "anyOf": [
                        {
                            "type": "integer",
                        },
                        {
                            "type": "string",
                        },
                    ],
                    "pattern": "^\\+?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
                    "x-kubernetes-int-or-string": True,
                },
            },
            "type": "object",
        },
        "scaleTargetRef": {
            "properties": {
                "apiVersion": {
                    "type": "string",
                },
                "kind": {
                    "minLength": 1,
                    "type": "string",
                },
                "name": {
                    "minLength": 1,
                    "type": "string",
                },
            },
            "required": [
                "kind",
                "name",
            ],
            "type": "object",
            "x-kubernetes-map-type": "atomic",
        },
        "scaleToZero": {
            "properties": {
                "cooldownSeconds": {
                    "minimum": 0,
                    "type": "integer",
                },
                "initialCooldownSeconds": {
                    "minimum": 0,
                    "type": "integer",
                },
            },
            "type": "object",
        },
        "schedules": {
            "items": {
                "properties": {
                    "duration": {
                        "maxLength": 64,
                        "type": "string",
                    },
                    "maxReplicas": {
                        "minimum": 1,
                        "type": "integer",
                    },
                    "minReplicas": {
                        "minimum": 0,
                        "type": "integer",
                    },
                    "name": {
                        "maxLength": 63,
                        "minLength": 1,
                        "type": "string",
                    },
                    "schedule": {
                        "maxLength": 200,
                        "type": "string",
                    },
                    "timeZone": {
                        "maxLength": 64,
                        "type": "string",
                    },
                },
                "required": [
                    "name",
                    "schedule",
                    "duration",
                    "minReplicas",
                ],
                "type": "object",
            },
            "maxItems": 20,
            "type": "array",
            "x-kubernetes-list-map-keys": [
                "name",
            ],
            "x-kubernetes-list-type": "map",
        },
    },
    "required": [
        "scaleTargetRef",
        "maxReplicas",
    ],
    "type": "object",
}
