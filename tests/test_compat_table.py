"""docs/compatibility.md is what scripts/compat_table.py makes of the peers' checked-in verdicts."""

from __future__ import annotations

import runpy

from tests.suite_runs import REPO


def test_the_compatibility_table_is_the_checked_in_verdicts():
    script = runpy.run_path(str(REPO / "scripts" / "compat_table.py"))
    written = (REPO / "docs" / "compatibility.md").read_text(encoding="utf-8")
    assert written == script["render"](), "regenerate it: .venv/bin/python scripts/compat_table.py"
