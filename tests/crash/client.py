"""The crash harness's client: JSON-RPC to the agent, and bounded waits for tasks to end and events to arrive."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import httpx

from nylorun_a2a_kit.fixtures.push import Delivery, Endpoint, PushReceiver
from tests.agent_process import KEY, TERMINAL, agent_url, reference_headers, rpc

SUBJECT = "a2a:crash"


def agent_args(secret: str, receiver: PushReceiver, time_scale: float) -> list[str]:
    return [
        "--key",
        KEY,
        "--wait-ms",
        "10000",
        "--push-secret",
        secret,
        "--push-allow",
        f"127.0.0.1:{receiver.port}",
        "--push-time-scale",
        str(time_scale),
    ]


# -- JSON-RPC, lightly (the kit's A2AClient validates every answer, which hundreds of tasks cannot afford)


class RpcError(Exception):
    def __init__(self, method: str, error: Any):
        super().__init__(f"{method}: {json.dumps(error)[:500]}")
        self.error = error


class Rpc:
    def __init__(self, base: str, *, subject: str = SUBJECT, timeout_s: float = 30.0, connections: int = 16):
        self.url = agent_url(base)
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        self.http = httpx.Client(timeout=timeout_s, headers=reference_headers(subject), limits=limits)

    def close(self) -> None:
        self.http.close()

    def call(self, method: str, params: dict[str, Any]) -> Any:
        answer = self.http.post(self.url, content=rpc(method, params)).json()
        if "error" in answer:
            raise RpcError(method, answer["error"])
        return answer["result"]

    def send(
        self,
        text: str,
        *,
        context_id: str | None = None,
        push_url: str | None = None,
        message_id: str | None = None,
        immediately: bool = True,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "messageId": message_id or f"msg-{uuid.uuid4().hex}",
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
        if context_id:
            message["contextId"] = context_id
        configuration: dict[str, Any] = {"returnImmediately": immediately}
        if push_url:
            configuration["taskPushNotificationConfig"] = {"url": push_url}
        return self.call("SendMessage", {"message": message, "configuration": configuration})["task"]

    def get(self, task_id: str) -> dict[str, Any]:
        return self.call("GetTask", {"id": task_id})


def wait_settled(rpc: Rpc, ids: Iterable[str], timeout_s: float) -> dict[str, dict[str, Any]]:
    """GetTask every id until each has ended (or ``timeout_s`` passes); the last answer for each id.

    Polls in rounds with a growing pause between them (20 ms to 250 ms) and a hard deadline.
    """
    deadline = time.monotonic() + timeout_s
    latest: dict[str, dict[str, Any]] = {}
    waiting = list(dict.fromkeys(ids))
    pause = 0.02
    while waiting:
        still = []
        for task_id in waiting:
            try:
                latest[task_id] = rpc.get(task_id)
            except RpcError as exc:  # a lost task: TaskNotFound
                latest[task_id] = {"id": task_id, "error": exc.error}
                continue
            if latest[task_id]["status"]["state"] not in TERMINAL:
                still.append(task_id)
        waiting = still
        if not waiting or time.monotonic() >= deadline:
            break
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.25)
    return latest


# -- deliveries


def event_key(delivery: Delivery) -> tuple[str, str] | None:
    """(task id, "state:<state>" or "artifact:<id>") of a delivery's StreamResponse."""
    body = delivery.json
    if not isinstance(body, dict):
        return None
    if "statusUpdate" in body:
        update = body["statusUpdate"]
        return update.get("taskId", ""), "state:" + ((update.get("status") or {}).get("state") or "")
    if "artifactUpdate" in body:
        update = body["artifactUpdate"]
        return update.get("taskId", ""), "artifact:" + ((update.get("artifact") or {}).get("artifactId") or "")
    return None


def expected_events(task: dict[str, Any]) -> set[str]:
    """The events a task's push config must have received: a WORKING update, each artifact, its end."""
    wanted = {"state:TASK_STATE_WORKING", "state:" + task["status"]["state"]}
    return wanted | {"artifact:" + a["artifactId"] for a in task.get("artifacts") or []}


def delivered(endpoints: Iterable[Endpoint]) -> list[Delivery]:
    return [d for e in endpoints for d in list(e.deliveries)]


def wait_deliveries(
    receiver: PushReceiver, endpoints: list[Endpoint], done: Callable[[list[Delivery]], bool], timeout_s: float
) -> list[Delivery]:
    """Wait until ``done(deliveries)`` holds or ``timeout_s`` passes (woken by each delivery, checked ≤ 20×/s)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = delivered(endpoints)
        if done(found) or time.monotonic() >= deadline:
            return found
        with receiver.changed:
            receiver.changed.wait(min(0.05, max(0.0, deadline - time.monotonic())))


def ok_keys(deliveries: Iterable[Delivery]) -> dict[tuple[str, str], float]:
    """Each event delivered with a 2xx answer, and when it first was."""
    first: dict[tuple[str, str], float] = {}
    for d in deliveries:
        key = event_key(d)
        if d.answer == "ok" and key is not None and (key not in first or d.received_at < first[key]):
            first[key] = d.received_at
    return first


def all_delivered(wanted: set[tuple[str, str]]) -> Callable[[list[Delivery]], bool]:
    """``done`` for wait_deliveries: every event in ``wanted`` delivered with a 2xx answer."""
    return lambda deliveries: wanted <= ok_keys(deliveries).keys()


def duplicated(deliveries: Iterable[Delivery]) -> int:
    """Deliveries of a webhook-id beyond its first with a 2xx answer (at-least-once allows them)."""
    ok_ids = ok_webhook_ids(deliveries)
    return sum(n - 1 for n in ok_ids.values() if n > 1)


def ok_webhook_ids(deliveries: Iterable[Delivery]) -> Counter:
    """How often each webhook-id was delivered with a 2xx answer."""
    return Counter(d.webhook_id for d in deliveries if d.answer == "ok")
