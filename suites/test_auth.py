"""Who calls: the application key and the subject on every method (and the change feed), the scopes, and the
HTTP refusals 401, 404, 429."""

from __future__ import annotations

import email.utils
import json
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, looks_like_jsonrpc
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods
from nylorun_a2a_kit.fixtures.target import Target


def _list_body() -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 1}}).encode()


def _refused(exchange: Exchange, status: int) -> None:
    if exchange.status != status:
        exchange.fail(f"expected HTTP {status}, got HTTP {exchange.status}")


@pytest.fixture
def keyed(a2a_target: Target) -> Target:
    if not a2a_target.key:
        not_checked("no application key given, so key checks cannot run", needs="--a2a-key")
    return a2a_target


# Ways a request carries no key the Runtime knows: none at all, one it never issued, and the twins of the kit's own
# key (a key compared by its beginning, cut to a length, or without its case is a key any near guess opens).
NO_KEY_FORMS = {
    "no-key": lambda key: None,
    "unknown-key": lambda key: f"not-a-key-{uuid.uuid4().hex}",
    "key-and-one-more": lambda key: key + "x",
    "key-but-its-last": lambda key: key[:-1],
    "one-more-and-key": lambda key: "x" + key,
    "key-in-other-case": lambda key: key.swapcase(),
}


def _twin_key(a2a_client: A2AClient, form: str) -> str | None:
    key = NO_KEY_FORMS[form](a2a_client.key or "")
    if key is not None and (key == a2a_client.key or not key):
        not_applicable(f"the kit's key has no {form} twin (a key without letters has no other case)")
    return key


def _without_key(a2a_client: A2AClient, form: str) -> A2AClient:
    return a2a_client.with_(key=_twin_key(a2a_client, form))


@pytest.mark.req("AUTH-01")
@pytest.mark.parametrize("form", list(NO_KEY_FORMS))
@pytest.mark.parametrize("method", methods.EVERY)
def test_request_without_a_valid_key_is_401(keyed: Target, a2a_client: A2AClient, method: str, form: str):
    call = methods.Harmless(method)
    _refused(call.post(_without_key(a2a_client, form)), 401)
    call.started_nothing(a2a_client, "a request refused for its key")


def _feed_url(a2a_target: Target) -> str:
    if a2a_target.runtime is None:
        not_applicable("the change feed is a Runtime's; the target is not a Runtime endpoint")
    return f"{a2a_target.runtime[0]}/v1/turns?limit=1"


def _feed_without_key(a2a_target: Target, a2a_client: A2AClient, key: str | None) -> Exchange:
    headers = {"Accept": "application/json", "Nylorun-Subject": a2a_target.subject or ""}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    exchange = a2a_client.get(_feed_url(a2a_target), headers)
    if exchange.status == 404 and "feature" in exchange.response_body.decode("utf-8", "replace").lower():
        not_applicable("the Host does not have the feature turns")
    return exchange


@pytest.mark.req("AUTH-01")
@pytest.mark.parametrize("form", list(NO_KEY_FORMS))
def test_change_feed_without_a_valid_key_is_401(keyed: Target, a2a_client: A2AClient, form: str):
    _refused(_feed_without_key(keyed, a2a_client, _twin_key(a2a_client, form)), 401)


def _answer(exchange: Exchange) -> tuple | None:
    """What a JSON-RPC answer says, ids and messages aside: its error's code and reason, or None for a result."""
    if not exchange.is_error:
        return None
    info = exchange.detail("ErrorInfo") or {}
    return exchange.error.get("code"), info.get("reason")


@pytest.mark.req("AUTH-02")
@pytest.mark.parametrize("method", methods.EVERY)
def test_request_without_subject_is_refused(keyed: Target, a2a_client: A2AClient, method: str):
    # Served is a result, or the very error the method answers a caller with a subject (TaskNotFoundError for
    # the missing task): any other JSON-RPC error, or an HTTP 4xx, refuses the request (AUTH-02's decision).
    call = methods.Harmless(method)
    exchange = call.post(a2a_client.with_(subject=None))
    if exchange.status is not None and exchange.status >= 400 and not looks_like_jsonrpc(exchange):
        return call.started_nothing(a2a_client, "a request without Nylorun-Subject")
    if looks_like_jsonrpc(exchange) and exchange.is_error:
        admitted = methods.Harmless(method, missing=call.missing).send(a2a_client)
        if _answer(exchange) != _answer(admitted):
            return call.started_nothing(a2a_client, "a request without Nylorun-Subject")
    exchange.fail(f"an application key acts for a subject: {method} without Nylorun-Subject must be refused")


