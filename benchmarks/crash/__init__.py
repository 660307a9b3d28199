"""Crash safety: SIGKILL the reference agent in the middle of a run, restart it on the same database, count losses.

The crash mid-run is the kit's own crash harness (``tests/crash``: tasks in flight, queued messages and push
deliveries pending retry, all acknowledged, then SIGKILL and a restart on the same database; nothing acknowledged
may be lost), here at hundreds of tasks.

Then (unless ``--no-crash-points``) it kills the agent at exact places in its code (a wrapper patches a
method to SIGKILL its own process there, as if the signal had landed between two statements), to show what
a kill in a window between two separate commits loses; and (``--random-kills N``) it kills the agent N times
at random moments of bursts of echo turns, to see whether such windows are hit in practice.

    .venv/bin/python -m benchmarks.crash [--quick]

``tests/test_crash_safety.py`` runs the same crash at a small scale and asserts that nothing is lost.

The parts: ``points`` (the exact crash points), ``kills`` (the random kills), ``__main__`` (the command line and
the report).
"""
