"""The Endpoints controller (kube-controller-manager's ``endpoint``): keeps each selector-bearing
Service's Endpoints object listing the addresses and ports of the pods it selects.

:mod:`.pods` (which pods count, their addresses and resolved ports; shared with the
EndpointSlice controller), :mod:`.triggertime` (the last-change-trigger-time annotation),
:mod:`.plan` (the desired Endpoints: pure) and :mod:`.controller` (informers and writes).
"""
