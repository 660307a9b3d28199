"""A peer A2A 1.0 agent built only from the official Python SDK's stock pieces (a2a-sdk 1.3).

It implements the kit's scenario contract (docs/scenario-contract.md) on the core tier: no Nylorun profile
extensions are declared or emitted. Everything protocol-related is the SDK's own:

- ``a2a.server.routes.create_jsonrpc_routes`` (the JSON-RPC 2.0 dispatcher, a Starlette route) at ``/``,
- ``a2a.server.routes.create_agent_card_routes`` at ``/.well-known/agent-card.json``,
- ``a2a.server.request_handlers.DefaultRequestHandler`` (= ``DefaultRequestHandlerV2`` in 1.3),
- ``a2a.server.tasks.InMemoryTaskStore``, ``InMemoryPushNotificationConfigStore`` and
  ``BasePushNotificationSender`` (the stock webhook sender),
- ``a2a.server.tasks.TaskUpdater`` for the agent's events,

composed into a ``starlette.applications.Starlette`` app and served by uvicorn on 127.0.0.1. The only route
of our own is ``GET /files/{task_id}/{name}``, which serves the file the ``complete`` scenario links to with
a ``url`` part.

Authentication is not checked: ``Authorization``, ``Nylorun-Subject`` and ``Nylorun-Scopes`` are ignored,
and every caller is the SDK's ``UnauthenticatedUser`` (one owner for all tasks and push configs).

Run: ``.venv/bin/python -m peers.python.agent --port 0`` (prints ``listening http://127.0.0.1:PORT/``).

``--plain`` runs instead a plain agent as a user would build it on the official SDK: the same stock handler, stores
and push sender, but no scenario contract on the card or in behaviour, the JSON-RPC route at ``/a2a`` (not the
origin), the card only at the origin's ``/.well-known/agent-card.json`` (A2A §8.2), ``streaming: true`` with the
SDK's own SSE answers (SendStreamingMessage, SubscribeToTask), and an ordinary executor: every message becomes a
Task that goes WORKING, works ``--work-ms`` (default 50 ms) and COMPLETES with a text artifact echoing the message's
text. ``.venv/bin/python -m peers.python.agent --plain --port 0`` prints ``listening http://127.0.0.1:PORT/a2a``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import socket
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import uvicorn
from a2a.helpers import new_data_part, new_raw_part, new_text_message, new_text_part, new_url_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSION_1_0, TransportProtocol
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

CONTRACT_TAG = "scenario-contract/v1"
# The scenarios this peer runs. Not here: approve, connect (they need an interactions/v1 interaction),
# uncertain (effects/v1), plan (progress/v1), file (files/v1 data and versions): profile extensions.
SCENARIOS = ("complete", "echo", "ask", "slow", "fail", "inspect", "tool")
DEFAULT_SLOW_MS = 2_000
MAX_SLOW_MS = 600_000
INSPECT_LIMIT = 8 * 1024 * 1024
RPC_PATH = "/"
PLAIN_RPC_PATH = "/a2a"
DEFAULT_WORK_MS = 50


class FileShelf:
    """The files the ``complete`` scenario publishes, served by ``GET /files/{task_id}/{name}``."""

    def __init__(self) -> None:
        self.base_url = ""
        self._files: dict[tuple[str, str], bytes] = {}

    def put(self, task_id: str, name: str, data: bytes) -> str:
        self._files[(task_id, name)] = data
        return f"{self.base_url}/files/{task_id}/{name}"

    def get(self, task_id: str, name: str) -> bytes | None:
        return self._files.get((task_id, name))


def derived_file(task_id: str, name: str) -> bytes:
    digest = hashlib.sha256(f"{task_id}/{name}".encode()).hexdigest()
    return f"python sdk peer file {name} for task {task_id}\n{digest}\n".encode()


def parse_scenario(context: RequestContext) -> tuple[str, list[str]] | None:
    """``(name, arguments)`` when the message's first part is a text ``scenario <name> …``; else None."""
    message = context.message
    if message is None or not message.parts or not message.parts[0].HasField("text"):
        return None
    words = message.parts[0].text.split()
    if len(words) < 2 or words[0].lower() != "scenario":
        return None
    return words[1].lower(), words[2:]


def whole_number(args: list[str], default: int) -> int:
    if args and args[0].isascii() and args[0].isdigit():
        return int(args[0])
    return default


def further_parts(context: RequestContext) -> list[Part]:
    """The message's parts after a leading ``scenario …`` text part (all parts when there is none)."""
    parts = list(context.message.parts) if context.message else []
    if parts and parts[0].HasField("text") and [w.lower() for w in parts[0].text.split()[:1]] == ["scenario"]:
        parts = parts[1:]
    copies = []
    for part in parts:
        copy = Part()
        copy.CopyFrom(part)
        copies.append(copy)
    return copies or [new_text_part("")]


