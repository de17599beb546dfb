"""The collector policy of the long-running commands."""

import gc

from kubeloop.runtime.gcpolicy import CACHE_THRESHOLDS, use_cache_friendly_gc


def test_the_policy_sets_the_thresholds_and_returns_the_previous_ones() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert use_cache_friendly_gc() == (700, 10, 10)
        assert gc.get_threshold() == CACHE_THRESHOLDS
    finally:
        gc.set_threshold(*before)
