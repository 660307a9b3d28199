"""What an agent's aiohttp application holds, by key: its engine, dispatcher, configuration, gate and feed."""

from __future__ import annotations

from aiohttp import web

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.engine import Engine
from nylorun_a2a_kit.reference_agent.feed import Feed
from nylorun_a2a_kit.reference_agent.gate import Gate
from nylorun_a2a_kit.reference_agent.rpc import Dispatcher

ENGINE: web.AppKey[Engine] = web.AppKey("engine", Engine)
DISPATCHER: web.AppKey[Dispatcher] = web.AppKey("dispatcher", Dispatcher)
CONFIG: web.AppKey[AgentConfig] = web.AppKey("config", AgentConfig)
GATE: web.AppKey[Gate] = web.AppKey("gate", Gate)
FEED: web.AppKey[Feed] = web.AppKey("feed", Feed)
