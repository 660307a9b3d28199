"""The reference agent answers every request it can read with a considered answer: generated params, valid or
broken, never reach an internal error (-32603 is how its dispatcher reports an exception it did not expect).

In process, against an agent with push notifications on, so the push config methods run their own code.
"""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent.app import serve_in_thread
from nylorun_a2a_kit.reference_agent.config import AgentConfig, KeyGrant
from nylorun_a2a_kit.schemas import strategies

KEY = "kit-key"
HEADERS = {
    "Authorization": f"Bearer {KEY}",
    "Nylorun-Subject": "a2a:answers",
    "Nylorun-Scopes": "sessions:own",
    "A2A-Version": "1.0",
}
INTERNAL_ERROR = -32603
METHODS = sorted(schemas.method_names())
EXAMPLES = settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    config = AgentConfig(
        db_path=str(tmp_path_factory.mktemp("answers") / "agent.sqlite3"),
        keys={KEY: KeyGrant()},
        a2a_wait_ms=500,
        push_secret="whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        push_allowed=frozenset({"127.0.0.1:9"}),  # allowed and never reached: nothing listens on port 9
    )
    running = serve_in_thread(config)
    with httpx.Client(timeout=30) as http:
        yield running.url, http
    running.stop()


def _post(agent, method: str, params) -> httpx.Response:
    url, http = agent
    return http.post(url, headers=HEADERS, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def _considered(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text[:500]
    body = response.json()
    assert (body.get("error") or {}).get("code") != INTERNAL_ERROR, body


@pytest.mark.parametrize("method", METHODS)
def test_valid_params_get_a_considered_answer(agent, method):
    @EXAMPLES
    @given(strategies.valid(f"methods/{method}.json#/$defs/params"))
    def prop(params):
        _considered(_post(agent, method, params))

    prop()


@pytest.mark.parametrize("method", METHODS)
def test_broken_params_get_a_considered_answer(agent, method):
    @EXAMPLES
    @given(strategies.mutations(f"methods/{method}.json#/$defs/params"))
    def prop(mutant):
        _considered(_post(agent, method, mutant.value))

    prop()


def test_a_push_config_that_names_no_task_is_invalid_params(agent):
    answer = _post(agent, "CreateTaskPushNotificationConfig", {"task_id": "t-1", "url": "http://127.0.0.1:9/hook"})
    error = answer.json()["error"]
    assert error["code"] == schemas.error_code("InvalidParamsError"), error
    assert "taskId" in error["message"] or "taskId" in str(error.get("data")), error


def _cursor(fields: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode().rstrip("=")


def _issued_page_token(agent) -> dict:
    for n in range(2):
        message = {"messageId": f"m-{n}-{id(agent)}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        _post(agent, "SendMessage", {"message": message, "configuration": {"returnImmediately": True}})
    token = _post(agent, "ListTasks", {"pageSize": 1}).json()["result"]["nextPageToken"]
    return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))


@pytest.mark.parametrize("position", [10**30, -1, 1.5, True, "7"])
def test_a_forged_page_token_is_invalid_params(agent, position):
    # The agent's own token for these filters, its position forged: past the fingerprint, to the position.
    forged = {**_issued_page_token(agent), "s": position}
    answer = _post(agent, "ListTasks", {"pageSize": 1, "pageToken": _cursor(forged)})
    _considered(answer)
    assert answer.json()["error"]["code"] == schemas.error_code("InvalidParamsError"), answer.text


def _feed(agent, **query) -> httpx.Response:
    url, http = agent
    return http.get(url.split("/v1/")[0] + "/v1/turns", headers=HEADERS, params=query)


@pytest.mark.parametrize("position", [10**30, -1, 1.5])
def test_a_forged_feed_cursor_is_a_bad_request(agent, position):
    answer = _feed(agent, changedAfter=_cursor({"p": position}))
    assert answer.status_code == 400, answer.text


def test_the_feed_refuses_an_unknown_key_with_the_bearer_challenge(agent):
    url, http = agent
    answer = http.get(url.split("/v1/")[0] + "/v1/turns", headers={**HEADERS, "Authorization": "Bearer nope"})
    assert answer.status_code == 401 and answer.headers.get("WWW-Authenticate") == "Bearer", answer.headers
