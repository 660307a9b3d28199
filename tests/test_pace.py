"""-n auto in a run of the kit: the workers follow the target's measured pace (fixtures/plugin/pace.py), and xdist
hands the kit's checks out one at a time from the first worker that collected, a module's shared setup to a few
workers, the long checks first and alone (fixtures/plugin/schedule.py); the workers start a few at a time
(fixtures/plugin/startup.py)."""

from __future__ import annotations

import ast
import os
import types
from collections import OrderedDict
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.plugin import pace, startup
from nylorun_a2a_kit.fixtures.plugin.schedule import SHARED_SETUPS, SharedSetupScheduling, shared_turn

pytest_plugins = ["pytester"]
SUITES = Path(__file__).resolve().parent.parent / "suites"
GiB = 1024**3


def test_a_loopback_agent_gets_about_the_cores():
    assert pace.workers_for(0.001, 0.01, 2, 24 * GiB) in (2, 3, 4)


def test_a_runtime_far_away_with_slow_turns_gets_many_workers_up_to_the_cap():
    assert pace.workers_for(0.1, 0.0, 2, 24 * GiB) > 4
    assert pace.workers_for(0.1, 2.0, 2, 24 * GiB) == 2 * pace.MOST_PER_CORE
    assert pace.workers_for(0.1, 2.0, 4, 64 * GiB) == 4 * pace.MOST_PER_CORE


def test_free_memory_caps_the_workers_but_never_below_the_cores():
    assert pace.workers_for(0.1, 2.0, 2, 2 * GiB) == 2 * GiB // 2 // pace.MEMORY_PER_WORKER
    assert pace.workers_for(0.1, 2.0, 2, 100 * 1024**2) == 2


def _header(pytester: pytest.Pytester, *args: str) -> list[str]:
    # In a process of its own: the timing starts an agent, whose imports an in-process run would leave half undone.
    result = pytester.runpytest_subprocess(
        "--pyargs", "nylorun_a2a_kit.suites", "-p", "no:randomly", "--collect-only", "-n", "auto", *args
    )
    return [line for line in result.outlines if line.startswith("a2a workers:")]


def test_auto_sizes_the_run_from_the_embedded_agents_pace(pytester: pytest.Pytester):
    near = _header(pytester, "--a2a-req=SEND-01")
    far = _header(pytester, "--a2a-req=SEND-01", "--a2a-reference-mutant=allowed/answer/distant")
    assert len(near) == len(far) == 1, (near, far)
    workers = [int(line.split()[2]) for line in (near[0], far[0])]
    assert workers[0] < workers[1], (near, far)
    round_trip_ms = int(far[0].split("a round trip ")[1].split(" ms")[0])
    assert 100 <= round_trip_ms < 1000 and "-n N sets it" in far[0], far  # 100 ms away, on however busy a machine


def test_auto_against_an_unreachable_target_is_one_line(pytester: pytest.Pytester):
    # In a process of its own: the timing's first connection would leave this process's HTTP stack half imported.
    result = pytester.runpytest_subprocess(
        "--pyargs", "nylorun_a2a_kit.suites", "-n", "auto", "--target-url=http://127.0.0.1:9/v1/a2a/agents/support"
    )
    assert result.ret == 4, result.outlines + result.errlines
    errors = [line for line in result.errlines + result.outlines if line.startswith("ERROR:")]
    assert len(errors) == 1 and "127.0.0.1:9" in errors[0], result.errlines
    assert not any("Traceback" in line for line in result.errlines + result.outlines)


def test_a_shared_setups_checks_go_to_as_many_scopes_as_it_names():
    scheduling = SharedSetupScheduling.__new__(SharedSetupScheduling)
    module, workers = next(iter(SHARED_SETUPS.items()))
    scopes = {scheduling._split_scope(f"suites/{module}::test_x[{i}]") for i in range(200)}
    assert len(scopes) == workers and all(scope.startswith(f"suites/{module}#") for scope in scopes)
    assert scheduling._split_scope("suites/test_card.py::test_y") == "suites/test_card.py::test_y"


@pytest.mark.parametrize("module", sorted(SHARED_SETUPS))
def test_a_module_named_as_a_shared_setup_has_a_module_scoped_fixture(module: str):
    tree = ast.parse((SUITES / module).read_text(encoding="utf-8"))
    scopes = [
        keyword.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "scope" and isinstance(keyword.value, ast.Constant)
    ]
    assert "module" in scopes, module


def test_the_long_checks_are_collected_first(pytester: pytest.Pytester):
    result = pytester.runpytest_inprocess(
        "--pyargs", "nylorun_a2a_kit.suites", "-p", "no:randomly", "--collect-only", "-q"
    )
    collected = [line for line in result.outlines if "::" in line]
    long_ones = [name for name in collected if "test_paging_holds_under_any_sequence_of_changes" in name]
    assert long_ones and collected.index(long_ones[0]) < 10, collected[:10]


def test_the_checks_of_one_turn_on_every_channel_go_to_one_scope():
    assert shared_turn("suites/test_extensions.py::test_the_profile_data_is_the_same_on_every_channel[plan-push]") == (
        "turn:plan:v2"
    )
    assert shared_turn("suites/test_tiers.py::test_core_caller_gets_plain_a2a_on_every_channel[files-get]") == (
        "turn:files:core"
    )
    assert shared_turn("suites/test_progress.py::test_the_plan_rides_every_channel_within_20_steps[push]") == (
        "turn:plan:v2"
    )
    assert shared_turn("suites/test_card.py::test_card_is_served") is None


