"""The Agent Card each reference Agent publishes."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent import scenarios
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.extensions import DESCRIPTIONS

VERSION = "0.1.0"


def agent_card(agent_id: str, endpoint: str, config: AgentConfig) -> dict[str, Any]:
    listed = endpoint.replace("/v1/a2a/agents/", "/v1/a2a/agent/") if config.fault("card-wrong-url") else endpoint
    interfaces = [{"url": listed, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    if config.fault("card-second-binding"):
        interfaces.append({"url": endpoint + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"})
    extensions = [
        {"uri": uri, "description": description, "required": False} for uri, description in DESCRIPTIONS.items()
    ]
    if config.fault("card-extension-required"):
        extensions[0]["required"] = True
    card = {
        "name": f"{agent_id} (reference agent)",
        "description": "The conformance kit's reference Agent for Nylorun's A2A Profile v2.",
        "version": VERSION,
        "provider": {
            "organization": "Nylorun A2A conformance kit",
            "url": "https://docs.nylorun.com/a2a/conformance",
        },
        "supportedInterfaces": interfaces,
        "capabilities": {
            "streaming": config.fault("card-streaming"),
            "pushNotifications": (config.push_enabled or config.fault("capability-without-secret"))
            and not config.fault("card-hides-push"),
            "extendedAgentCard": config.fault("card-extended"),
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
    if config.fault("card-security-schemes"):
        card["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
        card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    if config.fault("card-signed"):
        card["signatures"] = [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2lnbmF0dXJl"}]
    return card
