"""The audit after the load: no task was lost or duplicated."""

from __future__ import annotations

import asyncio
import collections
import json
from typing import Any

import aiohttp

from benchmarks import common
from benchmarks.load.clients import REQUEST_TIMEOUT_S, TERMINAL, Aborted, Client, Tally, post


async def audit(url: str, clients: list[Client], deadline: common.Deadline) -> dict[str, Any]:
    tally = Tally()
    found: dict[str, Any] = {}
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=32), timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
    ) as http:
        unsettled = await read_back(http, url, clients, tally, found)
        await settle(http, url, unsettled, tally, deadline, found)
        one_to_one(clients, found)
        await walk(http, url, clients, tally, deadline, found)
    found["audit_statuses"] = dict(tally.statuses)
    found["audit_transport_errors"] = tally.transport_errors
    return found


async def read_back(
    http: aiohttp.ClientSession, url: str, clients: list[Client], tally: Tally, found: dict[str, Any]
) -> list[tuple[Client, str]]:
    """1. Every answered task id is readable by GetTask; the tasks not ended yet."""
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
    return unsettled


async def settle(
    http: aiohttp.ClientSession,
    url: str,
    unsettled: list[tuple[Client, str]],
    tally: Tally,
    deadline: common.Deadline,
    found: dict[str, Any],
) -> None:
    """2. Tasks still running (slow ones take 200 ms) settle first, so none moves ahead of a walk's cursor."""
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


def one_to_one(clients: list[Client], found: dict[str, Any]) -> None:
    """3. One task per accepted messageId, one messageId per task."""
    accepted = sum(len(c.accepted) for c in clients)
    all_ids = [t for c in clients for t in c.tasks]
    split = [f"{c.subject} {m}: {sorted(ids)}" for c in clients for m, ids in c.answered.items() if len(ids) > 1]
    found["accepted_message_ids"] = accepted
    found["distinct_tasks"] = len(set(all_ids))
    found["task_answers_shared"] = len(all_ids) - len(set(all_ids))
    found["message_ids_with_two_tasks"] = split


async def walk(
    http: aiohttp.ClientSession,
    url: str,
    clients: list[Client],
    tally: Tally,
    deadline: common.Deadline,
    found: dict[str, Any],
) -> None:
    """4. A full ListTasks walk of each subject lists each of its tasks exactly once."""
    walk_problems: list[str] = []
    pages = listed_total = 0
    for client in clients:
        seen, totals, walked = await walk_one(http, url, client, tally, deadline, walk_problems)
        pages += walked
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


async def walk_one(
    http: aiohttp.ClientSession,
    url: str,
    client: Client,
    tally: Tally,
    deadline: common.Deadline,
    problems: list[str],
) -> tuple[collections.Counter, set, int]:
    """One subject's walk, pageSize 100: how often each task was listed, the totalSizes answered, the pages."""
    seen: collections.Counter = collections.Counter()
    token, totals, pages = "", set(), 0
    for _ in range(10_000):
        if deadline.passed:
            raise Aborted("the audit's ListTasks walk passed the run's time bound")
        params: dict[str, Any] = {"pageSize": 100}
        if token:
            params["pageToken"] = token
        status, answer, _ = await post(http, url, common.rpc("ListTasks", params), client.headers, tally)
        result = (answer or {}).get("result")
        if status != 200 or not isinstance(result, dict):
            problems.append(f"{client.subject}: page answered HTTP {status} {json.dumps(answer)[:200]}")
            break
        pages += 1
        seen.update(t["id"] for t in result.get("tasks", []))
        totals.add(result.get("totalSize"))
        token = result.get("nextPageToken") or ""
        if not token:
            break
    return seen, totals, pages
