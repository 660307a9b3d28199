"""Named faults: deliberate deviations the reference agent can be started with.

Each fault names the requirements whose checks must catch it; the kit's own tests start the agent with
the fault, run those checks, and assert that they fail. A fault breaks one behaviour, the way a real
Runtime might get it wrong, so a check that passes under its fault is a check that cannot fail.

Each fault is declared once, in the module of this package for its area, with its behaviour beside it: a
variant of one of the agent's strategies, or a middleware that changes only what goes on the wire. The
agent's own modules hold the correct strategies and know nothing of faults. A fault is a record of the one
registry of deviations (``reference_agent.mutants``: ``fault/<area>/<name>``, or its short name), which puts its
variants in their place when an instance is started with it.

Importing this package does not import the agent: the areas (and the agent with them) load when ``FAULTS``
or ``AREAS`` is first read. A run against another target loads none of the agent; that also keeps the agent's
source out of the constants Hypothesis draws from in such a run.
"""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.faults import catalog
from nylorun_a2a_kit.reference_agent.faults.catalog import Fault

__all__ = ["AREAS", "FAULTS", "Fault"]


def _load() -> dict[str, Any]:
    """The catalog, its areas imported: the modules that declare the faults, one per area. None imports
    another, so each declares its faults as it is imported here, and FAULTS (and --list-mutants) lists them
    in this order."""
    from nylorun_a2a_kit.reference_agent.faults import (
        answers,
        binding,
        card,
        contexts,
        extensions,
        feed,
        http,
        isolation,
        listing,
        push,
        push_configs,
        queue,
        readings,
        scenarios,
        shapes,
        streaming,
        tasks,
        updates,
        versioning,
    )

    areas = (answers, binding, card, contexts, extensions, feed, http, isolation, listing, push, push_configs, queue)
    areas = (*areas, readings, scenarios)
    loaded = {"AREAS": (*areas, shapes, streaming, tasks, updates, versioning)}
    loaded["FAULTS"] = catalog.FAULTS
    globals().update(loaded)
    return loaded


def __getattr__(name: str) -> Any:
    if name in ("AREAS", "FAULTS"):
        return _load()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
