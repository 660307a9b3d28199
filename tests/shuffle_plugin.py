"""A pytest plugin for the kit's own test runs: the suites' checks in a shuffled, reproducible order.

    pytest suites -p tests.shuffle_plugin --shuffle-seed=N -p no:randomly …

With ``--shuffle-seed=N`` the collected items are shuffled with ``random.Random(N)``, after the kit's plugin has
renamed and selected them (this hook runs last), so one seed gives one order for one selection of checks. The
header says the seed (``shuffle seed: N``); ``--shuffle-order-file=F`` also writes the order run, one node id a
line, so a differing verdict can be replayed in that order. Without ``--shuffle-seed`` the plugin does nothing.
Meant for serial runs: under xdist each worker would shuffle its own share and the order would be xdist's.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("shuffle", "the kit's shuffled-order runs (tests/shuffle_plugin.py)")
    group.addoption("--shuffle-seed", type=int, default=None, help="shuffle the collected items with this seed")
    group.addoption("--shuffle-order-file", default=None, help="write the shuffled order here, one node id a line")


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = config.getoption("shuffle_seed")
    return None if seed is None else f"shuffle seed: {seed}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = config.getoption("shuffle_seed")
    if seed is None:
        return
    shuffle(items, seed)
    order_file = config.getoption("shuffle_order_file")
    if order_file:
        Path(order_file).write_text("".join(f"{item.nodeid}\n" for item in items), encoding="utf-8")


def shuffle(items: list, seed: int) -> None:
    """Shuffle ``items`` in place; the same seed and the same items in the same order give the same result."""
    random.Random(seed).shuffle(items)
