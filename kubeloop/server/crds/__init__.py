"""CustomResourceDefinitions the embedded API server installs (our own schemas, written from
the fields each kind serves).

:data:`BUILTIN_CRDS` lists every one of them, in the order they are installed.
"""

from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.crds.imagepulljob import IMAGE_PULL_JOB_CRD

BUILTIN_CRDS = (CLONESET_CRD, IMAGE_PULL_JOB_CRD)
"""The CRDs a fresh server starts with (read-only: copy before changing one)."""

__all__ = ["BUILTIN_CRDS", "CLONESET_CRD", "IMAGE_PULL_JOB_CRD"]