def test_every_check_that_reads_channel_views_says_which_turn_it_shares():
    unmarked = []
    for module in sorted(SUITES.glob("test_*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            reads = any(arg.arg == "a2a_channel_views" for arg in node.args.args)
            marked = any(
                isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "shares_turn"
                for d in node.decorator_list
            )
            if reads and not marked:
                unmarked.append(f"{module.name}::{node.name}")
    assert not unmarked, f"mark them @pytest.mark.shares_turn(kind[, tier]): {unmarked}"


class _Worker:
    """An xdist WorkerController as the scheduler sees it: what it was sent, and whether it was told to stop."""

    def __init__(self, name: str):
        self.gateway = types.SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


LONG = "suites/test_list_paging.py::test_paging_holds_under_any_sequence_of_changes[part-1-of-3]"
OTHER_LONG = "suites/test_list_paging.py::test_walk_while_tasks_change"
SHARED = [f"suites/test_list_filters.py::test_x[{i}]" for i in range(12)]
SHORT = [f"suites/test_card.py::test_short[{i}]" for i in range(6)]


def _scheduler(collection: list[str], *workers: _Worker) -> SharedSetupScheduling:
    scheduling = SharedSetupScheduling.__new__(SharedSetupScheduling)
    scheduling.numnodes, scheduling.collection = len(workers), None
    scheduling.workqueue, scheduling.assigned_work, scheduling.registered_collections = OrderedDict(), {}, {}
    scheduling.log = lambda *args: None
    scheduling.config = types.SimpleNamespace(
        option=types.SimpleNamespace(loadscopereorder=True, verbose=0),
        pluginmanager=types.SimpleNamespace(get_plugin=lambda name: None),
    )
    for worker in workers:
        scheduling.add_node(worker)
    return scheduling


def _collected(scheduling: SharedSetupScheduling, worker: _Worker, collection: list[str]) -> None:
    """What xdist's controller does as a worker reports its collection."""
    scheduling.add_node_collection(worker, collection)
    if scheduling.collection_is_completed:
        scheduling.schedule()


def test_checks_start_on_the_first_worker_that_collected_and_a_later_one_joins():
    collection = [*SHORT, *SHARED]
    first, later = _Worker("gw0"), _Worker("gw1")
    scheduling = _scheduler(collection, first, later)
    _collected(scheduling, first, collection)
    assert first.sent and not later.sent
    _collected(scheduling, later, collection)
    assert later.sent and not set(first.sent) & set(later.sent)


def test_a_long_check_runs_first_with_one_short_check_behind_it():
    """An xdist worker runs a check once it knows the next: behind a long one goes a single short check, never a
    scope of many nor another long check."""
    collection = [LONG, OTHER_LONG, *SHARED, *SHORT]
    first, second = _Worker("gw0"), _Worker("gw1")
    scheduling = _scheduler(collection, first, second)
    _collected(scheduling, first, collection)
    _collected(scheduling, second, collection)
    for worker, long_check in ((first, LONG), (second, OTHER_LONG)):
        given = [collection[i] for i in worker.sent]
        assert len(given) == 2 and given[0] == long_check and given[1] in SHORT, given


def test_a_later_worker_that_collected_otherwise_gets_no_check():
    collection = [*SHORT, *SHARED]
    first, odd = _Worker("gw0"), _Worker("gw1")
    scheduling = _scheduler(collection, first, odd)
    _collected(scheduling, first, collection)
    _collected(scheduling, odd, [*collection, "suites/test_card.py::test_extra"])
    assert not odd.sent and odd not in scheduling.registered_collections


def test_workers_of_a_kit_run_start_in_turn(tmp_path, monkeypatch):
    """A worker takes its slot's lock before it imports the kit, and gives it back once it has collected; the
    next worker of the slot waits until then."""
    fcntl = pytest.importorskip("fcntl")
    startup.announce(str(tmp_path), 2)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    try:
        startup.take_turn()
        slot = tmp_path / "slot-1"
        with slot.open("a") as other:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            startup.end_turn()
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free now
        assert startup.ENV not in os.environ  # the worker's own children start at once
    finally:
        startup.end_turn()
        startup.withdraw()


def test_a_run_of_the_suites_from_the_repository_keeps_the_kits_own_schedule():
    """pytest loads tests/conftest.py in a run of the suites from the repository too: its schedule (the kit's own
    tests', by their recorded costs) is for a session of the kit's tests only, never for a run of the checks."""
    from tests import conftest

    repository = Path(__file__).resolve().parent.parent
    suites_run = types.SimpleNamespace(
        args=["nylorun_a2a_kit.suites"], invocation_params=types.SimpleNamespace(dir=repository)
    )
    assert conftest.pytest_xdist_make_scheduler(suites_run, log=None) is None


def test_a_nested_run_does_not_inherit_githubs_step_summary():
    from nylorun_a2a_kit.fixtures.gate import command

    inherited = command.environment(base={"GITHUB_STEP_SUMMARY": "/tmp/step.md", "HOME": "/root"})
    assert "GITHUB_STEP_SUMMARY" not in inherited and inherited["HOME"] == "/root"
