"""Who is asking, and may they: authentication and authorization of every request.

The middleware (:mod:`kubeloop.server.app`) asks the server's :class:`~.authenticator.Authenticator`
who sent a request (401 when a credential does not authenticate; no credential is
``system:anonymous``), then, unless the user is in ``system:masters`` (upstream's privileged
group authorizer, first in kube-apiserver's chain), its :class:`~.authorizer.Authorizer`
whether the request's attributes (:mod:`.attributes`) are allowed (403 otherwise). The user
is left on the request for the handlers that need it (reviews, admission webhooks).
"""
