"""Faults of the answers to interactions, each in one kind of interaction only: an implementer who got the
approval right and the question or the connection wrong."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.interactions import Interactions


@declare("question-answer-with-both-resolves", "a question's answer carrying approved and value resolves", "INTER-08")
class QuestionAnswerWithBothResolves(Interactions):
    """A question reads its value and never looks for an approved beside it."""

    def check_fields(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        if interaction["kind"] == "question" and "value" in answer:
            return
        super().check_fields(answer, interaction)


@declare("connection-any-interaction-id", "a connection's answer resolves whatever interactionId it names", "INTER-11")
class ConnectionAnyInteractionId(Interactions):
    """A connection is matched by the task it waits on, not by its interaction's id."""

    def check_id(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        if interaction["kind"] != "connection":
            super().check_id(answer, interaction)


@declare("empty-answer-connects", "a connection's answer with neither approved nor value connects", "INTER-08")
class EmptyAnswerConnects(Interactions):
    """A connection takes any answer to it as 'the caller connected'."""

    def check_fields(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        if interaction["kind"] == "connection" and not {"approved", "value"} & set(answer):
            return
        super().check_fields(answer, interaction)

    def connected(self, answer: dict[str, Any]) -> bool:
        return "value" not in answer or super().connected(answer)


@declare(
    "answer-field-of-another-kind-resolves",
    "an answer's field is not matched to its interaction's kind: an approval answered with a value is approved, a "
    "question answered with approved resolves, a connection answered with approved connects",
    "INTER-08",
)
class AnswerFieldOfAnotherKindResolves(Interactions):
    """The resume code reads `approved or value.connected`, and checks only that one field came."""

    def check_fields(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        if len({"approved", "value"} & set(answer)) == 1:
            return
        super().check_fields(answer, interaction)

    def connected(self, answer: dict[str, Any]) -> bool:
        return answer.get("approved") is True or super().connected(answer)
