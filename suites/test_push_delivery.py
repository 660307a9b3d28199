"""Push deliveries: every state change, signed, with the config's token and authentication, retried well."""

from __future__ import annotations

import itertools
import math
import time

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, new_id
from nylorun_a2a_kit.fixtures.push import Endpoint, PushReceiver
from nylorun_a2a_kit.fixtures.requirements import axes, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, push_checks
from nylorun_a2a_kit.fixtures.target import Target

pytestmark = pytest.mark.scenario("ask")
FAILING = {"then": "500"}  # an endpoint that fails every attempt


def _paused(
    a2a_client: A2AClient, receiver: PushReceiver, script=(), then="ok", **fields
) -> tuple[dict, Endpoint, str]:
    """A task waiting on a question, with a config to a scripted endpoint; answering it makes updates."""
    task = drivers.run(a2a_client, "ask")
    endpoint = push_checks.endpoint_for(receiver, script, then, **fields)
    created = drivers.create_push_config(a2a_client, task["id"], endpoint.url, **fields)
    return task, endpoint, created.result["id"]


def _answer(a2a_client: A2AClient, task: dict) -> None:
    a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"], return_immediately=True)


def _quiet_s(a2a_target: Target) -> float:
    """How long 'nothing more arrives' is watched: a retry-schedule step of hours, and at least 2.5 s."""
    return min(a2a_target.push.wait_s, max(2.5, a2a_target.push.scaled(3 * 3600)))


@pytest.mark.req("PUSH-05")
def test_every_state_change_is_delivered(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    endpoint = a2a_push_receiver.endpoint()
    config = drivers.push_config(endpoint.url)
    params = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": drivers.scenario("ask")}]},
        "configuration": {"taskPushNotificationConfig": config},
    }
    task = a2a_client.call("SendMessage", params).task
    shown = {"client": a2a_client, "task_id": task["id"]}
    push_checks.until_pushed(endpoint, "TASK_STATE_INPUT_REQUIRED", a2a_pushing, **shown)
    _answer(a2a_client, task)
    push_checks.until_pushed(endpoint, "TASK_STATE_COMPLETED", a2a_pushing, **shown)


def _pushed_from_the_start(a2a_client: A2AClient, receiver: PushReceiver, scenario: str) -> tuple[dict, Endpoint]:
    """A task of ``scenario`` with its config inside SendMessage, so its webhook sees every change."""
    endpoint = receiver.endpoint()
    params = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": drivers.scenario(scenario)}]},
        "configuration": {"taskPushNotificationConfig": drivers.push_config(endpoint.url)},
    }
    return drivers.settle(a2a_client, a2a_client.call("SendMessage", params).task), endpoint


@pytest.mark.req("PUSH-05")
@pytest.mark.parametrize(
    "kind", [pytest.param(kind, marks=pytest.mark.scenario(name)) for kind, (name, _) in drivers.PAUSES.items()]
)
def test_every_pause_and_its_cancel_are_delivered(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, kind: str
):
    task, endpoint = _pushed_from_the_start(a2a_client, a2a_push_receiver, drivers.PAUSES[kind][0])
    if drivers.state(task) not in drivers.INTERRUPTED:  # the scenario's state is TASK-03's rule, not this one's
        not_checked(f"the {kind} scenario answered {drivers.state(task)}, not a pause, so that member is not reached")
    shown = {"client": a2a_client, "task_id": task["id"]}
    push_checks.until_pushed(endpoint, drivers.state(task), a2a_pushing, **shown)
    a2a_client.cancel(task["id"]).ok()
    push_checks.until_pushed(endpoint, "TASK_STATE_CANCELED", a2a_pushing, **shown)


