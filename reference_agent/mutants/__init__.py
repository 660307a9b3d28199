"""Mutants: partial faults of the reference agent, derived from the schemas and the requirements.

Where the named faults (:mod:`..faults`) are each written by hand, the mutants are generated along the axes a
rule runs on beside its domain (:data:`AXES`): every field of the profile's data on each channel it travels,
every spelling of what the kit sends or receives, the second or the last of several things, options that
combine, reads that must change nothing. Each breaks one member of one rule and keeps every answer valid against
its schema, so it tests the kit's checks of meaning, not its schema validation; one the rules allow is
*equivalent*, with the reason, and the kit must pass an Agent so changed.

A mutant is named ``<axis>/<what>/<how>[@<where>]`` (:mod:`.catalog`); ``nylorun-reference-agent --mutant NAME``
starts the agent with it (``--list-mutants`` lists them), and the kit's ``--a2a-reference-mutant NAME`` starts
the embedded one so. ``python -m benchmarks.mutation_score`` runs the suites against them and prints the kill
rate per axis and every survivor with its reason.

Importing this package derives nothing: :func:`catalog` does, the first time it is called.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from nylorun_a2a_kit.reference_agent.mutants.catalog import AXES, Mutant
from nylorun_a2a_kit.reference_agent.seams import Seams

__all__ = ["AXES", "Mutant", "catalog", "check_mutants", "patched", "seams", "use_requirements"]
SOURCE = "source/"  # the source axis's names: mutants of the agent's own code (.source), made on demand
FAULT = "fault/"  # the fault axis's: the named faults (..faults), ``fault/<area>/<name>``


_GIVEN: list[Any] = []  # the requirements the caller gave: the agent imports no harness to read them


def use_requirements(requirements: Any) -> None:
    """The requirements the derived axes are derived from, given by the caller (the kit's plugin, the agent's
    command line, a benchmark): the agent's own code never reads them from the harness."""
    if _GIVEN and _GIVEN[0] is requirements:
        return
    _GIVEN[:] = [requirements]
    catalog.cache_clear()


@cache
def catalog() -> dict[str, Mutant]:
    """Every mutant by name but the source axis's (made on demand, :mod:`.source`): the hand-written faults
    (axis ``fault``), then each derived axis's in turn, derived once from the requirements the caller gave."""
    from nylorun_a2a_kit.reference_agent.mutants import allowed, channels, combined, reads, several, spellings

    if not _GIVEN:
        raise RuntimeError("the mutants are derived from the requirements their caller gives: use_requirements()")
    requirements = _GIVEN[0]
    found: dict[str, Mutant] = {}
    axes = (channels, spellings, several, combined, reads, allowed)
    for derived in (_faults(), *(axis.derive(requirements) for axis in axes)):
        for one in derived:
            if one.name in found:
                raise ValueError(f"mutant {one.name} is derived twice")
            found[one.name] = one
    return found


def _faults() -> Iterable[Mutant]:
    """The named faults as records of the one registry: ``fault/<area>/<name>``, the area the module of
    reference_agent/faults/ that declares it."""
    from nylorun_a2a_kit.reference_agent.faults import FAULTS

    for name, fault in FAULTS.items():
        behaviour = (*fault.variants, *fault.middlewares)[0]
        area = behaviour.__module__.rsplit(".", 1)[1]
        yield Mutant(
            f"{FAULT}{area}/{name}",
            "fault",
            fault.description,
            tuple(fault.breaks),
            run_with=tuple(fault.run_with),
            variants=tuple(fault.variants),
            middlewares=tuple(fault.middlewares),
        )


def check_mutants(names: Iterable[str]) -> None:
    names = set(names)
    of_source = {name for name in names if name.startswith(SOURCE)}
    if of_source:
        from nylorun_a2a_kit.reference_agent.mutants import source

        source.check(of_source)
    rest = names - of_source
    unknown = sorted(rest - set(catalog())) if rest else []
    if unknown:
        raise ValueError(f"unknown mutant {', '.join(unknown)} (nylorun-reference-agent --list-mutants lists them)")


def seams(names: Iterable[str]) -> Seams:
    """The seams of an agent started with the mutants ``names``: their variants and middlewares in place."""
    names = list(names)
    check_mutants(names)
    variants: dict[type, list[type]] = {}
    middlewares = []
    for name in names:
        if name.startswith(SOURCE):
            continue  # no seam: its function's code is swapped (patched)
        one = catalog()[name]
        for variant in one.variants:
            variants.setdefault(variant.__bases__[0], []).append(variant)
        middlewares += one.middlewares
    return Seams(variants, middlewares)


def patched(names: Iterable[str]) -> Any:
    """The source mutants among ``names`` in place in this process, until ``.undo()``."""
    from nylorun_a2a_kit.reference_agent.mutants import source

    return source.patched(names)
