"""Load: 50 concurrent clients × 2,000 requests of mixed methods against the reference agent, then an audit.

Each client is one subject (``load-<n>``) with its own keep-alive connection, and draws its requests from a
seeded mix:

- ``send-blocking``: SendMessage of the echo scenario on the client's own context, blocking;
- ``send-immediate``: SendMessage of the echo scenario on a new context, ``returnImmediately``;
- ``send-slow``: SendMessage of ``scenario slow 200`` on a new context, ``returnImmediately`` (to cancel);
- ``send-retry``: an accepted SendMessage sent again byte for byte: must answer the same task;
- ``get``: GetTask of one of the client's tasks; ``list``: ListTasks of its context (pageSize 50);
- ``cancel``: CancelTask of a slow task (CANCELED, or -32002 once it ended) or of an ended one (-32002);
- ``invalid``: an unknown method (-32601), an unknown task (-32001), params without a message (-32602), a body
  that is not JSON (-32700), pageSize 0 (-32602), or A2A-Version 0.3 (-32009).

Every answer is checked against what its request must get. Afterwards the audit checks that no task was lost
or duplicated: every task id a SendMessage answered is readable by GetTask; the distinct task ids equal the
distinct accepted messageIds one to one (a retried messageId answers its first task); and a full ListTasks
walk of each subject lists each of its tasks exactly once, and nothing else.

Run: ``.venv/bin/python -m benchmarks.load [--quick]``.

The parts: ``clients`` (the mix, one request and the check of its answer), ``audit`` (no task lost or
duplicated), ``__main__`` (the run, its report and the command line).
"""
