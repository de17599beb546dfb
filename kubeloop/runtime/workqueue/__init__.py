"""Work queues with client-go's semantics, on asyncio.

- `WorkQueue`: de-duplicating FIFO; an item is never held by two workers at once.
- `DelayingQueue`: adds `add_after(item, seconds)`.
- `RateLimitingQueue`: adds `add_rate_limited`, `forget`, `num_requeues` over a rate limiter.
- Rate limiters: `ItemExponentialFailureRateLimiter`, `ItemFastSlowRateLimiter`,
  `BucketRateLimiter`, `MaxOfRateLimiter`, `WithMaxWaitRateLimiter`,
  `default_controller_rate_limiter()`, `default_item_based_rate_limiter()`.
- Metrics: the `MetricsProvider` protocol and `PrometheusMetricsProvider` (client-go's
  `workqueue_*` families, histograms counted in batches: `BatchedHistogram`,
  `BatchingRecorder`); named queues only.

A typical worker::

    queue = RateLimitingQueue(default_controller_rate_limiter(), "my-controller")
    while True:
        result = await queue.get()
        if result[1]:
            return  # shut down and drained
        key = result[0]
        try:
            await reconcile(key)
        except Exception:
            queue.add_rate_limited(key)
        else:
            queue.forget(key)
        finally:
            queue.done(key)
"""

from kubeloop.runtime.workqueue.batch import BatchedHistogram, BatchingRecorder
from kubeloop.runtime.workqueue.delaying import DelayingQueue
from kubeloop.runtime.workqueue.metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    MetricsProvider,
    QueueMetrics,
    QueueMetricsRecorder,
    QueueMetricsRecorderFactory,
    SettableGaugeMetric,
    default_metrics_provider,
    set_default_metrics_provider,
)
from kubeloop.runtime.workqueue.prometheus import DURATION_BUCKETS, PrometheusMetricsProvider
from kubeloop.runtime.workqueue.queue import UNFINISHED_WORK_UPDATE_PERIOD, GetResult, WorkQueue
from kubeloop.runtime.workqueue.ratelimiters import (
    INFINITE_DELAY,
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from kubeloop.runtime.workqueue.ratelimiting import RateLimitingQueue

__all__ = [
    "DURATION_BUCKETS",
    "INFINITE_DELAY",
    "UNFINISHED_WORK_UPDATE_PERIOD",
    "BatchedHistogram",
    "BatchingRecorder",
    "BucketRateLimiter",
    "CounterMetric",
    "DelayingQueue",
    "GaugeMetric",
    "GetResult",
    "HistogramMetric",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "PrometheusMetricsProvider",
    "QueueMetrics",
    "QueueMetricsRecorder",
    "QueueMetricsRecorderFactory",
    "RateLimiter",
    "RateLimitingQueue",
    "SettableGaugeMetric",
    "WithMaxWaitRateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "default_metrics_provider",
    "set_default_metrics_provider",
]
