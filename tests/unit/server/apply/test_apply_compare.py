"""The change between two objects equals the diff of their flat path maps (the skip of equal
subtrees is only a shortcut), where a map on both sides is never added or removed itself and a
leaf that became a map or list (or the reverse) is modified."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.server.apply import Comparison, _values, builtin_shape, compare

DEPLOYMENT = builtin_shape("apps", "Deployment")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["a", "b", ""]))
containers = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["app", "side"])},
                                            optional={"image": st.sampled_from(["n:1", "n:2"]),
                                                      "args": st.lists(st.sampled_from(["-x", "-y"]), max_size=2),
                                                      "env": st.lists(st.fixed_dictionaries(
                                                          {"name": st.sampled_from(["A", "B"]), "value": scalars}),
                                                          max_size=2)}),
                      max_size=3)
maps = st.dictionaries(st.sampled_from(["x", "y", "z"]), st.one_of(scalars, st.dictionaries(
    st.sampled_from(["p", "q"]), scalars, max_size=2)), max_size=3)
deployments = st.fixed_dictionaries({
    "metadata": st.fixed_dictionaries({"name": st.just("web")}, optional={
        "labels": st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["a", "b"]), max_size=2),
        "finalizers": st.lists(st.sampled_from(["f1", "f2"]), max_size=2, unique=True),
        "resourceVersion": st.sampled_from(["1", "2"])}),
    "spec": st.fixed_dictionaries({}, optional={
        "replicas": scalars, "paused": scalars, "extra": maps,
        "template": st.fixed_dictionaries({"spec": st.fixed_dictionaries({}, optional={
            "containers": containers, "securityContext": maps})})}),
    "status": maps,
})


def flat_compare(old: dict[str, Any], new: dict[str, Any]) -> Comparison:
    before, after = _values(old, DEPLOYMENT), _values(new, DEPLOYMENT)
    modified = {p for p, v in after.items() if p in before and before[p] != v}

    def alone(path: tuple[str, ...], leaf: Any, other: dict[tuple[str, ...], Any]) -> bool:
        # A leaf the other side lacks: the other side has nothing below it (then alone), a map
        # for an empty map or a list for an empty list (then nothing), or anything else there
        # (then the leaf is modified).
        below = [q[len(path)] for q in other if len(q) > len(path) and q[:len(path)] == path]
        if not below:
            return True
        if not ((leaf == {} and below[0].startswith("f:")) or (leaf == [] and below[0][0] in "kv")):
            modified.add(path)
        return False

    added = frozenset(p for p, v in after.items() if p not in before and alone(p, v, before))
    removed = frozenset(p for p, v in before.items() if p not in after and alone(p, v, after))
    return Comparison(added, removed, frozenset(modified))


@settings(max_examples=400, deadline=None)
@given(deployments, deployments)
def test_compare_equals_the_flat_diff(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert compare(old, new, DEPLOYMENT) == flat_compare(old, new)


@settings(max_examples=200, deadline=None)
@given(deployments)
def test_compare_with_itself_and_with_a_changed_status_is_empty(obj: dict[str, Any]) -> None:
    assert compare(obj, obj, DEPLOYMENT).empty()
    assert compare(obj, {**obj, "status": {"changed": True}}, DEPLOYMENT).empty()
