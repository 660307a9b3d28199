"""Push notifications: the four config methods over SQLite, and the destinations deliveries may go to.

Choices where the pages are silent (the Push page is not a source):
- A config's url must be http(s) to a host:port on the allowlist, compared literally (no DNS, no other
  spelling of an address, no userinfo). A config to any other destination is refused when it is created
  (-32602 naming ``url``), and the sender checks again before every attempt, so it never connects.
- A deleted config gets no more deliveries: its pending events are canceled with it.

Deliveries, from a durable outbox (the ``push_outbox`` table), are :mod:`reference_agent.delivery`'s.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from nylorun_a2a_kit.reference_agent.errors import RpcError, invalid_params
from nylorun_a2a_kit.reference_agent.store import JSON, from_row

SCHEMA = """
CREATE TABLE IF NOT EXISTS push_configs (
  key INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  task_id TEXT NOT NULL,
  queued INTEGER NOT NULL DEFAULT 0,
  id TEXT NOT NULL,
  url TEXT NOT NULL,
  token TEXT,
  authentication TEXT,
  extensions TEXT NOT NULL,
  state TEXT NOT NULL,
  UNIQUE (agent_id, subject, task_id, queued, id)
);
CREATE TABLE IF NOT EXISTS push_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  config_id TEXT NOT NULL,
  config_key INTEGER NOT NULL,
  webhook_id TEXT NOT NULL,
  body BLOB NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  first_at REAL,
  next_at REAL NOT NULL,
  state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS push_outbox_due ON push_outbox (state, next_at);
CREATE INDEX IF NOT EXISTS push_outbox_lane ON push_outbox (config_key, state, next_at);
"""
# A database from before configs were keyed by their holder's Agent and subject: configs keyed by (task id, config
# id) alone, deliveries by the same two. Each config keeps its row number as its key, a config on a message still
# queued (its task id the message's id, no task of that id) becomes that message's, and each delivery names its
# config's key.
MIGRATE_UNOWNED = """
ALTER TABLE push_configs RENAME TO push_configs_unowned;
{configs}
INSERT INTO push_configs (key, agent_id, subject, task_id, queued, id, url, token, authentication, extensions, state)
  SELECT c.rowid, c.agent_id, c.subject, c.task_id,
    COALESCE((SELECT q.position FROM queued q WHERE q.agent_id=c.agent_id AND q.subject=c.subject
              AND q.message_id=c.task_id AND q.taken_by IS NULL AND NOT EXISTS (SELECT 1 FROM tasks t
              WHERE t.id=c.task_id AND t.agent_id=c.agent_id AND t.subject=c.subject)), 0),
    c.id, c.url, c.token, c.authentication, c.extensions, c.state
  FROM push_configs_unowned c;
DROP TABLE push_configs_unowned;
ALTER TABLE push_outbox ADD COLUMN config_key INTEGER NOT NULL DEFAULT 0;
UPDATE push_outbox SET config_key=COALESCE((SELECT c.key FROM push_configs c
  WHERE c.task_id=push_outbox.task_id AND c.id=push_outbox.config_id AND c.queued=0), 0);
