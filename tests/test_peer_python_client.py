"""The official Python SDK's client (a2a-sdk 1.3, JSON-RPC transport) against the kit's reference agent.

An independent A2A 1.0 client drives the reference agent the way an SDK user would: ``ClientFactory`` resolves
the card at the Runtime's ``…/card`` URL and builds the JSON-RPC transport; the profile's headers travel as the
SDK's service parameters (``ClientCallContext.service_parameters``), ``A2A-Version: 1.0`` as the factory's
default header. Every HTTP exchange is recorded, so a refusal names the request and the answer.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import uuid
from dataclasses import dataclass, field

import httpx
import pytest

from nylorun_a2a_kit.fixtures.push import free_port

pytest.importorskip("a2a.client", reason="a2a-sdk is not installed (pip install -e '.[peers]')")

from a2a.client import A2AClientError, ClientCallContext, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

from tests.agent_process import agent_process

pytestmark = pytest.mark.slow  # whole runs of the suites or of agents, each in a process of its own

KEY = "peer-client-key"
SUBJECT = "a2a:python-sdk-client"
PROFILE_HEADERS = {
    "Authorization": f"Bearer {KEY}",
    "Nylorun-Subject": SUBJECT,
    "Nylorun-Scopes": "sessions:own",
    "A2A-Version": "1.0",
}
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}


@dataclass
class Recorder:
    """Every request the SDK client sent and the answer it got, to quote a refusal exactly."""

    exchanges: list[str] = field(default_factory=list)
    headers: list[httpx.Headers] = field(default_factory=list)

    async def on_response(self, response: httpx.Response) -> None:
        await response.aread()
        request = response.request
        self.headers.append(request.headers)
        shown = {k: ("Bearer ***" if k.lower() == "authorization" else v) for k, v in request.headers.items()}
        self.exchanges.append(
            f"→ {request.method} {request.url}\n  {json.dumps(shown)}\n  {request.content.decode(errors='replace')}"
            f"\n← HTTP {response.status_code}\n  {response.text[:2000]}"
        )

    def last(self, n: int = 1) -> str:
        return "\n".join(self.exchanges[-n:])


def _text_message(text: str, *, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=f"sdk-{uuid.uuid4().hex[:12]}",
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


async def _send(client, context: ClientCallContext, message: Message, **configuration) -> Task:
    request = SendMessageRequest(message=message, configuration=SendMessageConfiguration(**configuration))
    answers = [answer async for answer in client.send_message(request, context=context)]
    assert len(answers) == 1 and answers[0].HasField("task"), f"expected one Task answer, got {answers}"
    return answers[0].task


def _artifact_texts(task: Task) -> list[str]:
    return [part.text for artifact in task.artifacts for part in artifact.parts if part.HasField("text")]


async def _drive(endpoint: str, push_url: str, recorder: Recorder) -> dict[str, str]:
    """The SDK client's steps; each asserts its answer. Returns what each step saw, for the report."""
    seen: dict[str, str] = {}
    http = httpx.AsyncClient(timeout=30, event_hooks={"response": [recorder.on_response]})
    factory = ClientFactory(ClientConfig(streaming=False, httpx_client=http))
    context = ClientCallContext(service_parameters=dict(PROFILE_HEADERS))
    client = await factory.create_from_url(endpoint, relative_card_path="card")
    try:
        # 1. scenario complete: one blocking SendMessage answers the COMPLETED task with its artifacts.
        done = await _send(client, context, _text_message("scenario complete"))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED, recorder.last()
        assert done.artifacts, recorder.last()
        seen["complete"] = f"{TaskState.Name(done.status.state)}, {len(done.artifacts)} artifacts"

        # 2. scenario ask: pauses INPUT_REQUIRED with a question; a text answer on the same task completes it.
        asked = await _send(client, context, _text_message("scenario ask"))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, recorder.last()
        assert any(p.text for p in asked.status.message.parts), recorder.last()
        answer = _text_message("blue", task_id=asked.id, context_id=asked.context_id)
        answered = await _send(client, context, answer)
        for _ in range(100):
            if answered.status.state in TERMINAL:
                break
            await asyncio.sleep(0.1)
            answered = await client.get_task(GetTaskRequest(id=asked.id), context=context)
        assert (answered.id, answered.context_id) == (asked.id, asked.context_id), recorder.last()
        assert answered.status.state == TaskState.TASK_STATE_COMPLETED, recorder.last()
        assert any("blue" in text for text in _artifact_texts(answered)), recorder.last()
        seen["ask"] = f"{TaskState.Name(asked.status.state)} → {TaskState.Name(answered.status.state)}"

        # 3. GetTask answers the completed task as SendMessage did.
        got = await client.get_task(GetTaskRequest(id=done.id), context=context)
        assert (got.id, got.context_id, got.status.state) == (done.id, done.context_id, done.status.state)
        assert [a.artifact_id for a in got.artifacts] == [a.artifact_id for a in done.artifacts], recorder.last()
        seen["GetTask"] = TaskState.Name(got.status.state)

        # 4. ListTasks lists the caller's tasks, most recently changed first.
        listed = await client.list_tasks(ListTasksRequest(), context=context)
        ids = [task.id for task in listed.tasks]
        assert {done.id, asked.id} <= set(ids), recorder.last()
        assert listed.total_size >= 2 and listed.next_page_token == "", recorder.last()
        seen["ListTasks"] = f"{len(ids)} tasks, totalSize {listed.total_size}"

        # 5. CancelTask of a slow task started with returnImmediately.
        slow = await _send(client, context, _text_message("scenario slow 60000"), return_immediately=True)
        assert slow.status.state not in TERMINAL, recorder.last()
        canceled = await client.cancel_task(CancelTaskRequest(id=slow.id), context=context)
        assert canceled.id == slow.id and canceled.status.state == TaskState.TASK_STATE_CANCELED, recorder.last()
        again = await client.get_task(GetTaskRequest(id=slow.id), context=context)
        assert again.status.state == TaskState.TASK_STATE_CANCELED, recorder.last()
        seen["CancelTask"] = f"{TaskState.Name(slow.status.state)} → {TaskState.Name(canceled.status.state)}"

        # 6. CreateTaskPushNotificationConfig with an allowed destination (only created, never delivered to).
        token = secrets.token_hex(8)
        config = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=done.id, url=push_url, token=token), context=context
        )
        assert config.task_id == done.id and config.url == push_url and config.id, recorder.last()
        seen["CreateTaskPushNotificationConfig"] = f"id {config.id}"
    except A2AClientError as exc:
        pytest.fail(f"the reference agent refused the SDK client: {exc!r}\n{recorder.last()}")
    finally:
        await client.close()
        await http.aclose()
    return seen


def test_python_sdk_client_drives_the_reference_agent(tmp_path):
    push_port = free_port()  # nothing listens there: the config is created, never delivered to
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    args = ("--key", KEY, "--wait-ms", "10000", "--push-secret", secret, "--push-allow", f"127.0.0.1:{push_port}")
    recorder = Recorder()
    with agent_process(tmp_path / "agent.sqlite3", *args) as base:
        seen = asyncio.run(_drive(f"{base}/v1/a2a/agents/support", f"http://127.0.0.1:{push_port}/hook", recorder))
    assert set(seen) == {"complete", "ask", "GetTask", "ListTasks", "CancelTask", "CreateTaskPushNotificationConfig"}
    rpc_headers = [h for h in recorder.headers if "authorization" in h]
    assert rpc_headers, "the SDK client sent no JSON-RPC request with the profile's headers"
    for headers in rpc_headers:
        assert headers.get("A2A-Version") == "1.0"
        assert headers.get("Nylorun-Subject") == SUBJECT and headers.get("Nylorun-Scopes") == "sessions:own"
