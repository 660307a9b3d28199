"""The reference agent's HTTP surface (aiohttp): JSON-RPC endpoints, cards, files, HTTP refusals."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent import extensions, feed
from nylorun_a2a_kit.reference_agent.card import agent_card
from nylorun_a2a_kit.reference_agent.config import AgentConfig, KeyGrant
from nylorun_a2a_kit.reference_agent.engine import Caller, Engine
from nylorun_a2a_kit.reference_agent.errors import RpcError, ServerFailure
from nylorun_a2a_kit.reference_agent.rpc import Dispatcher, parse_json
from nylorun_a2a_kit.reference_agent.store import Store

log = logging.getLogger("reference_agent")
ENGINE: web.AppKey[Engine] = web.AppKey("engine", Engine)
DISPATCHER: web.AppKey[Dispatcher] = web.AppKey("dispatcher", Dispatcher)
CONFIG: web.AppKey[AgentConfig] = web.AppKey("config", AgentConfig)
LIMITER: web.AppKey[RateLimiter] = web.AppKey("limiter")
MAX_BODY = 8 * 1024 * 1024


class RateLimiter:
    """A sliding window per key: at most ``grant.rate_limit`` requests per ``grant.rate_window_s``."""

    def __init__(self) -> None:
        self._seen: dict[str, deque[float]] = {}

    def retry_after(self, key: str, grant: KeyGrant) -> int:
        if not grant.rate_limit:
            return 0
        now = time.monotonic()
        seen = self._seen.setdefault(key, deque())
        while seen and seen[0] <= now - grant.rate_window_s:
            seen.popleft()
        if len(seen) >= grant.rate_limit:
            return max(1, int(seen[0] + grant.rate_window_s - now + 0.999))
        seen.append(now)
        return 0


def refuse(status: int, reason: str, message: str, **headers: str) -> web.Response:
    body = {"error": {"status": status, "reason": reason, "message": message}}
    return web.json_response(body, status=status, headers=headers)


def _endpoint(request: web.Request, agent_id: str) -> str:
    return f"{request.scheme}://{request.host}/v1/a2a/agents/{agent_id}"


def _agent_id(request: web.Request, config: AgentConfig) -> str | None:
    agent_id = request.match_info.get("agent_id", config.agents[0])
    if agent_id in config.agents:
        return agent_id
    return config.agents[0] if config.fault("unknown-agent-served") else None


async def handle_rpc(request: web.Request) -> web.StreamResponse:
    config = request.app[CONFIG]
    key = ""
    authorization = request.headers.get("Authorization", "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer":
        key = token.strip()
    grant = config.keys.get(key)
    if grant is None:
        if not config.fault("no-auth-check"):
            return refuse(
                401,
                "UNAUTHENTICATED",
                "Send an application key as Authorization: Bearer <key>.",
                **{"WWW-Authenticate": "Bearer"},
            )
        grant = KeyGrant()
    wait = 0 if config.fault("no-rate-limit") else request.app[LIMITER].retry_after(key, grant)
    if wait:
        return refuse(429, "RATE_LIMITED", "Too many requests for this key.", **{"Retry-After": str(wait)})
    agent_id = _agent_id(request, config)
    if agent_id is None:
        return refuse(404, "AGENT_NOT_FOUND", f"No Agent {request.match_info['agent_id']!r} on this Runtime.")
    subject = request.headers.get("Nylorun-Subject", "").strip()
    if not subject:
        if not (config.fault("no-auth-check") or config.fault("subject-optional")):
            return refuse(400, "SUBJECT_REQUIRED", "An application key acts for a subject: send Nylorun-Subject.")
        subject = "anonymous"
    if not grant.allows_subject(subject):
        return refuse(403, "SUBJECT_NOT_ALLOWED", "This key may not act for that subject.")
    if "Nylorun-Scopes" not in request.headers and config.fault("scopes-required"):
        return refuse(403, "SCOPES_REQUIRED", "Send Nylorun-Scopes.")
    scopes = {s for s in request.headers.get("Nylorun-Scopes", "sessions:own").replace(",", " ").split() if s}
    if "sessions:own" not in scopes or not scopes <= grant.scopes:
        return refuse(403, "SCOPE_NOT_GRANTED", "The key does not grant those scopes; sessions:own is needed.")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return refuse(413, "BODY_TOO_LARGE", f"The body exceeds {MAX_BODY} bytes.")
    except Exception:  # a body the transport cannot read (e.g. a broken Content-Encoding) is the caller's error
        return refuse(400, "BODY_UNREADABLE", "The request body could not be read; check its Content-Encoding.")
    version = request.headers.get("A2A-Version")
    if version is None:
        version = request.query.get("A2A-Version")
    if config.fault("http-500-on-bad-json") and not _parses(body):
        return web.Response(status=500, text="500 Internal Server Error", content_type="text/html")
    active = extensions.activate(request.headers.getall("A2A-Extensions", []))
    if config.fault("echo-unknown-extension"):
        active = frozenset(extensions.requested(request.headers.getall("A2A-Extensions", [])))
    caller = Caller(
        agent_id=agent_id,
        subject=subject,
        base_url=_endpoint(request, agent_id),
        extensions=active,
        traceparent=request.headers.get("traceparent"),
    )
    dispatcher = request.app[DISPATCHER]
    try:
        answer = await dispatcher.handle(body, version, caller)
    except ServerFailure:
        return web.Response(status=500, text="500 Internal Server Error", content_type="text/html")
    except Exception:  # the binding never answers 500: an unexpected failure is a JSON-RPC internal error
        log.exception("request failed")
        answer = dispatcher.error(None, RpcError("InternalError", "Internal error", reason="INTERNAL"))
    headers = {}
    echoed = extensions.DECLARED if config.fault("echo-unactivated-extension") else active
    if config.fault("echo-only-v1"):
        echoed = echoed & extensions.V1
    if echoed:
        headers["A2A-Extensions"] = ", ".join(sorted(echoed))
    content_type = "text/plain" if config.fault("response-text-plain") else "application/json"
    return web.Response(text=json.dumps(answer), content_type=content_type, headers=headers)


def _parses(body: bytes) -> bool:
    try:
        parse_json(body)
    except ValueError:
        return False
    return True


async def handle_turns(request: web.Request) -> web.StreamResponse:
    """GET /v1/turns: the change feed. A key alone reads the whole Tenant; with a subject, that subject's."""
    config = request.app[CONFIG]
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    grant = config.keys.get(token.strip()) if scheme.lower() == "bearer" else None
    if grant is None:
        return refuse(401, "UNAUTHENTICATED", "Send an application key as Authorization: Bearer <key>.")
    subject = request.headers.get("Nylorun-Subject", "").strip()
    if subject and not grant.allows_subject(subject):
        return refuse(403, "SUBJECT_NOT_ALLOWED", "This key may not act for that subject.")
    subjects = {subject} if subject else (None if "*" in grant.subjects else set(grant.subjects))
    try:
        body = feed.page(request.app[ENGINE].store, config, dict(request.query), subjects)
    except feed.FeedError as exc:
        return refuse(400, "INVALID_ARGUMENT", str(exc))
    return web.json_response(body)


