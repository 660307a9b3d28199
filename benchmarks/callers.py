"""Other callers of the same Runtime: clients that work the reference agent while the gate runs (``beside_load``).

Each client is one subject with its own keep-alive connection, and draws its requests from a seeded mix:

- ``send-blocking``: SendMessage of the echo scenario on the client's own context, blocking;
- ``send-immediate``: SendMessage of the echo scenario on a new context, ``returnImmediately``;
- ``send-slow``: SendMessage of ``scenario slow 200`` on a new context, ``returnImmediately`` (to cancel);
- ``send-retry``: an accepted SendMessage sent again byte for byte: must answer the same task;
- ``get``: GetTask of one of the client's tasks; ``list``: ListTasks of its context (pageSize 50);
- ``cancel``: CancelTask of a slow task (CANCELED, or -32002 once it ended) or of an ended one (-32002);
- ``invalid``: an unknown method (-32601), an unknown task (-32001), params without a message (-32602), a body
  that is not JSON (-32700), pageSize 0 (-32602), or A2A-Version 0.3 (-32009).

Every answer is checked against what its request must get; one it did not expect is counted with an example.
"""

from __future__ import annotations

import collections
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from benchmarks import common

MIX = {
    "send-blocking": 22,
    "send-immediate": 14,
    "send-slow": 3,
    "send-retry": 5,
    "get": 20,
    "list": 12,
    "cancel": 8,
    "invalid": 16,
}
INVALID = ("unknown-method", "unknown-task", "no-message", "not-json", "page-size-0", "version-0.3")
TERMINAL = common.TERMINAL
CODES = {
    "unknown-method": -32601,
    "unknown-task": -32001,
    "no-message": -32602,
    "not-json": -32700,
    "page-size-0": -32602,
    "version-0.3": -32009,
}
REQUEST_TIMEOUT_S = 60.0


@dataclass
class Kind:
    latencies: list[float] = field(default_factory=list)
    unexpected: int = 0
    examples: list[str] = field(default_factory=list)

    def bad(self, why: str) -> None:
        self.unexpected += 1
        if len(self.examples) < 3:
            self.examples.append(why[:400])


@dataclass
class Tally:
    kinds: dict[str, Kind] = field(default_factory=lambda: collections.defaultdict(Kind))
    transport_errors: int = 0
    transport_examples: list[str] = field(default_factory=list)


@dataclass
class Client:
    n: int
    rng: random.Random
    subject: str
    context_id: str = ""
    accepted: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # messageId → (body, first task id)
    answered: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))  # messageId → ids
    tasks: list[str] = field(default_factory=list)
    pending_slow: list[str] = field(default_factory=list)
    slow: set[str] = field(default_factory=set)
    sequence: int = 0

    @property
    def headers(self) -> dict[str, str]:
        return common.reference_headers(self.subject)

    def message_id(self) -> str:
        self.sequence += 1
        return f"load-{self.n}-{self.sequence}-{uuid.uuid4().hex[:8]}"


@dataclass
class Request:
    """One drawn request: its ``kind`` in the mix, the ``label`` it is counted under, and what it must get."""

    kind: str
    label: str
    body: bytes
    headers: dict[str, str]
    expect_code: int | None = None  # a JSON-RPC error it must get; None: a result
    message_id: str = ""
    task_id: str = ""


async def post(
    http: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str], tally: Tally
) -> tuple[int, Any, float]:
    t0 = time.perf_counter()
    try:
        async with http.post(url, data=body, headers=headers) as response:
            data = await response.read()
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        tally.transport_errors += 1
        if len(tally.transport_examples) < 5:
            tally.transport_examples.append(repr(exc))
        return 0, None, time.perf_counter() - t0
    elapsed = time.perf_counter() - t0
    try:
        answer = json.loads(data)
    except ValueError:
        answer = {"unparsable": data[:300].decode(errors="replace")}
    return status, answer, elapsed


def error_code(answer: Any) -> Any:
    return (answer.get("error") or {}).get("code") if isinstance(answer, dict) else None


# -- drawing a request


def draw(client: Client) -> Request:
    kind = client.rng.choices(list(MIX), weights=list(MIX.values()))[0]
    if kind == "send-retry" and not client.accepted:
        kind = "send-blocking"
    if kind in ("send-blocking", "send-immediate", "send-slow"):
        return _send(client, kind)
    if kind == "send-retry":
        message_id = client.rng.choice(list(client.accepted))
        return Request(kind, kind, client.accepted[message_id][0], client.headers, message_id=message_id)
    if kind == "get":
        task_id = client.rng.choice(client.tasks) if client.tasks else "t-none-yet"
        body = common.rpc("GetTask", {"id": task_id}, client.sequence)
        return Request(kind, kind, body, client.headers, None if client.tasks else -32001, task_id=task_id)
    if kind == "list":
        params: dict[str, Any] = {"pageSize": 50}
        if client.context_id:
            params["contextId"] = client.context_id
        return Request(kind, kind, common.rpc("ListTasks", params, client.sequence), client.headers)
    if kind == "cancel":
        return _cancel(client)
    return _invalid(client)