# -- the caller's headers as a client may write them

HEADER_OF = {"AUTH-01": "Authorization", "AUTH-02": "Nylorun-Subject", "AUTH-04": "Nylorun-Scopes"}


Respelling = Callable[[dict[str, str]], dict[str, str]]


def _respelled(requirement: str, spelling: str) -> Respelling:
    """The requirement's header written as the axis member ``spelling`` has it."""
    return lambda headers: methods.respelled(headers, HEADER_OF[requirement], axes.kind(spelling))


def _served_alike(
    a2a_client: A2AClient, method: str, spelling: str, respell: Respelling, rule: str = "RFC 9110 §5.1, §11.1"
) -> None:
    """The call with a header written another way (``respell``, which ``rule`` allows) is served as it is written
    the kit's way."""
    call = methods.Harmless(method)
    exchange = a2a_client.post(call.body(a2a_client), method=method, headers=respell(call.headers(a2a_client)))
    exchange.no_response_if_server_failed()  # no Response at all is ERR-14's
    if exchange.status != 200 or not looks_like_jsonrpc(exchange):
        exchange.fail(f"{spelling} is the same credential ({rule}): {method} must serve it")
    if _answer(exchange) != _answer(methods.Harmless(method, missing=call.missing).send(a2a_client)):
        exchange.fail(f"{spelling}: {method} must answer as it does to the header written the kit's way")


@pytest.mark.req("AUTH-01")
@pytest.mark.parametrize("spelling", axes.members("AUTH-01", "spellings"))
@pytest.mark.parametrize("method", methods.SERVED)
def test_the_key_is_read_however_it_is_written(keyed: Target, a2a_client: A2AClient, method: str, spelling: str):
    _served_alike(a2a_client, method, spelling, _respelled("AUTH-01", spelling))


# Credentials are written auth-scheme 1*SP token68 (RFC 9110 §11.4; RFC 6750 §2.1: "Bearer" 1*SP b64token): any
# number of spaces may part the scheme from the key (AUTH-01's decision). No spelling kind of the axes names it.
SPACES_RULE = "RFC 9110 §11.4, RFC 6750 §2.1: auth-scheme 1*SP token68"


