"""The agent's database in an older layout, as a Runtime upgraded in place finds it: the start carries it over.

``OLDER`` is the layout from before sessions, counts per owner and state, and push configs held by their holder's
Agent and subject: a database the agent was started on then, and starts on now. ``bring_back`` takes a database to
that layout as far as it can without losing what the checks made: the tables a start rebuilds from the others
(a session from its conversation, a count from its tasks) are dropped. The push tables' older layout could not hold
every config a client makes now (two callers' configs of one id on one queued messageId), so they are carried over
only from a database that began in the older layout.
"""

from __future__ import annotations

import contextlib
import sqlite3

OLDER = """
CREATE TABLE tasks (
  id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, subject TEXT NOT NULL, context_id TEXT NOT NULL,
  turn INTEGER NOT NULL, state TEXT NOT NULL, status_message TEXT, status_ts TEXT NOT NULL, seq INTEGER NOT NULL,
  history TEXT NOT NULL, artifacts TEXT NOT NULL, metadata TEXT, scenario TEXT NOT NULL
);
CREATE TABLE message_ids (
  agent_id TEXT NOT NULL, subject TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
  PRIMARY KEY (agent_id, subject, message_id)
);
CREATE TABLE files (
  agent_id TEXT NOT NULL, subject TEXT NOT NULL, context_id TEXT NOT NULL, path TEXT NOT NULL,
  version INTEGER NOT NULL, task_id TEXT NOT NULL, data BLOB NOT NULL, token TEXT NOT NULL, PRIMARY KEY (task_id, path)
);
CREATE TABLE contexts (
  agent_id TEXT NOT NULL, subject TEXT NOT NULL, context_id TEXT NOT NULL, turns INTEGER NOT NULL,
  PRIMARY KEY (agent_id, subject, context_id)
);
CREATE TABLE queued (
  position INTEGER PRIMARY KEY AUTOINCREMENT, agent_id TEXT NOT NULL, subject TEXT NOT NULL,
  context_id TEXT NOT NULL, message_id TEXT NOT NULL, params TEXT NOT NULL, caller TEXT NOT NULL,
  queued_ts TEXT NOT NULL, taken_by TEXT, UNIQUE (agent_id, subject, message_id)
);
CREATE TABLE push_configs (
  task_id TEXT NOT NULL, id TEXT NOT NULL, agent_id TEXT NOT NULL, subject TEXT NOT NULL, url TEXT NOT NULL,
  token TEXT, authentication TEXT, extensions TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (task_id, id)
);
CREATE TABLE push_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, config_id TEXT NOT NULL, webhook_id TEXT NOT NULL,
  body BLOB NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, first_at REAL, next_at REAL NOT NULL, state TEXT NOT NULL
);
"""

DERIVED = """
DROP TRIGGER IF EXISTS task_counted;
DROP TRIGGER IF EXISTS task_uncounted;
DROP TRIGGER IF EXISTS task_recounted;
DROP TABLE IF EXISTS task_counts;
DROP TABLE IF EXISTS sessions;
"""


def write_older(path: str) -> None:
    """A new, empty database at ``path`` in the older layout."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(OLDER)


def bring_back(path: str) -> None:
    """The database at ``path`` without the tables the older layout did not have and a start rebuilds."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(DERIVED)
