"""Workload controllers: ReplicaSet, Deployment, CloneSet and the garbage collector."""
