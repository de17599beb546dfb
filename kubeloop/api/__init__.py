"""Object helpers on plain JSON dicts, shared by every other layer.

Nothing here does I/O; nothing here imports another kubeloop layer.
"""
