"""The crash harness: SIGKILL the reference agent in the middle of a run, restart it on the same database, account
for everything it had acknowledged.

At the moment of the kill the agent holds three kinds of unfinished work, all acknowledged to the client:

- tasks in flight: ``scenario slow <ms>`` sent with ``returnImmediately`` (each in its own conversation, and
  each with a push config to an endpoint that accepts every delivery);
- queued messages: messages without ``taskId`` sent to a conversation busy with such a slow task (answered at
  once as a queued task under the message's id, ``TASK_STATE_SUBMITTED``), each with a push config;
- push deliveries pending retry: ``scenario echo`` turns whose push endpoint answered every event's first
  attempt with 503 and a ``Retry-After`` (scaled by ``--push-time-scale``), so the retry is still due.

The agent is killed with SIGKILL (no shutdown code runs), then started again on the same database. Nothing
acknowledged may be lost: every task ends in a state the pages allow (the agent resumes unfinished turns
from their stored stage, so they complete; FAILED or CANCELED would also be allowed), every queued message is
taken by exactly one turn, and every event of every task reaches the receiver at least once — verified
(Standard Webhooks signature, token, StreamResponse shape) by the kit's own receiver.

``tests/test_crash_safety.py`` runs one crash at a small scale and asserts that nothing is lost;
``benchmarks.crash`` runs it at hundreds of tasks, with exact crash points and random kills besides.

The parts: ``client`` (JSON-RPC and the waits for tasks and deliveries), ``sigkill`` (the crash mid-run and its
accounting).
"""

from tests.crash.sigkill import ALLOWED_AFTER_CRASH, Outcome, Plan, run_crash

__all__ = ["ALLOWED_AFTER_CRASH", "Outcome", "Plan", "run_crash"]
