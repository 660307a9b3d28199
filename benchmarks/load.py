"""Load: 50 concurrent clients × 2,000 requests of mixed methods against the reference agent, then an audit.

Each client is one subject (``load-<n>``) with its own keep-alive connection, and draws its requests from a
seeded mix:

- ``send-blocking``: SendMessage of the echo scenario on the client's own context, blocking;
- ``send-immediate``: SendMessage of the echo scenario on a new context, ``returnImmediately``;
- ``send-slow``: SendMessage of ``scenario slow 200`` on a new context, ``returnImmediately`` (to cancel);
- ``send-retry``: an accepted SendMessage sent again byte for byte: must answer the same task;
- ``get``: GetTask of one of the client's tasks; ``list``: ListTasks of its context (pageSize 50);
- ``cancel``: CancelTask of a slow task (CANCELED, or -32002 once it ended) or of an ended one (-32002);
- ``invalid``: an unknown method (-32601), an unknown task (-32001), params without a message (-32602), a body
  that is not JSON (-32700), pageSize 0 (-32602), or A2A-Version 0.3 (-32009).

Every answer is checked against what its request must get. Afterwards the audit checks that no task was lost
or duplicated: every task id a SendMessage answered is readable by GetTask; the distinct task ids equal the
distinct accepted messageIds one to one (a retried messageId answers its first task); and a full ListTasks
walk of each subject lists each of its tasks exactly once, and nothing else.

Run: ``.venv/bin/python -m benchmarks.load [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import sys
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
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
CODES = {
    "unknown-method": -32601,
    "unknown-task": -32001,
    "no-message": -32602,
    "not-json": -32700,
    "page-size-0": -32602,
    "version-0.3": -32009,
}
REQUEST_TIMEOUT_S = 60.0


class Aborted(Exception):
    pass


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
    statuses: collections.Counter = field(default_factory=collections.Counter)
    transport_errors: int = 0
    transport_examples: list[str] = field(default_factory=list)
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    timeline: list[tuple[float, float, int]] = field(default_factory=list)  # (answered at, latency, new tasks)


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
    tally.statuses[status] += 1
    try:
        answer = json.loads(data)
    except ValueError:
        answer = {"unparsable": data[:300].decode(errors="replace")}
    return status, answer, elapsed


def error_code(answer: Any) -> Any:
    return (answer.get("error") or {}).get("code") if isinstance(answer, dict) else None


async def one_request(http: aiohttp.ClientSession, url: str, client: Client, tally: Tally) -> None:
    kind = client.rng.choices(list(MIX), weights=list(MIX.values()))[0]
    if kind == "send-retry" and not client.accepted:
        kind = "send-blocking"
    headers = client.headers
    expect_code: int | None = None
    label = kind
    message_id = task_id = ""
    if kind in ("send-blocking", "send-immediate", "send-slow"):
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
    elif kind == "send-retry":
        message_id = client.rng.choice(list(client.accepted))
        body = client.accepted[message_id][0]
    elif kind == "get":
        task_id = client.rng.choice(client.tasks) if client.tasks else "t-none-yet"
        expect_code = None if client.tasks else -32001
        body = common.rpc("GetTask", {"id": task_id}, client.sequence)
    elif kind == "list":
        params = {"pageSize": 50}
        if client.context_id:
            params["contextId"] = client.context_id
        body = common.rpc("ListTasks", params, client.sequence)
    elif kind == "cancel":
        if client.pending_slow:
            task_id = client.pending_slow.pop(client.rng.randrange(len(client.pending_slow)))
        elif client.tasks:
            task_id = client.rng.choice([t for t in client.tasks if t not in client.slow] or client.tasks)
            expect_code = -32002
        else:
            task_id, expect_code = "t-none-yet", -32001
        body = common.rpc("CancelTask", {"id": task_id}, client.sequence)
    else:
        label = client.rng.choice(INVALID)
        expect_code = CODES[label]
        label = f"invalid:{label}"
        if label == "invalid:unknown-method":
            body = common.rpc("GetTasks", {"id": "x"}, client.sequence)
        elif label == "invalid:unknown-task":
            body = common.rpc("GetTask", {"id": f"t-unknown-{client.sequence}"}, client.sequence)
        elif label == "invalid:no-message":
            body = common.rpc("SendMessage", {"configuration": {}}, client.sequence)
        elif label == "invalid:not-json":
            body = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {'
        elif label == "invalid:page-size-0":
            body = common.rpc("ListTasks", {"pageSize": 0}, client.sequence)
        else:
            body = common.rpc("GetTask", {"id": "x"}, client.sequence)
            headers = {**headers, "A2A-Version": "0.3"}

    status, answer, elapsed = await post(http, url, body, headers, tally)
    stats = tally.kinds[label]
    stats.latencies.append(elapsed)
    before = len(client.tasks)
    try:
        judge(kind, label, (status, answer), expect_code, (message_id, task_id), body, client, tally)
    finally:
        tally.timeline.append((time.monotonic(), elapsed, len(client.tasks) - before))


def judge(
    kind: str,
    label: str,
    got: tuple[int, Any],
    expect_code: int | None,
    ids: tuple[str, str],
    body: bytes,
    client: Client,
    tally: Tally,
) -> None:
    """Check one answer against what its request must get."""
    status, answer = got
    message_id, task_id = ids
    stats = tally.kinds[label]
    if status == 0:
        stats.bad("transport error")
        return
    if status != 200 or not isinstance(answer, dict):
        stats.bad(f"HTTP {status}: {answer}")
        return
    if expect_code is not None:
        if kind == "cancel":
            what = "an ended" if expect_code == -32002 else "an unknown"
            tally.outcomes[f"cancel of {what} task: error {error_code(answer)}"] += 1
        if error_code(answer) != expect_code:
            stats.bad(f"wanted error {expect_code}, got {json.dumps(answer)[:300]}")
        return
    if kind.startswith("send"):
        check_send(kind, message_id, body, answer, client, stats)
    elif kind == "get":
        if (answer.get("result") or {}).get("id") != task_id:
            stats.bad(f"GetTask {task_id}: {json.dumps(answer)[:300]}")
    elif kind == "list":
        result = answer.get("result") or {}
        tasks = result.get("tasks")
        if not isinstance(tasks, list) or any(
            t.get("contextId") != client.context_id for t in tasks if client.context_id
        ):
            stats.bad(f"ListTasks: {json.dumps(answer)[:300]}")
    elif kind == "cancel":
        state = ((answer.get("result") or {}).get("status") or {}).get("state")
        tally.outcomes["cancel of a slow task: " + (state or f"error {error_code(answer)}")] += 1
        if state != "TASK_STATE_CANCELED" and error_code(answer) != -32002:
            stats.bad(f"CancelTask {task_id}: {json.dumps(answer)[:300]}")


def check_send(kind: str, message_id: str, body: bytes, answer: dict, client: Client, stats: Kind) -> None:
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
    client.accepted[message_id] = (body, task_id)
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


async def client_loop(url: str, client: Client, requests: int, tally: Tally, deadline: common.Deadline) -> None:
    async with session() as http:
        for _ in range(requests):
            if deadline.passed:
                raise Aborted(f"client {client.n} stopped: the run passed its {deadline.seconds:g} s bound")
            await one_request(http, url, client, tally)


# -- the audit


async def audit(url: str, clients: list[Client], deadline: common.Deadline) -> dict[str, Any]:
    tally = Tally()
    found: dict[str, Any] = {}
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=32), timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
    ) as http:
        # 1. every answered task id is readable by GetTask.
        semaphore = asyncio.Semaphore(32)
        unreadable: list[str] = []
        unsettled: list[tuple[Client, str]] = []

        async def read(client: Client, task_id: str) -> None:
            async with semaphore:
                status, answer, _ = await post(http, url, common.rpc("GetTask", {"id": task_id}), client.headers, tally)
            result = (answer or {}).get("result") or {}
            if status != 200 or result.get("id") != task_id:
                unreadable.append(f"{client.subject} {task_id}: HTTP {status} {json.dumps(answer)[:200]}")
            elif (result.get("status") or {}).get("state") not in TERMINAL:
                unsettled.append((client, task_id))

        await asyncio.gather(*(read(c, t) for c in clients for t in c.tasks))
        found["getTask_checked"] = sum(len(c.tasks) for c in clients)
        found["unreadable"] = unreadable

        # 2. tasks still running (slow ones take 200 ms) settle first, so none moves ahead of a walk's cursor.
        never_settled = []
        for client, task_id in unsettled:
            while True:
                if deadline.passed:
                    raise Aborted(f"task {task_id} did not settle within the run's time bound")
                _, answer, _ = await post(http, url, common.rpc("GetTask", {"id": task_id}), client.headers, tally)
                state = (((answer or {}).get("result") or {}).get("status") or {}).get("state")
                if state in TERMINAL:
                    break
                if state is None:
                    never_settled.append(task_id)
                    break
                await asyncio.sleep(0.05)
        found["settled_after_load"] = len(unsettled)
        found["never_settled"] = never_settled

        # 3. one task per accepted messageId, one messageId per task.
        accepted = sum(len(c.accepted) for c in clients)
        all_ids = [t for c in clients for t in c.tasks]
        split = [f"{c.subject} {m}: {sorted(ids)}" for c in clients for m, ids in c.answered.items() if len(ids) > 1]
        found["accepted_message_ids"] = accepted
        found["distinct_tasks"] = len(set(all_ids))
        found["task_answers_shared"] = len(all_ids) - len(set(all_ids))
        found["message_ids_with_two_tasks"] = split

        # 4. a full ListTasks walk of each subject lists each of its tasks exactly once.
        walk_problems: list[str] = []
        pages = listed_total = 0
        for client in clients:
            seen: collections.Counter = collections.Counter()
            token, totals = "", set()
            for _ in range(10_000):
                if deadline.passed:
                    raise Aborted("the audit's ListTasks walk passed the run's time bound")
                params: dict[str, Any] = {"pageSize": 100}
                if token:
                    params["pageToken"] = token
                status, answer, _ = await post(http, url, common.rpc("ListTasks", params), client.headers, tally)
                result = (answer or {}).get("result")
                if status != 200 or not isinstance(result, dict):
                    walk_problems.append(f"{client.subject}: page answered HTTP {status} {json.dumps(answer)[:200]}")
                    break
                pages += 1
                seen.update(t["id"] for t in result.get("tasks", []))
                totals.add(result.get("totalSize"))
                token = result.get("nextPageToken") or ""
                if not token:
                    break
            listed_total += sum(seen.values())
            expected = set(client.tasks)
            twice = [t for t, n in seen.items() if n > 1]
            missing = expected - set(seen)
            extra = set(seen) - expected
            if twice or missing or extra or totals != {len(expected)}:
                walk_problems.append(
                    f"{client.subject}: {len(expected)} tasks; listed {sum(seen.values())}; twice {twice[:3]}; "
                    f"missing {sorted(missing)[:3]} ({len(missing)}); extra {sorted(extra)[:3]} ({len(extra)}); "
                    f"totalSize {sorted(totals, key=str)}"
                )
        found["walk_pages"] = pages
        found["walk_listed"] = listed_total
        found["walk_problems"] = walk_problems
    found["audit_statuses"] = dict(tally.statuses)
    found["audit_transport_errors"] = tally.transport_errors
    return found


# -- the run


def timeline_rows(tally: Tally, t0: float, wall: float, slices: int = 10) -> list[tuple]:
    """Throughput and latency per tenth of the run, with the tasks made by its end."""
    rows, made = [], 0
    width = wall / slices
    buckets: list[list[tuple[float, float, int]]] = [[] for _ in range(slices)]
    for at, latency, new in tally.timeline:
        buckets[min(slices - 1, max(0, int((at - t0) / width)))].append((at, latency, new))
    for n, bucket in enumerate(buckets):
        made += sum(new for _, _, new in bucket)
        ordered = sorted(latency for _, latency, _ in bucket)
        rows.append(
            (
                f"{n * width:.1f}-{(n + 1) * width:.1f} s",
                len(bucket),
                f"{len(bucket) / width:.0f}",
                common.ms(common.percentile(ordered, 50)),
                common.ms(common.percentile(ordered, 99)),
                made,
            )
        )
    return rows


def kind_rows(tally: Tally) -> list[tuple]:
    rows = []
    for name in sorted(tally.kinds):
        stats = tally.kinds[name]
        ordered = sorted(stats.latencies)
        rows.append(
            (
                name,
                len(ordered),
                common.ms(common.percentile(ordered, 50)),
                common.ms(common.percentile(ordered, 99)),
                common.ms(ordered[-1] if ordered else float("nan")),
                stats.unexpected,
            )
        )
    return rows


async def run(args: argparse.Namespace) -> int:
    deadline = common.Deadline(args.time_limit)
    tally = Tally()
    started = time.monotonic()
    problems: list[str] = []
    with common.workdir("bench-load-") as work, common.reference_agent(work) as server:
        rss_start = common.rss_kib(server.pid)
        clients = [Client(n, random.Random(args.seed * 1000 + n), f"load-{n}") for n in range(args.clients)]
        print(
            f"reference agent {server.url} (pid {server.pid}); {args.clients} clients × {args.requests} requests",
            flush=True,
        )
        watch = common.CpuWatch([os.getpid(), server.pid])
        t0 = time.monotonic()
        runs = [
            asyncio.create_task(client_loop(server.url, c, args.requests, tally, deadline), name=f"client-{c.n}")
            for c in clients
        ]
        try:
            await asyncio.wait_for(asyncio.gather(*runs), timeout=max(1.0, deadline.left()))
        except (TimeoutError, Aborted) as exc:
            for task in runs:
                task.cancel()
            done = sum(len(k.latencies) for k in tally.kinds.values())
            print(
                f"ABORTED: the load run passed its {args.time_limit:g} s bound after {done} requests "
                f"({exc or 'timeout'}); the agent is slower than this bound allows or hangs",
                flush=True,
            )
            return 2
        wall = time.monotonic() - t0
        other = watch.other_cores()
        rss_after_load = common.rss_kib(server.pid)
        t1 = time.monotonic()
        try:
            found = await audit(server.url, clients, deadline)
        except Aborted as exc:
            print(f"ABORTED: {exc}", flush=True)
            return 2
        audit_s = time.monotonic() - t1
        rss_end = common.rss_kib(server.pid)
        log = server.log_text()
        alive = server.alive()

    latencies = sorted(x for k in tally.kinds.values() for x in k.latencies)
    total = len(latencies)
    five_xx = sum(n for s, n in tally.statuses.items() if s >= 500)
    unexpected = sum(k.unexpected for k in tally.kinds.values())
    print(f"\nload: {common.machine_line()}")
    print(
        common.table(
            ["figure", "value"],
            [
                ("clients × requests", f"{args.clients} × {args.requests}"),
                ("requests answered", total),
                ("wall time (load)", f"{wall:.1f} s"),
                ("requests/s", f"{total / wall:.0f}"),
                ("latency p50", f"{common.ms(common.percentile(latencies, 50))} ms"),
                ("latency p99", f"{common.ms(common.percentile(latencies, 99))} ms"),
                ("latency max", f"{common.ms(latencies[-1] if latencies else float('nan'))} ms"),
                ("HTTP statuses", dict(sorted(tally.statuses.items()))),
                ("HTTP 5xx", five_xx),
                ("transport errors", tally.transport_errors),
                ("unexpected answers", unexpected),
                ("agent RSS start / after load / end", f"{rss_start} / {rss_after_load} / {rss_end} KiB"),
                ("audit time", f"{audit_s:.1f} s"),
                ("other processes' CPU during the load", f"{other:.2f} cores{' (disturbed)' if other > 0.15 else ''}"),
            ],
            right=False,
        )
    )
    print()
    print(common.table(["request kind", "count", "p50 ms", "p99 ms", "max ms", "unexpected"], kind_rows(tally)))
    print()
    print(
        common.table(
            ["part of the run", "requests", "req/s", "p50 ms", "p99 ms", "tasks made by its end"],
            timeline_rows(tally, t0, wall),
        )
    )
    print()
    print(common.table(["outcome", "count"], sorted(tally.outcomes.items())))
    print("\naudit (no lost or duplicated tasks):")
    print(
        common.table(
            ["check", "value"],
            [
                ("accepted distinct messageIds", found["accepted_message_ids"]),
                ("distinct task ids answered", found["distinct_tasks"]),
                ("task ids answered to two messageIds", found["task_answers_shared"]),
                ("messageIds answered with two task ids", len(found["message_ids_with_two_tasks"])),
                ("task ids read back by GetTask", found["getTask_checked"] - len(found["unreadable"])),
                ("task ids not readable", len(found["unreadable"])),
                ("tasks still running after the load (waited for)", found["settled_after_load"]),
                ("ListTasks walk: pages / tasks listed", f"{found['walk_pages']} / {found['walk_listed']}"),
                ("ListTasks walk: subjects with problems", len(found["walk_problems"])),
                ("audit HTTP statuses", found["audit_statuses"]),
            ],
            right=False,
        )
    )
    for kind, stats in sorted(tally.kinds.items()):
        for example in stats.examples:
            problems.append(f"{kind}: {example}")
    problems += [f"transport: {e}" for e in tally.transport_examples]
    problems += [f"unreadable: {e}" for e in found["unreadable"][:5]]
    problems += [f"did not settle: {e}" for e in found["never_settled"][:5]]
    problems += [f"two task ids: {e}" for e in found["message_ids_with_two_tasks"][:5]]
    problems += [f"walk: {e}" for e in found["walk_problems"][:5]]
    if found["accepted_message_ids"] != found["distinct_tasks"]:
        problems.append(f"{found['accepted_message_ids']} accepted messageIds but {found['distinct_tasks']} tasks")
    if five_xx:
        problems.append(f"{five_xx} HTTP 5xx answers")
    if not alive:
        problems.append("the agent exited")
    if "Traceback" in log:
        problems.append("the agent logged a traceback:\n" + log[-3000:])
    print("\nproblems:" if problems else "\nno problems: 0 5xx, 0 unexpected answers, no lost or duplicated task")
    for problem in problems:
        print(f"  - {problem}")
    print(f"\ntook {time.monotonic() - started:.0f} s")
    print(f"reproduce: {common.reproduce('benchmarks.load', sys.argv[1:])}")
    return 1 if problems or unexpected else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke run: 10 clients × 100 requests")
    p.add_argument("--clients", type=int, help="concurrent clients (default 50)")
    p.add_argument("--requests", type=int, help="requests per client (default 2000)")
    p.add_argument("--seed", type=int, default=1, help="the mix's random seed (default 1)")
    p.add_argument("--time-limit", type=float, default=900.0, help="abort past this many seconds (default 900)")
    args = p.parse_args(argv)
    args.clients = args.clients or (10 if args.quick else 50)
    args.requests = args.requests or (100 if args.quick else 2000)
    if not (0 < args.clients <= 500 and 0 < args.requests <= 100_000 and 0 < args.time_limit <= 3600):
        p.error("clients in 1..500, requests in 1..100000, time limit in (0, 3600] s")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
