"""Crash safety: SIGKILL the reference agent in the middle of a run, restart it on the same database, count losses.

At the moment of the kill the agent holds three kinds of unfinished work, all acknowledged to the client:

- tasks in flight: ``scenario slow <ms>`` sent with ``returnImmediately`` (each in its own conversation, and
  each with a push config to an endpoint that accepts every delivery);
- queued messages: messages without ``taskId`` sent to a conversation busy with such a slow task (answered at
  once as a queued task under the message's id, ``TASK_STATE_SUBMITTED``), each with a push config;
- push deliveries pending retry: ``scenario echo`` turns whose push endpoint answered every event's first
  attempt with 503 and a ``Retry-After`` (scaled by ``--push-time-scale``), so the retry is still due.

The agent is killed with SIGKILL (no shutdown code runs), then started again on the same database. Nothing
acknowledged may be lost: every task ends in a state the pages allow (the agent resumes unfinished turns
from their stored stage, so they complete; FAILED or CANCELED would also be allowed), every queued message is
taken by exactly one turn, and every event of every task reaches the receiver at least once — verified
(Standard Webhooks signature, token, StreamResponse shape) by the kit's own receiver.

Then (unless ``--no-crash-points``) it kills the agent at exact places in its code (a wrapper patches a
method to SIGKILL its own process there, as if the signal had landed between two statements), to show what
a kill in a window between two separate commits loses; and (``--random-kills N``) it kills the agent N times
at random moments of bursts of echo turns, to see whether such windows are hit in practice.

    .venv/bin/python -m benchmarks.crash [--quick]

``tests/test_crash_safety.py`` runs the same crash at a small scale and asserts that nothing is lost.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from nylorun_a2a_kit.fixtures.push_receiver import Delivery, Endpoint, PushReceiver

REPO = Path(__file__).resolve().parent.parent
KEY = "kit-key"
SUBJECT = "a2a:crash"
AGENT = "support"
LISTENING = "reference agent listening on "
TERMINAL = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED")
# What an interrupted turn may end as (the pages: it resumes and completes, or it ends failed or canceled).
ALLOWED_AFTER_CRASH = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED")
ACTIVE = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
START_TIMEOUT_S = 30.0


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


# -- the agent process


class AgentProcess:
    """One reference agent process on a free loopback port, its output appended to a log file (never a pipe)."""

    def __init__(self, db: Path, args: Iterable[str], log: Path, *, crash_point: str | None = None):
        self.db, self.args, self.log, self.crash_point = db, list(args), log, crash_point
        self.process: subprocess.Popen | None = None
        self.base = ""
        self.started_at = self.listening_at = 0.0

    def command(self) -> list[str]:
        agent = ["--host", "127.0.0.1", "--port", "0", "--db", str(self.db), *self.args]
        if self.crash_point:
            return [
                sys.executable,
                "-m",
                "benchmarks.crash",
                "--agent-with-crash-point",
                self.crash_point,
                "--",
                *agent,
            ]
        return [sys.executable, "-m", "nylorun_a2a_kit.reference_agent", *agent]

    def start(self) -> str:
        offset = self.log.stat().st_size if self.log.exists() else 0
        self.started_at = time.time()
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                self.command(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=REPO,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            with open(self.log, "rb") as log:
                log.seek(offset)
                text = log.read().decode(errors="replace")
            for line in text.splitlines():
                if line.startswith(LISTENING):
                    self.listening_at = time.time()
                    self.base = line[len(LISTENING) :].strip()
                    return self.base
            if self.process.poll() is not None:
                raise RuntimeError(f"the reference agent exited with {self.process.returncode}: {text[-2000:]!r}")
            time.sleep(0.02)  # a bounded poll of the log file for the start-up line
        self.stop()
        raise RuntimeError(f"the reference agent did not start within {START_TIMEOUT_S} s")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> float:
        """SIGKILL: no shutdown code runs. The wall-clock time of the kill."""
        assert self.process is not None
        killed_at = time.time()
        if self.alive():
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=20)
        return killed_at

    def wait_exit(self, timeout_s: float) -> int | None:
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)


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


# -- JSON-RPC, lightly (the kit's A2AClient validates every answer, which a benchmark cannot afford)


class RpcError(Exception):
    def __init__(self, method: str, error: Any):
        super().__init__(f"{method}: {json.dumps(error)[:500]}")
        self.error = error


class Rpc:
    def __init__(self, base: str, *, subject: str = SUBJECT, timeout_s: float = 30.0, connections: int = 16):
        self.url = f"{base}/v1/a2a/agents/{AGENT}"
        headers = {
            "Authorization": f"Bearer {KEY}",
            "Nylorun-Subject": subject,
            "Nylorun-Scopes": "sessions:own",
            "A2A-Version": "1.0",
            "Content-Type": "application/json",
        }
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        self.http = httpx.Client(timeout=timeout_s, headers=headers, limits=limits)

    def close(self) -> None:
        self.http.close()

    def call(self, method: str, params: dict[str, Any]) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        answer = self.http.post(self.url, content=body).json()
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


# -- the crash


@dataclass
class Plan:
    inflight: int = 3  # slow tasks, each in its own conversation
    busy: int = 2  # conversations busy with a slow task ...
    queued_per_busy: int = 2  # ... and this many messages queued behind it
    pending: int = 2  # echo tasks whose events' first attempts get 503 + Retry-After (3 events each)
    slow_ms: int = 3000
    retry_after_s: int = 2000  # Retry-After, seconds; × time_scale is the real delay
    time_scale: float = 0.001
    senders: int = 4  # concurrent SendMessage threads
    downtime: str = "none"  # "none": restart at once; "deadlines": stay down until every slow turn's deadline passed
    timeout_s: float = 30.0  # bound of each wait


@dataclass
class Outcome:
    plan: Plan
    accepted: dict[str, list[str]] = field(default_factory=dict)  # kind → ids the agent acknowledged
    at_kill: dict[str, Any] = field(default_factory=dict)  # what the database held when the agent was killed
    final: dict[str, dict[str, Any]] = field(default_factory=dict)  # id → GetTask after the restart
    taken_by: dict[str, str] = field(default_factory=dict)  # queued message id → the task that took it
    lost_tasks: list[str] = field(default_factory=list)
    unfinished_tasks: list[str] = field(default_factory=list)
    disallowed_states: dict[str, str] = field(default_factory=dict)
    lost_queued: list[str] = field(default_factory=list)
    taken_twice: dict[str, int] = field(default_factory=dict)  # busy context → tasks beyond 1 + queued
    pending_at_kill: list[str] = field(default_factory=list)  # webhook-ids answered 503 and not yet delivered
    lost_pending: list[str] = field(default_factory=list)
    lost_events: list[tuple[str, str]] = field(default_factory=list)
    duplicates: int = 0  # webhook-ids delivered with a 2xx more than once (at-least-once allows it)
    bad_deliveries: list[str] = field(default_factory=list)  # deliveries the receiver's verification rejected
    strays: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    final_states: Counter = field(default_factory=Counter)
    resumed_working_events: int = 0  # tasks whose WORKING update was pushed again after the restart

    @property
    def lost(self) -> int:
        return (
            len(self.lost_tasks)
            + len(self.unfinished_tasks)
            + len(self.lost_queued)
            + len(self.lost_pending)
            + len(self.lost_events)
        )

    def problems(self) -> list[str]:
        """Everything that breaks crash safety, one line each (empty when nothing was lost)."""
        out = [f"task {t} accepted before the crash is unknown after it" for t in self.lost_tasks]
        out += [f"task {t} did not end after the restart: {self.final[t]['status']}" for t in self.unfinished_tasks]
        out += [f"task {t} ended {s}, which an interrupted turn may not" for t, s in self.disallowed_states.items()]
        out += [f"queued message {m} was not taken by a turn that ended" for m in self.lost_queued]
        out += [f"context {c} ran {n} turn(s) more than it was sent" for c, n in self.taken_twice.items()]
        out += [f"delivery {w}, pending retry at the crash, never arrived" for w in self.lost_pending]
        out += [f"task {t}: event {k} never delivered" for t, k in self.lost_events]
        out += [f"delivery rejected by the receiver: {p}" for p in self.bad_deliveries]
        return out


def run_crash(plan: Plan, workdir: Path, receiver: PushReceiver | None = None) -> Outcome:
    """Start the agent, load it with unfinished work, SIGKILL it, restart it on the same DB, account for it all."""
    own_receiver = receiver is None
    secret = new_secret() if own_receiver else receiver.secret
    assert secret
    receiver = receiver or PushReceiver(secret=secret)
    try:
        return _run_crash(plan, workdir, receiver, secret)
    finally:
        if own_receiver:
            receiver.close()


def _run_crash(plan: Plan, workdir: Path, receiver: PushReceiver, secret: str) -> Outcome:
    out = Outcome(plan)
    ok = receiver.endpoint()
    flaky = receiver.endpoint([f"503:{plan.retry_after_s}"])
    db, log = workdir / "agent.sqlite3", workdir / "agent.log"
    args = agent_args(secret, receiver, plan.time_scale)
    first = AgentProcess(db, args, log)
    second = AgentProcess(db, args, log)
    try:
        rpc = Rpc(first.start(), connections=plan.senders)
        started = time.time()
        _load(rpc, plan, out, ok.url, flaky.url)
        out.timings["load_s"] = time.time() - started
        rpc.close()
        # Every event of the pending turns has had its first attempt (503): their retries are now due later.
        wanted = 3 * plan.pending
        wait_deliveries(receiver, [flaky], lambda ds: len({d.webhook_id for d in ds}) >= wanted, plan.timeout_s)
        killed_at = first.kill()
        out.timings["killed_after_s"] = killed_at - started
        seen_before = {e.path: len(e.deliveries) for e in (ok, flaky)}
        before = delivered([flaky])
        out.pending_at_kill = sorted(
            {d.webhook_id for d in before if d.answer != "ok"} - {d.webhook_id for d in before if d.answer == "ok"}
        )
        out.at_kill = snapshot(db)
        if plan.downtime == "deadlines":
            resume_at = max(out.at_kill["latest_deadline"], out.at_kill["latest_retry"])
            time.sleep(min(plan.timeout_s, max(0.0, resume_at - time.time()) + 0.05))  # deliberate downtime
        restarted_at = time.time()
        out.timings["down_s"] = restarted_at - killed_at
        rpc = Rpc(second.start(), connections=plan.senders)
        out.timings["listening_s"] = second.listening_at - restarted_at
        _account(rpc, plan, out, receiver, [ok, flaky], restarted_at, seen_before)
        rpc.close()
        return out
    finally:
        first.stop()
        second.stop()


def _load(rpc: Rpc, plan: Plan, out: Outcome, ok_url: str, flaky_url: str) -> None:
    slow = f"scenario slow {plan.slow_ms}"

    def inflight(_: int) -> tuple[str, str]:
        return "inflight", rpc.send(slow, push_url=ok_url)["id"]

    def busy(_: int) -> list[tuple[str, str]]:
        task = rpc.send(slow, push_url=ok_url)
        made = [("busy", task["id"]), ("context:" + task["contextId"], task["id"])]
        for _ in range(plan.queued_per_busy):
            message_id = f"msg-{uuid.uuid4().hex}"
            queued = rpc.send("scenario echo", context_id=task["contextId"], push_url=ok_url, message_id=message_id)
            if queued["id"] != message_id or queued["status"]["state"] != "TASK_STATE_SUBMITTED":
                raise AssertionError(f"the message to a busy context was not queued: {queued}")
            made.append(("queued", message_id))
        return made

    def pending(_: int) -> tuple[str, str]:
        return "pending", rpc.send("scenario echo", push_url=flaky_url)["id"]

    with ThreadPoolExecutor(max_workers=plan.senders) as pool:
        jobs = [pool.submit(busy, i) for i in range(plan.busy)]
        jobs += [pool.submit(inflight, i) for i in range(plan.inflight)]
        jobs += [pool.submit(pending, i) for i in range(plan.pending)]
        for job in jobs:
            result = job.result(timeout=plan.timeout_s * 4)
            for kind, task_id in result if isinstance(result, list) else [result]:
                out.accepted.setdefault(kind, [])
                if task_id not in out.accepted[kind]:
                    out.accepted[kind].append(task_id)


def snapshot(db: Path) -> dict[str, Any]:
    """What the (killed) agent's database holds: task states, waiting messages, the push outbox."""
    with contextlib.closing(sqlite3.connect(db, timeout=10)) as con:
        states = dict(con.execute("SELECT state, COUNT(*) FROM tasks GROUP BY state").fetchall())
        waiting = con.execute("SELECT COUNT(*) FROM queued WHERE taken_by IS NULL").fetchone()[0]
        outbox = dict(con.execute("SELECT state, COUNT(*) FROM push_outbox GROUP BY state").fetchall())
        retrying = con.execute("SELECT COUNT(*) FROM push_outbox WHERE state='pending' AND attempts>0").fetchone()[0]
        latest_retry = con.execute("SELECT MAX(next_at) FROM push_outbox WHERE state='pending'").fetchone()[0]
        deadlines = [
            json.loads(s).get("deadline") or 0
            for (s,) in con.execute("SELECT scenario FROM tasks WHERE state IN (?, ?)", ACTIVE)
        ]
    return {
        "tasks": states,
        "active_tasks": sum(states.get(s, 0) for s in ACTIVE),
        "queued_waiting": waiting,
        "outbox": outbox,
        "pending_retry": retrying,
        "latest_retry": latest_retry or 0.0,
        "latest_deadline": max(deadlines, default=0.0),
    }


