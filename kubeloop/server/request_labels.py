"""The labels kube-apiserver 1.33 gives a resource request in its metrics (pure functions).

Facts from upstream ``k8s.io/apiserver``:

- **scope** is decided per route by ``pkg/endpoints/installer.go`` (``registerResourceHandlers``):
  ``resource`` when the path names an object or the verb is POST (a create is scoped to the
  object it makes, whether the resource is namespaced or not), ``namespace`` for a collection
  inside a namespace, ``cluster`` for a cluster-scoped collection or a list/watch across all
  namespaces.
- **verb** is computed by ``pkg/endpoints/metrics`` (``MonitorRequest``, ``CanonicalVerb``,
  ``CleanVerb``, ``cleanVerb``) from the HTTP method, not from the route's verb: GET (or HEAD)
  of one object is ``GET``, of a collection ``LIST``; a GET whose first ``watch`` parameter is
  anything but ``0``/``false`` (case-insensitive, empty included) is ``WATCH``; a PATCH whose
  Content-Type is exactly ``application/apply-patch+yaml`` is ``APPLY``; other methods keep
  their name (``POST``, ``PUT``, ``PATCH``, ``DELETE``), and a method outside upstream's list
  is ``other``. So a delete-collection request reports ``DELETE`` (with a collection scope),
  as upstream's does since the metric verb stopped coming from the route.
- **dry_run** (``cleanDryRun``): empty without ``dryRun`` values; ``invalid`` when a value is
  not ``All``; otherwise the distinct values, sorted and joined with commas (``All``). Upstream
  first looks for ``dryRun`` in the raw query only to skip parsing it; the outcome is the same.
"""

from __future__ import annotations

from collections.abc import Sequence

APPLY_PATCH_TYPE = "application/apply-patch+yaml"

# Upstream's validRequestMethods: verbs reported as they are; anything else is "other".
_VALID_VERBS = frozenset({"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET", "LIST", "PATCH", "POST",
                          "PROXY", "PUT", "UPDATE", "WATCH", "WATCHLIST"})
_NOT_WATCH = frozenset({"0", "false"})
# Methods reported under their own name whatever the scope (the common writes: no further test).
_AS_IS = frozenset({"POST", "PUT", "DELETE"})


def request_scope(method: str, namespace: str | None, name: str | None) -> str:
    """``resource``, ``namespace`` or ``cluster``, as upstream's installer assigns per route.

    ``namespace`` is the URL's namespace: None for cluster-scoped resources and for lists and
    watches across all namespaces (both ``cluster``).
    """
    if name is not None or method == "POST":
        return "resource"
    if namespace is not None:
        return "namespace"
    return "cluster"


def request_verb(method: str, scope: str, watch: str | None, content_type: str | None) -> str:
    """The metrics verb of a request.

    ``watch`` is the first value of the ``watch`` query parameter (None when absent);
    ``content_type`` the request's Content-Type header as sent.
    """
    if method in _AS_IS:
        return method
    verb = method.upper()
    if verb == "GET" or verb == "HEAD":
        if verb == "GET" and watch is not None and watch.lower() not in _NOT_WATCH:
            return "WATCH"
        return "GET" if scope == "resource" else "LIST"
    if verb == "PATCH" and content_type == APPLY_PATCH_TYPE:
        return "APPLY"
    return verb if verb in _VALID_VERBS else "other"


def dry_run_label(values: Sequence[str]) -> str:
    """The ``dry_run`` label of a request whose query has these ``dryRun`` values."""
    if not values:
        return ""
    if any(value != "All" for value in values):
        return "invalid"
    return ",".join(sorted(set(values)))


def group_resource(group: str, resource: str) -> str:
    """``pods``, ``deployments.apps``: upstream's ``schema.GroupResource.String()``, the
    ``resource`` label of ``apiserver_storage_objects``."""
    return f"{resource}.{group}" if group else resource
