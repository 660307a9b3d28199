"""Scale: ListTasks page latency over 1k, 10k and 100k stored tasks, the agent's memory, push deliveries per second.

ListTasks: the database is seeded directly through ``reference_agent.store.Store`` (one subject, ten
conversations interleaved, every task a completed echo turn with its history and one artifact), then the agent
is started on it. Each case asks 200 times (after 10 warm-up requests) for pageSize 50:

- the first page, and the deepest page (the last full page of the walk, via a pageToken positioned there),
- without a filter, and with a contextId filter (a conversation holding a tenth of the tasks).

A keyset cursor (``seq < ?`` on the index) costs the same at any depth and any table size; the goal is 100k
within 2× of 1k. Each answer also carries ``totalSize`` (from the counts the store keeps per owner and state,
or a COUNT over one conversation's tasks), timed separately in-process with the page query (and the query
plans printed), so what grows with the table is named.

Push: the kit's receiver (``fixtures.push_receiver.PushReceiver`` with a secret: every delivery is verified —
Standard Webhooks signature, timestamp, StreamResponse schema) on its own thread, fed by a signing sender in
another process (standardwebhooks, aiohttp, many concurrent POSTs). Verified deliveries per second are counted
at the receiver (first to last arrival); the goal is ≥ 2,000/s. The per-delivery cost of each verification
step is timed in-process to say what bounds the rate.

    .venv/bin/python -m benchmarks.scale [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks import common
from benchmarks.crash import KEY, AgentProcess, new_secret
from nylorun_a2a_kit.fixtures import push_verify
from nylorun_a2a_kit.fixtures.push_receiver import PushReceiver
from nylorun_a2a_kit.reference_agent import status
from nylorun_a2a_kit.reference_agent.store import Store, TaskFilter, TaskRecord, format_timestamp

AGENT = "support"
SUBJECT = "a2a:scale"
CONTEXTS = 10
PAGE = 50
FILTERED_CONTEXT = "ctx-3"


# -- seeding


def seed(db: Path, count: int) -> float:
    """``count`` completed tasks of one subject, inserted through Store in one transaction; the seconds it took."""
    started = time.perf_counter()
    store = Store(str(db))
    base = datetime.now(UTC) - timedelta(milliseconds=count + 60_000)
    turns: dict[str, int] = {}
    with store.transaction():
        for seq in range(1, count + 1):
            context_id = f"ctx-{seq % CONTEXTS}"
            turns[context_id] = turns.get(context_id, 0) + 1
            task_id = f"t-seed-{seq:07d}"
            user = {
                "messageId": f"msg-seed-{seq:07d}",
                "role": "ROLE_USER",
                "parts": [{"text": "scenario echo"}, {"text": f"stored task number {seq}"}],
                "contextId": context_id,
                "taskId": task_id,
            }
            task = TaskRecord(
                id=task_id,
                agent_id=AGENT,
                subject=SUBJECT,
                context_id=context_id,
                turn=turns[context_id],
                state="TASK_STATE_COMPLETED",
                status_message=None,
                status_ts=format_timestamp(base + timedelta(milliseconds=seq)),
                seq=seq,
                history=[user],
                artifacts=[{"artifactId": f"{task_id}-1", "name": "echo", "parts": [{"text": f"stored task {seq}"}]}],
                scenario={"name": "echo", "stage": "start", "steps": 1, "trace_id": f"{seq:032x}"},
            )
            task.status_message = {
                "messageId": f"{task_id}-status-{seq}",
                "role": "ROLE_AGENT",
                "parts": [{"text": "Echoed."}],
                "contextId": context_id,
                "taskId": task_id,
            }
            task.history.append(task.status_message)
            store.insert(task)
        for context_id, turn in turns.items():
            store.db.execute("INSERT INTO contexts VALUES (?,?,?,?)", (AGENT, SUBJECT, context_id, turn))
    store.close()
    return time.perf_counter() - started


def deepest_cursor(count: int, context: str | None) -> int:
    """The cursor of the walk's last full page: the seq of the 51st oldest matching task (tasks below it: 50)."""
    if context is None:
        return PAGE + 1
    offset = int(context.split("-")[1])
    return offset + PAGE * CONTEXTS if offset else (PAGE + 1) * CONTEXTS


def retarget(token: str, seq: int) -> str:
    """The agent's own page token, moved to another position in the status sequence (same filter digest)."""
    cursor = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    cursor["s"] = seq
    return base64.urlsafe_b64encode(json.dumps(cursor).encode()).decode().rstrip("=")


