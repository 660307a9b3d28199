"""effects/v1: a step whose outcome was lost keeps the task WORKING and says which effect is uncertain."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, extensions
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
