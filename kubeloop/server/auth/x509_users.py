"""The user a verified client certificate names: upstream's ``CommonNameUserConversion``.

k8s.io/apiserver ``pkg/authentication/request/x509/x509.go``: the subject's Common Name is the
user name (a certificate without one authenticates nobody), its Organizations are the groups,
and the credential id is ``X509SHA256=`` and the hex SHA-256 of the certificate's DER bytes.
``system:authenticated`` is added as kube-apiserver's group adder does for every authenticated
user. The chain itself was verified against the cluster CA by the TLS handshake (the server's
context requires nothing but accepts an optional client certificate; see kubeloop.server.app).
"""

from __future__ import annotations

import hashlib

from cryptography import x509
from cryptography.x509.oid import NameOID

from kubeloop.server.auth.user import AUTHENTICATED, UserInfo

CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"


def certificate_user(der: bytes) -> UserInfo | None:
    """The user of a client certificate (DER), None when it has no Common Name."""
    try:
        certificate = x509.load_der_x509_certificate(der)
    except ValueError:
        return None
    names = [str(a.value) for a in certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    # Go's pkix.Name keeps the last Common Name of the subject.
    if not names or not names[-1]:
        return None
    groups = [str(a.value) for a in certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    if AUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    credential = "X509SHA256=" + hashlib.sha256(der).hexdigest()
    return UserInfo(names[-1], tuple(groups), "", {CREDENTIAL_ID_KEY: [credential]})
