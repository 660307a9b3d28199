"""effects/v1: a step whose outcome was lost keeps the task WORKING and says which effect is uncertain."""

from __future__ import annotations

import itertools
import time

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, extensions
from nylorun_a2a_kit.fixtures.requirements import axes, not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers

pytestmark = pytest.mark.scenario("uncertain")
# Far longer than the checks watch, so the outcome stays unknown while they look.
UNCERTAIN_MS = 120_000


def _uncertain(a2a_client: A2AClient) -> tuple[dict, dict]:
    task = a2a_client.send(drivers.scenario("uncertain", UNCERTAIN_MS), return_immediately=True).task
    seen = drivers.wait_for(
        a2a_client,
        task["id"],
        lambda t: drivers.state(t) in drivers.TERMINAL or extensions.read(t, extensions.EFFECTS) is not None,
    )
    return task, seen


@pytest.mark.req("EFF-01")
def test_lost_outcome_keeps_the_task_working(a2a_v2_client: A2AClient, a2a_cancel_at_end):
    task, seen = _uncertain(a2a_v2_client)
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    if drivers.state(seen) != "TASK_STATE_WORKING":
        a2a_v2_client.get_task(task["id"]).fail("a step whose outcome was lost keeps the task WORKING")
    if "uncertain" not in (extensions.read(seen, extensions.EFFECTS) or {}):
        a2a_v2_client.get_task(task["id"]).fail("the status update must carry effects/v1 uncertain")
    drivers.stays(a2a_v2_client, task["id"], "TASK_STATE_WORKING", for_s=1.0)


@pytest.mark.req("EFF-02")
def test_uncertain_names_the_effect(a2a_v2_client: A2AClient, a2a_cancel_at_end):
    task, seen = _uncertain(a2a_v2_client)
    a2a_cancel_at_end(a2a_v2_client, task["id"])
    uncertain = (extensions.read(seen, extensions.EFFECTS) or {}).get("uncertain")
    if not isinstance(uncertain, str) or not uncertain:
        a2a_v2_client.get_task(task["id"]).fail("effects/v1 uncertain is the id of the effect: a non-empty string")


# An outcome lost for this long, then found: the scenario's own end is the deadline (the contract keeps the task
# WORKING with effects/v1 uncertain until its time runs out), so the kit can tell an Agent that never said so.
SHORT_UNCERTAIN_MS = 3000


@pytest.mark.req("EFF-01")
def test_a_lost_outcome_is_shown_while_it_lasts(a2a_v2_client: A2AClient, a2a_cancel_at_end):
    """Read from the SendMessage answer until the task ended, with no gap between two reads as long as the outcome
    stays lost, the kit saw the whole span: a task that ended without ever showing effects/v1 uncertain never
    reported it. A longer gap (a busy kit) leaves it not checked."""
    lost_s = SHORT_UNCERTAIN_MS / 1000
    sent = time.monotonic()
    exchange = a2a_v2_client.send(drivers.scenario("uncertain", SHORT_UNCERTAIN_MS), return_immediately=True)
    reads = [(sent, time.monotonic())]  # (sent, answered) of each read, on the kit's clock
    seen = exchange.task
    a2a_cancel_at_end(a2a_v2_client, seen["id"])
    deadline = time.monotonic() + a2a_v2_client.timeout_s + lost_s
    while extensions.read(seen, extensions.EFFECTS) is None and drivers.state(seen) not in drivers.TERMINAL:
        if time.monotonic() >= deadline:
            not_checked(f"task {seen['id']} still showed {drivers.state(seen)} when the kit's wait ended")
        time.sleep(0.1)
        sent = time.monotonic()
        exchange = a2a_v2_client.get_task(seen["id"])
        reads.append((sent, time.monotonic()))
        seen = exchange.task
    if extensions.read(seen, extensions.EFFECTS) is not None:
        if drivers.state(seen) != "TASK_STATE_WORKING":
            exchange.fail("a step whose outcome was lost keeps the task WORKING")
        return
    widest = max((answered - before for (before, _), (_, answered) in itertools.pairwise(reads)), default=0.0)
    if widest >= lost_s:
        not_checked(f"two of the kit's reads were {widest:.1f} s apart: the lost outcome may have shown between them")
    exchange.fail(
        f"the task ended {drivers.state(seen)} after {len(reads)} reads, none {widest:.1f} s or more apart, none "
        f"showing effects/v1 uncertain: the outcome lost for {lost_s:.0f} s (scenario uncertain) was never reported"
    )


# -- the lost outcome on every channel the working task travels (it is answered at once, before it settles)


@pytest.mark.shares_turn("uncertain")
@pytest.mark.req("EFF-01")
@pytest.mark.parametrize("channel", axes.members("EFF-01", "channels"))
def test_a_lost_outcome_shows_working_and_uncertain_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("uncertain")
    shown = views.on(channel)
    if not shown:
        views.fail(channel, f"{axes.CHANNELS[channel]} must show the working task with its uncertain effect")
    for where, task in shown:
        uncertain = extensions.read(task or {}, extensions.EFFECTS) or {}
        if ((task or {}).get("status") or {}).get("state") != "TASK_STATE_WORKING" or "uncertain" not in uncertain:
            views.fail(channel, f"{where}: a lost outcome keeps the task WORKING with effects/v1 uncertain")


@pytest.mark.shares_turn("uncertain")
@pytest.mark.req("EFF-02")
@pytest.mark.parametrize("channel", axes.members("EFF-02", "channels"))
def test_uncertain_names_the_effect_on_every_channel(a2a_channel_views, channel: str):
    views = a2a_channel_views("uncertain")
    for where, uncertain in views.data(channel, extensions.EFFECTS):
        named = (uncertain or {}).get("uncertain")
        if not isinstance(named, str) or not named:
            views.fail(channel, f"{where}: effects/v1 uncertain is the id of the effect, a non-empty string")
