"""Messages queued for a busy conversation (profile v2): kept in SQLite, taken in order, one turn at a time.

A queued message answers as a task under the message's own id, ``TASK_STATE_SUBMITTED``, until a turn takes
it; then that id leads to the taking task. Queued messages are not tasks: ListTasks and the change feed
do not show them, and CancelTask refuses them.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from nylorun_a2a_kit.reference_agent.store import JSON, TaskRecord, from_row

SCHEMA = """
CREATE TABLE IF NOT EXISTS queued (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  context_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  params TEXT NOT NULL,
  caller TEXT NOT NULL,
  queued_ts TEXT NOT NULL,
  taken_by TEXT,
  UNIQUE (agent_id, subject, message_id)
);
CREATE INDEX IF NOT EXISTS queued_by_context ON queued (agent_id, subject, context_id, taken_by, position);
"""


@dataclass(frozen=True)
class Queued:
    position: int
    agent_id: str
    subject: str
    context_id: str
    message_id: str
    params: dict[str, Any] = field(metadata=JSON)
    # What a later turn needs of the request: base URL, extensions, traceparent.
    caller: dict[str, Any] = field(metadata=JSON)
    queued_ts: str
    taken_by: str | None

    def as_task(self) -> TaskRecord:
        """The queued message as the task that will take it, under the message's own id."""
        return TaskRecord(
            id=self.message_id,
            agent_id=self.agent_id,
            subject=self.subject,
            context_id=self.context_id,
            turn=0,
            state="TASK_STATE_SUBMITTED",
            status_message=None,
            status_ts=self.queued_ts,
            seq=0,
            history=[{**self.params["message"], "taskId": self.message_id}],
            scenario={"queued": True, "position": self.position},
        )


class MessageQueue:
    def __init__(self, db: sqlite3.Connection):
        self.db = db
        db.executescript(SCHEMA)

    def add(
        self,
        agent_id: str,
        subject: str,
        context_id: str,
        params: dict[str, Any],
        caller: dict[str, Any],
        queued_ts: str,
    ) -> None:
        message_id = params["message"]["messageId"]
        self.db.execute(
            "INSERT INTO queued (agent_id, subject, context_id, message_id, params, caller, queued_ts) "
            "VALUES (?,?,?,?,?,?,?)",
            (agent_id, subject, context_id, message_id, json.dumps(params), json.dumps(caller), queued_ts),
        )

    def find(self, agent_id: str, subject: str, message_id: str) -> Queued | None:
        row = self.db.execute(
            "SELECT * FROM queued WHERE agent_id=? AND subject=? AND message_id=?", (agent_id, subject, message_id)
        ).fetchone()
        return from_row(Queued, row) if row else None

    def waiting(self, agent_id: str, subject: str, context_id: str | None = None) -> list[Queued]:
        """The messages no turn has taken yet, oldest first (of one conversation, or of all of them)."""
        rows = self.db.execute(
            "SELECT * FROM queued WHERE agent_id=? AND subject=? AND (context_id=? OR ? IS NULL) "
            "AND taken_by IS NULL ORDER BY position",
            (agent_id, subject, context_id, context_id),
        )
        return [from_row(Queued, row) for row in rows]

    def next(self, agent_id: str, subject: str, context_id: str) -> Queued | None:
        """The message a conversation's next turn takes: its oldest waiting one."""
        waiting = self.waiting(agent_id, subject, context_id)
        return waiting[0] if waiting else None

    def contexts_waiting(self) -> list[tuple[str, str, str]]:
        rows = self.db.execute(
            "SELECT DISTINCT agent_id, subject, context_id FROM queued WHERE taken_by IS NULL ORDER BY position"
        )
        return [tuple(row) for row in rows]

    def taken(self, queued: Queued, task_id: str) -> None:
        """Record the turn that took ``queued``: its id leads there from now on."""
        self.db.execute("UPDATE queued SET taken_by=? WHERE position=?", (task_id, queued.position))