def _account(
    rpc: Rpc,
    plan: Plan,
    out: Outcome,
    receiver: PushReceiver,
    endpoints: list[Endpoint],
    restarted_at: float,
    seen_before: dict[str, int],
) -> None:
    tasks = [t for kind in ("inflight", "busy", "pending") for t in out.accepted.get(kind, [])]
    queued = out.accepted.get("queued", [])
    out.final = wait_settled(rpc, [*tasks, *queued], plan.timeout_s)
    for task_id in [*tasks, *queued]:
        task = out.final[task_id]
        if "error" in task:
            (out.lost_queued if task_id in queued else out.lost_tasks).append(task_id)
            continue
        state = task["status"]["state"]
        out.final_states[state] += 1
        if task_id in queued:
            if task["id"] == task_id or state not in TERMINAL:
                out.lost_queued.append(task_id)
                continue
            out.taken_by[task_id] = task["id"]
        elif state not in TERMINAL:
            out.unfinished_tasks.append(task_id)
        if state in TERMINAL and state not in ALLOWED_AFTER_CRASH:
            out.disallowed_states[task_id] = state
    # A queued message is taken once: a busy context holds its slow task and one task per queued message.
    contexts = Counter(kind.split(":", 1)[1] for kind in out.accepted if kind.startswith("context:"))
    for context_id in contexts:
        listed = rpc.call("ListTasks", {"contextId": context_id, "pageSize": 100})
        extra = listed["totalSize"] - (1 + plan.queued_per_busy)
        if extra:
            out.taken_twice[context_id] = extra
    # Every event of every task ended up delivered (2xx) at least once.
    finals = {t["id"]: t for t in out.final.values() if "error" not in t}
    wanted = {(task_id, key) for task_id, task in finals.items() for key in expected_events(task)}

    def all_there(deliveries: list[Delivery]) -> bool:
        got = ok_keys(deliveries)
        ok_ids = {d.webhook_id for d in deliveries if d.answer == "ok"}
        return wanted <= got.keys() and set(out.pending_at_kill) <= ok_ids

    found = wait_deliveries(receiver, endpoints, all_there, plan.timeout_s)
    got = ok_keys(found)
    ok_ids = Counter(d.webhook_id for d in found if d.answer == "ok")
    out.lost_events = sorted(wanted - got.keys())
    out.lost_pending = [w for w in out.pending_at_kill if w not in ok_ids]
    out.duplicates = sum(n - 1 for n in ok_ids.values() if n > 1)
    out.bad_deliveries = [f"{d.webhook_id}: {p}" for d in found for p in d.problems]
    out.strays = len(receiver.strays)
    # A resumed turn starts again from its stored stage and says WORKING again: a new event, pushed anew.
    interrupted = {*out.accepted.get("inflight", []), *out.accepted.get("busy", [])}
    before_ids = {d.webhook_id for e in endpoints for d in e.deliveries[: seen_before[e.path]]}
    after = [d for e in endpoints for d in e.deliveries[seen_before[e.path] :] if d.webhook_id not in before_ids]
    out.resumed_working_events = len(
        {k[0] for d in after if (k := event_key(d)) and k == (k[0], "state:TASK_STATE_WORKING") and k[0] in interrupted}
    )
    # Recovery: when the last interrupted turn ended (its terminal status timestamp) and the last event arrived.
    ended = [_epoch(t["status"]["timestamp"]) for t in finals.values() if t["status"]["state"] in TERMINAL]
    out.timings["tasks_done_s"] = max(ended, default=restarted_at) - restarted_at
    needed = [got[k] for k in wanted if k in got and got[k] >= restarted_at]
    out.timings["deliveries_done_s"] = max(needed, default=restarted_at) - restarted_at
    pending_ids = set(out.pending_at_kill)
    pending_ok = [d.received_at for d in found if d.answer == "ok" and d.webhook_id in pending_ids]
    out.timings["pending_delivered_s"] = max(pending_ok, default=restarted_at) - restarted_at


