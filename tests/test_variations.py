"""Every allowed variation of a correct Runtime is passed, alone and beside each other one, like a fault is failed.

The variations are the reference agent's equivalent mutants of the allowed axis (``reference_agent/mutants/
allowed.py``): latency on answers and deliveries (a Runtime 100 ms away, late answers, deliveries late, interleaved
across tasks, retried with jitter), turns of seconds, a delivery again after its 2xx, a lower page limit, what HTTP
stacks do to an answer; each names the rule that allows it and the requirements whose checks must pass it. A run
under one checks those requirements (what HTTP stacks do is carried by the run of a whole setup instead,
tests/test_setups.py); one run under all of them at once checks every requirement any of them
changes, so every pair (and every larger set) of variations is covered in one run: a correct Runtime may well do
all of them together (``--a2a-strict-should=yes``: a SHOULD a variation would break is no allowed variation). A
failed check here is a wrong verdict of the kit.
"""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures import mutation
from tests.suite_runs import HTTP_BESIDE_A_SETUP, REPO, this_tests_cost

pytestmark = pytest.mark.slow

VARIATIONS = {name: one for name, one in mutation.registry().items() if one.axis == "allowed"}
# Proven in the run under all of them only: a Runtime far away, slow turns and late answers slow every check and change
# nothing else the kit reads, so alone they would show nothing the run under all of them does not (a whole run in
# about three minutes with 16 workers, where one process would take most of an hour).
IN_THE_RUN_OF_ALL_ONLY = {"allowed/answer/late", "allowed/answer/distant", "allowed/turn/slow"}


# The run of all of them has 8 workers, not the 40 -n auto gives a Runtime that far away: each worker's start (an
# interpreter, the kit, the suites collected) is 1.5 CPU-s, 60 of 80 CPU-s of the run on two cores with 40. Its
# verdicts are xdist's with any number of workers; -n auto's own choice for a distant Runtime is test_pace's and
# remote_pace's. Eight keep its waits (a tenth of a second on every answer, late answers, slow turns) within five
# minutes.
WORKERS_OF_THE_RUN_OF_ALL = "8"
# Proven in the run of a whole setup and in the run under all of them (tests/suite_runs.py): what HTTP stacks do to an
# answer, each carried by one setup's run, where every check runs.
BESIDE_A_SETUP = set(HTTP_BESIDE_A_SETUP.values())


def _passed(tmp_path, names: tuple[str, ...], workers: str = "auto") -> None:
    """The engine's verdict on the variations together: every check of the rules they read passes them, with
    ``workers`` (-n: by default the pace -n auto measures for them)."""
    verdict = mutation.judge(
        mutation.deviation(*names), REPO, tmp_path, options=("-n", workers), timeout_s=1200, priority=this_tests_cost()
    )
    assert verdict.outcome == "passed" and verdict.checks > verdict.skipped, f"wrong verdicts: {verdict.summary()}"


def test_every_variation_names_the_rule_that_allows_it():
    assert len(VARIATIONS) >= 7 and set(VARIATIONS) >= IN_THE_RUN_OF_ALL_ONLY | BESIDE_A_SETUP
    for name, one in VARIATIONS.items():
        assert one.equivalent and one.read and not one.breaks, name


@pytest.mark.parametrize("name", sorted(set(VARIATIONS) - IN_THE_RUN_OF_ALL_ONLY - BESIDE_A_SETUP))
def test_a_variation_alone_is_passed(tmp_path, name: str):
    _passed(tmp_path, (name,))


def test_every_variation_at_once_is_passed(tmp_path):
    _passed(tmp_path, tuple(sorted(VARIATIONS)), WORKERS_OF_THE_RUN_OF_ALL)
