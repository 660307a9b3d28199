"""A pytest plugin for the kit's own tests: at the end of a collection, write each collected check's requirements and
axis members (its ``req`` and ``member`` marks) to the JSON file NYLORUN_KIT_MEMBERS_OUT names."""

from __future__ import annotations

import json
import os

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    found = {
        item.nodeid: {
            "req": [rid for mark in item.iter_markers("req") for rid in mark.args],
            "members": [list(mark.args) for mark in item.iter_markers("member")],
        }
        for item in session.items
    }
    with open(os.environ["NYLORUN_KIT_MEMBERS_OUT"], "w", encoding="utf-8") as out:
        json.dump(found, out)
