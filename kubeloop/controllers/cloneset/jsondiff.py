"""Diffs of JSON documents: RFC 6902-style operations and metadata merge patches.

The in-place update decision needs the operations between two revisions' data (only
``replace`` of a container image may touch the pod spec) and a strategic-merge patch of the
template metadata (labels, annotations, finalizers) to apply to the pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# --- JSON diff (the operations an RFC 6902 diff between two revisions would contain) ---------


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def json_diff(old: Any, new: Any, path: str = "") -> list[tuple[str, str, Any]]:
    """``(op, path, value)`` operations turning ``old`` into ``new``.

    Objects are compared key by key (``add``/``remove``/recurse), lists of equal length index by
    index, lists of different length and scalars that differ are replaced as a whole (for a
    list of different length a diff tool emits add/remove ops; any such op already rules an
    in-place update out, so the distinction does not matter here).
    """
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        ops: list[tuple[str, str, Any]] = []
        for key in old:
            if key not in new:
                ops.append(("remove", f"{path}/{_escape(str(key))}", None))
        for key, value in new.items():
            child = f"{path}/{_escape(str(key))}"
            if key not in old:
                ops.append(("add", child, value))
            else:
                ops.extend(json_diff(old[key], value, child))
        return ops
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [("add" if len(new) > len(old) else "remove", path, new)]
        ops = []
        for index, (a, b) in enumerate(zip(old, new)):
            ops.extend(json_diff(a, b, f"{path}/{index}"))
        return ops
    if old == new and type(old) is type(new):
        return []
    return [("replace", path, new)]


# --- metadata two-way merge patch ---------------------------------------------------------


def metadata_merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """A strategic-merge patch ``{"metadata": {...}}`` from ``old`` to ``new`` object metadata.

    Maps (labels, annotations) merge key by key with ``null`` deleting; ``finalizers`` is a
    merged primitive list (``$setElementOrder`` / ``$deleteFromPrimitiveList`` directives);
    any other field is replaced. Empty when the two are equal.
    """
    patch: dict[str, Any] = {}
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if key in ("labels", "annotations"):
            before_map = before if isinstance(before, Mapping) else {}
            after_map = after if isinstance(after, Mapping) else {}
            change: dict[str, Any] = {k: None for k in before_map if k not in after_map}
            change.update({k: v for k, v in after_map.items() if before_map.get(k) != v})
            if change:
                patch[key] = change
        elif key == "finalizers":
            before_list = list(before) if isinstance(before, list) else []
            after_list = list(after) if isinstance(after, list) else []
            removed = [f for f in before_list if f not in after_list]
            added = [f for f in after_list if f not in before_list]
            if removed:
                patch["$deleteFromPrimitiveList/finalizers"] = removed
            patch["$setElementOrder/finalizers"] = after_list
            if added:
                patch["finalizers"] = added
        else:
            patch[key] = after
    return {"metadata": patch} if patch else {}


def apply_metadata_patch(pod: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """Apply a patch made by :func:`metadata_merge_patch` to ``pod`` (in place)."""
    changes = patch.get("metadata")
    if not isinstance(changes, Mapping):
        return
    meta = pod.setdefault("metadata", {})
    finalizers = list(meta.get("finalizers") or [])
    for key, value in changes.items():
        if key in ("labels", "annotations") and isinstance(value, Mapping):
            target = meta.setdefault(key, {})
            for k, v in value.items():
                if v is None:
                    target.pop(k, None)
                else:
                    target[k] = v
        elif key == "$deleteFromPrimitiveList/finalizers":
            finalizers = [f for f in finalizers if f not in value]
        elif key == "finalizers":
            finalizers += [f for f in value if f not in finalizers]
        elif not key.startswith("$"):
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
    order = changes.get("$setElementOrder/finalizers")
    if isinstance(order, list):
        ranked = {name: index for index, name in enumerate(order)}
        finalizers.sort(key=lambda f: ranked.get(f, len(ranked)))
    if finalizers or "finalizers" in meta:
        meta["finalizers"] = finalizers
