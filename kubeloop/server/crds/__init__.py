"""CustomResourceDefinitions the embedded API server installs (our own schemas, written from
the fields each kind serves)."""

from kubeloop.server.crds.cloneset import CLONESET_CRD

__all__ = ["CLONESET_CRD"]
