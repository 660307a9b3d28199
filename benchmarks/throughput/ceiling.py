"""The ceiling: a bare aiohttp handler answering a fixed JSON-RPC result (the most this client can drive).

It runs as its own process: ``python -m benchmarks.throughput --serve-ceiling``.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from benchmarks import common, servers

CEILING_RESULT = {
    "task": {
        "id": "t-ceiling",
        "contextId": "c-ceiling",
        "status": {
            "state": "TASK_STATE_COMPLETED",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"messageId": "m-ceiling", "role": "ROLE_AGENT", "parts": [{"text": "Echoed."}]},
        },
        "artifacts": [{"artifactId": "a-ceiling", "name": "echo", "parts": [{"text": "benchmark payload"}]}],
    }
}


async def serve_ceiling() -> None:
    from aiohttp import web

    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": CEILING_RESULT}).encode()

    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=answer, content_type="application/json")

    app = web.Application()
    app.router.add_post("/", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    print(f"ceiling listening on http://{host}:{port}/", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def ceiling_server(workdir: Path):
    return servers.server_process(
        "ceiling",
        [str(common.PYTHON), "-m", "benchmarks.throughput", "--serve-ceiling"],
        servers.announced("ceiling listening on "),
        lambda base: base,
        workdir,
    )
