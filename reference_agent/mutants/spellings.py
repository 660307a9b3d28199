"""Mutants of the spelling axis: each spelling a requirement lists, read (or written) one way only.

From the requirements' ``spellings`` (fixtures/requirements/axes.py): for what the kit sends, an Agent that
understands the kit's own spelling only (a header's name in lower case read as no header, a media type with
parameters refused); for what the kit receives, an Agent that writes the other spelling, which the kit must take
(equivalent: a media type with parameters, a header's name in other case) or must not (a delivery by PUT).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from nylorun_a2a_kit.reference_agent.delivery import Webhooks
from nylorun_a2a_kit.reference_agent.edge import RPC_ROUTE
from nylorun_a2a_kit.reference_agent.errors import invalid_params
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.mutants.catalog import Mutant, mutant
from nylorun_a2a_kit.reference_agent.rpc import Rendering
from nylorun_a2a_kit.reference_agent.seams import MiddlewareFactory
from nylorun_a2a_kit.reference_agent.store import TaskRecord

CASE_INSENSITIVE = "header field names are case-insensitive (RFC 9110 §5.1): the kit reads them so"
MEDIA_TYPES = "a media type is read without its parameters and in any case (RFC 9110 §8.3.1)"
Built = tuple[str, str, Any, str | None]  # name's tail, description, behaviour, equivalent reason (None: breaks)
PLURAL = {"answer": "answers", "delivery": "deliveries"}


def derive(requirements: dict[str, Any]) -> Iterator[Mutant]:
    """A mutant per member; one that several requirements list (an equivalent) is derived once, naming each."""
    built: dict[str, tuple[str, Any, str | None, list[str]]] = {}
    for requirement in requirements.values():
        for member in requirement.spellings:
            kind, _, subject = member.partition(":")
            for tail, description, behaviour, equivalent in BUILDERS[kind](subject, requirement.id):
                built.setdefault(f"spelling/{tail}", (description, behaviour, equivalent, []))[3].append(requirement.id)
    for name, (description, behaviour, equivalent, read) in built.items():
        if equivalent:
            yield mutant(name, description, behaviour, equivalent=equivalent, read=tuple(read))
        else:
            yield mutant(name, description, behaviour, breaks=tuple(read))


# -- what the kit sends: an Agent that takes the kit's own spelling only


def _header_lower_case(subject: str, requirement: str) -> list[Built]:
    if subject.startswith("the echoed "):
        name = subject.removeprefix("the echoed ")
        return [
            (
                f"answer.{name}/lower-case-name",
                f"the answer writes {name}'s name in lower case",
                _answer_header_renamed(name, name.lower()),
                CASE_INSENSITIVE,
            )
        ]
    if subject == "Content-Type":
        return [
            (
                f"request.{subject}/lower-case-refused",
                "a request whose content-type is written in lower case is refused (415)",
                _refused_unless(lambda request: _raw_name(request, subject) == subject),
                None,
            )
        ]
    ignored = (
        f"request.{subject}/lower-case-ignored",
        f"{subject} written in lower case is read as no {subject}",
        _dropped_unless_spelt(subject),
        None,
    )
    if subject != "Nylorun-Scopes":
        return [ignored]
    # Read as absent, the scopes are the default, sessions:own: what the kit sends anyway. Refused, they are not.
    default = (
        "the kit sends the default scopes, sessions:own: a request whose scopes are read as absent is served with "
        "the same ones"
    )
    refused = (
        f"request.{subject}/lower-case-refused",
        f"a request with {subject} written in lower case is refused (400)",
        _refused_unless(lambda r: _raw_name(r, subject) in (None, subject), status=400),
        None,
    )
    return [(*ignored[:3], default), refused]


def _header_capitalized(subject: str, requirement: str) -> list[Built]:
    if subject.startswith("webhook-"):
        return [
            (
                "delivery.webhook-headers/capitalized",
                "a delivery's webhook-id, webhook-timestamp and "
                "webhook-signature are written Webhook-Id, Webhook-Timestamp, Webhook-Signature",
                _delivery_headers(_capitalized_webhook_names),
                CASE_INSENSITIVE,
            )
        ]
    return [
        (
            f"request.{subject}/capitalized-ignored",
            f"{subject} written with capitals is read as no {subject}",
            _dropped_unless_spelt(subject),
            None,
        )
    ]


def _scheme_case(subject: str, requirement: str) -> list[Built]:
    def bearer_only(request: web.Request) -> bool:
        value = request.headers.get("Authorization", "")
        return not value or value.startswith("Bearer ")

    return [
        (
            "request.Authorization/scheme-case-ignored",
            "an Authorization scheme written bearer is read as no key",
            _headers_dropped_unless("Authorization", bearer_only),
            None,
        )
    ]


def _media_type_parameters(subject: str, requirement: str) -> list[Built]:
    if subject == "request":
        return [
            (
                "request.media-type/parameters-refused",
                "a request typed application/json; charset=utf-8 is refused (415)",
                _refused_unless(lambda r: ";" not in r.headers.get("Content-Type", "")),
                None,
            )
        ]
    return [
        (
            f"{subject}.media-type/with-parameters",
            f"{PLURAL[subject]} are typed application/json; charset=utf-8",
            _typed(subject, "application/json; charset=utf-8"),
            MEDIA_TYPES,
        )
    ]


def _media_type_case(subject: str, requirement: str) -> list[Built]:
    if subject == "request":
        return [
            (
                "request.media-type/case-refused",
                "a request typed Application/JSON is refused (415)",
                _refused_unless(lambda r: r.headers.get("Content-Type", "").split(";")[0] == "application/json"),
                None,
            )
        ]
    return [
        (
            f"{subject}.media-type/other-case",
            f"{PLURAL[subject]} are typed Application/JSON",
            _typed(subject, "Application/JSON"),
            MEDIA_TYPES,
        )
    ]


def _a2a_media_type(subject: str, requirement: str) -> list[Built]:
    built = [
        (
            f"{subject}.media-type/a2a-json",
            f"{PLURAL[subject]} are typed application/a2a+json",
            _typed(subject, "application/a2a+json"),
            "application/a2a+json is the media type A2A §4.3.3 shows",
        )
    ]
    if subject == "delivery":  # what is not a JSON type at all: the rule's own member
        built.append(
            ("delivery.media-type/text-plain", "deliveries are typed text/plain", _typed(subject, "text/plain"), None)
        )
    return built


def _version_parameter(subject: str, requirement: str) -> list[Built]:
    @web.middleware
    async def ignored(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        if "A2A-Version" in request.query:
            request = request.clone(rel_url=request.rel_url.with_query({}))
        return await handler(request)

    return [
        (
            "request.version-parameter/ignored",
            "A2A-Version given as a request parameter is read as no version",
            lambda config: ignored,
            None,
        )
    ]


WHOLE_SECONDS = re.compile(r"T\d\d:\d\d:\d\dZ$")


def _timestamp_whole_seconds(subject: str, requirement: str) -> list[Built]:
    def refused(call: wire.Call) -> None:
        if call.method == "ListTasks" and WHOLE_SECONDS.search(str(call.params.get(subject, ""))):
            call.answer_error(invalid_params([(subject, "must carry milliseconds")]))

    return [
        (
            f"request.{subject}/whole-seconds-refused",
            f"{subject} without fractional seconds is refused (-32602)",
            wire.answers(refused),
            None,
        )
    ]


def _http_method(subject: str, requirement: str) -> list[Built]:
    return [
        (
            "delivery.method/PUT",
            "deliveries are sent with HTTP PUT",
            type("PutDeliveries", (Webhooks,), {"method": "PUT"}),
            None,
        )
    ]


def _signature_entries(subject: str, requirement: str) -> list[Built]:
    def bad_entry_first(headers: dict[str, str]) -> dict[str, str]:
        return {**headers, "webhook-signature": f"v1,{'A' * 43}= {headers['webhook-signature']}"}

    return [
        (
            "delivery.webhook-signature/a-bad-entry-first",
            "webhook-signature carries an entry that does not verify before the one that does",
            _delivery_headers(bad_entry_first),
            "Standard Webhooks: a delivery verifies when any of its signatures does (a key being rotated)",
        )
    ]


class _NewestFirst(Rendering):
    def task(self, task: TaskRecord, method: str, asked: int | None, **shown: Any) -> dict[str, Any]:
        out = super().task(task, method, asked, **shown)
        if "history" in out:
            out["history"] = out["history"][::-1]
        return out


def _history_newest_first(subject: str, requirement: str) -> list[Built]:
    return [
        (
            "history/newest-first",
            "every method lists a task's history newest message first",
            _NewestFirst,
            "A2A fixes no order for a task's history (a2a.proto Task.history, §3.1.3): the kit reads it from the "
            "kit's own messages",
        )
    ]


BUILDERS: dict[str, Callable[[str, str], list[Built]]] = {
    "history-newest-first": _history_newest_first,
    "header-lower-case": _header_lower_case,
    "header-capitalized": _header_capitalized,
    "scheme-case": _scheme_case,
    "media-type-parameters": _media_type_parameters,
    "media-type-case": _media_type_case,
    "a2a-media-type": _a2a_media_type,
    "version-parameter": _version_parameter,
    "timestamp-whole-seconds": _timestamp_whole_seconds,
    "http-method": _http_method,
    "signature-entries": _signature_entries,
}


# -- the behaviours


def _raw_name(request: web.Request, name: str) -> str | None:
    """How the request wrote the field ``name`` (None: it did not carry it)."""
    wanted = name.lower().encode()
    return next((raw.decode() for raw, _ in request.raw_headers if raw.lower() == wanted), None)


def _dropped_unless_spelt(name: str) -> MiddlewareFactory:
    """The field ``name`` is read only when written exactly so; otherwise the agent sees no such field."""
    return _headers_dropped_unless(name, lambda request: _raw_name(request, name) in (None, name))


def _headers_dropped_unless(name: str, kept: Callable[[web.Request], bool]) -> MiddlewareFactory:
    def factory(config: Any) -> Callable[..., Any]:
        @web.middleware
        async def middleware(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
            if not kept(request):
                headers = CIMultiDict(request.headers)
                headers.popall(name, None)
                request = request.clone(headers=headers)
            return await handler(request)

        return middleware

    return factory


def _refused_unless(served: Callable[[web.Request], bool], status: int = 415) -> MiddlewareFactory:
    def factory(config: Any) -> Callable[..., Any]:
        @web.middleware
        async def middleware(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
            if request.method == "POST" and request.match_info.route.name == RPC_ROUTE and not served(request):
                return web.Response(status=status, text=f"{status} refused")
            return await handler(request)

        return middleware

    return factory


def _answer_header_renamed(name: str, written: str) -> MiddlewareFactory:
    @wire.served(RPC_ROUTE)
    def renamed(request: web.Request, response: web.Response) -> None:
        value = response.headers.pop(name, None)
        if value is not None:
            response.headers[written] = value

    return renamed


def _typed(subject: str, media_type: str) -> Any:
    if subject == "delivery":
        return _delivery_headers(lambda headers: {**headers, "Content-Type": media_type})

    @wire.served(RPC_ROUTE)
    def typed(request: web.Request, response: web.Response) -> None:
        response.headers["Content-Type"] = media_type

    return typed


def _delivery_headers(rewrite: Callable[[dict[str, str]], dict[str, str]]) -> type:
    def request(self, config, webhook_id: str, body: bytes) -> tuple[bytes, dict[str, str]]:
        body, headers = Webhooks.request(self, config, webhook_id, body)
        return body, rewrite(headers)

    return type("DeliveryHeadersMutant", (Webhooks,), {"request": request})


def _capitalized_webhook_names(headers: dict[str, str]) -> dict[str, str]:
    return {
        ("-".join(p.capitalize() for p in k.split("-")) if k.startswith("webhook-") else k): v
        for k, v in headers.items()
    }
