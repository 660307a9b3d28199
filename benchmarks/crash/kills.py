"""Random kills: SIGKILL the agent at random moments of bursts of echo turns, then count what was lost."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from nylorun_a2a_kit.fixtures.push import Delivery, Endpoint, PushReceiver, new_secret
from tests.agent_process import TERMINAL, AgentProcess
from tests.crash import client


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
    args = client.agent_args(secret, receiver, 0.001)
    acknowledged = Acknowledged()
    rng = secrets.SystemRandom()
    try:
        for _ in range(kills):
            _kill_cycle(AgentProcess(db, args, log), endpoint, senders, acknowledged, rng)
        agent = AgentProcess(db, args, log)
        finals, lost_tasks, wanted, found = _after_the_kills(agent, receiver, endpoint, acknowledged.ids, timeout_s)
        extra = {t["id"]: len(t.get("artifacts") or []) - 1 for t in finals if len(t.get("artifacts") or []) > 1}
        return KillsResult(
            kills=kills,
            acknowledged=len(acknowledged.ids),
            lost_tasks=lost_tasks,
            lost_events=sorted(wanted - client.ok_keys(found).keys()),
            extra_artifacts=extra,
            duplicates=client.duplicated(found),
            seconds=time.time() - started,
        )
    finally:
        receiver.close()


class Acknowledged:
    """The task ids the agent acknowledged, added to from many sender threads."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self._lock = threading.Lock()

    def add(self, task_id: str) -> None:
        with self._lock:
            self.ids.append(task_id)


def _kill_cycle(
    agent: AgentProcess, endpoint: Endpoint, senders: int, acknowledged: Acknowledged, rng: secrets.SystemRandom
) -> None:
    """Start the agent, send echo turns from ``senders`` threads, SIGKILL it at a random moment 0.2-0.8 s in."""
    rpc = client.Rpc(agent.start(), connections=senders, timeout_s=5.0)
    stop = threading.Event()

    def sender() -> None:
        for _ in range(10_000):  # bounded; the kill ends it far sooner
            if stop.is_set():
                return
            try:
                task = rpc.send("scenario echo", push_url=endpoint.url)
            except (httpx.HTTPError, ValueError, client.RpcError):
                return  # the kill cut this request off: not acknowledged
            acknowledged.add(task["id"])

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


def _after_the_kills(
    agent: AgentProcess, receiver: PushReceiver, endpoint: Endpoint, acknowledged: list[str], timeout_s: float
) -> tuple[list[dict], list[str], set[tuple[str, str]], list[Delivery]]:
    """Start the agent once more: the acknowledged tasks as they ended, those lost or unfinished, the events due
    and the deliveries."""
    try:
        rpc = client.Rpc(agent.start())
        final = client.wait_settled(rpc, acknowledged, timeout_s)
        rpc.close()
        lost_tasks = [t for t, task in final.items() if "error" in task or task["status"]["state"] not in TERMINAL]
        finals = [task for task in final.values() if "error" not in task]
        wanted = {(task["id"], key) for task in finals for key in client.expected_events(task)}
        found = client.wait_deliveries(receiver, [endpoint], client.all_delivered(wanted), timeout_s / 4)
    finally:
        agent.stop()
    return finals, lost_tasks, wanted, found
