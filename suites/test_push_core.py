"""Push deliveries of an ordinary message's task: what any A2A agent with push shows, no scenario needed.

The config rides inside SendMessage (A2A §3.1.1, SendMessageConfiguration.task_push_notification_config), so
the webhook sees the task from its start to its end. The checks of test_push_delivery drive the same rules
with the scenario contract, through pauses and retries an ordinary message cannot produce.
"""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures import drivers
from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.push_receiver import Endpoint, PushReceiver
from nylorun_a2a_kit.fixtures.target import Target


@pytest.fixture
def pushing(target: Target) -> Target:
    if not (target.card.get("capabilities") or {}).get("pushNotifications"):
        pytest.skip("not applicable: the card says pushNotifications false (the Runtime has no push secret)")
    return target


def _pushed_task(client: A2AClient, receiver: PushReceiver, **fields) -> tuple[dict, Endpoint]:
    """An ordinary message's task with a webhook config given inline, and the webhook's endpoint."""
    scheme = fields.get("scheme")
    endpoint = receiver.endpoint(
        token=fields.get("token"),
        authorization=f"{scheme} {fields.get('credentials', '')}".strip() if scheme else None,
    )
    params = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": drivers.ORDINARY_TEXT}]},
        "configuration": {"taskPushNotificationConfig": drivers.push_config(endpoint.url, **fields)},
    }
    exchange = client.call("SendMessage", params)
    if "task" not in exchange.result:
        pytest.skip("not checked: the Agent answered an ordinary message with a Message, so nothing is pushed")
    task = drivers.settle(client, exchange.task)
    if drivers.state(task) not in drivers.TERMINAL:
        client.cancel(task["id"])
        task = drivers.wait_for(client, task["id"], drivers.TERMINAL)
    return task, endpoint


def _until_ended(endpoint: Endpoint, task: dict, target: Target):
    """The deliveries up to the one that shows the task's terminal state."""
    final = drivers.state(task)
    delivered = endpoint.wait_for(lambda ds: final in drivers.pushed_states(ds), target.push.wait_s)
    if final not in drivers.pushed_states(delivered):
        pytest.fail(f"no delivery showed the task's end, {final}, within {target.push.wait_s} s "
                    f"({len(delivered)} deliveries)")  # fmt: skip
    return delivered


@pytest.mark.req("PUSH-05")
def test_the_end_of_an_ordinary_task_is_delivered(pushing: Target, client: A2AClient, push_receiver: PushReceiver):
    task, endpoint = _pushed_task(client, push_receiver)
    _until_ended(endpoint, task, pushing)


@pytest.mark.req("PUSH-06")
def test_deliveries_of_an_ordinary_task_are_its_stream_responses(
    pushing: Target, client: A2AClient, push_receiver: PushReceiver
):
    task, endpoint = _pushed_task(client, push_receiver)
    for delivery in _until_ended(endpoint, task, pushing):
        shape = [p for p in delivery.problems if "StreamResponse" in p or "not JSON" in p]
        if shape:
            pytest.fail(f"delivery {delivery.webhook_id}: {shape[0]}")
        payload = next(iter(delivery.json.values()))
        task_id = payload.get("taskId") or payload.get("id") if isinstance(payload, dict) else None
        if task_id != task["id"]:
            pytest.fail(f"delivery {delivery.webhook_id} is for task {task_id!r}, not the configured {task['id']}")


@pytest.mark.req("PUSH-07")
def test_deliveries_of_an_ordinary_task_carry_the_authentication(
    pushing: Target, client: A2AClient, push_receiver: PushReceiver
):
    secret = new_id("cred")
    task, endpoint = _pushed_task(client, push_receiver, scheme="Bearer", credentials=secret)
    for delivery in _until_ended(endpoint, task, pushing):
        if delivery.headers.get("authorization") != f"Bearer {secret}":
            pytest.fail(f"delivery {delivery.webhook_id} lacks Authorization: Bearer <the config's credentials>")
