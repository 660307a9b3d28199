"""The reference agent's HTTP surface (aiohttp): JSON-RPC endpoints, cards, files, HTTP refusals."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent import extensions, layouts, mutants
from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.card import agent_card
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.edge import (
    CARD_ROUTES,
    FILE_ROUTE,
    RPC_ROUTE,
    TURNS_ROUTE,
    Edge,
    Refused,
    refuse,
)
from nylorun_a2a_kit.reference_agent.engine import Engine
from nylorun_a2a_kit.reference_agent.errors import RpcError
from nylorun_a2a_kit.reference_agent.feed import Feed, FeedError
from nylorun_a2a_kit.reference_agent.keys import CONFIG, EDGE, SERVING, Serving, serving
from nylorun_a2a_kit.reference_agent.rpc import Dispatcher
from nylorun_a2a_kit.reference_agent.store import Store
from nylorun_a2a_kit.reference_agent.streaming import Stream

log = logging.getLogger("reference_agent")
MAX_BODY = 8 * 1024 * 1024
CARD_CACHE_CONTROL = "public, max-age=300"


def _endpoint(request: web.Request, agent_id: str) -> str:
    return f"{request.scheme}://{request.host}/v1/a2a/agents/{agent_id}"


async def handle_rpc(request: web.Request) -> web.StreamResponse:
    try:
        agent_id, subject = request.app[EDGE].admit(request)
    except Refused as refused:
        return refused.response
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return refuse(413, "BODY_TOO_LARGE", f"The body exceeds {MAX_BODY} bytes.")
    except Exception:  # a body the transport cannot read (e.g. a broken Content-Encoding) is the caller's error
        return refuse(400, "BODY_UNREADABLE", "The request body could not be read; check its Content-Encoding.")
    version = request.headers.get("A2A-Version")
    if version is None:
        version = request.query.get("A2A-Version")
    active = extensions.activate(request.headers.getall("A2A-Extensions", []))
    caller = Caller(
        agent_id=agent_id,
        subject=subject,
        base_url=_endpoint(request, agent_id),
        extensions=active,
        traceparent=request.headers.get("traceparent"),
    )
    dispatcher = serving(request.app).dispatcher
    try:
        answer = await dispatcher.handle(body, version, caller)
    except Exception:  # the binding never answers 500: an unexpected failure is a JSON-RPC internal error
        log.exception("request failed")
        answer = dispatcher.error(None, RpcError("InternalError", "Internal error", reason="INTERNAL"))
    headers = {"A2A-Extensions": ", ".join(sorted(active))} if active else {}
    if answer is None:  # a notification: JSON-RPC 2.0 §4.1 has the server not reply
        return web.Response(status=204, headers=headers)
    if isinstance(answer, Stream):
        return await _serve_stream(request, answer, headers)
    return web.Response(text=json.dumps(answer), content_type="application/json", headers=headers)


async def _serve_stream(request: web.Request, stream: Stream, headers: dict[str, str]) -> web.StreamResponse:
    """Server-Sent Events (A2A §9.4.2): one ``data:`` event per JSON-RPC response, a comment while quiet."""
    response = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    try:
        await response.prepare(request)
        async for answer in stream.events:
            await response.write(b": waiting\n\n" if answer is None else f"data: {json.dumps(answer)}\n\n".encode())
        await response.write_eof()
    except ConnectionResetError:  # the caller went away: its stream ends here
        pass
    finally:
        stream.close()
    return response


async def handle_turns(request: web.Request) -> web.StreamResponse:
    """GET /v1/turns: the change feed. A key alone reads the whole Tenant; with a subject, that subject's."""
    try:
        grant, subject = request.app[EDGE].reader(request)
    except Refused as refused:
        return refused.response
    turns = serving(request.app).feed
    try:
        body = turns.page(dict(request.query), turns.subjects(grant, subject))
    except FeedError as exc:
        return refuse(400, "INVALID_ARGUMENT", str(exc))
    return web.json_response(body)


