"""Rows of the API machinery's own kinds: admission webhook configurations, validating
admission policies and their bindings, FlowSchemas, PriorityLevelConfigurations, APIServices.

As kube-apiserver 1.33's printers (``pkg/printers/internalversion``: ``printMutatingWebhook``,
``printValidatingWebhook``, ``printValidatingAdmissionPolicy``,
``printValidatingAdmissionPolicyBinding``, ``printFlowSchema``,
``printPriorityLevelConfiguration``) and kube-aggregator's APIService table
(``pkg/registry/apiservice/etcd``). FlowSchema lists are ordered as upstream orders them:
by matching precedence, then name. A binding's PARAMREF is ``namespace/name`` (``*/name``
without a namespace), else the parameter selector in Go's struct notation
(``&LabelSelector{...}``), else ``<unset>``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import age
from kubeloop.server.tables.docs import FieldDoc
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    condition_status,
    created,
    dig,
    integer,
    items,
    mapping,
    name_of,
    text,
)

WEBHOOKS = Column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration")

WEBHOOK_CONFIGURATION_PRINTER = Printer(
    (NAME, WEBHOOKS, AGE),
    lambda configuration, now: [name_of(configuration), len(items(configuration.get("webhooks"))),
                                age(created(configuration), now)],
)


def _param_kind(policy: Obj) -> str:
    kind = dig(policy, "spec", "paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return f"{text(kind.get('apiVersion'))}/{text(kind.get('kind'))}"


VALIDATING_ADMISSION_POLICY_PRINTER = Printer(
    (
        NAME,
        Column("Validations", "integer",
               "Validations indicates the number of validation rules defined in this configuration"),
        Column("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
        AGE,
    ),
    lambda policy, now: [name_of(policy), len(items(dig(policy, "spec", "validations"))), _param_kind(policy),
                         age(created(policy), now)],
)


def _go_requirement(requirement: Any) -> str:
    values = " ".join(text(v) for v in dig(requirement, "values") or ())
    return (f"LabelSelectorRequirement{{Key:{text(dig(requirement, 'key'))},"
            f"Operator:{text(dig(requirement, 'operator'))},Values:[{values}],}}")


def go_label_selector(selector: Any) -> str:
    """A ``metav1.LabelSelector`` as its generated ``String()`` prints it."""
    labels = mapping(dig(selector, "matchLabels"))
    match_labels = "".join(f"{key}: {text(labels[key])}," for key in sorted(labels))
    expressions = "".join(_go_requirement(e) + "," for e in items(dig(selector, "matchExpressions")))
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{match_labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")


def binding_param(binding: Obj) -> str:
    reference = dig(binding, "spec", "paramRef")
    if not isinstance(reference, dict):
        return "<unset>"
    name = text(reference.get("name"))
    if name:
        namespace = text(reference.get("namespace"))
        return f"{namespace}/{name}" if namespace else f"*/{name}"
    if isinstance(reference.get("selector"), dict):
        return go_label_selector(reference["selector"])
    return "<unset>"


VALIDATING_ADMISSION_POLICY_BINDING_PRINTER = Printer(
    (
        NAME,
        Column("PolicyName", "string",
               "PolicyName indicates the policy definition which the policy binding binded to"),
        Column("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param"),
        AGE,
    ),
    lambda binding, now: [name_of(binding), text(dig(binding, "spec", "policyName")), binding_param(binding),
                          age(created(binding), now)],
)


def flow_schema_cells(schema: Obj, now: datetime) -> list[Any]:
    method = dig(schema, "spec", "distinguisherMethod")
    dangling = condition_status(dig(schema, "status", "conditions"), "Dangling")
    return [
        name_of(schema), text(dig(schema, "spec", "priorityLevelConfiguration", "name")),
        integer(dig(schema, "spec", "matchingPrecedence")),
        text(method.get("type")) if isinstance(method, dict) else "<none>",
        age(created(schema), now), dangling if dangling is not None else "?",
    ]


def flow_schema_order(schema: Obj) -> tuple[int, str]:
    """Upstream's ``FlowSchemaSequence``: lower matching precedence first, then by name."""
    return integer(dig(schema, "spec", "matchingPrecedence")), name_of(schema)


FLOW_SCHEMA_PRINTER = Printer(
    (
        NAME,
        Column("PriorityLevel", "string", FieldDoc("flowcontrol.v1.PriorityLevelConfigurationReference", "name")),
        Column("MatchingPrecedence", "string", FieldDoc("flowcontrol.v1.FlowSchemaSpec", "matchingPrecedence")),
        Column("DistinguisherMethod", "string", FieldDoc("flowcontrol.v1.FlowSchemaSpec", "distinguisherMethod")),
        AGE,
        Column("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
    ),
    flow_schema_cells,
    order=flow_schema_order,
)


def priority_level_cells(level: Obj, now: datetime) -> list[Any]:
    shares: Any = "<none>"
    queues: Any = "<none>"
    hand_size: Any = "<none>"
    queue_length: Any = "<none>"
    limited = dig(level, "spec", "limited")
    if isinstance(limited, dict):
        shares = integer(limited.get("nominalConcurrencyShares"))
        queuing = dig(limited, "limitResponse", "queuing")
        if isinstance(queuing, dict):
            queues = integer(queuing.get("queues"))
            hand_size = integer(queuing.get("handSize"))
            queue_length = integer(queuing.get("queueLengthLimit"))
    return [name_of(level), text(dig(level, "spec", "type")), shares, queues, hand_size, queue_length,
            age(created(level), now)]


def _queuing(field: str) -> FieldDoc:
    return FieldDoc("flowcontrol.v1.QueuingConfiguration", field)


PRIORITY_LEVEL_PRINTER = Printer(
    (
        NAME,
        Column("Type", "string", FieldDoc("flowcontrol.v1.PriorityLevelConfigurationSpec", "type")),
        Column("NominalConcurrencyShares", "string",
               FieldDoc("flowcontrol.v1.LimitedPriorityLevelConfiguration", "nominalConcurrencyShares")),
        Column("Queues", "string", _queuing("queues")),
        Column("HandSize", "string", _queuing("handSize")),
        Column("QueueLengthLimit", "string", _queuing("queueLengthLimit")),
        AGE,
    ),
    priority_level_cells,
)


def api_service_available(service: Obj) -> str:
    """``True``, ``<status> (<reason>)``, or the bare status of the Available condition;
    ``Unknown`` without one."""
    for condition in items(dig(service, "status", "conditions")):
        if condition.get("type") == "Available":
            status = text(condition.get("status"))
            reason = text(condition.get("reason"))
            return f"{status} ({reason})" if status != "True" and reason else status
    return "Unknown"


def api_service_cells(service: Obj, now: datetime) -> list[Any]:
    reference = dig(service, "spec", "service")
    target = (f"{text(reference.get('namespace'))}/{text(reference.get('name'))}" if isinstance(reference, dict)
              else "Local")
    return [name_of(service), target, api_service_available(service), age(created(service), now)]


API_SERVICE_PRINTER = Printer(
    (
        NAME,
        Column("Service", "string", "The reference to the service that hosts this API endpoint."),
        Column("Available", "string", "Whether this service is available."),
        AGE,
    ),
    api_service_cells,
)
