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
RESUME, STAY = "resume", "stay"


def pause(turn: Turn, kind: str, prompt: str, detail: Any) -> None:
    """Pause the turn on a new interaction of ``kind``; its answer resumes the turn."""
    scenario = turn.scenario
    number = scenario.get("interactions", 0) + 1
    interaction_id = f"int-{secrets.token_urlsafe(12)}"
    state = STATES[kind]
    if kind == "approval" and turn.fault("approval-as-input-required"):
        state = "TASK_STATE_INPUT_REQUIRED"
    if kind == "question" and turn.fault("question-as-auth-required"):
        state = "TASK_STATE_AUTH_REQUIRED"
    shown_kind = "approval" if kind == "connection" and turn.fault("connection-kind-approval") else kind
    scenario.update(
        interactions=number,
        interaction={"id": interaction_id, "kind": kind, "shown": shown_kind, "prompt": prompt, "detail": detail},
        stage="waiting",
    )
    turn.save_scenario()
    turn.set_state(state, prompt, data=open_data(scenario, turn.fault))


def open_data(scenario: dict[str, Any], fault) -> dict[str, Any]:
    """The open interaction as its status message carries it."""
    interaction = scenario["interaction"]
    shown = {"interactionId": interaction["id"], "kind": interaction["shown"], "prompt": interaction["prompt"]}
    if interaction.get("detail") is not None:
        shown["detail"] = interaction["detail"]
    if fault("interaction-without-id"):
        del shown["interactionId"]
    return {INTERACTIONS: shown}


def on_reply(scenario: dict[str, Any], message: dict[str, Any], active: frozenset[str], fault) -> str:
    """Whether a reply resumes the paused turn (RESUME) or leaves it waiting (STAY); raises if invalid.

    A typed answer counts only from a caller that activated interactions/v1: a Core caller saw a text
    question, and its message is read as text.
    """
    interaction = scenario.get("interaction")
    if interaction is None or scenario.get("stage") != "waiting":
        return RESUME
    kind = interaction["kind"]
    answer = (message.get("metadata") or {}).get(INTERACTIONS) if INTERACTIONS in active else None
    if fault("interaction-answer-ignored"):
        answer = None
    if answer is None:
        text = " ".join(p["text"] for p in message.get("parts", []) if "text" in p).strip()
        if kind == "question" or fault("text-approves"):
            scenario["answer"] = {"value": text} if kind != "approval" else {"approved": True}
            return RESUME
        return STAY  # text never approves, and never connects
    _check_answer(answer, interaction, fault)
    if kind == "approval":
        scenario["answer"] = {"approved": answer.get("approved", True)}
        return RESUME
    if kind == "connection":
        connected = answer.get("value") == {"connected": True} and not fault("connection-not-resolved")
        if not connected:
            return STAY
    scenario["answer"] = {"value": answer.get("value")}
    return RESUME


def _check_answer(answer: Any, interaction: dict[str, Any], fault) -> None:
    if not isinstance(answer, dict):
        raise invalid_params([(FIELD, "an answer is an object {interactionId, approved | value}")])
    if answer.get("interactionId") != interaction["id"] and not fault("wrong-interaction-id-accepted"):
        raise invalid_params([(f"{FIELD}.interactionId", f"the open interaction is {interaction['id']}")])
    given = [name for name in ("approved", "value") if name in answer]
    if len(given) != 1 and not fault("both-approved-and-value-accepted"):
        raise invalid_params([(FIELD, "an answer carries exactly one of approved and value")])
    wanted = "approved" if interaction["kind"] == "approval" else "value"
    if given and wanted not in given and not fault("both-approved-and-value-accepted"):
        raise invalid_params([(f"{FIELD}.{given[0]}", f"a {interaction['kind']} is answered with {wanted}")])
    if wanted == "approved" and not isinstance(answer.get("approved", True), bool):
        raise invalid_params([(f"{FIELD}.approved", "is true or false")])


def reminder(scenario: dict[str, Any]) -> str:
    interaction = scenario["interaction"]
    how = "approve through interactions/v1" if interaction["kind"] == "approval" else "connect, then answer"
    return f"{interaction['prompt']} (A text reply does not answer this: {how}.)"
