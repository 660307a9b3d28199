"""The scenario contract, as the reference agent implements it (see docs/scenario-contract.md).

A message whose first part is a text ``scenario <name> [arguments]`` runs that scenario as the turn; any
other message runs ``echo``. A scenario is a coroutine over a :class:`reference_agent.turn.Turn`, so the
scenarios say what happens and the turn says how it is recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any

import aiohttp

from nylorun_a2a_kit.reference_agent.extensions import EFFECTS, PROGRESS
from nylorun_a2a_kit.reference_agent.interactions import Interactions
from nylorun_a2a_kit.reference_agent.turn import Turn

CONTRACT_TAG = "scenario-contract/v1"
SCENARIOS = (
    "complete",
    "echo",
    "ask",
    "slow",
    "fail",
    "approve",
    "connect",
    "uncertain",
    "plan",
    "file",
    "inspect",
    "tool",
)
DEFAULT_SLOW_MS = 2_000
DEFAULT_PLAN_STEPS = 3
PLAN_LIMIT = 20  # progress/v1 shows at most 20 steps
INSPECT_LIMIT = 8 * 1024 * 1024
# The files the complete scenario publishes: name, inline (a raw part), link (a url part), media type.
REPORTS = (
    ("report.bin", True, False, "application/octet-stream"),
    ("report.txt", False, True, "text/plain"),
)


def parse(message: dict[str, Any], max_ms: int) -> dict[str, Any]:
    """The scenario a message asks for, with its arguments, as stored on the task."""
    first = (message.get("parts") or [{}])[0]
    words = first.get("text", "").split() if isinstance(first, dict) else []
    if len(words) < 2 or words[0].lower() != "scenario" or words[1].lower() not in SCENARIOS:
        return {"name": "echo", "stage": "start", "plain": True}
    name, args = words[1].lower(), words[2:]
    scenario: dict[str, Any] = {"name": name, "stage": "start"}
    if name in ("slow", "uncertain"):
        default = DEFAULT_SLOW_MS if name == "slow" else max_ms
        scenario["ms"] = min(_number(args, 0, default), max_ms)
    elif name == "plan":
        scenario["steps_wanted"] = min(_number(args, 0, DEFAULT_PLAN_STEPS), 1000)
        scenario["step_ms"] = min(_number(args, 1, 0), 10_000)
    elif name == "file":
        scenario["path"] = args[0] if args else "notes.txt"
        scenario["content"] = " ".join(args[1:])
    elif name == "tool":
        scenario["seed"] = args[0] if args else "seed"
    return scenario


def _number(args: list[str], index: int, default: int) -> int:
    """A whole-number argument (ASCII digits only: str.isdigit also takes digits int() refuses)."""
    if len(args) > index and args[index].isascii() and args[index].isdigit():
        return int(args[index])
    return default


def tool_secret(seed: str) -> str:
    """The string the ``tool`` scenario's tool call carries; the kit derives it the same way."""
    return "tool-secret-" + hashlib.sha256(seed.encode()).hexdigest()[:16]


def derived_file(task_id: str, name: str) -> bytes:
    """The bytes of a file the ``complete`` scenario publishes."""
    digest = hashlib.sha256(f"{task_id}/{name}".encode()).hexdigest()
    return f"reference agent file {name} for task {task_id}\n{digest}\n".encode()


def _echo_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = list(message.get("parts", []))
    if parts and "text" in parts[0] and [w.lower() for w in parts[0]["text"].split()[:1]] == ["scenario"]:
        parts = parts[1:]
    return parts or [{"text": ""}]


