"""Test kit for kubeloop and for users' own controllers."""
