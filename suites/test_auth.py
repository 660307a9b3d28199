"""Who calls: the application key, the subject and scopes, and the HTTP refusals 401, 404, 429."""

from __future__ import annotations

import json
import uuid

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange
from nylorun_a2a_kit.fixtures.requirements import not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers
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


@pytest.mark.req("AUTH-01")
def test_request_without_key_is_401(keyed: Target, a2a_client: A2AClient):
    _refused(a2a_client.with_(key=None).post(_list_body(), method="ListTasks"), 401)


@pytest.mark.req("AUTH-01")
def test_request_with_unknown_key_is_401(keyed: Target, a2a_client: A2AClient):
    _refused(a2a_client.with_(key=f"not-a-key-{uuid.uuid4().hex}").post(_list_body(), method="ListTasks"), 401)


@pytest.mark.req("AUTH-02")
def test_request_without_subject_is_refused(keyed: Target, a2a_client: A2AClient):
    exchange = a2a_client.with_(subject=None).post(_list_body(), method="ListTasks", schema="jsonrpc/Response.json")
    served = exchange.status is not None and exchange.status < 400 and not exchange.is_error
    if served:
        exchange.fail("an application key acts for a subject: a request without Nylorun-Subject must be refused")


@pytest.mark.req("AUTH-03")
def test_unknown_agent_is_404(a2a_target: Target, a2a_client: A2AClient):
    if a2a_target.runtime is None:
        not_applicable("the target is not a Runtime endpoint (…/v1/a2a/agents/{agentId})")
    runtime, _ = a2a_target.runtime
    unknown = a2a_client.with_(url=f"{runtime}/v1/a2a/agents/kit-no-such-agent-{uuid.uuid4().hex[:8]}")
    _refused(unknown.post(_list_body(), method="ListTasks"), 404)


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
        if exchange.status >= 500:
            exchange.no_response()  # no verdict on the limit: ERR-14 reports the server failure
        if exchange.status != 200:
            exchange.fail(f"expected HTTP 200 until the limit, then 429; got HTTP {exchange.status}")
    exchange.fail(f"no HTTP 429 after {a2a_target.rate_limit_attempts} requests with the rate-limited key")


@pytest.mark.req("AUTH-06")
def test_401_names_the_bearer_scheme(keyed: Target, a2a_client: A2AClient):
    exchange = a2a_client.with_(key=None).post(_list_body(), method="ListTasks")
    _refused(exchange, 401)
    challenges = exchange.response_headers.get_list("www-authenticate")
    # A challenge starts with its scheme (RFC 9110 §11.6.1); schemes are case-insensitive.
    if not any(c.strip().split(" ", 1)[0].rstrip(",").lower() == "bearer" for c in ",".join(challenges).split(",")):
        exchange.fail(
            "a 401 should carry WWW-Authenticate naming the Bearer scheme the key is sent with (A2A §3.3.2, §7.4)"
        )
