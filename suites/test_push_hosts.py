"""Push destinations: only hosts the Runtime allows, never another spelling of an address, never a redirect."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures import drivers
from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.push_receiver import PushReceiver
from nylorun_a2a_kit.fixtures.target import Target

pytestmark = [pytest.mark.req("PUSH-11"), pytest.mark.scenario("ask")]


@pytest.fixture
def pushing(target: Target) -> Target:
    if not (target.card.get("capabilities") or {}).get("pushNotifications"):
        pytest.skip("not applicable: the card says pushNotifications false (the Runtime has no push secret)")
    if not target.embedded:
        pytest.skip("not checked: which hosts a remote Runtime allows is its configuration, not the kit's")
    return target


def _destinations(receiver: PushReceiver, path: str) -> dict[str, str]:
    """Destinations the embedded agent must refuse: all loopback, so a faulty agent reaches only the kit."""
    port = receiver.port
    found = {
        "other-port": f"http://127.0.0.1:{receiver.canary_port}{path}",
        "localhost": f"http://localhost:{port}{path}",
        "decimal-address": f"http://2130706433:{port}{path}",
        "hex-address": f"http://0x7f000001:{port}{path}",
        "userinfo": f"http://127.0.0.1:{port}@127.0.0.2:{port}{path}",
    }
    if receiver.other_loopback:
        found["other-loopback-address"] = f"http://127.0.0.2:{port}{path}"
    if receiver.ipv6_loopback:
        found["ipv6-loopback"] = f"http://[::1]:{port}{path}"
    return found


DESTINATIONS = ["other-port", "localhost", "decimal-address", "hex-address", "userinfo", "other-loopback-address",
                "ipv6-loopback"]  # fmt: skip


@pytest.mark.parametrize("kind", DESTINATIONS)
def test_destination_off_the_allowlist_gets_nothing(
    pushing: Target, client: A2AClient, push_receiver: PushReceiver, kind: str
):
    path = push_receiver.canary_path()
    url = _destinations(push_receiver, path).get(kind)
    if url is None:
        pytest.skip(f"not checked: this machine has no {kind} to listen on")
    task = drivers.run(client, "ask")
    control = push_receiver.endpoint()
    drivers.create_push_config(client, task["id"], control.url).ok()
    exchange = drivers.create_push_config(client, task["id"], url)
    # Refusing the config is the clear answer; accepting it is allowed only if nothing is ever sent there.
    client.send("blue", task_id=task["id"], context_id=task["contextId"])
    control.wait_for(lambda ds: "TASK_STATE_COMPLETED" in drivers.pushed_states(ds), pushing.push.wait_s)
    if not exchange.is_error:  # give the accepted config's first attempts and a retry time to land, if they would
        control.quiet_for(pushing.push.scaled(400) + 0.3, after=10**6)
    if push_receiver.hits(path):
        exchange.fail(f"a delivery reached {url}, a destination the Runtime does not allow")


def test_redirect_from_an_allowed_host_is_not_followed(pushing: Target, client: A2AClient, push_receiver: PushReceiver):
    path = push_receiver.canary_path()
    target_url = f"http://127.0.0.1:{push_receiver.canary_port}{path}"
    task = drivers.run(client, "ask")
    endpoint = push_receiver.endpoint([f"redirect:{target_url}"] * 50)
    drivers.create_push_config(client, task["id"], endpoint.url).ok()
    client.send("blue", task_id=task["id"], context_id=task["contextId"])
    endpoint.wait_for(lambda ds: len(ds) >= 3, pushing.push.wait_s)
    if push_receiver.hits(path):
        pytest.fail(f"the sender followed a redirect to {target_url}")
