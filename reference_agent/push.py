"""Push notifications: the four config methods, a durable outbox, and a sender signing with Standard Webhooks.

Choices where the pages are silent (the Push page is not a source):
- A config's url must be http(s) to a host:port on the allowlist, compared literally (no DNS, no other
  spelling of an address, no userinfo). A config to any other destination is refused when it is created
  (-32602 naming ``url``), and the sender checks again before every attempt, so it never connects.
- The config's ``token`` travels in the ``X-A2A-Notification-Token`` header (as the A2A SDKs send it);
  ``authentication`` as ``Authorization: <scheme> <credentials>``.
- Every status change and every artifact of the task is one event; each event is queued once per config
  and delivered at least once, its body a StreamResponse signed with the Runtime's push secret.
- A failed attempt (non-2xx, timeout, refused or reset connection, a redirect: redirects are never
  followed) is retried on the schedule below, with ±10 % jitter, or after ``Retry-After`` when the answer
  carries one; 410 Gone disables the config. No attempt is made more than 24 hours after an event's
  first. Every delay is multiplied by the configured time scale, so tests run the schedule in seconds.
- Events of one config are attempted one at a time, oldest first; a retry waits behind nothing but its
  own schedule, so a later event may arrive before an earlier event's retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import socket
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from standardwebhooks.webhooks import Webhook

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.errors import RpcError, invalid_params
from nylorun_a2a_kit.reference_agent.store import JSON, from_row

log = logging.getLogger("reference_agent.push")
TOKEN_HEADER = "X-A2A-Notification-Token"
SCHEDULE_S = (0, 5, 300, 1800, 7200, 18000, 36000, 50400)  # after the first attempt, then each retry
WINDOW_S = 24 * 3600
GONE = 410
TERMINAL_STATES = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED")

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


def allowed(url: str, config: AgentConfig) -> bool:
    """Whether ``url`` is a destination the Runtime allows: scheme, literal host and port on the allowlist."""
    if config.fault("allowlist-naive-parse"):  # reads "user:pass@host" as if the userinfo were the host
        netloc = url.split("//", 1)[-1].split("/", 1)[0].split("@", 1)[0]
        return netloc in config.push_allowed
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or parts.username is not None or parts.password is not None:
        return False
    if config.fault("loopback-host-allowed") and (parts.hostname or "").startswith(("127.", "localhost", "::1")):
        return True
    if config.fault("allowlist-resolves-host"):  # compares the resolved address, so any spelling passes
        with contextlib.suppress(OSError):
            return f"{socket.gethostbyname(parts.hostname or '')}:{port}" in config.push_allowed
    return f"{parts.hostname}:{port}" in config.push_allowed or (parts.hostname or "") in config.push_allowed


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

    def __init__(self, db, config: AgentConfig):
        self.db, self.config = db, config
        db.executescript(SCHEMA)

    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        """A config for ``task`` (a stored task record), after checking its url against the allowlist."""
        task_id = task.id
        url = params["url"]
        if not allowed(url, self.config):
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

    def get(self, task_id: str, config_id: str, *, include_deleted: bool = False) -> Config | None:
        state = "" if include_deleted else " AND state='active'"
        row = self.db.execute(
            f"SELECT * FROM push_configs WHERE task_id=? AND id=?{state}", (task_id, config_id)
        ).fetchone()
        return from_row(Config, row) if row else None

    def list(self, task_id: str) -> list[Config]:
        rows = self.db.execute(
            "SELECT * FROM push_configs WHERE task_id=? AND state='active' ORDER BY rowid", (task_id,)
        )
        return [from_row(Config, row) for row in rows]

    def delete(self, task_id: str, config_id: str) -> None:
        """Idempotent: a config that is already gone is deleted again without complaint."""
        if self.config.fault("delete-not-stopping"):
            self.db.execute(
                "UPDATE push_configs SET state='listed-deleted' WHERE task_id=? AND id=?", (task_id, config_id)
            )
            return
        self.db.execute("UPDATE push_configs SET state='deleted' WHERE task_id=? AND id=?", (task_id, config_id))
        self.db.execute(
            "UPDATE push_outbox SET state='canceled' WHERE task_id=? AND config_id=? AND state='pending'",
            (task_id, config_id),
        )

    def move(self, agent_id: str, subject: str, from_task: str, to_task: str) -> None:
        """Configs created on a queued message follow it to the task that takes it."""
        self.db.execute(
            "UPDATE push_configs SET task_id=? WHERE task_id=? AND agent_id=? AND subject=?",
            (to_task, from_task, agent_id, subject),
        )

    def deliverable(self, task_id: str) -> list[Config]:
        rows = self.db.execute(
            "SELECT * FROM push_configs WHERE task_id=? AND state IN ('active', 'listed-deleted')", (task_id,)
        )
        return [from_row(Config, row) for row in rows]

    def still_wanted(self, task_id: str, config_id: str) -> bool:
        row = self.db.execute(
            "SELECT state FROM push_configs WHERE task_id=? AND id=?", (task_id, config_id)
        ).fetchone()
        return row is not None and row["state"] in ("active", "listed-deleted")

    def gone(self, task_id: str, config_id: str) -> None:
        self.db.execute("UPDATE push_configs SET state='gone' WHERE task_id=? AND id=?", (task_id, config_id))
        self.db.execute(
            "UPDATE push_outbox SET state='canceled' WHERE task_id=? AND config_id=? AND state='pending'",
            (task_id, config_id),
        )


class Sender:
    """Delivers the outbox: one lane per config, oldest event first, retried on the scaled schedule."""

    def __init__(self, db, configs: PushConfigs, config: AgentConfig):
        self.db, self.configs, self.config = db, configs, config
        self._wake = asyncio.Event()
        self._lanes: dict[str, asyncio.Task] = {}
        self._main: asyncio.Task | None = None
        self._session: aiohttp.ClientSession | None = None
        self._webhook = Webhook(config.push_secret) if config.push_secret else None

    # -- queueing (called inside the engine's transaction, so an event and its change commit together)

    def enqueue(self, task_id: str, body: dict[str, Any], config: Config) -> None:
        data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        webhook_id = f"msg_{secrets.token_hex(12)}"
        due = time.time()
        state = ((body.get("statusUpdate") or {}).get("status") or {}).get("state", "")
        if self.config.fault("push-order-reversed") and state not in ("", *TERMINAL_STATES):
            due += 0.3  # a working update's first attempt goes out after the terminal one's
        self.db.execute(
            "INSERT INTO push_outbox (task_id, config_id, webhook_id, body, next_at, state) VALUES (?,?,?,?,?,?)",
            (task_id, config.id, webhook_id, data, due, "pending"),
        )
        self._wake.set()

    # -- life cycle

    def start(self) -> None:
        if self._webhook is None:
            return
        timeout = aiohttp.ClientTimeout(total=self.config.push_attempt_timeout_s)
        self._session = aiohttp.ClientSession(timeout=timeout, auto_decompress=False)
        self._main = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        tasks = [t for t in (self._main, *self._lanes.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._session is not None:
            await self._session.close()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            now = time.time()
            due = self.db.execute(
                "SELECT DISTINCT config_id, task_id FROM push_outbox WHERE state='pending' AND next_at<=?", (now,)
            ).fetchall()
            for row in due:
                lane = f"{row['task_id']}/{row['config_id']}"
                if lane not in self._lanes:
                    self._lanes[lane] = asyncio.get_running_loop().create_task(
                        self._drain(row["task_id"], row["config_id"], lane)
                    )
            upcoming = self.db.execute("SELECT MIN(next_at) FROM push_outbox WHERE state='pending'").fetchone()[0]
            wait = 1.0 if upcoming is None else max(0.001, min(1.0, upcoming - time.time()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def _drain(self, task_id: str, config_id: str, lane: str) -> None:
        try:
            while True:
                row = self.db.execute(
                    "SELECT * FROM push_outbox WHERE task_id=? AND config_id=? AND state='pending' AND next_at<=? "
                    "ORDER BY next_at, seq LIMIT 1",
                    (task_id, config_id, time.time()),
                ).fetchone()
                if row is None:
                    return
                await self._attempt(row)
        finally:
            self._lanes.pop(lane, None)
            self._wake.set()

    # -- one attempt

    async def _attempt(self, row) -> None:
        config = self.configs.get(row["task_id"], row["config_id"]) or self._listed_deleted(row)
        if config is None or not self.configs.still_wanted(row["task_id"], row["config_id"]):
            self.db.execute("UPDATE push_outbox SET state='canceled' WHERE seq=?", (row["seq"],))
            return
        first_at = row["first_at"] or time.time()
        status, retry_after = await self._post(config, row)
        attempts = row["attempts"] + 1
        fault = self.config.fault
        if status is not None and 200 <= status < 300 and not fault("retries-after-success"):
            self.db.execute(
                "UPDATE push_outbox SET state='delivered', attempts=?, first_at=? WHERE seq=?",
                (attempts, first_at, row["seq"]),
            )
            return
        if status == GONE and not fault("gone-ignored"):
            self.configs.gone(row["task_id"], row["config_id"])
            return
        delay = self._delay(attempts, retry_after)
        scaled_window = WINDOW_S * self.config.push_time_scale
        if (
            fault("no-retries")
            or (delay is None)
            or (time.time() + delay - first_at > scaled_window and not fault("retries-forever"))
        ):
            self.db.execute(
                "UPDATE push_outbox SET state='gave-up', attempts=?, first_at=? WHERE seq=?",
                (attempts, first_at, row["seq"]),
            )
            return
        webhook_id = f"msg_{secrets.token_hex(12)}" if fault("new-webhook-id-on-retry") else row["webhook_id"]
        self.db.execute(
            "UPDATE push_outbox SET attempts=?, first_at=?, next_at=?, webhook_id=? WHERE seq=?",
            (attempts, first_at, time.time() + delay, webhook_id, row["seq"]),
        )

    def _listed_deleted(self, row) -> Config | None:
        for config in self.configs.deliverable(row["task_id"]):
            if config.id == row["config_id"]:
                return config
        return None

    def _delay(self, attempts: int, retry_after: float | None) -> float | None:
        scale = self.config.push_time_scale
        if retry_after is not None and not self.config.fault("retry-after-ignored"):
            return retry_after * scale
        if self.config.fault("retries-forever"):
            return SCHEDULE_S[2] * scale
        if attempts >= len(SCHEDULE_S):
            return None
        if self.config.fault("retries-shrink"):
            return SCHEDULE_S[1] * scale / attempts
        return SCHEDULE_S[attempts] * scale * random.uniform(0.9, 1.1)

    async def _post(self, config: Config, row) -> tuple[int | None, float | None]:
        assert self._session is not None and self._webhook is not None
        fault = self.config.fault
        if not allowed(config.url, self.config):
            return None, None
        body: bytes = row["body"]
        now = datetime.now(UTC)
        if fault("stale-timestamp"):
            now = now.replace(year=now.year - 1)
        signed = body.decode()
        if fault("reserialized-body"):
            body = json.dumps(json.loads(body), indent=1).encode()
        signature = self._webhook.sign(row["webhook_id"], now, signed)
        if fault("bad-signature"):
            signature = "v1," + signature.split(",", 1)[1][::-1]
        headers = {
            "Content-Type": "application/json",
            "webhook-id": row["webhook_id"],
            "webhook-timestamp": str(int(now.timestamp() * (1000 if fault("timestamp-in-ms") else 1))),
            "webhook-signature": signature,
        }
        if config.token and not fault("missing-token"):
            headers[TOKEN_HEADER] = config.token
        auth = config.authentication or {}
        if auth.get("scheme") and not fault("wrong-auth-header"):
            headers["Authorization"] = f"{auth['scheme']} {auth.get('credentials', '')}".strip()
        url = config.url
        if fault("allowlist-resolves-host"):  # connects to the address it checked, as anti-rebinding code does
            parts = urlsplit(url)
            with contextlib.suppress(OSError, ValueError):
                resolved = socket.gethostbyname(parts.hostname or "")
                url = parts._replace(netloc=f"{resolved}:{parts.port or 80}").geturl()
        try:
            async with self._session.post(
                url, data=body, headers=headers, allow_redirects=fault("redirect-followed")
            ) as response:
                await response.read()
                retry_after = response.headers.get("Retry-After")
                seconds = float(retry_after) if retry_after and retry_after.strip().isdigit() else None
                return response.status, seconds
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            log.debug("push to %s failed: %s", config.url, exc)
            return None, None
