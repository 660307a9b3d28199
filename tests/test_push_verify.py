"""The kit's push verifier rejects every way a delivery can be forged, stale or malformed."""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime

import pytest
from standardwebhooks.webhooks import Webhook

from nylorun_a2a_kit.fixtures.push import verify as push_verify

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
BODY = json.dumps(
    {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}},
    separators=(",", ":"),
).encode()


def _signed(body: bytes = BODY, *, secret: str = SECRET, at: float | None = None, webhook_id: str = "msg_1"):
    moment = datetime.fromtimestamp(at if at is not None else time.time(), tz=UTC)
    signature = Webhook(secret).sign(webhook_id, moment, body.decode())
    return {"webhook-id": webhook_id, "webhook-timestamp": str(int(moment.timestamp())), "webhook-signature": signature}


def _problems(body: bytes, headers: dict, *, token=None, authorization=None, secret=SECRET) -> list[str]:
    return push_verify.problems(
        body, headers, secret=secret, token_header="X-A2A-Notification-Token", token=token, authorization=authorization
    )


def test_a_good_delivery_passes():
    headers = {**_signed(), "x-a2a-notification-token": "tok", "authorization": "Bearer abc"}
    assert _problems(BODY, headers, token="tok", authorization="Bearer abc") == []


CHANGED = BODY.replace(b"COMPLETED", b"COMPLETEX")
RESERIALISED = json.dumps(json.loads(BODY), indent=2).encode()


@pytest.mark.parametrize(
    ("body", "headers", "why"),
    [
        (CHANGED, _signed(), "a changed byte"),
        (RESERIALISED, _signed(), "the same JSON serialised again"),
        (BODY, _signed(secret="whsec_" + base64.b64encode(b"x" * 32).decode()), "another secret"),
        (BODY, _signed(at=time.time() - 3600), "a timestamp an hour old"),
        (BODY, _signed(at=time.time() + 3600), "a timestamp an hour ahead"),
        (BODY, {**_signed(), "webhook-timestamp": f"{int(time.time())}.5"}, "a fractional timestamp"),
        (BODY, {**_signed(), "webhook-signature": "v1;abc"}, "a malformed signature header"),
        (BODY, {**_signed(), "webhook-signature": "v1,not base64!"}, "a signature that is not base64"),
        (BODY, {k: v for k, v in _signed().items() if k != "webhook-id"}, "a missing webhook-id"),
        (BODY, {k: v for k, v in _signed().items() if k != "webhook-signature"}, "a missing signature"),
        (BODY, _signed(webhook_id="msg.1"), "a webhook-id with a dot"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_forged_stale_or_malformed_deliveries_are_rejected(body: bytes, headers: dict, why: str):
    assert push_verify.signature_problems(body, headers, SECRET), f"{why} must be rejected"


def test_a_wrong_or_missing_token_is_rejected():
    assert _problems(BODY, {**_signed(), "x-a2a-notification-token": "other"}, token="tok")
    assert _problems(BODY, _signed(), token="tok")


def test_a_wrong_authorization_is_rejected():
    assert _problems(BODY, {**_signed(), "authorization": "Bearer nope"}, authorization="Bearer abc")


def test_a_body_that_is_not_a_stream_response_is_rejected():
    body = json.dumps({"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}).encode()
    assert any("StreamResponse" in p for p in _problems(body, _signed(body)))


def test_without_the_secret_the_headers_are_still_judged_in_presence_and_form():
    """PUSH-09's decision: with no secret the signature is not verified, its headers are judged as far as they can."""
    assert _problems(BODY, _signed(secret="whsec_" + base64.b64encode(b"x" * 32).decode()), secret=None) == []
    missing = {k: v for k, v in _signed().items() if k != "webhook-id"}
    assert any("missing header webhook-id" in p for p in _problems(BODY, missing, secret=None))
    stale = _signed(at=time.time() - 3600)
    assert any("from the receiver's clock" in p for p in _problems(BODY, stale, secret=None))
    assert _problems(BODY, {**_signed(), "webhook-signature": "v1;abc"}, secret=None)
