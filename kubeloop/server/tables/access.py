"""Rows of RoleBindings, ClusterRoleBindings and CertificateSigningRequests.

As kube-apiserver 1.33's ``printRoleBinding``, ``printClusterRoleBinding`` and
``printCertificateSigningRequest`` (``pkg/printers/internalversion``). Bindings: NAME ROLE
(``Kind/name``) AGE, wide USERS GROUPS SERVICEACCOUNTS (``namespace/name``), each joined with
``", "`` (``pkg/apis/rbac``'s ``SubjectsStrings``; subjects of other kinds are not shown). CSRs:
NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION, where CONDITION is Denied, else
Approved, else Pending, then ``,Failed`` and ``,Issued`` (a certificate is present) as they hold.
Roles and ClusterRoles have no printer upstream: they get the generic NAME / CREATED AT table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import age, human_duration
from kubeloop.server.tables.docs import FieldDoc
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    created,
    dig,
    integer,
    items,
    name_of,
    text,
)


def subjects_strings(subjects: Any) -> tuple[list[str], list[str], list[str]]:
    """Users, groups and service accounts (``namespace/name``) of a binding's subjects."""
    users: list[str] = []
    groups: list[str] = []
    accounts: list[str] = []
    for subject in items(subjects):
        kind = subject.get("kind")
        name = text(subject.get("name"))
        if kind == "ServiceAccount":
            accounts.append(f"{text(subject.get('namespace'))}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return users, groups, accounts


def binding_cells(binding: Obj, now: datetime) -> list[Any]:
    role = f"{text(dig(binding, 'roleRef', 'kind'))}/{text(dig(binding, 'roleRef', 'name'))}"
    users, groups, accounts = subjects_strings(binding.get("subjects"))
    return [name_of(binding), role, age(created(binding), now), ", ".join(users), ", ".join(groups),
            ", ".join(accounts)]


def _binding_printer(kind: str) -> Printer:
    what = kind[0].lower() + kind[1:]
    return Printer(
        (
            NAME,
            Column("Role", "string", FieldDoc(f"rbac.v1.{kind}", "roleRef")),
            AGE,
            Column("Users", "string", f"Users in the {what}", priority=1),
            Column("Groups", "string", f"Groups in the {what}", priority=1),
            Column("ServiceAccounts", "string", f"ServiceAccounts in the {what}", priority=1),
        ),
        binding_cells,
    )


ROLE_BINDING_PRINTER = _binding_printer("RoleBinding")
CLUSTER_ROLE_BINDING_PRINTER = _binding_printer("ClusterRoleBinding")


def csr_condition(csr: Obj) -> str:
    """The CONDITION cell of a certificate signing request."""
    types = {condition.get("type") for condition in items(dig(csr, "status", "conditions"))}
    status = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        status += ",Failed"
    if dig(csr, "status", "certificate"):
        status += ",Issued"
    return status


def csr_cells(csr: Obj, now: datetime) -> list[Any]:
    expiration = dig(csr, "spec", "expirationSeconds")
    return [
        name_of(csr), age(created(csr), now), text(dig(csr, "spec", "signerName")) or "<none>",
        text(dig(csr, "spec", "username")),
        human_duration(integer(expiration)) if expiration is not None else "<none>",
        csr_condition(csr),
    ]


def _csr_spec(field: str) -> FieldDoc:
    return FieldDoc("certificates.v1.CertificateSigningRequestSpec", field)


CSR_PRINTER = Printer(
    (
        NAME,
        AGE,
        Column("SignerName", "string", _csr_spec("signerName")),
        Column("Requestor", "string", _csr_spec("request")),
        Column("RequestedDuration", "string", _csr_spec("expirationSeconds")),
        Column("Condition", "string", FieldDoc("certificates.v1.CertificateSigningRequestStatus", "conditions")),
    ),
    csr_cells,
)
