"""kubeloop's admission webhook for real clusters (``kubeloop webhook``).

In the embedded server, CloneSet defaulting and validation and the pod launch-priority barrier
run in-process as admission. In a real cluster OpenKruise does them in kruise-manager's webhook;
this package serves the same rules, with the same code, as AdmissionReview v1 over HTTPS, and
keeps its own serving certificate and the webhook configurations' ``caBundle`` current.
"""
