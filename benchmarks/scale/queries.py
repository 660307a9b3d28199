"""Every query the client page and the kit make, through the agent, over a store seeded with ``count`` tasks.

The history (``tests/history.py``) is two subjects' ended turns in old conversations. On top of it the benchmark
makes a conversation of its own through the agent, as a check does (three completed turns, then two failed
ones), and times each request a client or the kit makes about what it made: ListTasks under every filter
and their combinations, the deepest page of the whole subject, GetTask of its own task and of an old one, and
the change feed by cursor (after its own turns' start, and near the history's beginning), from the
beginning, for its subject, and for its session.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from benchmarks import common, servers
from nylorun_a2a_kit.reference_agent.store import encode_cursor, session_id
from tests.history import History, seed

AGENT = servers.AGENT_ID
SUBJECT = "a2a:scale"
OTHER_SUBJECT = "a2a:scale-other"
PAGE = 50
OWN_CONTEXT = "ctx-scale-own"
OLD_TASK = "t-seed-00000011"  # the sixth earlier task of the subject (the subjects take turns)


@dataclass
class Made:
    """What the benchmark made through the agent on top of the history."""

    tasks: list[dict[str, Any]]
    seq_before: int  # the feed position just before them

    @property
    def since(self) -> str:
        """The status timestamp of the third task: the filter time that matches the last three."""
        return self.tasks[2]["status"]["timestamp"]


def make_own(http: httpx.Client, url: str, count: int) -> Made:
    tasks = []
    for scenario in ("complete", "complete", "complete", "fail", "fail"):
        message = {
            "messageId": f"scale-{scenario}-{len(tasks)}",
            "role": "ROLE_USER",
            "parts": [{"text": f"scenario {scenario}"}],
            "contextId": OWN_CONTEXT,
        }
        answer = http.post(url, content=common.rpc("SendMessage", {"message": message})).json()
        if "result" not in answer:
            raise RuntimeError(f"SendMessage failed: {answer}")
        tasks.append(answer["result"]["task"])
    return Made(tasks, seq_before=count)


Request = Callable[[], Any]


def cases(http: httpx.Client, base: str, count: int, made: Made) -> dict[str, tuple[Request, Callable[[Any], bool]]]:
    """Each case's request and a check of its answer (a wrong answer is a benchmark failure, not a figure)."""
    url = servers.agent_url(base)
    own_ids = [t["id"] for t in made.tasks]

    def rpc(method: str, params: dict[str, Any]) -> Request:
        return lambda: _result(http.post(url, content=common.rpc(method, params)).json(), method)

    def feed(subject: str | None = None, **query: Any) -> Request:
        headers = {"Authorization": f"Bearer {common.KEY}"} | ({"Nylorun-Subject": subject} if subject else {})
        return lambda: http.get(f"{base}/v1/turns?{urlencode(query)}", headers=headers).raise_for_status().json()

    def lists(*expected: str) -> Callable[[Any], bool]:
        return lambda result: [t["id"] for t in result["tasks"]] == list(expected)

    failed, done = own_ids[3:], own_ids[:3]
    cursor, early = encode_cursor({"p": made.seq_before}), encode_cursor({"p": 10})
    # The history's subjects take turns, so the subject's oldest 50 tasks lie below position 101.
    deepest = {"pageSize": PAGE, "pageToken": _retarget(_first_token(http, url), 2 * PAGE + 1)}
    return {
        "ListTasks, no filter, first page": (rpc("ListTasks", {"pageSize": PAGE}), _full_page),
        "ListTasks, no filter, deepest page": (rpc("ListTasks", deepest), _full_page),
        "ListTasks, contextId": (rpc("ListTasks", {"contextId": OWN_CONTEXT}), lists(*own_ids[::-1])),
        "ListTasks, status": (rpc("ListTasks", {"status": "TASK_STATE_FAILED", "pageSize": 2}), lists(*failed[::-1])),
        "ListTasks, statusTimestampAfter": (
            rpc("ListTasks", {"statusTimestampAfter": made.since}),
            lists(*own_ids[:1:-1]),
        ),
        "ListTasks, contextId + status": (
            rpc("ListTasks", {"contextId": OWN_CONTEXT, "status": "TASK_STATE_COMPLETED"}),
            lists(*done[::-1]),
        ),
        "ListTasks, contextId + statusTimestampAfter": (
            rpc("ListTasks", {"contextId": OWN_CONTEXT, "statusTimestampAfter": made.since}),
            lists(*own_ids[:1:-1]),
        ),
        "ListTasks, status + statusTimestampAfter": (
            rpc("ListTasks", {"status": "TASK_STATE_FAILED", "statusTimestampAfter": made.since}),
            lists(*failed[::-1]),
        ),
        "GetTask, its own task": (rpc("GetTask", {"id": own_ids[0]}), lambda task: task["id"] == own_ids[0]),
        "GetTask, an old task": (rpc("GetTask", {"id": OLD_TASK}), lambda task: task["id"] == OLD_TASK),
        "feed, after a cursor (key alone)": (feed(changedAfter=cursor), lambda page: _turns_of(page) == own_ids),
        "feed, near the beginning": (feed(changedAfter=early, limit=100), lambda page: len(page["turns"]) == 100),
        "feed, from the beginning": (feed(limit=100), lambda page: len(page["turns"]) == 100),
        "feed, after a cursor, one subject": (
            feed(SUBJECT, changedAfter=cursor),
            lambda page: _turns_of(page) == own_ids,
        ),
        "feed, one session": (
            feed(sessionId=session_id(AGENT, SUBJECT, OWN_CONTEXT)),
            lambda page: _turns_of(page) == own_ids,
        ),
    }