async def handle_card(request: web.Request) -> web.StreamResponse:
    config = request.app[CONFIG]
    agent_id = _agent_id(request, config)
    if agent_id is None:
        return refuse(404, "AGENT_NOT_FOUND", f"No Agent {request.match_info['agent_id']!r} on this Runtime.")
    if config.fault("card-of-another-agent") and len(config.agents) > 1:
        agent_id = config.agents[(config.agents.index(agent_id) + 1) % len(config.agents)]
    card = agent_card(agent_id, _endpoint(request, agent_id), config)
    if config.fault("card-wrong-content-type"):
        return web.Response(text=json.dumps(card), content_type="text/plain")
    return web.json_response(card)


async def handle_file(request: web.Request) -> web.StreamResponse:
    config = request.app[CONFIG]
    agent_id = _agent_id(request, config)
    task = request.app[ENGINE].store.get(request.match_info["task_id"])
    if agent_id is None or task is None or task.agent_id != agent_id:
        return refuse(404, "FILE_NOT_FOUND", "No such file.")
    data = request.app[ENGINE].store.load_file(task.id, request.match_info["token"], request.match_info["name"])
    if data is None:
        return refuse(404, "FILE_NOT_FOUND", "No such file.")
    return web.Response(body=data, content_type="application/octet-stream")


async def not_found(request: web.Request) -> web.StreamResponse:
    return refuse(404, "NOT_FOUND", f"Nothing is served at {request.path}.")


def build_app(config: AgentConfig) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY)
    app[CONFIG] = config
    app[LIMITER] = RateLimiter()

    async def start(app: web.Application) -> None:
        store = Store(config.db_path)
        engine = Engine(store, config)
        app[ENGINE] = engine
        app[DISPATCHER] = Dispatcher(engine, config)
        await engine.start()

    async def stop_turns(app: web.Application) -> None:
        await app[ENGINE].stop()

    async def close_store(app: web.Application) -> None:
        app[ENGINE].store.close()

    app.on_startup.append(start)
    app.on_shutdown.append(stop_turns)
    app.on_cleanup.append(close_store)
    app.router.add_post("/v1/a2a/agents/{agent_id}", handle_rpc)
    app.router.add_get("/v1/a2a/agents/{agent_id}/card", handle_card)
    app.router.add_get("/.well-known/agent-card.json", handle_card)
    app.router.add_get("/v1/turns", handle_turns)
    app.router.add_get("/v1/a2a/agents/{agent_id}/files/{task_id}/{token}/{name:.+}", handle_file)
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
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)


async def start_site(config: AgentConfig, host: str, port: int) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(build_app(config), access_log=None)
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
            started["runner"], started["url"] = loop.run_until_complete(start_site(config, host, port))
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
