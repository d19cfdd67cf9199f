"""Canaries (SPEC §3): the audit harness of ``test_dp_neighbours.py`` must *catch* deliberately
broken mechanisms — halved noise, the true count as denominator, bounds read from the data. Each
test calls the very same audit function as the real test and asserts the estimated ε lower bound
exceeds the claimed ε."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from dpfed_core.privacy import mechanisms as mech
from dpfed_core.federation.dp_prototypes import DPPrototypes
from dpfed_core.federation.prototype_mechanisms import cluster_indicator
from tests.dp_audit import (audit_exponential_mechanism, audit_laplace_count, audit_recovery,
                            patch_sampler, ScaledSampler)
from tests.test_dp_neighbours import _cluster_rows


def halved_laplace(values, sensitivity, epsilon, rng, **charge):
    """BROKEN: half the Laplace scale the privacy map requires."""
    return mech.laplace_mechanism(values, sensitivity / 2, epsilon, rng, **charge)


def halved_em(utilities, sensitivity, epsilon, rng, monotone=False, **charge):
    """BROKEN: Gumbel scale halved (ε spent is really 2ε)."""
    return mech.exponential_mechanism(utilities, sensitivity / 2, epsilon, rng, monotone=monotone, **charge)


class TrueCountDenominator(DPPrototypes):
    """BROKEN: divides the noisy sums by the *true* cluster size."""

    def _recover(self, Xc, Xs, labels, eps_cnt, eps_sup, eps_sum, delta_sum, rng, ledger, tag, k=None):
        P, noisy_n = super()._recover(Xc, Xs, labels, eps_cnt, eps_sup, eps_sum, delta_sum, rng, ledger, tag, k=k)
        true_n = np.asarray(cluster_indicator(labels, self.k).sum(1)).ravel()
        # undo the noisy denominator, apply the true one (the bug), clip again
        return np.clip(P * np.maximum(noisy_n, 1)[:, None] / np.maximum(true_n, 1)[:, None],
                       0, self.value_max), noisy_n


class DataDerivedBounds(DPPrototypes):
    """BROKEN: takes Λ∞ from the data (the largest value) instead of the public parameter."""

    def _bounds(self, X):
        vmin, _, lam, s = super()._bounds(X)
        vmax = float(X.max()) if X.nnz else 1.0
        self.value_max = vmax
        return vmin, vmax, lam, s


def test_dp_canary_halved_laplace_is_caught():
    assert audit_laplace_count(halved_laplace, 1.0) > 1.0
    assert audit_laplace_count(mech.laplace_mechanism, 1.0) <= 1.0


def test_dp_canary_halved_exponential_mechanism_is_caught():
    assert audit_exponential_mechanism(halved_em, 1.0, monotone=True) > 1.0


def test_dp_canary_halved_noise_in_recovery_is_caught(monkeypatch):
    patch_sampler(monkeypatch, lambda s: ScaledSampler(s, 0.5))
    D, Dp = _cluster_rows()
    meth = DPPrototypes(k=1, value_max=1.0, variant="paper", support=3, row_norm=2.0)
    eps = (0.5, 0.5, 1.0)
    assert audit_recovery(meth, D, Dp, 20000, eps, seed=4)["counts"] > eps[0]


def test_dp_canary_true_count_denominator_is_caught():
    # D: one user with Λ∞ on every item; D': the same plus a user with an empty row, which changes
    # only the cluster size. Claimed: all of ε in the three recovery stages.
    D = np.ones((1, 4))
    Dp = np.vstack([D, np.zeros((1, 4))])
    meth = TrueCountDenominator(k=1, value_max=1.0, variant="paper", support=4, row_norm=2.0)
    eps = (0.05, 0.05, 2.0)
    lbs = audit_recovery(meth, D, Dp, 20000, eps, seed=6)
    assert lbs["all"] > sum(eps)
    # and the correct mechanism passes the identical audit
    ok = audit_recovery(DPPrototypes(k=1, value_max=1.0, variant="paper", support=4, row_norm=2.0), D, Dp, 20000, eps, seed=6)
    assert ok["all"] <= sum(eps)


def test_dp_canary_data_derived_bounds_are_caught():
    # D: small values; D': plus a user with a huge value that a public bound would clip to 1
    D = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0]])
    Dp = np.vstack([D, [[50.0, 50.0, 50.0, 50.0]]])
    eps = (0.5, 0.5, 1.0)
    lbs = audit_recovery(DataDerivedBounds(k=1, value_max=1.0, variant="paper", support=2, row_norm=2.0), D, Dp, 20000, eps, seed=7)
    assert lbs["all"] > sum(eps)
    ok = audit_recovery(DPPrototypes(k=1, value_max=1.0, variant="paper", support=2, row_norm=2.0), D, Dp, 20000, eps, seed=7)
    assert ok["all"] <= sum(eps)
