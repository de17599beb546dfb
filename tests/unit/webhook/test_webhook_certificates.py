"""The webhook's certificate rules: what is issued, when it is kept, when the CA is reused."""

from __future__ import annotations

import dataclasses
import datetime

from kubeloop.webhook import certificates
from kubeloop.webhook.certificates import is_valid, issue
from kubeloop.webhook.configuration import service_dns_names

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
NAMES = service_dns_names("kubeloop-system")


def test_issued_certificate_serves_every_service_name_until_six_months_before_expiry() -> None:
    artifacts = issue(NAMES, NOW)
    assert is_valid(artifacts, NAMES, NOW)
    assert is_valid(artifacts, NAMES, NOW + certificates.VALIDITY - certificates.RENEW_BEFORE
                    - datetime.timedelta(days=1))
    assert not is_valid(artifacts, NAMES, NOW + certificates.VALIDITY - certificates.RENEW_BEFORE
                        + datetime.timedelta(days=1))


def test_certificate_for_other_names_is_not_valid() -> None:
    artifacts = issue(service_dns_names("elsewhere"), NOW)
    assert not is_valid(artifacts, NAMES, NOW)
    assert not is_valid(None, NAMES, NOW)


def test_certificate_must_match_its_key_and_chain_to_the_ca() -> None:
    one, other = issue(NAMES, NOW), issue(NAMES, NOW)
    assert not is_valid(dataclasses.replace(one, key=other.key), NAMES, NOW)
    assert not is_valid(dataclasses.replace(one, ca_cert=other.ca_cert, ca_key=other.ca_key), NAMES, NOW)
    assert not is_valid(dataclasses.replace(one, cert=b"not a certificate"), NAMES, NOW)


def test_renewal_keeps_a_ca_good_for_a_year_and_replaces_an_older_one() -> None:
    first = issue(NAMES, NOW)
    renewed = issue(NAMES, NOW + datetime.timedelta(days=30), first)
    assert renewed.ca_cert == first.ca_cert and renewed.cert != first.cert
    assert is_valid(renewed, NAMES, NOW + datetime.timedelta(days=30))
    late = NOW + certificates.VALIDITY - certificates.CA_REUSE_MARGIN + datetime.timedelta(days=1)
    replaced = issue(NAMES, late, first)
    assert replaced.ca_cert != first.ca_cert and is_valid(replaced, NAMES, late)


def test_secret_round_trip_under_kruises_keys() -> None:
    artifacts = issue(NAMES, NOW)
    data = certificates.to_secret_data(artifacts)
    assert sorted(data) == ["ca-cert.pem", "ca-key.pem", "cert.pem", "key.pem", "tls.crt", "tls.key"]
    assert data["tls.crt"] == data["cert.pem"] and data["tls.key"] == data["key.pem"]
    assert certificates.from_secret({"data": data}) == artifacts
    assert certificates.from_secret({"data": {k: v for k, v in data.items() if k != "ca-key.pem"}}) is None
    assert certificates.from_secret({}) is None
