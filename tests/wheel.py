"""The kit's wheel, built as a release builds it: from a copy of the checkout, outside the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.suite_runs import REPO, made_once, shared_dir

COPY_IGNORED = (
    ".git",
    ".venv",
    ".venv-tck",
    "node_modules",
    "build",
    "dist",
    "*.egg-info",
    "out",
    "__pycache__",
    ".tox",
)


def session_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kit's wheel, built once for the whole test session."""
    [wheel] = made_once(shared_dir(tmp_path_factory, "wheel"), "built", build_wheel).glob("dist/*.whl")
    return wheel


def build_wheel(root: Path) -> Path:
    """Build the kit's wheel under ``root`` (setuptools writes build/ and *.egg-info beside the sources it builds,
    so from a copy); the wheel's path."""
    source, dist = root / "source", root / "dist"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*COPY_IGNORED))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=root,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = dist.glob("nylorun_a2a_kit-*.whl")
    return wheel
