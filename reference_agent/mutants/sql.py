"""The kit's own mutation operators for the SQL inside the reference agent's strings (no Python tool reads there).

A string is read as SQL when it holds a statement (SELECT, UPDATE, DELETE, INSERT) or a condition on a bound
parameter (``context_id=?``, `` AND seq<?``); an f-string's expressions are kept as they are and its literal text
is mutated around them. Each operator changes one place, and keeps the query's parameters, so the mutant runs:

- ``sql-where-dropped`` / ``sql-write-keyed-by-less``: one condition of a WHERE clause (of a read / of an UPDATE
  or DELETE) no longer limits it: ``c`` becomes ``(c OR 1)``.
- ``sql-equality-prefix``: ``x=?`` becomes ``instr(x, ?)=1``: any value the parameter begins.
- ``sql-equality-nocase``: ``x=?`` becomes ``x=? COLLATE NOCASE``.
- ``sql-bound-moved``: ``<`` and ``<=``, ``>`` and ``>=`` each take the other's place.
- ``sql-limit-moved``: ``LIMIT n`` becomes ``LIMIT n + 1``, and ``LIMIT n - 1``.
- ``sql-order-reversed``: every term of an ORDER BY goes the other way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

STATEMENT = re.compile(r"^\s*(SELECT|UPDATE|DELETE|INSERT|WITH)\b")
SQLISH = re.compile(r"\b(SELECT|UPDATE|DELETE|INSERT)\b|(=|<|>)\s*\?|^\s*AND\b")
WHERE = re.compile(r"\bWHERE\b")
WHERE_ENDS = re.compile(r"\b(ORDER BY|GROUP BY|LIMIT)\b")
SUBJECT = r"(?:[A-Za-z_][\w.]*|\x00\d+\x00)"
CONDITION = re.compile(
    rf"(?<![\w\x00]){SUBJECT}\s*(?P<op><=|>=|<>|!=|=|<|>)\s*(?P<value>\?|'[^']*'|\d+)"
    rf"|(?<![\w\x00]){SUBJECT}\s+(?:NOT\s+)?IN\s*\([^()]*\)"
)
LIMIT = re.compile(r"\bLIMIT\s+(\?|\d+)")
ORDER_BY = re.compile(r"\bORDER BY\s+(?P<terms>.+?)(?=\s*(\bLIMIT\b|$|\)))", re.S)
HOLE = re.compile("\x00(\\d+)\x00")
FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}

CodeOf = Callable[[Any], str]


def is_sql(node: Any, code_of: CodeOf) -> bool:
    template = _template(node, code_of)
    return template is not None and bool(SQLISH.search(template[0]))


def mutations(node: Any, code_of: CodeOf) -> Iterator[tuple[str, Any]]:
    """(operator, the string node it makes) for each place of the SQL in ``node``."""
    template = _template(node, code_of)
    if template is None or not SQLISH.search(template[0]):
        return
    text, holes = template
    for operator, changed in _changed(text):
        made = _node(changed, holes)
        if made is not None:
            yield operator, made


def _changed(text: str) -> Iterator[tuple[str, str]]:
    write = bool(re.match(r"^\s*(UPDATE|DELETE)\b", text))
    for start, end in _where(text):
        for found in CONDITION.finditer(text, start, end):
            condition = found.group(0)
            dropped = "sql-write-keyed-by-less" if write else "sql-where-dropped"
            yield dropped, _spliced(text, found.span(), f"({condition} OR 1)")
            op, value = found.group("op"), found.group("value")
            left = condition[: found.start("op") - found.start()].rstrip()
            if op == "=" and value == "?":
                yield "sql-equality-prefix", _spliced(text, found.span(), f"instr({left}, ?)=1")
                yield "sql-equality-nocase", _spliced(text, found.span(), f"{condition} COLLATE NOCASE")
            if op in FLIP:
                yield "sql-bound-moved", _spliced(text, found.span("op"), FLIP[op])
    for found in LIMIT.finditer(text):
        value = found.group(1)
        for step in ("+ 1", "- 1"):
            moved = f"{value} {step}" if value == "?" else str(max(0, int(value) + int(step.replace(" ", ""))))
            yield "sql-limit-moved", _spliced(text, found.span(1), moved)
    for found in ORDER_BY.finditer(text):
        terms = [_reversed(term) for term in found.group("terms").split(",")]
        yield "sql-order-reversed", _spliced(text, found.span("terms"), ", ".join(terms))


def _where(text: str) -> list[tuple[int, int]]:
    """Where the conditions of ``text`` are: its WHERE clause, or the whole of a fragment of one."""
    where = WHERE.search(text)
    if where:
        ends = WHERE_ENDS.search(text, where.end())
        return [(where.end(), ends.start() if ends else len(text))]
    if STATEMENT.match(text) or re.search(r"\b(SET|VALUES)\b", text):
        return []
    return [(0, len(text))]


def _reversed(term: str) -> str:
    term = term.strip()
    if re.search(r"\bDESC$", term, re.I):
        return re.sub(r"\s+DESC$", "", term, flags=re.I)
    return re.sub(r"\s+ASC$", "", term, flags=re.I) + " DESC"


def _spliced(text: str, span: tuple[int, int], new: str) -> str:
    return text[: span[0]] + new + text[span[1] :]


def _template(node: Any, code_of: CodeOf) -> tuple[str, list[str]] | None:
    """The text of a string node, its f-string expressions as holes (``\\x00n\\x00``); None if it is no text."""
    import libcst as cst

    text, holes = [], []
    for part in _parts(node):
        if isinstance(part, cst.SimpleString):
            if "b" in part.prefix.lower():
                return None
            text.append(part.evaluated_value)
        elif isinstance(part, cst.FormattedString):
            for piece in part.parts:
                if isinstance(piece, cst.FormattedStringText):
                    if "\\" in piece.value:
                        return None
                    text.append(piece.value.replace("{{", "{").replace("}}", "}"))
                else:
                    holes.append(code_of(piece))
                    text.append(f"\x00{len(holes) - 1}\x00")
        else:
            return None
    return "".join(text), holes


def _parts(node: Any) -> list[Any]:
    import libcst as cst

    if isinstance(node, cst.ConcatenatedString):
        return [*_parts(node.left), *_parts(node.right)]
    return [node]


def _node(text: str, holes: list[str]) -> Any:
    import libcst as cst

    if not holes:
        return cst.SimpleString(repr(text))
    quote = next((q for q in ('"', "'") if not any(q in hole for hole in holes)), None)
    if quote is None:
        return None
    pieces = HOLE.split(text)
    code = []
    for index, piece in enumerate(pieces):
        if index % 2:
            code.append(holes[int(piece)])
        else:
            escaped = piece.replace("\\", "\\\\").replace(quote, "\\" + quote)
            code.append(escaped.replace("{", "{{").replace("}", "}}"))
    return cst.parse_expression(f"f{quote}{''.join(code)}{quote}")
