"""Scale: ListTasks page latency over 1k, 10k and 100k stored tasks, the agent's memory, push deliveries per second.

ListTasks: the database is seeded directly through ``reference_agent.store.Store`` (one subject, ten
conversations interleaved, every task a completed echo turn with its history and one artifact), then the agent
is started on it. Each case asks 200 times (after 10 warm-up requests) for pageSize 50:

- the first page, and the deepest page (the last full page of the walk, via a pageToken positioned there),
- without a filter, and with a contextId filter (a conversation holding a tenth of the tasks).

A keyset cursor (``seq < ?`` on the index) costs the same at any depth and any table size; the goal is 100k
within 2× of 1k. Each answer also carries ``totalSize`` (from the counts the store keeps per owner and state,
or a COUNT over one conversation's tasks), timed separately in-process with the page query (and the query
plans printed), so what grows with the table is named.

Push: the kit's receiver (``fixtures.push_receiver.PushReceiver`` with a secret: every delivery is verified —
Standard Webhooks signature, timestamp, StreamResponse schema) on its own thread, fed by a signing sender in
another process (standardwebhooks, aiohttp, many concurrent POSTs). Verified deliveries per second are counted
at the receiver (first to last arrival); the goal is ≥ 2,000/s. The per-delivery cost of each verification
step is timed in-process to say what bounds the rate.

    .venv/bin/python -m benchmarks.scale [--quick]

The parts: ``listing`` (seeding and ListTasks latency), ``push`` (deliveries per second and what each costs),
``__main__`` (the command line and the report).
"""
