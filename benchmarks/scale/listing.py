"""ListTasks at scale: a database seeded with ``count`` tasks, page latency through the agent, the store in-process."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks import common, servers
from nylorun_a2a_kit.reference_agent.store import Store, TaskFilter, TaskRecord, format_timestamp

AGENT = servers.AGENT_ID
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
            store.insert(_stored_task(seq, context_id, turns[context_id], base))
        for context_id, turn in turns.items():
            store.db.execute("INSERT INTO contexts VALUES (?,?,?,?)", (AGENT, SUBJECT, context_id, turn))
    store.close()
    return time.perf_counter() - started


def _stored_task(seq: int, context_id: str, turn: int, base: datetime) -> TaskRecord:
    """Task number ``seq``: a completed echo turn with its history (the user's message, the status) and one artifact."""
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
        turn=turn,
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
    return task


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

ListTasks = Callable[[dict[str, Any]], dict[str, Any]]


def list_cases(base: str, count: int, requests: int) -> list[dict[str, Any]]:
    """The first and the deepest page, without a filter and with a contextId: their latency over ``requests``."""
    results = []
    with httpx.Client(headers=common.reference_headers(SUBJECT), timeout=30) as http:
        list_tasks = _lister(http, servers.agent_url(base))
        for context in (None, FILTERED_CONTEXT):
            pages = _first_and_deepest(list_tasks, count, context)
            matching = count // CONTEXTS if context else count
            for depth, params in zip(("first", "deepest"), pages, strict=True):
                times = _timed(list_tasks, params, requests)
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


def _lister(http: httpx.Client, url: str) -> ListTasks:
    def list_tasks(params: dict[str, Any]) -> dict[str, Any]:
        answer = http.post(url, content=common.rpc("ListTasks", params)).json()
        if "result" not in answer:
            raise RuntimeError(f"ListTasks failed: {answer}")
        return answer["result"]

    return list_tasks


def _first_and_deepest(list_tasks: ListTasks, count: int, context: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The params of the first page and of the deepest one, each checked to be a full page in the right place."""
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
        raise RuntimeError(f"unexpected pages: {len(first['tasks'])}, {len(deep['tasks'])}, {first['totalSize']}")
    expected_last = f"t-seed-{(deepest_cursor(count, context) - (CONTEXTS if context else 1) * PAGE):07d}"
    if deep["tasks"][-1]["id"] != expected_last or deep["nextPageToken"]:
        raise RuntimeError(f"the deepest page ends at {deep['tasks'][-1]['id']}, expected {expected_last}")
    return first_params, deep_params


def _timed(list_tasks: ListTasks, params: dict[str, Any], requests: int) -> list[float]:
    """Seconds of each of ``requests`` asks (after 10 unmeasured), sorted."""
    for _ in range(10):
        list_tasks(params)
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        list_tasks(params)
        times.append(time.perf_counter() - started)
    times.sort()
    return times


# -- the store in-process


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


QUERIES = (
    (
        "page, no filter",
        "SELECT * FROM tasks WHERE agent_id=? AND subject=? AND seq<? ORDER BY seq DESC LIMIT ?",
        (AGENT, SUBJECT, 51, 51),
    ),
    (
        "page, contextId",
        "SELECT * FROM tasks WHERE agent_id=? AND subject=? AND context_id=? AND seq<? ORDER BY seq DESC LIMIT ?",
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
)


def query_plans(db: Path) -> list[str]:
    store = Store(str(db))
    try:
        lines = []
        for label, sql, args in QUERIES:
            plan = store.db.execute("EXPLAIN QUERY PLAN " + sql, args).fetchall()
            lines.append(f"{label}: " + "; ".join(row[-1] for row in plan))
        return lines
    finally:
        store.close()


# -- every size in turn


def listing(
    sizes: list[int], requests: int, workdir: Path
) -> tuple[list[dict], list[dict], dict[int, dict], list[str]]:
    cases, breakdown, memory, plans = [], [], {}, []
    for count in sizes:
        db = workdir / f"scale-{count}.sqlite3"
        seed_s = seed(db, count)
        size_mb = db.stat().st_size / 1e6
        agent = servers.AgentProcess(db, ["--key", common.KEY], workdir / f"scale-{count}.log")
        try:
            base = agent.start()
            rss_start = common.rss_kib(agent.pid)
            cases += list_cases(base, count, requests)
            memory[count] = {
                "seed_s": seed_s,
                "db_mb": size_mb,
                "rss_start_kib": rss_start,
                **common.memory_kib(agent.pid, "VmRSS", "VmHWM"),
            }
        finally:
            agent.stop()
        breakdown += store_breakdown(db, count, requests)
        if count == sizes[-1]:
            plans = query_plans(db)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    return cases, breakdown, memory, plans
