"""The push config methods on a task, or a config, that does not exist (A2A §3.1.7–§3.1.10 Errors), for an
Agent whose card declares push notifications: TaskNotFoundError, at the core tier."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.scenarios import drivers
from nylorun_a2a_kit.fixtures.target import Target

ON_A_MISSING_TASK = {
    "CreateTaskPushNotificationConfig": {"url": None},  # the receiver's, never called: the task does not exist
    "GetTaskPushNotificationConfig": {"id": "push-config-1"},
    "ListTaskPushNotificationConfigs": {},
    "DeleteTaskPushNotificationConfig": {"id": "push-config-1"},
}


@pytest.mark.req("PUSH-17")
@pytest.mark.parametrize("method", ON_A_MISSING_TASK)
def test_a_config_method_on_a_task_that_does_not_exist_is_refused(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, method: str
):
    # A destination the target's allow-list names: the rule under check is the task's, not the destination's.
    params = {"taskId": new_id("task"), **ON_A_MISSING_TASK[method]}
    if "url" in params:
        params["url"] = a2a_push_receiver.endpoint().url
    a2a_client.call(method, params).expect_error("TaskNotFoundError")


@pytest.mark.req("PUSH-17")
def test_getting_a_config_the_task_does_not_have_is_refused(a2a_pushing: Target, a2a_client: A2AClient):
    task = drivers.ordinary(a2a_client)
    params = {"taskId": task["id"], "id": new_id("config")}
    a2a_client.call("GetTaskPushNotificationConfig", params).expect_error("TaskNotFoundError")
