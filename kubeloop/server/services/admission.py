"""The admission rules of Services, Endpoints and EndpointSlices, added to the admission
dispatch table (:func:`kubeloop.server.admission.register`) when this module is imported.

:mod:`.hooks`, which every write path imports (through :mod:`kubeloop.server.objects`), imports
this module, so the rules are in place before any write. (An entry in the table module itself
would make an import cycle: this package's validation uses the admission package's helpers.)
"""

from __future__ import annotations

from kubeloop.server.admission import KindRules, register
from kubeloop.server.services import defaults, validation


def register_service_admission() -> None:
    register("", "Service", KindRules(defaults.default_service, validation.validate_service_create,
                                      validation.validate_service_update,
                                      validation.validate_service_status_update))
    register("", "Endpoints", KindRules(defaults.default_endpoints, validation.validate_endpoints_create,
                                        validation.validate_endpoints_update))
    register("discovery.k8s.io", "EndpointSlice", KindRules(defaults.default_endpoint_slice,
                                                            validation.validate_endpoint_slice_create,
                                                            validation.validate_endpoint_slice_update))


register_service_admission()
