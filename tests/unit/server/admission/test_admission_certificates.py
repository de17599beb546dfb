"""CertificateSigningRequests: requester identity, kept spec, request/usages/signer/conditions."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kinds_b_helpers import create, stored, update

CERTS = "certificates.k8s.io"


def pem_request() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = (x509.CertificateSigningRequestBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")]))
               .sign(key, hashes.SHA256()))
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def csr(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"request": pem_request(), "signerName": "kubernetes.io/kube-apiserver-client",
                            "usages": ["client auth"]}
    body.update(spec)
    return {"metadata": {"name": "alice"}, "spec": {k: v for k, v in body.items() if v is not None}}


def test_requester_replaces_claimed_identity() -> None:
    obj = csr(username="mallory", groups=["system:masters"], uid="1")
    assert create(CERTS, "CertificateSigningRequest", obj) == []
    assert obj["spec"]["username"] == "kubernetes-admin"
    assert obj["spec"]["groups"] == ["system:masters", "system:authenticated"]
    assert "uid" not in obj["spec"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"usages": None}, ["spec.usages: Required value"]),
        ({"usages": ["client auth", "client auth"]}, ['spec.usages[1]: Duplicate value: "client auth"']),
        ({"usages": ["flying"]}, [
            'spec.usages[0]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", '
            '"code signing", "content commitment", "crl sign", "data encipherment", "decipher only", '
            '"digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", '
            '"ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", '
            '"s/mime", "server auth", "signing", "timestamping"']),
        ({"signerName": "kubernetes.io/legacy-unknown"},
         ['spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via '
          "this API version"]),
        ({"signerName": "signer"},
         ['spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form '
          "'example.com/signer-name'"]),
        ({"expirationSeconds": 60},
         ["spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"]),
        ({"request": base64.b64encode(b"hello").decode()},
         ["spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be "
          "CERTIFICATE REQUEST"]),
    ],
)
def test_csr_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert create(CERTS, "CertificateSigningRequest", csr(**spec)) == expected


def test_main_endpoint_keeps_spec_and_status_writes_stamp_conditions() -> None:
    old = stored(CERTS, "CertificateSigningRequest", csr())
    assert update(CERTS, "CertificateSigningRequest", old, lambda new: new["spec"].update(usages=["any"])) == []
    approve = {"conditions": [{"type": "Approved", "status": "True", "reason": "KubectlApprove"}]}

    def approved(new: dict[str, Any]) -> None:
        new["status"] = approve
        new["spec"]["signerName"] = "example.com/other"

    assert update(CERTS, "CertificateSigningRequest", old, approved, status=True) == []
    both = {"conditions": [{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]}
    assert update(CERTS, "CertificateSigningRequest", old, lambda new: new.update(status=both), status=True) == [
        "status.conditions: Invalid value: []certificates.CertificateSigningRequestCondition{...}: Approved and "
        "Denied conditions are mutually exclusive"]
    denied = {"conditions": [{"type": "Denied", "status": "False"}]}
    assert update(CERTS, "CertificateSigningRequest", old, lambda new: new.update(status=denied), status=True) == [
        'status.conditions[0].status: Unsupported value: "False": supported values: "True"']


def test_prepare_update_restores_spec_and_sets_condition_times() -> None:
    from kubeloop.server.admission import prepare_update

    old = stored(CERTS, "CertificateSigningRequest", csr())
    new = {**old, "spec": {"usages": ["any"]}, "status": {"conditions": [{"type": "Approved", "status": "True"}]}}
    prepare_update(CERTS, "CertificateSigningRequest", new, old, status=True)
    assert new["spec"] == old["spec"]
    condition = new["status"]["conditions"][0]
    assert condition["lastUpdateTime"] and condition["lastTransitionTime"] == condition["lastUpdateTime"]
