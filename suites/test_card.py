"""The Agent Card: where it is served, its shape, its single binding, and its capabilities."""

from __future__ import annotations

import re
import secrets
from urllib.parse import urlsplit

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.client import fetch, http_client
from nylorun_a2a_kit.fixtures.requirements import not_applicable, not_checked
from nylorun_a2a_kit.fixtures.target import PROFILE_V1_EXTENSIONS, PROFILE_V2_EXTENSIONS, Target, default_card_url

PROFILE_URI_PREFIX = "https://docs.nylorun.com/a2a/"
# RFC 9111 §5.2: a max-age directive with delta-seconds (the token form, or the quoted form senders must not
# use but recipients accept).
MAX_AGE = re.compile(r'^max-age\s*=\s*"?\d+"?$', re.IGNORECASE)
# RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE
ENTITY_TAG = re.compile(r'^(W/)?"[\x21\x23-\x7e\x80-\xff]*"$')


@pytest.fixture(scope="module")
def card_exchange(a2a_target: Target):
    with http_client() as http:
        return fetch(http, a2a_target.card_url, headers={"Accept": "application/json"}, timeout_s=a2a_target.timeout_s)


def _card(exchange) -> dict:
    if exchange.status != 200:
        exchange.fail(f"expected the Agent Card with HTTP 200, got {exchange.status}")
    return exchange.json


def _endpoint(url: str) -> tuple:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, parts.hostname, port, parts.path.rstrip("/")


def _same_endpoint(a: str, b: str) -> bool:
    return _endpoint(a) == _endpoint(b)


@pytest.mark.req("CARD-01")
def test_card_is_served_where_the_client_looks(a2a_target: Target, card_exchange):
    card = _card(card_exchange)
    if "application/json" not in card_exchange.response_headers.get("content-type", ""):
        card_exchange.fail("the Agent Card is not served as application/json")
    problems = schemas.violations(card, "a2a/AgentCard.json")
    if problems:
        card_exchange.fail(
            "the Agent Card is not a valid A2A 1.0 AgentCard (the run read it without the members named): "
            + "; ".join(str(p) for p in problems[:5])
            + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
        )


@pytest.mark.req("CARD-01")
def test_the_other_agents_card_is_valid_too(a2a_target: Target):
    # The profile's rules hold for every Agent a Runtime serves: the second Agent the run names has its own card.
    if not a2a_target.other_agent_url:
        not_applicable("no second Agent given (--a2a-other-agent-url)")
    with http_client() as http:
        exchange = fetch(
            http,
            default_card_url(a2a_target.other_agent_url),
            headers={"Accept": "application/json", "Authorization": f"Bearer {a2a_target.key}"},
            timeout_s=a2a_target.timeout_s,
        )
    card = _card(exchange)
    problems = schemas.violations(card, "a2a/AgentCard.json")
    if problems:
        exchange.fail(
            "the second Agent's card is not a valid A2A 1.0 AgentCard: " + "; ".join(str(p) for p in problems[:5])
        )


@pytest.mark.req("CARD-02")
def test_card_lists_the_target_endpoint(a2a_target: Target, card_exchange):
    interfaces = _card(card_exchange)["supportedInterfaces"]
    if not any(_same_endpoint(i["url"], a2a_target.url) for i in interfaces):
        card_exchange.fail(f"no supportedInterfaces entry has the URL the kit calls, {a2a_target.url}")


@pytest.mark.req("BIND-01")
def test_card_lists_only_jsonrpc_1_0(card_exchange):
    # Every entry, not only the first; a patch number is not considered (A2A §3.6): 1.0.0 is 1.0.
    interfaces = _card(card_exchange)["supportedInterfaces"]
    others = [
        i
        for i in interfaces
        if (i["protocolBinding"].upper(), _major_minor(i["protocolVersion"])) != ("JSONRPC", "1.0")
    ]
    if others:
        card_exchange.fail(f"interfaces other than JSON-RPC 1.0 are listed: {others}")


def _major_minor(version: str) -> str:
    return ".".join(version.strip().split(".")[:2])


@pytest.mark.req("CARD-03")
def test_card_says_streaming_false(card_exchange):
    capabilities = _card(card_exchange)["capabilities"]
    # Absent reads as false (A2A §3.3.4); only true is wrong.
    if capabilities.get("streaming", False) is not False:
        card_exchange.fail(f"capabilities.streaming must be false or absent, got {capabilities.get('streaming')!r}")


