"""A gate beside other callers: the gate against the reference agent while a load client works the same Runtime.

The reference agent runs as the gate's example agent does (a process of its own, push on a test clock), on a
database holding ``--history`` earlier tasks of the kit's subjects and Tenant (``tests/history.py``).
The gate runs against it twice, one run after the other: alone, then while ``--clients`` load clients
(``benchmarks.callers``: blocking and immediate sends, slow tasks, retries, GetTask, ListTasks, cancels,
malformed requests) work the same agent with the same key, half of them as the kit's own subject and half as
another subject, until the gate ends. Reported: each gate's wall time, verdict and checks by outcome, whether
every check's outcome is the lone run's, and what the load did meanwhile (requests, answers it did not expect).

    .venv/bin/python -m benchmarks.beside_load [--quick] [--history 10000] [--clients 4] [-n 2]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import threading

from benchmarks import common, servers
from benchmarks.callers import Client, Tally, one_request, session
from benchmarks.history_growth import SUBJECTS, GateRun, run_gate
from nylorun_a2a_kit.fixtures.gate.example_agent import example_agent
from tests.history import History, seed


class Load:
    """Load clients on their own thread and event loop, until :meth:`stop`."""

    def __init__(self, url: str, subjects: list[str], seed_value: int):
        self.url = url
        self.clients = [Client(n, random.Random(seed_value * 1000 + n), subject) for n, subject in enumerate(subjects)]
        self.tally = Tally()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=120)

    async def _run(self) -> None:
        await asyncio.gather(*(self._client(client) for client in self.clients))

    async def _client(self, client: Client) -> None:
        async with session() as http:
            while not self._stopping.is_set():
                await one_request(http, self.url, client, self.tally)

    def report(self) -> tuple[int, list[str]]:
        """Requests sent, and the answers the load did not expect (with examples)."""
        sent = sum(len(kind.latencies) for kind in self.tally.kinds.values())
        unexpected = [
            f"{label}: {kind.unexpected} unexpected, e.g. {kind.examples[0]}"
            for label, kind in sorted(self.tally.kinds.items())
            if kind.unexpected
        ]
        if self.tally.transport_errors:
            unexpected.append(
                f"{self.tally.transport_errors} transport errors, e.g. {self.tally.transport_examples[0]}"
            )
        return sent, unexpected


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m benchmarks.beside_load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="no history, two clients, the subject-wide checks only")
    parser.add_argument("--history", type=int, help="earlier tasks the agent holds (default 10000; quick 0)")
    parser.add_argument("--clients", type=int, help="load clients, half of them the kit's subject (default 4; quick 2)")
    parser.add_argument("-n", "--workers", type=int, default=2, help="the gate's xdist workers (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="the load's random seed (default 1)")
    args = common.parse(parser, argv, defaults={"history": (-1, 10000), "clients": (2, 4)})
    args.history = max(0, args.history)
    common.print_heading("benchmarks.beside_load", argv)
    subset = "FEED-01,FEED-02,FEED-03,FEED-05,FEED-07,LIST-03,LIST-04,LIST-08,PAGE-01,PAGE-02,PAGE-03,ISO-01,ISO-02"
    extra = [f"--a2a-req={subset}", "--a2a-enforce-claim=no"] if args.quick else []
    subjects = [SUBJECTS[0] if n % 2 == 0 else SUBJECTS[2] for n in range(args.clients)]
    with common.workdir("beside-load-") as workdir:
        db = workdir / "agent.sqlite3"
        if args.history:
            print(
                f"seeded {args.history:,} earlier tasks in {seed(db, History(args.history, 'support', SUBJECTS)):.1f} s"
            )
        with example_agent(0, db=db) as agent:
            alone = run_gate(agent, "alone", args.workers, workdir, extra)
            print(f"alone: {alone.wall_s:.1f} s wall; verdict {alone.verdict}; {alone.counts()}", flush=True)
            load = Load(servers.agent_url(agent.base), subjects, args.seed)
            load.start()
            try:
                beside = run_gate(agent, "beside-load", args.workers, workdir, extra)
            finally:
                load.stop()
            print(f"beside the load: {beside.wall_s:.1f} s wall; verdict {beside.verdict}; {beside.counts()}")
    return report(alone, beside, load, subjects)


def report(alone: GateRun, beside: GateRun, load: Load, subjects: list[str]) -> int:
    sent, unexpected = load.report()
    print(f"\nthe load: {len(subjects)} clients ({', '.join(subjects)}), {sent:,} requests during the second gate")
    changed = sorted(
        check
        for check in set(alone.outcomes()) | set(beside.outcomes())
        if alone.outcomes().get(check) != beside.outcomes().get(check)
    )
    problems = [f"outcomes that differ from the lone run's: {changed[:20]}"] if changed else []
    problems += [
        f"the {run.label} gate exited {run.returncode} with verdict {run.verdict}"
        for run in (alone, beside)
        if run.returncode or run.verdict != "pass"
    ]
    problems += [f"the load: {line}" for line in unexpected]
    print(f"wall time beside the load / alone: {beside.wall_s / alone.wall_s:.2f}×")
    common.print_problems(
        problems, "both gates passed, every check with the lone run's outcome; the load got what it expected"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
