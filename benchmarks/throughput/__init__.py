"""Throughput of SendMessage, GetTask and ListTasks at 1, 8 and 32 concurrent clients, against three servers.

- ``reference``: the reference agent (``nylorun-reference-agent``, SQLite store), with its auth headers;
- ``sdk``: the a2a-sdk 1.3 Python peer (``peers/python/agent.py``: Starlette + uvicorn, in-memory store);
- ``ceiling``: a bare aiohttp handler answering a fixed JSON-RPC result (the most this client can drive).

Each server is its own process; the client is this process (asyncio + one aiohttp keep-alive session per
measurement, ``c`` workers each sending its next request as soon as the last one is answered). Each cell
runs ``--warmup`` seconds unmeasured, then ``--duration`` seconds measured: requests/s are the answers
completed in the measured window, and latencies are theirs.

Workloads (the same for every server):
- SendMessage: blocking (no returnImmediately), a new context per message, parts
  ``["scenario echo", "benchmark payload"]`` (the quick echo scenario, one text part to echo);
- GetTask: of one task created beforehand;
- ListTasks: ``{"contextId": C, "pageSize": 50}`` where C holds 60 tasks created beforehand (a full page).
GetTask and ListTasks are measured before SendMessage, so every server's store then holds the same 61 tasks
(``--prefill N`` adds N more first); SendMessage cells run in turn, so each later one starts on a fuller
store: the table says how many tasks each cell started with.

Run: ``.venv/bin/python -m benchmarks.throughput [--quick] [--profile]``.

The parts: ``client`` (the workloads and one measured cell), ``ceiling`` (the bare aiohttp server),
``profiling`` (cProfile of the reference agent), ``__main__`` (the run, its report and the command line).
"""
