"""The mutation score's source axis: a stratified sample of the agent's source mutants, judged by the mutation room.

Run through ``python -m benchmarks.mutation_score`` (its default); see that module for what is reported.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from benchmarks import common
from nylorun_a2a_kit.fixtures import mutation
from nylorun_a2a_kit.reference_agent.mutants import Mutant, source

GOAL = 0.90
# How a verdict counts: a killed mutant (by a check, or by running past its time), one the score leaves out (it is no
# mutant, or one no black-box client can tell), or a survivor.
KILLED = ("killed", "timeout")


def operator_of(mutant: Mutant) -> str:
    return mutant.name.rsplit("/", 1)[1].rsplit("-", 1)[0]


def sampled(mutants: dict[str, Mutant], size: int, seed: int) -> list[Mutant]:
    """``size`` mutants (0: all): each operator an equal share (what a small one lacks goes to the others), and
    within an operator the modules in turn, each module's drawn at random (seeded)."""
    if size <= 0 or size >= len(mutants):
        return list(mutants.values())
    by_operator: dict[str, dict[str, list[Mutant]]] = defaultdict(lambda: defaultdict(list))
    for one in mutants.values():
        by_operator[operator_of(one)][source.module_of(one.name)].append(one)
    shares = _shares({op: sum(map(len, modules.values())) for op, modules in by_operator.items()}, size)
    chosen: list[Mutant] = []
    for operator in sorted(by_operator):
        rng = random.Random(f"{seed}:{operator}")
        pools = {module: rng.sample(found, len(found)) for module, found in sorted(by_operator[operator].items())}
        taken: list[Mutant] = []
        while len(taken) < shares[operator]:
            for module in list(pools):
                if pools[module] and len(taken) < shares[operator]:
                    taken.append(pools[module].pop())
        chosen += taken
    return chosen


def _shares(sizes: dict[str, int], total: int) -> dict[str, int]:
    shares = dict.fromkeys(sizes, 0)
    left = total
    while left > 0:
        open_ = [op for op in sorted(sizes) if shares[op] < sizes[op]]
        if not open_:
            break
        each = max(1, left // len(open_))
        for op in open_:
            step = min(each, sizes[op] - shares[op], left)
            shares[op] += step
            left -= step
    return shares


def main(args: argparse.Namespace) -> int:
    mutants = source.catalog()
    if args.from_json:  # the report again, from a run's verdicts, with the survivors' classes as they are now
        verdicts = [mutation.Verdict(**one) for one in json.loads(Path(args.from_json).read_text(encoding="utf-8"))]
        return report(mutants, verdicts, 0.0)
    chosen = sampled(mutants, args.source_sample, args.seed)
    print(
        f"{len(mutants)} source mutants made; {len(chosen)} sampled (seed {args.seed}), {args.jobs} at once", flush=True
    )
    started = time.perf_counter()
    cache_dir = mutation.default_cache_dir()
    digest = mutation.code_digest(common.REPO)
    reach = mutation.reach(common.REPO, cache_dir, digest)
    print(f"hits run: {len(reach.reached)} checks reach the agent ({time.perf_counter() - started:.0f} s)", flush=True)
    store = mutation.Cache(cache_dir / "verdicts.sqlite3")
    with common.workdir("mutation-score-") as workdir, ThreadPoolExecutor(max_workers=args.jobs) as pool:

        def judged(one: Mutant) -> mutation.Verdict:
            return _reported(mutation.judge_source(one, reach, common.REPO, workdir, store, digest))

        verdicts = list(pool.map(judged, chosen))
    wall = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(v) for v in verdicts], indent=2) + "\n", encoding="utf-8")
    return report(mutants, verdicts, wall)


def _reported(verdict: mutation.Verdict) -> mutation.Verdict:
    by = f" — {verdict.by[0]}" if verdict.by else ""
    cached = ", cached" if verdict.cached else ""
    setups = f", setups {' / '.join(verdict.setups)}" if verdict.setups else ""
    print(
        f"  {verdict.outcome:15} {verdict.name} ({verdict.seconds:.1f} s, {verdict.checks} checks{cached}{setups}){by}"
    )
    return verdict


def counted(mutant: Mutant, verdict: mutation.Verdict) -> str:
    """killed | equivalent | unobservable | not applicable | survived (a gap)."""
    if verdict.outcome in KILLED:
        return "killed"
    if verdict.outcome in ("not applicable", "error"):
        return "not applicable"
    if mutant.equivalent:
        return "equivalent"
    if mutant.unobservable:
        return "unobservable"
    return "survived"