class Scenarios:
    """The scenarios, one method each; :meth:`run` runs a turn's from wherever it stands."""

    reports = REPORTS

    def __init__(self, interactions: Interactions):
        self.interactions = interactions

    async def run(self, turn: Turn) -> None:
        """Run the turn's scenario from wherever it stands (a fresh start, a resume, or after an answer)."""
        starting = turn.scenario.get("stage") == "start" and turn.task.state != "TASK_STATE_WORKING"
        turn.set_state("TASK_STATE_WORKING", "Working on it." if starting else None)
        await getattr(self, turn.scenario["name"])(turn)

    async def complete(self, turn: Turn) -> None:
        turn.step()
        turn.add_artifact("summary", [{"text": "The scenario completed.", "mediaType": "text/plain"}])
        for name, inline, link, media_type in self.reports:
            turn.publish_file(name, derived_file(turn.task_id, name), inline=inline, link=link, media_type=media_type)
        turn.add_artifact("result", [{"data": {"scenario": "complete", "ok": True}, "mediaType": "application/json"}])
        turn.set_state("TASK_STATE_COMPLETED", "Done.")

    async def echo(self, turn: Turn) -> None:
        turn.step()
        turn.add_artifact("echo", self.echoed(_echo_parts(turn.last_user_message())))
        turn.set_state("TASK_STATE_COMPLETED", "Echoed.")

    def echoed(self, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The parts the echo answers: the message's own."""
        return parts

    async def ask(self, turn: Turn) -> None:
        if turn.scenario["stage"] == "start":
            prompt, detail = "Which colour should the report use?", {"choices": ["blue", "green"]}
            self.interactions.pause(turn, "question", prompt, detail)
            return
        turn.step()
        turn.add_artifact("answer", [{"text": f"answer: {turn.scenario['answer'].get('value')}"}])
        turn.set_state("TASK_STATE_COMPLETED", "Thanks, done.")

    async def approve(self, turn: Turn) -> None:
        if turn.scenario["stage"] == "start":
            detail = {"action": "refund", "order": "demo-123", "amountUsd": 42.5}
            self.interactions.pause(turn, "approval", "May I refund order demo-123 ($42.50)?", detail)
            return
        turn.step()
        if self.approves(turn.scenario["answer"]):
            turn.add_artifact("approved-action", [{"text": "approved action ran: order demo-123 refunded"}])
            turn.set_state("TASK_STATE_COMPLETED", "Refund made.")
        else:
            turn.set_state("TASK_STATE_COMPLETED", "Not approved: the refund was not made.")

    def approves(self, answer: dict[str, Any]) -> bool:
        return bool(answer.get("approved"))

    async def connect(self, turn: Turn) -> None:
        if turn.scenario["stage"] == "start":
            detail = {"connection": "calendar", "provider": "example-calendar"}
            self.interactions.pause(turn, "connection", "Connect your calendar so I can read your meetings.", detail)
            return
        turn.step()
        turn.add_artifact("connected-action", [{"text": "connected action ran: 3 meetings read"}])
        turn.set_state("TASK_STATE_COMPLETED", "Read your calendar.")

    async def slow(self, turn: Turn) -> None:
        await _until_deadline(turn)
        turn.step()
        turn.add_artifact("slow", [{"text": f"worked for {turn.scenario['ms']} ms"}])
        turn.set_state("TASK_STATE_COMPLETED", "Done, slowly.")

    async def fail(self, turn: Turn) -> None:
        turn.set_state("TASK_STATE_FAILED", "The scenario failed, as asked.")

    async def uncertain(self, turn: Turn) -> None:
        """A payment whose outcome is lost: the task stays WORKING, saying which effect is uncertain."""
        turn.step()
        text = "The payment's outcome is unknown; checking before going on."
        turn.set_state("TASK_STATE_WORKING", text, data=self.uncertain_data(turn))
        await _until_deadline(turn)
        turn.set_state("TASK_STATE_COMPLETED", "The payment went through.")

    def uncertain_data(self, turn: Turn) -> dict[str, Any]:
        return {EFFECTS: {"uncertain": f"effect-{turn.task_id}-payment"}}

    def plan_limit(self, labels: list[str]) -> int:
        return PLAN_LIMIT

    def plan_view(self, labels: list[str], done: int) -> dict[str, Any]:
        """The plan as progress/v1 shows it: steps beyond the 20th are folded into the last one."""
        limit = self.plan_limit(labels)
        shown = labels if len(labels) <= limit else [*labels[: limit - 1], f"Steps {limit} to {len(labels)}"]
        steps = []
        for i, label in enumerate(shown):
            finished = done >= len(labels) if i == len(shown) - 1 and len(shown) < len(labels) else i < done
            state = "done" if finished else "active" if i == min(done, len(shown) - 1) else "pending"
            steps.append({"label": label, "state": state, "note": "" if state != "done" else "finished"})
        return {"steps": steps}

    def plan_data(self, view: dict[str, Any], first_view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The plan on the status message, and on the task (GetTask): the latest view on both."""
        return {PROGRESS: view}, {PROGRESS: view}

    async def plan(self, turn: Turn) -> None:
        labels = [f"Step {i + 1} of the plan" for i in range(turn.scenario["steps_wanted"])]
        first_view = self.plan_view(labels, 0)
        for done in range(len(labels) + 1):
            data, task_data = self.plan_data(self.plan_view(labels, done), first_view)
            if done < len(labels):
                turn.set_state("TASK_STATE_WORKING", f"{labels[done]}.", data=data, task_data=task_data)
                turn.step()
                await asyncio.sleep(turn.scenario.get("step_ms", 0) / 1000)
            else:
                turn.set_state("TASK_STATE_COMPLETED", "The plan is done.", data=data, task_data=task_data)

    async def file(self, turn: Turn) -> None:
        path, content = turn.scenario["path"], turn.scenario["content"]
        if path.startswith("/") or ".." in path.split("/"):
            turn.set_state("TASK_STATE_FAILED", "A file's path is relative to the agent's outputs.")
            return
        turn.step()
        turn.publish_file(path, content.encode(), inline=True, link=True, media_type="text/plain")
        turn.set_state("TASK_STATE_COMPLETED", f"Wrote {path}.")

    async def inspect(self, turn: Turn) -> None:
        """Fetch every url part of the message and report each file's size and sha256."""
        reports = []
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for part in turn.last_user_message().get("parts", []):
                if "url" not in part:
                    continue
                try:
                    status, data = await self.fetch(session, part["url"])
                except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                    reports.append({"url": part["url"], "error": type(exc).__name__})
                    continue
                digest = hashlib.sha256(data).hexdigest()
                reports.append({"url": part["url"], "status": status, "size": len(data), "sha256": digest})
        turn.step(len(reports))
        turn.add_artifact("inspection", [{"data": {"inspected": reports}, "mediaType": "application/json"}])
        turn.set_state("TASK_STATE_COMPLETED", f"Inspected {len(reports)} file(s).")

    async def fetch(self, session: aiohttp.ClientSession, url: str) -> tuple[int, bytes]:
        """A url part's status and bytes (up to 8 MiB and one more, so that a larger file shows)."""
        async with session.get(url, allow_redirects=False) as response:
            return response.status, await response.content.read(INSPECT_LIMIT + 1)

    async def tool(self, turn: Turn) -> None:
        """Use a tool whose arguments and result carry a secret; the caller must see neither."""
        secret = tool_secret(turn.scenario["seed"])
        call = {"name": "lookup_order", "arguments": {"query": secret}}
        result = {"record": f"{secret}-result"}
        turn.set_state("TASK_STATE_WORKING", "Looking that up.")
        self.use_tool(turn, call, result)
        turn.add_artifact("lookup", [{"text": "The lookup is done: the order exists."}])
        turn.set_state("TASK_STATE_COMPLETED", "Looked it up.")

    def use_tool(self, turn: Turn, call: dict[str, Any], result: dict[str, Any]) -> None:
        """A tool call is a step of the turn's own: it is counted, never shown."""
        turn.step()


async def _until_deadline(turn: Turn) -> None:
    """Sleep until the turn's deadline, set when its stage first ran (a resumed turn keeps it)."""
    deadline = turn.scenario.setdefault("deadline", time.time() + turn.scenario["ms"] / 1000)
    turn.save_scenario()
    await asyncio.sleep(max(0.0, deadline - time.time()))