def _result(answer: dict[str, Any], method: str) -> Any:
    if "result" not in answer:
        raise RuntimeError(f"{method} failed: {answer}")
    return answer["result"]


def _full_page(result: dict[str, Any]) -> bool:
    return len(result["tasks"]) == PAGE


def _turns_of(page: dict[str, Any]) -> list[str]:
    return [t["a2a"]["taskId"] for t in page["turns"]]


def _first_token(http: httpx.Client, url: str) -> str:
    return _result(http.post(url, content=common.rpc("ListTasks", {"pageSize": PAGE})).json(), "ListTasks")[
        "nextPageToken"
    ]


def _retarget(token: str, seq: int) -> str:
    """The agent's own page token, moved to another position in the status sequence (same filter digest): the
    deepest page is the one just above the oldest 50 tasks."""
    cursor = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    cursor["s"] = seq
    return base64.urlsafe_b64encode(json.dumps(cursor).encode()).decode().rstrip("=")


def timed(request: Request, check: Callable[[Any], bool], requests: int, what: str) -> list[float]:
    """Seconds of each of ``requests`` asks (after 10 unmeasured, the first of them checked), sorted."""
    if not check(request()):
        raise RuntimeError(f"{what}: the answer is not what the benchmark made: {request()}")
    for _ in range(9):
        request()
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        request()
        times.append(time.perf_counter() - started)
    return sorted(times)


def at_scale(sizes: list[int], requests: int, workdir: Path) -> tuple[list[dict], dict[int, dict]]:
    """Each case's latency at each size, and the agent's memory and the seeding figures per size."""
    results, memory = [], {}
    for count in sizes:
        db = workdir / f"scale-{count}.sqlite3"
        seed_s = seed(db, History(count, AGENT, (SUBJECT, OTHER_SUBJECT)))
        size_mb = db.stat().st_size / 1e6
        agent = servers.AgentProcess(db, ["--key", common.KEY], workdir / f"scale-{count}.log")
        try:
            started = time.perf_counter()
            base = agent.start()
            start_s = time.perf_counter() - started
            rss_start = common.rss_kib(agent.pid)
            with httpx.Client(headers=common.reference_headers(SUBJECT), timeout=60) as http:
                made = make_own(http, servers.agent_url(base), count)
                for what, (request, check) in cases(http, base, count, made).items():
                    times = timed(request, check, requests, what)
                    results.append({"tasks": count, "case": what, "p50": common.percentile(times, 50)})
                    results[-1] |= {"p99": common.percentile(times, 99), "mean": sum(times) / len(times)}
            memory[count] = {"seed_s": seed_s, "start_s": start_s, "db_mb": size_mb, "rss_start_kib": rss_start}
            memory[count] |= common.memory_kib(agent.pid, "VmRSS", "VmHWM")
        finally:
            agent.stop()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    return results, memory
