"""Source mutants: the reference agent's own code, changed one place at a time, as a real Runtime's bugs are made.

The derived axes break what a requirement lists; these break what the code does, in places no requirement names.
The Python is mutated by mutmut 3's operators (libcst; a number plus one, a comparison or boolean operator
swapped, a keyword or a name such as True/None changed, a string changed, an argument dropped, an assignment made
None, …), each inside one function or method of a module that serves a client (:data:`SERVED`). No Python
mutation tool reads inside a query, so the SQL the agent sends to SQLite is mutated by operators of the kit's own
(:mod:`.sql`): a WHERE conjunct dropped (a read or, keyed by less, a write), an equality made a prefix or a
case-insensitive match, a bound or LIMIT moved by one, an ORDER BY reversed. mutmut's string operator leaves
those strings to them.

A source mutant is named ``source/<module>.<function>/<operator>-<n>``: the n-th place in that function (or
``Class.method``) the operator changes, in the order of the code. Started with one, the agent swaps the
function's code object for its mutant's (``patched``), in its own process, until it stops: a run forked warm
pays no start for it. Which mutants no check kills, and why, is written beside them in ``survivors.toml``: an
*equivalent* one (the rule read that allows it) or one *unobservable* to a black-box client (a log line, a
performance choice, dead code).

mutmut (the ``mutation`` extra) is imported only when a source mutant is named.
"""

from __future__ import annotations

import hashlib
import importlib
import textwrap
import tomllib
import types
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from nylorun_a2a_kit.reference_agent.mutants import sql
from nylorun_a2a_kit.reference_agent.mutants.catalog import Mutant

AXIS = "source"
PACKAGE = "nylorun_a2a_kit.reference_agent"
HOME = Path(__file__).resolve().parent.parent
# The modules that serve a client; not the faults, the mutants, the command line or how an instance is set up.
SERVED = (
    "app",
    "caller",
    "card",
    "delivery",
    "engine",
    "errors",
    "extensions",
    "feed",
    "edge",
    "interactions",
    "keys",
    "listing",
    "policies",
    "push",
    "queue",
    "rpc",
    "scenarios",
    "status",
    "store",
    "streaming",
    "turn",
)
SURVIVORS = Path(__file__).with_name("survivors.toml")
# Hand-written faults an operator here expresses, gone for the source mutant that replaced them (the checks each
# one failed fail under its replacement too): the mutant, the fault's name, the requirements it breaks.
REPLACED_FAULTS = {
    "source/store.Store.page/sql-order-reversed-1": ("list-oldest-first", ("LIST-04", "PAGE-03")),
    "source/store.Store._where/sql-bound-moved-1": ("timestamp-filter-exclusive", ("LIST-03",)),
    "source/store.Store.changed_after/sql-order-reversed-1": ("feed-newest-first", ("FEED-03",)),
    "source/store.Store.session_turns/sql-order-reversed-1": ("feed-session-newest-first", ("FEED-06",)),
    "source/push.PushConfigs.get/sql-where-dropped-6": ("get-after-delete-found", ("PUSH-01",)),
}
# What runs before the agent's source mutants are in place (it puts them there), and what only a test setup runs
# (the restarts of reference_agent/setups.py: no Runtime ships them): not mutated.
STARTS_THE_AGENT = {"app": ("start_site", "serve_in_thread", "RunningAgent.", "restarting")}


class NotApplicable(ValueError):
    """A mutant whose code cannot take its function's place (it would change the function's closure)."""


@dataclass(eq=False)
class Place:
    """Where a source mutant changes the code, and how: the function, the node, what it becomes."""

    module: str
    function: str  # ``name`` or ``Class.method``
    operator: str
    line: int
    lines: tuple[int, int]  # the function's first and last line: a check that ran code there reached it
    _tree: Any
    _top: Any
    _node: Any
    _mutated: Any

    @property
    def path(self) -> Path:
        return HOME / f"{self.module}.py"

    @cached_property
    def before(self) -> str:
        return _shortened(self._tree.code_for_node(self._node))

    @cached_property
    def after(self) -> str:
        return _shortened(self._tree.code_for_node(self._mutated))

    @cached_property
    def function_source(self) -> str:
        return self._tree.code_for_node(self._top)

    @cached_property
    def digest(self) -> str:
        """The code this mutant is of: its function before and after the change. A class written of a survivor holds
        only while its digest is this one, so an edited function re-opens what was said of its mutants."""
        made = hashlib.sha256(f"{self.function}\0{self.function_source}\0{self.mutated_source()}".encode())
        return made.hexdigest()[:16]

    def mutated_source(self) -> str:
        from mutmut.mutation.file_mutation import deep_replace

        changed = deep_replace(self._top, self._node, self._mutated).with_changes(decorators=[])
        return self._tree.code_for_node(changed)


