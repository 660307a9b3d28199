"""progress/v1: the plan on status updates and on the task; and what is never visible while working."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, extensions, new_id
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import axes
from nylorun_a2a_kit.fixtures.scenarios import drivers, push_checks
from nylorun_a2a_kit.fixtures.target import Target

# Keys a part would have if it showed a tool call or its result (as the common model APIs spell them).
TOOL_CALL_KEYS = {
    "toolCall",
    "tool_call",
    "toolCalls",
    "tool_calls",
    "functionCall",
    "function_call",
    "toolResult",
    "tool_result",
    "toolName",
    "tool_name",
}


# Each step takes this long, so the checks see the plan on status updates while the turn works.
STEP_MS = 30


def _status_steps(task: dict) -> list[dict] | None:
    message = task["status"].get("message") or {}
    plan = (message.get("metadata") or {}).get(extensions.PROGRESS)
    return None if plan is None else plan.get("steps") or []


def _run_plan(a2a_client: A2AClient, steps: int) -> tuple[dict, list[list[dict]]]:
    """Run a plan, polling as it works; the ended task and every plan a status update was seen carrying."""
    task = a2a_client.send(drivers.scenario("plan", f"{steps} {STEP_MS}"), return_immediately=True).task
    seen: list[list[dict]] = []

    def watch(current: dict) -> bool:
        steps_now = _status_steps(current)
        if steps_now is not None and (not seen or seen[-1] != steps_now):
            seen.append(steps_now)
        return drivers.state(current) in drivers.TERMINAL

    return drivers.wait_for(a2a_client, task["id"], watch), seen


def _ran_plan(a2a_client: A2AClient, steps: int) -> tuple[Exchange, list[list[dict]]]:
    """Run a plan to its end: GetTask's answer on the ended task, and every plan a status update showed."""
    task, seen = _run_plan(a2a_client, steps)
    return a2a_client.get_task(task["id"]), seen


def _steps(source: dict) -> list[dict]:
    return (extensions.read(source, extensions.PROGRESS) or {}).get("steps") or []


@pytest.mark.req("PROG-01")
@pytest.mark.scenario("plan")
@pytest.mark.parametrize("steps", [3, 25])
def test_plan_has_at_most_20_steps(a2a_v2_client: A2AClient, steps: int):
    got, seen = _ran_plan(a2a_v2_client, steps)
    plan = _steps(got.task)
    if not plan or not seen:
        got.fail("a turn with a plan carries it under progress/v1, on its status updates and on the task")
    for shown in [plan, *seen]:
        if len(shown) > 20:
            got.fail(f"a plan shows at most 20 steps, one showed {len(shown)}")


@pytest.mark.req("PROG-01")
@pytest.mark.scenario("plan")
def test_terminal_update_carries_the_plan(a2a_v2_client: A2AClient):
    got, _ = _ran_plan(a2a_v2_client, 3)
    steps = _status_steps(got.task)
    if steps is None or not steps or len(steps) > 20:
        got.fail("a plan rides on every status update from its first, the terminal one included, at most 20 steps")


WATCHES = 16  # at most: the plan's four steps, watched twice a step, and as long again


@pytest.mark.req("PROG-01")
@pytest.mark.scenario("plan")
def test_every_pushed_update_carries_the_plan(
    a2a_pushing: Target, a2a_v2_client: A2AClient, a2a_push_receiver: PushReceiver
):
    endpoint = a2a_push_receiver.endpoint()
    params = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": f"scenario plan 4 {STEP_MS}"}]},
        "configuration": {"taskPushNotificationConfig": drivers.push_config(endpoint.url), "returnImmediately": True},
    }
    task = a2a_v2_client.call("SendMessage", params).result["task"]
    # Watched while it runs, as a client shows a plan: a GetTask every half step, to the end (a Runtime restarted
    # meanwhile resumes the turn, and what it pushes after the restart is judged with the rest).
    for _ in range(WATCHES):
        if drivers.state(a2a_v2_client.get_task(task["id"]).task) in drivers.TERMINAL:
            break
        time.sleep(STEP_MS / 2000)
    delivered = push_checks.until_pushed(endpoint, "TASK_STATE_COMPLETED", a2a_pushing)
    firsts = {d.webhook_id: d.json["statusUpdate"] for d in delivered if "statusUpdate" in (d.json or {})}
    updates = sorted(firsts.values(), key=lambda update: update["status"].get("timestamp", ""))
    planned = [bool(_steps(update)) for update in updates]
    if True not in planned:
        pytest.fail("a turn with a plan pushes it under progress/v1 on its status updates")
    after_first = planned[planned.index(True) :]
    if not all(after_first):
        states = [u["status"]["state"] for u in updates[planned.index(True) :]]
        pytest.fail(f"once shown, the plan rides on every status update: {list(zip(states, after_first, strict=True))}")


