"""Mutation score: the suites against the reference agent's mutants, the kill rate per axis, every survivor.

By default, a seeded sample of the **source mutants** (``reference_agent/mutants/source.py``: the agent's own code
mutated one place at a time, mutmut's operators on its Python, the kit's on its SQL), stratified by operator and
module: each operator gets an equal share, spread over the modules it occurs in. A hits run records which checks
reach each function of the agent; each mutant then runs those checks, fastest first, fail-fast (``-x``), forked warm
from a process that has loaded the suites once; verdicts are cached by the mutant and the code it ran against
(``.mutation-cache/``). Reported: the kill rate per module and per operator over the mutants that are neither
equivalent nor unobservable (goal: 90 %), and every survivor with its class from
``reference_agent/mutants/survivors.toml``: *equivalent* (the rule read that allows it), *unobservable* to a
black-box client (why), or *unclassified* (a gap in the checks, until a check of its rule's whole class kills it).

With ``--axis`` (a derived axis: channel, spelling, several, combined, read, allowed):

Each mutant (``reference_agent/mutants/``, a seeded sample of each axis where the axis is large) is judged by the
kit's mutation engine (``fixtures/mutation``, as ``nylorun-a2a-mutants run`` judges it): its own embedded reference
agent, ``pytest --a2a-reference-mutant=NAME``, fail-fast, forked warm from a process that has loaded the suites once,
its verdict cached in ``.mutation-cache/`` by the mutant and the code (the score is the verdicts, not their time):

- a mutant that breaks requirements: first the checks of those requirements (strict SHOULD: a SHOULD not met
  kills too); one they let live, then the whole suites (``-n auto``), which name any other check that kills it.
  A mutant no check kills is a survivor: a gap in the kit's checks.
- an equivalent mutant (no rule forbids it): the checks of the requirements whose rules were read, and with
  ``--equivalents-full`` the whole suites: every one must pass it. One that a check fails is a wrong verdict of
  the kit, reported as such (it fails a correct Agent), never counted as a kill.

Reported: per axis the mutants derived and run, equivalent and not, killed (by their own requirements' checks, or
by another check), survived, and the kill rate over the non-equivalent ones (goal: 95 % on every axis); every
survivor, and every equivalent with its reason and its verdict; the wall time.

    .venv/bin/python -m benchmarks.mutation_score [--source-sample 320] [--seed 1] [-j 2]
    .venv/bin/python -m benchmarks.mutation_score [--quick] [--sample 60] [--seed 1] [-j 2] [--axis channel]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from benchmarks import common, source_score
from nylorun_a2a_kit.fixtures import mutation
from nylorun_a2a_kit.fixtures.mutation import Verdict
from nylorun_a2a_kit.reference_agent.mutants import AXES, Mutant

GOAL = 0.95
SOURCE_GOAL = 0.90
RUN_TIMEOUT_S = 1200


def judge(mutant: Mutant, workdir: Path, store: mutation.Cache, equivalents_full: bool) -> Verdict:
    """The engine's verdict: a breaking mutant's own checks, then the whole suites when they let it live; an
    equivalent one's checks of the rules read (and with ``equivalents_full`` the whole suites)."""
    full = equivalents_full if mutant.equivalent else True
    return mutation.judge(mutation.deviation(mutant), common.REPO, workdir, store, full=full, timeout_s=RUN_TIMEOUT_S)


