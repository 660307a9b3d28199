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

__all__ = ["AXES", "Mutant", "catalog", "check_mutants", "patched", "seams"]
SOURCE = "source/"  # the source axis's names: mutants of the agent's own code (.source), made on demand


@cache
def catalog() -> dict[str, Mutant]:
    """Every mutant by name, each axis's in turn (derived once, from the schemas and the requirements)."""
    from nylorun_a2a_kit.fixtures.requirements import load
    from nylorun_a2a_kit.reference_agent.mutants import allowed, channels, combined, reads, several, spellings

    requirements = load()
    found: dict[str, Mutant] = {}
    axes = (channels, spellings, several, combined, reads, allowed)
    for derived in (axis.derive(requirements) for axis in axes):
        for one in derived:
            if one.name in found:
                raise ValueError(f"mutant {one.name} is derived twice")
            found[one.name] = one
    return found


def check_mutants(names: Iterable[str]) -> None:
    names = set(names)
    of_source = {name for name in names if name.startswith(SOURCE)}
    if of_source:
        from nylorun_a2a_kit.reference_agent.mutants import source

        source.check(of_source)
    unknown = sorted(names - of_source - set(catalog()))
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