@pytest.mark.req("PROG-02")
@pytest.mark.scenario("plan")
def test_each_step_has_label_state_and_note(a2a_v2_client: A2AClient):
    got, seen = _ran_plan(a2a_v2_client, 4)
    plans = [_steps(got.task), *seen]
    if not plans[0]:
        got.fail("a four-step plan shows its steps")
    for plan in plans:
        for i, step in enumerate(plan):
            if not step.get("label") or not step.get("state") or not isinstance(step.get("note"), str):
                got.fail(f"step {i} must have a label, a state and a note: {step}")


@pytest.mark.req("PROG-03")
@pytest.mark.scenario("plan")
def test_get_task_carries_the_latest_plan(a2a_v2_client: A2AClient):
    got, _ = _ran_plan(a2a_v2_client, 4)
    plan = _steps(got.task)
    if not plan:
        got.fail("GetTask's task carries the turn's plan under progress/v1")
    newest = _status_steps(got.task)
    # The terminal update is the newest status update; when it carries a plan, that is the latest one.
    if newest is not None and plan != newest:
        got.fail("GetTask's plan must be the newest one a status update carried")


# -- the plan on every channel the task travels


@pytest.mark.shares_turn("plan")
@pytest.mark.req("PROG-01")
@pytest.mark.scenario("plan")
@pytest.mark.parametrize("channel", axes.members("PROG-01", "channels"))
def test_the_plan_rides_every_channel_within_20_steps(a2a_channel_views, channel: str):
    views = a2a_channel_views("plan")  # a plan of 25 steps: at most 20 shown
    plans = views.plans(channel)
    if not plans or plans[-1][1] is None:
        views.fail(channel, f"a turn with a plan carries it under progress/v1 on {axes.CHANNELS[channel]}")
    for where, plan in plans:
        steps = (plan or {}).get("steps")
        if not isinstance(steps, list) or not steps or len(steps) > 20:
            views.fail(channel, f"{where} shows a plan of {len(steps or [])} steps: 1 to 20 of a 25-step plan")


@pytest.mark.shares_turn("plan")
@pytest.mark.req("PROG-02")
@pytest.mark.scenario("plan")
@pytest.mark.parametrize("channel", axes.members("PROG-02", "channels"))
def test_each_step_has_label_state_and_note_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("plan")
    for where, plan in views.plans(channel):
        for i, step in enumerate((plan or {}).get("steps") or []):
            if not step.get("label") or not step.get("state") or not isinstance(step.get("note"), str):
                views.fail(channel, f"{where}: step {i} must have a label, a state and a note: {step}")


@pytest.mark.shares_turn("plan")
@pytest.mark.req("PROG-03")
@pytest.mark.scenario("plan")
@pytest.mark.parametrize("channel", axes.members("PROG-03", "channels"))
def test_the_task_carries_its_latest_plan_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("plan")
    pushed = [plan for _, plan in views.plans("push")]  # the newest status update that carried one
    newest = (pushed[-1] or {}).get("steps") if pushed else None
    if newest is None:
        views.fail("push", "the task's status updates must carry its plan")
    for where, plan in views.plans(channel):
        if (plan or {}).get("steps") != newest:
            views.fail(channel, f"{where} must carry the latest plan, the one its newest status update carried")


def _objects(value) -> Iterator[dict]:
    """Every JSON object in ``value``, itself included, each before the objects it holds."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def _looks_like_a_tool_call(value) -> bool:
    return any(TOOL_CALL_KEYS & set(obj) for obj in _objects(value))


@pytest.mark.req("PROG-04")
@pytest.mark.scenario("tool")
def test_tool_calls_are_never_visible(a2a_v2_client: A2AClient, a2a_recorder: list):
    seed = new_id("seed")
    secret = "tool-secret-" + hashlib.sha256(seed.encode()).hexdigest()[:16]
    task = drivers.settle(a2a_v2_client, a2a_v2_client.send(drivers.scenario("tool", seed)).task)
    a2a_v2_client.get_task(task["id"], history_length=100)
    a2a_v2_client.list_tasks(contextId=task["contextId"], includeArtifacts=True, historyLength=100)
    for exchange in list(a2a_recorder):
        body = exchange.response_body.decode("utf-8", "replace")
        if secret in body:
            exchange.fail("a tool call's arguments or result reached the caller")
        if _looks_like_a_tool_call([p.get("data") for p in _parts(exchange.json)]):
            exchange.fail("a part has the shape of a tool call or its result")


def _parts(answer) -> list[dict]:
    """Every part anywhere in an answer (messages, history, artifacts)."""
    held = (obj["parts"] for obj in _objects(answer) if isinstance(obj.get("parts"), list))
    return [part for parts in held for part in parts if isinstance(part, dict)]
