"""Patch failures and how kube-apiserver answers each of them.

:class:`PatchError` carries the engine's own message (upstream's library text, useful in logs
and tests) and the HTTP ``code``; :meth:`PatchError.api_error` gives the ``Status`` the real
server sends, which for a 422 from a JSON patch is upstream's generic sentence rather than the
library message.
"""

from __future__ import annotations

from kubeloop.api.status import ApiError, invalid, invalid_error

# What upstream's ``NewGenericServerResponse`` says for a 422 it has no details for.
GENERIC_UNPROCESSABLE = "the server rejected our request due to an error in our request"


class PatchError(Exception):
    """A patch that cannot be decoded (400), is too large (413) or cannot be applied (422).

    ``generic`` marks 422s that upstream reports with its generic sentence (JSON-patch
    application errors, lists of lists in a strategic merge patch). ``invalid_patch`` holds
    the patched document when the failure is that the result is not an object (upstream: 422
    ``Invalid`` on field ``patch``).
    """

    def __init__(self, code: int, message: str, *, generic: bool = False, invalid_patch: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.generic = generic
        self.invalid_patch = invalid_patch

    def __str__(self) -> str:
        return self.message

    def api_error(self) -> ApiError:
        """The error answer kube-apiserver gives for this failure.

        Strategic-merge failures upstream's handler does not classify (an element without its
        merge key, a bad ``$setElementOrder`` list, ...) reach clients as 500 with reason
        ``Unknown`` and the library text; here they are 422 ``Invalid`` with the same text.
        """
        if self.code == 400:
            return ApiError(400, "BadRequest", self.message)
        if self.code == 413:
            return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {self.message}")
        if self.invalid_patch is not None:
            return invalid_error("", "", "", [invalid("patch", self.invalid_patch, self.message)])
        if self.generic:
            return ApiError(422, "Invalid", GENERIC_UNPROCESSABLE, {})
        return ApiError(self.code, "Invalid", self.message)


def bad_request(message: str) -> PatchError:
    return PatchError(400, message)


def unprocessable(message: str, *, generic: bool = False) -> PatchError:
    return PatchError(422, message, generic=generic)