def _spaced(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` with two spaces between the Authorization scheme and the key."""
    return {k: v.replace(" ", "  ", 1) if k == "Authorization" else v for k, v in headers.items()}


@pytest.mark.req("AUTH-01")
@pytest.mark.parametrize("method", methods.SERVED)
def test_the_key_is_read_after_more_than_one_space(keyed: Target, a2a_client: A2AClient, method: str):
    _served_alike(a2a_client, method, "Bearer and the key parted by two spaces", _spaced, SPACES_RULE)


@pytest.mark.req("AUTH-02")
@pytest.mark.parametrize("spelling", axes.members("AUTH-02", "spellings"))
@pytest.mark.parametrize("method", methods.SERVED)
def test_the_subject_is_read_however_it_is_written(keyed: Target, a2a_client: A2AClient, method: str, spelling: str):
    _served_alike(a2a_client, method, spelling, _respelled("AUTH-02", spelling))


@pytest.mark.req("AUTH-04")
@pytest.mark.parametrize("spelling", axes.members("AUTH-04", "spellings"))
def test_the_scopes_are_read_however_they_are_written(a2a_client: A2AClient, spelling: str):
    _served_alike(a2a_client, "ListTasks", spelling, _respelled("AUTH-04", spelling))


def _unknown_agent(a2a_target: Target) -> str:
    if a2a_target.runtime is None:
        not_applicable("the target is not a Runtime endpoint (…/v1/a2a/agents/{agentId})")
    runtime, _ = a2a_target.runtime
    return f"{runtime}/v1/a2a/agents/kit-no-such-agent-{uuid.uuid4().hex[:8]}"


@pytest.mark.req("AUTH-03")
@pytest.mark.parametrize("method", methods.EVERY)
def test_unknown_agent_is_404(a2a_target: Target, a2a_client: A2AClient, method: str):
    call = methods.Harmless(method)
    _refused(call.post(a2a_client.with_(url=_unknown_agent(a2a_target))), 404)
    call.started_nothing(a2a_client, "a request to an unknown Agent")


@pytest.mark.req("AUTH-03")
def test_unknown_agents_card_is_404(a2a_target: Target, a2a_client: A2AClient):
    _refused(a2a_client.get(_unknown_agent(a2a_target) + "/card", {"Accept": "application/json"}), 404)


@pytest.mark.req("AUTH-04")
def test_default_scopes_are_sessions_own(a2a_client: A2AClient):
    exchange = a2a_client.with_(scopes=None).list_tasks(contextId=drivers.new_context())
    assert exchange.result["tasks"] == [] or exchange.fail("a fresh context should list no tasks")


@pytest.mark.req("AUTH-05")
def test_rate_limit_answers_429(a2a_target: Target, a2a_client: A2AClient):
    if not a2a_target.rate_limit_key:
        not_checked("no rate-limited key given", needs="--a2a-rate-limit-key: a key with a small rate limit")
    limited = a2a_client.with_(key=a2a_target.rate_limit_key)
    for _ in range(a2a_target.rate_limit_attempts):
        exchange = limited.post(_list_body(), method="ListTasks")
        if exchange.status == 429:
            return
        exchange.no_response_if_server_failed()  # no verdict on the limit: ERR-14 reports the server failure
        if exchange.status != 200:
            exchange.fail(f"expected HTTP 200 until the limit, then 429; got HTTP {exchange.status}")
    exchange.fail(f"no HTTP 429 after {a2a_target.rate_limit_attempts} requests with the rate-limited key")


RECHECK_AFTER_S = 2.0


def _retry_after(exchange: Exchange) -> float | None:
    """The wait a 429's Retry-After names, in seconds (delay-seconds or an HTTP-date, RFC 9110 §10.2.3)."""
    value = exchange.response_headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        exchange.fail(f"Retry-After {value!r} is neither delay-seconds nor an HTTP-date (RFC 9110 §10.2.3)")
    return (when - datetime.now(UTC)).total_seconds()


def _limited(limited: A2AClient, attempts: int) -> Exchange:
    for _ in range(attempts + 1):
        exchange = limited.post(_list_body(), method="ListTasks")
        if exchange.status == 429:
            return exchange
    not_checked(f"no HTTP 429 after {attempts} requests with the rate-limited key (AUTH-05 judges it)")


@pytest.mark.req("AUTH-07")
def test_retry_after_counts_down_the_wait(a2a_target: Target, a2a_client: A2AClient):
    if not a2a_target.rate_limit_key:
        not_checked("no rate-limited key given", needs="--a2a-rate-limit-key: a key with a small rate limit")
    limited = a2a_client.with_(key=a2a_target.rate_limit_key)
    first = _limited(limited, a2a_target.rate_limit_attempts)
    wait = _retry_after(first)
    if wait is None:
        not_applicable("the 429 carries no Retry-After (AUTH-05 does not ask for one)")
    if wait <= RECHECK_AFTER_S + 1:
        not_checked(f"the 429 asks a wait of {wait:.0f} s: too short to read it again while the limit holds")
    started = time.monotonic()
    time.sleep(RECHECK_AFTER_S)
    second = limited.post(_list_body(), method="ListTasks")
    passed = time.monotonic() - started
    if second.status != 429:
        not_checked(f"the limit was lifted {passed:.0f} s into a wait of {wait:.0f} s: nothing to count down")
    again = _retry_after(second)
    if again is not None and again < wait - passed - 1:
        second.fail(
            f"Retry-After said {wait:.0f} s; {passed:.1f} s later, still limited, it says {again:.0f} s: a wait that "
            "falls by far more than the time that passed is not the wait the limit imposes (RFC 9110 §10.2.3: seconds)"
        )


def _names_bearer(exchange: Exchange) -> bool:
    challenges = exchange.response_headers.get_list("www-authenticate")
    # A challenge starts with its scheme (RFC 9110 §11.6.1); schemes are case-insensitive.
    return any(c.strip().split(" ", 1)[0].rstrip(",").lower() == "bearer" for c in ",".join(challenges).split(","))


CHALLENGE = "a 401 should carry WWW-Authenticate naming the Bearer scheme the key is sent with (A2A §3.3.2, §7.4)"


@pytest.mark.req("AUTH-06")
@pytest.mark.parametrize("method", methods.EVERY)
def test_401_names_the_bearer_scheme(keyed: Target, a2a_client: A2AClient, method: str):
    exchange = methods.Harmless(method).post(a2a_client.with_(key=None))
    _refused(exchange, 401)
    if not _names_bearer(exchange):
        exchange.fail(CHALLENGE)


@pytest.mark.req("AUTH-06")
def test_change_feed_401_names_the_bearer_scheme(keyed: Target, a2a_client: A2AClient):
    exchange = _feed_without_key(keyed, a2a_client, None)
    _refused(exchange, 401)
    if not _names_bearer(exchange):
        exchange.fail(CHALLENGE)
