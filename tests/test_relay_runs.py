"""Whole runs through a push relay: the same verdicts as the kit's local receiver, on a correct Agent and on one
whose deliveries are broken; and a relay the run cannot use is one line, exit 4, before any check."""

from __future__ import annotations

import base64
import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate.processes import listening_process
from nylorun_a2a_kit.fixtures.push import free_ports, relay
from tests.agent_process import agent_process
from tests.suite_runs import run_suites
from tests.test_harness import _one_error_line

pytestmark = pytest.mark.slow

TOKEN = "relay-token-for-the-kits-runs"
RELAY_SCRIPT = Path(sys.executable).parent / "nylorun-a2a-receiver"
SECRET = "whsec_" + base64.b64encode(b"r" * 32).decode()
WORKERS = 2
# The checks of deliveries: what each carries, its retries and their gaps, its destinations, and a task's every
# channel, push included (the config methods' checks read no delivery).
MODULES = ("test_push_core", "test_push_delivery", "test_push_hosts", "test_progress")
# Faults the relay must show as the local receiver does, none of which makes a check wait out its whole watch: a
# signature that does not verify, a redirect followed (to the relay's own canary path), a retry without its token.
FAULTS = ("bad-signature", "redirect-followed", "retry-without-token")
# A failure the oracle found in a value, whatever check's rule was being judged.
ORACLE_PATH = "nylorun_a2a_kit.fixtures.client.exchange.OracleDisagreement"


@contextlib.contextmanager
def relay_process(*args: str) -> Iterator[str]:
    """``nylorun-a2a-receiver`` as a Runtime's network runs it, on a free port of 127.0.0.1; its URL."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(relay.TOKEN_ENV, TOKEN)
        with listening_process([str(RELAY_SCRIPT), "--listen", "127.0.0.1:0", *args], relay.ANNOUNCES) as url:
            yield url


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _run(tmp_path: Path, name: str, base: str, *receiver: str):
    return run_suites(
        tmp_path / name,
        f"--target-url={base}/v1/a2a/agents/support",
        "--a2a-key=kit-key",
        f"--a2a-push-secret={SECRET}",
        "--a2a-push-time-scale=0.0001",
        "--a2a-push-wait-s=15",
        "--a2a-push-slow-s=1.5",
        *receiver,
        "-n",
        str(WORKERS),
        *(f"suites/{module}.py" for module in MODULES),
    )


def _failed_requirements(run) -> set[str]:
    """The requirements a run failed: a check's own, or those the oracle named when it found the failure."""
    found = set()
    for test in run.with_outcome("failed"):
        message = run.messages.get(test, "")
        if message.startswith(f"{ORACLE_PATH}:"):
            found |= set(re.findall(r"\b([A-Z]+-[0-9]+) \((?:MUST|SHOULD)\)", message.split("\n", 1)[0]))
        else:
            found |= set(run.requirements.get(test, []))
    return found


@pytest.mark.parametrize("faults", [(), FAULTS], ids=["correct", "faulty"])
def test_a_relay_gets_the_verdicts_of_the_local_receiver(tmp_path, faults):
    local, closed, refused, relay_closed, relay_refused = (free_ports(WORKERS) for _ in range(5))
    with relay_process(
        "--closed-listen", f"127.0.0.1:{relay_closed}", "--refused-listen", f"127.0.0.1:{relay_refused}"
    ) as relay_url:
        allowed = [f"127.0.0.1:{p + k}" for p in (local, closed) for k in range(WORKERS)]
        allowed += [f"127.0.0.1:{_port(relay_url)}", f"127.0.0.1:{relay_closed}"]
        agent_args = ["--key", "kit-key", "--push-secret", SECRET, "--push-time-scale", "0.0001"]
        agent_args += ["--push-attempt-timeout-s", "1", *(a for p in allowed for a in ("--push-allow", p))]
        agent_args += [a for fault in faults for a in ("--mutant", fault)]
        with agent_process(tmp_path / "agent.sqlite3", *agent_args) as base:
            here = _run(
                tmp_path,
                "local",
                base,
                f"--a2a-push-listen=127.0.0.1:{local}",
                f"--a2a-push-closed-listen=127.0.0.1:{closed}",
                f"--a2a-push-refused-listen=127.0.0.1:{refused}",
            )
            relayed = _run(
                tmp_path, "relayed", base, f"--a2a-push-relay={relay_url}", f"--a2a-push-relay-token={TOKEN}"
            )
    assert here.outcomes and here.returncode in (0, 1), here.output[-3000:]
    differ = {
        test: (here.outcomes.get(test), relayed.outcomes.get(test))
        for test in set(here.outcomes) | set(relayed.outcomes)
        if here.outcomes.get(test) != relayed.outcomes.get(test)
        # A fault on every delivery: the oracle judges a delivery for the check running when it lands, and a retry of
        # an earlier check's event may land in the next one, in either run. Every failure of a check's own rule, and
        # every requirement failed, is the same.
        and not (faults and any(run.messages.get(test, "").startswith(f"{ORACLE_PATH}:") for run in (here, relayed)))
    }
    assert not differ, differ
    failed = here.with_outcome("failed")
    if faults:
        assert {"PUSH-08", "PUSH-09", "PUSH-11"} <= _failed_requirements(here), failed
        assert _failed_requirements(relayed) == _failed_requirements(here)
    else:
        assert not failed, {t: here.messages[t] for t in failed}
        delivered = [t for t in relayed.with_outcome("passed") if "test_push_delivery" in t]
        assert len(delivered) >= 20, "the relay's run judged deliveries"


def test_a_relay_the_run_cannot_use_is_one_line_exit_4(tmp_path):
    [nobody] = [free_ports(1)]
    with relay_process() as relay_url, agent_process(tmp_path / "agent.sqlite3", "--key", "kit-key") as base:
        target = f"--target-url={base}/v1/a2a/agents/support"
        cases = {
            "unreachable": (
                [f"--a2a-push-relay=http://127.0.0.1:{nobody}", f"--a2a-push-relay-token={TOKEN}"],
                f"--a2a-push-relay: cannot reach the push relay at http://127.0.0.1:{nobody}",
            ),
            "wrong token": (
                [f"--a2a-push-relay={relay_url}", "--a2a-push-relay-token=not-the-token-at-all"],
                f"--a2a-push-relay: the push relay at {relay_url} refused the token",
            ),
            "no token": ([f"--a2a-push-relay={relay_url}"], "--a2a-push-relay: give the relay's token"),
            "beside a port": (
                [f"--a2a-push-relay={relay_url}", f"--a2a-push-relay-token={TOKEN}", "--a2a-push-listen=127.0.0.1:0"],
                "the relay receives the deliveries",
            ),
        }
        for name, (args, says) in cases.items():
            verdicts = run_suites(tmp_path / name.replace(" ", "-"), target, "--a2a-key=kit-key", *args, timeout_s=120)
            error = _one_error_line(verdicts)
            assert says in error and TOKEN not in verdicts.output, (name, error)
    embedded = run_suites(tmp_path / "embedded", f"--a2a-push-relay={relay_url}", timeout_s=120)
    assert "--a2a-push-relay is for a target the kit's machine cannot be reached from" in _one_error_line(embedded)
