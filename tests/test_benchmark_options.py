"""The benchmarks' own options reach the runs they start (the runs themselves are minutes long, never a test)."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

from benchmarks import failing_speed
from benchmarks.suite_speed import Run


def test_failing_speed_hands_its_options_to_every_run(monkeypatch, capsys, tmp_path):
    started: list[tuple[str, list[str]]] = []

    def run_suites(label, workdir, args, peer_pids):
        started.append((label, list(args)))
        return Run(label, ["pytest", *args], 1.0, 0), 0.0

    @contextlib.contextmanager
    def peer(workdir, name):
        yield SimpleNamespace(url="http://127.0.0.1:9/a2a", pid=0)

    monkeypatch.setattr(failing_speed, "run_suites", run_suites)
    monkeypatch.setattr(failing_speed.servers, "peer", peer)
    argv = ["--quick", "-n", "2", "--a2a-property-profile", "quick", "--peers", "python-plain", "--keep", str(tmp_path)]
    assert failing_speed.main(argv) == 0
    shared = [*failing_speed.QUICK, "-n", "2", "--a2a-property-profile=quick"]
    assert started == [
        ("reference", shared),
        ("python-plain", [*shared, "--target-url=http://127.0.0.1:9/a2a", *failing_speed.PEER_OPTIONS]),
    ]
    assert "python-plain: 1.00 × the reference run" in capsys.readouterr().out