def _epoch(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


# -- crash points: the agent kills itself at an exact place in its code


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


@dataclass
class PointResult:
    name: str
    window: str
    acknowledged: str
    after_restart: str
    lost: bool


def run_crash_point(name: str, workdir: Path, timeout_s: float = 20.0) -> PointResult:
    """One exact crash point: the client's view, what the restarted agent holds, what never arrives."""
    secret = new_secret()
    receiver = PushReceiver(secret=secret)
    endpoint = receiver.endpoint()
    db, log = workdir / f"{name}.sqlite3", workdir / f"{name}.log"
    args = agent_args(secret, receiver, 0.001)
    patched = AgentProcess(db, args, log, crash_point=name)
    plain = AgentProcess(db, args, log)
    try:
        rpc = Rpc(patched.start())
        if name == "status-saved-before-push":
            window = "Engine.set_status: after store.save() of the status, before announce() queues its push event"
            task = rpc.send("scenario slow 300", push_url=endpoint.url)
            acknowledged = f"task {task['id']} accepted (returnImmediately) with a push config"
            task_id, message_id = task["id"], None
        elif name == "queued-taken-before-config":
            window = "Engine._take_next: after _start_turn() stores the turn, before its push config is moved/created"
            busy = rpc.send("scenario slow 300", push_url=endpoint.url)
            message_id = f"msg-{uuid.uuid4().hex}"
            rpc.send("scenario echo", context_id=busy["contextId"], push_url=endpoint.url, message_id=message_id)
            acknowledged = f"message {message_id} queued behind {busy['id']}, with a push config"
            task_id = message_id
        else:
            window = "Engine.send: after _new_turn() stores the task, before the inline push config is created"
            message_id = f"msg-{uuid.uuid4().hex}"
            try:
                rpc.send("scenario slow 300", push_url=endpoint.url, message_id=message_id)
                acknowledged = "answered (the crash point was not reached)"
            except (httpx.HTTPError, ValueError):
                acknowledged = "no answer (the agent died); the client retries the same messageId after the restart"
            task_id = message_id
        rpc.close()
        code = patched.wait_exit(timeout_s)
        if code is None:
            return PointResult(name, window, acknowledged, "the crash point was never reached", False)
        rpc = Rpc(plain.start())
        if name == "send-accepted-before-config":
            retried = rpc.send("scenario slow 300", push_url=endpoint.url, message_id=message_id)
            task_id = retried["id"]
            acknowledged += f"; the retry answers task {task_id}"
        final = wait_settled(rpc, [task_id], timeout_s)[task_id]
        configs = rpc.call("ListTaskPushNotificationConfigs", {"taskId": final["id"]}).get("configs", [])
        wanted = {(final["id"], k) for k in expected_events(final)}
        found = wait_deliveries(
            receiver, [endpoint], lambda ds: wanted <= ok_keys(ds).keys(), 3.0
        )  # bounded: well past the scaled retry schedule's first steps
        missing = sorted(k for _, k in wanted - ok_keys(found).keys())
        rpc.close()
        after = f"task {final['id']} {final['status']['state']}; {len(configs)} push config(s); " + (
            f"never delivered: {', '.join(missing)}" if missing else "every event delivered"
        )
        return PointResult(name, window, acknowledged, after, bool(missing))
    finally:
        patched.stop()
        plain.stop()
        receiver.close()


CRASH_POINTS = ("status-saved-before-push", "queued-taken-before-config", "send-accepted-before-config")


@dataclass
class KillsResult:
    kills: int
    acknowledged: int
    lost_tasks: list[str]
    lost_events: list[tuple[str, str]]
    extra_artifacts: dict[str, int]  # task → artifacts beyond the one an echo turn makes (a replayed step)
    duplicates: int
    seconds: float


def run_random_kills(kills: int, workdir: Path, *, senders: int = 4, timeout_s: float = 60.0) -> KillsResult:
    """Kill the agent ``kills`` times at a random moment of a burst of echo turns with push configs.

    Each cycle starts the agent on the same database, keeps ``senders`` threads sending ``scenario echo``
    (returnImmediately, a push config each) and SIGKILLs it 0.2-0.8 s in; a request the kill cut off is not
    acknowledged and not counted. At the end every acknowledged task must have ended with every event delivered.
    """
    started = time.time()
    secret = new_secret()
    receiver = PushReceiver(secret=secret)
    endpoint = receiver.endpoint()
    db, log = workdir / "kills.sqlite3", workdir / "kills.log"
    args = agent_args(secret, receiver, 0.001)
    acknowledged: list[str] = []
    lock = threading.Lock()
    rng = secrets.SystemRandom()
    try:
        for _ in range(kills):
            agent = AgentProcess(db, args, log)
            rpc = Rpc(agent.start(), connections=senders, timeout_s=5.0)
            stop = threading.Event()

            def sender(rpc: Rpc = rpc, stop: threading.Event = stop) -> None:
                for _ in range(10_000):  # bounded; the kill ends it far sooner
                    if stop.is_set():
                        return
                    try:
                        task = rpc.send("scenario echo", push_url=endpoint.url)
                    except (httpx.HTTPError, ValueError, RpcError):
                        return  # the kill cut this request off: not acknowledged
                    with lock:
                        acknowledged.append(task["id"])

            threads = [threading.Thread(target=sender, daemon=True) for _ in range(senders)]
            for thread in threads:
                thread.start()
            stop.wait(rng.uniform(0.2, 0.8))  # the random moment of the kill
            agent.kill()
            stop.set()
            for thread in threads:
                thread.join(timeout=10)
            rpc.close()
            agent.stop()
        agent = AgentProcess(db, args, log)
        try:
            rpc = Rpc(agent.start())
            final = wait_settled(rpc, acknowledged, timeout_s)
            rpc.close()
            lost_tasks = [t for t, task in final.items() if "error" in task or task["status"]["state"] not in TERMINAL]
            finals = [task for task in final.values() if "error" not in task]
            wanted = {(task["id"], key) for task in finals for key in expected_events(task)}
            found = wait_deliveries(receiver, [endpoint], lambda ds: wanted <= ok_keys(ds).keys(), timeout_s / 4)
        finally:
            agent.stop()
        got = ok_keys(found)
        ok_ids = Counter(d.webhook_id for d in found if d.answer == "ok")
        extra = {t["id"]: len(t.get("artifacts") or []) - 1 for t in finals if len(t.get("artifacts") or []) > 1}
        return KillsResult(
            kills=kills,
            acknowledged=len(acknowledged),
            lost_tasks=lost_tasks,
            lost_events=sorted(wanted - got.keys()),
            extra_artifacts=extra,
            duplicates=sum(n - 1 for n in ok_ids.values() if n > 1),
            seconds=time.time() - started,
        )
    finally:
        receiver.close()


# -- the benchmark


def _report(out: Outcome) -> list[str]:
    plan, t = out.plan, out.timings
    accepted = {k: len(v) for k, v in out.accepted.items() if not k.startswith("context:")}
    lines = [
        f"accepted before the kill: {accepted.get('inflight', 0) + accepted.get('busy', 0)} slow tasks in flight "
        f"({plan.slow_ms} ms), {accepted.get('queued', 0)} queued messages, {accepted.get('pending', 0)} echo tasks "
        f"with deliveries pending retry; load took {t['load_s']:.2f} s, kill at {t['killed_after_s']:.2f} s",
        f"at the kill the DB held: tasks {out.at_kill['tasks']}, {out.at_kill['queued_waiting']} queued messages "
        f"waiting, outbox {out.at_kill['outbox']} ({out.at_kill['pending_retry']} pending retry); receiver: "
        f"{len(out.pending_at_kill)} deliveries answered 503 and not yet delivered",
        f"down {t['down_s']:.2f} s; restart → listening {t['listening_s']:.2f} s; → every task ended "
        f"{t['tasks_done_s']:.2f} s; → every pending delivery delivered {t['pending_delivered_s']:.2f} s; → every "
        f"event delivered {t['deliveries_done_s']:.2f} s",
        f"final states: {dict(out.final_states)}; WORKING pushed again after the restart for "
        f"{out.resumed_working_events} resumed task(s)",
        f"LOST: tasks {len(out.lost_tasks)}, unfinished {len(out.unfinished_tasks)}, queued {len(out.lost_queued)}, "
        f"pending deliveries {len(out.lost_pending)}, other events {len(out.lost_events)}; queued taken twice "
        f"{sum(out.taken_twice.values())}; states not allowed {len(out.disallowed_states)}",
        f"DUPLICATED deliveries (same webhook-id delivered twice, allowed by at-least-once): {out.duplicates}; "
        f"deliveries failing verification: {len(out.bad_deliveries)}; strays: {out.strays}",
    ]
    lines += [f"  problem: {p}" for p in out.problems()[:20]]
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--agent-with-crash-point"]:
        return agent_with_crash_point(argv[1:])
    p = argparse.ArgumentParser(prog="python -m benchmarks.crash", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a small run (seconds)")
    p.add_argument("--inflight", type=int, help="slow tasks in their own conversations (default 400; quick 20)")
    p.add_argument("--busy", type=int, help="busy conversations (default 100; quick 5)")
    p.add_argument("--queued", type=int, help="queued messages per busy conversation (default 2)")
    p.add_argument("--pending", type=int, help="echo tasks with 3 deliveries pending retry each (default 67; quick 5)")
    p.add_argument("--slow-ms", type=int, help="the in-flight turns' duration (default 15000; quick 4000)")
    p.add_argument("--downtime", choices=("none", "deadlines"), default="deadlines")
    p.add_argument("--no-crash-points", action="store_true", help="skip the exact crash points")
    p.add_argument("--random-kills", type=int, help="kills at random moments of echo bursts (default 20; quick 4)")
    args = p.parse_args(argv)
    quick = args.quick
    plan = Plan(
        inflight=args.inflight if args.inflight is not None else (20 if quick else 400),
        busy=args.busy if args.busy is not None else (5 if quick else 100),
        queued_per_busy=args.queued if args.queued is not None else 2,
        pending=args.pending if args.pending is not None else (5 if quick else 67),
        slow_ms=args.slow_ms or (4000 if quick else 15000),
        retry_after_s=3000,
        senders=8,
        downtime=args.downtime,
        timeout_s=120.0,
    )
    from benchmarks import common  # only the command line needs the shared formatting helpers

    print(f"machine: {common.machine_line()}")
    print(f"reproduce: {common.reproduce('benchmarks.crash', argv)}")
    with tempfile.TemporaryDirectory(prefix="crash-bench-") as tmp:
        print(
            f"\n== SIGKILL mid-run, restart on the same DB ({plan.inflight}+{plan.busy} in flight, "
            f"{plan.busy * plan.queued_per_busy} queued, {plan.pending * 3} deliveries pending retry)"
        )
        out = run_crash(plan, Path(tmp))
        for line in _report(out):
            print(line)
        failed = out.lost > 0
        if not args.no_crash_points:
            print("\n== exact crash points (the agent SIGKILLs itself between two writes of one transaction)")
            for name in CRASH_POINTS:
                result = run_crash_point(name, Path(tmp))
                print(f"{name}: {'LOST' if result.lost else 'nothing lost'}")
                print(f"  window: {result.window}")
                print(f"  client: {result.acknowledged}")
                print(f"  after restart: {result.after_restart}")
        kills = args.random_kills if args.random_kills is not None else (4 if quick else 20)
        if kills:
            print(f"\n== {kills} SIGKILLs at random moments of bursts of echo turns with push configs (same DB)")
            result = run_random_kills(kills, Path(tmp))
            print(
                f"{result.acknowledged} tasks acknowledged over {result.kills} kills ({result.seconds:.1f} s); LOST: "
                f"tasks {len(result.lost_tasks)}, events {len(result.lost_events)}; tasks with a replayed artifact "
                f"{len(result.extra_artifacts)}; duplicated deliveries {result.duplicates}"
            )
            for task_id, event in result.lost_events[:10]:
                print(f"  never delivered: {task_id} {event}")
            for task_id, extra in list(result.extra_artifacts.items())[:10]:
                print(f"  {task_id}: {extra} artifact(s) more than its one echo")
            failed |= bool(result.lost_tasks or result.lost_events)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
