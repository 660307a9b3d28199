"""Failing-run speed: the full suites against the clean reference agent and against each plain
SDK peer, side by side, with the same options.

Each run is ``.venv/bin/pytest -q -p no:cacheprovider --durations=10 --junitxml=<file> --a2a-summary-dir=<tmp>``
(plus ``-n N`` and ``--a2a-property-profile P`` when given; by default serial and the ``ci`` profile a user gets,
which shrinks each property failure to its smallest example) in a subprocess from the repository root. The
reference run has no ``--target-url``, so the kit starts the embedded reference agent (which passes every
check). A peer run adds only where the target is and the push clock the embedded agent gets by itself:
``--target-url=<the peer's /a2a endpoint> --a2a-key=peer-key --a2a-push-time-scale=0.0001
--a2a-push-wait-s=5``. The peers are the plain SDK agents (``peers/python/agent.py --plain``,
``peers/js/agent.mjs --plain``), each started fresh on a free loopback port for its run. The runs go one after
another, never at once.

Reported per run: wall time, the checks (passed / skipped / xfailed / failed), the time the failed checks
took (JUnit, setup + call + teardown), the CPU the rest of the machine used meanwhile (a figure measured
while it is large is disturbed) and the ten slowest checks; then each peer's wall time over the reference's,
against the goal: a failing agent's run takes at most twice the clean one's.

    .venv/bin/python -m benchmarks.failing_speed [--quick] [--peers python-plain js-plain] [-n N]
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import common, servers
from benchmarks.suite_speed import REPO, Run, logged_to, parse_junit, pytest_run

# --quick: the error checks and the property checks of GetTask and GetTaskPushNotificationConfig (failures that
# shrink on both peers), about a minute in all.
QUICK = ("suites/test_errors.py", "suites/test_properties.py", "-k", "test_errors or GetTask")
PEER_OPTIONS = ("--a2a-key=peer-key", "--a2a-push-time-scale=0.0001", "--a2a-push-wait-s=5")
GOAL_RATIO = 2.0
RUN_TIMEOUT_S = 3600
# pytest's closing line ("38 failed, 89 passed, 239 skipped in 469.12s (0:07:49)"), wherever the log puts it.
CLOSING = re.compile(r"^=*\s*(\d+ \w+(, )?)+ in [\d.]+s")


def run_suites(label: str, workdir: Path, args: list[str], peer_pids: list[int]) -> tuple[Run, float]:
    """One pytest run of the suites; its Run and the CPU (in cores) the rest of the machine used meanwhile."""
    command, junit = pytest_run(label, workdir)
    command += args
    log = workdir / f"{label}.log"
    with open(log, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, **logged_to(out))
        watch = common.CpuWatch([process.pid, *peer_pids])
        try:
            returncode = process.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            returncode = process.wait()
        wall = time.perf_counter() - started
        other = watch.other_cores()
    closing = [line for line in log.read_text(errors="replace").splitlines() if CLOSING.match(line)]
    run = Run(label, command, wall, returncode, summary=closing[-1].strip("= ") if closing else "(no closing line)")
    run.cases = parse_junit(junit) if junit.exists() else []
    return run, other


def report(run: Run, other_cores: float) -> list[str]:
    failed = [c for c in run.cases if c.outcome in ("failed", "error")]
    out = [
        f"{run.label}: {run.wall_s:.1f} s wall, {len(run.cases)} checks ({run.count('passed')} passed, "
        f"{run.count('skipped')} skipped, {run.count('xfailed')} xfailed, {len(failed)} failed); pytest exit "
        f"{run.returncode}; rest of the machine {other_cores:.2f} cores",
        f"  pytest: {run.summary}",
        f"  command: {shlex.join(run.command)}",
        f"  sum of check times {sum(c.seconds for c in run.cases):.1f} s, of which the failed checks "
        f"{sum(c.seconds for c in failed):.1f} s; ten slowest:",
    ]
    out += [
        f"    {c.seconds:7.2f} s  {c.nodeid}  [{c.outcome}]" for c in sorted(run.cases, key=lambda c: -c.seconds)[:10]
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python -m benchmarks.failing_speed", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=f"only {' '.join(QUICK)}")
    p.add_argument("--peers", nargs="+", choices=sorted(servers.PLAIN_PEERS), default=sorted(servers.PLAIN_PEERS))
    p.add_argument("-n", "--workers", type=int, default=0, help="pytest-xdist workers for every run (default serial)")
    p.add_argument("--a2a-property-profile", default=None, help="for every run (default: the kit's, ci)")
    p.add_argument("--keep", type=Path, help="keep each run's log, JUnit XML and summary in this directory")
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
    results: list[tuple[Run, float]] = []
    with contextlib.ExitStack() as stack:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            work = args.keep
        else:
            work = stack.enter_context(common.workdir("failing-speed-"))
        reference = run_suites("reference", work, shared, [])
        results.append(reference)
        print()
        print("\n".join(report(*reference)))
        for name in args.peers:
            if servers.PEERS[name][0] == "node" and (
                shutil.which("node") is None or not (REPO / "node_modules" / "@a2a-js" / "sdk").is_dir()
            ):
                print(f"\n{name}: not run (Node.js or `npm ci` missing)")
                continue
            with servers.peer(work, name) as peer:
                run = run_suites(name, work, [*shared, f"--target-url={peer.url}", *PEER_OPTIONS], [peer.pid])
            results.append(run)
            print()
            print("\n".join(report(*run)))
    base = reference[0].wall_s
    rows = [
        [r.label, f"{r.wall_s:.1f}", len(r.cases), r.count("failed") + r.count("error"), f"{r.wall_s / base:.2f}"]
        for r, _ in results
    ]
    print()
    print(common.table(["run", "wall s", "checks", "failed", "× reference"], rows))
    for run, _ in results[1:]:
        verdict = "meets" if run.wall_s / base <= GOAL_RATIO else "misses"
        print(f"{run.label}: {run.wall_s / base:.2f} × the reference run; {verdict} the goal of ≤ {GOAL_RATIO:g} ×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
