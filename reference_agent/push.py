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
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from nylorun_a2a_kit.reference_agent.errors import RpcError, invalid_params
from nylorun_a2a_kit.reference_agent.store import JSON, from_row

SCHEMA = """
CREATE TABLE IF NOT EXISTS push_configs (
  task_id TEXT NOT NULL,
  id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  url TEXT NOT NULL,
  token TEXT,
  authentication TEXT,
  extensions TEXT NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (task_id, id)
);
CREATE TABLE IF NOT EXISTS push_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  config_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  body BLOB NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  first_at REAL,
  next_at REAL NOT NULL,
  state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS push_outbox_due ON push_outbox (state, next_at);
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


@dataclass
class Config:
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
    """The four config methods over the ``push_configs`` table."""

    def __init__(self, db, destinations: Destinations):
        self.db, self.destinations = db, destinations
        db.executescript(SCHEMA)

    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        """A config for ``task`` (a stored task record), after checking its url against the allowlist."""
        task_id = task.id
        url = params["url"]
        if not self.destinations.allows(url):
            raise invalid_params([("url", "is not a destination this Runtime delivers to (allowed hosts)")])
        config = Config(
            task_id=task_id,
            id=params.get("id") or f"push-{secrets.token_hex(8)}",
            url=url,
            token=params.get("token") or None,
            authentication=params.get("authentication") or None,
            extensions=extensions,
        )
        self.db.execute(
            "INSERT OR REPLACE INTO push_configs VALUES (?,?,?,?,?,?,?,?,?)",
            (
                task_id,
                config.id,
                task.agent_id,
                task.subject,
                config.url,
                config.token,
                json.dumps(config.authentication) if config.authentication else None,
                json.dumps(sorted(extensions)),
                "active",
            ),
        )
        return config

    def get(self, task_id: str, config_id: str) -> Config | None:
        row = self.db.execute(
            "SELECT * FROM push_configs WHERE task_id=? AND id=? AND state='active'", (task_id, config_id)
        ).fetchone()
        return from_row(Config, row) if row else None

    def list(self, task_id: str) -> list[Config]:
        rows = self.db.execute(
            "SELECT * FROM push_configs WHERE task_id=? AND state='active' ORDER BY rowid", (task_id,)
        )
        return [from_row(Config, row) for row in rows]

    def delete(self, task_id: str, config_id: str) -> None:
        """Idempotent: a config that is already gone is deleted again without complaint."""
        self.db.execute("UPDATE push_configs SET state='deleted' WHERE task_id=? AND id=?", (task_id, config_id))
        self.cancel_pending(task_id, config_id)

    def move(self, agent_id: str, subject: str, from_task: str, to_task: str) -> None:
        """Configs created on a queued message follow it to the task that takes it."""
        self.db.execute(
            "UPDATE push_configs SET task_id=? WHERE task_id=? AND agent_id=? AND subject=?",
            (to_task, from_task, agent_id, subject),
        )

    def deliverable(self, task_id: str) -> list[Config]:
        """The configs a new event of the task goes to."""
        return self.list(task_id)

    def target(self, task_id: str, config_id: str) -> Config | None:
        """The config a pending event still goes to (None: it does not go anywhere any more)."""
        return self.get(task_id, config_id)

    def gone(self, task_id: str, config_id: str) -> None:
        self.db.execute("UPDATE push_configs SET state='gone' WHERE task_id=? AND id=?", (task_id, config_id))
        self.cancel_pending(task_id, config_id)

    def cancel_pending(self, task_id: str, config_id: str) -> None:
        self.db.execute(
            "UPDATE push_outbox SET state='canceled' WHERE task_id=? AND config_id=? AND state='pending'",
            (task_id, config_id),
        )
