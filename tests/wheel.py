"""The kit's wheel, built as a release builds it: from a copy of the checkout, outside the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.suite_runs import REPO

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
