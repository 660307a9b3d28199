"""A fixed sample of the derived mutants keeps its score: each that breaks a rule is killed, each equivalent passed.

The sample is seeded (three mutants an axis, and every axis's equivalent ones among them are judged on the checks
of the rules they read); ``python -m benchmarks.mutation_score`` runs the whole score.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from benchmarks.mutation_score import judge, sampled
from nylorun_a2a_kit.reference_agent.mutants import AXES, catalog

pytestmark = pytest.mark.slow

SEED, PER_AXIS = 7, 3


def test_a_fixed_sample_of_mutants_keeps_its_score(tmp_path):
    chosen = sampled(catalog(), list(AXES), PER_AXIS, SEED)
    equivalents = [m for m in catalog().values() if m.equivalent]
    chosen += [m for m in equivalents[:: max(1, len(equivalents) // 3)] if m not in chosen]
    with ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = list(pool.map(lambda m: judge(m, tmp_path, equivalents_full=False), chosen))
    wrong = [(v.name, v.outcome, v.by[:1]) for v in verdicts if v.outcome in ("survived", "WRONG")]
    assert not wrong, f"mutants no check kills, or equivalents a check fails: {wrong}"
    assert {v.axis for v in verdicts} == set(AXES) and any(v.equivalent for v in verdicts)
