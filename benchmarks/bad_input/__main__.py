"""``python -m benchmarks.bad_input``: send the generated cases in batches, check the agent between them, report."""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from benchmarks import bad_input as package
from benchmarks import common, servers
from benchmarks.bad_input.cases import Case, judge, usual_headers
from benchmarks.bad_input.makers import CATEGORIES, generate
from benchmarks.bad_input.wire import RESULT, Answer, exchange

BATCH = 1000  # requests between two liveness checks


@dataclass
class Tally:
    answers: dict[tuple[str, str], collections.Counter] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    wrong: dict[tuple[str, str], int] = field(default_factory=collections.Counter)
    count: dict[tuple[str, str], int] = field(default_factory=collections.Counter)
    examples: list[str] = field(default_factory=list)
    five_xx: int = 0
    hangs: int = 0
    no_answer: int = 0
    slowest: float = 0.0

    def record(self, case: Case, answer: Answer, seconds: float) -> None:
        self.slowest = max(self.slowest, seconds)
        key = (case.category, case.name)
        self.count[key] += 1
        self.answers[key][answer.label()] += 1
        if answer.status >= 500:
            self.five_xx += 1
        if answer.status == 0:
            self.no_answer += 1
            if "hang" in answer.note:
                self.hangs += 1
        if not judge(case, answer):
            self.wrong[key] += 1
            if self.wrong[key] <= 2 and len(self.examples) < 16:  # two examples per case at most
                self.examples.append(
                    f"{case.category}/{case.name}: sent {case.body[:160]!r}… got {answer.label()} {answer.body[:300]!r}"
                )


@dataclass
class Target:
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> Target:
        split = urlsplit(url)
        return cls(split.hostname or "127.0.0.1", split.port or 80, split.path)

    async def send(self, body: bytes, headers: dict[str, str] | None = None, path: str | None = None) -> Answer:
        return await exchange(self.host, self.port, path or self.path, headers or usual_headers(), body)


