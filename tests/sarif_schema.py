"""The OASIS SARIF 2.1.0 schema (its final draft, rtm.5) as Microsoft's ``@microsoft/jest-sarif`` ships it (``npm
ci`` installs it), and a SARIF file checked against it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = REPO / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"


def valid_sarif(path: Path) -> dict:
    """The SARIF log at ``path``, which the schema holds valid; the test skips, saying why, without the schema."""
    if not SARIF_SCHEMA.is_file():
        missing = f"{SARIF_SCHEMA.relative_to(REPO)} comes with npm ci"
        if os.environ.get("CI") == "true":
            pytest.fail(f"no SARIF schema: {missing}, which .ci/run runs")
        pytest.skip(f"not checked: no SARIF schema ({missing})")
    log = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return log
