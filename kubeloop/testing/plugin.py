"""pytest plugin registered under the ``kubeloop`` entry point.

Fixtures are added here as the pieces they wrap land.
"""