# -- ListTasks latency


def list_cases(base: str, count: int, requests: int) -> list[dict[str, Any]]:
    headers = {
        "Authorization": f"Bearer {KEY}",
        "Nylorun-Subject": SUBJECT,
        "Nylorun-Scopes": "sessions:own",
        "A2A-Version": "1.0",
        "Content-Type": "application/json",
    }
    url = f"{base}/v1/a2a/agents/{AGENT}"
    results = []
    with httpx.Client(headers=headers, timeout=30) as http:

        def list_tasks(params: dict[str, Any]) -> dict[str, Any]:
            body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
            answer = http.post(url, content=json.dumps(body).encode()).json()
            if "result" not in answer:
                raise RuntimeError(f"ListTasks failed: {answer}")
            return answer["result"]

        for context in (None, FILTERED_CONTEXT):
            first_params: dict[str, Any] = {"pageSize": PAGE}
            if context:
                first_params["contextId"] = context
            first = list_tasks(first_params)
            deep_params = {
                **first_params,
                "pageToken": retarget(first["nextPageToken"], deepest_cursor(count, context)),
            }
            deep = list_tasks(deep_params)
            matching = count // CONTEXTS if context else count
            if len(first["tasks"]) != PAGE or len(deep["tasks"]) != PAGE or first["totalSize"] != matching:
                raise RuntimeError(
                    f"unexpected pages: {len(first['tasks'])}, {len(deep['tasks'])}, {first['totalSize']}"
                )
            expected_last = f"t-seed-{(deepest_cursor(count, context) - (CONTEXTS if context else 1) * PAGE):07d}"
            if deep["tasks"][-1]["id"] != expected_last or deep["nextPageToken"]:
                raise RuntimeError(f"the deepest page ends at {deep['tasks'][-1]['id']}, expected {expected_last}")
            for depth, params in (("first", first_params), ("deepest", deep_params)):
                for _ in range(10):
                    list_tasks(params)
                times = []
                for _ in range(requests):
                    started = time.perf_counter()
                    list_tasks(params)
                    times.append(time.perf_counter() - started)
                times.sort()
                results.append(
                    {
                        "tasks": count,
                        "filter": f"contextId ({matching})" if context else "none",
                        "page": depth,
                        "p50": common.percentile(times, 50),
                        "p99": common.percentile(times, 99),
                        "mean": sum(times) / len(times),
                    }
                )
    return results


def store_breakdown(db: Path, count: int, requests: int) -> list[dict[str, Any]]:
    """In-process: the page query and the COUNT behind totalSize, timed apart, with their query plans."""
    store = Store(str(db))
    out = []
    try:
        for context in (None, FILTERED_CONTEXT):
            flt = TaskFilter(agent_id=AGENT, subject=SUBJECT, context_id=context)
            for depth, before in (("first", None), ("deepest", deepest_cursor(count, context))):
                started = time.perf_counter()
                for _ in range(requests):
                    store.page(flt, before_seq=before, limit=PAGE + 1)
                page_s = (time.perf_counter() - started) / requests
                out.append({"tasks": count, "filter": context or "none", "what": f"page ({depth})", "s": page_s})
            started = time.perf_counter()
            for _ in range(requests):
                store.count(flt)
            out.append(
                {
                    "tasks": count,
                    "filter": context or "none",
                    "what": "count",
                    "s": (time.perf_counter() - started) / requests,
                }
            )
    finally:
        store.close()
    return out


def query_plans(db: Path) -> list[str]:
    store = Store(str(db))
    try:
        lines = []
        for label, sql, args in (
            (
                "page, no filter",
                "SELECT * FROM tasks WHERE agent_id=? AND subject=? AND seq<? ORDER BY seq DESC LIMIT ?",
                (AGENT, SUBJECT, 51, 51),
            ),
            (
                "page, contextId",
                "SELECT * FROM tasks WHERE agent_id=? AND subject=? AND context_id=? AND seq<? "
                "ORDER BY seq DESC LIMIT ?",
                (AGENT, SUBJECT, FILTERED_CONTEXT, 503, 51),
            ),
            (
                "totalSize, no filter",
                "SELECT COALESCE(SUM(n), 0) FROM task_counts WHERE agent_id=? AND subject=?",
                (AGENT, SUBJECT),
            ),
            (
                "totalSize, contextId",
                "SELECT COUNT(*) FROM tasks WHERE agent_id=? AND subject=? AND context_id=?",
                (AGENT, SUBJECT, FILTERED_CONTEXT),
            ),
        ):
            plan = store.db.execute("EXPLAIN QUERY PLAN " + sql, args).fetchall()
            lines.append(f"{label}: " + "; ".join(row[-1] for row in plan))
        return lines
    finally:
        store.close()


