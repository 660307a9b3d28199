"""A Runtime far away, judged at its own speed: the suites with ``-n auto`` on loopback, then against the embedded
agent 100 ms away (``allowed/answer/distant``), then 100 ms away with turns of 2 s (``allowed/turn/slow`` too).

Each run is the command a user types (cold, in a process of its own), with the kit's own default: ``-n auto``, which
times the target and sizes the run (the header's ``a2a workers:`` line is printed). Reported per run: wall time, the
workers chosen, cases by outcome, and every check whose outcome differs from the loopback run's. The goal (issue
44): the far run with slow turns within 3× the loopback run, with the same verdicts. Exit 1 when a verdict differs or
the goal is missed.

    .venv/bin/python -m benchmarks.remote_pace [--goal 3] [--dry-run]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks import common, timed

RUNS = (
    ("loopback", ()),
    ("100ms", ("allowed/answer/distant",)),
    ("100ms-2s-turns", ("allowed/answer/distant", "allowed/turn/slow")),
)


def args_of(mutants: tuple[str, ...]) -> list[str]:
    return ["-n", "auto", *([f"--a2a-reference-mutant={','.join(mutants)}"] if mutants else [])]


def workers_line(run: timed.Timed) -> str:
    lines = [line for line in run.outcomes.output.splitlines() if line.startswith("a2a workers:")]
    return lines[0].removeprefix("a2a workers: ") if lines else "(no a2a workers line: -n auto was not sized)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--goal", type=float, default=3.0, help="the far run's most, in loopback runs (default 3)")
    parser.add_argument("--dry-run", action="store_true", help="print each run's command and start nothing")
    options = parser.parse_args(argv)
    if options.dry_run:
        for label, mutants in RUNS:
            print(f"{label}: {' '.join(timed.spelt(label, args_of(mutants), Path('OUT')))}")
        return 0
    print(common.machine_line(), flush=True)
    failed = False
    with common.workdir("remote-pace-") as where:
        done: dict[str, timed.Timed] = {}
        for label, mutants in RUNS:
            run = done[label] = timed.run(label, args_of(mutants), Path(where))
            base = done["loopback"]
            differ = [
                f"{test}: {base.outcomes.outcomes.get(test, 'absent')} → {run.outcomes.outcomes.get(test, 'absent')}"
                for test in sorted(set(base.outcomes.outcomes) | set(run.outcomes.outcomes))
                if base.outcomes.outcomes.get(test) != run.outcomes.outcomes.get(test)
            ]
            ratio = run.wall_s / base.wall_s
            print(
                f"{label:15} {run.wall_s:6.1f} s  {ratio:4.2f}× loopback  exit {run.returncode}  {run.closing()}\n"
                f"{'':15} {workers_line(run)}; {len(differ)} verdicts differ from loopback's",
                flush=True,
            )
            for line in differ[:20]:
                print(f"{'':15}   {line}")
            failed |= bool(differ) or run.returncode != base.returncode
        ratio = done["100ms-2s-turns"].wall_s / done["loopback"].wall_s
        met = ratio <= options.goal
        verdict = "met" if met else "missed"
        print(f"goal: 100 ms away with 2 s turns within {options.goal:g}× loopback: {ratio:.2f}× ({verdict})")
        failed |= not met
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
