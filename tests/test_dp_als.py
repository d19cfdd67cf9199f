"""dp-als's statistics: what a site sends is the per-user algebra the module documents, in both
observation modes, and the server's item solve is the ridge solve of those sums."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.federation.dp_als import _observed_statistics
from dpfed_core.federation.protocol import FederatedRecommender
from dpfed_core.federation.summable import GRID, make_summable_method
from dpfed_core.privacy.ledger import PrivacyLedger

VMAX = 5.0


def _ratings(seed: int = 0, n: int = 40, m: int = 12) -> sp.csr_matrix:
    g = np.random.default_rng(seed)
    X = (g.random((n, m)) < 0.3) * g.integers(1, 8, (n, m)).astype(float)  # some above the bound Λ∞ = 5
    X[3] = 0.0  # a user without any entry
    return sp.csr_matrix(X)


def _naive_observed(X: sp.csr_matrix, V: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Per user, per item, as the module doc writes it (no vectorisation)."""
    M, r = V.shape
    G = np.zeros((M, r, r))
    B = np.zeros((M, r))
    X = X.tocsr()
    for u in range(X.shape[0]):
        cols = X.indices[X.indptr[u]:X.indptr[u + 1]]
        if cols.size == 0:
            continue
        x = np.clip(X.data[X.indptr[u]:X.indptr[u + 1]], 0, VMAX) / VMAX
        A = V[cols].T @ V[cols] + lam * np.eye(r)
        uf = np.maximum(np.linalg.solve(A, V[cols].T @ x), 0.0)
        if np.linalg.norm(uf) > 1e-12:
            uf = uf / np.linalg.norm(uf)
        a = 1.0 / math.sqrt(cols.size)
        for j, xj in zip(cols, x):
            G[j] += a * np.outer(uf, uf)
            B[j] += a * xj * uf
    return G, B


def test_observed_statistics_are_the_per_user_weighted_sums_of_the_module_doc(monkeypatch):
    import dpfed_core.federation.dp_als as als

    X = _ratings()
    V = np.random.default_rng(1).uniform(0, 1, (X.shape[1], 3))
    G_naive, B_naive = _naive_observed(X, V, 0.1)
    iu = np.triu_indices(3)
    w = np.where(iu[0] == iu[1], 1.0, math.sqrt(2.0))
    for chunk in (2 ** 22, 7 * 9):  # one block, and blocks of 7 users
        monkeypatch.setattr(als, "OBSERVED_CHUNK_CELLS", chunk)
        G, B = _observed_statistics(X, V, 0.1, VMAX)
        np.testing.assert_allclose(G, G_naive[:, iu[0], iu[1]] * w, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(B, B_naive, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_a_share_has_the_length_the_server_splits_sums_by(mode):
    X = _ratings()
    method = make_summable_method("dp-als", value_max=VMAX, epsilon=1.0, delta=1e-6, rank=3, max_items=8,
                                  mode=mode)
    public: dict = {"n_entities": 2}
    for stage in method.stages:
        share = method.share(X, np.random.default_rng(0), PrivacyLedger(1.0, 1e-6).for_entity("a"), 2,
                             stage=stage, public=public)
        assert share.values.size == method.share_length(stage, X.shape[1], public)
        public = method.combine(stage, share.values * 2, public, np.random.default_rng(0), 2)
    assert public["V"].shape == (X.shape[1], 4)
    assert ("observed-mode" in method.notes(public)[0]) == (mode == "observed")


def test_the_observed_item_solve_is_the_ridge_solve_of_the_summed_statistics():
    """Without noise (ε = ∞) the two sites' summed shares are their per-item statistics (each share
    rounded to the sums' grid), and the server's item factors are, item by item, the PSD-projected
    ridge solve max((Σ_h G_j,h + λI)⁻¹ Σ_h b_j,h, 0) of what it received."""
    sites = [_ratings(0), _ratings(1)]
    r, lam = 3, 0.2
    method = make_summable_method("dp-als", value_max=VMAX, epsilon=math.inf, rank=r, max_items=12, steps=1,
                                  lam=lam, mode="observed")
    public: dict = {"n_entities": 2}
    shares = [method.share(X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("a"), 2,
                           stage="popularity", public=public).values for X in sites]
    public = method.combine("popularity", sum(shares), public, np.random.default_rng(0), 2)
    V0 = public["V_als"].copy()
    total = sum(method.share(X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("a"), 2,
                             stage="als-1", public=public).values for X in sites)
    after = method.combine("als-1", total, public, np.random.default_rng(0), 2)
    M, k = V0.shape[0], r * (r + 1) // 2
    iu = np.triu_indices(r)
    G = sum(_naive_observed(X, V0, lam)[0] for X in sites)
    B = sum(_naive_observed(X, V0, lam)[1] for X in sites)
    received_G, received_B = total[:M * k].reshape(M, k), total[M * k:].reshape(M, r)
    np.testing.assert_allclose(received_G, G[:, iu[0], iu[1]], atol=GRID)  # two shares, each within GRID/2
    np.testing.assert_allclose(received_B, B, atol=GRID)
    want = np.zeros((M, r))
    for j in range(M):
        Gj = np.zeros((r, r))
        Gj[iu] = received_G[j]
        Gj = Gj + np.triu(Gj, 1).T
        ev, Q = np.linalg.eigh(Gj)
        Gj = Q @ np.diag(np.maximum(ev, 0.0)) @ Q.T
        want[j] = np.maximum(np.linalg.solve(Gj + lam * np.eye(r), received_B[j]), 0.0)
    np.testing.assert_allclose(after["V_als"], want, rtol=1e-9, atol=1e-12)


def test_the_runs_observation_mode_chooses_the_statistics():
    X = _ratings()
    from dpfed_core.data.dataset import FederatedDataset

    ds = FederatedDataset.from_parts(sp.vstack([X, _ratings(2)]).tocsr(), np.repeat(["a", "b"], 40),
                                     value_kind="ratings", value_max=VMAX, name="two")
    lengths = {}
    for mode in ("zero", "observed"):
        fit = FederatedRecommender(method="dp-als", rank=2, epsilon=1.0, delta=1e-6, random_state=0, max_iter=5,
                                   aggregation="secure", simulation=True, mode=mode,
                                   params={"max_items": 6}).fit(ds)
        lengths[mode] = fit.secure_sum_.size
        assert any(("observed-mode" in n) == (mode == "observed") for n in fit.notes_ if n.startswith("dp-als"))
    assert lengths == {"zero": 3 + 2 * 6, "observed": (3 + 2) * 6}
