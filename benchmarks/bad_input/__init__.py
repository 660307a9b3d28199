"""Bad input: 10,000 generated malformed requests against the reference agent; every one must be refused right.

Four categories, each request with the one answer it must get (a JSON-RPC error code with HTTP 200, or an
HTTP refusal), never a 5xx and never a hang:

- ``body``: not JSON, invalid UTF-8, a lone surrogate, truncated requests, NaN/Infinity, ~1 MB strings where
  they are wrong (method, task id, jsonrpc, an agent-role message), nesting 10k–100k deep, 8+ MB bodies, a
  gzip body that inflates past 8 MB;
- ``envelope``: no method, a method of the wrong type or empty, wrong or missing ``jsonrpc``, an id of the
  wrong type or none, params that are not an object, a batch, a bare JSON value, an unknown method;
- ``params``: schema mutations of SendMessage, GetTask, ListTasks and CancelTask params drawn with
  ``schemas.strategies.mutations`` (Hypothesis ``given`` + ``data()`` under a fixed seed, so the same run
  draws the same mutants): each must get -32602;
- ``headers``: no or wrong credentials, no subject, scopes without sessions:own, a wrong or missing
  A2A-Version, a broken gzip/deflate Content-Encoding, an unsupported encoding, a header past aiohttp's limit,
  an unknown Agent.

Requests go over raw HTTP/1.1 (asyncio streams, ``Connection: close``, one connection each) so that what the
agent answers is seen exactly, even when it closes the connection right after a refusal. Every 1,000
requests the agent must still answer a GetTask of a task made at the start, and its RSS (VmRSS) is sampled;
a 100 ms monitor records the peak in between.

Run: ``.venv/bin/python -m benchmarks.bad_input [--quick]``.

The parts: ``wire`` (raw HTTP/1.1), ``cases`` (what each request must get, the generated set, the schema
mutants), ``makers`` (the body, envelope and header cases), ``__main__`` (the run, its report, the command line).
"""