class ScenarioExecutor(AgentExecutor):
    """The scenario contract as an ``AgentExecutor``: each turn publishes a Task, then status/artifact events."""

    def __init__(self, shelf: FileShelf) -> None:
        self.shelf = shelf

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        current = context.current_task
        if current is None:
            status = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
            status.timestamp.FromDatetime(datetime.now(UTC))
            task = Task(id=task_id, context_id=context_id, status=status)
            if context.message is not None:
                task.history.append(context.message)
            await event_queue.enqueue_event(task)
        elif current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self._answer(context, updater)
            return

        def say(text: str):
            return new_text_message(text, context_id=context_id, task_id=task_id)

        asked = parse_scenario(context)
        name, args = asked if asked else ("echo", [])
        if name not in SCENARIOS:
            await updater.reject(say(f"This peer does not implement scenario {name!r}."))
            return
        await updater.start_work(say("Working on it."))
        if name == "complete":
            await self._complete(updater, task_id)
            await updater.complete(say("Done."))
        elif name == "echo":
            await updater.add_artifact(further_parts(context), name="echo")
            await updater.complete(say("Echoed."))
        elif name == "ask":
            await updater.requires_input(say("Which colour should the report use?"))
        elif name == "slow":
            ms = min(whole_number(args, DEFAULT_SLOW_MS), MAX_SLOW_MS)
            await asyncio.sleep(ms / 1000)
            await updater.add_artifact([new_text_part(f"worked for {ms} ms")], name="slow")
            await updater.complete(say("Done, slowly."))
        elif name == "fail":
            await updater.failed(say("The scenario failed, as asked."))
        elif name == "inspect":
            reports = await self._inspect(context)
            await updater.add_artifact([new_data_part({"inspected": reports}, "application/json")], name="inspection")
            await updater.complete(say(f"Inspected {len(reports)} file(s)."))
        elif name == "tool":
            seed = args[0] if args else "seed"
            secret = "tool-secret-" + hashlib.sha256(seed.encode()).hexdigest()[:16]
            _ = {"arguments": {"query": secret}, "result": {"record": f"{secret}-result"}}  # stays in the agent
            await updater.add_artifact([new_text_part("The lookup is done: the order exists.")], name="lookup")
            await updater.complete(say("Looked it up."))

    async def _answer(self, context: RequestContext, updater: TaskUpdater) -> None:
        """The reply to ``ask``'s question: the same task ends COMPLETED with the answer's text."""
        text = context.get_user_input(" ")
        await updater.start_work()
        await updater.add_artifact([new_text_part(f"answer: {text}")], name="answer")
        await updater.complete(updater.new_agent_message([new_text_part("Thanks, done.")]))

    async def _complete(self, updater: TaskUpdater, task_id: str) -> None:
        await updater.add_artifact([new_text_part("The scenario completed.", "text/plain")], name="summary")
        raw = derived_file(task_id, "report.bin")
        await updater.add_artifact([new_raw_part(raw, "application/octet-stream", "report.bin")], name="report.bin")
        url = self.shelf.put(task_id, "report.txt", derived_file(task_id, "report.txt"))
        await updater.add_artifact([new_url_part(url, "text/plain", "report.txt")], name="report.txt")
        await updater.add_artifact(
            [new_data_part({"scenario": "complete", "ok": True}, "application/json")], name="result"
        )

    async def _inspect(self, context: RequestContext) -> list[dict]:
        reports: list[dict] = []
        parts = context.message.parts if context.message else []
        async with httpx.AsyncClient(timeout=10, follow_redirects=False) as http:
            for part in parts:
                if not part.HasField("url"):
                    continue
                try:
                    response = await http.get(part.url)
                except (httpx.HTTPError, ValueError) as exc:
                    reports.append({"url": part.url, "error": type(exc).__name__})
                    continue
                data = response.content[: INSPECT_LIMIT + 1]
                reports.append(
                    {
                        "url": part.url,
                        "status": response.status_code,
                        "size": len(data),
                        "sha256": hashlib.sha256(data).hexdigest(),
                    }
                )
        return reports

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel(updater.new_agent_message([new_text_part("Canceled, as asked.")]))


