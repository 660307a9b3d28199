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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import pstats
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from benchmarks import common

METHODS = ("SendMessage", "GetTask", "ListTasks")
CONCURRENCY = (1, 8, 32)
LIST_TASKS = 60
GOAL = 2.0
DISTURBED = 0.15  # cores of other processes' CPU during a cell past which its figures are flagged
RETRY_PAUSE_S = 10.0
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


# -- the ceiling server (run as a subprocess: python -m benchmarks.throughput --serve-ceiling)


async def _serve_ceiling() -> None:
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
    prefix = "ceiling listening on "
    return common.server_process(
        "ceiling",
        [str(common.PYTHON), "-m", "benchmarks.throughput", "--serve-ceiling"],
        lambda line: line[len(prefix) :].strip() if line.startswith(prefix) else None,
        lambda base: base,
        workdir,
    )


# -- the client


@dataclass
class Target:
    name: str
    url: str
    headers: dict[str, str]
    task_id: str = ""
    context_id: str = ""
    listed: int = 0
    stored: int | None = None  # tasks in its store (None: the ceiling has none)


@dataclass
class Cell:
    target: str
    method: str
    concurrency: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    answered: int = 0  # every good answer, warm-up and stragglers included (for SendMessage: tasks made)
    store_before: int | None = None  # tasks in the server's store when the cell started
    other_cores: float = 0.0  # CPU the rest of the machine used meanwhile (common.CpuWatch)

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def p(self, q: float) -> float:
        return common.percentile(sorted(self.latencies), q)


def session(concurrency: int) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency, keepalive_timeout=60)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60))


async def call(http: aiohttp.ClientSession, target: Target, body: bytes) -> dict:
    async with http.post(target.url, data=body, headers=target.headers) as response:
        data = await response.read()
        if response.status != 200:
            raise RuntimeError(f"{target.name}: HTTP {response.status}: {data[:300]!r}")
    answer = json.loads(data)
    if "result" not in answer:
        raise RuntimeError(f"{target.name}: {answer}")
    return answer["result"]


async def prepare(target: Target, run_id: str) -> None:
    """One task for GetTask; a context of LIST_TASKS tasks for ListTasks."""
    async with session(1) as http:
        if target.name == "ceiling":
            target.task_id, target.context_id, target.listed = "t-ceiling", "c-ceiling", 50
            return
        result = await call(http, target, common.rpc("SendMessage", {"message": common.echo_message(f"{run_id}-get")}))
        target.task_id = result["task"]["id"]
        context = ""
        for n in range(LIST_TASKS):
            message = common.echo_message(f"{run_id}-list-{n}", context or None)
            result = await call(http, target, common.rpc("SendMessage", {"message": message}))
            assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED", result
            context = result["task"]["contextId"]
        target.context_id = context
        target.stored = 1 + LIST_TASKS
        listed = await call(http, target, common.rpc("ListTasks", {"contextId": context, "pageSize": 50}))
        target.listed = len(listed["tasks"])


async def prefill(target: Target, count: int, run_id: str) -> float:
    """``count`` more echo tasks in the target's store (16 at a time); returns the seconds it took."""
    if target.stored is None or count <= 0:
        return 0.0
    make = bodies("SendMessage", target, f"{run_id}-prefill")
    numbers = iter(range(count))
    t0 = time.monotonic()
    async with session(16) as http:

        async def worker() -> None:
            for n in numbers:
                await call(http, target, make(n))

        await asyncio.gather(*(worker() for _ in range(16)))
    target.stored += count
    return time.monotonic() - t0


def bodies(method: str, target: Target, run_id: str) -> Callable[[int], bytes]:
    if method == "GetTask":
        fixed = common.rpc("GetTask", {"id": target.task_id})
        return lambda n: fixed
    if method == "ListTasks":
        fixed = common.rpc("ListTasks", {"contextId": target.context_id, "pageSize": 50})
        return lambda n: fixed
    head, tail = common.rpc("SendMessage", {"message": common.echo_message("MID")}).split(b"MID")
    prefix = f"{run_id}-{target.name}-".encode()
    return lambda n: head + prefix + str(n).encode() + tail


