"""The embedded Kubernetes-compatible API server."""