def _card(url: str, name: str, description: str, streaming: bool, modes: list[str], skill: AgentSkill) -> AgentCard:
    return AgentCard(
        name=name,
        description=description,
        version="0.1.0",
        provider=AgentProvider(organization="Nylorun A2A conformance kit (peer)", url="https://a2a-protocol.org/"),
        supported_interfaces=[
            AgentInterface(
                url=url, protocol_binding=TransportProtocol.JSONRPC.value, protocol_version=PROTOCOL_VERSION_1_0
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=True, extended_agent_card=False),
        default_input_modes=modes,
        default_output_modes=modes,
        skills=[skill],
    )


def agent_card(url: str) -> AgentCard:
    return _card(
        url,
        "python-sdk-peer",
        "A peer A2A 1.0 agent on the official Python SDK (a2a-sdk 1.3), running the kit's scenarios.",
        streaming=False,
        modes=["text/plain", "application/json", "application/octet-stream"],
        skill=AgentSkill(
            id="conformance-scenarios",
            name="Conformance scenarios",
            description="Runs the kit's scenario contract: send 'scenario <name> [argument]' as the first text part.",
            tags=[CONTRACT_TAG, *(f"scenario:{name}" for name in SCENARIOS)],
            examples=["scenario complete", "scenario slow 2000"],
        ),
    )


def _sdk_app(executor: AgentExecutor, card: AgentCard, rpc_path: str, routes: list | None = None) -> Starlette:
    """The SDK's stock request handler (in-memory stores, its push sender) behind its card and JSON-RPC routes."""
    push_store = InMemoryPushNotificationConfigStore()
    push_http = httpx.AsyncClient(timeout=10)
    handler = DefaultRequestHandler(
        agent_executor=executor,
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(push_http, push_store),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await handler.aclose()
        await push_http.aclose()

    served = [
        *create_agent_card_routes(card, card_url=AGENT_CARD_WELL_KNOWN_PATH),
        *create_jsonrpc_routes(handler, rpc_url=rpc_path),
        *(routes or []),
    ]
    return Starlette(routes=served, lifespan=lifespan)


def build_app(url: str) -> Starlette:
    """The Starlette app: the SDK's JSON-RPC route at ``/``, its card route, and the files route."""
    shelf = FileShelf()
    shelf.base_url = url.rstrip("/")
    card = agent_card(url)

    async def get_file(request: Request) -> Response:
        data = shelf.get(request.path_params["task_id"], request.path_params["name"])
        if data is None:
            return Response("No such file.", status_code=404, media_type="text/plain")
        return Response(data, media_type="text/plain")

    files = Route("/files/{task_id}/{name}", get_file, methods=["GET"])
    return _sdk_app(ScenarioExecutor(shelf), card, RPC_PATH, [files])


class EchoExecutor(AgentExecutor):
    """A plain agent's executor: each message becomes a Task that works briefly and completes with an echo."""

    def __init__(self, work_s: float) -> None:
        self.work_s = work_s

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = Task(
                id=str(context.task_id),
                context_id=str(context.context_id),
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message] if context.message is not None else [],
            )
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await asyncio.sleep(self.work_s)
        await updater.add_artifact([new_text_part(context.get_user_input())], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel()


def plain_agent_card(url: str) -> AgentCard:
    return _card(
        url,
        "python-sdk-plain-peer",
        "A plain A2A 1.0 agent on the official Python SDK (a2a-sdk 1.3): it echoes what it is sent.",
        streaming=True,
        modes=["text/plain"],
        skill=AgentSkill(
            id="echo",
            name="Echo",
            description="Answers every message with a completed task whose artifact echoes the message's text.",
            tags=["echo"],
            examples=["hello"],
        ),
    )


def build_plain_app(origin: str, work_s: float = DEFAULT_WORK_MS / 1000) -> Starlette:
    """A plain SDK agent: JSON-RPC at ``/a2a``, the card at the origin's well-known URI, nothing else."""
    card = plain_agent_card(origin.rstrip("/") + PLAIN_RPC_PATH)

    return _sdk_app(EchoExecutor(work_s), card, PLAIN_RPC_PATH)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m peers.python.agent", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one (default)")
    parser.add_argument("--log-level", default="warning", help="uvicorn's log level (default warning)")
    parser.add_argument(
        "--plain", action="store_true", help="a plain SDK agent: no scenario contract, JSON-RPC at /a2a, streaming"
    )
    parser.add_argument(
        "--work-ms",
        type=int,
        default=DEFAULT_WORK_MS,
        help=f"--plain: how long each task works (default {DEFAULT_WORK_MS})",
    )
    args = parser.parse_args(argv)
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only for a socket whose proto says
    # TCP, and without it uvicorn's two writes per answer wait ~40 ms for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    if args.plain:
        app = build_plain_app(url, max(0, args.work_ms) / 1000)
        # SSE streams the SDK holds open end at shutdown; uvicorn waits for them at most this long.
        config = uvicorn.Config(app, log_level=args.log_level, timeout_graceful_shutdown=2)
        print(f"listening {url.rstrip('/')}{PLAIN_RPC_PATH}", flush=True)
    else:
        config = uvicorn.Config(build_app(url), log_level=args.log_level, timeout_graceful_shutdown=2)
        print(f"listening {url}", flush=True)
    server = uvicorn.Server(config)
    print(f"  card: {url.rstrip('/')}{AGENT_CARD_WELL_KNOWN_PATH}", flush=True)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
