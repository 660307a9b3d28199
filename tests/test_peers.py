"""The kit's verdicts on independent A2A 1.0 software: peer agents built on the official SDKs.

Each peer's verdicts (check id → outcome) are kept in ``peers/expected/<peer>.json`` with the reason for
every failure and every SHOULD not met; a change in the kit that flips a verdict on independent software
fails here. Regenerate an expectation after a deliberate change with ``NYLORUN_UPDATE_PEER_VERDICTS=1``.

Two kinds of peer: ``python`` and ``js`` run the kit's scenario contract with JSON-RPC at the origin;
``python-plain`` and ``js-plain`` (the peers' ``--plain`` mode) are plain agents on the same SDKs, as a user
builds one: no contract, JSON-RPC at ``/a2a``, the card only at the origin's well-known URI, streaming on. The
kit finds their card by itself (``--target-url`` is the ``/a2a`` endpoint). ``langgraph`` is LangGraph's Agent
Server (``langgraph dev``, in memory) with a one-node echo graph: A2A 1.0 JSON-RPC from its own code, without the
A2A SDKs, installed into an environment of its own (``scripts/install_langgraph_peer.sh``; Elastic-2.0, never
vendored); its card is per assistant (``?assistant_id=``), which its start-up line names.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.agent_process import listening_process
from tests.suite_runs import REPO, SHOULD_NOT_MET, Verdicts, run_suites

pytestmark = pytest.mark.slow  # whole runs of the suites or of agents, each in a process of its own

EXPECTED = REPO / "peers" / "expected"
PEERS = {
    "python": [sys.executable, "-m", "peers.python.agent", "--port", "0"],
    "js": ["node", str(REPO / "peers" / "js" / "agent.mjs"), "--port", "0"],
    "python-plain": [sys.executable, "-m", "peers.python.agent", "--plain", "--port", "0"],
    "js-plain": ["node", str(REPO / "peers" / "js" / "agent.mjs"), "--plain", "--port", "0"],
    "langgraph": [
        os.environ.get("NYLORUN_LANGGRAPH_PYTHON") or str(REPO / ".venv-langgraph" / "bin" / "python"),
        str(REPO / "peers" / "langgraph" / "serve.py"),
        "--port",
        "0",
    ],
}
PLAIN_PEERS = ("python-plain", "js-plain")
# The peers' stock push senders make one attempt per event and never retry, so the retry clock's scale only
# sets how long the kit watches for deliveries that must not come; property checks need no shrinking here.
PEER_RUN = (
    "--a2a-key=peer-key",
    "--a2a-push-time-scale=0.0001",
    "--a2a-push-wait-s=10",
    "--a2a-property-profile=quick",
)


@contextlib.contextmanager
def peer(name: str) -> Iterator[str]:
    """Start a peer agent on a free loopback port; yield the URL it prints; stop it at the end."""
    command = PEERS[name]
    if command[0] == "node" and (
        shutil.which("node") is None or not (REPO / "node_modules" / "@a2a-js" / "sdk").is_dir()
    ):
        if os.environ.get("CI") == "true":
            pytest.fail("the JS peer needs Node.js and `npm ci`; .ci/run installs them")
        pytest.skip("not checked: Node.js or `npm ci` missing for the JS peer")
    if name == "langgraph" and not os.path.isfile(command[0]):
        if os.environ.get("CI") == "true":
            pytest.fail("the LangGraph peer needs scripts/install_langgraph_peer.sh; .ci/run installs it")
        pytest.skip("not checked: the LangGraph peer is not installed (scripts/install_langgraph_peer.sh)")
    with listening_process(command, "listening ", cwd=REPO) as url:
        yield url


def peer_params(names) -> list:
    return sorted(names)


def origin_card(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/.well-known/agent-card.json"


@pytest.mark.parametrize("name", peer_params(PEERS))
def test_peer_verdicts_are_the_expected_ones(tmp_path, name):
    expected_path = EXPECTED / f"{name}.json"
    # A plain peer's checks run in the first seed's shuffled order (the second's is test_plain_peer_verdicts_do_
    # not_depend_on_order): held to the same expected verdicts, the two runs are the two orders.
    order_file = tmp_path / "order.txt"
    shuffled = (*ORDER_RUN, f"--shuffle-seed={SHUFFLE_SEEDS[0]}", f"--shuffle-order-file={order_file}")
    with peer(name) as announced:
        url, _, card = announced.partition(" card ")  # LangGraph's card is per assistant: its line names it
        verdicts = run_suites(
            tmp_path,
            f"--target-url={url}",
            *([f"--a2a-card-url={card}"] if card else []),
            *PEER_RUN,
            *(shuffled if name in PLAIN_PEERS else ()),
            f"--a2a-summary-dir={tmp_path}",
            timeout_s=900,
        )
    assert verdicts.outcomes, verdicts.output[-3000:]
    shuffled_here = order_file.is_file() and order_file.read_text().strip()
    assert name not in PLAIN_PEERS or shuffled_here, "the plain peer's run was not shuffled"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["target"]["tier_claimed"] == "core", "a peer without the profile's extensions claims Core"
    if name in PLAIN_PEERS:
        assert urlsplit(url).path == "/a2a", url
        assert summary["target"]["card_url"] == origin_card(url), "the kit finds a plain agent's card at the origin"
    for test_id, outcome in verdicts.outcomes.items():
        ids = verdicts.requirements[test_id]
        if outcome == "skipped" and any(_tier(r) != "core" for r in ids):
            message = verdicts.messages[test_id]
            assert message.startswith("not applicable:") and "claims A2A 1.0 core" in message, (test_id, message)
    got = verdicts.published()
    explained = ("failed", SHOULD_NOT_MET)
    if os.environ.get("NYLORUN_UPDATE_PEER_VERDICTS") == "1":
        old = json.loads(expected_path.read_text()) if expected_path.is_file() else {}
        reasons = old.get("reasons", {})
        for test_id, outcome in got.items():
            if outcome in explained and test_id not in reasons:
                reasons[test_id] = "TO EXPLAIN: " + first_line(verdicts.messages[test_id])
        document = {
            "peer": name,
            "tier_claimed": "core",
            "verdicts": got,
            "requirements": {t: verdicts.requirements[t] for t in got},
            "reasons": {k: v for k, v in sorted(reasons.items()) if got.get(k) in explained},
        }
        expected_path.parent.mkdir(parents=True, exist_ok=True)
        expected_path.write_text(json.dumps(document, indent=2) + "\n")
    expected = json.loads(expected_path.read_text())
    changed = {t: (expected["verdicts"].get(t), o) for t, o in got.items() if expected["verdicts"].get(t) != o}
    gone = sorted(set(expected["verdicts"]) - set(got))
    order = f" in the order of -p tests.shuffle_plugin --shuffle-seed={SHUFFLE_SEEDS[0]}" if name in PLAIN_PEERS else ""
    assert not changed and not gone, (
        f"verdicts on the {name} peer{order} changed (expected, now): {changed}; gone: {gone}"
    )
    unexplained = [t for t, o in got.items() if o in explained and not expected["reasons"].get(t, "").strip()]
    assert not unexplained, f"failures on the {name} peer without an explanation: {unexplained}"
    assert not any(r.startswith("TO EXPLAIN") for r in expected["reasons"].values()), "explain every failure"


def first_line(message: str) -> str:
    return (message.strip().splitlines() or [""])[0][:200]


REQUIREMENT_LINE = re.compile(r"^(\w+: )?[A-Z]+-\d+ \((MUST|SHOULD|MAY)\): ")


def problem_line(message: str) -> str:
    """The first line of a failure that says what went wrong (past the requirements it restates)."""
    lines = [line for line in message.strip().splitlines() if line.strip()]
    told = (line for line in lines if not REQUIREMENT_LINE.match(line) and not line.startswith("[+"))
    return next(told, first_line(message))[:200]


def _tier(requirement_id: str) -> str:
    from nylorun_a2a_kit.fixtures.requirements import catalog as requirements

    return requirements.load()[requirement_id].tier


# A check's verdict must not depend on which checks ran before it, on a lax agent too. Each run gets a fresh peer
# and is held to the peer's expected verdicts: two seeds, since one order can miss a dependence (these two each found
# one on the JS peer before every check read only what it created). A plain peer's verdict run takes the first
# (test_peer_verdicts_are_the_expected_ones), its order run the second.
SHUFFLE_SEEDS = (15, 2)
ORDER_RUN = ("-p", "tests.shuffle_plugin", "-p", "no:randomly")


def order_differences(expected: dict[str, str], shuffled: Verdicts) -> list[str]:
    """One line per check whose verdict differs from the one expected (or that ran in only one of them)."""
    lines = []
    published = shuffled.published()
    for test_id in sorted(set(expected) | set(published)):
        a, b = expected.get(test_id), published.get(test_id)
        if a != b:
            why = problem_line(shuffled.messages.get(test_id, "")) if b != "passed" else "(passed)"
            lines.append(f"{test_id}: in order {a}, shuffled {b}: {why}")
    return lines


@pytest.mark.slow
@pytest.mark.parametrize("name", PLAIN_PEERS)
def test_plain_peer_verdicts_do_not_depend_on_order(tmp_path, name):
    expected = json.loads((EXPECTED / f"{name}.json").read_text())["verdicts"]

    def run(seed: int) -> list[str]:
        workdir = tmp_path / f"seed-{seed}"
        workdir.mkdir()
        order_file = workdir / "order.txt"
        with peer(name) as url:
            shuffled = run_suites(
                workdir,
                f"--target-url={url}",
                *PEER_RUN,
                *ORDER_RUN,
                f"--shuffle-seed={seed}",
                f"--shuffle-order-file={order_file}",
                f"--a2a-summary-dir={workdir}",
                timeout_s=900,
            )
        assert shuffled.outcomes, shuffled.output[-3000:]
        assert order_file.is_file() and order_file.read_text().strip(), "the run was not shuffled"
        return [f"seed {seed}: {line}" for line in order_differences(expected, shuffled)]

    report = [line for seed in SHUFFLE_SEEDS[1:] for line in run(seed)]
    print("\n".join(report) or "no differences")
    assert not report, (
        f"{len(report)} verdict(s) on the {name} peer depend on the order (shuffled with -p tests.shuffle_plugin "
        "--shuffle-seed=N):\n" + "\n".join(report)
    )