@pytest.mark.req("PUSH-05")
@pytest.mark.parametrize("ending", drivers.each_ending("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"))
def test_every_end_is_delivered(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, ending: str
):
    task, endpoint = _pushed_from_the_start(a2a_client, a2a_push_receiver, drivers.ENDINGS[ending])
    if drivers.state(task) != ending:  # the scenario's end is TASK-13's rule, not this one's
        scenario = drivers.ENDINGS[ending]
        not_checked(f"the {scenario} scenario ended {drivers.state(task)}, not {ending}, so that member is not reached")
    push_checks.until_pushed(endpoint, ending, a2a_pushing, client=a2a_client, task_id=task["id"])


@pytest.mark.req("PUSH-06")
def test_deliveries_are_stream_responses_for_the_task(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver)
    _answer(a2a_client, task)
    judged = lambda ds: push_checks.check_stream_responses(ds, task["id"])  # noqa: E731 - what arrived, judged
    judged(push_checks.until_pushed(endpoint, "TASK_STATE_COMPLETED", a2a_pushing, judge=judged))


@pytest.mark.req("PUSH-07")
@pytest.mark.parametrize("scheme", ["Bearer", "Basic"])
def test_deliveries_carry_the_authentication(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, scheme: str
):
    secret = new_id("cred")
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, scheme=scheme, credentials=secret)
    _answer(a2a_client, task)
    judged = lambda ds: push_checks.check_authentication(ds, secret, scheme)  # noqa: E731 - what arrived, judged
    judged(push_checks.until_pushed(endpoint, "TASK_STATE_COMPLETED", a2a_pushing, judge=judged))


@pytest.mark.req("PUSH-08")
@pytest.mark.parametrize("length", ["short", "long"])
def test_deliveries_carry_the_token(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, length: str
):
    """The token as the config gave it, however long."""
    token = new_id("tok") if length == "short" else drivers.long_id("tok")
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, token=token)
    _answer(a2a_client, task)
    judged = lambda ds: _check_token(ds, a2a_pushing, token)  # noqa: E731 - what arrived, judged
    judged(push_checks.until_pushed(endpoint, "TASK_STATE_COMPLETED", a2a_pushing, judge=judged))


@pytest.mark.req("PUSH-09")
def test_deliveries_are_signed(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver)
    _answer(a2a_client, task)
    _check_signed(push_checks.until_pushed(endpoint, "TASK_STATE_COMPLETED", a2a_pushing, judge=_check_signed))
    _need_secret(a2a_pushing)


# -- two configs on one task: each gets the task's updates, with its own token and credentials


def _two_configs_delivered(a2a_pushing: Target, a2a_client: A2AClient, receiver: PushReceiver, delete_second=False):
    task = drivers.run(a2a_client, "ask")
    configs = push_checks.two_configs(a2a_client, receiver, task["id"])
    if delete_second:
        a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": configs[1].id}).ok()
    _answer(a2a_client, task)
    return configs, push_checks.until_pushed(configs[0].endpoint, "TASK_STATE_COMPLETED", a2a_pushing)


@pytest.mark.req("PUSH-05")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("several", axes.members("PUSH-05", "several"))
def test_the_second_config_gets_every_update(a2a_pushing, a2a_client, a2a_push_receiver, several: str):
    configs, _ = _two_configs_delivered(a2a_pushing, a2a_client, a2a_push_receiver)
    shown = {"client": a2a_client, "task_id": configs[1].task_id}
    push_checks.until_pushed(configs[1].endpoint, "TASK_STATE_COMPLETED", a2a_pushing, **shown)


@pytest.mark.req("PUSH-07")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("several", axes.members("PUSH-07", "several"))
def test_each_config_gets_its_own_authentication(a2a_pushing, a2a_client, a2a_push_receiver, several: str):
    configs, _ = _two_configs_delivered(a2a_pushing, a2a_client, a2a_push_receiver)
    for config in configs:
        judged = lambda ds, config=config: push_checks.check_authentication(ds, config.credentials)  # noqa: E731
        judged(push_checks.until_pushed(config.endpoint, "TASK_STATE_COMPLETED", a2a_pushing, judge=judged))


