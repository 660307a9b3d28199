"""A2A-Version: 1.0 is served; no version (read as 0.3), 0.3 and unknown versions are refused."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.scenarios import drivers


@pytest.mark.req("VER-01")
def test_version_1_0_is_served(a2a_client: A2AClient):
    exchange = a2a_client.list_tasks(contextId=drivers.new_context())
    assert exchange.result["tasks"] == [] or exchange.fail("a fresh context should list no tasks")


@pytest.mark.req("VER-02")
def test_request_without_version_is_refused(a2a_client: A2AClient):
    context = drivers.new_context()
    headers = a2a_client.headers(version=None)
    exchange = a2a_client.call("ListTasks", {"contextId": context}, headers=headers)
    exchange.expect_error("VersionNotSupportedError")


@pytest.mark.req("VER-02")
@pytest.mark.scenario("complete")
def test_message_without_version_starts_nothing(a2a_client: A2AClient):
    context = drivers.new_context()
    params = {
        "message": {
            "messageId": drivers.new_context(),
            "role": "ROLE_USER",
            "contextId": context,
            "parts": [{"text": drivers.scenario("complete")}],
        }
    }
    a2a_client.call("SendMessage", params, headers=a2a_client.headers(version=None)).expect_error(
        "VersionNotSupportedError"
    )
    listed = a2a_client.list_tasks(contextId=context)
    if listed.result["tasks"]:
        listed.fail("a refused SendMessage must not start a task")


@pytest.mark.req("VER-03")
def test_version_0_3_is_refused(a2a_client: A2AClient):
    exchange = a2a_client.call("ListTasks", {}, headers=a2a_client.headers(version="0.3"))
    exchange.expect_error("VersionNotSupportedError")


@pytest.mark.req("VER-04")
@pytest.mark.parametrize("version", ["9.9", "2.0"])
def test_unknown_version_is_refused(a2a_client: A2AClient, version: str):
    exchange = a2a_client.call("ListTasks", {}, headers=a2a_client.headers(version=version))
    exchange.expect_error("VersionNotSupportedError")