def card_etag(body: str) -> str:
    """A strong entity tag for a card: a digest of the body served (A2A §8.6.1 allows a hash of the content)."""
    return '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'


def _none_match(request: web.Request, etag: str) -> bool:
    """Whether If-None-Match names ``etag`` (weak comparison, RFC 9110 §13.1.2) or is ``*``."""
    tags = {
        tag.strip().removeprefix("W/")
        for value in request.headers.getall("If-None-Match", [])
        for tag in value.split(",")
    }
    return "*" in tags or etag in tags


async def handle_card(request: web.Request) -> web.StreamResponse:
    try:
        agent_id = request.app[EDGE].known_agent(request)
    except Refused as refused:
        return refused.response
    body = json.dumps(agent_card(agent_id, _endpoint(request, agent_id), request.app[CONFIG]))
    etag = card_etag(body)
    # The card changes only when the agent is started with another configuration (A2A §8.6.1).
    headers = {"Cache-Control": CARD_CACHE_CONTROL, "ETag": etag}
    if _none_match(request, etag):
        return web.Response(status=304, headers=headers)
    return web.Response(text=body, content_type="application/json", headers=headers)


async def handle_file(request: web.Request) -> web.StreamResponse:
    agent_id = request.app[EDGE].agent_id(request)
    task = serving(request.app).engine.store.get(request.match_info["task_id"])
    if agent_id is None or task is None or task.agent_id != agent_id:
        return refuse(404, "FILE_NOT_FOUND", "No such file.")
    data = serving(request.app).engine.store.load_file(task.id, request.match_info["token"], request.match_info["name"])
    if data is None:
        return refuse(404, "FILE_NOT_FOUND", "No such file.")
    return web.Response(body=data, content_type="application/octet-stream")


RESTART: web.AppKey[Callable[[web.Application], Awaitable[None]]] = web.AppKey("restart")


