"""What an agent's aiohttp application holds, by key: its configuration, its gate, and what serves its requests."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.edge import Edge
from nylorun_a2a_kit.reference_agent.engine import Engine
from nylorun_a2a_kit.reference_agent.feed import Feed
from nylorun_a2a_kit.reference_agent.rpc import Dispatcher


@dataclass
class Serving:
    """What serves requests below the HTTP edge, made at start from the database (and made again from it when the
    agent restarts on its kept database)."""

    engine: Engine
    dispatcher: Dispatcher
    feed: Feed


SERVING: web.AppKey[list[Serving]] = web.AppKey("serving", list)  # the one Serving, in a list it is swapped in
CONFIG: web.AppKey[AgentConfig] = web.AppKey("config", AgentConfig)
EDGE: web.AppKey[Edge] = web.AppKey("edge", Edge)


def serving(app: web.Application) -> Serving:
    return app[SERVING][0]
