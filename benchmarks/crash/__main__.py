"""``python -m benchmarks.crash``: the crash mid-run, the exact crash points, the random kills, reported in turn."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks import common
from benchmarks import crash as package
from benchmarks.crash.kills import run_random_kills
from benchmarks.crash.points import CRASH_POINTS, agent_with_crash_point, run_crash_point
from tests.crash import Outcome, Plan, run_crash


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--agent-with-crash-point"]:
        return agent_with_crash_point(argv[1:])
    args = parse(argv)
    plan = plan_of(args)
    common.print_heading("benchmarks.crash", argv)
    with common.workdir("crash-bench-") as tmp:
        failed = sigkill_mid_run(plan, tmp)
        if not args.no_crash_points:
            crash_points(tmp)
        kills = args.random_kills if args.random_kills is not None else (4 if args.quick else 20)
        if kills:
            failed |= random_kills(kills, tmp)
    return 1 if failed else 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.crash", description=package.__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a small run (seconds)")
    p.add_argument("--inflight", type=int, help="slow tasks in their own conversations (default 400; quick 20)")
    p.add_argument("--busy", type=int, help="busy conversations (default 100; quick 5)")
    p.add_argument("--queued", type=int, help="queued messages per busy conversation (default 2)")
    p.add_argument("--pending", type=int, help="echo tasks with 3 deliveries pending retry each (default 67; quick 5)")
    p.add_argument("--slow-ms", type=int, help="the in-flight turns' duration (default 15000; quick 4000)")
    p.add_argument("--downtime", choices=("none", "deadlines"), default="deadlines")
    p.add_argument("--no-crash-points", action="store_true", help="skip the exact crash points")
    p.add_argument("--random-kills", type=int, help="kills at random moments of echo bursts (default 20; quick 4)")
    return p.parse_args(argv)


def plan_of(args: argparse.Namespace) -> Plan:
    quick = args.quick
    return Plan(
        inflight=args.inflight if args.inflight is not None else (20 if quick else 400),
        busy=args.busy if args.busy is not None else (5 if quick else 100),
        queued_per_busy=args.queued if args.queued is not None else 2,
        pending=args.pending if args.pending is not None else (5 if quick else 67),
        slow_ms=args.slow_ms or (4000 if quick else 15000),
        retry_after_s=3000,
        senders=8,
        downtime=args.downtime,
        timeout_s=120.0,
    )


def sigkill_mid_run(plan: Plan, tmp: Path) -> bool:
    """The crash mid-run and its report; whether anything was lost."""
    print(
        f"\n== SIGKILL mid-run, restart on the same DB ({plan.inflight}+{plan.busy} in flight, "
        f"{plan.busy * plan.queued_per_busy} queued, {plan.pending * 3} deliveries pending retry)"
    )
    out = run_crash(plan, tmp)
    for line in report(out):
        print(line)
    return out.lost > 0


def crash_points(tmp: Path) -> None:
    print("\n== exact crash points (the agent SIGKILLs itself between two writes of one transaction)")
    for name in CRASH_POINTS:
        result = run_crash_point(name, tmp)
        print(f"{name}: {'LOST' if result.lost else 'nothing lost'}")
        print(f"  window: {result.window}")
        print(f"  client: {result.acknowledged}")
        print(f"  after restart: {result.after_restart}")


def random_kills(kills: int, tmp: Path) -> bool:
    """The random kills and their report; whether a task or an event was lost."""
    print(f"\n== {kills} SIGKILLs at random moments of bursts of echo turns with push configs (same DB)")
    result = run_random_kills(kills, tmp)
    print(
        f"{result.acknowledged} tasks acknowledged over {result.kills} kills ({result.seconds:.1f} s); LOST: "
        f"tasks {len(result.lost_tasks)}, events {len(result.lost_events)}; tasks with a replayed artifact "
        f"{len(result.extra_artifacts)}; duplicated deliveries {result.duplicates}"
    )
    for task_id, event in result.lost_events[:10]:
        print(f"  never delivered: {task_id} {event}")
    for task_id, extra in list(result.extra_artifacts.items())[:10]:
        print(f"  {task_id}: {extra} artifact(s) more than its one echo")
    return bool(result.lost_tasks or result.lost_events)


def report(out: Outcome) -> list[str]:
    plan, t = out.plan, out.timings
    accepted = {k: len(v) for k, v in out.accepted.items() if not k.startswith("context:")}
    lines = [
        f"accepted before the kill: {accepted.get('inflight', 0) + accepted.get('busy', 0)} slow tasks in flight "
        f"({plan.slow_ms} ms), {accepted.get('queued', 0)} queued messages, {accepted.get('pending', 0)} echo tasks "
        f"with deliveries pending retry; load took {t['load_s']:.2f} s, kill at {t['killed_after_s']:.2f} s",
        f"at the kill the DB held: tasks {out.at_kill['tasks']}, {out.at_kill['queued_waiting']} queued messages "
        f"waiting, outbox {out.at_kill['outbox']} ({out.at_kill['pending_retry']} pending retry); receiver: "
        f"{len(out.pending_at_kill)} deliveries answered 503 and not yet delivered",
        f"down {t['down_s']:.2f} s; restart → listening {t['listening_s']:.2f} s; → every task ended "
        f"{t['tasks_done_s']:.2f} s; → every pending delivery delivered {t['pending_delivered_s']:.2f} s; → every "
        f"event delivered {t['deliveries_done_s']:.2f} s",
        f"final states: {dict(out.final_states)}; WORKING pushed again after the restart for "
        f"{out.resumed_working_events} resumed task(s)",
        f"LOST: tasks {len(out.lost_tasks)}, unfinished {len(out.unfinished_tasks)}, queued {len(out.lost_queued)}, "
        f"pending deliveries {len(out.lost_pending)}, other events {len(out.lost_events)}; queued taken twice "
        f"{sum(out.taken_twice.values())}; states not allowed {len(out.disallowed_states)}",
        f"DUPLICATED deliveries (same webhook-id delivered twice, allowed by at-least-once): {out.duplicates}; "
        f"deliveries failing verification: {len(out.bad_deliveries)}; strays: {out.strays}",
    ]
    lines += [f"  problem: {p}" for p in out.problems()[:20]]
    return lines


if __name__ == "__main__":
    sys.exit(main())
