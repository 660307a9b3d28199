"""``python -m benchmarks.scale``: ListTasks at scale, then push deliveries per second, each reported as it ends."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from benchmarks import common
from benchmarks import scale as package
from benchmarks.scale.listing import PAGE, listing
from benchmarks.scale.push import push_rate, verification_costs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    common.print_heading("benchmarks.scale", argv)
    failed = False
    if not args.skip_list:
        failed |= list_at_scale([int(s) for s in args.sizes.split(",")], args.requests)
    if not args.skip_push:
        failed |= push_per_second(args.deliveries, args.concurrency)
    return 1 if failed else 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=package.__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, few requests (seconds)")
    p.add_argument("--sizes", help="comma-separated task counts (default 1000,10000,100000; quick 1000,5000)")
    p.add_argument("--requests", type=int, help="requests per case (default 200; quick 30)")
    p.add_argument("--deliveries", type=int, help="push deliveries to send (default 20000; quick 2000)")
    p.add_argument("--concurrency", type=int, default=64, help="concurrent POSTs of the push sender (default 64)")
    p.add_argument("--skip-list", action="store_true")
    p.add_argument("--skip-push", action="store_true")
    defaults = {"sizes": ("1000,5000", "1000,10000,100000"), "requests": (30, 200), "deliveries": (2000, 20000)}
    return common.parse(p, argv, defaults=defaults)


# -- ListTasks


def list_at_scale(sizes: list[int], requests: int) -> bool:
    """Seed, measure and report every size; whether the largest missed the goal (p50 within 2× of the smallest)."""
    with common.workdir("scale-bench-") as tmp:
        cases, breakdown, memory, plans = listing(sizes, requests, tmp)
    print(f"\n== ListTasks, pageSize {PAGE}, {requests} requests per case (sequential, one keep-alive connection)")
    rows = [
        [c["tasks"], c["filter"], c["page"], common.ms(c["p50"]), common.ms(c["p99"]), common.ms(c["mean"])]
        for c in cases
    ]
    print(common.table(["tasks", "filter", "page", "p50 ms", "p99 ms", "mean ms"], rows))
    failed = print_ratios(cases, sizes[0], sizes[-1])
    print("\nin-process (Store, same DB, after the agent stopped): the page query vs Store.count behind totalSize")
    rows = [[b["tasks"], b["filter"], b["what"], f"{b['s'] * 1000:.3f}"] for b in breakdown]
    print(common.table(["tasks", "filter", "query", "ms"], rows))
    print("query plans:")
    for line in plans:
        print(f"  {line}")
    print_memory(memory)
    return failed


def print_ratios(cases: list[dict[str, Any]], smallest: int, largest: int) -> bool:
    """p50 of each case at the largest size over the same case at the smallest; whether one is past 2.0."""
    print(f"\nratio {largest} / {smallest} tasks (p50; goal ≤ 2.0):")
    failed = False
    for c in (c for c in cases if c["tasks"] == largest):
        small = next(
            s
            for s in cases
            if s["tasks"] == smallest and s["page"] == c["page"] and s["filter"].split()[0] == c["filter"].split()[0]
        )
        ratio = c["p50"] / small["p50"]
        failed |= ratio > 2.0
        print(f"  {c['filter'].split()[0]:9} {c['page']:7}: {ratio:.2f}×")
    return failed


def print_memory(memory: dict[int, dict[str, Any]]) -> None:
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


# -- push


def push_per_second(deliveries: int, concurrency: int) -> bool:
    """Verified deliveries per second, the control without verification, the cost of each step; whether the rate
    missed the goal (≥ 2,000/s) or a delivery was rejected."""
    print(f"\n== push: {deliveries} signed deliveries, {concurrency} concurrent POSTs, into the kit's receiver")
    result = push_rate(deliveries, concurrency)
    print(
        f"received {result['received']}, verified {result['verified']}, rejected {result['rejected']} "
        f"{result['first_problem']}; sender statuses {result['statuses']}, errors {result['errors']}"
    )
    print(
        f"verified deliveries/s: {result['rate']:.0f} (first→last arrival {result['span_s']:.2f} s; "
        f"sender wall {result['sender_s']:.2f} s) — goal ≥ 2000/s"
    )
    failed = not result["rate"] >= 2000 or result["rejected"] > 0
    control = push_rate(deliveries, concurrency, verify=False)
    print(
        f"control, same receiver with verification off: {control['rate']:.0f} deliveries/s "
        f"(first→last {control['span_s']:.2f} s) — the transport's ceiling (aiohttp server + sender)"
    )
    print("\nper-delivery cost of the receiver's verification, in-process (bound = 1 / cost):")
    for name, seconds in verification_costs().items():
        print(f"  {name}: {seconds * 1e6:.0f} µs → ≤ {1 / seconds:,.0f}/s")
    return failed


if __name__ == "__main__":
    sys.exit(main())
