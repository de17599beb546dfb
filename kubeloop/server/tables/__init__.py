"""Table output (``meta.k8s.io`` Table) for ``kubectl get``: upstream's columns per kind.

:func:`table_request` reads the ``Accept`` header, :func:`include_object` the ``includeObject``
parameter, :func:`printer_for` picks the printer of a kind (CRD printer columns for custom
resources), and :func:`object_table`, :func:`list_table` and :func:`watch_event_table` build
the responses; :func:`table_converter` bundles all of it for one request. Everything here is
pure: objects and a clock reading in, JSON data out.
"""

from kubeloop.server.tables.ages import age, human_duration
from kubeloop.server.tables.custom import custom_printer, printer_for_columns
from kubeloop.server.tables.negotiation import IncludeObject, TableRequest, include_object, table_request
from kubeloop.server.tables.pods import pod_status
from kubeloop.server.tables.printers import Column, Printer
from kubeloop.server.tables.table import (
    BUILTIN_PRINTERS,
    TableConverter,
    list_table,
    object_table,
    printer_for,
    table_converter,
    watch_event_table,
)

__all__ = [
    "BUILTIN_PRINTERS",
    "Column",
    "IncludeObject",
    "Printer",
    "TableConverter",
    "TableRequest",
    "age",
    "custom_printer",
    "human_duration",
    "include_object",
    "list_table",
    "object_table",
    "pod_status",
    "printer_for",
    "printer_for_columns",
    "table_converter",
    "table_request",
    "watch_event_table",
]