async def measure(target: Target, method: str, concurrency: int, warmup: float, duration: float, run_id: str) -> Cell:
    cell = Cell(target.name, method, concurrency, duration)
    make = bodies(method, target, f"{run_id}-{method}-{concurrency}")
    counter = itertools.count()
    must = b"TASK_STATE_COMPLETED" if method == "SendMessage" else b'"result"'
    loop = asyncio.get_running_loop()
    start = loop.time() + warmup
    end = start + duration
    async with session(concurrency) as http:

        async def worker() -> None:
            while True:
                body = make(next(counter))
                t0 = loop.time()
                if t0 >= end:
                    return
                try:
                    async with http.post(target.url, data=body, headers=target.headers) as response:
                        data = await response.read()
                        ok = response.status == 200 and must in data and b'"error"' not in data
                except (aiohttp.ClientError, TimeoutError) as exc:
                    ok, data = False, repr(exc).encode()
                t1 = loop.time()
                if not ok:  # an error counts wherever it falls, warm-up included
                    cell.errors += 1
                    cell.first_error = cell.first_error or data[:200].decode(errors="replace")
                else:
                    cell.answered += 1
                    if start <= t1 <= end:
                        cell.latencies.append(t1 - t0)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return cell


# -- profiling (cProfile is in the standard library; py-spy is not installed)


def package_of(filename: str) -> str:
    if filename.startswith("~") or filename.startswith("<"):
        return "C functions (see below)"
    path = Path(filename)
    parts = path.parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].split(".")[0]
    if "reference_agent" in parts:
        return f"reference_agent/{path.name}"
    if "schemas" in parts:
        return "schemas"
    if "lib" in parts and any(p.startswith("python3") for p in parts):
        rest = parts[parts.index("lib") + 2 :]
        return "stdlib " + (rest[0].removesuffix(".py") if rest else path.stem)
    return path.name


def builtin_name(key: tuple[str, int, str]) -> str:
    return key[2] if key[0] == "~" else ""


def summarise_profile(path: Path, top: int = 14) -> str:
    stats = pstats.Stats(str(path))
    total = sum(v[2] for v in stats.stats.values()) or 1.0  # tottime
    by_package: dict[str, float] = {}
    by_builtin: dict[str, float] = {}
    for key, (_, _, tottime, _, _) in stats.stats.items():
        package = package_of(key[0])
        by_package[package] = by_package.get(package, 0.0) + tottime
        if key[0] == "~":
            by_builtin[key[2]] = by_builtin.get(key[2], 0.0) + tottime
    lines = [f"profile {path.name}: {total:.2f} s of CPU in Python frames (tottime)"]
    rows = sorted(by_package.items(), key=lambda kv: -kv[1])[:top]
    lines.append(
        common.table(["where (own time)", "s", "%"], [(k, f"{v:.2f}", f"{100 * v / total:.1f}") for k, v in rows])
    )
    rows = sorted(by_builtin.items(), key=lambda kv: -kv[1])[:8]
    lines.append(common.table(["C builtin", "s", "%"], [(k, f"{v:.2f}", f"{100 * v / total:.1f}") for k, v in rows]))
    cumulative = []
    for key, (_, _, _, cumtime, _) in stats.stats.items():
        if "reference_agent" in key[0] or "schemas" in key[0]:
            cumulative.append((f"{Path(key[0]).parent.name}/{Path(key[0]).name}:{key[2]}", cumtime))
    rows = sorted(cumulative, key=lambda kv: -kv[1])[:top]
    lines.append(
        common.table(
            ["reference_agent / schemas function (cumulative)", "s", "%"],
            [(k, f"{v:.2f}", f"{100 * v / total:.1f}") for k, v in rows],
        )
    )
    return "\n\n".join(lines)


