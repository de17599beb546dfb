"""The Deployment controller's pure core: every number and decision of a sync, without I/O.

Modules, in the order a sync uses them: ``objects`` (tolerant field readers), ``strategy``
(maxSurge / maxUnavailable), ``replicasets`` (orderings and counters), ``annotations``,
``templates`` (new/old ReplicaSets, pod-template-hash), ``new_replica_set`` (revision sync and
creation), ``rolling``, ``recreate``, ``scaling`` (proportional scaling), ``revisions``
(history clean-up, rollback), ``conditions`` and ``status`` (status and progress deadlines),
``selection`` (Deployments interested in a ReplicaSet), ``events``. Functions take plain dicts
and ``now``, return numbers, decisions or new dicts, and never modify their arguments.

The I/O lives in two thin modules: ``sync`` (one sync: read caches, execute the plans, write)
and ``controller`` (informer handlers, retries, :func:`~.controller.add_deployment_controller`).
"""
