"""Cluster assembly: the API server, the simulated kubelet and the controllers put together.

The layer above the server, the kubelet, the controllers and the runtime (which never import it)
and below the commands and the test kit (which do):

- :mod:`kubeloop.cluster.inprocess`: all of it in one process, sharing one set of informer
  caches (``kubeloop up --single-process``; the test kit's ``EmbeddedCluster``);
- :mod:`kubeloop.cluster.processes`: ``kubeloop server``, ``kubeloop kubelet`` and ``kubeloop
  controllers`` as supervised child processes (``kubeloop up``), over
  :mod:`kubeloop.cluster.supervisor` and its pure restart policy :mod:`kubeloop.cluster.restarts`;
- :mod:`kubeloop.cluster.identities`: the components' service accounts and RBAC rules, which
  both layouts give them.
"""
