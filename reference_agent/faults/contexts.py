"""Faults in the conversations an Agent keeps: which contextIds it takes from a client."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.errors import invalid_params
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.policies import Conversations


@declare(
    "chosen-context-refused",
    'a message naming a contextId the Agent never issued is refused with -32602 ("Invalid thread ID", as an Agent '
    "whose store makes its own conversation ids does); a message without one starts a conversation of the Agent's. "
    "A2A allows it (§3.4.1); the profile does not: its one failure is SEND-06's",
    "SEND-06",
)
class ChosenContextRefused(Conversations):
    def context_id(self, message: dict[str, Any]) -> str:
        chosen = message.get("contextId")
        if chosen and not self.store.db.execute("SELECT 1 FROM contexts WHERE context_id=?", (chosen,)).fetchone():
            raise invalid_params([("message.contextId", "Invalid thread ID: the Agent issues its own")])
        return super().context_id(message)
