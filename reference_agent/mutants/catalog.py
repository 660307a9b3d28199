"""What a mutant is: a named partial fault the kit derives, on one axis, breaking one member of a rule.

A mutant is named ``<axis>/<what>/<how>[@<where>]`` (as mutation tools name theirs, by operator and location):
the axis, the object or input it changes, the operator, and, on the channel axis, the channel it changes it
on — ``channel/progress.steps.last.label/altered@push`` alters the label of the plan's last step in push
deliveries only. Its behaviour is that of a fault (:mod:`..faults.catalog`): a variant of one of the agent's
strategies, or a middleware that rewrites what goes on the wire.

A mutant the rules allow is *equivalent*: it carries the reason, naming the rule it read (the upper-case
hex of a sha256 the files/v1 schema takes in either case). Equivalent mutants are the allowed variations of a
correct Runtime, the allowed axis's (:mod:`.allowed`) and the other axes' alike: the kit must pass an Agent so
changed; a run that fails one is a wrong verdict of the kit, never a kill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nylorun_a2a_kit.reference_agent.seams import MiddlewareFactory

AXES = {
    "fault": "the hand-written faults (reference_agent/faults/), each breaking what its author named; a fault an "
    "operator of the source axis expresses is replaced by that source mutant",
    "channel": "the profile's data of an object on each channel it travels: the answer, GetTask, ListTasks, a "
    "push delivery, the change feed",
    "spelling": "each spelling a client or a Runtime may use on the wire: header names, media types, the "
    "version as a request parameter, timestamps; and what the kit receives: a delivery's method and type",
    "several": "a rule about one of several things, broken for the second or the last only",
    "combined": "two options that combine, one of them dropped only when the other is given",
    "read": "a read that changes what later reads show",
    "allowed": "what a correct Runtime may show, each with the rule that allows it: late answers and deliveries "
    "across a real network, a delivery again after its 2xx, fewer tasks per page, what HTTP stacks and proxies do "
    "to an answer (every one of these is allowed: the kit must pass them)",
    "setup": "the shapes a Runtime comes in (reference_agent/setups.py): one Agent, twin ids, a restart on a kept "
    "database, an older database, push off, … (each is allowed: the kit must pass the reference agent in every one)",
    "source": "the reference agent's own code, one place at a time: mutmut's operators on its Python, the kit's on "
    "its SQL (no requirement names what they break: every check judges them)",
}


@dataclass(frozen=True)
class Mutant:
    name: str
    axis: str
    description: str
    breaks: tuple[str, ...]  # the requirements whose checks must kill it (empty when it is equivalent)
    equivalent: str | None = None  # why no rule forbids it
    read: tuple[str, ...] = ()  # the requirements whose rules were read to say so (their checks must pass it)
    run_with: tuple[str, ...] = ()  # kit options its run needs besides the mutant itself
    variants: tuple[type, ...] = field(default=(), compare=False, repr=False)
    middlewares: tuple[MiddlewareFactory, ...] = field(default=(), compare=False, repr=False)
    unobservable: str | None = None  # why no black-box client can tell it (a log line, a performance choice, dead code)

    def __post_init__(self) -> None:
        if self.axis not in AXES:
            raise ValueError(f"{self.name}: unknown axis {self.axis}")
        if self.axis == "source":
            pass  # it names what it breaks only where it replaced a fault; every check judges it
        elif bool(self.breaks) == bool(self.equivalent):
            raise ValueError(f"{self.name}: a mutant breaks requirements, or is equivalent with its reason")
        if self.equivalent and not self.read:
            raise ValueError(f"{self.name}: an equivalent mutant names the requirements whose rules were read")
        for variant in self.variants:
            if len(variant.__bases__) != 1:
                raise TypeError(f"{self.name}: a variant subclasses exactly the strategy it replaces")

    @property
    def member(self) -> str:
        """What it changes, without its axis: ``progress.steps.last.label/altered@push``."""
        return self.name.split("/", 1)[1]


def mutant(
    name: str,
    description: str,
    behaviour: Any,
    *,
    breaks: tuple[str, ...] = (),
    equivalent: str | None = None,
    read: tuple[str, ...] = (),
    run_with: tuple[str, ...] = (),
) -> Mutant:
    """A mutant whose behaviour is one strategy variant (a class) or one middleware factory."""
    axis = name.split("/", 1)[0]
    is_variant = isinstance(behaviour, type)
    return Mutant(
        name,
        axis,
        description,
        tuple(breaks),
        equivalent,
        tuple(read),
        tuple(run_with),
        (behaviour,) if is_variant else (),
        () if is_variant else (behaviour,),
    )
