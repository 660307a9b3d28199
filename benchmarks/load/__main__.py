"""``python -m benchmarks.load``: the clients' load, then the audit, then the report."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

from benchmarks import common, servers
from benchmarks import load as package
from benchmarks.load.audit import audit
from benchmarks.load.clients import Aborted, Client, Tally, client_loop


@dataclass
class Run:
    """What one run measured besides the tally: times, the agent's memory, the machine's other load."""

    t0: float = 0.0  # when the load started
    wall: float = 0.0  # seconds of the load
    other: float = 0.0  # other processes' CPU during the load, in cores
    audit_s: float = 0.0
    rss_start: int | None = None
    rss_after_load: int | None = None
    rss_end: int | None = None
    log: str = ""
    alive: bool = True


# -- the run


async def run(args: argparse.Namespace) -> int:
    deadline = common.Deadline(args.time_limit)
    tally = Tally()
    started = time.monotonic()
    measured = Run()
    with common.workdir("bench-load-") as work, servers.reference_agent(work) as server:
        measured.rss_start = common.rss_kib(server.pid)
        clients = [Client(n, random.Random(args.seed * 1000 + n), f"load-{n}") for n in range(args.clients)]
        print(
            f"reference agent {server.url} (pid {server.pid}); {args.clients} clients × {args.requests} requests",
            flush=True,
        )
        if not await load(server, clients, args, tally, deadline, measured):
            return 2
        t1 = time.monotonic()
        try:
            found = await audit(server.url, clients, deadline)
        except Aborted as exc:
            print(f"ABORTED: {exc}", flush=True)
            return 2
        measured.audit_s = time.monotonic() - t1
        measured.rss_end = common.rss_kib(server.pid)
        measured.log = server.log_text()
        measured.alive = server.alive()
    unexpected = sum(k.unexpected for k in tally.kinds.values())
    print(f"\nload: {common.machine_line()}")
    print_figures(args, tally, measured)
    print_tables(tally, measured)
    print_audit(found)
    problems = problems_of(tally, found, measured)
    common.print_problems(problems, "no problems: 0 5xx, 0 unexpected answers, no lost or duplicated task")
    print(f"\ntook {time.monotonic() - started:.0f} s")
    print(f"reproduce: {common.reproduce('benchmarks.load', sys.argv[1:])}")
    return 1 if problems or unexpected else 0


async def load(
    server: servers.Server,
    clients: list[Client],
    args: argparse.Namespace,
    tally: Tally,
    deadline: common.Deadline,
    measured: Run,
) -> bool:
    """Every client's requests, all at once; False (and why, printed) when the run passed its time bound."""
    watch = common.CpuWatch([os.getpid(), server.pid])
    measured.t0 = time.monotonic()
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
        return False
    measured.wall = time.monotonic() - measured.t0
    measured.other = watch.other_cores()
    measured.rss_after_load = common.rss_kib(server.pid)
    return True


# -- the report


def print_figures(args: argparse.Namespace, tally: Tally, measured: Run) -> None:
    latencies = sorted(x for k in tally.kinds.values() for x in k.latencies)
    total, wall, other = len(latencies), measured.wall, measured.other
    rss = f"{measured.rss_start} / {measured.rss_after_load} / {measured.rss_end} KiB"
    rows = [
        ("clients × requests", f"{args.clients} × {args.requests}"),
        ("requests answered", total),
        ("wall time (load)", f"{wall:.1f} s"),
        ("requests/s", f"{total / wall:.0f}"),
        ("latency p50", f"{common.ms(common.percentile(latencies, 50))} ms"),
        ("latency p99", f"{common.ms(common.percentile(latencies, 99))} ms"),
        ("latency max", f"{common.ms(latencies[-1] if latencies else float('nan'))} ms"),
        ("HTTP statuses", dict(sorted(tally.statuses.items()))),
        ("HTTP 5xx", five_xx(tally)),
        ("transport errors", tally.transport_errors),
        ("unexpected answers", sum(k.unexpected for k in tally.kinds.values())),
        ("agent RSS start / after load / end", rss),
        ("audit time", f"{measured.audit_s:.1f} s"),
        ("other processes' CPU during the load", f"{other:.2f} cores{' (disturbed)' if other > 0.15 else ''}"),
    ]
    print(common.table(["figure", "value"], rows, right=False))


def five_xx(tally: Tally) -> int:
    return sum(n for s, n in tally.statuses.items() if s >= 500)


def print_tables(tally: Tally, measured: Run) -> None:
    """Latency per request kind, throughput and latency per tenth of the run, the outcomes of cancels."""
    print()
    print(common.table(["request kind", "count", "p50 ms", "p99 ms", "max ms", "unexpected"], kind_rows(tally)))
    print()
    print(
        common.table(
            ["part of the run", "requests", "req/s", "p50 ms", "p99 ms", "tasks made by its end"],
            timeline_rows(tally, measured.t0, measured.wall),
        )
    )
    print()
    print(common.table(["outcome", "count"], sorted(tally.outcomes.items())))


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


def print_audit(found: dict[str, Any]) -> None:
    print("\naudit (no lost or duplicated tasks):")
    rows = [
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
    ]
    print(common.table(["check", "value"], rows, right=False))


def problems_of(tally: Tally, found: dict[str, Any], measured: Run) -> list[str]:
    problems = []
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
    if five_xx(tally):
        problems.append(f"{five_xx(tally)} HTTP 5xx answers")
    if not measured.alive:
        problems.append("the agent exited")
    if "Traceback" in measured.log:
        problems.append("the agent logged a traceback:\n" + measured.log[-3000:])
    return problems


# -- the command line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.load", description=package.__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke run: 10 clients × 100 requests")
    p.add_argument("--clients", type=int, help="concurrent clients (default 50)")
    p.add_argument("--requests", type=int, help="requests per client (default 2000)")
    p.add_argument("--seed", type=int, default=1, help="the mix's random seed (default 1)")
    p.add_argument("--time-limit", type=float, default=900.0, help="abort past this many seconds (default 900)")
    args = common.parse(
        p,
        argv,
        defaults={"clients": (10, 50), "requests": (100, 2000)},
        at_most={"clients": 500, "requests": 100_000, "time_limit": 3600},
        error="clients in 1..500, requests in 1..100000, time limit in (0, 3600] s",
    )
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
