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


def test_zero_mode_statistics_are_the_per_user_sums_of_the_module_doc():
    """Without noise a zero-mode ALS share is G = Σ_u u uᵀ (its upper triangle) and B = Σ_u u x̃_Sᵀ
    (r × |S|, row-major), x̃ the user's row clipped to [0, Λ∞] and scaled to ℓ2 = 1, restricted to
    S, and u = max((VᵀV + λI)⁻¹ Vᵀ x̃_S, 0) scaled to ℓ2 = 1 — per user, as the module doc writes it."""
    X = _ratings(4)
    r, lam = 3, 2.0
    method = make_summable_method("dp-als", value_max=VMAX, epsilon=math.inf, rank=r, lam=lam, max_items=12)
    items = np.array([0, 2, 3, 5, 6, 8, 9, 11])
    V = np.random.default_rng(2).uniform(-0.2, 1, (items.size, r))  # some negative solves to project
    share = method.share(X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("a"), 2,
                         stage="als-1", public={"items": items, "V_als": V}).values
    G, B, negative = np.zeros((r, r)), np.zeros((r, items.size)), 0
    for row in X.toarray():
        x = np.clip(row, 0, VMAX)
        if not x.any():
            continue
        xs = (x / np.linalg.norm(x))[items]
        u = np.linalg.solve(V.T @ V + lam * np.eye(r), V.T @ xs)
        negative += int((u < 0).any())
        u = np.maximum(u, 0.0)
        if np.linalg.norm(u) > 1e-12:
            u = u / np.linalg.norm(u)
        G += np.outer(u, u)
        B += np.outer(u, xs)
    assert negative > 0  # the projection on u ≥ 0 is exercised
    iu = np.triu_indices(r)
    np.testing.assert_allclose(share, np.concatenate([G[iu], B.ravel()]), atol=GRID / 2 + 1e-12)


def test_the_item_solve_projects_the_noisy_gram_on_the_psd_cone():
    from dpfed_core.federation.dp_als import _item_solve

    Q = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))[0]
    G = Q @ np.diag([2.0, 0.5, -1.5]) @ Q.T  # noise made it indefinite
    B = np.array([[1.0, 0.2], [0.3, 0.4], [0.5, 1.0]])
    G_psd = Q @ np.diag([2.0, 0.5, 0.0]) @ Q.T
    np.testing.assert_allclose(_item_solve(G, B, 0.1), np.maximum(np.linalg.solve(G_psd + 0.1 * np.eye(3), B), 0),
                               atol=1e-12)


def test_the_server_learns_on_the_most_popular_items_from_the_unit_popularity_and_a_ridge_over_the_noise():
    """combine: the ``max_items`` items of largest noisy popularity; V₀'s first column the unit
    popularity on them; each item solve's ridge λ + 2√r·σ_sum with σ_sum = σ/divisor·√(shares summed);
    the last step's V the item factors followed by the unit popularity on the whole item axis."""
    r, lam, m = 2, 0.3, 9
    method = make_summable_method("dp-als", value_max=VMAX, epsilon=1.0, delta=1e-6, rank=r, lam=lam, max_items=4,
                                  steps=2, max_dropouts=1)
    pop = np.array([3.0, 9.0, -1.0, 7.0, 0.5, 8.0, 2.0, 6.5, 1.0])
    public = method.combine("popularity", pop, {"n_entities": 4}, np.random.default_rng(0), 4)
    assert public["items"].tolist() == [1, 3, 5, 7]
    np.testing.assert_allclose(public["V_als"][:, 0], pop[[1, 3, 5, 7]] / np.linalg.norm(pop[[1, 3, 5, 7]]))
    plan = method.budget(4)
    k = r * (r + 1) // 2
    total = np.concatenate([[2.0, 0.1, 1.5], np.random.default_rng(1).uniform(0, 1, r * 4)])
    for stage in ("als-1", "als-2"):
        public = method.combine(stage, total, public, np.random.default_rng(0), 3)
        sigma_sum = plan["sigma"][stage] / plan["divisor"] * math.sqrt(3)
        assert public["ridge"] == pytest.approx(lam + 2 * math.sqrt(r) * sigma_sum, rel=1e-12)
        assert public["ridge"] > lam + 1e-3
    assert total.size == k + r * 4
    g = np.maximum(pop, 0.0)
    np.testing.assert_allclose(public["V"][:, -1], g / np.linalg.norm(g))
    assert public["V"].shape == (m, r + 1) and not public["V"][[0, 2, 4, 6, 8], :r].any()


@pytest.mark.parametrize("pop_share", [0.0, 1.0])
def test_a_popularity_share_of_zero_or_all_of_the_budget_is_refused(pop_share):
    from dpfed_core.errors import ConfigError

    method = make_summable_method("dp-als", epsilon=1.0, pop_share=pop_share)
    with pytest.raises(ConfigError, match="pop_share must be strictly between 0 and 1"):
        method.budget(2)


@pytest.mark.parametrize("param, value, message", [
    ("steps", 0, "steps must be a whole number ≥ 1"),
    ("max_items", 1, "max_items must be a whole number ≥ 2"),
    ("rank", 0, "rank must be a whole number ≥ 1"),
    ("mode", "both", "mode must be 'zero' or 'observed'"),
])
def test_an_als_setting_out_of_range_is_refused_naming_it(param, value, message):
    from dpfed_core.errors import ConfigError

    method = make_summable_method("dp-als", epsilon=1.0, **{param: value})
    with pytest.raises(ConfigError, match=message):
        method.budget(2)
    make_summable_method("dp-als", epsilon=1.0, steps=1, max_items=2, rank=1).budget(2)
