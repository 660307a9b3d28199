"""Exact crash points: the agent SIGKILLs itself at a place in its code, as if the signal landed between two
statements; then it is started unpatched on the same database, and what the client was told is checked."""

from __future__ import annotations

import os
import signal
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from nylorun_a2a_kit.fixtures.push import Endpoint, PushReceiver, new_secret
from tests.agent_process import TERMINAL, AgentProcess
from tests.crash import client

CRASH_POINTS = ("status-saved-before-push", "queued-taken-before-config", "send-accepted-before-config")
WINDOWS = {
    "status-saved-before-push": "Engine.set_status: after store.save() of the status, before announce() queues its "
    "push event",
    "queued-taken-before-config": "Engine._take_next: after _start_turn() stores the turn, before its push config "
    "is moved/created",
    "send-accepted-before-config": "Engine.send: after _new_turn() stores the task, before the inline push config "
    "is created",
}


# -- in the agent's process


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install_crash_point(name: str) -> None:
    """Patch the agent so that it SIGKILLs itself at ``name`` (once per process; the restart runs unpatched)."""
    from nylorun_a2a_kit.reference_agent import push
    from nylorun_a2a_kit.reference_agent.engine import Engine

    if name == "status-saved-before-push":
        # Engine.set_status saves the status change, then announce() queues its push event.
        original_announce = Engine.announce

        def announce(self, task, event):
            state = ((event.get("statusUpdate") or {}).get("status") or {}).get("state")
            if state in TERMINAL and self.push_configs.deliverable(task.id):
                _die()
            original_announce(self, task, event)

        Engine.announce = announce
    elif name == "queued-taken-before-config":
        # Engine._take_next stores the new turn (and the message as taken), then moves/creates its push config.
        def move(self, *args, **kwargs):
            _die()

        push.PushConfigs.move = move
    elif name == "send-accepted-before-config":
        # Engine.send stores the new turn, then creates the inline push config.
        def create(self, *args, **kwargs):
            _die()

        push.PushConfigs.create = create
    else:
        raise SystemExit(f"unknown crash point {name!r}")


def agent_with_crash_point(argv: list[str]) -> int:
    name, rest = argv[0], argv[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    install_crash_point(name)
    from nylorun_a2a_kit.reference_agent.__main__ import main as agent_main

    return agent_main(rest)


def launcher(name: str) -> list[str]:
    """The command that starts the agent with crash point ``name`` installed (its arguments follow)."""
    return [sys.executable, "-m", "benchmarks.crash", "--agent-with-crash-point", name, "--"]


# -- the client's side


@dataclass
class PointResult:
    name: str
    window: str
    acknowledged: str
    after_restart: str
    lost: bool


def _status_saved(rpc: client.Rpc, push_url: str) -> tuple[str, str]:
    task = rpc.send("scenario slow 300", push_url=push_url)
    return f"task {task['id']} accepted (returnImmediately) with a push config", task["id"]


def _queued_taken(rpc: client.Rpc, push_url: str) -> tuple[str, str]:
    busy = rpc.send("scenario slow 300", push_url=push_url)
    message_id = f"msg-{uuid.uuid4().hex}"
    rpc.send("scenario echo", context_id=busy["contextId"], push_url=push_url, message_id=message_id)
    return f"message {message_id} queued behind {busy['id']}, with a push config", message_id


def _send_accepted(rpc: client.Rpc, push_url: str) -> tuple[str, str]:
    message_id = f"msg-{uuid.uuid4().hex}"
    try:
        rpc.send("scenario slow 300", push_url=push_url, message_id=message_id)
        acknowledged = "answered (the crash point was not reached)"
    except (httpx.HTTPError, ValueError):
        acknowledged = "no answer (the agent died); the client retries the same messageId after the restart"
    return acknowledged, message_id


# What the client does against each patched agent: (what it was told, the task or message id to follow).
DRIVES: dict[str, Callable[[client.Rpc, str], tuple[str, str]]] = {
    "status-saved-before-push": _status_saved,
    "queued-taken-before-config": _queued_taken,
    "send-accepted-before-config": _send_accepted,
}


def run_crash_point(name: str, workdir: Path, timeout_s: float = 20.0) -> PointResult:
    """One exact crash point: the client's view, what the restarted agent holds, what never arrives."""
    secret = new_secret()
    receiver = PushReceiver(secret=secret)
    endpoint = receiver.endpoint()
    db, log = workdir / f"{name}.sqlite3", workdir / f"{name}.log"
    args = client.agent_args(secret, receiver, 0.001)
    patched = AgentProcess(db, args, log, launcher=launcher(name))
    plain = AgentProcess(db, args, log)
    try:
        rpc = client.Rpc(patched.start())
        acknowledged, task_id = DRIVES[name](rpc, endpoint.url)
        rpc.close()
        if patched.wait_exit(timeout_s) is None:
            return PointResult(name, WINDOWS[name], acknowledged, "the crash point was never reached", False)
        rpc = client.Rpc(plain.start())
        if name == "send-accepted-before-config":
            retried = rpc.send("scenario slow 300", push_url=endpoint.url, message_id=task_id)
            task_id = retried["id"]
            acknowledged += f"; the retry answers task {task_id}"
        after, lost = _after_restart(rpc, receiver, endpoint, task_id, timeout_s)
        rpc.close()
        return PointResult(name, WINDOWS[name], acknowledged, after, lost)
    finally:
        patched.stop()
        plain.stop()
        receiver.close()


def _after_restart(
    rpc: client.Rpc, receiver: PushReceiver, endpoint: Endpoint, task_id: str, timeout_s: float
) -> tuple[str, bool]:
    """What the restarted agent holds for ``task_id`` and which of its events never arrive; whether any is lost."""
    final = client.wait_settled(rpc, [task_id], timeout_s)[task_id]
    configs = rpc.call("ListTaskPushNotificationConfigs", {"taskId": final["id"]}).get("configs", [])
    wanted = {(final["id"], k) for k in client.expected_events(final)}
    found = client.wait_deliveries(
        receiver, [endpoint], client.all_delivered(wanted), 3.0
    )  # bounded: well past the scaled retry schedule's first steps
    missing = sorted(k for _, k in wanted - client.ok_keys(found).keys())
    after = f"task {final['id']} {final['status']['state']}; {len(configs)} push config(s); " + (
        f"never delivered: {', '.join(missing)}" if missing else "every event delivered"
    )
    return after, bool(missing)