def _send(client: Client, kind: str) -> Request:
    """SendMessage of the echo scenario: blocking on the client's own context, or at once on a new one."""
    message_id = client.message_id()
    if kind == "send-blocking":
        message: dict[str, Any] = common.echo_message(message_id, client.context_id or None)
        params: dict[str, Any] = {"message": message}
    else:
        message = common.echo_message(message_id)
        if kind == "send-slow":
            message["parts"] = [{"text": "scenario slow 200"}]
        params = {"message": message, "configuration": {"returnImmediately": True}}
    body = common.rpc("SendMessage", params, message_id)
    return Request(kind, kind, body, client.headers, message_id=message_id)


def _cancel(client: Client) -> Request:
    """CancelTask of a slow task (it may still run), else of an ended task (-32002), else of none (-32001)."""
    expect_code = None
    if client.pending_slow:
        task_id = client.pending_slow.pop(client.rng.randrange(len(client.pending_slow)))
    elif client.tasks:
        task_id = client.rng.choice([t for t in client.tasks if t not in client.slow] or client.tasks)
        expect_code = -32002
    else:
        task_id, expect_code = "t-none-yet", -32001
    body = common.rpc("CancelTask", {"id": task_id}, client.sequence)
    return Request("cancel", "cancel", body, client.headers, expect_code, task_id=task_id)


def _invalid(client: Client) -> Request:
    """One of the INVALID requests, with the error code it must get."""
    name = client.rng.choice(INVALID)
    headers = client.headers
    if name == "unknown-method":
        body = common.rpc("GetTasks", {"id": "x"}, client.sequence)
    elif name == "unknown-task":
        body = common.rpc("GetTask", {"id": f"t-unknown-{client.sequence}"}, client.sequence)
    elif name == "no-message":
        body = common.rpc("SendMessage", {"configuration": {}}, client.sequence)
    elif name == "not-json":
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {'
    elif name == "page-size-0":
        body = common.rpc("ListTasks", {"pageSize": 0}, client.sequence)
    else:
        body = common.rpc("GetTask", {"id": "x"}, client.sequence)
        headers = {**headers, "A2A-Version": "0.3"}
    return Request("invalid", f"invalid:{name}", body, headers, CODES[name])


# -- sending it and checking the answer


async def one_request(http: aiohttp.ClientSession, url: str, client: Client, tally: Tally) -> None:
    request = draw(client)
    status, answer, elapsed = await post(http, url, request.body, request.headers, tally)
    tally.kinds[request.label].latencies.append(elapsed)
    judge(request, status, answer, client, tally)


def judge(request: Request, status: int, answer: Any, client: Client, tally: Tally) -> None:
    """Check one answer against what its request must get."""
    kind, stats = request.kind, tally.kinds[request.label]
    if status == 0:
        stats.bad("transport error")
        return
    if status != 200 or not isinstance(answer, dict):
        stats.bad(f"HTTP {status}: {answer}")
        return
    if request.expect_code is not None:
        if error_code(answer) != request.expect_code:
            stats.bad(f"wanted error {request.expect_code}, got {json.dumps(answer)[:300]}")
        return
    if kind.startswith("send"):
        check_send(request, answer, client, stats)
    elif kind == "get":
        if (answer.get("result") or {}).get("id") != request.task_id:
            stats.bad(f"GetTask {request.task_id}: {json.dumps(answer)[:300]}")
    elif kind == "list":
        tasks = (answer.get("result") or {}).get("tasks")
        if not isinstance(tasks, list) or any(
            t.get("contextId") != client.context_id for t in tasks if client.context_id
        ):
            stats.bad(f"ListTasks: {json.dumps(answer)[:300]}")
    elif kind == "cancel":
        state = ((answer.get("result") or {}).get("status") or {}).get("state")
        if state != "TASK_STATE_CANCELED" and error_code(answer) != -32002:
            stats.bad(f"CancelTask {request.task_id}: {json.dumps(answer)[:300]}")


def check_send(request: Request, answer: dict, client: Client, stats: Kind) -> None:
    kind, message_id = request.kind, request.message_id
    task = (answer.get("result") or {}).get("task")
    if not isinstance(task, dict) or not task.get("id"):
        stats.bad(f"SendMessage {message_id}: {json.dumps(answer)[:300]}")
        return
    task_id, state = task["id"], (task.get("status") or {}).get("state")
    client.answered[message_id].add(task_id)
    if kind == "send-retry":
        first = client.accepted[message_id][1]
        if task_id != first:
            stats.bad(f"retry of {message_id} answered task {task_id}, first answer was {first}")
        return
    client.accepted[message_id] = (request.body, task_id)
    client.tasks.append(task_id)
    if kind == "send-blocking":
        if state != "TASK_STATE_COMPLETED":
            stats.bad(f"blocking echo ended {state}: {json.dumps(answer)[:300]}")
        if client.context_id and task.get("contextId") != client.context_id:
            stats.bad(f"blocking echo in context {task.get('contextId')}, sent {client.context_id}")
        client.context_id = client.context_id or task.get("contextId", "")
    elif kind == "send-slow":
        client.pending_slow.append(task_id)
        client.slow.add(task_id)
    if state not in TERMINAL | {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}:
        stats.bad(f"SendMessage answered state {state}")


def session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=1),
        timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
    )
