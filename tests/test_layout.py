"""The house: one room per job, each used through its public face, each using only the rooms below it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.suite_runs import REPO

# From the bottom up: a room may import the rooms before it, never one after it.
ROOMS = (
    "oracle",  # below the client: the client hands it every answer
    "client",
    "push",
    "options",
    "target",
    "requirements",
    "scenarios",
    "tck",
    "gate",
    "plugin",
    "runs",
    "mutation",
)
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


def _modules(path: Path) -> list[str]:
    """Every module ``path`` imports."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return found


def test_no_test_imports_the_benchmarks():
    """The benchmarks measure the kit and may use the kit's tests' helpers; the kit's tests never use a benchmark."""
    importing = {
        f"{path.relative_to(REPO)}: {name}"
        for path in (REPO / "tests").rglob("*.py")
        for name in _modules(path)
        if name == "benchmarks" or name.startswith("benchmarks.")
    }
    assert not importing, sorted(importing)


def test_the_benchmarks_and_scripts_run_the_suites_through_the_runs_room():
    """No benchmark or script spells a pytest command of its own or reads JUnit XML itself: the runs room's command
    (``runs.command``) and readers (``runs.Outcomes``, ``fold.junit_cases``) are the only ones."""
    own = []
    for path in [*(REPO / "benchmarks").rglob("*.py"), *(REPO / "scripts").glob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own += [f"{path.relative_to(REPO)} imports {name}" for name in _modules(path) if name.startswith("xml.")]
        own += [
            f"{path.relative_to(REPO)}:{node.lineno} spells {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (node.value == "pytest" or node.value.startswith("--junitxml"))
        ]
    assert not own, own