def listing(
    sizes: list[int], requests: int, workdir: Path
) -> tuple[list[dict], list[dict], dict[int, dict], list[str]]:
    cases, breakdown, memory, plans = [], [], {}, []
    for count in sizes:
        db = workdir / f"scale-{count}.sqlite3"
        seed_s = seed(db, count)
        size_mb = db.stat().st_size / 1e6
        agent = AgentProcess(db, ["--key", KEY], workdir / f"scale-{count}.log")
        try:
            base = agent.start()
            rss_start = common.rss_kib(agent.pid)
            cases += list_cases(base, count, requests)
            memory[count] = {"seed_s": seed_s, "db_mb": size_mb, "rss_start_kib": rss_start, **_memory(agent.pid)}
        finally:
            agent.stop()
        breakdown += store_breakdown(db, count, requests)
        if count == sizes[-1]:
            plans = query_plans(db)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    return cases, breakdown, memory, plans


def _memory(pid: int) -> dict[str, int]:
    found = {}
    with open(f"/proc/{pid}/status") as status_file:
        for line in status_file:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = int(value.split()[0])
    return found


# -- push deliveries per second


def _sender(url: str, secret: str, count: int, concurrency: int, results) -> None:
    """In its own process: sign ``count`` StreamResponse bodies, then POST them with ``concurrency`` at a time."""
    import aiohttp
    from standardwebhooks.webhooks import Webhook

    webhook = Webhook(secret)
    bodies = []
    for i in range(count):
        task = TaskRecord(
            id=f"t-push-{i:07d}",
            agent_id=AGENT,
            subject=SUBJECT,
            context_id=f"ctx-{i % CONTEXTS}",
            turn=1,
            state="TASK_STATE_WORKING",
            status_message={
                "messageId": f"t-push-{i:07d}-status-{i}",
                "role": "ROLE_AGENT",
                "parts": [{"text": "Working on it."}],
                "contextId": f"ctx-{i % CONTEXTS}",
                "taskId": f"t-push-{i:07d}",
            },
            status_ts=format_timestamp(datetime.now(UTC)),
            seq=i + 1,
        )
        body = json.dumps(status.update_event(task), separators=(",", ":")).encode()
        webhook_id = f"msg_{i:024x}"
        now = datetime.now(UTC)
        headers = {
            "Content-Type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": webhook.sign(webhook_id, now, body.decode()),
        }
        bodies.append((body, headers))

    async def run() -> dict[str, Any]:
        statuses: dict[int, int] = {}
        errors = 0
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            position = iter(range(count))

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

    results.put(asyncio.run(run()))


def push_rate(count: int, concurrency: int, *, verify: bool = True) -> dict[str, Any]:
    """Deliveries into the kit's receiver; ``verify=False`` is the control: the same receiver with verification
    switched off (``push_verify.problems`` answering [] at once), which shows the transport's own ceiling."""
    secret = new_secret()
    receiver = PushReceiver(secret=secret)
    original = push_verify.problems
    if not verify:
        push_verify.problems = lambda *args, **kwargs: []
    try:
        endpoint = receiver.endpoint()
        spawn = multiprocessing.get_context("spawn")
        results = spawn.Queue()
        sender = spawn.Process(target=_sender, args=(endpoint.url, secret, count, concurrency, results), daemon=True)
        sender.start()
        try:
            sent = results.get(timeout=300)
        finally:
            sender.join(timeout=30)
            if sender.is_alive():
                sender.kill()
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


