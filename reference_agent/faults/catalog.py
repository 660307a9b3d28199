"""How a fault is declared: once, with its name, what it breaks, and its behaviour right below.

    @declare("queue-lifo", "queued messages are taken newest first", "QUEUE-05")
    class QueueLifo(MessageQueue):
        ...

A class is a variant of the strategy it subclasses; any other behaviour is a middleware factory (see
:mod:`.wire`). A fault with two behaviours is declared once and applied to both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nylorun_a2a_kit.reference_agent.seams import MiddlewareFactory

FAULTS: dict[str, Fault] = {}


@dataclass(frozen=True)
class Fault:
    description: str
    breaks: tuple[str, ...]
    # Kit options the fault's run needs besides the fault itself (e.g. an agent with push off).
    run_with: tuple[str, ...] = ()
    variants: list[type] = field(default_factory=list, compare=False, repr=False)
    middlewares: list[MiddlewareFactory] = field(default_factory=list, compare=False, repr=False)

    def __call__(self, behaviour: Any) -> Any:
        """Record ``behaviour`` (a strategy's variant, or a middleware factory) as this fault's."""
        if isinstance(behaviour, type):
            if len(behaviour.__bases__) != 1:
                raise TypeError(f"{behaviour.__name__}: a variant subclasses exactly the strategy it replaces")
            self.variants.append(behaviour)
        else:
            self.middlewares.append(behaviour)
        return behaviour


def declare(name: str, description: str, *breaks: str, run_with: tuple[str, ...] = ()) -> Fault:
    """A new fault ``name`` whose checks of ``breaks`` must fail; apply it to its behaviour."""
    if name in FAULTS:
        raise ValueError(f"fault {name} is declared twice")
    FAULTS[name] = Fault(description, breaks, run_with)
    return FAULTS[name]
