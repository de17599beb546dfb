"""certificates.k8s.io/v1 CertificateSigningRequests.

As upstream's ``pkg/registry/certificates/certificates/strategy.go``: on create the requester's
identity is written into ``spec.username``/``groups``/``uid``/``extra`` (whatever the client
sent) and ``status`` starts empty; a write through the main endpoint changes neither ``spec``
nor ``status``; ``/status`` and ``/approval`` writes keep ``spec`` and stamp the conditions'
``lastUpdateTime`` / ``lastTransitionTime`` when missing (``populateConditionTimestamps``).
Validation as ``pkg/apis/certificates/validation``: a PEM ``CERTIFICATE REQUEST``, known and
unique usages, a fully qualified signer name (not the legacy one), expirations of at least ten
minutes, and conditions: Approved and Denied are ``True`` only, exclusive, never removed.

The only authenticated user is the kubeconfig's administrator, so the requester is always it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from cryptography import x509

from kubeloop.api import names
from kubeloop.api.status import FieldError, duplicate, forbidden, invalid, not_supported, required, too_long
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    index,
    int_at,
    mapping_at,
    objects_at,
    str_at,
    str_list_at,
)
from kubeloop.server.admission.metadata import (
    name_is_path_segment,
    validate_object_meta,
    validate_object_meta_update,
)

GROUP = "certificates.k8s.io"
LEGACY_SIGNER = "kubernetes.io/legacy-unknown"
USAGES = ("any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment",
          "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system",
          "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc",
          "ocsp signing", "s/mime", "server auth", "signing", "timestamping")
APPROVAL_TYPES = ("Approved", "Denied", "Failed")
_PEM_TYPE = "CERTIFICATE REQUEST"

REQUESTER: dict[str, Any] = {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
"""Who every authenticated request is (``kubeloop.server.handlers.virtual.ADMIN_USER``)."""


# ------------------------------------------------------------------------------ strategy


def set_requester(csr: dict[str, Any]) -> None:
    """``PrepareForCreate``: the requester's identity replaces what the client claimed."""
    spec = csr.get("spec")
    if spec is None:
        spec = csr["spec"] = {}
    if not isinstance(spec, dict):
        return
    for name in ("username", "uid", "groups", "extra"):
        spec.pop(name, None)
    spec["username"] = REQUESTER["username"]
    spec["groups"] = list(REQUESTER["groups"])


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def prepare_update(new: dict[str, Any], old: Mapping[str, Any], status: bool) -> None:
    """``PrepareForUpdate`` of the three strategies (main endpoint, ``/status``, ``/approval``)."""
    if "spec" in old:
        new["spec"] = old["spec"]
    else:
        new.pop("spec", None)
    if not status:
        return
    old_conditions = {c.get("type"): c for c in mapping_at(old, "status", "", []).get("conditions") or []
                      if isinstance(c, dict)}
    now = _now()
    for condition in mapping_at(new, "status", "", []).get("conditions") or []:
        if not isinstance(condition, dict):
            continue
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            previous = old_conditions.get(condition.get("type"))
            if previous is not None and previous.get("status") == condition.get("status") and \
                    previous.get("lastTransitionTime"):
                condition["lastTransitionTime"] = previous["lastTransitionTime"]
            else:
                condition["lastTransitionTime"] = now


# ---------------------------------------------------------------------------- validation


def _go_bytes(data: bytes) -> GoLiteral:
    return GoLiteral("[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}")


