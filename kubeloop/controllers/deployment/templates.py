"""Pod templates: which ReplicaSet is "new", and the pod-template-hash naming it.

The new ReplicaSet is the oldest one whose pod template equals the Deployment's, ignoring
the ``pod-template-hash`` label; every other ReplicaSet is old. Equality is *semantic*, as
upstream compares decoded Go structs: an absent field, ``null``, ``{}`` and ``[]`` are the same
thing, and resource quantities compare by value (``"1000m"`` equals ``"1"``).

Hash (a deliberate deviation): upstream hashes a textual dump of the Go struct with FNV-32a,
which cannot be reproduced from JSON. Ours is FNV-32a over the canonical JSON of the template
(keys sorted, so label order does not matter), followed, when a collision count is set, by
that count as 4 little-endian bytes and 4 zero bytes (upstream's layout); the decimal value is
then spelled with upstream's consonant-and-digit alphabet so names look alike
(``web-7d9c5b6f48``). Only determinism matters: new-ReplicaSet detection never reads the hash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from kubeloop.api.meta import deep_copy, uid_of
from kubeloop.controllers.deployment.objects import Obj, pod_template, spec_replicas
from kubeloop.controllers.deployment.replicasets import RS, by_creation

POD_TEMPLATE_HASH = "pod-template-hash"

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193

# Maps whose values are resource.Quantity in the pod spec.
_QUANTITY_MAPS = frozenset({"limits", "requests", "overhead", "capacity", "allocatable"})
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def fnv32a(data: bytes) -> int:
    value = _FNV32_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """Spell each character with a vowel-free alphabet (no accidental words in names)."""
    return "".join(_SAFE_ALPHABET[ord(char) % len(_SAFE_ALPHABET)] for char in text)


def compute_hash(template: Mapping[str, Any], collision_count: int | None) -> str:
    """The pod-template-hash for ``template`` (see the module docstring for the deviation)."""
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    return safe_encode(str(fnv32a(data)))


def quantity_value(text: str) -> Decimal | None:
    """The numeric value of a resource quantity string, or ``None`` if it is not one."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    try:
        value = Decimal(number)
        if exponent:
            return value * Decimal(10) ** int(exponent[1:])
    except (InvalidOperation, ValueError):
        return None
    suffix = suffix or ""
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    return value.scaleb(_DECIMAL_EXP[suffix])


def _normalised(value: Any, key: str = "") -> Any:
    """A comparable form of the JSON value found under ``key``: empties dropped, quantities by value."""
    if isinstance(value, Mapping):
        result = {}
        for child_key, item in value.items():
            if key in _QUANTITY_MAPS and isinstance(item, str):
                amount = quantity_value(item)
                normal: Any = ("quantity", amount) if amount is not None else item
            else:
                normal = _normalised(item, child_key)
            if normal is not None:
                result[child_key] = normal
        return result or None
    if isinstance(value, list):
        items = [_normalised(item) for item in value]
        return items or None
    return value


def _without_hash_label(template: Mapping[str, Any]) -> Any:
    copy: Any = deep_copy(template)
    if isinstance(copy, dict):
        meta = copy.get("metadata")
        labels = meta.get("labels") if isinstance(meta, dict) else None
        if isinstance(labels, dict):
            labels.pop(POD_TEMPLATE_HASH, None)
    return copy


def equal_ignore_hash(template_a: Mapping[str, Any], template_b: Mapping[str, Any]) -> bool:
    """Semantic equality of two pod templates, ignoring the ``pod-template-hash`` label."""
    return bool(_normalised(_without_hash_label(template_a)) == _normalised(_without_hash_label(template_b)))


def find_new_replica_set(deployment: Mapping[str, Any], replica_sets: Sequence[RS]) -> RS | None:
    """The oldest ReplicaSet whose template equals the Deployment's; ``None`` if there is none.

    Older duplicates win so that the choice is deterministic; the others count as old.
    """
    template = pod_template(deployment)
    for rs in by_creation(replica_sets):
        if equal_ignore_hash(pod_template(rs), template):
            return rs
    return None


def find_old_replica_sets(deployment: Mapping[str, Any], replica_sets: Sequence[RS]) -> tuple[list[RS], list[RS]]:
    """``(required, all)`` old ReplicaSets: every one but the new one, and those of them with replicas.

    Order follows ``replica_sets``; the new ReplicaSet is recognised by UID.
    """
    new = find_new_replica_set(deployment, replica_sets)
    new_uid = uid_of(new) if new is not None else ""

    def is_new(rs: RS) -> bool:
        return rs is new or (new_uid != "" and uid_of(rs) == new_uid)

    everything = [rs for rs in replica_sets if not is_new(rs)]
    required = [rs for rs in everything if spec_replicas(rs) != 0]
    return required, everything


def template_for_rollback(replica_set: Mapping[str, Any]) -> Obj:
    """The ReplicaSet's pod template as a Deployment template: a copy without the hash label."""
    template: Obj = _without_hash_label(pod_template(replica_set))
    return template
