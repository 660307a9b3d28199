"""The warm run server's pool (fixtures/runs/warm.py): beyond the slots, a run starts on cores found idle, and what
the looks find idle adds up from look to look until it makes up a run's share."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.runs import warm


@pytest.fixture
def pool(tmp_path: Path):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    made = warm.Pool(listener, slots=2, path=tmp_path / "socket")
    yield made
    made.selector.close()
    listener.close()


def _running(pool, count: int) -> None:
    pool.running = {-1 - k: (None, 0, 1) for k in range(count)}  # pidfd → (connection, pid, slots), never read here


def test_within_the_slots_a_run_starts_whatever_the_cores_do(pool):
    _running(pool, 1)
    assert pool.may_start(1)
    _running(pool, 2)
    assert not pool.may_start(1), "both slots are taken and no core was found idle"


def test_idle_found_look_after_look_adds_up_to_a_start(pool):
    pool.queue = ["a run waiting"]
    _running(pool, 3)
    pool.found_idle(0.3)
    assert not pool.may_start(1), "0.3 of a core idle is less than a run's share"
    pool.found_idle(0.3)
    assert pool.may_start(1), "0.6 of a core idle over two looks makes up a run's share"
    assert not pool.may_start(1), "the run started took its share"
    pool.found_idle(5.0)
    assert [pool.may_start(1) for _ in range(5)] == [True] * 4 + [False], "what is kept is at most every slot"


def test_idle_is_not_kept_while_no_run_waits(pool):
    _running(pool, 3)
    pool.found_idle(1.5)
    pool.queue = ["a run waiting"]
    pool.found_idle(0.2)
    assert not pool.may_start(1), "the cores idle while nothing waited make up no share"


def test_a_launcher_gone_after_its_worker_ended_is_let_go_quietly(pool):
    """Its worker's end closed the connection first, in the same look of the selector: nothing is left to do."""
    launcher, other = socket.socketpair()
    other.close()
    launcher.close()
    pool.found_idle(0.0)
    pool._launcher_gone(launcher, pidfd=-1, pid=0)  # no error: the server's loop would end with it