def _request_error(text: str) -> tuple[bytes, str | None]:
    """The decoded request and what ``ParseCSR`` / ``CheckSignature`` say about it."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text.encode(), "illegal base64 data"
    marker = f"-----BEGIN {_PEM_TYPE}-----".encode()
    if marker not in data:
        return data, f"PEM block type must be {_PEM_TYPE}"
    try:
        request = x509.load_pem_x509_csr(data)
    except ValueError as exc:
        return data, f"x509: malformed certificate request ({exc})"
    if not request.is_signature_valid:
        return data, "x509: ECDSA verification failure"
    return data, None


def signer_name_errors(signer: str, path: str) -> Errors:
    """``ValidateSignerName``: ``<fully qualified domain>/<name>``."""
    if not signer:
        return [required(path)]
    segments = signer.split("/")
    if len(segments) != 2:
        return [invalid(path, signer, "must be a fully qualified domain and path of the form "
                                      "'example.com/signer-name'")]
    domain, name = segments
    errs: Errors = []
    if len(domain) > names.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(too_long(path, names.DNS1123_SUBDOMAIN_MAX_LENGTH))
    labels = domain.split(".")
    for label in labels:
        messages = names.dns1123_label_errors(label)
        if messages:
            errs.extend(invalid(path, domain, f'validating label "{label}": {m}') for m in messages)
            break
    if len(labels) < 2:
        errs.append(invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    if len(name) > names.DNS1123_LABEL_MAX_LENGTH:
        errs.append(too_long(path, names.DNS1123_LABEL_MAX_LENGTH))
    errs.extend(invalid(path, name, m) for m in names.dns1123_subdomain_errors(name))
    return errs


def _condition_errors(csr: Mapping[str, Any], errs: Errors) -> None:
    path = "status.conditions"
    status = mapping_at(csr, "status", "", errs)
    seen: set[str] = set()
    flags = {"Approved": False, "Denied": False}
    for item_path, condition in objects_at(status, "conditions", "status", errs):
        kind = str_at(condition, "type", item_path, errs)
        value = str_at(condition, "status", item_path, errs)
        if not kind:
            errs.append(required(child(item_path, "type")))
        if kind in flags:
            flags[kind] = True
            if value != "True":
                errs.append(not_supported(child(item_path, "status"), value, ["True"]))
        elif value not in ("True", "False", "Unknown"):
            errs.append(not_supported(child(item_path, "status"), value, ["False", "True", "Unknown"]))
        if kind in seen:
            errs.append(duplicate(child(item_path, "type"), kind))
        seen.add(kind)
    if all(flags.values()):
        errs.append(invalid(path, GoLiteral("[]certificates.CertificateSigningRequestCondition{...}"),
                            "Approved and Denied conditions are mutually exclusive"))


def validate_csr_create(csr: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(csr, False, name_is_path_segment)
    spec = mapping_at(csr, "spec", "", errs)
    data, problem = _request_error(str_at(spec, "request", "spec", errs))
    if problem is not None:
        errs.append(invalid("spec.request", _go_bytes(data), problem))
    usages = str_list_at(spec, "usages", "spec", errs)
    if not usages:
        errs.append(required("spec.usages"))
    for position, usage in enumerate(usages):
        if usage not in USAGES:
            errs.append(not_supported(index("spec.usages", position), usage, USAGES))
    for position, usage in enumerate(usages):
        if usage in usages[:position]:
            errs.append(duplicate(index("spec.usages", position), usage))
    signer = str_at(spec, "signerName", "spec", errs)
    if signer == LEGACY_SIGNER:
        errs.append(invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
    else:
        errs.extend(signer_name_errors(signer, "spec.signerName"))
    expiration = int_at(spec, "expirationSeconds", "spec", errs)
    if expiration is not None and expiration < 600:
        errs.append(invalid("spec.expirationSeconds", expiration,
                            "may not specify a duration less than 600 seconds (10 minutes)"))
    _condition_errors(csr, errs)
    return errs


def _kept_condition_errors(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    def count(obj: Mapping[str, Any], kind: str) -> int:
        conditions = mapping_at(obj, "status", "", []).get("conditions") or []
        return sum(1 for c in conditions if isinstance(c, dict) and c.get("type") == kind)

    return [forbidden("status.conditions", f'updates may not remove a condition of type "{kind}"')
            for kind in APPROVAL_TYPES if count(new, kind) < count(old, kind)]


def validate_csr_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateCertificateSigningRequestUpdate`` (spec and status were reset to the old ones)."""
    errs = validate_object_meta_update(new, old)
    _condition_errors(new, errs)
    errs.extend(_kept_condition_errors(new, old))
    return errs


def validate_csr_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """Status and approval writes: conditions, and an issued certificate never changes."""
    errs = validate_csr_update(new, old)
    old_certificate = mapping_at(old, "status", "", []).get("certificate")
    if old_certificate and mapping_at(new, "status", "", []).get("certificate") != old_certificate:
        errs.append(invalid("status.certificate", "[omitted]", "updates may not modify existing certificate content"))
    return errs
