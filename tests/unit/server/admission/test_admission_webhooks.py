"""Webhook configurations and ValidatingAdmissionPolicies: v1 defaults and the usual mistakes."""

from __future__ import annotations

from typing import Any

import pytest
from kinds_b_helpers import create, stored, update

ADM = "admissionregistration.k8s.io"
RULE = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}


def hook(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "check.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                            "clientConfig": {"service": {"name": "svc", "namespace": "default"}},
                            "rules": [dict(RULE)]}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def test_mutating_webhook_defaults() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "m"}, "webhooks": [hook()]}
    assert create(ADM, "MutatingWebhookConfiguration", obj) == []
    assert obj["webhooks"][0] == {
        **hook(), "failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
        "timeoutSeconds": 10, "reinvocationPolicy": "Never", "rules": [{**RULE, "scope": "*"}],
        "clientConfig": {"service": {"name": "svc", "namespace": "default", "port": 443}}}


def test_validating_webhook_has_no_reinvocation_policy() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "v"}, "webhooks": [hook()]}
    assert create(ADM, "ValidatingWebhookConfiguration", obj) == []
    assert "reinvocationPolicy" not in obj["webhooks"][0]
    assert obj["webhooks"][0]["timeoutSeconds"] == 10


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"sideEffects": None}, ["webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"]),
        ({"sideEffects": "Some"},
         ['webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"']),
        ({"admissionReviewVersions": None},
         ["webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"]),
        ({"admissionReviewVersions": ["v2"]},
         ['webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, '
          "v1beta1"]),
        ({"clientConfig": {}}, ["webhooks[0].clientConfig: Required value: exactly one of url or service is required"]),
        ({"clientConfig": {"url": "http://hooks.example.com/x?a=b"}},
         ['webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired '
          "format: https://host[/path]",
          'webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL']),
        ({"clientConfig": {"service": {"name": "svc"}}},
         ["webhooks[0].clientConfig.service.namespace: Required value: service namespace is required"]),
        ({"name": "check"},
         ['webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by '
          "dots"]),
        ({"timeoutSeconds": 31},
         ["webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"]),
        ({"rules": [{"operations": ["PATCH"], "apiGroups": ["*", "apps"], "apiVersions": ["v1"]}]},
         ['webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", '
          '"CREATE", "DELETE", "UPDATE"',
          'webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, must not '
          "specify other API groups",
          "webhooks[0].rules[0].resources: Required value"]),
    ],
)
def test_webhook_validation(fields: dict[str, Any], expected: list[str]) -> None:
    obj = {"metadata": {"name": "v"}, "webhooks": [hook(**fields)]}
    assert create(ADM, "ValidatingWebhookConfiguration", obj) == expected


def test_duplicate_webhook_names_and_update() -> None:
    obj = {"metadata": {"name": "v"}, "webhooks": [hook(), hook()]}
    assert create(ADM, "ValidatingWebhookConfiguration", obj) == [
        'webhooks[1].name: Duplicate value: "check.example.com"']
    old = stored(ADM, "ValidatingWebhookConfiguration", {"metadata": {"name": "v"}, "webhooks": [hook()]})
    assert update(ADM, "ValidatingWebhookConfiguration", old,
                  lambda new: new["webhooks"][0].update(sideEffects="Unknown")) == [
        'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"']


def test_admission_policy_defaults() -> None:
    policy: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {
        "matchConstraints": {"resourceRules": [dict(RULE)]}, "validations": [{"expression": "true"}]}}
    assert create(ADM, "ValidatingAdmissionPolicy", policy) == []
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert policy["spec"]["matchConstraints"] == {"resourceRules": [{**RULE, "scope": "*"}],
                                                  "matchPolicy": "Equivalent", "namespaceSelector": {},
                                                  "objectSelector": {}}
    binding: dict[str, Any] = {"metadata": {"name": "b"}, "spec": {"policyName": "p", "matchResources": {},
                                                                   "validationActions": ["Deny"]}}
    assert create(ADM, "ValidatingAdmissionPolicyBinding", binding) == []
    assert binding["spec"]["matchResources"] == {"matchPolicy": "Equivalent", "namespaceSelector": {},
                                                 "objectSelector": {}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, ["spec.matchConstraints: Required value",
              "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
              "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item"]),
        ({"matchConstraints": {"resourceRules": [RULE]}, "validations": [{"expression": " "}]},
         ["spec.validations[0].expression: Required value: expression is not specified"]),
        ({"matchConstraints": {}, "auditAnnotations": [{"key": "k", "valueExpression": "'v'"}]},
         ["spec.matchConstraints.resourceRules: Required value"]),
    ],
)
def test_admission_policy_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert create(ADM, "ValidatingAdmissionPolicy", {"metadata": {"name": "p"}, "spec": spec}) == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"policyName": "p", "validationActions": ["Deny"]}, []),
        ({"validationActions": ["Deny"]}, ["spec.policyName: Required value"]),
        ({"policyName": "p"}, ["spec.validationActions: Required value: at least one validation action is required"]),
        ({"policyName": "p", "validationActions": ["Deny", "Warn", "Shout"]},
         ['spec.validationActions[2]: Unsupported value: "Shout": supported values: "Audit", "Deny", "Warn"',
          'spec.validationActions: Invalid value: []string{"Deny", "Warn", "Shout"}: must not contain both Deny and '
          "Warn (repeating the same validation failure information in the API response and headers serves no "
          "purpose)"]),
    ],
)
def test_admission_policy_binding_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert create(ADM, "ValidatingAdmissionPolicyBinding", {"metadata": {"name": "b"}, "spec": spec}) == expected
