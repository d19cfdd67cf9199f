"""Neighbouring-dataset tests (SPEC §3): per stage and end to end, a dataset D and the same with
one extra user at the worst spot; the ε lower bound estimated from output-event frequencies
(Clopper–Pearson, :mod:`tests.dp_audit`) must stay under the claimed ε. Fixed seeds.

The same audit functions flag deliberately broken mechanisms in ``test_dp_canaries.py``."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.privacy import mechanisms as mech
from dpfed_core.federation.dp_prototypes import DPPrototypes, private_partition
from dpfed_core.privacy.ledger import PrivacyLedger
from tests.dp_audit import (audit_exponential_mechanism, audit_laplace_count, audit_outcomes,
                            audit_recovery, audit_row_scaling, audit_statistics)


def test_dp_laplace_count_stays_under_epsilon():
    lb = audit_laplace_count(mech.laplace_mechanism, 1.0)
    assert 0.6 < lb <= 1.0  # tight: the audit nearly attains the claim (so it has power)


@pytest.mark.parametrize("monotone", [True, False])
def test_dp_exponential_mechanism_stays_under_epsilon(monotone):
    lb = audit_exponential_mechanism(mech.exponential_mechanism, 1.0, monotone=monotone)
    assert lb <= 1.0


def test_dp_gumbel_top_s_stays_under_epsilon():
    # D: sums of a cluster; D' adds a user with the full Λ∞ = 1 on the two lowest coordinates
    # (monotone: sums only grow). Outcome = the ordered top-2 sequence.
    eps, s, runs = 1.0, 2, 40000
    u_a = np.array([3.0, 2.0, 1.0, 0.0])
    u_b = u_a + np.array([0.0, 0.0, 1.0, 1.0])
    g = np.random.default_rng(1)
    seqs = {q: i for i, q in enumerate(itertools.permutations(range(4), s))}
    code = lambda out: np.array([seqs[tuple(r)] for r in out])  # noqa: E731
    out_a = code(mech.gumbel_top_s(np.tile(u_a, (runs, 1)), s, 1.0, eps, g, monotone=True))
    out_b = code(mech.gumbel_top_s(np.tile(u_b, (runs, 1)), s, 1.0, eps, g, monotone=True))
    assert audit_outcomes(out_a, out_b) <= eps


def test_dp_gaussian_sums_stay_under_epsilon_delta():
    eps, delta, lam = 1.0, 1e-3, 2.0

    def sampler(shift):
        return lambda r, g: mech.gaussian_mechanism(np.full((r, 1), shift), lam, eps, delta, g)[0]

    assert audit_statistics(sampler(0.0), sampler(lam), 40000, seed=2, delta=delta) <= eps


@pytest.mark.parametrize("extra", [0.6, -0.6])  # joins the dense cube / creates a cube of its own
def test_dp_private_partition_stays_under_epsilon_delta(extra):
    eps_level, d_test, depth = 0.5, 0.01, 2
    gamma = mech.partition_threshold(eps_level, d_test)
    base = np.full((8, 1), 0.62)
    Y_b = np.vstack([base, [[extra]]])
    centres = np.array([-0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75])

    def sampler(Y):
        def sample(r, g):
            out = np.zeros((r, centres.size + 1))
            for i in range(r):
                C, _ = private_partition(Y, 1.0, depth, 1, eps_level, gamma, g)
                out[i, :-1] = np.isclose(C[:, :1], centres[None, :]).any(0)
                out[i, -1] = C.shape[0]
            return out
        return sample

    lb = audit_statistics(sampler(base), sampler(Y_b), 4000, seed=3, delta=depth * d_test)
    assert lb <= depth * eps_level


def _cluster_rows():
    D = np.array([[1.0, 0.0, 1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
    worst = np.ones((1, 6))  # the extra user: Λ∞ on every item, the largest possible contribution
    return D, np.vstack([D, worst])


@pytest.mark.parametrize("variant,support,scaling", [("paper", 3, "clip"), ("paper", 6, "clip"),
                                                     ("gaussian", 3, "clip"), ("gaussian", None, "normalise")])
def test_dp_recovery_stage_stays_under_epsilon(variant, support, scaling):
    # "normalise": every non-empty row is scaled to ℓ2 = Λ exactly, so the extra user adds a vector
    # of norm Λ (L2 sensitivity Λ, as claimed) even though D's rows are short
    D, Dp = _cluster_rows()
    meth = DPPrototypes(k=1, value_max=1.0, support=support, row_norm=2.0, variant=variant, row_scaling=scaling)
    eps = (0.5, 0.5, 1.0)
    d_sum = 1e-3 if variant == "gaussian" else 0.0
    lbs = audit_recovery(meth, D, Dp, 20000, eps, delta_sum=d_sum, seed=4)
    assert lbs["counts"] <= eps[0]
    total = eps[0] + eps[2] + (eps[1] if variant == "paper" and (support or 6) < 6 else 0.0)
    assert lbs["all"] <= total


def _release_features(method: DPPrototypes, X: np.ndarray, runs: int, g: np.random.Generator,
                      features) -> np.ndarray:
    """``runs`` releases of ``method`` on ``X``, each reduced to a feature vector for the audit."""
    Xs = sp.csr_matrix(X)
    out = []
    for _ in range(runs):
        ledger = PrivacyLedger(method.epsilon, method.delta)
        rel = method.release(Xs, g, ledger.for_entity("e"))
        out.append(features(rel))
        assert ledger.guarantee()[0] <= method.epsilon
    return np.array(out)


def _release_stats(method: DPPrototypes, X: np.ndarray, runs: int, g: np.random.Generator) -> np.ndarray:
    return _release_features(method, X, runs, g, lambda rel: np.concatenate(
        [rel.counts, rel.prototypes.ravel(), [rel.prototypes.sum(), (rel.prototypes > 0).sum()]]))


@pytest.mark.parametrize("k", [2])
def test_dp_end_to_end_release_stays_under_epsilon(k):
    D, Dp = _cluster_rows()
    eps, delta = 1.0, 1e-3
    meth = DPPrototypes(k=k, value_max=1.0, epsilon=eps, delta=delta, support=3, row_norm=2.0, variant="paper", cluster_size=None,
                        projection_dim=2, depth=2, n_grids=2, search_steps=2)
    lb = audit_statistics(lambda r, g: _release_stats(meth, D, r, g),
                          lambda r, g: _release_stats(meth, Dp, r, g), 1200, seed=5, delta=delta)
    assert lb <= eps


def _auto_k_stats(method: DPPrototypes, X: np.ndarray, runs: int, g: np.random.Generator) -> np.ndarray:
    def features(rel):
        P = rel.prototypes
        return [P.shape[0], rel.counts.sum(), rel.counts.max(), P.sum(), (P > 0).sum(), P[:, 0].max()]

    return _release_features(method, X, runs, g, features)


def test_dp_end_to_end_auto_k_stays_under_epsilon():
    # automatic k = clip(⌊n̂ / cluster_size⌋, 1, k): with cluster_size = 1 and n = 2 vs 3 the number of
    # released prototypes itself differs between D and D' unless n̂ is private — it is, via the size stage
    D, Dp = _cluster_rows()
    eps, delta = 1.0, 1e-3
    meth = DPPrototypes(k=3, value_max=1.0, epsilon=eps, delta=delta, row_norm=2.0, cluster_size=1.0,
                        projection_dim=2, depth=2, n_grids=2, search_steps=2)
    lb = audit_statistics(lambda r, g: _auto_k_stats(meth, D, r, g),
                          lambda r, g: _auto_k_stats(meth, Dp, r, g), 1200, seed=8, delta=delta)
    assert lb <= eps


@pytest.mark.parametrize("scaling", ["clip", "normalise"])
def test_dp_row_scaling_has_l2_sensitivity_lambda(scaling):
    # the extra user is the worst case for both: a full row (clipped / normalised to norm Λ)
    D, Dp = _cluster_rows()
    meth = DPPrototypes(k=1, value_max=1.0, row_norm=2.0, row_scaling=scaling)
    lb = audit_row_scaling(meth, D, Dp, 1.0, 1e-3, seed=10)
    assert 0.3 < lb <= 1.0  # tight enough to have power, never above the claim