"""


def not_supported(method: str) -> RpcError:
    return RpcError(
        "PushNotificationNotSupportedError",
        "Push notifications are not configured on this Runtime.",
        reason="PUSH_NOT_SUPPORTED",
        metadata={"method": method},
    )


class Destinations:
    """Where deliveries may go: http(s) to a host:port (or a host) on the allowlist, compared literally."""

    def __init__(self, allowed: frozenset[str]):
        self.allowed = allowed

    def allows(self, url: str) -> bool:
        try:
            parts = urlsplit(url)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or parts.username is not None or parts.password is not None:
            return False
        return self.listed(parts.hostname or "", port)

    def listed(self, host: str, port: int | None) -> bool:
        """Whether ``host:port``, or the host with any port, is on the allowlist (spelled as it is there)."""
        return f"{host}:{port}" in self.allowed or host in self.allowed

    def address(self, url: str) -> str:
        """Where a delivery to ``url`` connects: the URL itself (it is the URL the allowlist admitted)."""
        return url


def holder(task: Any) -> tuple[str, str, str, int]:
    """What a push config on ``task`` (a stored task record, or a queued message's) belongs to: its Agent, its
    subject, its id, and for a queued message its place in the queue (0 for a task). A queued message's task id is
    its client's messageId, which another subject or Agent may choose too, or which may be one of its caller's task
    ids: only all four name one holder."""
    queued = task.scenario.get("position", 0) if task.scenario.get("queued") else 0
    return task.agent_id, task.subject, task.id, queued


@dataclass
class Config:
    key: int  # the config's row: what its deliveries go to
    task_id: str
    id: str
    url: str
    token: str | None
    authentication: dict[str, Any] | None = field(metadata=JSON)
    extensions: frozenset[str] = field(metadata={"json": frozenset})

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "taskId": self.task_id, "url": self.url}
        if self.token:
            out["token"] = self.token
        if self.authentication:
            out["authentication"] = self.authentication
        return out


class PushConfigs:
    """The four config methods over the ``push_configs`` table. Every config is its holder's: a task, or a message
    still queued, of one Agent and subject (:func:`holder`); its deliveries go to its own row (``key``)."""

    def __init__(self, db, destinations: Destinations):
        self.db, self.destinations = db, destinations
        if self._columns("push_configs") and "key" not in self._columns("push_configs"):
            configs = SCHEMA[: SCHEMA.index(";") + 1]
            try:
                db.executescript(f"BEGIN IMMEDIATE;{MIGRATE_UNOWNED.format(configs=configs)}COMMIT;")
            except sqlite3.Error:
                if db.in_transaction:  # all of it or none: the older tables stay as they were
                    db.execute("ROLLBACK")
                raise
        db.executescript(SCHEMA)

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}

    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        """A config for ``task`` (a stored task record, or a queued message's), after checking its url against the
        allowlist. A config id the task already has is that config, written again."""
        url = params["url"]
        if not self.destinations.allows(url):
            raise invalid_params([("url", "is not a destination this Runtime delivers to (allowed hosts)")])
        config_id = params.get("id") or f"push-{secrets.token_hex(8)}"
        token, authentication = params.get("token") or None, params.get("authentication") or None
        self.db.execute(
            "INSERT INTO push_configs (agent_id, subject, task_id, queued, id, url, token, authentication, extensions,"
            " state) VALUES (?,?,?,?,?,?,?,?,?,'active') ON CONFLICT (agent_id, subject, task_id, queued, id) DO UPDATE"
            " SET url=excluded.url, token=excluded.token, authentication=excluded.authentication,"
            " extensions=excluded.extensions, state='active'",
            (
                *holder(task),
                config_id,
                url,
                token,
                json.dumps(authentication) if authentication else None,
                json.dumps(sorted(extensions)),
            ),
        )
        config = self.get(task, config_id)
        assert config is not None
        return config

    def get(self, task: Any, config_id: str) -> Config | None:
        row = self.db.execute(
            "SELECT * FROM push_configs WHERE agent_id=? AND subject=? AND task_id=? AND queued=? AND id=? "
            "AND state='active'",
            (*holder(task), config_id),
        ).fetchone()
        return from_row(Config, row) if row else None

    def list(self, task: Any) -> list[Config]:
        rows = self.db.execute(
            "SELECT * FROM push_configs WHERE agent_id=? AND subject=? AND task_id=? AND queued=? AND state='active' "
            "ORDER BY key",
            holder(task),
        )
        return [from_row(Config, row) for row in rows]

    def delete(self, task: Any, config_id: str) -> None:
        """Idempotent: a config that is already gone is deleted again without complaint."""
        config = self.get(task, config_id)
        if config is not None:
            self.db.execute("UPDATE push_configs SET state='deleted' WHERE key=?", (config.key,))
            self.cancel_pending(config.key)

    def move(self, position: int, to_task: str) -> None:
        """The configs created on the message queued at ``position`` follow it to the task that takes it."""
        self.db.execute("UPDATE push_configs SET task_id=?, queued=0 WHERE queued=?", (to_task, position))

    def deliverable(self, task: Any) -> list[Config]:
        """The configs a new event of the task goes to."""
        return self.list(task)

    def target(self, key: int) -> Config | None:
        """The config a pending event still goes to (None: it does not go anywhere any more)."""
        row = self.db.execute("SELECT * FROM push_configs WHERE key=? AND state='active'", (key,)).fetchone()
        return from_row(Config, row) if row else None

    def gone(self, key: int) -> None:
        self.db.execute("UPDATE push_configs SET state='gone' WHERE key=?", (key,))
        self.cancel_pending(key)

    def cancel_pending(self, key: int) -> None:
        self.db.execute("UPDATE push_outbox SET state='canceled' WHERE config_key=? AND state='pending'", (key,))
