"""The EndpointSlice controller (kube-controller-manager's ``endpointslice``): keeps each
selector-bearing Service's EndpointSlices listing the pods it selects.

:mod:`.plan` (the pure reconciler: which slices to create, update and delete), :mod:`.tracker`
(guards against acting on a cache that has not yet seen the controller's own writes) and
:mod:`.controller` (informers and writes).
"""