def sampled(mutants: dict[str, Mutant], axes: list[str], size: int, seed: int) -> list[Mutant]:
    """Each axis's mutants, a seeded sample of ``size`` of those of an axis with more (``size`` 0: every one)."""
    chosen = []
    for axis in axes:
        of_axis = [m for m in mutants.values() if m.axis == axis]
        chosen += random.Random(f"{seed}:{axis}").sample(of_axis, size) if 0 < size < len(of_axis) else of_axis
    return chosen


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutation_score", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="six mutants an axis, equivalents on their own rules only")
    parser.add_argument("--sample", type=int, default=60, help="mutants an axis at most, seeded (0: all; default 60)")
    parser.add_argument("--seed", type=int, default=1, help="the sample's seed (default 1)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument(
        "--axis", action="append", choices=list(AXES), help="only this axis (repeatable; default: source)"
    )
    parser.add_argument(
        "--source-sample", type=int, default=320, help="source mutants sampled, seeded (0: all; default 320)"
    )
    parser.add_argument("--json", help="write every verdict to this file")
    parser.add_argument("--from-json", help="source axis: report the verdicts a run wrote (--json), run nothing")
    parser.add_argument(
        "--equivalents-full",
        action=argparse.BooleanOptionalAction,
        help="run the whole suites against each equivalent mutant too (default: yes; quick: no)",
    )
    args = parser.parse_args(argv)
    if args.quick and "--sample" not in " ".join(argv):
        args.sample = 6
    if args.equivalents_full is None:
        args.equivalents_full = not args.quick
    common.print_heading("benchmarks.mutation_score", argv)
    if args.axis is None and not args.quick:
        args.axis = ["source"]
    if args.axis == ["source"]:
        return source_score.main(args)
    mutants = mutation.registry()
    # The allowed and setup axes have nothing to kill: their variations and setups are proven passed by the kit's own
    # tests (tests/test_variations.py, tests/test_setups.py); the quick score leaves them to those.
    axes = [a for a in args.axis or AXES if a != "source" and not (args.quick and a in ("allowed", "setup"))]
    chosen = sampled(mutants, axes, args.sample, args.seed)
    print(f"{len(mutants)} mutants derived; {len(chosen)} run ({', '.join(axes)}), {args.jobs} at once", flush=True)
    started = time.perf_counter()
    store = mutation.Cache(mutation.default_cache_dir() / "verdicts.sqlite3")
    with common.workdir("mutation-score-") as workdir, ThreadPoolExecutor(max_workers=args.jobs) as pool:
        verdicts = list(pool.map(lambda m: _reported(judge(m, workdir, store, args.equivalents_full)), chosen))
    wall = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(v) for v in verdicts], indent=2) + "\n", encoding="utf-8")
    return report(mutants, verdicts, axes, wall)


def _reported(verdict: Verdict) -> Verdict:
    by = f" — {verdict.by[0]}" if verdict.by else ""
    print(f"  {verdict.outcome:24} {verdict.name} ({verdict.seconds:.1f} s){by}", flush=True)
    return verdict


def report(mutants: dict[str, Mutant], verdicts: list[Verdict], axes: list[str], wall: float) -> int:
    rows, problems = [], []
    for axis in axes:
        mine = [v for v in verdicts if v.axis == axis]
        real = [v for v in mine if not v.equivalent]
        killed = [v for v in real if v.outcome.startswith("killed")]
        rate = len(killed) / len(real) if real else 1.0
        own = sum(v.outcome == "killed" for v in real)
        counts = [sum(m.axis == axis for m in mutants.values()), len(mine), len(mine) - len(real), len(real)]
        shown = f"{rate:.0%}" if real else "- (all equivalent)"
        rows.append([axis, *counts, own, len(killed) - own, len(real) - len(killed), shown])
        if rate < GOAL:
            problems.append(f"{axis}: kill rate {rate:.0%} under the goal {GOAL:.0%}")
    headers = ["axis", "derived", "run", "equivalent", "not", "killed", "by another", "survived", "kill rate"]
    print("\n" + common.table(headers, rows))
    survivors = [v for v in verdicts if v.outcome == "survived"]
    print(f"\nsurvivors ({len(survivors)}):" if survivors else "\nsurvivors: none")
    for verdict in survivors:
        print(f"  {verdict.name}: no check kills it; it breaks {', '.join(mutants[verdict.name].breaks)}")
        problems.append(f"{verdict.name} survived")
    equivalents = [v for v in verdicts if v.equivalent]
    print(f"\nequivalent mutants ({len(equivalents)}), each passed by the checks of the rules read:")
    for verdict in equivalents:
        one = mutants[verdict.name]
        print(
            f"  {verdict.outcome:6} {verdict.name} ({', '.join(verdict.runs)}; {', '.join(one.read)} read): "
            f"{one.equivalent}"
        )
        if verdict.outcome == "WRONG":
            problems.append(f"{verdict.name} is equivalent, yet {verdict.by[0]} fails it: a wrong verdict of the kit")
    minutes = wall / 60
    print(f"\nwall time: {minutes:.1f} min for {len(verdicts)} mutants")
    common.print_problems(problems, f"every axis at {GOAL:.0%} or above; every equivalent mutant passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
