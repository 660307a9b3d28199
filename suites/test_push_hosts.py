"""Push destinations: only hosts the Runtime allows, never another spelling of an address, never a redirect.

Against any target: a redirect from the kit's own receiver must not be followed, and a destination the
user names as not allowed (--a2a-push-refused-listen) must be refused or never reached. The spellings of
loopback addresses are checked against the embedded agent, whose allow-list the kit sets.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange
from nylorun_a2a_kit.fixtures.push import PushReceiver
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers, push_checks
from nylorun_a2a_kit.fixtures.target import Target

pytestmark = [pytest.mark.req("PUSH-11"), pytest.mark.scenario("ask")]


def _spellings(receiver: PushReceiver, path: str) -> dict[str, str]:
    """Destinations the embedded agent must refuse: all loopback, so a faulty agent reaches only the kit."""
    port = receiver.port
    found = {
        "other-port": f"http://127.0.0.1:{receiver.canary_port}{path}",
        "localhost": f"http://localhost:{port}{path}",
        "decimal-address": f"http://2130706433:{port}{path}",
        "hex-address": f"http://0x7f000001:{port}{path}",
        "userinfo": f"http://127.0.0.1:{port}@127.0.0.2:{port}{path}",
        # The canary's port spelt as no URL parser of the standard library reads it, yet an HTTP client may.
        "port-with-a-sign": f"http://127.0.0.1:+{receiver.canary_port}{path}",
        "port-in-wide-digits": f"http://127.0.0.1:{_wide(receiver.canary_port)}{path}",
    }
    if receiver.other_loopback:
        found["other-loopback-address"] = f"http://127.0.0.2:{port}{path}"
    if receiver.ipv6_loopback:
        found["ipv6-loopback"] = f"http://[::1]:{port}{path}"
    return found


def _wide(number: int) -> str:
    """``number`` in full-width digits (U+FF10 to U+FF19)."""
    return "".join(chr(0xFF10 + int(digit)) for digit in str(number))


SPELLINGS = [
    "other-port",
    "port-with-a-sign",
    "port-in-wide-digits",
    "localhost",
    "decimal-address",
    "hex-address",
    "userinfo",
    "other-loopback-address",
    "ipv6-loopback",
]


def _gets_nothing(a2a_pushing: Target, a2a_client: A2AClient, receiver: PushReceiver, url: str, path: str) -> None:
    """A config naming ``url`` beside an allowed one: refused, or accepted and never delivered to."""
    task = drivers.run(a2a_client, "ask")
    control = receiver.endpoint()
    drivers.create_push_config(a2a_client, task["id"], control.url).ok()
    exchange: Exchange = drivers.create_push_config(a2a_client, task["id"], url)
    # Refusing the config is the clear answer; accepting it is allowed only if nothing is ever sent there.
    a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"])
    control.wait_for(lambda ds: "TASK_STATE_COMPLETED" in drivers.pushed_states(ds), a2a_pushing.push.wait_s)
    if not exchange.is_error:  # give the accepted config's first attempts and a retry time to land, if they would
        control.quiet_for(push_checks.watch_s(a2a_pushing, 400) + 0.3, after=10**6)
    if receiver.hits(path):
        exchange.fail(f"a delivery reached {url}, a destination the Runtime does not allow")
    if not exchange.is_error and not control.deliveries:  # nothing was delivered anywhere: nothing was judged
        not_checked(
            f"the allowed config beside it got no delivery either in the kit's {a2a_pushing.push.wait_s:.0f} s wait",
            needs="--a2a-push-wait-s longer than the target takes to deliver",
        )


@pytest.mark.parametrize("kind", SPELLINGS)
def test_destination_off_the_allowlist_gets_nothing(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver, kind: str
):
    if not a2a_pushing.embedded:
        # Only the embedded agent's allow-list is the kit's own; for a Runtime, the destination the user names as
        # not allowed (--a2a-push-refused-listen) stands for every one of these (its own check, below).
        not_checked("whether a Runtime's allow-list names these loopback spellings is its own configuration")
    path = a2a_push_receiver.canary_path()
    url = _spellings(a2a_push_receiver, path).get(kind)
    if url is None:
        not_checked(f"this machine has no {kind} to listen on")
    _gets_nothing(a2a_pushing, a2a_client, a2a_push_receiver, url, path)


def test_a_destination_the_user_names_as_not_allowed_gets_nothing(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    push_checks.named_destination(a2a_pushing, a2a_push_receiver, "refused")
    path = a2a_push_receiver.canary_path()
    _gets_nothing(a2a_pushing, a2a_client, a2a_push_receiver, a2a_push_receiver.refused_url(path), path)


def test_redirect_from_an_allowed_host_is_not_followed(
    a2a_pushing: Target, a2a_client: A2AClient, a2a_push_receiver: PushReceiver
):
    # The redirect points at the receiver's own public address, which the target reaches: a sender that
    # follows redirects lands there, on a path no check serves.
    path = a2a_push_receiver.canary_path()
    target_url = f"{a2a_push_receiver.public_base}{path}"
    task = drivers.run(a2a_client, "ask")
    endpoint = a2a_push_receiver.endpoint([f"redirect:{target_url}"] * 50)
    drivers.create_push_config(a2a_client, task["id"], endpoint.url).ok()
    a2a_client.send("blue", task_id=task["id"], context_id=task["contextId"])
    redirected = endpoint.wait_for(lambda ds: len(ds) >= 3, a2a_pushing.push.wait_s)
    if a2a_push_receiver.hits(path):
        pytest.fail(f"the sender followed a redirect to {target_url}")
    if not redirected:  # no attempt was answered with a redirect: nothing was judged
        not_checked(
            f"no delivery came in the kit's {a2a_pushing.push.wait_s:.0f} s wait to answer with a redirect",
            needs="--a2a-push-wait-s longer than the target takes to deliver",
        )


def _default_port_toggled(url: str) -> str | None:
    """``url`` with its scheme's default port written if it leaves it out, or left out if it writes it (None: the
    url names another port)."""
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}[parts.scheme]
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    if parts.port not in (None, default):
        return None
    return urlunsplit(parts._replace(netloc=f"{host}:{default}" if parts.port is None else f"{host}"))


SPELT = {
    "as named": lambda url: url,
    "default port toggled": _default_port_toggled,
}


@pytest.mark.parametrize(
    "spelt",
    [
        pytest.param("as named", marks=pytest.mark.req("PUSH-20")),
        pytest.param("default port toggled", marks=pytest.mark.req("PUSH-21")),
    ],
)
def test_an_allowed_destination_is_accepted(a2a_pushing: Target, a2a_client: A2AClient, a2a_cancel_at_end, spelt: str):
    """Each destination the user names as allowed takes a config; nothing is ever sent there: the config is made on a
    task paused on a question, read back and deleted before the task moves."""
    named = a2a_pushing.settings.push_allowed_url
    if not named:
        not_checked("no allowed destination given", needs="--a2a-push-allowed-url: URLs the target's allow-list names")
    urls = [url for url in map(SPELT[spelt], named) if url]
    if not urls:
        not_checked("every allowed destination given names a port of its own: no default port to write or leave out")
    task = drivers.settle(a2a_client, drivers.run(a2a_client, "ask"))
    for url in urls:
        made = drivers.create_push_config(a2a_client, task["id"], url)
        if made.is_error:
            a2a_cancel_at_end(a2a_client, task["id"])  # no config of the user's destination is on it
            made.fail(f"{url} names a destination the allow-list names ({spelt}): a config naming it is accepted")
        config_id = made.result.get("id")
        try:
            listed = a2a_client.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
        finally:  # deleted before anything else can happen to the task; it is canceled only once none is left
            a2a_client.call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": config_id}).ok()
        if config_id not in [c.get("id") for c in listed.result.get("configs") or []]:
            a2a_cancel_at_end(a2a_client, task["id"])
            listed.fail(f"the config naming {url} was accepted: the task lists it")
    a2a_cancel_at_end(a2a_client, task["id"])
