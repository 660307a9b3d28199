"""The change feed, ``GET /v1/turns``: turns in the order they changed, the backstop for lost pushes.

A turn is an A2A task here (one task per turn). Every status change takes the next value of the store's
status sequence, so "turns that changed after the cursor, in the order they changed" is a keyset query on
that sequence, and a turn that changes again moves to its new place (it appears again after any cursor
taken before its change). Choices where the pages are silent: the cursor is opaque; a limit outside
1..500 is HTTP 400; with ``sessionId`` the cursor walks that session's turns oldest first.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.extensions import TELEMETRY
from nylorun_a2a_kit.reference_agent.store import TERMINAL, Store, TaskRecord

DEFAULT_LIMIT, MAX_LIMIT = 100, 500
STATUS = {
    "TASK_STATE_SUBMITTED": "running",
    "TASK_STATE_WORKING": "running",
    "TASK_STATE_INPUT_REQUIRED": "paused",
    "TASK_STATE_AUTH_REQUIRED": "paused",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "failed",
    "TASK_STATE_CANCELED": "cancelled",
}


class FeedError(ValueError):
    """A request the feed refuses with HTTP 400; the message says which parameter is wrong."""


def session_id(task: TaskRecord) -> str:
    digest = hashlib.sha256(f"{task.agent_id}\n{task.subject}\n{task.context_id}".encode()).hexdigest()
    return "ses_" + digest[:24]


def turn(task: TaskRecord, config: AgentConfig) -> dict[str, Any]:
    ended = task.state in TERMINAL or config.fault("feed-ended-at-early")
    telemetry = (task.metadata or {}).get(TELEMETRY) or {}
    out: dict[str, Any] = {
        "turnId": "turn_" + task.id.removeprefix("t-"),
        "sessionId": session_id(task),
        "agentId": task.agent_id,
        "status": "done" if config.fault("feed-bad-status-word") else STATUS.get(task.state, "running"),
        "startedAt": task.scenario.get("started_at", task.status_ts),
        "endedAt": task.status_ts if ended else None,
        "changedAt": task.status_ts,
        "totals": telemetry.get("totals"),
        "a2a": {"contextId": task.context_id, "taskId": task.id},
    }
    if config.fault("feed-missing-a2a"):
        out["a2a"] = None
    return out


def _cursor(position: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"p": position}).encode()).decode().rstrip("=")


def _position(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        return int(json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))["p"])
    except (ValueError, KeyError, TypeError, OverflowError, binascii.Error):
        raise FeedError("changedAfter is not a cursor this feed gave out") from None


def page(store: Store, config: AgentConfig, query: dict[str, str], subjects: set[str] | None) -> dict[str, Any]:
    """One page of the feed for ``query``; ``subjects`` limits it (None: the whole Tenant)."""
    raw_limit = query.get("limit", str(DEFAULT_LIMIT))
    if not raw_limit.isascii() or not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_LIMIT:
        if not config.fault("feed-limit-ignored"):
            raise FeedError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
        raw_limit = str(MAX_LIMIT)
    limit = MAX_LIMIT * 10 if config.fault("feed-limit-ignored") else int(raw_limit)
    after = _position(query.get("changedAfter"))
    if config.fault("feed-subject-leak"):
        subjects = None
    if config.fault("feed-needs-subject") and subjects is None:
        subjects = set()
    if config.fault("feed-starts-at-now") and not query.get("changedAfter"):
        after = store.last_seq()
    session = query.get("sessionId")
    if session:
        rows = [t for t in store.all_tasks(subjects) if session_id(t) == session]
        rows.sort(key=lambda t: (t.turn, t.seq), reverse=config.fault("feed-session-newest-first"))
        rows = [t for t in rows if t.turn > after]
        key = "turn"
    else:
        rows = store.changed_after(after, subjects, limit + 2)
        key = "seq"
    if after and rows and config.fault("feed-cursor-skips"):
        rows = rows[1:]
    chosen = rows[:limit]
    more = len(rows) > limit
    position = getattr(chosen[-1], key) if chosen else after
    if config.fault("feed-newest-first"):
        chosen = chosen[::-1]
    cursor = _cursor(position)
    if not chosen and config.fault("feed-no-cursor-on-empty"):
        cursor = None
    return {
        "turns": [turn(t, config) for t in chosen],
        "cursor": cursor,
        "hasMore": more and not config.fault("feed-has-more-wrong"),
    }
