"""Ports chosen now and bound later are kept from every other process choosing them: a range one process chose
(an agent's allow-list names it, its runs bind it minutes later) is never chosen by another until it is released
or its process ends."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

import pytest

from nylorun_a2a_kit.fixtures.push import free_ports, ports, release_ports

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="not checked: reservations need Linux's namespace")

HOLDER = textwrap.dedent(
    """
    import sys
    from nylorun_a2a_kit.fixtures.push import free_ports
    print(free_ports(int(sys.argv[1])), flush=True)
    sys.stdin.read()  # holds its choice until told to end
    """
)


CHOOSER = textwrap.dedent(
    """
    from nylorun_a2a_kit.fixtures.push import free_ports
    print("ready", flush=True)
    print(free_ports(2), flush=True)
    """
)


class _Choices:
    """A stand-in for ``random.Random``: its choices are the ones given, in order."""

    def __init__(self, *bases: int):
        self.bases = list(bases)

    def __call__(self):
        return self

    def choice(self, candidates):
        return self.bases.pop(0)


def _held_elsewhere(count: int) -> tuple[subprocess.Popen, int]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(count)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    return holder, int(holder.stdout.readline())


def test_a_range_another_process_chose_is_passed_over_until_it_ends(monkeypatch):
    holder, taken = _held_elsewhere(4)
    try:
        assert set(range(taken, taken + 4)) <= ports._reserved_ports()
        # The first two choices overlap the other process's range (its first port, and one ending in its middle).
        monkeypatch.setattr(ports.random, "Random", _Choices(taken, taken - 2, taken + 4))
        chosen = free_ports(4)
        assert chosen == taken + 4, "a range another process holds was chosen"
        release_ports(chosen)
    finally:
        holder.communicate("", timeout=10)
    assert not set(range(taken, taken + 4)) & ports._reserved_ports(), "the kernel frees a reservation at its end"
    monkeypatch.setattr(ports.random, "Random", _Choices(taken))
    assert free_ports(4) == taken
    release_ports(taken)


def test_a_released_range_may_be_chosen_again_and_this_process_passes_over_its_own():
    first = free_ports(3)
    reserved = ports._reserved_ports()
    assert set(range(first, first + 3)) <= reserved
    second = free_ports(3)
    assert not set(range(first, first + 3)) & set(range(second, second + 3)), "a process chose its own range again"
    release_ports(first)
    assert not set(range(first, first + 3)) & ports._reserved_ports()
    assert set(range(second, second + 3)) <= ports._reserved_ports()
    release_ports(second)


def test_without_the_namespace_a_free_range_is_still_chosen(monkeypatch):
    monkeypatch.setattr(ports, "_PREFIX", "x" * 200)  # a name too long to bind, as where there is no namespace
    chosen = free_ports(2)
    assert chosen not in ports._HELD and 10_000 <= chosen < 65_536


def test_one_process_chooses_at_a_time():
    """Two processes choosing at once could each find a range free of reservations and both take it: a process
    waits while another chooses (here, this test holds the choosers' lock)."""
    lock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lock.bind(ports._PICKING)
    chooser = subprocess.Popen([sys.executable, "-c", CHOOSER], stdout=subprocess.PIPE, text=True)
    try:
        assert chooser.stdout.readline().strip() == "ready"
        with pytest.raises(subprocess.TimeoutExpired):
            chooser.wait(timeout=0.5)  # it waits for the lock (ended, it would have chosen without it)
    finally:
        lock.close()
    chosen, _ = chooser.communicate(timeout=10)
    assert chosen.strip().isdigit() and chooser.returncode == 0, chosen
