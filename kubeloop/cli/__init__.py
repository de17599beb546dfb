"""The ``kubeloop`` command line."""
