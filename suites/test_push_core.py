"""Push deliveries of an ordinary message's task: what any A2A agent with push shows, no scenario needed.

The config rides inside SendMessage (A2A §3.1.1, SendMessageConfiguration.task_push_notification_config), so
the webhook sees the task from its start to its end. The checks of test_push_delivery drive the same rules
with the scenario contract, through pauses and retries an ordinary message cannot produce.
"""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.push import Endpoint, PushReceiver
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, push_checks
from nylorun_a2a_kit.fixtures.target import Target


def _pushed_task(
    a2a_client: A2AClient, receiver: PushReceiver, message_id: str | None = None, **fields
) -> tuple[dict, Endpoint]:
    """An ordinary message's task with a webhook config given inline, and the webhook's endpoint."""
    endpoint = push_checks.endpoint_for(receiver, **fields)
    message_id = message_id or new_id("msg")
    params = {
        "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": drivers.ORDINARY_TEXT}]},
        "configuration": {"taskPushNotificationConfig": drivers.push_config(endpoint.url, **fields)},
    }
    task = drivers.settle(a2a_client, drivers.task_of(a2a_client.call("SendMessage", params), "nothing is pushed"))
    if drivers.state(task) not in drivers.TERMINAL:
        a2a_client.cancel(task["id"])
        task = drivers.wait_for(a2a_client, task["id"], drivers.TERMINAL)
    return task, endpoint


def _until_ended(
    endpoint: Endpoint, task: dict, a2a_target: Target, client: A2AClient | None = None, judge=None
) -> list:
    """The deliveries up to the one that shows the task's terminal state; ``judge`` judges what arrived when it did
    not come in time."""
    ended = drivers.state(task)
    return push_checks.until_pushed(endpoint, ended, a2a_target, client=client, task_id=task["id"], judge=judge)


@pytest.mark.req("PUSH-05")
def test_the_end_of_an_ordinary_task_is_delivered(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    task, endpoint = _pushed_task(a2a_client, a2a_push_receiver)
    _until_ended(endpoint, task, a2a_pushing, a2a_client)


@pytest.mark.req("PUSH-06")
def test_deliveries_of_an_ordinary_task_are_its_stream_responses(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    task, endpoint = _pushed_task(a2a_client, a2a_push_receiver)
    judged = lambda ds: push_checks.check_stream_responses(ds, task["id"])  # noqa: E731 - what arrived, judged
    judged(_until_ended(endpoint, task, a2a_pushing, judge=judged))


@pytest.mark.req("PUSH-07")
def test_deliveries_of_an_ordinary_task_carry_the_authentication(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    secret = new_id("cred")
    task, endpoint = _pushed_task(a2a_client, a2a_push_receiver, scheme="Bearer", credentials=secret)
    judged = lambda ds: push_checks.check_authentication(ds, secret)  # noqa: E731 - what arrived, judged
    judged(_until_ended(endpoint, task, a2a_pushing, judge=judged))


@pytest.mark.req("PUSH-08")
def test_deliveries_of_an_ordinary_task_carry_its_long_token(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    """A config given inside SendMessage with a token (and an id) of LONG_ID_CHARS characters: every delivery carries
    the token whole."""
    token = drivers.long_id("tok")
    task, endpoint = _pushed_task(a2a_client, a2a_push_receiver, token=token, config_id=drivers.long_id("inline"))
    header = a2a_pushing.push.token_header.lower()

    def judged(deliveries: list) -> None:
        for delivery in deliveries:
            if delivery.headers.get(header) != token:
                pytest.fail(
                    f"delivery {delivery.webhook_id} must carry the config's {len(token)}-character token whole in "
                    f"{a2a_pushing.push.token_header}"
                )

    judged(_until_ended(endpoint, task, a2a_pushing, judge=judged))


@pytest.mark.req("TASK-15")
def test_every_pushed_message_says_who_sent_it(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    """The deliveries of an ordinary message's task: the kit's message comes ROLE_USER, every other the Agent's,
    wherever a delivery carries one (a task's history and status, a status update's, a message)."""
    sent = new_id("msg")
    task, endpoint = _pushed_task(a2a_client, a2a_push_receiver, message_id=sent)
    delivered = _until_ended(endpoint, task, a2a_pushing, a2a_client)
    seen, wrong = 0, []
    for delivery in delivered:
        for message in push_checks.messages_of(delivery.json):
            seen += 1
            expected = "ROLE_USER" if message.get("messageId") == sent else "ROLE_AGENT"
            if message.get("role") != expected:
                wrong.append(f"{message.get('messageId')} in delivery {delivery.webhook_id}: {message.get('role')}")
    if not seen:
        not_checked("no delivery of the task carried a message")
    if wrong:
        pytest.fail(f"the kit sent {sent} (ROLE_USER), every other message is the Agent's (ROLE_AGENT): {wrong}")
