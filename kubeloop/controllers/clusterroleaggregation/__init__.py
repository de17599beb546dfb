"""The ClusterRole aggregation controller: kube-controller-manager's ``clusterrole-aggregation``,
named ``clusterroleaggregation`` here (the key of its rules in ``kubeloop.controllers.policy``)."""
