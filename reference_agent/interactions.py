"""interactions/v1 in the reference agent: pausing on an approval, a question or a connection, and answers.

Choices where the pages are silent: an answer is read from the reply message's metadata under the
interactions/v1 URI; a wrong interactionId, both or neither of approved/value, or the wrong one for the
interaction's kind is refused with -32602 and changes nothing; a text reply answers a question but never
an approval or a connection (the task pauses again, with the same interaction); approved: false lets the
turn go on without the approved action and end COMPLETED.
"""

from __future__ import annotations

import secrets
from typing import Any

from nylorun_a2a_kit.reference_agent.errors import invalid_params
from nylorun_a2a_kit.reference_agent.extensions import INTERACTIONS
from nylorun_a2a_kit.reference_agent.turn import Turn

STATES = {
    "approval": "TASK_STATE_AUTH_REQUIRED",
    "question": "TASK_STATE_INPUT_REQUIRED",
    "connection": "TASK_STATE_AUTH_REQUIRED",
}
FIELD = f"message.metadata[{INTERACTIONS}]"


class Interactions:
    """Pausing a turn on an interaction, and judging the reply that answers it."""

    RESUME, STAY = "resume", "stay"

    def state(self, kind: str) -> str:
        """The state a task pauses in for an interaction of ``kind``."""
        return STATES[kind]

    def shown_kind(self, kind: str) -> str:
        return kind

    def pause(self, turn: Turn, kind: str, prompt: str, detail: Any) -> None:
        """Pause the turn on a new interaction of ``kind``; its answer resumes the turn."""
        scenario = turn.scenario
        number = scenario.get("interactions", 0) + 1
        interaction_id = f"int-{secrets.token_urlsafe(12)}"
        shown = {"id": interaction_id, "kind": kind, "shown": self.shown_kind(kind), "prompt": prompt, "detail": detail}
        scenario.update(interactions=number, interaction=shown, stage="waiting")
        turn.save_scenario()
        turn.set_state(self.state(kind), prompt, data=self.open_data(scenario))

    def open_data(self, scenario: dict[str, Any]) -> dict[str, Any]:
        """The open interaction as its status message carries it."""
        interaction = scenario["interaction"]
        shown = {"interactionId": interaction["id"], "kind": interaction["shown"], "prompt": interaction["prompt"]}
        if interaction.get("detail") is not None:
            shown["detail"] = interaction["detail"]
        return {INTERACTIONS: shown}

    def on_reply(self, scenario: dict[str, Any], message: dict[str, Any], active: frozenset[str]) -> str:
        """Whether a reply resumes the paused turn (RESUME) or leaves it waiting (STAY); raises if invalid.

        A typed answer counts only from a caller that activated interactions/v1: a Core caller saw a text
        question, and its message is read as text.
        """
        interaction = scenario.get("interaction")
        if interaction is None or scenario.get("stage") != "waiting":
            return self.RESUME
        kind = interaction["kind"]
        answer = self.answer_in(message, active)
        if answer is None:
            text = " ".join(p["text"] for p in message.get("parts", []) if "text" in p).strip()
            if self.text_answers(kind):
                scenario["answer"] = {"value": text} if kind != "approval" else {"approved": True}
                return self.RESUME
            return self.STAY  # text never approves, and never connects
        self.check_answer(answer, interaction)
        if kind == "approval":
            scenario["answer"] = {"approved": answer.get("approved", True)}
            return self.RESUME
        if kind == "connection" and not self.connected(answer):
            return self.STAY
        scenario["answer"] = {"value": answer.get("value")}
        return self.RESUME

    def answer_in(self, message: dict[str, Any], active: frozenset[str]) -> Any:
        """The typed answer a reply carries (None: a text reply)."""
        return (message.get("metadata") or {}).get(INTERACTIONS) if INTERACTIONS in active else None

    def text_answers(self, kind: str) -> bool:
        """Whether a text reply answers an interaction of ``kind``: only a question's."""
        return kind == "question"

    def connected(self, answer: dict[str, Any]) -> bool:
        return answer.get("value") == {"connected": True}

    def check_answer(self, answer: Any, interaction: dict[str, Any]) -> None:
        if not isinstance(answer, dict):
            raise invalid_params([(FIELD, "an answer is an object {interactionId, approved | value}")])
        self.check_id(answer, interaction)
        self.check_fields(answer, interaction)
        if interaction["kind"] == "approval" and not isinstance(answer.get("approved", True), bool):
            raise invalid_params([(f"{FIELD}.approved", "is true or false")])

    def check_id(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        if answer.get("interactionId") != interaction["id"]:
            raise invalid_params([(f"{FIELD}.interactionId", f"the open interaction is {interaction['id']}")])

    def check_fields(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        """Exactly one of approved and value: the one the interaction's kind takes."""
        given = [name for name in ("approved", "value") if name in answer]
        if len(given) != 1:
            raise invalid_params([(FIELD, "an answer carries exactly one of approved and value")])
        wanted = "approved" if interaction["kind"] == "approval" else "value"
        if wanted not in given:
            raise invalid_params([(f"{FIELD}.{given[0]}", f"a {interaction['kind']} is answered with {wanted}")])

    def reminder(self, scenario: dict[str, Any]) -> str:
        interaction = scenario["interaction"]
        how = "approve through interactions/v1" if interaction["kind"] == "approval" else "connect, then answer"
        return f"{interaction['prompt']} (A text reply does not answer this: {how}.)"