@pytest.mark.req("CARD-04")
def test_card_says_extended_card_false(card_exchange):
    capabilities = _card(card_exchange)["capabilities"]
    # Absent reads as false (A2A §3.3.4); only true is wrong.
    if capabilities.get("extendedAgentCard", False) is not False:
        card_exchange.fail("capabilities.extendedAgentCard must be false or absent")


@pytest.mark.req("CARD-05")
def test_card_is_not_signed(card_exchange):
    if _card(card_exchange).get("signatures"):
        card_exchange.fail("the profile serves no signed Agent Cards, but signatures are present")


@pytest.mark.req("CARD-06")
@pytest.mark.parametrize("uri", PROFILE_V2_EXTENSIONS, ids=[uri.rsplit("/", 2)[-2] for uri in PROFILE_V2_EXTENSIONS])
def test_profile_extension_is_declared_optional(a2a_target: Target, card_exchange, uri: str):
    extensions = _card(card_exchange)["capabilities"].get("extensions") or []
    declared = [e for e in extensions if isinstance(e, dict) and e.get("uri") == uri]
    expected = PROFILE_V2_EXTENSIONS if a2a_target.claim == "profile-v2" else PROFILE_V1_EXTENSIONS
    if not declared and uri not in expected:
        not_applicable(f"{uri} is not declared, and the target claims {a2a_target.claim}")
    if not declared:
        card_exchange.fail(f"the card does not declare {uri}, an extension of the tier it claims")
    required = [e.get("required") for e in declared if e.get("required", False) is not False]
    if required:
        card_exchange.fail(f"{uri} must be declared with required: false (or without required), got {required}")


@pytest.mark.req("CARD-07")
def test_runtime_card_endpoint_serves_the_card(a2a_target: Target):
    if a2a_target.runtime is None:
        not_applicable("the target is not a Runtime endpoint (…/v1/a2a/agents/{agentId})")
    with http_client() as http:
        exchange = fetch(http, a2a_target.url + "/card", timeout_s=a2a_target.timeout_s)
    card = _card(exchange)
    try:
        listed = any(_same_endpoint(i["url"], a2a_target.url) for i in card["supportedInterfaces"])
    except (KeyError, TypeError):
        listed = False
    if not listed:
        exchange.fail(f"{a2a_target.url}/card is not this Agent's card")


@pytest.mark.req("CARD-08")
def test_runtime_card_declares_no_security_schemes(a2a_target: Target, card_exchange):
    if a2a_target.runtime is None:
        not_applicable("a handler's card lists its own security schemes; only Runtime cards are checked")
    card = _card(card_exchange)
    if card.get("securitySchemes") or card.get("securityRequirements"):
        card_exchange.fail("a Runtime card declares no security schemes: callers use an application key and subject")


@pytest.mark.req("CARD-09")
def test_card_answer_says_how_long_to_cache_it(card_exchange):
    _card(card_exchange)
    directives = [d.strip() for d in card_exchange.response_headers.get("cache-control", "").split(",")]
    if not any(MAX_AGE.match(d) for d in directives):
        card_exchange.fail("the Agent Card's answer should carry Cache-Control with a max-age directive (A2A §8.6.1)")


@pytest.mark.req("CARD-10")
def test_card_answer_carries_a_stable_etag(a2a_target: Target, card_exchange):
    _card(card_exchange)
    etag = card_exchange.response_headers.get("etag", "").strip()
    if not ENTITY_TAG.match(etag):
        what = f"{etag!r} is not an entity-tag" if etag else "no ETag"
        card_exchange.fail(f"the Agent Card's answer should carry an ETag (A2A §8.6.1): {what}")
    with http_client() as http:
        again = fetch(http, a2a_target.card_url, headers={"Accept": "application/json"}, timeout_s=a2a_target.timeout_s)
    _card(again)
    if again.response_body == card_exchange.response_body and again.response_headers.get("etag", "").strip() != etag:
        again.fail(f"the same card came back with another ETag ({etag} before): a tag derives from the card")


# Tags the card cannot have: a fresh one, a list of two, and a fresh one written weak (RFC 9110 §8.8.3).
STALE_TAGS = {
    "never-issued": lambda fresh: f'"{fresh}"',
    "two-never-issued": lambda fresh: f'"{fresh}-a", "{fresh}-b"',
    "weak-never-issued": lambda fresh: f'W/"{fresh}"',
}


