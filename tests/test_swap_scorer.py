"""The local search's incremental nearest-two state gives exactly the swap losses of a
fresh computation, over random swap sequences with tied distances and duplicate candidates."""
from __future__ import annotations

import numpy as np
import pytest

from dpfed_core.federation.prototype_mechanisms import _SwapScorer


@pytest.mark.parametrize("seed", range(4))
def test_incremental_swap_scores_equal_a_fresh_computation(seed):
    g = np.random.default_rng(seed)
    for _ in range(8):
        M = int(g.integers(3, 30))
        k = int(min(g.integers(1, 6), M - 1))
        Y = np.round(g.standard_normal((400, 3)), 1)  # rounded: many exact ties
        C = np.round(g.standard_normal((M, 3)), 1)
        C[M // 2] = C[0]  # a duplicate candidate
        inc = _SwapScorer(Y, C, 4.0)
        Z = g.choice(M, k, replace=False)
        for _ in range(8):
            s_inc, cur_inc = inc.scores(Z)
            s_ref, cur_ref = _SwapScorer(Y, C, 4.0).scores(Z)
            np.testing.assert_allclose(s_inc, s_ref, atol=1e-3)
            assert abs(cur_inc - cur_ref) < 1e-3
            Z = Z.copy()
            Z[int(g.integers(k))] = g.choice(np.setdiff1d(np.arange(M), Z))


def test_chunked_scorer_matches_cached():
    g = np.random.default_rng(9)
    Y, C = g.standard_normal((300, 2)), g.standard_normal((12, 2))
    a, b = _SwapScorer(Y, C, 4.0), _SwapScorer(Y, C, 4.0, chunk=64)
    b.D = None  # force the chunked path
    Z = np.array([0, 3, 5])
    for c in (7, 8, 1):
        np.testing.assert_allclose(a.scores(Z)[0], b.scores(Z)[0], atol=1e-3)
        Z = Z.copy()
        Z[1] = c
