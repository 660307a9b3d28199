"""The change feed, ``GET /v1/turns``: turns in the order they changed, the backstop for lost pushes.

A turn is an A2A task here (one task per turn). Every status change takes the next value of the store's
status sequence, so "turns that changed after the cursor, in the order they changed" is a keyset query on
that sequence, and a turn that changes again moves to its new place (it appears again after any cursor
taken before its change). Choices where the pages are silent: the cursor is opaque, and one past the feed's
end (another store's) is HTTP 400, as is a limit outside 1..500; with ``sessionId`` the cursor walks that
session's turns oldest first.
"""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent.config import KeyGrant
from nylorun_a2a_kit.reference_agent.extensions import TELEMETRY
from nylorun_a2a_kit.reference_agent.store import (
    TERMINAL,
    Store,
    TaskRecord,
    decode_cursor,
    encode_cursor,
)
from nylorun_a2a_kit.reference_agent.store import session_id as session_of

DEFAULT_LIMIT, MAX_LIMIT = 100, 500
STATUS = schemas.resolve("feed/Turn.json")["properties"]["status"]["x-kit-from-task-state"]


class FeedError(ValueError):
    """A request the feed refuses with HTTP 400; the message says which parameter is wrong."""


def session_id(task: TaskRecord) -> str:
    return session_of(task.agent_id, task.subject, task.context_id)


def turn(task: TaskRecord) -> dict[str, Any]:
    telemetry = (task.metadata or {}).get(TELEMETRY) or {}
    return {
        "turnId": "turn_" + task.id.removeprefix("t-"),
        "sessionId": session_id(task),
        "agentId": task.agent_id,
        "status": STATUS.get(task.state, "running"),
        "startedAt": task.scenario.get("started_at", task.status_ts),
        "endedAt": task.status_ts if task.state in TERMINAL else None,
        "changedAt": task.status_ts,
        "totals": telemetry.get("totals"),
        "a2a": {"contextId": task.context_id, "taskId": task.id},
    }


class Feed:
    """Pages of the feed over a store."""

    def __init__(self, store: Store):
        self.store = store

    def subjects(self, grant: KeyGrant, subject: str) -> set[str] | None:
        """Whose turns a reader sees: the subject it names, else every subject its key may act for (None: all)."""
        if subject:
            return {subject}
        return None if "*" in grant.subjects else set(grant.subjects)

    def page(self, query: dict[str, str], subjects: set[str] | None) -> dict[str, Any]:
        """One page of the feed for ``query``; ``subjects`` limits it (None: the whole Tenant)."""
        limit = self.limit(query.get("limit", str(DEFAULT_LIMIT)))
        after = self.start(query.get("changedAfter"))
        rows, key = self.rows(after, subjects, limit, query.get("sessionId"))
        chosen = rows[:limit]
        position = getattr(chosen[-1], key) if chosen else after
        cursor = encode_cursor({"p": position})
        return {"turns": [turn(t) for t in chosen], "cursor": cursor, "hasMore": len(rows) > limit}

    def limit(self, raw: str) -> int:
        if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
            raise FeedError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
        return int(raw)

    def start(self, cursor: str | None) -> int:
        """The position a page starts after: the cursor's, or the feed's beginning."""
        if not cursor:
            return 0
        try:
            position = decode_cursor(cursor, "p")[0]
        except ValueError:
            position = None
        if position is None or position > self.store.last_seq():  # past the end: given out by no feed of this store
            raise FeedError("changedAfter is not a cursor this feed gave out")
        return position

    def rows(
        self, after: int, subjects: set[str] | None, limit: int, session: str | None
    ) -> tuple[list[TaskRecord], str]:
        """The turns after the position (one more than a page, so that more shows), and what positions them."""
        if session:
            return self.session_turns(session, subjects, after), "turn"
        return self.store.changed_after(after, subjects, limit + 2), "seq"

    def session_turns(self, session: str, subjects: set[str] | None, after: int) -> list[TaskRecord]:
        """A session's turns after the position, oldest first."""
        return self.store.session_turns(session, subjects, after)
