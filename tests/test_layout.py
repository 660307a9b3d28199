"""The house: one room per job, each used through its public face, each using only the rooms below it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.suite_runs import REPO

# From the bottom up: a room may import the rooms before it, never one after it.
ROOMS = ("client", "push", "options", "target", "requirements", "scenarios", "tck", "gate", "plugin", "runs")
PREFIX = "nylorun_a2a_kit.fixtures."


def _imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += (
                [f"{node.module}.{alias.name}" for alias in node.names]
                if node.module + "." == PREFIX
                else [node.module]
            )
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name.startswith(PREFIX)]


def test_the_suites_import_only_the_rooms_faces():
    deep = {
        f"{path.name}: {name}"
        for path in (REPO / "suites").glob("*.py")
        for name in _imports(path)
        if name.removeprefix(PREFIX).count(".") > 0
    }
    assert not deep, f"the suites reach past a room's face: {sorted(deep)}"


def test_each_room_uses_only_the_rooms_below_it():
    upward = []
    for rank, room in enumerate(ROOMS):
        for path in (REPO / "fixtures" / room).glob("*.py"):
            for name in _imports(path):
                used = name.removeprefix(PREFIX).split(".")[0]
                if used in ROOMS and ROOMS.index(used) > rank:
                    upward.append(f"{room}/{path.name} uses {used}")
    assert not upward, upward


def test_every_room_has_a_public_face():
    for room in ROOMS:
        face = (REPO / "fixtures" / room / "__init__.py").read_text(encoding="utf-8")
        assert ast.get_docstring(ast.parse(face)) and "__all__" in face, f"{room} has no documented public face"
    assert sorted(p.name for p in (REPO / "fixtures").iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(
        ROOMS
    )
