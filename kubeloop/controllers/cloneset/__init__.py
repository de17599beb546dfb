"""The CloneSet controller (OpenKruise ``apps.kruise.io/v1alpha1``).

This package holds the controller's sans-IO core: pure functions that take plain JSON dicts
(the CloneSet, its pods, PVCs and ControllerRevisions as read from the API), an explicit
``now`` and the feature gates, and return numbers, orderings, new objects or patches. They
never mutate what they are given. The wiring that lists objects, calls the API and requeues
lives apart and stays thin.

Modules, one concept each:

- :mod:`.options` feature gates;
- :mod:`.featuregates` upstream's gate names and ``Name=true,...`` settings;
- :mod:`.spec` reading a CloneSet's spec with upstream's defaults;
- :mod:`.podstate` pod predicates (revision, lifecycle state, ready, available);
- :mod:`.diffs` the scale/update arithmetic (``calculateDiffsWithExpectation``);
- :mod:`.scale` instance ids, new pods and PVCs, scale-in victims, PVC clean-up;
- :mod:`.scaleplan` the Scale step of a reconcile as one decision;
- :mod:`.update` update candidates, their order and the per-round limit;
- :mod:`.ordering` default, priority and scatter orders and scale-in ranking;
- :mod:`.inplace` in-place update spec, state annotation and refresh decisions;
- :mod:`.jsondiff` JSON diff operations and metadata merge patches;
- :mod:`.podconditions` writing pod conditions (Ready from readiness gates);
- :mod:`.lifecycle` lifecycle hooks and state transitions;
- :mod:`.revisions` ControllerRevision content, hash, selection and history;
- :mod:`.status` status counters and the Progressing condition;
- :mod:`.predownload` image pre-download decisions and ImagePullJob objects.

The wiring around them:

- :mod:`.handlers` cache events: expectation bookkeeping and what to enqueue;
- :mod:`.control` the API writes, with expectations and events around each;
- :mod:`.sync` one reconcile in upstream's order;
- :mod:`.steps` the Scale and Update steps of a reconcile, performing the plans;
- :mod:`.imagepulljobs` creating and deleting ImagePullJobs, labelling revisions;
- :mod:`.controller` building the controller on a manager, with its options.
"""
