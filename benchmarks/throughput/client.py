"""The throughput client: the workloads, each server's prepared tasks, and one measured cell."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from benchmarks import common

LIST_TASKS = 60


@dataclass
class Target:
    name: str
    url: str
    headers: dict[str, str]
    task_id: str = ""
    context_id: str = ""
    listed: int = 0
    stored: int | None = None  # tasks in its store (None: the ceiling has none)


@dataclass
class Cell:
    target: str
    method: str
    concurrency: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    answered: int = 0  # every good answer, warm-up and stragglers included (for SendMessage: tasks made)
    store_before: int | None = None  # tasks in the server's store when the cell started
    other_cores: float = 0.0  # CPU the rest of the machine used meanwhile (common.CpuWatch)

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def p(self, q: float) -> float:
        return common.percentile(sorted(self.latencies), q)


def session(concurrency: int) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency, keepalive_timeout=60)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60))


async def call(http: aiohttp.ClientSession, target: Target, body: bytes) -> dict:
    async with http.post(target.url, data=body, headers=target.headers) as response:
        data = await response.read()
        if response.status != 200:
            raise RuntimeError(f"{target.name}: HTTP {response.status}: {data[:300]!r}")
    answer = json.loads(data)
    if "result" not in answer:
        raise RuntimeError(f"{target.name}: {answer}")
    return answer["result"]


async def prepare(target: Target, run_id: str) -> None:
    """One task for GetTask; a context of LIST_TASKS tasks for ListTasks."""
    async with session(1) as http:
        if target.name == "ceiling":
            target.task_id, target.context_id, target.listed = "t-ceiling", "c-ceiling", 50
            return
        result = await call(http, target, common.rpc("SendMessage", {"message": common.echo_message(f"{run_id}-get")}))
        target.task_id = result["task"]["id"]
        context = ""
        for n in range(LIST_TASKS):
            message = common.echo_message(f"{run_id}-list-{n}", context or None)
            result = await call(http, target, common.rpc("SendMessage", {"message": message}))
            assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED", result
            context = result["task"]["contextId"]
        target.context_id = context
        target.stored = 1 + LIST_TASKS
        listed = await call(http, target, common.rpc("ListTasks", {"contextId": context, "pageSize": 50}))
        target.listed = len(listed["tasks"])


async def prefill(target: Target, count: int, run_id: str) -> float:
    """``count`` more echo tasks in the target's store (16 at a time); returns the seconds it took."""
    if target.stored is None or count <= 0:
        return 0.0
    make = bodies("SendMessage", target, f"{run_id}-prefill")
    numbers = iter(range(count))
    t0 = time.monotonic()
    async with session(16) as http:

        async def worker() -> None:
            for n in numbers:
                await call(http, target, make(n))

        await asyncio.gather(*(worker() for _ in range(16)))
    target.stored += count
    return time.monotonic() - t0


def bodies(method: str, target: Target, run_id: str) -> Callable[[int], bytes]:
    if method == "GetTask":
        fixed = common.rpc("GetTask", {"id": target.task_id})
        return lambda n: fixed
    if method == "ListTasks":
        fixed = common.rpc("ListTasks", {"contextId": target.context_id, "pageSize": 50})
        return lambda n: fixed
    head, tail = common.rpc("SendMessage", {"message": common.echo_message("MID")}).split(b"MID")
    prefix = f"{run_id}-{target.name}-".encode()
    return lambda n: head + prefix + str(n).encode() + tail


async def measure(target: Target, method: str, concurrency: int, warmup: float, duration: float, run_id: str) -> Cell:
    cell = Cell(target.name, method, concurrency, duration)
    make = bodies(method, target, f"{run_id}-{method}-{concurrency}")
    counter = itertools.count()
    must = b"TASK_STATE_COMPLETED" if method == "SendMessage" else b'"result"'
    loop = asyncio.get_running_loop()
    start = loop.time() + warmup
    end = start + duration
    async with session(concurrency) as http:

        async def worker() -> None:
            while True:
                body = make(next(counter))
                t0 = loop.time()
                if t0 >= end:
                    return
                try:
                    async with http.post(target.url, data=body, headers=target.headers) as response:
                        data = await response.read()
                        ok = response.status == 200 and must in data and b'"error"' not in data
                except (aiohttp.ClientError, TimeoutError) as exc:
                    ok, data = False, repr(exc).encode()
                t1 = loop.time()
                if not ok:  # an error counts wherever it falls, warm-up included
                    cell.errors += 1
                    cell.first_error = cell.first_error or data[:200].decode(errors="replace")
                else:
                    cell.answered += 1
                    if start <= t1 <= end:
                        cell.latencies.append(t1 - t0)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return cell
