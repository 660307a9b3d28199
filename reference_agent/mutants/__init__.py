"""Mutants: partial faults of the reference agent, derived from the schemas and the requirements.

Where the named faults (:mod:`..faults`) are each written by hand, the mutants are generated along the axes a
rule runs on beside its domain (:data:`AXES`): every field of the profile's data on each channel it travels,
every spelling of what the kit sends or receives, the second or the last of several things, options that
combine, reads that must change nothing. Each breaks one member of one rule and keeps every answer valid against
its schema, so it tests the kit's checks of meaning, not its schema validation; one the rules allow is
*equivalent*, with the reason, and the kit must pass an Agent so changed.

This is the one registry of every deliberate deviation of the reference agent: the hand-written faults (axis
``fault``, each also named by its own short name), the derived axes', the allowed variations (axis ``allowed``),
the setups a Runtime comes in (axis ``setup``, :mod:`..setups`) and the source mutants (axis ``source``, made on
demand). A mutant is named ``<axis>/<what>/<how>[@<where>]`` (:mod:`.catalog`); ``nylorun-reference-agent --mutant
NAME`` starts the agent with it (``--list-mutants`` lists them), and the kit's ``--a2a-reference-mutant NAME`` starts
the embedded one so (a setup too: it is the embedded agent's shape). ``python -m nylorun_a2a_kit.fixtures.mutation``
runs the suites against them, one verdict each, cached.

Importing this package derives nothing: :func:`catalog` does, the first time it is called.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from nylorun_a2a_kit.reference_agent.mutants.catalog import AXES, Mutant
from nylorun_a2a_kit.reference_agent.seams import Seams

__all__ = [
    "AXES",
    "Mutant",
    "catalog",
    "check_mutants",
    "named_setups",
    "patched",
    "resolve",
    "seams",
    "use_requirements",
]
SOURCE = "source/"  # the source axis's names: mutants of the agent's own code (.source), made on demand
FAULT = "fault/"  # the fault axis's: the named faults (..faults), ``fault/<area>/<name>``
SETUP = "setup/"  # the setup axis's: the shapes of ..setups, ``setup/<name>``


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
    for derived in (_faults().values(), *(axis.derive(requirements) for axis in axes), _setups(requirements)):
        for one in derived:
            if one.name in found:
                raise ValueError(f"mutant {one.name} is derived twice")
            found[one.name] = one
    return found


@cache
def _faults() -> dict[str, Mutant]:
    """The named faults as records of the one registry: ``fault/<area>/<name>``, the area the module of
    reference_agent/faults/ that declares it. They need no requirements: a run naming faults alone derives nothing."""
    from nylorun_a2a_kit.reference_agent.faults import FAULTS

    found = {}
    for name, fault in FAULTS.items():
        behaviour = (*fault.variants, *fault.middlewares)[0]
        area = behaviour.__module__.rsplit(".", 1)[1]
        found[f"{FAULT}{area}/{name}"] = Mutant(
            f"{FAULT}{area}/{name}",
            "fault",
            fault.description,
            tuple(fault.breaks),
            run_with=tuple(fault.run_with),
            variants=tuple(fault.variants),
            middlewares=tuple(fault.middlewares),
        )
    return found


def _setups(requirements: Any) -> Iterable[Mutant]:
    """The setups as records of the one registry: a correct agent in each must pass every check it reaches."""
    from nylorun_a2a_kit.reference_agent.setups import SETUPS

    for name, setup in SETUPS.items():
        if name == "default":
            continue
        areas = set(setup.reaches)
        read = tuple(sorted(r.id for r in requirements.values() if not areas or r.area in areas))
        allowed = f"a Runtime may come in this shape ({setup.description}); no rule asks for another"
        yield Mutant(f"{SETUP}{name}", "setup", setup.description, (), allowed, read)


def resolve(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` with each fault's short name (``no-retries``) made its registry name (``fault/push/no-retries``),
    in order, each once; a name no axis knows raises ValueError."""
    short = {name.rsplit("/", 1)[1]: name for name in _faults()}
    resolved = tuple(dict.fromkeys(short.get(name, name) for name in names))
    check_mutants(resolved)
    return resolved


def named_setups(names: Iterable[str]) -> tuple[str, ...]:
    """The setups among ``names``, without their axis: ``setup/case-twins`` → ``case-twins``."""
    return tuple(name.removeprefix(SETUP) for name in names if name.startswith(SETUP))


def check_mutants(names: Iterable[str]) -> None:
    names = set(names)
    of_source = {name for name in names if name.startswith(SOURCE)}
    if of_source:
        from nylorun_a2a_kit.reference_agent.mutants import source

        source.check(of_source)
    rest = names - of_source - set(_faults())
    of_setup = {name for name in rest if name.startswith(SETUP)}
    if of_setup:
        from nylorun_a2a_kit.reference_agent.setups import SETUPS

        rest -= {name for name in of_setup if name.removeprefix(SETUP) in SETUPS and name != f"{SETUP}default"}
    unknown = sorted(rest - set(catalog())) if rest else []
    if unknown:
        raise ValueError(f"unknown mutant {', '.join(unknown)} (nylorun-reference-agent --list-mutants lists them)")


def seams(names: Iterable[str]) -> Seams:
    """The seams of an agent started with the mutants ``names``: their variants and middlewares in place. A setup
    has none (it is the agent's configuration), a source mutant neither (its function's code is swapped: patched)."""
    names = resolve(names)
    variants: dict[type, list[type]] = {}
    middlewares = []
    for name in names:
        if name.startswith((SOURCE, SETUP)):
            continue
        one = _faults().get(name) or catalog()[name]
        for variant in one.variants:
            variants.setdefault(variant.__bases__[0], []).append(variant)
        middlewares += one.middlewares
    return Seams(variants, middlewares)


def patched(names: Iterable[str]) -> Any:
    """The source mutants among ``names`` in place in this process, until ``.undo()``."""
    from nylorun_a2a_kit.reference_agent.mutants import source

    return source.patched(names)
