"""Failing-run speed: the full suites against the clean reference agent and against each plain
SDK peer, side by side, with the same options.

Each run is the runs room's command (``python -m pytest -p no:cacheprovider -q --junitxml=<file> --pyargs
nylorun_a2a_kit.suites --durations=10 --a2a-summary-dir=<tmp>``, plus ``-n N`` and ``--a2a-property-profile P``
when given; by default serial and the ``ci`` profile a user gets, which shrinks each property failure to its
smallest example) in a process of its own from the repository root, timed as a user's. The reference run has
no ``--target-url``, so the kit starts the embedded reference agent (which passes every check). A peer run adds
only where the target is and the push clock the embedded agent gets by itself:
``--target-url=<the peer's /a2a endpoint> --a2a-key=peer-key --a2a-push-time-scale=0.0001
--a2a-push-wait-s=5``. The peers are the plain SDK agents (``peers/python/agent.py --plain``,
``peers/js/agent.mjs --plain``), each started fresh on a free loopback port for its run. The runs go one after
another, never at once.

Reported per run: wall time, the checks (passed / skipped / xfailed / failed), the time the failed checks
took (JUnit, setup + call + teardown), the CPU the rest of the machine used meanwhile (a figure measured
while it is large is disturbed) and the ten slowest checks; then each peer's wall time over the reference's,
against the goal: a failing agent's run takes at most twice the clean one's. ``--dry-run`` prints each run's
command and starts nothing.

    .venv/bin/python -m benchmarks.failing_speed [--quick] [--peers python-plain js-plain] [-n N] [--dry-run]
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks import common, servers, timed

# --quick: the error checks and the property checks of GetTask and GetTaskPushNotificationConfig (failures that
# shrink on both peers), about a minute in all.
QUICK = ("suites/test_errors.py", "suites/test_properties.py", "-k", "test_errors or GetTask")
PEER_OPTIONS = ("--a2a-key=peer-key", "--a2a-push-time-scale=0.0001", "--a2a-push-wait-s=5")
GOAL_RATIO = 2.0
RUN_TIMEOUT_S = 3600
DRY_PEER_URL = "http://<peer>/a2a"  # where a peer would listen, in a dry run's commands


def run_args(label: str, shared: Sequence[str], peer_url: str | None = None) -> list[str]:
    """The arguments of the run named ``label``: every run's, and for a peer where it is."""
    peer = [f"--target-url={peer_url}", *PEER_OPTIONS] if peer_url is not None else []
    return ["--durations=10", *shared, *peer]


def run_suites(label: str, workdir: Path, args: list[str], peer_pids: list[int]) -> timed.Timed:
    """One timed run of the suites, the CPU of the peer's processes counted as its own."""
    return timed.run(label, args, workdir, watch=peer_pids, timeout_s=RUN_TIMEOUT_S)


def report(run: timed.Timed) -> list[str]:
    failed = run.failed()
    out = [
        f"{run.label}: {run.wall_s:.1f} s wall, {len(run.cases)} checks ({run.count('passed')} passed, "
        f"{run.count('skipped')} skipped, {run.count('xfailed')} xfailed, {len(failed)} failed); pytest exit "
        f"{run.returncode}; rest of the machine {run.other_cores:.2f} cores",
        f"  pytest: {run.closing()}",
        f"  command: {shlex.join(run.command)}",
        f"  sum of check times {sum(map(timed.seconds, run.cases)):.1f} s, of which the failed checks "
        f"{sum(map(timed.seconds, failed)):.1f} s; ten slowest:",
    ]
    out += [f"    {timed.seconds(c):7.2f} s  {timed.check_id(c)}  [{timed.outcome(c)}]" for c in run.slowest(10)]
    return out


def dry_run(work: Path, shared: Sequence[str], peers: Sequence[str]) -> int:
    """Each run's command, as it would start (a peer's URL is known once it listens)."""
    for label, url in [("reference", None), *((name, DRY_PEER_URL) for name in peers)]:
        args = run_args(label, shared, url)
        print(f"run {label}: {shlex.join(timed.spelt(label, args, work))}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python -m benchmarks.failing_speed", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=f"only {' '.join(QUICK)}")
    p.add_argument("--peers", nargs="+", choices=sorted(servers.PLAIN_PEERS), default=sorted(servers.PLAIN_PEERS))
    p.add_argument("-n", "--workers", type=int, default=0, help="pytest-xdist workers for every run (default serial)")
    p.add_argument("--a2a-property-profile", default=None, help="for every run (default: the kit's, ci)")
    p.add_argument("--keep", type=Path, help="keep each run's log, JUnit XML and summary in this directory")
    p.add_argument("--dry-run", action="store_true", help="print each run's command and start nothing")
    args = p.parse_args(argv)
    shared = list(QUICK if args.quick else ())
    if args.workers:
        shared += ["-n", str(args.workers)]
    if args.a2a_property_profile:
        shared.append(f"--a2a-property-profile={args.a2a_property_profile}")
    print(f"machine: {common.machine_line()}")
    print(f"reproduce: {common.reproduce('benchmarks.failing_speed', argv)}")
    print(f"options of every run: {shlex.join(shared) or '(none: the full suites, serial, property profile ci)'}")
    print(f"a peer run adds: --target-url=<peer>/a2a {' '.join(PEER_OPTIONS)}")
    results: list[timed.Timed] = []
    with contextlib.ExitStack() as stack:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            work = args.keep
        else:
            work = stack.enter_context(common.workdir("failing-speed-"))
        if args.dry_run:
            return dry_run(work, shared, args.peers)
        reference = run_suites("reference", work, run_args("reference", shared), [])
        results.append(reference)
        print()
        print("\n".join(report(reference)))
        for name in args.peers:
            if servers.PEERS[name][0] == "node" and (
                shutil.which("node") is None or not (common.REPO / "node_modules" / "@a2a-js" / "sdk").is_dir()
            ):
                print(f"\n{name}: not run (Node.js or `npm ci` missing)")
                continue
            with servers.peer(work, name) as peer:
                run = run_suites(name, work, run_args(name, shared, peer.url), [peer.pid])
            results.append(run)
            print()
            print("\n".join(report(run)))
    base = reference.wall_s
    rows = [[r.label, f"{r.wall_s:.1f}", len(r.cases), len(r.failed()), f"{r.wall_s / base:.2f}"] for r in results]
    print()
    print(common.table(["run", "wall s", "checks", "failed", "× reference"], rows))
    for run in results[1:]:
        verdict = "meets" if run.wall_s / base <= GOAL_RATIO else "misses"
        print(f"{run.label}: {run.wall_s / base:.2f} × the reference run; {verdict} the goal of ≤ {GOAL_RATIO:g} ×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