def verification_costs(samples: int = 2000) -> dict[str, float]:
    """Seconds per delivery of each step the receiver runs on one delivery, in-process."""
    from standardwebhooks.webhooks import Webhook

    from nylorun_a2a_kit import schemas

    secret = new_secret()
    task = TaskRecord(
        id="t-cost",
        agent_id=AGENT,
        subject=SUBJECT,
        context_id="ctx-0",
        turn=1,
        state="TASK_STATE_WORKING",
        status_message={"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "Working on it."}]},
        status_ts=format_timestamp(datetime.now(UTC)),
        seq=1,
    )
    body = json.dumps(status.update_event(task), separators=(",", ":")).encode()
    now = datetime.now(UTC)
    headers = {
        "webhook-id": "msg_cost",
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign("msg_cost", now, body.decode()),
    }
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


# -- report


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, few requests (seconds)")
    p.add_argument("--sizes", help="comma-separated task counts (default 1000,10000,100000; quick 1000,5000)")
    p.add_argument("--requests", type=int, help="requests per case (default 200; quick 30)")
    p.add_argument("--deliveries", type=int, help="push deliveries to send (default 20000; quick 2000)")
    p.add_argument("--concurrency", type=int, default=64, help="concurrent POSTs of the push sender (default 64)")
    p.add_argument("--skip-list", action="store_true")
    p.add_argument("--skip-push", action="store_true")
    args = p.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("1000,5000" if args.quick else "1000,10000,100000")).split(",")]
    requests = args.requests or (30 if args.quick else 200)
    deliveries = args.deliveries or (2000 if args.quick else 20000)
    print(f"machine: {common.machine_line()}")
    print(f"reproduce: {common.reproduce('benchmarks.scale', argv)}")
    failed = False
    if not args.skip_list:
        with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
            cases, breakdown, memory, plans = listing(sizes, requests, Path(tmp))
        print(f"\n== ListTasks, pageSize {PAGE}, {requests} requests per case (sequential, one keep-alive connection)")
        rows = [
            [c["tasks"], c["filter"], c["page"], common.ms(c["p50"]), common.ms(c["p99"]), common.ms(c["mean"])]
            for c in cases
        ]
        print(common.table(["tasks", "filter", "page", "p50 ms", "p99 ms", "mean ms"], rows))
        smallest, largest = sizes[0], sizes[-1]
        print(f"\nratio {largest} / {smallest} tasks (p50; goal ≤ 2.0):")
        for c in (c for c in cases if c["tasks"] == largest):
            small = next(
                s
                for s in cases
                if s["tasks"] == smallest
                and s["page"] == c["page"]
                and s["filter"].split()[0] == c["filter"].split()[0]
            )
            ratio = c["p50"] / small["p50"]
            failed |= ratio > 2.0
            print(f"  {c['filter'].split()[0]:9} {c['page']:7}: {ratio:.2f}×")
        print("\nin-process (Store, same DB, after the agent stopped): the page query vs Store.count behind totalSize")
        rows = [[b["tasks"], b["filter"], b["what"], f"{b['s'] * 1000:.3f}"] for b in breakdown]
        print(common.table(["tasks", "filter", "query", "ms"], rows))
        print("query plans:")
        for line in plans:
            print(f"  {line}")
        print("\nagent memory (VmRSS after start, and after the listing; VmHWM = peak), seeding time, DB size:")
        rows = [
            [
                n,
                f"{m['seed_s']:.1f}",
                f"{m['db_mb']:.1f}",
                f"{m['rss_start_kib'] / 1024:.1f}",
                f"{m['VmRSS'] / 1024:.1f}",
                f"{m['VmHWM'] / 1024:.1f}",
            ]
            for n, m in memory.items()
        ]
        print(common.table(["tasks", "seed s", "DB MB", "RSS start MiB", "RSS after MiB", "HWM MiB"], rows))
    if not args.skip_push:
        print(
            f"\n== push: {deliveries} signed deliveries, {args.concurrency} concurrent POSTs, into the kit's receiver"
        )
        result = push_rate(deliveries, args.concurrency)
        print(
            f"received {result['received']}, verified {result['verified']}, rejected {result['rejected']} "
            f"{result['first_problem']}; sender statuses {result['statuses']}, errors {result['errors']}"
        )
        print(
            f"verified deliveries/s: {result['rate']:.0f} (first→last arrival {result['span_s']:.2f} s; "
            f"sender wall {result['sender_s']:.2f} s) — goal ≥ 2000/s"
        )
        failed |= not result["rate"] >= 2000 or result["rejected"] > 0
        control = push_rate(deliveries, args.concurrency, verify=False)
        print(
            f"control, same receiver with verification off: {control['rate']:.0f} deliveries/s "
            f"(first→last {control['span_s']:.2f} s) — the transport's ceiling (aiohttp server + sender)"
        )
        print("\nper-delivery cost of the receiver's verification, in-process (bound = 1 / cost):")
        for name, seconds in verification_costs().items():
            print(f"  {name}: {seconds * 1e6:.0f} µs → ≤ {1 / seconds:,.0f}/s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
