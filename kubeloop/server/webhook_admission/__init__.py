"""Admission webhooks: MutatingWebhookConfiguration and ValidatingWebhookConfiguration, called.

kube-apiserver 1.33's ``MutatingAdmissionWebhook`` and ``ValidatingAdmissionWebhook`` plugins
(kubernetes/apiserver ``pkg/admission/plugin/webhook``). :mod:`.matching` decides which webhooks
a request calls (pure, table-tested), :mod:`.review` builds AdmissionReviews and reads their
answers (pure), :mod:`.endpoints` finds where a ``clientConfig`` points, :mod:`.client` makes
the HTTPS call, :mod:`.configurations` reads the stored configurations, and
:mod:`.dispatcher` runs the mutating and validating rounds of one write. The write path
(:mod:`kubeloop.server.objects`, :mod:`kubeloop.server.handlers.admitted`) calls them between
its phases.
"""

from kubeloop.server.webhook_admission.dispatcher import Call, WebhookAdmission

__all__ = ["Call", "WebhookAdmission"]
