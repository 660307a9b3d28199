"""Seams: the strategies a reference agent instance calls through, and the middlewares it serves with.

The agent's production modules hold the correct strategies (how ListTasks pages, when a push is retried, …)
and make each one through :meth:`Seams.make`. An instance started with faults gets a ``Seams`` in which a
fault's variant, a subclass of the strategy that lives with the fault (``reference_agent/faults/``), takes
the strategy's place; variants of one strategy combine as cooperating subclasses. Faults that only change
what goes on the wire are aiohttp middlewares instead. Without faults every strategy is the correct one
and there is no middleware.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
# Makes one aiohttp middleware for an agent instance from its configuration.
MiddlewareFactory = Callable[[Any], Callable[..., Any]]


class Seams:
    def __init__(
        self, variants: Mapping[type, Sequence[type]] | None = None, middlewares: Sequence[MiddlewareFactory] = ()
    ):
        self._variants = {strategy: tuple(kinds) for strategy, kinds in (variants or {}).items() if kinds}
        self._middlewares = tuple(middlewares)
        self._kinds: dict[type, type] = {}

    def make(self, strategy: type[T], *args: Any, **kwargs: Any) -> T:
        """An instance of ``strategy``, or of the variants that replace it here."""
        return self.kind(strategy)(*args, **kwargs)

    def kind(self, strategy: type[T]) -> type[T]:
        variants = self._variants.get(strategy)
        if not variants:
            return strategy
        if len(variants) == 1:
            return variants[0]
        if strategy not in self._kinds:
            self._kinds[strategy] = type(strategy.__name__, variants, {"__module__": strategy.__module__})
        return self._kinds[strategy]

    def middlewares(self, config: Any) -> list[Callable[..., Any]]:
        return [make(config) for make in self._middlewares]

    def joined(self, other: Seams) -> Seams:
        """These seams and ``other``'s together: both's variants of each strategy, both's middlewares."""
        variants = {strategy: list(kinds) for strategy, kinds in self._variants.items()}
        for strategy, kinds in other._variants.items():
            variants.setdefault(strategy, []).extend(kinds)
        return Seams(variants, (*self._middlewares, *other._middlewares))


CORRECT = Seams()
