"""A push config inside SendMessage beside every other option (returnImmediately, historyLength,
acceptedOutputModes), on a message to each kind of task and conversation a client sends to: a reply to a task paused
on each interruption, a new message in a conversation whose tasks ended, and in a conversation id the caller used
under another Agent, or another caller used. Each serves the task the message lands in: its updates reach the config.
What the answers show (the history cut to one message, the conversation kept) the oracle judges on every read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, push_checks
from nylorun_a2a_kit.fixtures.target import Target


def _reply(kind: str) -> Callable[[pytest.FixtureRequest, dict], Exchange]:
    """The reply to a task paused on ``kind``, sent by the client that paused it."""

    def send(request: pytest.FixtureRequest, configuration: dict) -> Exchange:
        client: A2AClient = request.getfixturevalue("a2a_v2_client" if kind == "approval" else "a2a_client")
        task = drivers.paused_on(client, kind)
        request.getfixturevalue("a2a_cancel_at_end")(client, task["id"])
        return drivers.resume(client, task, kind, configuration=configuration)

    return send


def _in_conversation(whose: str) -> Callable[[pytest.FixtureRequest, dict], Exchange]:
    """A new message in a conversation: the caller's whose tasks ended, or one whose id the caller used under
    another Agent, or another caller used (a conversation of its own here)."""

    def send(request: pytest.FixtureRequest, configuration: dict) -> Exchange:
        client: A2AClient = request.getfixturevalue("a2a_client")
        target: Target = request.getfixturevalue("a2a_target")
        context = drivers.new_context()
        if whose == "ended":
            first = client
        elif whose == "another-agent":
            if not target.other_agent_url:
                not_checked("no second Agent given", needs="--a2a-other-agent-url")
            first = client.with_(url=target.other_agent_url)
        else:
            first = request.getfixturevalue("a2a_other_client")
        ended = drivers.settle(first, drivers.run(first, "complete", context_id=context))
        if drivers.state(ended) not in drivers.TERMINAL:
            not_checked(f"the conversation's first task did not end ({drivers.state(ended)})")
        return client.send(drivers.scenario("complete"), context_id=context, configuration=configuration)

    return send


# What the message is sent to, the scenarios it needs, and how it is sent.
SENT_TO: dict[str, tuple[tuple[str, ...], Callable[[pytest.FixtureRequest, dict], Exchange]]] = {
    "a-task-paused-on-a-question": (("ask",), _reply("question")),
    "a-task-paused-on-an-approval": (("approve",), _reply("approval")),
    "a-conversation-whose-tasks-ended": (("complete",), _in_conversation("ended")),
    "a-conversation-id-used-under-another-agent": (("complete",), _in_conversation("another-agent")),
    "a-conversation-id-another-caller-used": (("complete",), _in_conversation("another-caller")),
}


@pytest.mark.req("PUSH-02")
@pytest.mark.parametrize(
    "sent_to", [pytest.param(name, marks=pytest.mark.scenario(*s)) for name, (s, _) in SENT_TO.items()]
)
def test_a_config_beside_every_option_serves_the_task_the_message_lands_in(
    request: pytest.FixtureRequest, a2a_pushing: Target, sent_to: str
):
    token = new_id("tok")
    configuration, endpoint = drivers.every_option(request, a2a_pushing, token=token)
    answer = SENT_TO[sent_to][1](request, configuration)
    if answer.is_error:
        answer.fail(f"a message with every option of SendMessage's configuration, sent to {sent_to}, is served")
    task: dict[str, Any] = drivers.task_of(answer, "nothing is pushed")
    push_checks.until_pushed(
        endpoint, "TASK_STATE_COMPLETED", a2a_pushing, client=request.getfixturevalue("a2a_client"), task_id=task["id"]
    )
