"""An async client for any Kubernetes API server, working on plain dicts."""