@dataclass
class Bench:
    """One run against one agent: where it sends, what it counts, and what it saw of the agent meanwhile."""

    server: servers.Server
    target: Target
    task_id: str  # the task made at the start, which every liveness check reads
    args: argparse.Namespace
    deadline: common.Deadline
    tally: Tally = field(default_factory=Tally)
    generated_s: float = 0.0
    rss_samples: list[tuple[int, int | None]] = field(default_factory=list)  # (requests sent, VmRSS KiB)
    peak: int = 0  # VmRSS KiB, sampled every 100 ms
    liveness: list[tuple[int, bool, str]] = field(default_factory=list)  # (requests sent, answered, answer)
    other: float = 0.0  # other processes' CPU meanwhile, in cores
    aborted: str = ""
    log: str = ""
    alive: bool = True

    async def send_watched(self, cases: list[Case]) -> None:
        """Every case, while the agent's memory is watched and its CPU neighbours counted; its memory once it
        rested."""
        self.peak = common.rss_kib(self.server.pid) or 0
        self.rss_samples.append((0, self.peak))
        stop = asyncio.Event()
        watcher = asyncio.create_task(self.monitor(stop))
        cpu = common.CpuWatch([os.getpid(), self.server.pid])
        sent = await self.send_in_batches(cases)
        self.other = cpu.other_cores()
        stop.set()
        await watcher
        await asyncio.sleep(1.0)
        self.sample(sent)
        self.log = self.server.log_text()
        self.alive = self.server.alive()

    async def monitor(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.peak = max(self.peak, common.rss_kib(self.server.pid) or 0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.1)

    def sample(self, sent: int) -> None:
        self.rss_samples.append((sent, common.rss_kib(self.server.pid)))

    async def send_in_batches(self, cases: list[Case]) -> int:
        """BATCH cases at a time, ``--concurrency`` in flight, then a liveness check; the requests sent."""
        sent = 0
        for start in range(0, len(cases), BATCH):
            if self.deadline.passed:
                self.aborted = f"stopped after {start} requests: past the {self.args.time_limit:.0f} s bound"
                break
            batch = cases[start : start + BATCH]
            await self.send_batch(batch)
            sent = start + len(batch)
            await self.check_alive(sent)
            if not self.server.alive():
                self.aborted = f"the agent exited after {sent} requests"
                break
        return sent

    async def send_batch(self, batch: list[Case]) -> None:
        semaphore = asyncio.Semaphore(self.args.concurrency)

        async def send(case: Case) -> None:
            async with semaphore:
                t = time.monotonic()
                answer = await self.target.send(case.body, case.headers, case.path)
                self.tally.record(case, answer, time.monotonic() - t)

        await asyncio.gather(*(send(c) for c in batch))

    async def check_alive(self, sent: int) -> None:
        """The agent still answers a GetTask of the task made at the start; its memory now."""
        check = await self.target.send(common.rpc("GetTask", {"id": self.task_id}, "alive"))
        up = check.status == 200 and check.rpc()[0] == RESULT
        self.liveness.append((sent, up, check.label()))
        self.sample(sent)
        print(
            f"  {sent:>6} sent; GetTask {'ok' if up else 'FAILED: ' + check.label()}; "
            f"RSS {self.rss_samples[-1][1]} KiB; wrong so far {sum(self.tally.wrong.values())}",
            flush=True,
        )


# -- the run


async def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    deadline = common.Deadline(args.time_limit)
    with common.workdir("bench-bad-input-") as work, servers.reference_agent(work) as server:
        target = Target.of(server.url)
        made = await target.send(common.rpc("SendMessage", {"message": _seed_message()}))
        bench = Bench(server, target, json.loads(made.body)["result"]["task"]["id"], args, deadline)
        t0 = time.monotonic()
        cases = generate(args.requests, args.seed, bench.task_id)
        bench.generated_s = time.monotonic() - t0
        print(
            f"reference agent {server.url} (pid {server.pid}); {len(cases)} cases in {bench.generated_s:.1f} s",
            flush=True,
        )
        await bench.send_watched(cases)
    print(f"\nbad_input: {common.machine_line()}")
    print_cases(bench.tally)
    print_categories(bench.tally)
    print_figures(bench, started)
    problems, notes = problems_and_notes(bench)
    for note in notes:
        print(f"\nnote: {note}")
    common.print_problems(problems, "no problems: every request got its required answer, no 5xx, no hang")
    print(f"\nreproduce: {common.reproduce('benchmarks.bad_input', sys.argv[1:])}")
    tally = bench.tally
    return 1 if sum(tally.wrong.values()) or tally.five_xx or tally.hangs or bench.aborted or not bench.alive else 0


def _seed_message() -> dict[str, Any]:
    return common.echo_message(f"bad-input-seed-{time.time_ns()}")


# -- the report


def print_cases(tally: Tally) -> None:
    rows = []
    for key in sorted(tally.count):
        answers = ", ".join(f"{label} ×{n}" for label, n in tally.answers[key].most_common(4))
        rows.append((key[0], key[1], tally.count[key], tally.count[key] - tally.wrong[key], tally.wrong[key], answers))
    print(common.table(["category", "case", "sent", "right", "wrong", "answers"], rows, right=False))


def print_categories(tally: Tally) -> None:
    by_category = collections.Counter()
    wrong_by_category = collections.Counter()
    for (category, _), n in tally.count.items():
        by_category[category] += n
    for (category, _), n in tally.wrong.items():
        wrong_by_category[category] += n
    print()
    print(
        common.table(
            ["category", "sent", "right", "wrong"],
            [(c, by_category[c], by_category[c] - wrong_by_category[c], wrong_by_category[c]) for c in CATEGORIES],
        )
    )


def print_figures(bench: Bench, started: float) -> None:
    tally = bench.tally
    total = sum(tally.count.values())
    wrong = sum(tally.wrong.values())
    rss = [kib for _, kib in bench.rss_samples if kib]
    liveness = bench.liveness
    rows = [
        ("requests sent", total),
        ("answered as required", total - wrong),
        ("wrong answers", wrong),
        ("HTTP 5xx", tally.five_xx),
        ("no HTTP answer / of which hangs", f"{tally.no_answer} / {tally.hangs}"),
        ("slowest answer", f"{tally.slowest * 1000:.0f} ms"),
        ("GetTask liveness checks passed", f"{sum(1 for _, up, _ in liveness if up)} of {len(liveness)}"),
        ("RSS start / peak (100 ms monitor) / end", f"{rss[0]} / {max(bench.peak, *rss)} / {rss[-1]} KiB"),
        ("RSS every 1,000 requests (KiB)", " ".join(str(k) for _, k in bench.rss_samples)),
        ("case generation", f"{bench.generated_s:.1f} s"),
        ("wall time", f"{time.monotonic() - started:.0f} s"),
        ("other processes' CPU meanwhile", f"{bench.other:.2f} cores"),
    ]
    print()
    print(common.table(["figure", "value"], rows, right=False))


def problems_and_notes(bench: Bench) -> tuple[list[str], list[str]]:
    tally = bench.tally
    problems = list(tally.examples)
    if bench.aborted:
        problems.insert(0, f"ABORTED: {bench.aborted}")
    if not bench.alive:
        problems.append("the agent exited")
    if any(not up for _, up, _ in bench.liveness):
        problems.append("a liveness GetTask failed")
    log = bench.log
    records = collections.Counter(
        (m.group(1), m.group(2)) for m in re.finditer(r"^\S+ \S+ (\S+) ERROR (.*)$", log, flags=re.MULTILINE)
    )
    own = {key: n for key, n in records.items() if key[0] == "reference_agent"}
    if own:  # the agent's own log.exception: a handler failed (it answers -32603 or fails the task)
        problems.append(f"the agent logged its own errors: {own}")
    others = {f"{logger}: {message}": n for (logger, message), n in records.items() if logger != "reference_agent"}
    notes = []
    if others:
        final = collections.Counter(
            line.split(":")[0] for line in log.splitlines() if line.startswith(("aiohttp.", "zlib."))
        )
        notes.append(
            f"aiohttp's server logged {sum(others.values())} ERROR records with tracebacks ({others}); "
            f"exception lines: {dict(final)}. The answers were sent (see the table); the log noise is aiohttp's."
        )
    return problems, notes


# -- the command line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bad_input", description=package.__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke run: 500 requests")
    p.add_argument("--requests", type=int, help="malformed requests to send (default 10000)")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight (default 8)")
    p.add_argument("--seed", type=int, default=1, help="seed of the generated cases (default 1)")
    p.add_argument("--time-limit", type=float, default=900.0, help="stop past this many seconds (default 900)")
    args = common.parse(
        p,
        argv,
        defaults={"requests": (500, 10_000)},
        at_most={"requests": 200_000, "concurrency": 64, "time_limit": 3600},
        error="requests in 1..200000, concurrency in 1..64, time limit in (0, 3600] s",
    )
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
