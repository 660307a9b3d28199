"""ListTasks: filters, keyset pages over the status sequence, and page tokens bound to caller and filters.

A page token names a position in the global status sequence, so a walk never repeats a task and never
skips one that did not change; a task that changes during the walk moves ahead of the cursor and is not
seen again (the order is latest change first, so no walk can promise a snapshot). The token carries a
digest of the caller's subject and filters: a token used by another subject or with other filters, or one
this agent never issued, is refused with -32602.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from nylorun_a2a_kit.reference_agent.errors import invalid_params
from nylorun_a2a_kit.reference_agent.store import TaskFilter, TaskRecord, format_timestamp

if TYPE_CHECKING:
    from nylorun_a2a_kit.reference_agent.engine import Caller, Engine

DEFAULT_PAGE_SIZE = 50


def list_tasks(engine: Engine, caller: Caller, params: dict[str, Any]) -> tuple[list[TaskRecord], str, int, int]:
    """One page: the tasks, the next page's token ("" on the last), the page size used and the filtered total."""
    fault = engine.config.fault
    state = params.get("status")
    flt = TaskFilter(
        agent_id=None if fault("cross-agent-list") else caller.agent_id,
        subject=None if fault("cross-subject-list") else caller.subject,
        context_id=None if fault("context-filter-ignored") else params.get("contextId") or None,
        state=None if state in (None, "TASK_STATE_UNSPECIFIED") or fault("status-filter-ignored") else state,
        status_after=_normalise_timestamp(params["statusTimestampAfter"])
        if params.get("statusTimestampAfter") and not fault("timestamp-filter-ignored")
        else None,
    )
    page_size = params.get("pageSize", 20 if fault("default-page-size-20") else DEFAULT_PAGE_SIZE)
    bound = dict(flt.__dict__, subject=None) if fault("foreign-cursor-accepted") else flt.__dict__
    fingerprint = hashlib.sha256(json.dumps(bound, sort_keys=True).encode()).hexdigest()[:16]
    before = _read_page_token(params.get("pageToken") or "", fingerprint, lenient=fault("forged-cursor-accepted"))
    oldest_first = fault("list-oldest-first")
    if fault("list-offset-cursor"):  # position by count, as offset paging does: shifts when tasks change
        offset = before or 0
        tasks = engine.store.page(flt, before_seq=None, limit=offset + page_size + 1)[offset:]
    else:
        tasks = engine.store.page(flt, before_seq=before, limit=page_size + 1, oldest_first=oldest_first)
    more = len(tasks) > page_size
    tasks = tasks[: page_size + 1 if fault("page-overfills") else page_size]
    token = ""
    if more:
        cursor = (before or 0) + page_size if fault("list-offset-cursor") else tasks[-1].seq
        if fault("page-repeats-task"):
            cursor += -1 if oldest_first else 1
        token = _page_token(cursor, fingerprint)
    if not more and fault("walk-never-ends"):
        token = _page_token(2**62, fingerprint)  # a position before every task: the newest page again
    total = len(tasks) if fault("wrong-total-size") else engine.store.count(flt)
    if fault("queued-listed") and before is None:
        queued = [engine.queued_task(q) for q in engine.queue.waiting(caller.agent_id, caller.subject, flt.context_id)]
        tasks, total = queued + tasks, total + len(queued)
    return tasks, token, page_size, total


def _page_token(seq: int, fingerprint: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"s": seq, "f": fingerprint}).encode()).decode().rstrip("=")


def _read_page_token(token: str, fingerprint: str, *, lenient: bool = False) -> int | None:
    if not token:
        return None
    try:
        cursor = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        seq, used_with = int(cursor["s"]), cursor["f"]
    except (ValueError, KeyError, TypeError, OverflowError, binascii.Error):
        if lenient:  # a fault: an unreadable token starts the walk again
            return None
        raise invalid_params([("pageToken", "is not a token this agent issued")]) from None
    if used_with != fingerprint:
        raise invalid_params([("pageToken", "was issued for other filters or another caller; start again without it")])
    return seq


def _normalise_timestamp(value: str) -> str:
    """A filter time in the stored form, rounded up to the millisecond so the filter is never wider."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if moment.microsecond % 1000:
        moment += timedelta(microseconds=1000 - moment.microsecond % 1000)
    return format_timestamp(moment)
