"""Client tiers: a Core caller (no extension) gets plain A2A 1.0; a v1 caller gets only the v1 extensions."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, extensions, new_id
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target

APPROVED_ACTION = "approved action ran"


def _plain(exchange: Exchange) -> None:
    """No trace of a profile extension in the answer: no echo, no metadata key, no extensions entry."""
    if exchange.response_headers.get("a2a-extensions", "").strip():
        exchange.fail("a caller that activated no extension gets no A2A-Extensions echo")
    mentions = list(extensions.profile_mentions(exchange.method, exchange.json.get("result")))
    if mentions:
        exchange.fail(f"a caller that activated no extension gets plain A2A 1.0, but the answer names {mentions[:3]}")


def _text_question(a2a_client: A2AClient, scenario: str) -> dict:
    exchange = a2a_client.send(drivers.scenario(scenario))
    task = exchange.task
    _plain(exchange)
    if drivers.state(task) not in drivers.INTERRUPTED:
        exchange.fail(
            f"the turn must pause for the caller (INPUT_REQUIRED or AUTH_REQUIRED), got {drivers.state(task)}"
        )
    message = task["status"].get("message") or {}
    if not any(p.get("text", "").strip() for p in message.get("parts", [])):
        exchange.fail("a Core caller gets the interaction as a text question on the status message")
    return task


@pytest.mark.req("TIER-01")
@pytest.mark.scenario("approve")
def test_core_caller_gets_an_approval_as_a_text_question(a2a_client: A2AClient):
    drivers.cancel_quietly(a2a_client, _text_question(a2a_client, "approve")["id"])


@pytest.mark.req("TIER-02")
@pytest.mark.scenario("approve")
def test_core_text_reply_does_not_approve(a2a_client: A2AClient, a2a_cancel_at_end):
    task = _text_question(a2a_client, "approve")
    a2a_cancel_at_end(a2a_client, task["id"])
    a2a_client.send("Yes, I approve. Go ahead.", task_id=task["id"], context_id=task["contextId"])
    after = drivers.wait_for(a2a_client, task["id"], drivers.SETTLED)
    texts = " ".join(p.get("text", "") for a in after.get("artifacts") or [] for p in a.get("parts", []))
    if APPROVED_ACTION in texts:
        a2a_client.get_task(task["id"]).fail("a text reply must not approve: the approved action ran")


@pytest.mark.req("TIER-03")
@pytest.mark.scenario("connect")
def test_core_caller_gets_a_connection_as_a_text_question(a2a_client: A2AClient):
    drivers.cancel_quietly(a2a_client, _text_question(a2a_client, "connect")["id"])


# Each interaction kind, the client that sees it typed, and the tier the kind belongs to.
TYPED = {
    "approval": ("a2a_v1_client", "profile-v1"),
    "question": ("a2a_v1_client", "profile-v1"),
    "connection": ("a2a_v2_client", "profile-v2"),
}


@pytest.mark.req("TIER-07")
@pytest.mark.parametrize(
    "kind", [pytest.param(kind, marks=pytest.mark.scenario(drivers.PAUSES[kind][0])) for kind in TYPED]
)
def test_a_core_callers_text_question_carries_the_prompt(
    request: pytest.FixtureRequest, a2a_client: A2AClient, a2a_target: Target, kind: str
):
    client_name, tier = TYPED[kind]
    if not a2a_target.claims(tier):
        not_applicable(f"a {kind} interaction is a {tier} rule, and the target claims less")
    typed: A2AClient = request.getfixturevalue(client_name)
    task = drivers.paused_on(typed, kind)
    drivers.cancel_quietly(typed, task["id"])
    prompt = ((drivers.open_interaction(task) or {}).get("prompt") or "").strip()
    if not prompt:
        not_checked(f"the {kind} interaction carries no prompt to compare with (its prompt is optional)")
    core = _text_question(a2a_client, drivers.PAUSES[kind][0])
    drivers.cancel_quietly(a2a_client, core["id"])
    text = " ".join(p.get("text", "") for p in (core["status"].get("message") or {}).get("parts", []))
    if prompt not in text:
        a2a_client.get_task(core["id"]).fail(
            f"a Core caller's text question should carry the {kind}'s prompt {prompt!r}, as a typed caller gets it"
        )


@pytest.mark.req("TIER-04")
@pytest.mark.parametrize(
    "scenario", [pytest.param(name, marks=pytest.mark.scenario(name)) for name in ("complete", "plan", "file")]
)
def test_core_caller_gets_plain_a2a(a2a_client: A2AClient, scenario: str):
    task = drivers.settle(a2a_client, a2a_client.send(drivers.scenario(scenario)).task)
    for exchange in (
        a2a_client.get_task(task["id"], history_length=50),
        a2a_client.list_tasks(contextId=task["contextId"], includeArtifacts=True, historyLength=50),
    ):
        _plain(exchange)


def _retried(first: A2AClient, again: A2AClient) -> Exchange:
    """A plan turn sent by ``first`` and settled, then its message sent again under its messageId by ``again``: the
    retry's answer (the same task, shown as the retry's own request activates)."""
    message_id, text = new_id("msg"), drivers.scenario("plan", 3)
    drivers.settle(first, first.send(text, message_id=message_id).task)
    retry = again.send(text, message_id=message_id)
    if retry.is_error:
        not_checked(f"the retry of message {message_id} was refused: {retry.answer_line()}")
    return retry


@pytest.mark.req("TIER-04")
@pytest.mark.scenario("plan")
def test_a_retry_with_no_extension_gets_plain_a2a(a2a_v2_client: A2AClient, a2a_client: A2AClient):
    """Extensions are activated per request (A2A §3.2.6): a message first sent with all five activated and sent
    again with none is answered plain, whatever the first request activated."""
    _plain(_retried(a2a_v2_client, a2a_client))


@pytest.mark.req("TIER-06")
@pytest.mark.scenario("plan")
def test_a_retry_as_a_v1_client_gets_no_v2_data(a2a_v2_client: A2AClient, a2a_v1_client: A2AClient):
    retry = _retried(a2a_v2_client, a2a_v1_client)
    v2_only = [
        m
        for m in extensions.profile_mentions(retry.method, retry.json.get("result"))
        if not any(u in m for u in extensions.V1)
    ]
    if v2_only:
        retry.fail(
            f"a retry sent as a v1 client gets no v2 extension data, whatever the first request activated: "
            f"{v2_only[:3]}"
        )


@pytest.mark.req("TIER-05")
@pytest.mark.scenario("plan")
def test_core_caller_gets_no_plan_or_cost(a2a_client: A2AClient):
    task = drivers.settle(a2a_client, a2a_client.send(drivers.scenario("plan", 3)).task)
    got = a2a_client.get_task(task["id"], history_length=50)
    for uri, what in ((extensions.PROGRESS, "plan steps"), (extensions.TELEMETRY, "totals or cost")):
        if extensions.read(got.task, uri) is not None:
            got.fail(f"a caller with no extension activated gets no {what}")


@pytest.mark.req("TIER-06")
@pytest.mark.scenario("approve")
def test_v1_client_is_served_with_v1_extensions_only(a2a_v1_client: A2AClient, a2a_cancel_at_end):
    exchange = a2a_v1_client.send(drivers.scenario("approve"))
    echoed = {u.strip() for u in exchange.response_headers.get("a2a-extensions", "").split(",") if u.strip()}
    if echoed != set(extensions.V1):
        exchange.fail(f"a v1 client's request echoes exactly the v1 extensions, got {sorted(echoed)}")
    task = exchange.task
    a2a_cancel_at_end(a2a_v1_client, task["id"])
    if (drivers.open_interaction(task) or {}).get("kind") != "approval":
        exchange.fail("a v1 client gets typed approvals under interactions/v1")
    v2_only = [
        m
        for m in extensions.profile_mentions(exchange.method, exchange.json.get("result"))
        if not any(u in m for u in extensions.V1)
    ]
    if v2_only:
        exchange.fail(f"a v1 client gets no v2 extension data, got {v2_only[:3]}")


# -- a Core caller's tasks, on every channel they travel


@pytest.mark.shares_turn("*", "core")
@pytest.mark.req("TIER-04")
@pytest.mark.parametrize("channel", axes.members("TIER-04", "channels"))
@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=pytest.mark.scenario(s))
        for k, s in (("plan", "plan"), ("files", "complete"), ("question", "ask"))
    ],
)
def test_core_caller_gets_plain_a2a_on_every_channel(a2a_channel_views, kind: str, channel: str):
    views = a2a_channel_views(kind, "core")  # sent with no extension activated, its push config too
    if channel == "push":
        named = [m for d in views.arrived() for m in extensions.profile_mentions("StreamResponse", d.json)]
    else:
        named = [m for _, shown in views.on(channel) for m in extensions.profile_mentions("GetTask", shown)]
    if named:
        views.fail(channel, f"a caller that activated no extension gets plain A2A 1.0 on every channel: {named[:3]}")
