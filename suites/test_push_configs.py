"""Push notification configs: the four methods (on the caller's task, a missing one, another subject's), the config
inside SendMessage, and the card's capability, with a push secret and without."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods, push_checks, queueing
from nylorun_a2a_kit.fixtures.target import Target

METHODS = methods.PUSH_CONFIG
UNUSED_GRACE_S = 2.0


def _capable(a2a_target: Target) -> bool:
    return bool((a2a_target.card.get("capabilities") or {}).get("pushNotifications"))


def _without_push(a2a_target: Target) -> None:
    if _capable(a2a_target):
        not_applicable("the card says pushNotifications true (the Runtime has a push secret)")


def _paused(a2a_client: A2AClient, cancel_at_end) -> dict:
    """A task paused on the ask scenario, which keeps it (and its configs) for the check; canceled at its end."""
    task = drivers.run(a2a_client, "ask")
    cancel_at_end(a2a_client, task["id"])
    return task


def _params(method: str, task_id: str, url: str) -> dict:
    if method == "CreateTaskPushNotificationConfig":
        return {"taskId": task_id, "url": url}
    if method == "ListTaskPushNotificationConfigs":
        return {"taskId": task_id}
    return {"taskId": task_id, "id": "push-config-1"}


@pytest.mark.req("PUSH-03")
@pytest.mark.parametrize("method", METHODS)
def test_without_push_every_config_method_is_refused(
    a2a_target: Target, a2a_client: A2AClient, method: str, a2a_cancel_at_end
):
    _without_push(a2a_target)
    task = drivers.ordinary(a2a_client)
    a2a_cancel_at_end(a2a_client, task["id"])
    a2a_client.call(method, _params(method, task["id"], "http://127.0.0.1:9/hook")).expect_error(
        "PushNotificationNotSupportedError"
    )


@pytest.mark.req("PUSH-04")
@pytest.mark.scenario("ask")
def test_card_capability_matches_the_methods(
    a2a_target: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end
):
    task = _paused(a2a_client, a2a_cancel_at_end)
    exchange = drivers.create_push_config(a2a_client, task["id"], a2a_push_receiver.endpoint().url)
    refused = exchange.is_error and exchange.error.get("code") == -32003
    if _capable(a2a_target) == refused:
        exchange.fail(
            f"the card says pushNotifications {_capable(a2a_target)}, but the config methods "
            f"{'refuse' if refused else 'serve'} configs"
        )


@pytest.mark.req("PUSH-01")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("given_id", ["none", "long"])
def test_config_methods_round_trip(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end, given_id: str
):
    """Created with no id, or with an id and a token of LONG_ID_CHARS characters (an Agent may answer an id of its
    own; the oracle holds every read to what the Create answered)."""
    task = _paused(a2a_client, a2a_cancel_at_end)
    url = a2a_push_receiver.endpoint().url + "?kit=" + new_id()  # a URL's query is part of the URL, kept as sent
    long = given_id == "long"
    fields = {"token": drivers.long_id("tok"), "config_id": drivers.long_id("cfg")} if long else {}
    answer = drivers.create_push_config(a2a_client, task["id"], url, **{"token": "tok-" + new_id(), **fields})
    if long and answer.is_error:
        not_checked(f"the Agent refuses a config id and token of {drivers.LONG_ID_CHARS} characters")
    created = answer.ok()
    if long and created.get("token") not in (None, fields["token"]):
        answer.fail(f"the Create answers the config's {drivers.LONG_ID_CHARS}-character token cut or changed")
    config_id = created.get("id")
    if not config_id or created.get("url") != url:
        a2a_client.get_task(task["id"]).fail("CreateTaskPushNotificationConfig answers the config with its id")
    got = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id})
    if got.result.get("url") != url or got.result.get("id") != config_id:
        got.fail("GetTaskPushNotificationConfig answers the config that was created")
    listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    if config_id not in [c.get("id") for c in listed.result.get("configs") or []]:
        listed.fail("ListTaskPushNotificationConfigs lists the config that was created")
    a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}).ok()
    after = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id})
    if not after.is_error:
        after.fail("after DeleteTaskPushNotificationConfig, Get answers not found")
    again = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    if config_id in [c.get("id") for c in again.result.get("configs") or []]:
        again.fail("a deleted config is no longer listed")


def _answered(client: A2AClient, task: dict) -> None:
    drivers.wait_for(client, drivers.resume(client, task, "question").task["id"], drivers.TERMINAL)


def _canceled(client: A2AClient, task: dict) -> None:
    client.cancel(task["id"])
    drivers.wait_for(client, task["id"], drivers.TERMINAL)


def _question(client: A2AClient) -> dict:
    return drivers.paused_on(client, "question")


Ending = Callable[[A2AClient, dict], None] | None
# The task each member holds while its config is written and read: paused on each interruption, and ended in each
# terminal state, the config created after the end or before it (then the task answered, or canceled).
HELD_IN: dict[str, tuple[str, Callable[[A2AClient], dict], Ending]] = {
    "task-state.paused-on-a-question": ("ask", _question, None),
    "task-state.paused-on-an-approval": ("approve", lambda client: drivers.paused_on(client, "approval"), None),
    "task-state.completed-after-create": ("ask", _question, _answered),
    "task-state.canceled-after-create": ("ask", _question, _canceled),
    "task-state.completed": ("complete", lambda client: drivers.ended_in(client, "TASK_STATE_COMPLETED"), None),
    "task-state.failed": ("fail", lambda client: drivers.ended_in(client, "TASK_STATE_FAILED"), None),
    "task-state.canceled": ("ask", lambda client: drivers.ended_in(client, "TASK_STATE_CANCELED"), None),
}


@pytest.mark.req("PUSH-01")
@pytest.mark.parametrize("held", [pytest.param(h, marks=pytest.mark.scenario(s)) for h, (s, *_) in HELD_IN.items()])
def test_config_methods_serve_a_task_in_each_state(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end, held: str
):
    _, make, end = HELD_IN[held]
    task = make(a2a_client)
    a2a_cancel_at_end(a2a_client, task["id"])
    url = a2a_push_receiver.endpoint().url + "?kit=" + new_id()
    created = drivers.create_push_config(a2a_client, task["id"], url, token="tok-" + new_id())
    ended = drivers.state(task) in drivers.TERMINAL
    if ended and created.is_error and created.error.get("code", 0) <= -32000:
        # A2A says nothing of a config written on a task that ended: an A2A error refusing it is a reading.
        not_applicable(f"the Agent refuses a push config on a task that ended: {created.error.get('message')!r}")
    config_id = created.ok().get("id")
    if not config_id or created.result.get("url") != url:
        created.fail("CreateTaskPushNotificationConfig answers the config with its id and the url sent")
    if end is not None:
        end(a2a_client, task)
    got = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id})
    listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    in_list = config_id in [c.get("id") for c in (listed.ok().get("configs") or []) if isinstance(c, dict)]
    if end is not None and got.is_error and not in_list:
        return  # the Agent dropped the configs of a task that ended, by both reads: A2A does not make them outlive it
    if got.is_error or got.result.get("id") != config_id or got.result.get("url") != url:
        got.fail(f"GetTaskPushNotificationConfig answers the config created on a task {held.split('.')[-1]}")
    if not in_list:
        listed.fail(f"ListTaskPushNotificationConfigs lists the config Get answers, on a task {held.split('.')[-1]}")
    a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}).ok()
    after = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id})
    if not after.is_error:
        after.fail("after DeleteTaskPushNotificationConfig, Get answers not found")
    again = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    if config_id in [c.get("id") for c in again.ok().get("configs") or [] if isinstance(c, dict)]:
        again.fail("a deleted config is no longer listed")


@pytest.mark.req("PUSH-01")
@pytest.mark.scenario("ask")
def test_a_config_created_again_under_its_id_reads_as_answered(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end
):
    """A Create naming an id the task already has replaces that config or is refused (A2A says neither): Get and List
    then show what the accepted Create answered, the second or the first (the oracle holds every later read to it)."""
    task = _paused(a2a_client, a2a_cancel_at_end)
    first_url, second_url = a2a_push_receiver.endpoint().url, a2a_push_receiver.endpoint().url
    config_id = "again-" + new_id()
    first = drivers.create_push_config(a2a_client, task["id"], first_url, token="tok-" + new_id(), config_id=config_id)
    named = first.ok().get("id")
    second = drivers.create_push_config(a2a_client, task["id"], second_url, token="tok-" + new_id(), config_id=named)
    # Refused, or answered as another config (a Runtime that gives each config an id of its own): the first stands.
    replaced = not second.is_error and second.result.get("id") == named
    kept = second.result if replaced else first.result
    got = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": named})
    for member in ("url", "token"):
        if (got.result.get(member) or None) != (kept.get(member) or None):
            got.fail(
                f"config {named} was created twice ({'replaced' if replaced else 'the second Create not taking it'})"
                f": Get must show the {member} the {'second' if replaced else 'first'} Create answered"
            )
    listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    shown = [c for c in listed.result.get("configs") or [] if c.get("id") == named]
    if len(shown) != 1 or shown[0].get("url") != kept.get("url"):
        listed.fail(f"List shows config {named} once, with the url the accepted Create answered")


def _config_ids(client: A2AClient, task_id: str) -> list[str]:
    listed = client.call("ListTaskPushNotificationConfigs", {"taskId": task_id})
    return sorted(c.get("id") for c in listed.result.get("configs") or [])


@pytest.mark.req("PUSH-01", "PUSH-15")
@pytest.mark.scenario("ask")
def test_a_write_to_one_config_leaves_every_other_as_it_was(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end
):
    """A config is named by its task and its id: the same id on a second task and a second config of the same task
    (its id beginning with the deleted one's) are other configs, and deleting one leaves each of them as it was
    (List lists it, Get answers it). The ids
    are the kit's own; a Runtime that gives its own ids instead is held to the same with those."""
    url = a2a_push_receiver.endpoint().url
    first, second = _paused(a2a_client, a2a_cancel_at_end), _paused(a2a_client, a2a_cancel_at_end)
    shared = "shared-" + new_id()
    own = shared + "-2"  # an id the deleted one is the beginning of: a config named by less is not this one
    made = {}
    for task_id, config_id in ((first["id"], shared), (second["id"], shared), (first["id"], own)):
        made[task_id, config_id] = drivers.create_push_config(a2a_client, task_id, url, config_id=config_id).ok()["id"]
    gone, kept = made[first["id"], shared], made[second["id"], shared]
    before = {task["id"]: _config_ids(a2a_client, task["id"]) for task in (first, second)}
    a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": first["id"], "id": gone}).ok()
    after = {task["id"]: _config_ids(a2a_client, task["id"]) for task in (first, second)}
    expected = {first["id"]: sorted(set(before[first["id"]]) - {gone}), second["id"]: before[second["id"]]}
    if after != expected:
        a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": second["id"]}).fail(
            f"deleting config {gone} of task {first['id']} must delete that one only: before, the tasks' configs "
            f"were {before}; after, {after} (expected {expected})"
        )
    answered = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": second["id"], "id": kept})
    if answered.is_error or answered.result.get("id") != kept:
        answered.fail(f"config {kept} of the other task must still be served once the first task's {gone} is deleted")
    # The deleted id is the beginning of a config the task still has: a config read by less than its whole id is
    # that other one, and a Get of the deleted id must find nothing.
    again = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": first["id"], "id": gone})
    if not again.is_error:
        again.fail(f"config {gone} of task {first['id']} was deleted: Get answers not found, not another config")


