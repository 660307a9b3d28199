"""Middlewares for the faults that change only what goes on the wire: an answer, a header, a document.

Each helper turns a small rewrite into a fault's behaviour, a middleware factory (see :mod:`.catalog`): the
middleware lets the agent answer as it would, then rewrites what it answered on one kind of route. Only
successful answers are rewritten (HTTP 200: a JSON-RPC answer, a card, a feed page), never a refusal.
:func:`request_headers` rewrites what a request carries instead, before the agent reads it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.edge import CARD_ROUTES, RPC_ROUTE, TURNS_ROUTE
from nylorun_a2a_kit.reference_agent.errors import ERROR_INFO, RpcError
from nylorun_a2a_kit.reference_agent.rpc import parse_json
from nylorun_a2a_kit.reference_agent.seams import MiddlewareFactory

TASK_RESULTS = ("GetTask", "CancelTask")  # methods whose result is a Task
METHOD_NOT_FOUND = RpcError("MethodNotFoundError", "Method not found", reason="METHOD_NOT_FOUND")


def server_error() -> web.Response:
    """An HTTP 500 as a crashing handler's would be."""
    return web.Response(status=500, text="500 Internal Server Error", content_type="text/html")


@dataclass
class Call:
    """One JSON-RPC exchange as a wire fault sees it: the request as sent and the answer it is about to get."""

    http: web.Request
    config: AgentConfig
    body: bytes
    answer: dict[str, Any]

    @cached_property
    def _read(self) -> tuple[bool, Any]:
        try:
            return True, parse_json(self.body)
        except ValueError:
            return False, None

    def parses(self) -> bool:
        """Whether the body is JSON."""
        return self._read[0]

    @property
    def request(self) -> Any:
        """The body as JSON (None also when it is not JSON: see :meth:`parses`)."""
        return self._read[1]

    @property
    def method(self) -> str | None:
        return self._member("method")

    @property
    def params(self) -> dict[str, Any]:
        params = self._member("params")
        return params if isinstance(params, dict) else {}

    def _member(self, name: str) -> Any:
        return self.request.get(name) if isinstance(self.request, dict) else None

    @property
    def reason(self) -> str | None:
        """The reason of the answer's ``google.rpc.ErrorInfo``, when the answer is an error that has one."""
        details = (self.answer.get("error") or {}).get("data") or []
        return next((d.get("reason") for d in details if d.get("@type") == ERROR_INFO), None)

    def tasks(self) -> list[dict[str, Any]]:
        """The Tasks the answer's result carries."""
        result = self.answer.get("result")
        if not isinstance(result, dict):
            return []
        if self.method in TASK_RESULTS:
            return [result]
        if self.method == "SendMessage":
            return [result["task"]] if "task" in result else []
        return list(result.get("tasks", [])) if self.method == "ListTasks" else []

    def answer_error(self, error: RpcError) -> None:
        self.answer.pop("result", None)
        self.answer["error"] = error.to_json()


def _after(
    routes: Iterable[str], rewrite: Callable[..., Awaitable[web.StreamResponse | None]], status: int = 200
) -> MiddlewareFactory:
    """A middleware factory: the agent answers ``status``, then ``rewrite(request, response, config)`` may replace
    it."""
    names = frozenset(routes)

    def factory(config: AgentConfig) -> Callable[..., Any]:
        @web.middleware
        async def middleware(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
            response = await handler(request)
            if request.match_info.route.name not in names or response.status != status:
                return response
            return await rewrite(request, response, config) or response

        return middleware

    return factory


def answers(rewrite: Callable[[Call], None]) -> MiddlewareFactory:
    """Rewrite each JSON-RPC answer (``rewrite`` changes ``call.answer`` in place)."""

    async def rewritten(request: web.Request, response: web.Response, config: AgentConfig) -> None:
        call = Call(request, config, await request.read(), parse_json(response.text))
        rewrite(call)
        response.text = json.dumps(call.answer)

    return _after((RPC_ROUTE,), rewritten)


def refusals(reason: str, methods: Collection[str]) -> Callable[[Callable[[Call], None]], MiddlewareFactory]:
    """Rewrite each answer of ``methods`` that is an error whose ErrorInfo gives ``reason``."""

    def decorate(rewrite: Callable[[Call], None]) -> MiddlewareFactory:
        def rewritten(call: Call) -> None:
            if call.method in methods and call.reason == reason:
                rewrite(call)

        return answers(rewritten)

    return decorate


def responses(rewrite: Callable[[Call, web.Response], web.Response | None]) -> MiddlewareFactory:
    """Rewrite the HTTP response of each JSON-RPC answer: change it in place, or return another one."""

    async def rewritten(request: web.Request, response: web.Response, config: AgentConfig) -> web.Response | None:
        return rewrite(Call(request, config, await request.read(), parse_json(response.text)), response)

    return _after((RPC_ROUTE,), rewritten)


def documents(routes: Iterable[str], rewrite: Callable[[dict[str, Any], web.Request, AgentConfig], None]):
    """Rewrite each JSON document served on ``routes`` (``rewrite`` changes it in place)."""

    async def rewritten(request: web.Request, response: web.Response, config: AgentConfig) -> None:
        document = parse_json(response.text)
        rewrite(document, request, config)
        response.text = json.dumps(document)

    return _after(routes, rewritten)


def cards(rewrite: Callable[[dict[str, Any], web.Request, AgentConfig], None]) -> MiddlewareFactory:
    return documents(CARD_ROUTES, rewrite)


def feed_pages(rewrite: Callable[[dict[str, Any]], None]) -> MiddlewareFactory:
    return documents((TURNS_ROUTE,), lambda page, _request, _config: rewrite(page))


def served(*routes: str, status: int = 200):
    """Rewrite each HTTP response of ``status`` on ``routes``: ``rewrite(request, response)`` changes it, or returns
    another."""

    def decorate(rewrite: Callable[[web.Request, web.Response], web.StreamResponse | None]) -> MiddlewareFactory:
        async def rewritten(request: web.Request, response: web.Response, _config: AgentConfig):
            return rewrite(request, response)

        return _after(routes, rewritten, status)

    return decorate


def request_headers(rewrite: Callable[[web.Request], dict[str, str] | None]) -> MiddlewareFactory:
    """Rewrite what each request carries before the agent reads it: ``rewrite(request)`` answers the headers to
    put in place of those of the same names, or nothing to leave the request as it came."""

    def factory(config: AgentConfig) -> Callable[..., Any]:
        @web.middleware
        async def middleware(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
            replaced = rewrite(request)
            if replaced:
                headers = CIMultiDict(request.headers)
                for name, value in replaced.items():
                    headers.popall(name, None)
                    headers[name] = value
                request = request.clone(headers=headers)
            return await handler(request)

        return middleware

    return factory
