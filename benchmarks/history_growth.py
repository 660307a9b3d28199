"""History growth: the gate against the reference agent holding 0, 10,000 and 100,000 earlier tasks and turns.

For each size a database is seeded (``tests/history.py``): the kit's subject, its second subject and a
third caller of the same Tenant take turns, each earlier task an ended turn in one of 500 old conversations of
its subject, as a staging Runtime holds every earlier release check's. The reference agent is started on it as
the gate's example agent is (a process of its own, push on a test clock, the kit's credentials), and the gate
runs against it: ``nylorun-a2a-release --no-html --out <dir> -- <the agent, as options> -n 2 -p no:randomly``,
timed as a user's (``benchmarks.timed``), its checks read from the JUnit the gate writes into ``<dir>``.
The sizes run one after another, each ``--repeat`` times; the fastest of each is the figure.

Reported per size: the seeding time, the gate's wall time, its verdict, the checks by outcome, whether every
check's outcome is the fresh run's, the change feed's checks' time (JUnit), and the wall time over the fresh
run's. The goal: at 100,000 earlier tasks within 1.10× of the fresh run.

    .venv/bin/python -m benchmarks.history_growth [--quick] [--sizes 0,10000,100000] [-n 2] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks import common, timed
from nylorun_a2a_kit.fixtures.gate.example_agent import ExampleAgent, example_agent
from nylorun_a2a_kit.fixtures.target import embedded
from tests.history import History, seed

EDGE = Path(sys.executable).parent / "nylorun-a2a-release"
SUBJECTS = ("a2a:conformance", embedded.OTHER_SUBJECT, "a2a:another-caller")
GOAL_RATIO = 1.10
GOAL_SIZE = 100_000
RUN_TIMEOUT_S = 1800


@dataclass
class GateRun:
    run: timed.Timed
    verdict: str
    size: int = 0
    seed_s: float = 0.0

    @property
    def label(self) -> str:
        return self.run.label

    @property
    def wall_s(self) -> float:
        return self.run.wall_s

    @property
    def returncode(self) -> int:
        return self.run.returncode

    def outcomes(self) -> dict[str, str]:
        return {timed.check_id(case): timed.outcome(case) for case in self.run.cases}

    def seconds(self) -> dict[str, float]:
        return {timed.check_id(case): timed.seconds(case) for case in self.run.cases}

    def counts(self) -> str:
        counted = Counter(self.outcomes().values())
        return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counted.items()))

    def feed_s(self) -> float:
        return sum(s for check, s in self.seconds().items() if check.startswith("suites/test_change_feed.py::"))


def gate_run(size: int, workers: int, workdir: Path, extra: list[str], attempt: int = 1) -> GateRun:
    """Seed a database with ``size`` earlier tasks, start the agent on it, run the gate; its figures."""
    db = workdir / f"history-{size}-{attempt}.sqlite3"
    seed_s = seed(db, History(size, "support", SUBJECTS)) if size else 0.0
    with example_agent(0, db=db) as agent:
        run = run_gate(agent, f"gate-{size}-{attempt}", workers, workdir, extra)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    run.size, run.seed_s = size, seed_s
    return run


def run_gate(agent: ExampleAgent, label: str, workers: int, workdir: Path, extra: list[str]) -> GateRun:
    """The gate against ``agent``, its receivers on the agent's first ports; its wall time, verdict and checks."""
    out = workdir / label
    options, environment = agent.run_options(0, workers)
    command = [str(EDGE), "--no-html", "--out", str(out), "--", *options, "-n", str(workers), "-p", "no:randomly"]
    run = timed.run_command(
        label, [*command, *extra], out / "junit.xml", workdir, env=environment, timeout_s=RUN_TIMEOUT_S
    )
    summary = out / "summary.json"
    verdict = json.loads(summary.read_text(encoding="utf-8"))["verdict"] if summary.exists() else "(no summary)"
    return GateRun(run, verdict)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m benchmarks.history_growth", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="0 and 10,000 earlier tasks, the feed's checks only")
    parser.add_argument("--sizes", help="comma-separated counts of earlier tasks (default 0,10000,100000)")
    parser.add_argument("-n", "--workers", type=int, default=2, help="the gate's xdist workers (default 2)")
    parser.add_argument("--repeat", type=int, help="runs per size; the fastest is the figure (default 2; quick 1)")
    args = common.parse(parser, argv, defaults={"sizes": ("0,10000", "0,10000,100000"), "repeat": (1, 2)})
    common.print_heading("benchmarks.history_growth", argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    feed = "FEED-01,FEED-02,FEED-03,FEED-04,FEED-05,FEED-06,FEED-07,FEED-08,FEED-09"
    extra = [f"--a2a-req={feed}", "--a2a-enforce-claim=no"] if args.quick else []  # a part: no tier is claimed
    runs: dict[int, GateRun] = {}
    with common.workdir("history-growth-") as workdir:
        for size in sizes:
            tries = [gate_run(size, args.workers, workdir, extra, n + 1) for n in range(args.repeat)]
            runs[size] = min(tries, key=lambda run: run.wall_s)
            for run in tries:
                failed = [timed.check_id(case) for case in run.run.failed()]
                shown = f"; failed: {', '.join(failed)}" if failed else ""
                print(f"{size:,} earlier tasks: {run.wall_s:.1f} s wall; verdict {run.verdict}; {run.counts()}{shown}")
            flaky = [run for run in tries if run.outcomes() != tries[0].outcomes()]
            if flaky:
                runs[size].verdict = f"{runs[size].verdict}; outcomes differ between repeats"
    return report(runs, sizes)


def report(runs: dict[int, GateRun], sizes: list[int]) -> int:
    fresh = runs[sizes[0]]
    rows, problems = [], []
    for size in sizes:
        run = runs[size]
        same = run.outcomes() == fresh.outcomes()
        ratio = run.wall_s / fresh.wall_s
        figures = [f"{size:,}", f"{run.seed_s:.1f}", f"{run.wall_s:.1f}", f"{ratio:.2f}×", f"{run.feed_s():.1f}"]
        rows.append([*figures, run.verdict, "yes" if same else "NO", run.counts()])
        if not same:
            changed = sorted(
                k
                for k in set(run.outcomes()) | set(fresh.outcomes())
                if run.outcomes().get(k) != fresh.outcomes().get(k)
            )
            problems.append(f"{size:,}: outcomes differ from the fresh run's: {changed[:10]}")
        if run.returncode != 0 or run.verdict != "pass":
            problems.append(f"{size:,}: the gate exited {run.returncode} with verdict {run.verdict}")
    headers = ["earlier tasks", "seed s", "gate wall s", "/ fresh", "feed checks s", "verdict", "same outcomes"]
    print("\n" + common.table([*headers, "checks"], rows))
    grown = _grown(fresh, runs[sizes[-1]])
    print(f"\nchecks that took longest beside the fresh run's, at {sizes[-1]:,} (JUnit seconds, theirs − fresh):")
    for nodeid, then, now in grown:
        print(f"  {now - then:+6.2f} s  {nodeid} ({then:.2f} → {now:.2f})")
    goal_size = GOAL_SIZE if GOAL_SIZE in runs else None
    ratio = runs[goal_size].wall_s / fresh.wall_s if goal_size else None
    if ratio is None:
        print(f"goal: {GOAL_SIZE:,} earlier tasks within {GOAL_RATIO:.2f}× of the fresh run — not run at these sizes")
    else:
        verdict = "met" if ratio <= GOAL_RATIO else "missed"
        print(f"goal: {GOAL_SIZE:,} earlier tasks within {GOAL_RATIO:.2f}× of the fresh run — {ratio:.2f}×, {verdict}")
    common.print_problems(problems, "every size's gate passed with the fresh run's outcomes")
    return 1 if problems or (ratio is not None and ratio > GOAL_RATIO) else 0


def _grown(fresh: GateRun, run: GateRun, count: int = 8) -> list[tuple[str, float, float]]:
    """The checks whose time grew most from ``fresh`` to ``run``: (check, seconds then, seconds now)."""
    then = fresh.seconds()
    pairs = [(check, then.get(check, 0.0), now) for check, now in run.seconds().items()]
    return sorted(pairs, key=lambda pair: pair[2] - pair[1], reverse=True)[:count]


if __name__ == "__main__":
    sys.exit(main())