@pytest.mark.req("PUSH-01")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("several", axes.members("PUSH-01", "several"))
def test_the_second_config_of_a_task_is_served_as_the_first(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end, several: str
):
    task = _paused(a2a_client, a2a_cancel_at_end)
    first, second = push_checks.two_configs(a2a_client, a2a_push_receiver, task["id"])
    if several == "push-config.second-deleted":
        a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": second.id}).ok()
    kept = [first] if several == "push-config.second-deleted" else [first, second]
    listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    ids = sorted(c.get("id") for c in listed.result.get("configs") or [])
    if ids != sorted(c.id for c in kept):
        listed.fail(f"the task's configs are {sorted(c.id for c in kept)}: List lists each, and no other")
    for config in kept:
        got = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config.id})
        if (got.result.get("id"), got.result.get("url")) != (config.id, config.endpoint.url):
            got.fail(f"GetTaskPushNotificationConfig {config.id} answers that config, {config.endpoint.url}")


@pytest.mark.req("PUSH-01")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("read", axes.members("PUSH-01", "reads"))
def test_reading_configs_changes_nothing(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, a2a_cancel_at_end, read: str
):
    task = _paused(a2a_client, a2a_cancel_at_end)
    configs = push_checks.two_configs(a2a_client, a2a_push_receiver, task["id"])
    for _ in range(2):  # each read twice: the second shows what the first left
        if read == "GetTaskPushNotificationConfig":
            for config in configs:
                got = a2a_client.call(read, {"taskId": task["id"], "id": config.id})
                if got.is_error or got.result.get("id") != config.id:
                    got.fail(f"GetTaskPushNotificationConfig {config.id} read again must answer it again")
        else:
            listed = a2a_client.call(read, {"taskId": task["id"]})
            if sorted(c.get("id") for c in listed.result.get("configs") or []) != sorted(c.id for c in configs):
                listed.fail("ListTaskPushNotificationConfigs read again must list the task's configs again")


