"""Faults of the HTTP edge: who may call, and the HTTP answers around JSON-RPC."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent import extensions
from nylorun_a2a_kit.reference_agent.config import KeyGrant
from nylorun_a2a_kit.reference_agent.edge import (
    CARD_ROUTES,
    FILE_ROUTE,
    RPC_ROUTE,
    TURNS_ROUTE,
    Edge,
    Refused,
    key_of,
    refuse,
)
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.keys import serving
from nylorun_a2a_kit.reference_agent.rpc import parse_json
from nylorun_a2a_kit.reference_agent.seams import MiddlewareFactory

# -- who may call


@declare("no-auth-check", "a request without an application key is served", "AUTH-01")
class NoAuthCheck(Edge):
    def credentials(self, request: web.Request) -> tuple[str, KeyGrant]:
        try:
            return super().credentials(request)
        except Refused:
            return "", KeyGrant()

    def no_subject(self) -> str:
        return "anonymous"


def _admitted_anyway(method: str, refusal: Callable[[Edge, web.Request], object]) -> MiddlewareFactory:
    """Refuses, as the correct gate does, each request ``refusal`` refuses, except ``method``'s: a handler that
    checks callers after routing and forgot one method (its Edge variant lets every request through)."""

    def factory(config: Any) -> Callable[..., Any]:
        gate = Edge(config)

        @web.middleware
        async def middleware(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
            if request.match_info.route.name == RPC_ROUTE:
                try:
                    refusal(gate, request)
                except Refused as refused:
                    try:
                        asked = parse_json(await request.read())  # kept: the handler reads the same bytes
                    except ValueError:
                        asked = None
                    if not isinstance(asked, dict) or asked.get("method") != method:
                        return refused.response
            return await handler(request)

        return middleware

    return factory


def _subject(request: web.Request) -> str:
    return request.headers.get("Nylorun-Subject", "").strip()


cancel_without_key = declare("cancel-without-key-served", "CancelTask is served without a valid key", "AUTH-01")
cancel_without_key(_admitted_anyway("CancelTask", lambda gate, request: gate.credentials(request)))


@cancel_without_key
class AnyKeyAdmitted(Edge):
    def admit(self, request: web.Request) -> tuple[str, str]:
        if key_of(request) in self.config.keys:
            return super().admit(request)
        return self.known_agent(request), _subject(request) or self.no_subject()


get_without_subject = declare(
    "get-without-subject-served",
    "GetTask without Nylorun-Subject is served for a default subject; every other method refuses it",
    "AUTH-02",
)
get_without_subject(_admitted_anyway("GetTask", lambda gate, request: _subject(request) or gate.no_subject()))


@get_without_subject
class DefaultSubject(Edge):
    def no_subject(self) -> str:
        return "anonymous"


@contextlib.contextmanager
def _without_challenge() -> Iterator[None]:
    """A refusal raised within goes out without its WWW-Authenticate challenge."""
    try:
        yield
    except Refused as refused:
        refused.response.headers.popall("WWW-Authenticate", None)
        raise


@declare("401-without-challenge", "a 401 refusal carries no WWW-Authenticate challenge", "AUTH-06")
class NoChallenge(Edge):
    def credentials(self, request: web.Request) -> tuple[str, KeyGrant]:
        with _without_challenge():
            return super().credentials(request)


@declare("feed-401-without-challenge", "the change feed's 401 carries no WWW-Authenticate challenge", "AUTH-06")
class FeedNoChallenge(Edge):
    def reader(self, request: web.Request) -> tuple[KeyGrant, str]:
        with _without_challenge():
            return super().reader(request)


@declare("subject-optional", "a request without Nylorun-Subject acts for a default subject", "AUTH-02")
class SubjectOptional(Edge):
    def no_subject(self) -> str:
        return "anonymous"


@declare("unknown-agent-served", "an unknown Agent id answers as the default Agent", "AUTH-03")
class UnknownAgentServed(Edge):
    def agent_id(self, request: web.Request) -> str | None:
        return super().agent_id(request) or self.config.agents[0]


@declare("unknown-agent-card-served", "the card of an unknown Agent id is the default Agent's card", "AUTH-03")
class UnknownAgentCardServed(Edge):
    def known_agent(self, request: web.Request) -> str:
        if request.match_info.route.name in CARD_ROUTES:
            return self.agent_id(request) or self.config.agents[0]
        return super().known_agent(request)


extended_card_any_agent = declare(
    "extended-card-any-agent",
    "GetExtendedAgentCard on an unknown Agent id answers -32004, as if refused before the Agent is looked up",
    "AUTH-03",
)
extended_card_any_agent(_admitted_anyway("GetExtendedAgentCard", lambda gate, request: gate.known_agent(request)))


@extended_card_any_agent
class AnyAgentAdmitted(Edge):
    def known_agent(self, request: web.Request) -> str:
        if request.match_info.route.name == RPC_ROUTE:
            return self.agent_id(request) or self.config.agents[0]
        return super().known_agent(request)


@declare("scopes-required", "a request without Nylorun-Scopes is refused", "AUTH-04")
class ScopesRequired(Edge):
    def check_scopes(self, request: web.Request, grant: KeyGrant) -> None:
        if "Nylorun-Scopes" not in request.headers:
            raise Refused(403, "SCOPES_REQUIRED", "Send Nylorun-Scopes.")
        super().check_scopes(request, grant)


@declare("no-rate-limit", "rate limits are not enforced", "AUTH-05")
class NoRateLimit(Edge):
    def limit(self, key: str, grant: KeyGrant) -> None:
        pass


# -- HTTP answers around JSON-RPC


@declare("http-500-on-bad-json", "answers a body that is not JSON with HTTP 500", "ERR-03")
@wire.responses
def http_500_on_bad_json(call: wire.Call, response: web.Response) -> web.Response | None:
    return None if call.parses() else wire.server_error()


@declare(
    "non-object-body-500",
    "a body, or its params, that is JSON but not an object (null, 1, [], a string) gets HTTP 500",
    "ERR-03",
)
@wire.responses
def non_object_body_500(call: wire.Call, response: web.Response) -> web.Response | None:
    if not call.parses():
        return None
    request = call.request
    not_object = not isinstance(request, dict) or ("params" in request and not isinstance(request["params"], dict))
    return wire.server_error() if not_object else None


@declare(
    "get-task-answers-500", "GetTask (and only it) answers HTTP 500 with an HTML page, whatever it is asked", "ERR-14"
)
@wire.responses
def get_task_answers_500(call: wire.Call, response: web.Response) -> web.Response | None:
    return wire.server_error() if call.method == "GetTask" else None


@declare("rpc-answers-500", "every JSON-RPC request is answered HTTP 500 with an HTML page", "ERR-14")
@wire.responses
def rpc_answers_500(call: wire.Call, response: web.Response) -> web.Response:
    return wire.server_error()


@declare("response-text-plain", "JSON-RPC answers are served as text/plain", "BIND-02")
@wire.responses
def response_text_plain(call: wire.Call, response: web.Response) -> None:
    response.content_type = "text/plain"


@declare("error-answers-text-plain", "JSON-RPC error answers are served as text/plain; results as JSON", "BIND-02")
@wire.responses
def error_answers_text_plain(call: wire.Call, response: web.Response) -> None:
    if "error" in call.answer:
        response.content_type = "text/plain"


def _echo(response: web.Response, uris) -> None:
    """``A2A-Extensions`` as an answer with these URIs activated would carry it."""
    response.headers.popall("A2A-Extensions", None)
    if uris:
        response.headers["A2A-Extensions"] = ", ".join(sorted(uris))


@declare("echo-unactivated-extension", "every declared extension is echoed, activated or not", "EXT-01")
@wire.responses
def echo_unactivated_extension(call: wire.Call, response: web.Response) -> None:
    _echo(response, extensions.DECLARED)


@declare("echo-only-v1", "only the v1 extensions are echoed, whatever else was activated", "EXT-01")
@wire.responses
def echo_only_v1(call: wire.Call, response: web.Response) -> None:
    _echo(response, extensions.activate(call.http.headers.getall("A2A-Extensions", [])) & extensions.V1)


@declare("echo-unknown-extension", "an undeclared URI in A2A-Extensions is echoed", "EXT-02")
@wire.responses
def echo_unknown_extension(call: wire.Call, response: web.Response) -> None:
    _echo(response, extensions.requested(call.http.headers.getall("A2A-Extensions", [])))


@declare(
    "echo-unknown-beside-declared",
    "when a request activates a declared extension, every URI it asked for is echoed, undeclared ones too",
    "EXT-02",
)
@wire.responses
def echo_unknown_beside_declared(call: wire.Call, response: web.Response) -> None:
    if "A2A-Extensions" in response.headers:
        _echo(response, extensions.requested(call.http.headers.getall("A2A-Extensions", [])))


@declare("no-echo-on-cancel", "CancelTask's answer does not echo the activated extensions", "EXT-01")
@wire.responses
def no_echo_on_cancel(call: wire.Call, response: web.Response) -> None:
    if call.method == "CancelTask":
        response.headers.popall("A2A-Extensions", None)


@declare(
    "extensions-split-on-comma-space",
    'A2A-Extensions is split at ", " only: a list written without spaces is one unknown URI, activating nothing',
    "EXT-01",
)
@wire.request_headers
def extensions_split_on_comma_space(request: web.Request) -> dict[str, str] | None:
    values = request.headers.getall("A2A-Extensions", [])
    if not values:
        return None
    read = [part.replace(",", "%2C") for value in values for part in value.split(", ")]
    return {"A2A-Extensions": ", ".join(read)}


def _declared_version(uri: str) -> str:
    """The declared extension ``uri`` is another version of (same URI up to its trailing /v<N>), or ``uri``."""
    versioned = re.match(r"^(.+/v)\d+/?$", uri)
    if versioned is None:
        return uri
    return next((d for d in sorted(extensions.DECLARED) if d.startswith(versioned[1]) and d != uri), uri)


@declare("extension-version-fallback", "a request for another version of a declared extension gets that one", "EXT-08")
@wire.request_headers
def extension_version_fallback(request: web.Request) -> dict[str, str] | None:
    asked = extensions.requested(request.headers.getall("A2A-Extensions", []))
    if not asked:
        return None
    return {"A2A-Extensions": ", ".join(_declared_version(uri) for uri in asked)}


# -- files


@declare("file-url-unfetchable", "a url file part's URL answers 404", "FILE-03")
@wire.served(FILE_ROUTE)
def file_url_unfetchable(request: web.Request, response: web.StreamResponse) -> web.Response:
    return refuse(404, "FILE_NOT_FOUND", "No such file.")


@declare(
    "file-token-told-apart",
    "a file URL whose token is wrong answers 403 where the task exists: the refusal tells the task exists",
    "FILE-06",
)
@wire.served(FILE_ROUTE, status=404)
def file_token_told_apart(request: web.Request, response: web.StreamResponse) -> web.Response | None:
    task = serving(request.app).engine.store.get(request.match_info["task_id"])
    if task is not None and task.agent_id == request.match_info["agent_id"]:
        return refuse(403, "FILE_TOKEN_INVALID", "The file's token is not valid.")
    return None


@declare("file-token-case-blind", "a file URL's token is matched whatever its letter case", "FILE-07")
@wire.served(FILE_ROUTE, status=404)
def file_token_case_blind(request: web.Request, response: web.StreamResponse) -> web.Response | None:
    found = (
        serving(request.app)
        .engine.store.db.execute(
            "SELECT data FROM files WHERE agent_id=? AND task_id=? AND path=? AND token=? COLLATE NOCASE",
            tuple(request.match_info[name] for name in ("agent_id", "task_id", "name", "token")),
        )
        .fetchone()
    )
    return web.Response(body=bytes(found["data"]), content_type="application/octet-stream") if found else None


@declare(
    "answers-cache-public",
    "every JSON-RPC answer and change-feed page says Cache-Control: public, max-age=300 (the card's caching applied "
    "to the whole app)",
    "ISO-07",
    "ISO-08",
)
@wire.served(RPC_ROUTE, TURNS_ROUTE)
def answers_cache_public(request: web.Request, response: web.Response) -> None:
    response.headers["Cache-Control"] = "public, max-age=300"


@declare(
    "errors-http-4xx",
    "a JSON-RPC error answer comes with an HTTP 4xx, as a REST binding would give it (404 for a task or config not "
    "found, 400 for the others), its body unchanged",
    "BIND-03",
)
@wire.responses
def errors_http_4xx(call: wire.Call, response: web.Response) -> None:
    code = (call.answer.get("error") or {}).get("code")
    if isinstance(code, int):
        response.set_status(404 if code == -32001 else 400)


@declare(
    "key-compared-by-prefix",
    "a bearer token that begins with an application key is taken for that key (the comparison cut to the key's length)",
    "AUTH-01",
)
class KeyComparedByPrefix(Edge):
    def credentials(self, request: web.Request) -> tuple[str, KeyGrant]:
        sent = key_of(request)
        for key, grant in self.config.keys.items():
            if key and sent.startswith(key):
                return key, grant
        return super().credentials(request)


@declare(
    "agent-id-case-insensitive",
    "the Agent lookup compares ids ignoring letter case: another spelling of an Agent id is served as that Agent",
    "ISO-09",
)
class AgentIdCaseInsensitive(Edge):
    def agent_id(self, request: web.Request) -> str | None:
        named = request.match_info.get("agent_id", self.config.agents[0])
        return next((agent for agent in self.config.agents if agent.casefold() == named.casefold()), None)


@declare(
    "retry-after-in-milliseconds",
    "a 429's Retry-After gives the wait in milliseconds (3600000 for an hour), the unit of the limiter's own clock",
    "AUTH-07",
)
@wire.served(RPC_ROUTE, status=429)
def retry_after_in_milliseconds(request: web.Request, response: web.Response) -> None:
    seconds = response.headers.get("Retry-After", "")
    if seconds.isdigit():
        response.headers["Retry-After"] = str(int(seconds) * 1000)
