"""tests/shuffle_plugin.py: one seed, one order; no seed, the collection order."""

from __future__ import annotations

import re

pytest_plugins = ["pytester"]

TESTS = "\n".join(f"def test_{i:02d}():\n    pass\n" for i in range(30))


def ran(pytester, *args: str) -> list[str]:
    pytester.makepyfile(test_many=TESTS)
    result = pytester.runpytest("-p", "tests.shuffle_plugin", "-p", "no:nylorun_a2a_kit", "-v", *args)
    result.assert_outcomes(passed=30)
    return re.findall(r"::(test_\d\d) PASSED", result.stdout.str())


def test_a_seed_gives_one_order_other_than_the_collection_order(pytester):
    collected = ran(pytester)
    assert collected == sorted(collected)
    once, again, other = (ran(pytester, f"--shuffle-seed={seed}") for seed in (7, 7, 8))
    assert once == again and sorted(once) == collected
    assert once != collected and other != once


def test_the_header_names_the_seed_and_the_order_file_holds_the_order(pytester):
    pytester.makepyfile(test_many=TESTS)
    order = pytester.path / "order.txt"
    result = pytester.runpytest(
        "-p",
        "tests.shuffle_plugin",
        "-p",
        "no:nylorun_a2a_kit",
        "-v",
        "--shuffle-seed=5",
        f"--shuffle-order-file={order}",
    )
    result.stdout.fnmatch_lines(["shuffle seed: 5"])
    ran_order = re.findall(r"::(test_\d\d) PASSED", result.stdout.str())
    assert [line.rsplit("::", 1)[1] for line in order.read_text().splitlines()] == ran_order