@pytest.mark.req("PUSH-02", "SEND-03")
@pytest.mark.scenario("slow")
@pytest.mark.parametrize("combined", axes.members("PUSH-02", "combines"))
def test_config_inside_send_message(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, combined: str
):
    endpoint = a2a_push_receiver.endpoint()
    config = drivers.push_config(endpoint.url, config_id="inline-" + new_id())
    at_once = combined.startswith("returnImmediately")
    params = {
        "message": {
            "messageId": new_id("msg"),
            "role": "ROLE_USER",
            "parts": [{"text": drivers.scenario("slow", drivers.AT_ONCE_TURN_MS if at_once else 300)}],
        },
        "configuration": {"returnImmediately": at_once, "taskPushNotificationConfig": config},
    }
    answer = a2a_client.call("SendMessage", params)
    task = answer.task
    if at_once:
        drivers.answered_at_once(answer, "a push config inside SendMessage")
    listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    urls = {c.get("id"): c.get("url") for c in listed.result.get("configs") or []}
    if endpoint.url not in urls.values():
        listed.fail("a config sent inside SendMessage is a config of the task, as one created by the method")
    # The answer does not show the config: the id the client gave is the only one it knows it by.
    if urls.get(config["id"]) != endpoint.url:
        listed.fail(f"the config sent inside SendMessage with id {config['id']!r} is listed under that id")
    got = a2a_client.call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config["id"]})
    if got.is_error or got.result.get("url") != endpoint.url:
        got.fail(f"GetTaskPushNotificationConfig answers the config sent inside SendMessage by its id {config['id']!r}")
    delivered = endpoint.wait_for(
        lambda ds: "TASK_STATE_COMPLETED" in drivers.pushed_states(ds), a2a_pushing.push.wait_s
    )
    if "TASK_STATE_COMPLETED" not in drivers.pushed_states(delivered):
        a2a_client.get_task(task["id"]).fail(
            f"the task's updates must reach the inline config's url; got {len(delivered)}"
        )


