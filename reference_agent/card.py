"""The Agent Card each reference Agent publishes."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent import scenarios
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.extensions import DESCRIPTIONS

VERSION = "0.1.0"


def agent_card(agent_id: str, endpoint: str, config: AgentConfig) -> dict[str, Any]:
    extensions = [
        {"uri": uri, "description": description, "required": False} for uri, description in DESCRIPTIONS.items()
    ]
    card = {
        "name": f"{agent_id} (reference agent)",
        "description": "The conformance kit's reference Agent for Nylorun's A2A Profile v2.",
        "version": VERSION,
        "provider": {
            "organization": "Nylorun A2A conformance kit",
            "url": "https://docs.nylorun.com/a2a/conformance",
        },
        "supportedInterfaces": [{"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {
            "streaming": False,
            "pushNotifications": config.push_enabled,
            "extendedAgentCard": False,
            "extensions": extensions,
        },
        "defaultInputModes": ["text/plain", "application/json", "application/octet-stream"],
        "defaultOutputModes": ["text/plain", "application/json", "application/octet-stream"],
        "skills": [
            {
                "id": "conformance-scenarios",
                "name": "Conformance scenarios",
                "description": "Runs the kit's scenario contract: send 'scenario <name> [argument]' as the first "
                "text part.",
                "tags": [scenarios.CONTRACT_TAG, *(f"scenario:{name}" for name in scenarios.SCENARIOS)],
                "examples": [f"scenario {name}" for name in scenarios.SCENARIOS],
            }
        ],
    }
    if not config.advertise_scenarios:
        card["skills"] = [
            {"id": "support", "name": "Support", "description": "Answers support questions.", "tags": ["support"]}
        ]
    return card