def _shortened(code: str, most: int = 90) -> str:
    flat = " ".join(code.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


@cache
def catalog() -> dict[str, Mutant]:
    """Every source mutant by name, module by module, each function's in the order of its code."""
    found: dict[str, Mutant] = {}
    for module in SERVED:
        for one in _of_module(module):
            found[one.name] = one
    return found


def stale_survivors() -> dict[str, str]:
    """The classes ``survivors.toml`` writes of code that is no longer there, and why: the mutant is no longer made,
    or its function changed since the class was written (its digest differs). Each wants reading again."""
    stale = {}
    for name, known in _survivors().items():
        made = _places(module_of(name)).get(name) if name.startswith(f"{AXIS}/") else None
        if made is None:
            stale[name] = "no longer made"
        elif known.get("digest") != made.digest:
            stale[name] = f"its code changed (digest {made.digest}, the class was written of {known.get('digest')})"
    return stale


def of_module(module: str) -> dict[str, Mutant]:
    """The source mutants of one module (what a run with one of them has to make)."""
    return {one.name: one for one in _of_module(module)}


def module_of(name: str) -> str:
    """``store`` for ``source/store.Store.page/sql-where-dropped-1``."""
    return name.split("/", 2)[1].split(".", 1)[0]


def check(names: Iterable[str]) -> None:
    unknown = sorted(n for n in names if n not in of_module(module_of(n)))
    if unknown:
        raise ValueError(f"unknown mutant {', '.join(unknown)} (nylorun-reference-agent --list-mutants lists them)")


def place(name: str) -> Place:
    return _places(module_of(name))[name]


@cache
def _survivors() -> dict[str, dict[str, Any]]:
    return tomllib.loads(SURVIVORS.read_text(encoding="utf-8")) if SURVIVORS.exists() else {}


@cache
def _of_module(module: str) -> tuple[Mutant, ...]:
    survivors = _survivors()
    made = []
    for name, where in _places(module).items():
        known = survivors.get(name, {})
        if known and known.get("digest") != where.digest:
            known = {}  # written of other code: open again until it is read again (stale_survivors)
        fault, breaks = REPLACED_FAULTS.get(name, (None, ()))
        replaces = f" (replaces the fault {fault})" if fault else ""
        made.append(
            Mutant(
                name,
                AXIS,
                f"{where.module}.py:{where.line} in {where.function}: {where.operator}{replaces}",
                breaks,
                equivalent=known.get("reason") if known.get("class") == "equivalent" else None,
                read=tuple(known.get("read", ())),
                unobservable=known.get("reason") if known.get("class") == "unobservable" else None,
            )
        )
    return tuple(made)


@cache
def _places(module: str) -> dict[str, Place]:
    """Every place of ``module`` a mutant changes, by the mutant's name."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    path = HOME / f"{module}.py"
    # The module was just parsed and nothing else holds it: the wrapper need not copy it (a tenth of the parse's time).
    wrapper = MetadataWrapper(cst.parse_module(path.read_text(encoding="utf-8")), unsafe_skip_copy=True)
    visitor = _visitor()
    tree = wrapper.visit(visitor)
    qualified = _qualified_names(tree)
    places: dict[str, Place] = {}
    ordinal: Counter[tuple[str, str]] = Counter()
    for operator, node, mutated, top, line, lines in visitor.found:
        function = qualified.get(id(top))
        if function is None or function.startswith(STARTS_THE_AGENT.get(module, ())):
            continue
        ordinal[function, operator] += 1
        name = f"{AXIS}/{module}.{function}/{operator}-{ordinal[function, operator]}"
        places[name] = Place(module, function, operator, line, lines, tree, top, node, mutated)
    return places


def _qualified_names(tree: Any) -> dict[int, str]:
    import libcst as cst

    names: dict[int, str] = {}
    for child in tree.body:
        if isinstance(child, cst.FunctionDef):
            names[id(child)] = child.name.value
        elif isinstance(child, cst.ClassDef) and isinstance(child.body, cst.IndentedBlock):
            for method in child.body.body:
                if isinstance(method, cst.FunctionDef):
                    names[id(method)] = f"{child.name.value}.{method.name.value}"
    return names


def _visitor() -> Any:
    """mutmut's visitor, recording which operator made each mutation and where; SQL strings get the kit's."""
    import libcst as cst
    from libcst.metadata import PositionProvider
    from mutmut.mutation.file_mutation import MutationVisitor, OuterFunctionProvider
    from mutmut.mutation.mutators import mutation_operators, operator_string
    from mutmut.mutation.pragma_handling import IgnoredCode

    class Visitor(MutationVisitor):
        def __init__(self) -> None:
            super().__init__(mutation_operators, IgnoredCode(set(), set(), set()))
            self.found: list[tuple[str, Any, Any, Any, int, tuple[int, int]]] = []
            self._in_sql: set[int] = set()  # the nodes inside a SQL string: the kit's operators change those

        def _create_mutations(self, node: Any) -> None:
            top = self.get_metadata(OuterFunctionProvider, node, None)
            if top is None:
                return
            position = self.get_metadata(PositionProvider, node, None)
            line = position.start.line if position else 0
            span = self.get_metadata(PositionProvider, top, None)
            lines = (span.start.line, span.end.line) if span else (line, line)
            parent_sql = id(node) in self._in_sql
            if isinstance(node, cst.BaseString) and not parent_sql:
                made = list(sql.mutations(node, self._code_of))
                if made or sql.is_sql(node, self._code_of):
                    self._in_sql.update(id(inner) for inner in _walk(node))
                    for operator, mutated in made:
                        self.found.append((operator, node, mutated, top, line, lines))
                    return
            for kind, operator in self._operators:
                if not isinstance(node, kind) or (operator is operator_string and parent_sql):
                    continue
                for mutated in operator(node):
                    name = operator.__name__.removeprefix("operator_").replace("_", "-")
                    self.found.append((name, node, mutated, top, line, lines))

        def _code_of(self, node: Any) -> str:
            return cst.Module(body=[]).code_for_node(node)

    return Visitor()


def _walk(node: Any) -> Iterable[Any]:
    yield node
    for child in node.children:
        yield from _walk(child)


class Patched:
    """Source mutants in place in this process: each one's function runs its mutant's code until :meth:`undo`."""

    def __init__(self, names: Iterable[str]):
        self._undo: list[Callable[[], None]] = []
        for name in sorted(n for n in names if n.startswith(f"{AXIS}/")):
            self._undo.append(_swap(place(name)))

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


def patched(names: Iterable[str]) -> Patched:
    return Patched(names)


def _swap(where: Place) -> Callable[[], None]:
    """The live function runs its mutant's code, with its mutant's default values (a default can be the place)."""
    function = _live_function(where)
    made = _made(where, function)
    original = (function.__code__, function.__defaults__, function.__kwdefaults__)
    function.__code__, function.__defaults__, function.__kwdefaults__ = (
        made.__code__,
        made.__defaults__,
        made.__kwdefaults__,
    )

    def undo() -> None:
        function.__code__, function.__defaults__, function.__kwdefaults__ = original

    return undo


def _live_function(where: Place) -> types.FunctionType:
    holder: Any = importlib.import_module(f"{PACKAGE}.{where.module}")
    found: Any = holder
    for part in where.function.split("."):
        found = vars(holder)[part] if isinstance(holder, type) else getattr(holder, part)
        holder = found
    found = getattr(found, "__func__", found)  # a staticmethod's or classmethod's function
    if not isinstance(found, types.FunctionType):
        raise NotApplicable(f"{where.function} in {where.module} is no plain function")
    return found


def _made(where: Place, live: types.FunctionType) -> types.FunctionType:
    """The mutant's function, defined (without its decorators) in a copy of the live function's module namespace,
    inside a class when the live one calls super() (its code needs the class cell a class body gives)."""
    text = textwrap.dedent(where.mutated_source())
    in_class = bool(live.__code__.co_freevars)
    if in_class:
        text = "class _Owner:\n" + textwrap.indent(text, "    ")
    try:
        namespace = dict(live.__globals__)
        exec(compile(text, str(where.path), "exec"), namespace)
    except Exception as exc:
        raise NotApplicable(f"the mutant does not define its function: {exc!r}") from None
    name = live.__code__.co_name
    made = vars(namespace["_Owner"])[name] if in_class else namespace[name]
    made = getattr(made, "__func__", made)
    if made.__code__.co_freevars != live.__code__.co_freevars:
        raise NotApplicable(f"the mutant of {where.function} changes its closure")
    return made
