"""``find_builtin`` answers from a name index exactly as a scan of the whole catalog would."""

from kubeloop.client._resources import BUILTIN_RESOURCES, Resource, find_builtin, resource_names, split_qualified_name


def scanned(name: str) -> Resource | None:
    """The reference: the first catalog entry (in catalog order) that ``name`` denotes."""
    resource, version, group = split_qualified_name(name)
    for candidate in BUILTIN_RESOURCES:
        if group is not None and candidate.group != group:
            continue
        if version is not None and candidate.version != version:
            continue
        if resource.lower() in resource_names(candidate):
            return candidate
    return None


def every_spelling() -> list[str]:
    names: list[str] = ["nosuchthing", "widgets.example.com", "pods.v2", "Deployment.v1.extensions"]
    for resource in BUILTIN_RESOURCES:
        for name in sorted(resource_names(resource)):
            names += [name, name.upper(), f"{name}.{resource.group}", f"{name}.{resource.version}.{resource.group}"]
    return names


def test_every_builtin_spelling_resolves_as_the_catalog_scan_does() -> None:
    names = every_spelling()
    assert len(names) > 4 * len(BUILTIN_RESOURCES)
    mismatches = [(n, find_builtin(n), scanned(n)) for n in names if find_builtin(n) != scanned(n)]
    assert mismatches == []


def test_a_bare_name_shared_by_two_groups_is_the_core_one() -> None:
    shared = [n for r in BUILTIN_RESOURCES if r.group == "" for n in resource_names(r)
              if any(o.group != "" and n in resource_names(o) for o in BUILTIN_RESOURCES)]
    assert shared  # events is core and events.k8s.io
    for name in shared:
        found = find_builtin(name)
        assert found is not None and found.group == ""
