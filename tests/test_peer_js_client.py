"""The official A2A JS SDK client (tests/peer-js-client.mjs) against the reference agent, as its users run it.

The script drives complete, ask + answer, GetTask, ListTasks, CancelTask and CreateTaskPushNotificationConfig
through ``@a2a-js/sdk``'s ClientFactory; it exits non-zero with the failed step. Without Node.js or
``npm ci`` the check is skipped, except on CI (CI=true), where it fails.
"""

from __future__ import annotations

import base64
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.push import free_port
from tests.agent_process import agent_process

pytestmark = pytest.mark.slow  # whole runs of the suites or of agents, each in a process of its own

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tests" / "peer-js-client.mjs"
SDK = REPO / "node_modules" / "@a2a-js" / "sdk"
KEY = "kit-key"
SUBJECT = "a2a:peer-js-client"
RUN_TIMEOUT_S = 120


def _need_node() -> str:
    node = shutil.which("node")
    if node is None or not SDK.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("Node.js or npm ci missing: the JS SDK client check needs both on CI", pytrace=False)
        pytest.skip("not checked: Node.js or npm ci missing")
    return node


def test_js_sdk_client_drives_the_reference_agent(tmp_path):
    node = _need_node()
    push_port = free_port()  # the script's webhook receiver binds it; the agent may deliver only there
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    args = ("--key", KEY, "--wait-ms", "20000", "--push-secret", secret, "--push-allow", f"127.0.0.1:{push_port}")
    with agent_process(tmp_path / "agent.sqlite3", *args) as base:
        run = subprocess.run(
            [node, str(SCRIPT), base, KEY, SUBJECT, "--push-url", f"http://127.0.0.1:{push_port}/hook"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
    output = run.stdout + run.stderr
    assert run.returncode == 0, f"the JS SDK client failed against the reference agent:\n{output}"
    assert "all 7 steps passed" in run.stdout, output
