"""ListTasks: filters, keyset pages over the status sequence, and page tokens bound to caller and filters.

A page token names a position in the global status sequence, so a walk never repeats a task and never
skips one that did not change; a task that changes during the walk moves ahead of the cursor and is not
seen again (the order is latest change first, so no walk can promise a snapshot). The token carries a
digest of the caller's subject and filters: a token used by another subject or with other filters, or one
this agent never issued, is refused with -32602.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.errors import invalid_params
from nylorun_a2a_kit.reference_agent.store import (
    Store,
    TaskFilter,
    TaskRecord,
    decode_cursor,
    encode_cursor,
    format_timestamp,
)

DEFAULT_PAGE_SIZE = 50
Page = tuple[list[TaskRecord], str, int, int]  # the tasks, the next page's token ("" on the last), size, total


class Paging:
    """ListTasks over a store: one page for a caller's params, as :data:`Page`."""

    def __init__(self, store: Store):
        self.store = store

    def page(self, caller: Caller, params: dict[str, Any]) -> Page:
        flt = self.task_filter(caller, params)
        page_size = self.page_size(params)
        fingerprint = self.fingerprint(flt)
        before = self.position(params.get("pageToken") or "", fingerprint)
        served = self.served(page_size)
        tasks = self.fetch(flt, before, served + 1)
        more = len(tasks) > served
        tasks = self.cut(tasks, served)
        token = self.token(self.cursor(tasks, before, served), fingerprint) if more else self.last_token(fingerprint)
        return tasks, token, page_size, self.total(flt, tasks)

    def task_filter(self, caller: Caller, params: dict[str, Any]) -> TaskFilter:
        """The caller's own tasks, narrowed by the params' filters."""
        state, after = params.get("status"), params.get("statusTimestampAfter")
        return TaskFilter(
            agent_id=caller.agent_id,
            subject=caller.subject,
            context_id=params.get("contextId") or None,
            state=None if state in (None, "TASK_STATE_UNSPECIFIED") else state,
            status_after=_normalise_timestamp(after) if after else None,
        )

    def page_size(self, params: dict[str, Any]) -> int:
        return params.get("pageSize", DEFAULT_PAGE_SIZE)

    def served(self, page_size: int) -> int:
        """How many tasks a page holds at most: the page size (a service may serve fewer, a2a.proto)."""
        return page_size

    def fingerprint(self, flt: TaskFilter) -> str:
        """What a page token is bound to: the caller's subject and the filters."""
        return hashlib.sha256(json.dumps(flt.__dict__, sort_keys=True).encode()).hexdigest()[:16]

    def position(self, token: str, fingerprint: str) -> int | None:
        """Where a page token points (None: the first page); a token not issued for these filters is refused."""
        if not token:
            return None
        try:
            seq, cursor = decode_cursor(token, "s")
            used_with = cursor["f"]
        except (ValueError, KeyError, TypeError):
            return self.unreadable(token)
        if used_with != fingerprint:
            raise invalid_params(
                [("pageToken", "was issued for other filters or another caller; start again without it")]
            )
        return seq

    def unreadable(self, token: str) -> int | None:
        raise invalid_params([("pageToken", "is not a token this agent issued")])

    def fetch(self, flt: TaskFilter, before: int | None, limit: int) -> list[TaskRecord]:
        """Up to ``limit`` tasks after the position, latest status change first."""
        return self.store.page(flt, before_seq=before, limit=limit)

    def cut(self, tasks: list[TaskRecord], page_size: int) -> list[TaskRecord]:
        return tasks[:page_size]

    def cursor(self, page: list[TaskRecord], before: int | None, page_size: int) -> int:
        """The position the next page starts after: the status sequence number of this page's last task."""
        return page[-1].seq

    def token(self, cursor: int, fingerprint: str) -> str:
        return encode_cursor({"s": cursor, "f": fingerprint})

    def last_token(self, fingerprint: str) -> str:
        """The last page's nextPageToken: empty."""
        return ""

    def total(self, flt: TaskFilter, page: list[TaskRecord]) -> int:
        return self.store.count(flt)


def _normalise_timestamp(value: str) -> str:
    """A filter time in the stored form, rounded up to the millisecond so the filter is never wider: a fraction
    finer than a microsecond (ProtoJSON allows nine digits) counts as a microsecond more, not as none."""
    whole, dot, rest = value.partition(".")
    digits = len(rest) - len(rest.lstrip("0123456789"))
    finer = dot and digits > 6 and rest[6:digits].strip("0") != ""
    moment = datetime.fromisoformat((whole + dot + rest[: min(digits, 6)] + rest[digits:]).replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if finer:
        moment += timedelta(microseconds=1)
    if moment.microsecond % 1000:
        moment += timedelta(microseconds=1000 - moment.microsecond % 1000)
    return format_timestamp(moment)
