"""kubeloop: Kubernetes controller machinery, workload controllers and an embedded API server.

The package is layered; see ``docs/architecture.md``:

- ``kubeloop.api``: object helpers on plain JSON dicts (keys, selectors, int-or-percent, ...).
- ``kubeloop.client``: an async client for any Kubernetes API server.
- ``kubeloop.runtime``: work queues, informers, the controller manager and its helpers.
- ``kubeloop.controllers``: ReplicaSet, Deployment, CloneSet and garbage-collector controllers.
- ``kubeloop.server``: the embedded Kubernetes-compatible API server.
- ``kubeloop.kubelet``: the simulated node agent.
- ``kubeloop.cli``: the ``kubeloop`` command.
- ``kubeloop.testing``: fixtures and a fake clock for users' own tests.
"""

from kubeloop._version import __version__

__all__ = ["__version__"]