async def profile(methods: tuple[str, ...], concurrency: int, warmup: float, duration: float) -> None:
    for method in methods:
        with common.workdir("bench-profile-") as work:
            out = work / f"reference-{method}.prof"
            with common.reference_agent(work, profile=out) as server:
                target = Target("reference", server.url, common.reference_headers())
                run_id = f"p{int(time.time())}"
                await prepare(target, run_id)
                cell = await measure(target, method, concurrency, warmup, duration, run_id)
            print(
                f"\n== cProfile of the reference agent: {method}, c={concurrency}: {cell.rps:.0f} req/s under cProfile"
            )
            print(summarise_profile(out))


# -- the run


def report(cells: list[Cell], concurrency: tuple[int, ...], methods: tuple[str, ...]) -> str:
    rows = []
    for cell in cells:
        rows.append(
            (
                cell.method,
                cell.concurrency,
                cell.target,
                len(cell.latencies),
                f"{cell.rps:.0f}",
                common.ms(cell.p(50)),
                common.ms(cell.p(99)),
                cell.errors,
                "-" if cell.store_before is None else cell.store_before,
                f"{cell.other_cores:.2f}",
            )
        )
    headers = ["method", "c", "server", "answers", "req/s", "p50 ms", "p99 ms", "errors", "tasks in store", "other"]
    out = [common.table(headers, rows)]
    by = {(c.target, c.method, c.concurrency): c for c in cells}
    ratio_rows = []
    for method in methods:
        for c in concurrency:
            ref, ceiling = by.get(("reference", method, c)), by.get(("ceiling", method, c))
            sdk = by.get(("sdk", method, c))
            if not (ref and sdk and sdk.rps):
                continue
            ratio = ref.rps / sdk.rps
            verdict = "met" if ratio >= GOAL else f"missed: {ratio / GOAL:.0%} of the goal"
            of_ceiling = f"{ref.rps / ceiling.rps:.0%}" if ceiling and ceiling.rps else "-"
            ratio_rows.append(
                (
                    method,
                    c,
                    f"{ref.rps:.0f}",
                    f"{sdk.rps:.0f}",
                    f"{ratio:.2f}x",
                    of_ceiling,
                    verdict,
                )
            )
    out.append(
        common.table(
            [
                "method",
                "c",
                "reference",
                "sdk",
                "ref/sdk",
                "ref/ceiling",
                f"goal ref >= {GOAL:.0f}x sdk",
            ],
            ratio_rows,
        )
    )
    disturbed = [c for c in cells if c.other_cores > DISTURBED]
    if disturbed:
        out.append(
            f"!! {len(disturbed)} of {len(cells)} cells ran while other processes used more than {DISTURBED} of a core "
            f"(column 'other'): those figures are disturbed; rerun on an idle machine."
        )
    out.append("req/s. sdk = the a2a-sdk 1.3 peer, peers/python/agent.py, on uvicorn.")
    return "\n\n".join(out)


