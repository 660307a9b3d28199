"""Faults of the Agent Card: what it declares, and how it is served."""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent.card import agent_card
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.edge import CARD_ROUTES
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.seams import MiddlewareFactory

Card = dict[str, Any]


@declare("card-second-binding", "the card lists an HTTP+JSON interface besides JSON-RPC", "BIND-01")
@wire.cards
def card_second_binding(card: Card, request: web.Request, config: AgentConfig) -> None:
    endpoint = card["supportedInterfaces"][0]["url"]
    card["supportedInterfaces"].append(
        {"url": endpoint + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
    )


def _capability(name: str, value: bool) -> MiddlewareFactory:
    """The card says ``capabilities.<name>: <value>``, whatever the Agent does."""

    def rewrite(card: Card, request: web.Request, config: AgentConfig) -> None:
        card["capabilities"][name] = value

    return wire.cards(rewrite)


declare(
    "card-extended",
    "the card says extendedAgentCard: true, yet GetExtendedAgentCard is refused -32004",
    "CARD-04",
    "CARD-11",
)(_capability("extendedAgentCard", True))
declare("card-hides-push", "the card says pushNotifications false while push is configured", "PUSH-04")(
    _capability("pushNotifications", False)
)
declare(
    "capability-without-secret",
    "the card says pushNotifications true without a push secret",
    "PUSH-04",
    run_with=("--a2a-reference-push=off",),
)(_capability("pushNotifications", True))


@declare("card-extension-required", "the card declares an extension with required: true", "CARD-06")
@wire.cards
def card_extension_required(card: Card, request: web.Request, config: AgentConfig) -> None:
    card["capabilities"]["extensions"][0]["required"] = True


@declare("card-every-extension-required", "the card declares every profile extension with required: true", "CARD-06")
@wire.cards
def card_every_extension_required(card: Card, request: web.Request, config: AgentConfig) -> None:
    for extension in card["capabilities"]["extensions"]:
        extension["required"] = True


@declare("card-last-extension-required", "the card declares its last profile extension with required: true", "CARD-06")
@wire.cards
def card_last_extension_required(card: Card, request: web.Request, config: AgentConfig) -> None:
    card["capabilities"]["extensions"][-1]["required"] = True


@declare("card-lists-0.3-interface", "the card lists a JSON-RPC 0.3 interface after the 1.0 one", "BIND-01")
@wire.cards
def card_lists_03_interface(card: Card, request: web.Request, config: AgentConfig) -> None:
    endpoint = card["supportedInterfaces"][0]["url"]
    card["supportedInterfaces"].append({"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"})


@declare(
    "card-capability-as-text",
    'the card\'s capabilities.streaming is the string "false" (a configured value kept as text), not a boolean',
    "CARD-01",
)
@wire.cards
def card_capability_as_text(card: Card, request: web.Request, config: AgentConfig) -> None:
    card["capabilities"]["streaming"] = str(card["capabilities"].get("streaming", False)).lower()


@declare("card-wrong-content-type", "the Agent Card is served as text/plain", "CARD-01")
@wire.served(*CARD_ROUTES)
def card_wrong_content_type(request: web.Request, response: web.Response) -> None:
    response.content_type = "text/plain"


@declare("card-wrong-url", "the card's interface URL is not the endpoint the Agent serves", "CARD-02")
@wire.cards
def card_wrong_url(card: Card, request: web.Request, config: AgentConfig) -> None:
    interface = card["supportedInterfaces"][0]
    interface["url"] = interface["url"].replace("/v1/a2a/agents/", "/v1/a2a/agent/")


@declare("card-of-another-agent", "an Agent's card endpoint serves another Agent's card", "CARD-07")
@wire.cards
def card_of_another_agent(card: Card, request: web.Request, config: AgentConfig) -> None:
    endpoint = card["supportedInterfaces"][0]["url"]
    agent_id = endpoint.rsplit("/", 1)[1]
    if len(config.agents) > 1:
        other = config.agents[(config.agents.index(agent_id) + 1) % len(config.agents)]
        card.clear()
        card.update(agent_card(other, endpoint.removesuffix(agent_id) + other, config))


@declare(
    "later-agents-card-without-skills",
    "every Agent but the Runtime's first serves a card with no skills (the builder reads the skills only the first "
    "Agent has configured): skills is a required list, never empty",
    "CARD-01",
)
@wire.cards
def later_agents_card_without_skills(card: Card, request: web.Request, config: AgentConfig) -> None:
    if card["supportedInterfaces"][0]["url"].rsplit("/", 1)[1] != config.agents[0]:
        card["skills"] = []


@declare("card-signed", "the card carries a signature", "CARD-05")
@wire.cards
def card_signed(card: Card, request: web.Request, config: AgentConfig) -> None:
    card["signatures"] = [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2lnbmF0dXJl"}]


@declare("card-security-schemes", "the Runtime card declares a bearer security scheme", "CARD-08")
@wire.cards
def card_security_schemes(card: Card, request: web.Request, config: AgentConfig) -> None:
    card["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
    card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]


@declare("card-no-cache-control", "the Agent Card is served without Cache-Control", "CARD-09")
@wire.served(*CARD_ROUTES)
def card_no_cache_control(request: web.Request, response: web.Response) -> None:
    response.headers.popall("Cache-Control", None)


@declare("card-no-etag", "the Agent Card is served without an ETag", "CARD-10")
@wire.served(*CARD_ROUTES)
def card_no_etag(request: web.Request, response: web.Response) -> None:
    response.headers.popall("ETag", None)


@declare("card-etag-per-request", "the Agent Card gets a new ETag on every fetch, though it has not changed", "CARD-10")
@wire.served(*CARD_ROUTES)
def card_etag_per_request(request: web.Request, response: web.Response) -> None:
    response.headers["ETag"] = f'"{secrets.token_hex(8)}"'


@declare(
    "card-304-any-tag",
    "any If-None-Match is answered 304 Not Modified (the header's presence is tested, not its tag)",
    "CARD-12",
)
@wire.served(*CARD_ROUTES)
def card_304_any_tag(request: web.Request, response: web.Response) -> web.Response | None:
    if "If-None-Match" not in request.headers:
        return None
    return web.Response(
        status=304, headers={k: v for k, v in response.headers.items() if k in ("Cache-Control", "ETag")}
    )


@declare(
    "card-304-bare",
    "the conditional middleware answers a card fetch naming the card's own tag with a bare 304: no ETag and no "
    "Cache-Control, though the 200 carries both",
    "CARD-12",
)
@wire.served(*CARD_ROUTES, status=304)
def card_304_bare(request: web.Request, response: web.Response) -> None:
    response.headers.pop("ETag", None)
    response.headers.pop("Cache-Control", None)


@declare(
    "card-if-none-match-compared-whole",
    "a card fetch's If-None-Match is compared with the ETag as one string: the card's own tag in a list or written "
    "weak, and *, are taken for another tag and answered 200 (the tag alone still gets 304)",
    "CARD-12",
)
@wire.request_headers
def card_if_none_match_compared_whole(request: web.Request) -> dict[str, str] | None:
    whole = ", ".join(request.headers.getall("If-None-Match", [])).strip()
    if not whole or ("," not in whole and not whole.startswith(("W/", "*"))):
        return None
    return {"If-None-Match": '"' + whole.replace('"', "'") + '"'}