def report(mutants: dict[str, Mutant], verdicts: list[mutation.Verdict], wall: float) -> int:
    classes = {v.name: counted(mutants[v.name], v) for v in verdicts}
    problems: list[str] = []
    for title, key in (
        ("module", lambda v: source.module_of(v.name)),
        ("operator", lambda v: operator_of(mutants[v.name])),
    ):
        groups: dict[str, list[mutation.Verdict]] = defaultdict(list)
        for verdict in verdicts:
            groups[key(verdict)].append(verdict)
        rows = [_row(name, groups[name], classes) for name in sorted(groups)]
        rows.append(_row("all", verdicts, classes))
        headers = [title, "run", "killed", "equivalent", "unobservable", "not applicable", "survived", "kill rate"]
        print("\n" + common.table(headers, rows))
    total = _rate(verdicts, classes)
    weighted, low, high = weighted_rate(mutants, verdicts, classes)
    if weighted is not None:
        print(
            f"\nweighted by each operator's population ({len(mutants)} mutants): {weighted:.1%}, 95 % interval "
            f"{low:.1%}–{high:.1%} (a stratified bootstrap of the sample, {BOOTSTRAPS} draws, seeded)"
        )
    if total is not None and total < GOAL:
        problems.append(f"source kill rate {total:.1%} under the goal {GOAL:.0%}")
    if weighted is not None and weighted < GOAL:
        problems.append(f"source kill rate weighted by population {weighted:.1%} under the goal {GOAL:.0%}")
    wrong = [
        v.name for v in verdicts if v.outcome in KILLED and (mutants[v.name].equivalent or mutants[v.name].unobservable)
    ]
    for name in wrong:
        problems.append(
            f"{name} is classed {'equivalent' if mutants[name].equivalent else 'unobservable'}, yet a check killed "
            "it: a wrong class"
        )
    stale = source.stale_survivors()
    for name, why in sorted(stale.items()):
        problems.append(f"survivors.toml classes {name}, whose {why}: read it again")
    for kind in ("survived", "equivalent", "unobservable", "not applicable"):
        mine = [v for v in verdicts if classes[v.name] == kind]
        print(f"\n{kind} ({len(mine)}):" if mine else f"\n{kind}: none")
        for verdict in mine:
            one = mutants[verdict.name]
            where = source.place(one.name)
            why = one.equivalent or one.unobservable or (verdict.by[0] if verdict.by else "no check fails it")
            reached = "no check reaches it" if verdict.outcome == "not reached" else f"{verdict.checks} checks ran"
            print(f"  {one.name} ({reached}): {where.before} → {where.after}\n      {why}")
            if kind == "survived":
                problems.append(f"{one.name} survived, unclassified")
    broken = [v.name for v in verdicts if v.outcome == "error"]
    if broken:
        problems.append(f"{len(broken)} runs broke (pytest exit 2 or 3), no verdict: {', '.join(broken[:5])}")
    runs = [v.seconds for v in verdicts if not v.cached and v.outcome not in ("not reached", "not applicable")]
    if runs:
        print(f"\none mutant's run: median {sorted(runs)[len(runs) // 2]:.1f} s, longest {max(runs):.1f} s")
    if wall:
        cached = sum(v.cached for v in verdicts)
        print(f"wall time: {wall / 60:.1f} min for {len(verdicts)} mutants ({cached} cached)")
    common.print_problems(problems, f"source kill rate at {GOAL:.0%} or above; every survivor classified")
    return 1 if problems else 0


BOOTSTRAPS = 2000


def weighted_rate(
    mutants: dict[str, Mutant], verdicts: list[mutation.Verdict], classes: dict[str, str]
) -> tuple[float | None, float, float]:
    """The kill rate of the whole population, each operator's sample weighted by how many mutants it stands for (a
    ratio estimator: the killed and the counted of each stratum scaled to its population), and a 95 % interval from
    a bootstrap that redraws each stratum's sample."""
    population: dict[str, int] = defaultdict(int)
    for one in mutants.values():
        population[operator_of(one)] += 1
    strata: dict[str, list[str]] = defaultdict(list)
    for verdict in verdicts:
        strata[operator_of(mutants[verdict.name])].append(classes[verdict.name])

    def estimate(drawn: dict[str, list[str]]) -> float | None:
        killed = sum(population[op] * found.count("killed") / len(found) for op, found in drawn.items() if found)
        counted_ = sum(
            population[op] * sum(c in ("killed", "survived") for c in found) / len(found)
            for op, found in drawn.items()
            if found
        )
        return killed / counted_ if counted_ else None

    point = estimate(strata)
    if point is None:
        return None, 0.0, 0.0
    rng = random.Random(1)
    draws = sorted(
        e
        for e in (
            estimate({op: rng.choices(found, k=len(found)) for op, found in strata.items()}) for _ in range(BOOTSTRAPS)
        )
        if e is not None
    )
    return point, draws[int(0.025 * len(draws))], draws[int(0.975 * len(draws)) - 1]


def _rate(verdicts: list[mutation.Verdict], classes: dict[str, str]) -> float | None:
    counted_ = [classes[v.name] for v in verdicts if classes[v.name] in ("killed", "survived")]
    return counted_.count("killed") / len(counted_) if counted_ else None


def _row(name: str, verdicts: list[mutation.Verdict], classes: dict[str, str]) -> list:
    found = [classes[v.name] for v in verdicts]
    rate = _rate(verdicts, classes)
    kinds = ("killed", "equivalent", "unobservable", "not applicable", "survived")
    return [name, len(found), *(found.count(k) for k in kinds), "-" if rate is None else f"{rate:.0%}"]
