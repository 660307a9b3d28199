"""``python -m benchmarks.scale``: each served query at scale, then push deliveries a second, each shown as it ends."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from benchmarks import common
from benchmarks import scale as package
from benchmarks.scale.push import push_rate, verification_costs
from benchmarks.scale.queries import at_scale


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
    p.add_argument("--sizes", help="comma-separated task counts (default 1000,100000,1000000; quick 1000,5000)")
    p.add_argument("--requests", type=int, help="requests per case (default 200; quick 30)")
    p.add_argument("--deliveries", type=int, help="push deliveries to send (default 20000; quick 2000)")
    p.add_argument("--concurrency", type=int, default=64, help="concurrent POSTs of the push sender (default 64)")
    p.add_argument("--skip-list", action="store_true")
    p.add_argument("--skip-push", action="store_true")
    defaults = {"sizes": ("1000,5000", "1000,100000,1000000"), "requests": (30, 200), "deliveries": (2000, 20000)}
    return common.parse(p, argv, defaults=defaults)


# -- every served query


def list_at_scale(sizes: list[int], requests: int) -> bool:
    """Seed, measure and report every size; whether a case at the largest missed the goal (p50 within 2× of the
    smallest's)."""
    with common.workdir("scale-bench-") as tmp:
        results, memory = at_scale(sizes, requests, tmp)
    print(f"\n== each request, {requests} times per case (sequential, one keep-alive connection); p50 ms per size")
    names = list(dict.fromkeys(r["case"] for r in results))
    p50 = {(r["case"], r["tasks"]): r["p50"] for r in results}
    p99 = {(r["case"], r["tasks"]): r["p99"] for r in results}
    rows = []
    failed = False
    for name in names:
        ratio = p50[(name, sizes[-1])] / p50[(name, sizes[0])]
        failed |= ratio > 2.0
        figures = [common.ms(p50[(name, n)]) for n in sizes]
        rows.append([name, *figures, common.ms(p99[(name, sizes[-1])]), f"{ratio:.2f}×"])
    headers = ["request", *(f"{n:,}" for n in sizes), f"p99 at {sizes[-1]:,}", f"{sizes[-1]:,} / {sizes[0]:,}"]
    print(common.table(headers, rows))
    print(f"goal: every ratio ≤ 2.0 — {'missed' if failed else 'met'}")
    print_memory(memory)
    return failed


def print_memory(memory: dict[int, dict[str, Any]]) -> None:
    print("\nagent memory (VmRSS after start, and after the requests; VmHWM = peak), seeding and start time, DB size:")
    rows = [
        [
            n,
            f"{m['seed_s']:.1f}",
            f"{m['start_s']:.1f}",
            f"{m['db_mb']:.1f}",
            f"{m['rss_start_kib'] / 1024:.1f}",
            f"{m['VmRSS'] / 1024:.1f}",
            f"{m['VmHWM'] / 1024:.1f}",
        ]
        for n, m in memory.items()
    ]
    print(common.table(["tasks", "seed s", "start s", "DB MB", "RSS start MiB", "RSS after MiB", "HWM MiB"], rows))


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
