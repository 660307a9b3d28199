"""Scale: every query the agent serves over 1k, 100k and 1M stored tasks, the agent's memory, push deliveries/s.

Queries: the database is seeded directly into ``reference_agent.store`` (``tests/history.py``: two subjects' ended
turns spread over old conversations, one in seven failed), then the agent is started on it and a conversation
of the benchmark's own is made through it (three completed turns, two failed ones), as a check makes one. Each
case asks 200 times (after 10 warm-up requests, the first checked against what was made): ListTasks under every
filter and each pair of them, the whole subject's first and deepest page, GetTask of a new and of an old task,
and the change feed after a cursor, near and from its beginning, for one subject and for one session. The goal
is every case's p50 at the largest size within 2× of the smallest: each is an index search bounded by what it
answers (``tests/test_store.py`` counts their SQLite steps).

Push: the kit's receiver (``fixtures.push_receiver.PushReceiver`` with a secret: every delivery is verified —
Standard Webhooks signature, timestamp, StreamResponse schema) on its own thread, fed by a signing sender in
another process (standardwebhooks, aiohttp, many concurrent POSTs). Verified deliveries per second are counted
at the receiver (first to last arrival); the goal is ≥ 2,000/s. The per-delivery cost of each verification
step is timed in-process to say what bounds the rate.

    .venv/bin/python -m benchmarks.scale [--quick]

The parts: ``queries`` (the requests at each size), ``push`` (deliveries per second and what each costs),
``__main__`` (the command line and the report).
"""
