"""What the Endpoints and EndpointSlice controllers share, as upstream's
``pkg/controller/util/endpoint`` (``endpoints_util.go``, ``trigger_time_tracker.go``).

:mod:`.pods` (which pods count, their addresses and resolved ports), :mod:`.triggertime` (the
last-change-trigger-time annotation) and :mod:`.services` (the Services a pod concerns, the pods
a Service selects, read from the caches). Neither controller imports the other: both import
this package (an import-linter ``independence`` contract holds the controllers apart).
"""
