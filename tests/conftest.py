"""Settings of the whole test suite."""

from __future__ import annotations

import os

# Every server the tests start, in this process or as a child, checks that no object the
# protobuf codec wrote is changed in place afterwards (kubeloop/server/codec/protobuf_cache.py).
os.environ.setdefault("KUBELOOP_ENCODED_MUTATION_DETECTOR", "1")
