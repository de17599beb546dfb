"""Rows of the batch kinds: Jobs and CronJobs.

As kube-apiserver 1.33's ``printJob`` and ``printCronJob`` (``pkg/printers/internalversion``).
Job: NAME STATUS COMPLETIONS DURATION AGE, wide CONTAINERS IMAGES SELECTOR. STATUS is the first
that holds of Complete, Failed (conditions with status True), Terminating (being deleted),
Suspended, FailureTarget, else Running. COMPLETIONS is ``succeeded/completions``; without
``completions`` it is ``succeeded/1`` (``succeeded/1 of <parallelism>`` above one). DURATION runs
from ``startTime`` to ``completionTime`` (to now while running), empty before the job starts.
CronJob: NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE and the job template's wide
columns; an unset time zone or last schedule time shows ``<none>``, an unset suspend ``<unset>``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.api.labels import format_label_selector
from kubeloop.server.tables.ages import age, human_duration, parse_timestamp
from kubeloop.server.tables.docs import FieldDoc
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    bool_pointer,
    condition_status,
    container_cells,
    created,
    dig,
    integer,
    items,
    name_of,
    text,
)

CONTAINERS_DESCRIPTION = "Names of each container in the template."
IMAGES_DESCRIPTION = "Images referenced by each container in the template."


def _condition_true(job: Obj, condition_type: str) -> bool:
    return condition_status(dig(job, "status", "conditions"), condition_type) == "True"


def job_status(job: Obj) -> str:
    if _condition_true(job, "Complete"):
        return "Complete"
    if _condition_true(job, "Failed"):
        return "Failed"
    if dig(job, "metadata", "deletionTimestamp"):
        return "Terminating"
    if _condition_true(job, "Suspended"):
        return "Suspended"
    if _condition_true(job, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def job_completions(job: Obj) -> str:
    succeeded = integer(dig(job, "status", "succeeded"))
    completions = dig(job, "spec", "completions")
    if completions is not None:
        return f"{succeeded}/{integer(completions)}"
    parallelism = integer(dig(job, "spec", "parallelism"))
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def job_duration(job: Obj, now: datetime) -> str:
    start = parse_timestamp(dig(job, "status", "startTime"))
    if start is None:
        return ""
    end = parse_timestamp(dig(job, "status", "completionTime")) or now
    return human_duration((end - start).total_seconds())


def job_cells(job: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(dig(job, "spec", "template", "spec"))
    return [
        name_of(job), job_status(job), job_completions(job), job_duration(job, now), age(created(job), now),
        names, images, format_label_selector(dig(job, "spec", "selector")),
    ]


JOB_PRINTER = Printer(
    (
        NAME,
        Column("Status", "string", "Status of the job."),
        Column("Completions", "string", FieldDoc("batch.v1.JobStatus", "succeeded")),
        Column("Duration", "string", "Time required to complete the job."),
        AGE,
        Column("Containers", "string", CONTAINERS_DESCRIPTION, priority=1),
        Column("Images", "string", IMAGES_DESCRIPTION, priority=1),
        Column("Selector", "string", FieldDoc("batch.v1.JobSpec", "selector"), priority=1),
    ),
    job_cells,
)


def cron_job_cells(cron_job: Obj, now: datetime) -> list[Any]:
    last = dig(cron_job, "status", "lastScheduleTime")
    time_zone = dig(cron_job, "spec", "timeZone")
    job_spec = dig(cron_job, "spec", "jobTemplate", "spec")
    names, images = container_cells(dig(job_spec, "template", "spec"))
    return [
        name_of(cron_job), text(dig(cron_job, "spec", "schedule")),
        time_zone if isinstance(time_zone, str) else "<none>",
        bool_pointer(dig(cron_job, "spec", "suspend")), len(items(dig(cron_job, "status", "active"))),
        age(last, now) if last is not None else "<none>", age(created(cron_job), now),
        names, images, format_label_selector(dig(job_spec, "selector")),
    ]


def _cron(field: str) -> FieldDoc:
    return FieldDoc("batch.v1.CronJobSpec", field)


CRON_JOB_PRINTER = Printer(
    (
        NAME,
        Column("Schedule", "string", _cron("schedule")),
        Column("Timezone", "string", _cron("timeZone")),
        Column("Suspend", "boolean", _cron("suspend")),
        Column("Active", "integer", FieldDoc("batch.v1.CronJobStatus", "active")),
        Column("Last Schedule", "string", FieldDoc("batch.v1.CronJobStatus", "lastScheduleTime")),
        AGE,
        Column("Containers", "string", CONTAINERS_DESCRIPTION, priority=1),
        Column("Images", "string", IMAGES_DESCRIPTION, priority=1),
        Column("Selector", "string", FieldDoc("batch.v1.JobSpec", "selector"), priority=1),
    ),
    cron_job_cells,
)