async def run(args: argparse.Namespace) -> int:
    methods = tuple(args.methods)
    concurrency = tuple(args.concurrency)
    run_id = f"r{int(time.time())}"
    cells: list[Cell] = []
    started = time.monotonic()
    with common.workdir("bench-throughput-") as work, contextlib.ExitStack() as stack:
        ref = stack.enter_context(common.reference_agent(work))
        sdk = stack.enter_context(common.sdk_peer(work))
        ceiling = stack.enter_context(ceiling_server(work))
        targets = [
            Target("reference", ref.url, common.reference_headers()),
            Target("sdk", sdk.url, dict(common.PLAIN_HEADERS)),
            Target("ceiling", ceiling.url, dict(common.PLAIN_HEADERS)),
        ]
        servers = {"reference": ref, "sdk": sdk, "ceiling": ceiling}
        watch = common.CpuWatch([os.getpid(), *(server.pid for server in servers.values())])
        for target in targets:
            await prepare(target, run_id)
            if args.prefill and target.stored is not None:
                took = await prefill(target, args.prefill, run_id)
                print(f"{target.name}: prefilled {args.prefill} tasks in {took:.0f} s", flush=True)
            print(
                f"{target.name}: {target.url} (pid {servers[target.name].pid}); ListTasks page holds {target.listed}",
                flush=True,
            )
        order = [m for m in ("GetTask", "ListTasks", "SendMessage") if m in methods]
        for method in order:
            for c in concurrency:
                for target in targets:
                    best: Cell | None = None
                    for attempt in range(1 + args.retries):
                        watch.start()
                        cell = await measure(target, method, c, args.warmup, args.duration, run_id)
                        cell.other_cores = watch.other_cores()
                        cell.store_before = target.stored
                        if method == "SendMessage" and target.stored is not None:
                            target.stored += cell.answered
                        print(
                            f"  {method:<11} c={c:<3} {target.name:<11} {cell.rps:8.0f} req/s"
                            f"  p50 {common.ms(cell.p(50))} ms  p99 {common.ms(cell.p(99))} ms"
                            f"  errors {cell.errors}  other {cell.other_cores:.2f}"
                            f"{'  (disturbed)' if cell.other_cores > DISTURBED else ''} {cell.first_error[:120]}",
                            flush=True,
                        )
                        if best is None or cell.other_cores < best.other_cores:
                            best = cell
                        if cell.other_cores <= DISTURBED:
                            break
                        if attempt < args.retries:
                            await asyncio.sleep(RETRY_PAUSE_S)
                    assert best is not None
                    cells.append(best)
        for name, server in servers.items():
            if not server.alive():
                print(f"!! {name} exited during the run: {server.log_text()[-2000:]}")
            elif "Traceback" in server.log_text():
                print(f"!! {name} logged a traceback:\n{server.log_text()[-3000:]}")
    print(f"\nthroughput: {common.machine_line()}")
    print(f"warm-up {args.warmup} s, measured {args.duration} s per cell; took {time.monotonic() - started:.0f} s\n")
    print(report(cells, concurrency, methods))
    if args.profile:
        await profile(methods, 8 if 8 in concurrency else concurrency[-1], args.warmup, args.duration)
    print(f"\nreproduce: {common.reproduce('benchmarks.throughput', sys.argv[1:])}")
    return 1 if any(cell.errors for cell in cells) else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.throughput", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a seconds-long smoke run (c=1,8; 0.2 s + 0.5 s per cell)")
    p.add_argument("--duration", type=float, help="measured seconds per cell (default 5)")
    p.add_argument("--warmup", type=float, help="unmeasured seconds before each cell (default 1)")
    p.add_argument("--concurrency", type=int, nargs="+", help="concurrent clients (default 1 8 32)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument(
        "--retries", type=int, default=2, help="measure a disturbed cell again up to this many times (default 2)"
    )
    p.add_argument("--prefill", type=int, default=0, help="first make this many more tasks on each server")
    p.add_argument("--profile", action="store_true", help="then profile the reference agent (cProfile), c=8")
    p.add_argument("--serve-ceiling", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve_ceiling:
        asyncio.run(_serve_ceiling())
        return 0
    quick = args.quick
    args.duration = args.duration if args.duration is not None else (0.5 if quick else 5.0)
    args.warmup = args.warmup if args.warmup is not None else (0.2 if quick else 1.0)
    args.concurrency = args.concurrency or ([1, 8] if quick else list(CONCURRENCY))
    if args.quick:
        args.retries = 0
    if not 0 <= args.retries <= 10:
        p.error("retries in 0..10")
    if not 0 < args.duration <= 120 or not 0 <= args.warmup <= 30 or not all(0 < c <= 256 for c in args.concurrency):
        p.error("duration must be in (0, 120], warm-up in [0, 30], concurrency in 1..256")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