@pytest.mark.req("PUSH-08")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("several", axes.members("PUSH-08", "several"))
def test_each_config_gets_its_own_token(a2a_pushing, a2a_client, a2a_push_receiver, several: str):
    configs, _ = _two_configs_delivered(a2a_pushing, a2a_client, a2a_push_receiver)
    for config in configs:
        judged = lambda ds, config=config: _check_token(ds, a2a_pushing, config.token)  # noqa: E731
        judged(push_checks.until_pushed(config.endpoint, "TASK_STATE_COMPLETED", a2a_pushing, judge=judged))


@pytest.mark.req("PUSH-05")
@pytest.mark.scenario("ask")
def test_a_config_made_again_under_a_deleted_id_is_delivered_to(a2a_pushing, a2a_client, a2a_push_receiver):
    """A config deleted, then created again under the same id for another endpoint: the new one is a config like
    any, listed and delivered to (a deletion leaves nothing behind that stops it)."""
    task = drivers.run(a2a_client, "ask")
    config_id = new_id("cfg")
    gone = push_checks.endpoint_for(a2a_push_receiver)
    first = drivers.create_push_config(a2a_client, task["id"], gone.url, config_id=config_id)
    if first.is_error or first.result.get("id") != config_id:
        not_checked(f"the Agent does not keep a config id the client chose: {first.answer_line()}")
    a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}).ok()
    again = push_checks.endpoint_for(a2a_push_receiver)
    made = drivers.create_push_config(a2a_client, task["id"], again.url, config_id=config_id)
    if made.is_error:  # whether an id may be used again is not on the pages: a refusal leaves nothing to judge
        not_checked(f"the Agent refuses a config id the task had and deleted: {made.answer_line()}")
    _answer(a2a_client, task)
    push_checks.until_pushed(again, "TASK_STATE_COMPLETED", a2a_pushing, client=a2a_client, task_id=task["id"])


@pytest.mark.req("PUSH-15")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("several", axes.members("PUSH-15", "several"))
def test_deleting_the_second_config_stops_only_its_deliveries(a2a_pushing, a2a_client, a2a_push_receiver, several):
    configs, _ = _two_configs_delivered(a2a_pushing, a2a_client, a2a_push_receiver, delete_second=True)
    late = configs[1].endpoint.quiet_for(_quiet_s(a2a_pushing), after=0)
    if late:
        pytest.fail(f"the deleted second config still got {len(late)} deliveries; the first kept its own")


# -- a delivery as a Runtime may write it, and as it must come


def _delivered(a2a_channel_views) -> list:
    return a2a_channel_views("files").arrived()  # an ended turn's status updates and four artifact updates


@pytest.mark.shares_turn("files")
@pytest.mark.req("PUSH-06")
@pytest.mark.parametrize("spelling", axes.members("PUSH-06", "spellings"))
def test_every_delivery_is_a_post(a2a_pushing: Target, a2a_channel_views, spelling: str):
    for delivery in _delivered(a2a_channel_views):
        if delivery.method != "POST":
            pytest.fail(f"delivery {delivery.webhook_id} came as an HTTP {delivery.method}: A2A §4.3.3 sends a POST")


PUSH_JSON_TYPES = ("application/a2a+json", "application/json")


@pytest.mark.shares_turn("files")
@pytest.mark.req("PUSH-18")
@pytest.mark.parametrize("spelling", axes.members("PUSH-18", "spellings"))
def test_every_delivery_is_typed_as_json(a2a_pushing: Target, a2a_channel_views, spelling: str):
    for delivery in _delivered(a2a_channel_views):
        media_type = delivery.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type not in PUSH_JSON_TYPES:
            pytest.fail(f"delivery {delivery.webhook_id} is typed {media_type!r}, not {' or '.join(PUSH_JSON_TYPES)}")


