"""The kit's verdicts on independent A2A 1.0 software: peer agents built on the official SDKs.

Each peer's verdicts (check id → outcome) are kept in ``peers/expected/<peer>.json`` with the reason for
every non-pass; a change in the kit that flips a verdict on independent software fails here. Regenerate
an expectation after a deliberate change with ``NYLORUN_UPDATE_PEER_VERDICTS=1``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Iterator

import pytest

from tests.agent_process import listening_process
from tests.suite_runs import REPO, run_suites

EXPECTED = REPO / "peers" / "expected"
PEERS = {
    "python": [sys.executable, "-m", "peers.python.agent", "--port", "0"],
    "js": ["node", str(REPO / "peers" / "js" / "agent.mjs"), "--port", "0"],
}
# The peers' stock push senders make one attempt per event and never retry, so the retry clock's scale only
# sets how long the kit watches for deliveries that must not come; property checks need no shrinking here.
PEER_RUN = ("--key=peer-key", "--push-time-scale=0.0001", "--push-wait-s=10", "--property-profile=quick")


@contextlib.contextmanager
def peer(name: str) -> Iterator[str]:
    """Start a peer agent on a free loopback port; yield the URL it prints; stop it at the end."""
    command = PEERS[name]
    if name == "js" and (shutil.which("node") is None or not (REPO / "node_modules" / "@a2a-js" / "sdk").is_dir()):
        if os.environ.get("CI") == "true":
            pytest.fail("the JS peer needs Node.js and `npm ci`; .ci/run installs them")
        pytest.skip("not checked: Node.js or `npm ci` missing for the JS peer")
    with listening_process(command, "listening ", cwd=REPO) as url:
        yield url


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_verdicts_are_the_expected_ones(tmp_path, name):
    expected_path = EXPECTED / f"{name}.json"
    with peer(name) as url:
        verdicts = run_suites(tmp_path, f"--target-url={url}", *PEER_RUN, f"--summary-dir={tmp_path}", timeout_s=900)
    assert verdicts.outcomes, verdicts.output[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["target"]["tier_claimed"] == "core", "a peer without the profile's extensions claims Core"
    for test_id, outcome in verdicts.outcomes.items():
        ids = verdicts.requirements[test_id]
        if outcome == "skipped" and any(_tier(r) != "core" for r in ids):
            message = verdicts.messages[test_id]
            assert message.startswith("not applicable:") and "claims A2A 1.0 core" in message, (test_id, message)
    got = dict(sorted(verdicts.outcomes.items()))
    if os.environ.get("NYLORUN_UPDATE_PEER_VERDICTS") == "1":
        old = json.loads(expected_path.read_text()) if expected_path.is_file() else {}
        reasons = old.get("reasons", {})
        for test_id, outcome in got.items():
            if outcome == "failed" and test_id not in reasons:
                reasons[test_id] = "TO EXPLAIN: " + verdicts.messages[test_id][:200]
        document = {"peer": name, "tier_claimed": "core", "verdicts": got,
                    "requirements": {t: verdicts.requirements[t] for t in got},
                    "reasons": {k: v for k, v in sorted(reasons.items()) if got.get(k) == "failed"}}  # fmt: skip
        expected_path.parent.mkdir(parents=True, exist_ok=True)
        expected_path.write_text(json.dumps(document, indent=2) + "\n")
    expected = json.loads(expected_path.read_text())
    changed = {t: (expected["verdicts"].get(t), o) for t, o in got.items() if expected["verdicts"].get(t) != o}
    gone = sorted(set(expected["verdicts"]) - set(got))
    assert not changed and not gone, f"verdicts on the {name} peer changed (expected, now): {changed}; gone: {gone}"
    unexplained = [t for t, o in got.items() if o == "failed" and not expected["reasons"].get(t, "").strip()]
    assert not unexplained, f"failures on the {name} peer without an explanation: {unexplained}"
    assert not any(r.startswith("TO EXPLAIN") for r in expected["reasons"].values()), "explain every failure"


def _tier(requirement_id: str) -> str:
    from nylorun_a2a_kit.fixtures import requirements

    return requirements.load()[requirement_id].tier
