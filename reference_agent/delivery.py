"""Push deliveries: a durable outbox, and a sender signing with Standard Webhooks.

Choices where the pages are silent (the Push page is not a source):
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
import time
from datetime import UTC, datetime
from typing import Any

import aiohttp
from standardwebhooks.webhooks import Webhook

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.push import Config, PushConfigs
from nylorun_a2a_kit.reference_agent.seams import CORRECT, Seams

log = logging.getLogger("reference_agent.push")
TOKEN_HEADER = "X-A2A-Notification-Token"
SCHEDULE_S = (0, 5, 300, 1800, 7200, 18000, 36000, 50400)  # after the first attempt, then each retry
WINDOW_S = 24 * 3600
GONE = 410
STOP_GRACE_S = 1.0  # how long a stop lets the attempts in flight be answered


class RetryPolicy:
    """When an event is attempted, and what ends its attempts (see the schedule in this module's notes)."""

    def __init__(self, time_scale: float):
        self.scale = time_scale

    def first_due(self, body: dict[str, Any]) -> float:
        """When an event is first attempted: at once."""
        return time.time()

    def delivered(self, status: int | None, webhook_id: str = "") -> bool:
        """Whether the attempt of the event ``webhook_id`` that got ``status`` delivered it."""
        return status is not None and 200 <= status < 300

    def gone(self, status: int | None) -> bool:
        return status == GONE

    def delay(self, attempts: int, retry_after: float | None) -> float | None:
        """The wait before the next attempt after ``attempts`` failed ones (None: no more attempts)."""
        if retry_after is not None:
            return retry_after * self.scale
        if attempts >= len(SCHEDULE_S):
            return None
        return SCHEDULE_S[attempts] * self.scale * random.uniform(0.9, 1.1)

    def expired(self, first_at: float, next_at: float) -> bool:
        """Whether an attempt at ``next_at`` comes too late after the event's first, at ``first_at``."""
        return next_at - first_at > WINDOW_S * self.scale

    def retry_id(self, webhook_id: str) -> str:
        """A retry is the same message: it keeps its webhook-id."""
        return webhook_id


class Webhooks:
    """One attempt as it is sent: the event's body signed with Standard Webhooks, the config's credentials."""

    follows_redirects = False
    method = "POST"  # A2A §4.3.3

    def __init__(self, secret: str | None):
        self._webhook = Webhook(secret) if secret else None

    def payload(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The body a config's endpoint gets for an event: the StreamResponse (None: the event is not sent)."""
        return event

    def moment(self) -> datetime:
        return datetime.now(UTC)

    def timestamp(self, moment: datetime) -> str:
        return str(int(moment.timestamp()))

    def request(self, config: Config, webhook_id: str, body: bytes) -> tuple[bytes, dict[str, str]]:
        """The body and the headers of an attempt: the body as signed, with the config's token and auth."""
        assert self._webhook is not None
        moment = self.moment()
        headers = {
            "Content-Type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": self.timestamp(moment),
            "webhook-signature": self._webhook.sign(webhook_id, moment, body.decode()),
        }
        if config.token:
            headers[TOKEN_HEADER] = config.token
        auth = config.authentication or {}
        if auth.get("scheme"):
            headers["Authorization"] = f"{auth['scheme']} {auth.get('credentials', '')}".strip()
        return body, headers


class Sender:
    """Delivers the outbox: one lane per config (its row: another task's or caller's config of the same id is
    another lane), oldest event first, retried on the scaled schedule."""

    def __init__(self, db, configs: PushConfigs, config: AgentConfig, seams: Seams = CORRECT):
        self.db, self.configs, self.config = db, configs, config
        self.retries = seams.make(RetryPolicy, config.push_time_scale)
        self.webhooks = seams.make(Webhooks, config.push_secret)
        self._wake = asyncio.Event()
        self._lanes: dict[int, asyncio.Task] = {}
        self._stopping = False
        self._main: asyncio.Task | None = None
        self._session: aiohttp.ClientSession | None = None

    # -- queueing (called inside the engine's transaction, so an event and its change commit together)

    def enqueue(self, task_id: str, event: dict[str, Any], config: Config) -> None:
        body = self.webhooks.payload(event)
        if body is None:
            return
        data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        self.db.execute(
            "INSERT INTO push_outbox (task_id, config_id, config_key, webhook_id, body, next_at, state) "
            "VALUES (?,?,?,?,?,?,?)",
            (
                task_id,
                config.id,
                config.key,
                f"msg_{secrets.token_hex(12)}",
                data,
                self.retries.first_due(body),
                "pending",
            ),
        )
        self._wake.set()

    # -- life cycle

    def start(self) -> None:
        if not self.config.push_secret:
            return
        timeout = aiohttp.ClientTimeout(total=self.config.push_attempt_timeout_s)
        self._session = aiohttp.ClientSession(timeout=timeout, auto_decompress=False)
        self._main = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop delivering: the attempts in flight get a moment to be answered (one cut off is made again after a
        restart, a delivery more than needed), then whatever is left is canceled."""
        self._stopping = True
        if self._main is not None:
            self._main.cancel()
        lanes = list(self._lanes.values())
        if lanes:
            await asyncio.wait(lanes, timeout=min(STOP_GRACE_S, self.config.push_attempt_timeout_s))
        tasks = [t for t in (self._main, *lanes) if t is not None]
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
            # Each lane's first pending event, but a lane being drained: it sends its own and wakes this loop as it
            # ends (were its event in flight waited on here, this loop would look again every millisecond until the
            # receiver answered).
            firsts = {
                lane: first_at
                for lane, first_at in self.db.execute(
                    "SELECT config_key, MIN(next_at) FROM push_outbox WHERE state='pending' GROUP BY config_key"
                )
                if lane not in self._lanes
            }
            now = time.time()
            for lane, first_at in firsts.items():
                if first_at <= now:
                    self._lanes[lane] = asyncio.get_running_loop().create_task(self._drain(lane))
            upcoming = min((first_at for first_at in firsts.values() if first_at > now), default=None)
            wait = 1.0 if upcoming is None else max(0.001, min(1.0, upcoming - time.time()))
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for loses a cancel that comes as the wake does, and
            # a stop would then wait on this loop for ever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

    async def _drain(self, lane: int) -> None:
        try:
            while True:
                row = self.db.execute(
                    "SELECT * FROM push_outbox WHERE config_key=? AND state='pending' AND next_at<=? "
                    "ORDER BY next_at, seq LIMIT 1",
                    (lane, time.time()),
                ).fetchone()
                if row is None or self._stopping:
                    return
                await self._attempt(row)
        finally:
            self._lanes.pop(lane, None)
            self._wake.set()

    # -- one attempt

    async def _attempt(self, row) -> None:
        config = self.configs.target(row["config_key"])
        if config is None:
            self.db.execute("UPDATE push_outbox SET state='canceled' WHERE seq=?", (row["seq"],))
            return
        first_at = row["first_at"] or time.time()
        status, retry_after = await self._post(config, row)
        attempts = row["attempts"] + 1
        if self.retries.delivered(status, row["webhook_id"]):
            self.db.execute(
                "UPDATE push_outbox SET state='delivered', attempts=?, first_at=? WHERE seq=?",
                (attempts, first_at, row["seq"]),
            )
            return
        if self.retries.gone(status):
            self.configs.gone(row["config_key"])
            return
        delay = self.retries.delay(attempts, retry_after)
        if delay is None or self.retries.expired(first_at, time.time() + delay):
            self.db.execute(
                "UPDATE push_outbox SET state='gave-up', attempts=?, first_at=? WHERE seq=?",
                (attempts, first_at, row["seq"]),
            )
            return
        self.db.execute(
            "UPDATE push_outbox SET attempts=?, first_at=?, next_at=?, webhook_id=? WHERE seq=?",
            (attempts, first_at, time.time() + delay, self.retries.retry_id(row["webhook_id"]), row["seq"]),
        )

    async def _post(self, config: Config, row) -> tuple[int | None, float | None]:
        assert self._session is not None
        if not self.configs.destinations.allows(config.url):
            return None, None
        body, headers = self.webhooks.request(config, row["webhook_id"], row["body"])
        try:
            async with self._session.request(
                self.webhooks.method,
                self.configs.destinations.address(config.url),
                data=body,
                headers=headers,
                allow_redirects=self.webhooks.follows_redirects,
            ) as response:
                await response.read()
                retry_after = response.headers.get("Retry-After")
                seconds = float(retry_after) if retry_after and retry_after.strip().isdigit() else None
                return response.status, seconds
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            log.debug("push to %s failed: %s", config.url, exc)
            return None, None
