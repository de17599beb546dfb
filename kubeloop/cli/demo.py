"""``kubeloop demo``: a short live demonstration of the work queue.

A scripted "informer" feeds keys to a `RateLimitingQueue` while a few workers reconcile them,
and every step is printed as it happens:
- duplicate adds of a waiting key collapse into one;
- a key added again while a worker holds it is not handed to a second worker but queued again
  when the first one calls `done`;
- a key whose reconcile keeps failing is retried with exponential back-off, then forgotten once
  it succeeds;
- at the end the queue drains (`shutdown_with_drain`) and its Prometheus metrics are printed.

All durations scale with `--seconds` (the script is written for 10 s), so a short run shows
the same story faster.
"""

from __future__ import annotations

import asyncio
import random
import time

import click
from prometheus_client import CollectorRegistry

from kubeloop.runtime.workqueue import (
    ItemExponentialFailureRateLimiter,
    PrometheusMetricsProvider,
    RateLimitingQueue,
)

QUEUE_NAME = "demo"
FLAKY_KEY = "default/flaky"
FLAKY_FAILURES = 4
KEYS = [f"default/web-{index}" for index in range(6)]


class _Demo:
    """One run of the scripted demo; `scale` converts script seconds into real seconds."""

    def __init__(self, workers: int, seconds: float, seed: int) -> None:
        self.workers = workers
        self.scale = seconds / 10.0
        self.random = random.Random(seed)
        self.registry = CollectorRegistry()
        limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            0.2 * self.scale, 5.0 * self.scale
        )
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(
            limiter, QUEUE_NAME, metrics_provider=PrometheusMetricsProvider(self.registry)
        )
        self.holders: dict[str, int] = {}
        self.attempts: dict[str, int] = {}
        self.failed_at: dict[str, float] = {}
        self.reconciles = 0
        self.started = time.monotonic()

    def say(self, who: str, what: str) -> None:
        elapsed = (time.monotonic() - self.started) / self.scale
        click.echo(f"{elapsed:6.2f}s  {who:<10} {what}")

    def metric(self, name: str) -> float:
        return self.registry.get_sample_value(name, {"name": QUEUE_NAME}) or 0.0

    async def sleep(self, script_seconds: float) -> None:
        await asyncio.sleep(script_seconds * self.scale)

    def add(self, key: str) -> None:
        adds_before = self.metric("workqueue_adds_total")
        self.queue.add(key)
        if self.metric("workqueue_adds_total") == adds_before:
            holder = self.holders.get(key)
            if holder is None:
                self.say("informer", f"add {key:<16} -> collapsed: already waiting")
            else:
                self.say("informer", f"add {key:<16} -> collapsed: already marked to run again")
        elif key in self.holders:
            self.say(
                "informer",
                f"add {key:<16} -> worker {self.holders[key]} holds it: queued again when it is done",
            )
        else:
            self.say("informer", f"add {key:<16} -> queued (waiting: {len(self.queue)})")

    async def informer(self) -> None:
        self.say("informer", f"initial list: {len(KEYS)} objects and {FLAKY_KEY}")
        for key in [*KEYS, FLAKY_KEY]:
            self.add(key)
        for _ in range(3):
            self.add(KEYS[0])
        await self.sleep(0.3)
        while not self.holders:
            await self.sleep(0.05)
        self.add(next(iter(self.holders)))
        deadline = self.started + 8.5 * self.scale
        while time.monotonic() < deadline:
            await self.sleep(0.8)
            self.say("informer", "watch events:")
            for key in [*self.random.sample(KEYS, 3), self.random.choice(KEYS)]:
                self.add(key)

    async def worker(self, number: int) -> None:
        while True:
            result = await self.queue.get()
            if result[1]:
                self.say(f"worker {number}", "queue shut down and empty: exiting")
                return
            key = result[0]
            self.holders[key] = number
            failed_at = self.failed_at.pop(key, None)
            if failed_at is None:
                self.say(f"worker {number}", f"got {key}")
            else:
                backoff = (time.monotonic() - failed_at) / self.scale
                self.say(f"worker {number}", f"got {key} again after {backoff:.1f}s of back-off")
            try:
                await self.sleep(self.random.uniform(0.3, 0.7))
                self.reconciles += 1
                if key == FLAKY_KEY and self.attempts.get(key, 0) < FLAKY_FAILURES:
                    self.attempts[key] = self.attempts.get(key, 0) + 1
                    self.queue.add_rate_limited(key)
                    self.failed_at[key] = time.monotonic()
                    self.say(
                        f"worker {number}",
                        f"{key} failed (attempt {self.attempts[key]}): add_rate_limited"
                        f" (requeues {self.queue.num_requeues(key)})",
                    )
                else:
                    if self.queue.num_requeues(key):
                        self.say(f"worker {number}", f"{key} succeeded: forgetting its back-off")
                    self.queue.forget(key)
                    self.say(f"worker {number}", f"done {key}")
            finally:
                del self.holders[key]
                self.queue.done(key)

    async def run(self) -> None:
        click.echo(
            f"kubeloop work queue demo: {self.workers} workers, one rate-limiting queue, "
            f"{10 * self.scale:.1f}s (times below are script seconds)"
        )
        workers = [asyncio.create_task(self.worker(number)) for number in range(1, self.workers + 1)]
        await self.informer()
        await self.sleep(10.0 - (time.monotonic() - self.started) / self.scale)
        self.say("main", "shutting down with drain: in-flight items finish, nothing new is accepted")
        await self.queue.shutdown_with_drain()
        await asyncio.gather(*workers)
        self.summary()

    def summary(self) -> None:
        click.echo("")
        click.echo(f"reconciles: {self.reconciles}")
        for name in (
            "workqueue_adds_total",
            "workqueue_retries_total",
            "workqueue_depth",
            "workqueue_queue_duration_seconds_count",
            "workqueue_work_duration_seconds_count",
        ):
            click.echo(f'{name}{{name="{QUEUE_NAME}"}} {self.metric(name):g}')


@click.command()
@click.option("--workers", type=click.IntRange(1, 64), default=3, show_default=True, help="Concurrent workers.")
@click.option(
    "--seconds",
    type=click.FloatRange(0.1, 600),
    default=10.0,
    show_default=True,
    help="Length of the demo; every delay in the script scales with it.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the simulated events.")
def demo(workers: int, seconds: float, seed: int) -> None:
    """Run a short live demo of the work queue."""
    asyncio.run(_Demo(workers, seconds, seed).run())
