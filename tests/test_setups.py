"""Setups are data, like faults and allowed variations: the reference agent in each setup a Runtime comes in passes
every check the setup reaches, and each setup shows a bug the default setup lets pass (a mutant that lives in the
default and dies in it). A failed check of a correct agent here is a wrong verdict of the kit."""

from __future__ import annotations

from dataclasses import fields

import pytest

from nylorun_a2a_kit.fixtures import mutation
from nylorun_a2a_kit.fixtures.mutation.engine import SETUP_RUNS
from nylorun_a2a_kit.reference_agent import setups
from nylorun_a2a_kit.reference_agent.mutants import check_mutants, source
from tests.suite_runs import HTTP_BESIDE_A_SETUP, REPO, this_tests_cost

# Each setup, a mutant of the reference agent that only it shows, and the requirements whose checks show it: they
# let the mutant live in the default setup and fail it in this one (or the kit refuses the target, exit 4).
SHOWN_ONLY_IN = {
    "single-agent": ("source/edge.Edge.agent_id/number-1", ("CARD-01",)),  # every Agent read as the second one
    "case-twins": ("source/queue.MessageQueue.find/sql-equality-nocase-1", ("QUEUE-02",)),  # an Agent's case twin
    "prefix-twins": ("source/queue.MessageQueue.find/sql-equality-prefix-1", ("QUEUE-02",)),  # ... an id it begins
    "several-subjects": ("source/store.Store.changed_after/augmented-assignment-1", ("FEED-01",)),  # one subject's
    "push-off": ("source/push.not_supported/string-1", ("PUSH-03",)),  # the refusal without push names no A2A error
    "https-allow-list": ("source/push.Destinations.allows/number-2", ("PUSH-21",)),  # https://host/… as port 444
    # a kept database: the agent cannot start on it, so it answers 503 without a Response (ERR-14)
    "restarted": ("source/store.Store.__init__/string-16", ("SEND-01", "TASK-01", "LIST-01", "ERR-14")),
    "hidden-scenarios": ("source/card.agent_card/assignment-3", ("CARD-01",)),  # a card without skills
    "older-database": ("source/push.PushConfigs.__init__/keywords-1", ("PUSH-01",)),  # push tables not carried over
}


def test_every_setup_says_what_it_changes_and_shows_a_bug_of_its_own():
    default = setups.SETUPS["default"]
    for name, one in setups.SETUPS.items():
        changed = [f.name for f in fields(one) if f.name not in ("name", "description", "reaches")]
        changed = [field for field in changed if getattr(one, field) != getattr(default, field)]
        assert one.description and (changed or name == "default"), name
    assert set(SHOWN_ONLY_IN) == set(setups.SETUPS) - {"default"}
    check_mutants([mutant for mutant, _ in SHOWN_ONLY_IN.values()])
    classed = [mutant for mutant, _ in SHOWN_ONLY_IN.values() if mutant in source._survivors()]
    assert not classed, f"survivors.toml classes mutants a setup kills: {classed}"
    judged_in = {name for combo in SETUP_RUNS for name in combo}
    assert judged_in == set(setups.SETUPS), "the mutation engine judges a survivor in every setup"


def test_setups_combine_unless_they_change_the_same_thing():
    both = setups.combined(("case-twins", "restarted"))
    assert (both.agents, both.restart_every) == (("support", "Support"), 7)
    assert both.name == "case-twins+restarted" and both.reaches == (), "restarted reaches every area"
    assert setups.combined(("case-twins", "push-off")).reaches == (
        "isolation",
        "send-message",
        "queued-messages",
        "push",
        "change-feed",
        "list-tasks",
        "files",
        "push",
        "card",
        "errors",
    )
    with pytest.raises(ValueError, match="both change agents"):
        setups.combined(("case-twins", "prefix-twins"))
    with pytest.raises(ValueError, match="unknown setup"):
        setups.combined(("twins",))
    assert setups.combined(()) == setups.SETUPS["default"]


# The setups as the mutation engine judges survivors in them, each combination one run (every setup is in one).
CLEAN_RUNS = sorted(",".join(combo) for combo in SETUP_RUNS if combo != ("default",))


def test_what_http_stacks_do_is_carried_by_setups_where_every_check_runs():
    """Each setup run that carries an HTTP variation reaches every area, so that every check that variation reads runs
    under it (an HTTP variation no setup carries is proven alone, tests/test_variations.py)."""
    assert set(HTTP_BESIDE_A_SETUP) <= set(CLEAN_RUNS)
    assert len(set(HTTP_BESIDE_A_SETUP.values())) == len(HTTP_BESIDE_A_SETUP)
    for name in HTTP_BESIDE_A_SETUP:
        assert setups.combined(tuple(name.split(","))).reaches == () and "hidden-scenarios" not in name, name


@pytest.mark.slow
@pytest.mark.parametrize("name", CLEAN_RUNS)
def test_the_reference_agent_passes_every_check_in_each_setup(tmp_path, name: str):
    """The engine's verdict on the setups together (and the HTTP variation a whole setup carries): every check they
    reach passes. In one process, as the engine judges a survivor in them: each xdist worker would run an embedded
    agent of its own in the same setup, and its start (an interpreter, the kit, the suites collected) was a sixth of
    the run's CPU."""
    carried = (HTTP_BESIDE_A_SETUP[name],) if name in HTTP_BESIDE_A_SETUP else ()
    together = mutation.deviation(*(f"setup/{one}" for one in name.split(",")), *carried)
    verdict = mutation.judge(together, REPO, tmp_path, timeout_s=1200, priority=this_tests_cost())
    assert verdict.outcome == "passed" and verdict.checks > verdict.skipped, f"wrong verdicts: {verdict.summary()}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHOWN_ONLY_IN))
def test_each_setup_shows_a_bug_the_default_lets_pass(tmp_path, name: str):
    mutant, shown_by = SHOWN_ONLY_IN[name]
    # It lives in the default setup: its checks pass, or cannot see it there and say so (not applicable, not checked).
    default = mutation.judge(mutation.deviation(mutant, breaks=shown_by), REPO, tmp_path / "default")
    assert default.outcome == "survived" and default.checks, f"{mutant} was to live in the default setup: {default}"
    # Killed as the engine kills: a check failed, or the kit refused the target it could not check (exit 4).
    shown = mutation.judge(mutation.deviation(mutant, f"setup/{name}", breaks=shown_by), REPO, tmp_path / name)
    assert shown.killed, f"{mutant} lives in the setup {name}: {shown.summary()}"