@pytest.mark.req("PUSH-02")
@pytest.mark.scenario("slow", "complete")
def test_a_config_inside_a_queued_message_serves_the_task_that_takes_it(
    request: pytest.FixtureRequest,
    a2a_pushing: Target,
    a2a_client: A2AClient,
    a2a_push_receiver: PushReceiver,
    a2a_cancel_at_end,
):
    context, running = queueing.busy(a2a_client)
    a2a_cancel_at_end(a2a_client, running["id"])
    endpoint = a2a_push_receiver.endpoint()
    config = drivers.push_config(endpoint.url, config_id="inline-" + new_id())
    message = {"messageId": new_id("queued"), "role": "ROLE_USER", "contextId": context}
    # Beside every other option of the configuration: each serves the turn that takes the message as the config does.
    configuration, _ = drivers.every_option(request, a2a_pushing)
    params = {
        "message": {**message, "parts": [{"text": drivers.scenario("complete")}]},
        "configuration": {**configuration, "taskPushNotificationConfig": config},
    }
    answer = a2a_client.call("SendMessage", params)
    if answer.is_error:  # PUSH-01's decision: whether a queued message takes a config the pages do not say
        not_checked(f"the Agent refuses a push config on a message to a busy conversation: {answer.error}")
    a2a_client.cancel(running["id"]).ok()  # the queued message's turn comes: its config comes with it
    # Its id leads GetTask to the taking task where the Agent lets it (QUEUE-02's decision): the delivery's window
    # is then counted from when that task showed the end; otherwise a late delivery is not checked.
    push_checks.until_pushed(
        endpoint, "TASK_STATE_COMPLETED", a2a_pushing, client=a2a_client, task_id=answer.task["id"]
    )


@pytest.mark.req("PUSH-03")
@pytest.mark.scenario("complete")
def test_without_push_a_config_inside_send_message_is_refused_or_unused(
    a2a_target: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    _without_push(a2a_target)
    endpoint = a2a_push_receiver.endpoint()
    context = drivers.new_context()
    message = {
        "messageId": new_id("msg"),
        "role": "ROLE_USER",
        "contextId": context,
        "parts": [{"text": drivers.scenario("complete")}],
    }
    configuration = {"taskPushNotificationConfig": drivers.push_config(endpoint.url)}
    exchange = a2a_client.call("SendMessage", {"message": message, "configuration": configuration})
    if exchange.is_error:
        exchange.expect_error("PushNotificationNotSupportedError")
        listed = a2a_client.list_tasks(contextId=context)
        if listed.result["tasks"]:
            listed.fail("a SendMessage refused for its push config must start nothing")
        return
    drivers.settle(a2a_client, drivers.task_of(exchange))
    # Served, the config must go unused: a first delivery would have left by the time the turn ended.
    if endpoint.quiet_for(UNUSED_GRACE_S, after=0):
        exchange.fail("without a push secret the config inside SendMessage may be accepted, but never delivered to")
