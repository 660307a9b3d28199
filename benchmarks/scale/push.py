"""Push deliveries per second into the kit's receiver, and what each verification step costs per delivery."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import time
from datetime import UTC, datetime
from typing import Any

from benchmarks import common
from benchmarks.scale.queries import AGENT, SUBJECT
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.push import verify as push_verify
from nylorun_a2a_kit.reference_agent import status
from nylorun_a2a_kit.reference_agent.store import TaskRecord, format_timestamp


def working_event(task_id: str, context_id: str, seq: int, message: dict[str, Any]) -> bytes:
    """The StreamResponse body the agent pushes when a task starts WORKING with status ``message``."""
    task = TaskRecord(
        id=task_id,
        agent_id=AGENT,
        subject=SUBJECT,
        context_id=context_id,
        turn=1,
        state="TASK_STATE_WORKING",
        status_message=message,
        status_ts=format_timestamp(datetime.now(UTC)),
        seq=seq,
    )
    return json.dumps(status.update_event(task), separators=(",", ":")).encode()


def signed(webhook: Any, webhook_id: str, body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers of ``body``, signed now."""
    now = datetime.now(UTC)
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": webhook.sign(webhook_id, now, body.decode()),
    }


# -- the sender, in its own process


def _sender(url: str, secret: str, count: int, concurrency: int, results) -> None:
    """In its own process: sign ``count`` StreamResponse bodies, then POST them with ``concurrency`` at a time."""
    results.put(asyncio.run(_post_all(url, _signed_bodies(secret, count), concurrency)))


def _signed_bodies(secret: str, count: int) -> list[tuple[bytes, dict[str, str]]]:
    from standardwebhooks.webhooks import Webhook

    webhook = Webhook(secret)
    bodies = []
    for i in range(count):
        task_id, context_id = f"t-push-{i:07d}", f"ctx-{i % 10}"
        message = {
            "messageId": f"{task_id}-status-{i}",
            "role": "ROLE_AGENT",
            "parts": [{"text": "Working on it."}],
            "contextId": context_id,
            "taskId": task_id,
        }
        body = working_event(task_id, context_id, i + 1, message)
        bodies.append((body, {"Content-Type": "application/json", **signed(webhook, f"msg_{i:024x}", body)}))
    return bodies


async def _post_all(url: str, bodies: list[tuple[bytes, dict[str, str]]], concurrency: int) -> dict[str, Any]:
    import aiohttp

    statuses: dict[int, int] = {}
    errors = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        position = iter(range(len(bodies)))

        async def worker() -> None:
            nonlocal errors
            for i in position:
                body, headers = bodies[i]
                try:
                    async with session.post(url, data=body, headers=headers) as response:
                        await response.read()
                        statuses[response.status] = statuses.get(response.status, 0) + 1
                except (aiohttp.ClientError, TimeoutError):
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return {"seconds": time.perf_counter() - started, "statuses": statuses, "errors": errors}


# -- the receiver's side


def push_rate(count: int, concurrency: int, *, verify: bool = True) -> dict[str, Any]:
    """Deliveries into the kit's receiver; ``verify=False`` is the control: the same receiver with verification
    switched off (``push_verify.problems`` answering [] at once), which shows the transport's own ceiling."""
    secret = common.new_secret()
    receiver = PushReceiver(secret=secret)
    original = push_verify.problems
    if not verify:
        push_verify.problems = lambda *args, **kwargs: []
    try:
        endpoint = receiver.endpoint()
        sent = _send_from_a_process(endpoint.url, secret, count, concurrency)
        deliveries = endpoint.wait_for(lambda ds: len(ds) >= count, 30)
        verified = [d for d in deliveries if not d.problems]
        span = max(d.received_at for d in deliveries) - min(d.received_at for d in deliveries)
        return {
            "count": count,
            "concurrency": concurrency,
            "received": len(deliveries),
            "verified": len(verified),
            "rejected": len(deliveries) - len(verified),
            "first_problem": next((d.problems[0] for d in deliveries if d.problems), ""),
            "span_s": span,
            "rate": len(verified) / span if span else float("nan"),
            "sender_s": sent["seconds"],
            "statuses": sent["statuses"],
            "errors": sent["errors"],
        }
    finally:
        push_verify.problems = original
        receiver.close()


def _send_from_a_process(url: str, secret: str, count: int, concurrency: int) -> dict[str, Any]:
    """Run the sender in a spawned process; what it reports (its wall time, the statuses it got, errors)."""
    spawn = multiprocessing.get_context("spawn")
    results = spawn.Queue()
    sender = spawn.Process(target=_sender, args=(url, secret, count, concurrency, results), daemon=True)
    sender.start()
    try:
        return results.get(timeout=300)
    finally:
        sender.join(timeout=30)
        if sender.is_alive():
            sender.kill()


def verification_costs(samples: int = 2000) -> dict[str, float]:
    """Seconds per delivery of each step the receiver runs on one delivery, in-process."""
    from standardwebhooks.webhooks import Webhook

    from nylorun_a2a_kit import schemas

    secret = common.new_secret()
    message = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "Working on it."}]}
    body = working_event("t-cost", "ctx-0", 1, message)
    headers = signed(Webhook(secret), "msg_cost", body)
    data = push_verify.body_json(body)
    steps = {
        "signature (standardwebhooks + header checks)": lambda: push_verify.signature_problems(body, headers, secret),
        "StreamResponse schema (jsonschema)": lambda: schemas.violations(data, "a2a/StreamResponse.json"),
        "strict JSON parse": lambda: push_verify.body_json(body),
        "all of push_verify.problems()": lambda: push_verify.problems(
            body, headers, secret=secret, token_header="X-A2A-Notification-Token", token=None, authorization=None
        ),
    }
    out = {}
    for name, step in steps.items():
        if "parse" not in name and step():
            raise RuntimeError(f"{name} rejects a valid delivery: {step()}")
        started = time.perf_counter()
        for _ in range(samples):
            step()
        out[name] = (time.perf_counter() - started) / samples
    return out
