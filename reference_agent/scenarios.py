"""The scenario contract, as the reference agent implements it (see docs/scenario-contract.md).

A message whose first text part reads ``scenario <name> [argument]`` runs that scenario as the turn.
Any other message runs ``echo``. A scenario is a coroutine over a :class:`Turn`, the engine's view of
one task, so the scenarios say what happens and the engine says how it is stored and announced.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from typing import Any, Protocol

CONTRACT_TAG = "scenario-contract/v1"
SCENARIOS = ("complete", "echo", "ask", "slow", "fail")
DEFAULT_SLOW_MS = 2_000


class Turn(Protocol):
    task_id: str
    scenario: dict[str, Any]

    def set_state(self, state: str, text: str | None = None) -> None: ...
    def add_artifact(self, name: str, parts: list[dict[str, Any]]) -> None: ...
    def last_user_message(self) -> dict[str, Any]: ...
    def file_url(self, name: str) -> str: ...
    def save_scenario(self) -> None: ...
    def fault(self, name: str) -> bool: ...


def parse(message: dict[str, Any], max_ms: int) -> dict[str, Any]:
    """The scenario a message asks for, with its argument, as stored on the task."""
    for part in message.get("parts", [])[:1]:  # the contract's command is the first part
        if "text" in part:
            words = part["text"].split()
            if len(words) >= 2 and words[0].lower() == "scenario" and words[1].lower() in SCENARIOS:
                name = words[1].lower()
                scenario: dict[str, Any] = {"name": name, "stage": "start"}
                if name == "slow":
                    ms = DEFAULT_SLOW_MS
                    if len(words) > 2 and words[2].isdigit():
                        ms = int(words[2])
                    scenario["ms"] = min(ms, max_ms)
                return scenario
    return {"name": "echo", "stage": "start", "plain": True}


def file_bytes(task_id: str, name: str) -> bytes:
    """The bytes of a file the ``complete`` scenario publishes; derived, so nothing needs storing."""
    digest = hashlib.sha256(f"{task_id}/{name}".encode()).hexdigest()
    return f"reference agent file {name} for task {task_id}\n{digest}\n".encode()


def _echo_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = list(message.get("parts", []))
    if parts and "text" in parts[0] and [w.lower() for w in parts[0]["text"].split()[:1]] == ["scenario"]:
        parts = parts[1:]
    return parts or [{"text": ""}]


def _broken_echo(parts: list[dict[str, Any]], fault) -> list[dict[str, Any]]:
    """The echo as a faulty agent would give it (each fault a mistake a real agent makes with parts)."""
    if fault("drops-raw-parts"):
        parts = [p for p in parts if "raw" not in p] or [{"text": ""}]
    out = []
    for part in parts:
        if "text" in part and fault("text-parts-ascii-only"):
            part = {**part, "text": part["text"].encode("ascii", "replace").decode()}
        if "url" in part and fault("url-parts-as-text"):
            part = {"text": part["url"]}
        if "data" in part and fault("data-parts-as-text"):
            part = {"text": json.dumps(part["data"])}
        out.append(part)
    return out


async def run(turn: Turn) -> None:
    """Run the turn's scenario from wherever it stands (a fresh start, a resume, or after an answer)."""
    scenario = turn.scenario
    name, stage = scenario["name"], scenario.get("stage", "start")
    turn.set_state("TASK_STATE_WORKING", "Working on it.")
    if name == "complete":
        raw = file_bytes(turn.task_id, "report.bin")
        turn.add_artifact("summary", [{"text": "The scenario completed.", "mediaType": "text/plain"}])
        turn.add_artifact(
            "report.bin",
            [
                {
                    "raw": base64.b64encode(raw).decode(),
                    "filename": "report.bin",
                    "mediaType": "application/octet-stream",
                }
            ],
        )
        if not turn.fault("complete-without-url-part"):
            turn.add_artifact(
                "report.txt",
                [{"url": turn.file_url("report.txt"), "filename": "report.txt", "mediaType": "text/plain"}],
            )
        turn.add_artifact("result", [{"data": {"scenario": "complete", "ok": True}, "mediaType": "application/json"}])
        turn.set_state("TASK_STATE_COMPLETED", "Done.")
    elif name == "echo":
        parts = _echo_parts(turn.last_user_message())
        parts = _broken_echo(parts, turn.fault)
        turn.add_artifact("echo", parts)
        turn.set_state("TASK_STATE_COMPLETED", "Echoed.")
    elif name == "ask":
        if stage == "start":
            scenario["stage"] = "asked"
            turn.save_scenario()
            turn.set_state("TASK_STATE_INPUT_REQUIRED", "Which colour should the report use?")
            return
        answer = " ".join(p["text"] for p in turn.last_user_message().get("parts", []) if "text" in p)
        turn.add_artifact("answer", [{"text": f"answer: {answer}"}])
        turn.set_state("TASK_STATE_COMPLETED", "Thanks, done.")
    elif name == "slow":
        deadline = scenario.setdefault("deadline", time.time() + scenario["ms"] / 1000)
        turn.save_scenario()
        await asyncio.sleep(max(0.0, deadline - time.time()))
        turn.add_artifact("slow", [{"text": f"worked for {scenario['ms']} ms"}])
        turn.set_state("TASK_STATE_COMPLETED", "Done, slowly.")
    elif name == "fail":
        failed = "TASK_STATE_COMPLETED" if turn.fault("fail-reported-completed") else "TASK_STATE_FAILED"
        turn.set_state(failed, "The scenario failed, as asked.")
