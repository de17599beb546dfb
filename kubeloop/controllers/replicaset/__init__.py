"""The ReplicaSet controller.

Pure core: ``ranking`` (which pods to delete first), ``status`` (status from the claimed pods,
when to write and to recheck), ``batching`` (burst limit and slow-start creation),
``podcontrol`` (the pod a ReplicaSet creates, reading API errors). Wiring: ``controller``
(handlers, expectations, the reconcile function and :func:`~.controller.add_replica_set_controller`).
"""