@pytest.mark.shares_turn("files")
@pytest.mark.req("PUSH-09")
@pytest.mark.parametrize("spelling", axes.members("PUSH-09", "spellings"))
def test_every_delivery_verifies_however_its_headers_are_written(a2a_pushing: Target, a2a_channel_views, spelling):
    """Header names in any case, and a webhook-signature of several entries of which one verifies (Standard
    Webhooks), verify as the kit's own receiver reads them."""
    _check_signed(_delivered(a2a_channel_views))
    _need_secret(a2a_pushing)


def _check_token(deliveries: list, a2a_pushing: Target, token: str) -> None:
    header = a2a_pushing.push.token_header.lower()
    for delivery in deliveries:
        if delivery.headers.get(header) != token:
            pytest.fail(f"delivery {delivery.webhook_id} lacks the config's token in {a2a_pushing.push.token_header}")


def _need_secret(a2a_pushing: Target) -> None:
    """After the headers' presence and form were judged (verify.header_problems), which needs no secret: the
    signature itself is not verified without one."""
    if not a2a_pushing.push.secret:
        not_checked("no push secret given, so signatures cannot be verified", needs="--a2a-push-secret")


def _check_signed(deliveries: list) -> None:
    for delivery in deliveries:
        signing = [p for p in delivery.problems if "StreamResponse" not in p and "not JSON" not in p]
        if signing:
            pytest.fail(f"delivery {delivery.webhook_id} fails Standard Webhooks verification: {signing[0]}")


def _retried(a2a_pushing: Target, a2a_client: A2AClient, receiver: PushReceiver, **fields) -> list:
    """Every attempt of a task's first event, failed once (500) and retried. Without a retry in time there is
    no retried delivery to judge: not checked (whether it must be retried is PUSH-12's)."""
    task, endpoint, _ = _paused(a2a_client, receiver, ["500"], **fields)
    _answer(a2a_client, task)
    attempts = push_checks.retries(endpoint, 2, a2a_pushing)
    if len(attempts) < 2:
        not_checked("no failed delivery was retried, so no retry to look at (whether one must be is PUSH-12's)")
    return attempts


