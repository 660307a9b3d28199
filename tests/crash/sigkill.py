"""The crash mid-run: load the agent with unfinished work, SIGKILL it, restart it on the same DB, account for it all."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nylorun_a2a_kit.fixtures.push import Delivery, Endpoint, PushReceiver, new_secret
from tests.agent_process import TERMINAL, AgentProcess
from tests.crash import client

# What an interrupted turn may end as (the pages: it resumes and completes, or it ends failed or canceled).
ALLOWED_AFTER_CRASH = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED")
ACTIVE = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")


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
    args = client.agent_args(secret, receiver, plan.time_scale)
    first = AgentProcess(db, args, log)
    second = AgentProcess(db, args, log)
    try:
        killed_at, seen_before = _load_and_kill(first, plan, out, receiver, ok, flaky)
        out.at_kill = snapshot(db)
        _stay_down(plan, out)
        restarted_at = time.time()
        out.timings["down_s"] = restarted_at - killed_at
        rpc = client.Rpc(second.start(), connections=plan.senders)
        out.timings["listening_s"] = second.listening_at - restarted_at
        _account(rpc, plan, out, receiver, [ok, flaky], restarted_at, seen_before)
        rpc.close()
        return out
    finally:
        first.stop()
        second.stop()


def _load_and_kill(
    agent: AgentProcess, plan: Plan, out: Outcome, receiver: PushReceiver, ok: Endpoint, flaky: Endpoint
) -> tuple[float, dict[str, int]]:
    """Start the agent, give it its unfinished work, SIGKILL it; when, and how many deliveries each endpoint had."""
    rpc = client.Rpc(agent.start(), connections=plan.senders)
    started = time.time()
    _load(rpc, plan, out, ok.url, flaky.url)
    out.timings["load_s"] = time.time() - started
    rpc.close()
    # Every event of the pending turns has had its first attempt (503): their retries are now due later.
    wanted = 3 * plan.pending
    client.wait_deliveries(receiver, [flaky], lambda ds: len({d.webhook_id for d in ds}) >= wanted, plan.timeout_s)
    killed_at = agent.kill()
    out.timings["killed_after_s"] = killed_at - started
    seen_before = {e.path: len(e.deliveries) for e in (ok, flaky)}
    before = client.delivered([flaky])
    out.pending_at_kill = sorted(
        {d.webhook_id for d in before if d.answer != "ok"} - {d.webhook_id for d in before if d.answer == "ok"}
    )
    return killed_at, seen_before


def _stay_down(plan: Plan, out: Outcome) -> None:
    """With downtime "deadlines": stay down until every slow turn's deadline and every retry are past."""
    if plan.downtime == "deadlines":
        resume_at = max(out.at_kill["latest_deadline"], out.at_kill["latest_retry"])
        time.sleep(min(plan.timeout_s, max(0.0, resume_at - time.time()) + 0.05))  # deliberate downtime


def _load(rpc: client.Rpc, plan: Plan, out: Outcome, ok_url: str, flaky_url: str) -> None:
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


# -- the accounting after the restart


def _account(
    rpc: client.Rpc,
    plan: Plan,
    out: Outcome,
    receiver: PushReceiver,
    endpoints: list[Endpoint],
    restarted_at: float,
    seen_before: dict[str, int],
) -> None:
    _settle(rpc, plan, out)
    _count_turns(rpc, plan, out)
    finals = {t["id"]: t for t in out.final.values() if "error" not in t}
    wanted = {(task_id, key) for task_id, task in finals.items() for key in client.expected_events(task)}
    found = _check_deliveries(receiver, endpoints, plan, out, wanted)
    out.resumed_working_events = _resumed_working(out, endpoints, seen_before)
    _recovery_timings(out, finals, wanted, found, restarted_at)


def _settle(rpc: client.Rpc, plan: Plan, out: Outcome) -> None:
    """Every accepted task and queued message, once ended: lost, unfinished, or ended in a state not allowed."""
    tasks = [t for kind in ("inflight", "busy", "pending") for t in out.accepted.get(kind, [])]
    queued = out.accepted.get("queued", [])
    out.final = client.wait_settled(rpc, [*tasks, *queued], plan.timeout_s)
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


def _count_turns(rpc: client.Rpc, plan: Plan, out: Outcome) -> None:
    """A queued message is taken once: a busy context holds its slow task and one task per queued message."""
    contexts = Counter(kind.split(":", 1)[1] for kind in out.accepted if kind.startswith("context:"))
    for context_id in contexts:
        listed = rpc.call("ListTasks", {"contextId": context_id, "pageSize": 100})
        extra = listed["totalSize"] - (1 + plan.queued_per_busy)
        if extra:
            out.taken_twice[context_id] = extra


def _check_deliveries(
    receiver: PushReceiver, endpoints: list[Endpoint], plan: Plan, out: Outcome, wanted: set[tuple[str, str]]
) -> list[Delivery]:
    """Every event of every task ended up delivered (2xx) at least once, the pending ones too."""
    every_event = client.all_delivered(wanted)

    def all_there(deliveries: list[Delivery]) -> bool:
        ok_ids = {d.webhook_id for d in deliveries if d.answer == "ok"}
        return every_event(deliveries) and set(out.pending_at_kill) <= ok_ids

    found = client.wait_deliveries(receiver, endpoints, all_there, plan.timeout_s)
    ok_ids = client.ok_webhook_ids(found)
    out.lost_events = sorted(wanted - client.ok_keys(found).keys())
    out.lost_pending = [w for w in out.pending_at_kill if w not in ok_ids]
    out.duplicates = client.duplicated(found)
    out.bad_deliveries = [f"{d.webhook_id}: {p}" for d in found for p in d.problems]
    out.strays = len(receiver.strays)
    return found


def _resumed_working(out: Outcome, endpoints: list[Endpoint], seen_before: dict[str, int]) -> int:
    """A resumed turn starts again from its stored stage and says WORKING again: a new event, pushed anew."""
    interrupted = {*out.accepted.get("inflight", []), *out.accepted.get("busy", [])}
    before_ids = {d.webhook_id for e in endpoints for d in e.deliveries[: seen_before[e.path]]}
    after = [d for e in endpoints for d in e.deliveries[seen_before[e.path] :] if d.webhook_id not in before_ids]
    return len(
        {
            k[0]
            for d in after
            if (k := client.event_key(d)) and k == (k[0], "state:TASK_STATE_WORKING") and k[0] in interrupted
        }
    )


def _recovery_timings(
    out: Outcome,
    finals: dict[str, dict[str, Any]],
    wanted: set[tuple[str, str]],
    found: list[Delivery],
    restarted_at: float,
) -> None:
    """When the last interrupted turn ended (its terminal status timestamp) and the last event arrived."""
    got = client.ok_keys(found)
    ended = [_epoch(t["status"]["timestamp"]) for t in finals.values() if t["status"]["state"] in TERMINAL]
    out.timings["tasks_done_s"] = max(ended, default=restarted_at) - restarted_at
    needed = [got[k] for k in wanted if k in got and got[k] >= restarted_at]
    out.timings["deliveries_done_s"] = max(needed, default=restarted_at) - restarted_at
    pending_ids = set(out.pending_at_kill)
    pending_ok = [d.received_at for d in found if d.answer == "ok" and d.webhook_id in pending_ids]
    out.timings["pending_delivered_s"] = max(pending_ok, default=restarted_at) - restarted_at


def _epoch(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
