"""The ClusterRole aggregation controller (kube-controller-manager's ``clusterrole-aggregation``)."""
