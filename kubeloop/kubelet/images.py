"""Image references as a container runtime reports them.

The simulated runtime "pulls" any image instantly; what it reports follows containerd's
shape: ``image`` is the reference with the implied ``:latest`` tag made explicit, and
``imageID`` is a repository digest. The digest is derived from the reference, so one image
always has one id and different images have different ids (kruise's in-place update check
compares the ids before and after a restart).
"""

from __future__ import annotations

import hashlib


def _split_digest(image: str) -> tuple[str, str]:
    name, sep, digest = image.partition("@")
    return name, (sep + digest if sep else "")


def has_tag(name: str) -> bool:
    """Whether the last path component carries a ``:tag`` (a ``host:port/`` prefix is no tag)."""
    return ":" in name.rpartition("/")[2]


def display_image(image: str) -> str:
    """The image as reported in ``status.containerStatuses[].image``: ``nginx`` -> ``nginx:latest``."""
    name, digest = _split_digest(image)
    if digest or not name or has_tag(name):
        return image
    return f"{name}:latest"


def repository(image: str) -> str:
    """The image name without tag or digest: ``registry:5000/app:1.2`` -> ``registry:5000/app``."""
    name, _ = _split_digest(image)
    if has_tag(name):
        name = name.rpartition(":")[0]
    return name


def image_id(image: str) -> str:
    """A stable repository digest for the image (the reference itself when it names a digest)."""
    if _split_digest(image)[1]:
        return image
    reference = display_image(image)
    return f"{repository(reference)}@sha256:{hashlib.sha256(reference.encode()).hexdigest()}"