@pytest.mark.req("CARD-12")
@pytest.mark.parametrize("form", list(STALE_TAGS))
def test_card_not_modified_only_for_its_own_tag(a2a_target: Target, form: str):
    """A 304 leaves the client with the card it has: only a tag the card has now may get one (RFC 9110 §13.2.2). An
    endpoint that ignores If-None-Match (200 every time) passes."""
    headers = {"Accept": "application/json"}
    with http_client() as http:
        current = fetch(http, a2a_target.card_url, headers=headers, timeout_s=a2a_target.timeout_s)
        _card(current)
        etag = current.response_headers.get("etag", "").strip()
        fresh = "kit-" + secrets.token_hex(8)
        stale = STALE_TAGS[form](fresh)
        answered = fetch(
            http, a2a_target.card_url, headers={**headers, "If-None-Match": stale}, timeout_s=a2a_target.timeout_s
        )
        if answered.status == 304:
            answered.fail(
                f"If-None-Match {stale} names no tag the card has (its ETag is {etag or 'absent'}), yet the card "
                "endpoint answered 304 Not Modified: a client holding an older card keeps it"
            )
        _card(answered)
        if etag:  # the card's own tag: 304, or 200 from an endpoint that does not support the header
            own = fetch(
                http, a2a_target.card_url, headers={**headers, "If-None-Match": etag}, timeout_s=a2a_target.timeout_s
            )
            if own.status not in (200, 304):
                own.fail(f"If-None-Match with the card's own tag {etag} is answered 304, or 200 with the card")
            # RFC 9110 §15.4.5: a 304 carries the ETag and Cache-Control the 200 would have carried.
            lost = [
                name
                for name in ("etag", "cache-control")
                if own.status == 304 and current.response_headers.get(name) and not own.response_headers.get(name)
            ]
            if lost:
                own.fail(f"the card's 304 Not Modified carries no {' and no '.join(lost)}, which its 200 carries")


# The card's own tag written as a client may write it (RFC 9110 §8.8.3, §13.1.2): in a list beside a tag it never had
# (after it, or before it), written weak, or the field *. Where the tag alone is answered 304, each is too.
OWN_TAG_FORMS = {
    "listed-after-a-stale-tag": lambda etag, fresh: f'"{fresh}", {etag}',
    "listed-before-a-stale-tag": lambda etag, fresh: f'{etag}, "{fresh}"',
    "written-weak": lambda etag, fresh: etag if etag.startswith("W/") else f"W/{etag}",
    "any": lambda etag, fresh: "*",
}


@pytest.mark.req("CARD-12")
@pytest.mark.parametrize("form", list(OWN_TAG_FORMS))
def test_card_not_modified_for_its_own_tag_however_it_is_written(a2a_target: Target, form: str):
    """An endpoint that answers 304 to the card's tag alone evaluates If-None-Match: the condition is false when
    any listed tag matches by weak comparison, or the field is * (RFC 9110 §13.1.2), so each form gets 304 too. An
    endpoint that ignores the header (200 to its own tag) has nothing here to judge."""
    headers = {"Accept": "application/json"}
    with http_client() as http:
        current = fetch(http, a2a_target.card_url, headers=headers, timeout_s=a2a_target.timeout_s)
        _card(current)
        etag = current.response_headers.get("etag", "").strip()
        if not etag:
            not_checked("the card carries no ETag: there is no tag of its own to write another way")
        alone = fetch(
            http, a2a_target.card_url, headers={**headers, "If-None-Match": etag}, timeout_s=a2a_target.timeout_s
        )
        if alone.status != 304:
            not_checked(f"the card endpoint answers HTTP {alone.status} to its own tag alone: it ignores If-None-Match")
        written = OWN_TAG_FORMS[form](etag, "kit-" + secrets.token_hex(8))
        answered = fetch(
            http, a2a_target.card_url, headers={**headers, "If-None-Match": written}, timeout_s=a2a_target.timeout_s
        )
        if answered.status != 304:
            answered.fail(
                f"If-None-Match {written} names the card's own tag {etag} ({form}), which alone is answered 304: the "
                f"condition is false when any listed tag matches by weak comparison (RFC 9110 §13.1.2), so 304, "
                f"not {answered.status}"
            )
