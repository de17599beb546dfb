"""The Endpoints controller (kube-controller-manager's ``endpoint``): keeps each selector-bearing
Service's Endpoints object listing the addresses and ports of the pods it selects.

:mod:`.plan` (the desired Endpoints: pure) and :mod:`.controller` (informers and writes); what
it shares with the EndpointSlice controller lives in :mod:`kubeloop.controllers.endpointutil`.
"""