@pytest.mark.req("PUSH-07")
def test_a_retry_carries_the_authentication(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    secret = new_id("cred")
    attempts = _retried(a2a_pushing, a2a_client, a2a_push_receiver, scheme="Bearer", credentials=secret)
    push_checks.check_authentication(attempts, secret)


@pytest.mark.req("PUSH-08")
def test_a_retry_carries_the_token(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    token = new_id("tok")
    _check_token(_retried(a2a_pushing, a2a_client, a2a_push_receiver, token=token), a2a_pushing, token)


@pytest.mark.req("PUSH-09")
def test_a_retry_is_signed(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    _check_signed(_retried(a2a_pushing, a2a_client, a2a_push_receiver))
    _need_secret(a2a_pushing)


@pytest.mark.req("PUSH-10")
def test_a_retry_keeps_its_id_and_body(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, ["500"])
    _answer(a2a_client, task)
    attempts = push_checks.retries(endpoint, 2, a2a_pushing)
    if len(attempts) < 2:
        pytest.fail("an event answered 500 must be attempted again under the same webhook-id")
    if len({a.body for a in attempts}) != 1:
        pytest.fail("a retry must send the same body bytes")
    stamps = [int(a.headers.get("webhook-timestamp", "0")) for a in attempts]
    if stamps != sorted(stamps):
        pytest.fail(f"each attempt's webhook-timestamp is the time of that attempt: {stamps}")
    # Every event is its own message: over all the task's deliveries, one webhook-id carries one body.
    delivered = push_checks.until_acknowledged(endpoint, "TASK_STATE_COMPLETED", a2a_pushing)
    for event, sent in push_checks.by_event(delivered).items():
        if len({a.body for a in sent}) != 1:
            pytest.fail(
                f"the webhook-id {event} came with {len({a.body for a in sent})} different bodies: one id, one event"
            )


@pytest.mark.req("PUSH-12", "PUSH-13")
def test_an_event_given_up_leaves_every_others_retries(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    """One event given up (its receiver asks, by Retry-After, for a retry past the 24-hour window) ends that event's
    attempts alone: another task's event, failed and waiting for its retry meanwhile, is still retried until a 2xx."""
    if push_checks.watched_window(a2a_pushing) is None:
        not_checked(
            "the 24-hour retry window is too long to watch on the target's clock", needs=push_checks.RETRY_NEEDS
        )
    pending_s = a2a_pushing.push.scaled(push_checks.RETRY_WINDOW_S) / 4
    retry_after = push_checks.retry_after_s(a2a_pushing, pending_s)
    waiting, endpoint, _ = _paused(a2a_client, a2a_push_receiver, [f"503:{retry_after}"])
    _answer(a2a_client, waiting)
    _first_delivery(endpoint, a2a_pushing, "to wait for its retry")
    given_up, _, _ = _paused(a2a_client, a2a_push_receiver, then=f"503:{push_checks.RETRY_WINDOW_S + 3600}")
    _answer(a2a_client, given_up)
    retried = push_checks.within_the_window(
        endpoint,
        lambda ds: any(d.answer in push_checks.ACKNOWLEDGED for d in ds),
        a2a_pushing,
        "the retry of an event waiting beside one given up",
        extra_s=pending_s,
    )
    if not any(d.answer in push_checks.ACKNOWLEDGED for d in retried):
        pytest.fail(
            f"an event answered 503 with Retry-After {pending_s:.1f} s (scaled) must be retried though another task's "
            f"event was given up meanwhile: {len(retried)} attempts arrived, none acknowledged"
        )


@pytest.mark.req("PUSH-12")
@pytest.mark.parametrize("failures", [2, 4], ids=["twice", "four-times"])
def test_failed_delivery_is_retried_until_a_2xx(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, failures: int
):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, ["500"] * failures)
    _answer(a2a_client, task)
    attempts = push_checks.retries(endpoint, failures + 1, a2a_pushing)
    if len(attempts) < failures + 1:
        pytest.fail(
            f"an event answered 500 {failures} times must be retried until a 2xx: {len(attempts)} attempts arrived"
        )


@pytest.mark.req("PUSH-12")
@pytest.mark.parametrize(
    "failure",
    ["300", "307", "404", "429", "500", "502", "slow", "close"],
    ids=[
        "multiple-choices",
        "redirect",
        "not-found",
        "too-many-requests",
        "server-error",
        "bad-gateway",
        "timeout",
        "reset",
    ],
)
def test_delivery_is_retried_after_each_kind_of_failure(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, failure: str
):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, [failure])
    _answer(a2a_client, task)
    slow_s = a2a_push_receiver.slow_s if failure == "slow" else 0.0
    if len(push_checks.retries(endpoint, 2, a2a_pushing, extra_s=slow_s)) < 2:
        pytest.fail(f"a delivery that failed ({failure}) must be attempted again with the same webhook-id")


@pytest.mark.req("PUSH-12")
def test_delivery_is_retried_after_a_refused_connection(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    push_checks.named_destination(a2a_pushing, a2a_push_receiver, "closed")
    task = drivers.run(a2a_client, "ask")
    endpoint = a2a_push_receiver.endpoint()
    drivers.create_push_config(a2a_client, task["id"], a2a_push_receiver.closed_url(endpoint.path)).ok()
    _answer(a2a_client, task)
    # Let a few attempts meet the closed port, then listen: only a retry can arrive now.
    endpoint.quiet_for(min(a2a_pushing.push.scaled(400), a2a_pushing.push.wait_s / 3), after=0)
    a2a_push_receiver.open_closed()
    opened = time.monotonic()  # after the event's first attempt, refused or yet to come: the window runs past this
    delivered = push_checks.within_the_window(
        endpoint, lambda ds: len(ds) >= 1, a2a_pushing, "a retry after the refusal", window_from=opened
    )
    if not delivered:
        pytest.fail("a delivery refused at connect must be retried once the receiver listens")


# How late the kit may record an arrival: the network, and the kit's own machine (a busy runner schedules its receiver
# late). A gap counts as shorter only by more than this beyond what jitter allows (PUSH-22's decision).
ARRIVAL_ALLOWANCE_S = 0.25
JITTER_FLOOR = 0.5  # equal jitter: a wait drawn between half and all of the schedule's


@pytest.mark.req("PUSH-22")
def test_retry_gaps_never_shrink(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, ["500"] * 4)
    _answer(a2a_client, task)
    attempts = push_checks.retries(endpoint, 5, a2a_pushing)
    if len(attempts) < 5:
        not_checked(
            f"the event's fifth attempt did not come ({len(attempts)} came): PUSH-12 judges a retry that never comes",
            needs=push_checks.RETRY_NEEDS,
        )
    gaps = [b.received_at - a.received_at for a, b in itertools.pairwise(attempts)]
    if any(later < earlier * JITTER_FLOOR - ARRIVAL_ALLOWANCE_S for earlier, later in itertools.pairwise(gaps)):
        pytest.fail(
            f"the gaps between the retries of event {attempts[0].webhook_id} shrink past any jitter: "
            f"{[round(g, 4) for g in gaps]} s (each may be half the one before, arrivals {ARRIVAL_ALLOWANCE_S} s late)"
        )


# Two redeliveries of an acknowledged event: one may be a 2xx lost on the way back (at least once), a second on the
# sender's schedule is a sender that did not take the 2xx for success.
REDELIVERIES_REPORTED = 2


@pytest.mark.req("PUSH-19")
def test_an_acknowledged_event_is_not_retried_on_schedule(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver)  # every attempt is acknowledged with 200
    _answer(a2a_client, task)

    def most_repeated(deliveries) -> tuple[str, int]:
        counted = {event: len(attempts) for event, attempts in push_checks.by_event(deliveries).items()}
        return max(counted.items(), key=lambda item: item[1], default=("", 0))

    # Watched over the sender's 24-hour retry window (on the target's clock, as far as the wait goes): a sender that
    # did not take the 2xx for success delivers the event again on its schedule within it.
    window = push_checks.watch_s(a2a_pushing, push_checks.RETRY_WINDOW_S)
    delivered = endpoint.wait_for(lambda ds: most_repeated(ds)[1] > REDELIVERIES_REPORTED, window)
    event, times = most_repeated(delivered)
    if times > REDELIVERIES_REPORTED:
        pytest.fail(
            f"the event {event} was acknowledged with 2xx and then delivered {times - 1} more times on the sender's "
            "schedule"
        )


@pytest.mark.req("PUSH-12")
def test_retry_after_is_respected(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    wait = 3600 if a2a_pushing.push.time_scale < 1 else 5
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, [f"503:{wait}"])
    _answer(a2a_client, task)
    attempts = push_checks.retries(endpoint, 2, a2a_pushing, extra_s=a2a_pushing.push.scaled(wait))
    if len(attempts) < 2:
        pytest.fail("a delivery answered 503 with Retry-After must be retried")
    gap = attempts[1].received_at - attempts[0].received_at
    if gap < a2a_pushing.push.scaled(wait) * 0.95:
        pytest.fail(
            f"Retry-After: {wait} asked for {a2a_pushing.push.scaled(wait):.3f} s (scaled); the retry came after "
            f"{gap:.3f} s"
        )


def _first_delivery(endpoint: Endpoint, target: Target, what: str) -> list:
    """The deliveries once the first came; not checked when none did in the kit's wait (PUSH-05 judges one that
    never comes)."""
    first = endpoint.wait_for(lambda ds: len(ds) >= 1, target.push.wait_s)
    if not first:
        not_checked(
            f"no delivery came in the kit's {target.push.wait_s:.0f} s push wait {what}",
            needs="--a2a-push-wait-s longer than the target takes to deliver",
        )
    return first


@pytest.mark.req("PUSH-12")
def test_gone_stops_deliveries(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, ["410"])
    _answer(a2a_client, task)
    gone = _first_delivery(endpoint, a2a_pushing, "to answer 410")[0].webhook_id
    # Another event's attempt already in flight when the 410 landed may still arrive; after that, nothing, and the
    # event answered 410 never again.
    settled = endpoint.quiet_for(push_checks.watch_s(a2a_pushing, 60) + 0.2, after=10**6)
    after = endpoint.quiet_for(_quiet_s(a2a_pushing), after=len(settled))
    again = [d for d in after[1:] if d.webhook_id == gone]
    if again or len(after) > len(settled):
        what = f"event {gone} came again" if again else f"{len(after) - len(settled)} deliveries followed"
        pytest.fail(f"after 410 Gone the endpoint is disabled: {what}")


@pytest.mark.req("PUSH-05", "PUSH-12", "PUSH-15")
@pytest.mark.scenario("ask")
@pytest.mark.parametrize("write", ["410 Gone", "DeleteTaskPushNotificationConfig"])
def test_a_write_to_one_config_leaves_every_others_deliveries(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, write: str
):
    """A 410 Gone from one config's url, or its delete, stops that config alone. The task's second config (its id
    beginning with the first's) and another task's config of the same id, whose deliveries are being retried
    meanwhile, each get their task's end as before."""
    first, second = drivers.run(a2a_client, "ask"), drivers.run(a2a_client, "ask")
    hook = "hook-" + new_id()
    stopped = push_checks.endpoint_for(a2a_push_receiver, ["410"] if write == "410 Gone" else [])
    beside = push_checks.endpoint_for(a2a_push_receiver)
    retried = push_checks.endpoint_for(a2a_push_receiver, ["500", "500"])
    for task, config_id, endpoint in ((first, hook, stopped), (first, hook + "-2", beside), (second, hook, retried)):
        drivers.create_push_config(a2a_client, task["id"], endpoint.url, config_id=config_id).ok()
    _answer(a2a_client, second)  # its end is retried while the first config is stopped
    if write == "410 Gone":
        _answer(a2a_client, first)
        _first_delivery(stopped, a2a_pushing, "to answer 410")
    else:
        a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": first["id"], "id": hook}).ok()
        _answer(a2a_client, first)
    for task, endpoint, which in ((first, beside, "the task's other config"), (second, retried, "another task's")):
        push_checks.until_acknowledged(endpoint, "TASK_STATE_COMPLETED", a2a_pushing)
        listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
        if endpoint.url not in [c.get("url") for c in listed.result.get("configs") or []]:
            listed.fail(f"after {write} on config {hook} of task {first['id']}, {which} config must still be listed")


@pytest.mark.long
@pytest.mark.req("PUSH-13")
def test_retries_stop_within_24_hours(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    window = a2a_pushing.push.scaled(push_checks.RETRY_WINDOW_S)
    if window > push_checks.MAX_WINDOW_WATCH_S:
        not_checked(
            f"24 hours at time scale {a2a_pushing.push.time_scale} is {window:.0f} s of watching",
            needs=push_checks.RETRY_NEEDS,
        )
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver, **FAILING)
    _answer(a2a_client, task)
    first = _first_delivery(endpoint, a2a_pushing, "to watch its retries")
    event = first[0].webhook_id
    # Watch past the window: a sender that keeps retrying shows itself by an attempt after it.
    settled = endpoint.wait_for(lambda ds: False, window * 1.3)
    attempts = push_checks.by_event(settled).get(event, [])
    span = attempts[-1].received_at - attempts[0].received_at
    if span > window * 1.05:
        pytest.fail(f"retries went on for {span:.2f} s, past 24 h on the scaled clock ({window:.2f} s)")
    if len(attempts) < 2:
        pytest.fail("a failing delivery must be retried before it is given up")


@pytest.mark.req("PUSH-14")
def test_first_attempts_arrive_in_order(a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver):
    task, endpoint, _ = _paused(a2a_client, a2a_push_receiver)
    _answer(a2a_client, task)
    push_checks.until_pushed(endpoint, "TASK_STATE_COMPLETED", a2a_pushing)
    # An earlier update may still be on its way; give it the time a late first attempt would take.
    delivered = endpoint.wait_for(
        lambda ds: False, min(a2a_pushing.push.wait_s, max(1.0, a2a_pushing.push.scaled(600)))
    )
    firsts = push_checks.first_arrivals(delivered)
    stamps = [(d.json.get("statusUpdate") or {}).get("status", {}).get("timestamp") for d in firsts]
    stamps = [s for s in stamps if s]
    if stamps != sorted(stamps):
        pytest.fail(f"status updates were first delivered out of order: {stamps}")


@pytest.mark.req("PUSH-15")
def test_delete_is_idempotent_and_stops_deliveries(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    task, endpoint, config_id = _paused(a2a_client, a2a_push_receiver, **FAILING)
    _answer(a2a_client, task)
    if not endpoint.wait_for(lambda ds: len(ds) >= 2, a2a_pushing.push.wait_s):
        _first_delivery(endpoint, a2a_pushing, "before the delete: with nothing being delivered, nothing is stopped")
    for _ in range(2):  # the second delete must answer like the first
        a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}).ok()
    # An attempt already in flight may still land; after that, nothing.
    settled = endpoint.quiet_for(push_checks.watch_s(a2a_pushing, 60) + 0.2, after=10**6)
    later = endpoint.quiet_for(_quiet_s(a2a_pushing), after=len(settled))
    if len(later) > len(settled):
        pytest.fail(f"{len(later) - len(settled)} deliveries reached a deleted config's url")


@pytest.mark.req("PUSH-05")
@pytest.mark.scenario("plan", "complete")
def test_another_callers_slow_webhook_holds_up_none_of_ours(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_other_client: A2AClient, a2a_push_receiver: PushReceiver
):
    """Another subject's task pushes more events to a webhook that answers slowly than that webhook can take in a
    24-hour retry window: the kit's own task, ended meanwhile, is still pushed within its window (deliveries to one
    config wait on that config alone)."""
    window = push_checks.watched_window(a2a_pushing)
    if window is None:
        not_checked(
            "the 24-hour retry window is too long to watch on the target's clock", needs=push_checks.RETRY_NEEDS
        )
    slow = a2a_push_receiver.endpoint(then="slow")
    steps = math.ceil(window / a2a_pushing.settings.push_slow_s) + 2
    theirs = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": f"scenario plan {steps} 0"}]},
        "configuration": {"taskPushNotificationConfig": drivers.push_config(slow.url), "returnImmediately": True},
    }
    a2a_other_client.call("SendMessage", theirs).ok()
    slow.wait_for(lambda ds: len(ds) >= 1, a2a_pushing.push.wait_s)  # their first attempt is held by now
    ours = a2a_push_receiver.endpoint()
    mine = {
        "message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": drivers.scenario("complete")}]},
        "configuration": {"taskPushNotificationConfig": drivers.push_config(ours.url)},
    }
    task = drivers.task_of(a2a_client.call("SendMessage", mine))
    shown_at = time.monotonic()  # the blocking answer showed the task ended: its window runs from then at the latest
    if drivers.state(task) != "TASK_STATE_COMPLETED":
        not_checked(f"the complete scenario's blocking answer was {drivers.state(task)}, not its end")
    done = lambda ds: "TASK_STATE_COMPLETED" in drivers.pushed_states(ds)  # noqa: E731 - the wait's condition
    arrived = ours.wait_for(done, max(0.0, push_checks.window_ends(shown_at, window) - time.monotonic()))
    if not done(arrived):
        pytest.fail(
            f"the kit's task ended, yet no delivery showed it within its 24-hour retry window ({window:.1f} s on the "
            f"target's clock) while another subject's webhook answered slowly: {len(arrived)} deliveries arrived"
        )