def restarting(every: int) -> Callable[..., Any]:
    """A middleware that restarts everything below the HTTP edge (the turns, the sender, the store) on the kept
    database once ``every`` requests came since the last restart, at the first request that finds none in flight
    (none waits for another): what a Runtime keeps across a restart is what its database holds (a test setup; the
    gate's rate limits stay). A restart that fails leaves the agent answering every request 503, saying why."""
    state: dict[str, Any] = {"since": 0, "in_flight": 0, "broken": None}
    restart = asyncio.Lock()  # held while the agent restarts: a request that comes then waits for it

    @web.middleware
    async def middleware(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        async with restart:
            state["since"] += 1
            if state["broken"] is None and state["since"] >= every and state["in_flight"] == 0:
                state["since"] = 0
                try:
                    await request.app[RESTART](request.app)
                except Exception as exc:
                    log.exception("the agent could not restart on its database")
                    state["broken"] = f"{type(exc).__name__}: {exc}"
            if state["broken"] is not None:
                return refuse(503, "RESTART_FAILED", f"The agent could not restart on its database: {state['broken']}")
            state["in_flight"] += 1
        try:
            return await handler(request)
        finally:
            state["in_flight"] -= 1

    return middleware


async def not_found(request: web.Request) -> web.StreamResponse:
    return refuse(404, "NOT_FOUND", f"Nothing is served at {request.path}.")


def build_app(config: AgentConfig) -> web.Application:
    """The agent's application; the mutants ``config`` names (faults among them) take the place of the seams they
    replace."""
    seams = mutants.seams(config.mutants)
    restarts = [restarting(config.restart_every)] if config.restart_every else []
    app = web.Application(client_max_size=MAX_BODY, middlewares=restarts + seams.middlewares(config))
    app[CONFIG] = config
    app[EDGE] = seams.make(Edge, config)

    app[SERVING] = []

    async def start(app: web.Application) -> None:
        store = Store(config.db_path)
        engine = Engine(store, config, seams)
        app[SERVING][:] = [Serving(engine, Dispatcher(engine, config, seams), seams.make(Feed, store))]
        await engine.start()

    async def stop_turns(app: web.Application) -> None:
        await serving(app).engine.stop()

    async def close_store(app: web.Application) -> None:
        serving(app).engine.store.close()

    async def restart(app: web.Application) -> None:
        await stop_turns(app)
        await close_store(app)
        if config.older_layout_at_restart:
            layouts.bring_back(config.db_path)
        await start(app)

    app[RESTART] = restart
    app.on_startup.append(start)
    app.on_shutdown.append(stop_turns)
    app.on_cleanup.append(close_store)
    app.router.add_post("/v1/a2a/agents/{agent_id}", handle_rpc, name=RPC_ROUTE)
    app.router.add_get("/v1/a2a/agents/{agent_id}/card", handle_card, name=CARD_ROUTES[0])
    app.router.add_get("/.well-known/agent-card.json", handle_card, name=CARD_ROUTES[1])
    app.router.add_get("/v1/turns", handle_turns, name=TURNS_ROUTE)
    app.router.add_get("/v1/a2a/agents/{agent_id}/files/{task_id}/{token}/{name:.+}", handle_file, name=FILE_ROUTE)
    app.router.add_route("*", "/{tail:.*}", not_found)
    return app


@dataclass
class RunningAgent:
    """A reference agent serving on a background thread; ``url`` is the default Agent's endpoint."""

    base_url: str
    config: AgentConfig
    _loop: asyncio.AbstractEventLoop
    _runner: web.AppRunner
    _thread: threading.Thread

    def agent_url(self, agent_id: str | None = None) -> str:
        return f"{self.base_url}/v1/a2a/agents/{agent_id or self.config.agents[0]}"

    @property
    def url(self) -> str:
        return self.agent_url()

    def stop(self) -> None:
        """Stop within a few seconds whatever is in flight: what it accepted is in its store already."""
        cleanup = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        try:
            cleanup.result(timeout=STOP_WITHIN_S)
        except TimeoutError:
            self._loop.call_soon_threadsafe(_cancel_every_task, self._loop)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=STOP_WITHIN_S)


# A stop is bounded: requests in flight get STOP_GRACE_S to be answered, the whole cleanup STOP_WITHIN_S.
STOP_GRACE_S = 1.0
STOP_WITHIN_S = 3.0


def _cancel_every_task(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel()


async def start_site(
    config: AgentConfig, host: str, port: int, *, shutdown_timeout_s: float = 60.0
) -> tuple[web.AppRunner, str]:
    # Source mutants take their functions' places before the app is built, until it is cleaned up.
    source_mutants = mutants.patched(config.mutants)
    app = build_app(config)

    async def undo_source_mutants(app: web.Application) -> None:
        source_mutants.undo()

    app.on_cleanup.append(undo_source_mutants)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout_s)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_host, bound_port = runner.addresses[0][:2]
    return runner, f"http://{bound_host}:{bound_port}"


def serve_in_thread(config: AgentConfig, host: str = "127.0.0.1", port: int = 0) -> RunningAgent:
    """Start the agent on its own event loop thread and return once it accepts connections."""
    loop = asyncio.new_event_loop()
    started: dict[str, Any] = {}
    ready = threading.Event()

    def main() -> None:
        asyncio.set_event_loop(loop)
        try:
            started["runner"], started["url"] = loop.run_until_complete(
                start_site(config, host, port, shutdown_timeout_s=STOP_GRACE_S)
            )
        except BaseException as exc:  # reported to the caller below
            started["error"] = exc
            ready.set()
            return
        ready.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=main, name="reference-agent", daemon=True)
    thread.start()
    if not ready.wait(timeout=30):
        raise RuntimeError("the reference agent did not start within 30 s")
    if "error" in started:
        raise RuntimeError(f"the reference agent could not start: {started['error']}") from started["error"]
    return RunningAgent(started["url"], config, loop, started["runner"], thread)
