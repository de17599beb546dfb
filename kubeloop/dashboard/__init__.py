"""The live rollout view: a web page (``kubeloop dashboard``, ``kubeloop up``) and a terminal view
(``kubeloop watch``) of every Deployment and CloneSet, their revisions and pods.

Layers, from pure to I/O:

- :mod:`.podstates` (what a pod is doing), :mod:`.progress` (counts, bounds, verdict),
  :mod:`.views` (one workload's picture), :mod:`.timeline`, :mod:`.model` (watch events folded
  into views): plain functions and classes, no I/O, no clock;
- :mod:`.feed`: informers into the model, changes out to subscribers;
- :mod:`.app`: the aiohttp server (page, state, server-sent events); :mod:`.terminal`: rich.

    url, stop = await start_dashboard(client, "127.0.0.1", 8765)
    ...
    await stop()
"""

from kubeloop.dashboard.app import dashboard_app, start_dashboard
from kubeloop.dashboard.feed import DashboardFeed, watch_cluster
from kubeloop.dashboard.model import ClusterModel, Collection
from kubeloop.dashboard.podstates import PodState, classify_pod
from kubeloop.dashboard.progress import Progress, RolloutPhase, rollout_verdict, workload_progress

__all__ = [
    "ClusterModel",
    "Collection",
    "DashboardFeed",
    "PodState",
    "Progress",
    "RolloutPhase",
    "classify_pod",
    "dashboard_app",
    "rollout_verdict",
    "start_dashboard",
    "watch_cluster",
    "workload_progress",
]
