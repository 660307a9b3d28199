"""The A2A TCK the kit's tests run: found from the environment, "not checked" without it, a failure on CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.tck import invocation as tck_invocation


def installed_tck() -> tuple[Path, Path]:
    """The TCK and its python from the environment; "not checked" without them, a failure on CI."""
    try:
        tck_dir = tck_invocation.find_tck_dir()
        if tck_dir is None:
            raise tck_invocation.TckRunError(f"{tck_invocation.DIR_VARIABLE} is not set")
        python = tck_invocation.find_tck_python(tck_dir)
        tck_invocation.check_python(python)
        return tck_dir, python
    except tck_invocation.TckRunError as exc:
        missing = str(exc)
    how = (
        "install it with `scripts/install_tck.sh <a2a-tck checkout> .venv-tck`, then set "
        f"{tck_invocation.DIR_VARIABLE}=<checkout> and {tck_invocation.PYTHON_VARIABLE}=.venv-tck/bin/python"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"the A2A TCK is needed on CI: {missing}; {how}", pytrace=False)
    pytest.skip(f"not checked: the A2A TCK is not installed here ({missing}); {how}")
