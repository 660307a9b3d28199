"""GetExtendedAgentCard as the card declares it (A2A §3.1.11, §3.3.4), at the core tier: refused where the
card does not declare it; where it does, an AgentCard or ExtendedAgentCardNotConfiguredError. The profile
serves none, whatever the card says (test_unserved.py)."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.requirements import not_applicable
from nylorun_a2a_kit.fixtures.target import Target


def declares_extended_card(target: Target) -> bool:
    return bool((target.card.get("capabilities") or {}).get("extendedAgentCard"))


@pytest.mark.req("CARD-11")
def test_without_the_capability_the_extended_card_is_refused(a2a_client: A2AClient, a2a_target: Target):
    if declares_extended_card(a2a_target):
        not_applicable("the card says extendedAgentCard true (its answer is checked instead)")
    a2a_client.call("GetExtendedAgentCard", {}).expect_error("UnsupportedOperationError")


@pytest.mark.req("CARD-11")
def test_with_the_capability_the_extended_card_is_served_or_not_configured(a2a_client: A2AClient, a2a_target: Target):
    if not declares_extended_card(a2a_target):
        not_applicable("the card says extendedAgentCard false (the refusal is checked instead)")
    exchange = a2a_client.call("GetExtendedAgentCard", {})
    if exchange.is_error:
        exchange.expect_error("ExtendedAgentCardNotConfiguredError")
    else:
        exchange.expect_shape()
        if not isinstance(exchange.result, dict) or not exchange.result.get("name"):
            exchange.fail("GetExtendedAgentCard must answer an AgentCard")
