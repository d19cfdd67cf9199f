"""Xin & Jaakkola (2014): Eq. 4 = ridge on V, the EM fixed point = Soft-Impute, public-user
selection, the PMC/PMD mechanisms' marginals, and engine smoke tests."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.methods.comparison import xin
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.experiments import run_method
from dpfed_core.methods import get_method


def low_rank_ratings(seed=0, n=40, m=25, density=0.5):
    rng = np.random.default_rng(seed)
    full = 3 + rng.normal(size=(n, 2)) @ rng.normal(size=(2, m))
    mask = rng.random((n, m)) < density
    mask[np.arange(n), rng.integers(0, m, n)] = True
    return sp.csr_matrix(np.where(mask, full, 0.0)), full, mask


def test_local_factors_is_eq4_push_through():
    rng = np.random.default_rng(1)
    m, r, rho = 12, 3, 0.7
    V = rng.normal(size=(m, r))
    mu = rng.normal(size=m)
    phi = np.array([0, 2, 5, 7, 11])
    y = rng.normal(size=len(phi)) + mu[phi]
    X = sp.csr_matrix((y, (np.zeros(len(phi), int), phi)), shape=(1, m))
    u = xin.local_factors(X, mu, V, rho)[0]
    Sigma = V @ V.T
    # Eq. 4: x̂ = μ + Σ_{:,φ} (ρI + Σ_φφ)⁻¹ (y − μ_φ)
    eq4 = mu + Sigma[:, phi] @ np.linalg.solve(rho * np.eye(len(phi)) + Sigma[np.ix_(phi, phi)], y - mu[phi])
    np.testing.assert_allclose(mu + V @ u, eq4, atol=1e-12)


def test_shrink_step_soft_thresholds_singular_values():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(8, 6))
    V = xin.shrink_step(A, None, tau=1.0)
    _, d, Qt = np.linalg.svd(A, full_matrices=False)
    shrunk = np.maximum(d - 1.0, 0)
    np.testing.assert_allclose(V @ V.T, Qt.T @ np.diag(shrunk) @ Qt, atol=1e-12)
    # weighted rows = rows scaled by √w
    w = rng.uniform(0.2, 1, 8)
    np.testing.assert_allclose(xin.shrink_step(A, w, 1.0) @ xin.shrink_step(A, w, 1.0).T,
                               xin.shrink_step(A * np.sqrt(w)[:, None], None, 1.0)
                               @ xin.shrink_step(A * np.sqrt(w)[:, None], None, 1.0).T, atol=1e-12)


def test_em_fixed_point_is_soft_impute_solution():
    X, full, mask = low_rank_ratings(3, n=30, m=15)
    tau = 2.0
    mu, V, it = xin.fit_em(X, tau, max_rank=None, max_iter=3000, tol=1e-12)
    C = xin.complete_rows(X, mu, V, tau)
    # Soft-Impute fixed point: X̂ = SVT_τ(C) and C = P_Ω(Y − μ) + P_Ω⊥(X̂)
    U_, d, Qt = np.linalg.svd(C, full_matrices=False)
    Xhat = U_ @ np.diag(np.maximum(d - tau, 0)) @ Qt
    np.testing.assert_allclose(np.where(mask, 0, C), np.where(mask, 0, Xhat), atol=1e-5)


def test_public_selection_heaviest_and_fraction():
    X, _, _ = low_rank_ratings(4, n=50)
    counts = np.diff(X.indptr)
    pub = xin.select_public_users(X, fraction=0.1)
    assert len(pub) == 5 and counts[pub].min() >= np.sort(counts)[-5]
    assert len(xin.select_public_users(X, fraction=0.001)) == 1
    assert len(xin.select_public_users(X, n_public=7, how="random", rng=np.random.default_rng(0))) == 7


def test_more_public_users_do_not_hurt_much_and_full_is_best():
    X, full, mask = low_rank_ratings(5, n=120, m=30, density=0.4)
    test = ~mask
    rows, cols = np.nonzero(test)
    err = {}
    for f, mech in [(0.05, "none"), (0.5, "none"), (1.0, "full")]:
        m = xin.XinJaakkola(public_fraction=f, tau=1.0, mechanism=mech, max_iter=200).fit(X)
        err[(f, mech)] = np.sqrt(np.mean((m.predict(rows, cols) - full[test]) ** 2))
    assert err[(1.0, "full")] <= err[(0.05, "none")] + 1e-9
    assert err[(0.5, "none")] < err[(0.05, "none")]


def test_pmc_release_signs_and_magnitude():
    rng = np.random.default_rng(6)
    r = np.array([1.0, -2.0, 0.5, -0.5, 3.0])
    outs = np.array([xin.pmc_release(r, rng) for _ in range(2000)])
    h = np.mean(np.abs(r))
    np.testing.assert_allclose(np.abs(outs), h)
    # the sign pattern is revealed up to one global flip (why it is not DP)
    assert np.all(np.abs(np.sign(outs) @ np.sign(r)) == len(r))
    assert abs(outs[:, 0].mean()) < 0.1 * h  # E[u_i] = 0


def test_pmd_columns_are_permutations_and_marginals_uniform():
    rng = np.random.default_rng(7)
    S = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    mu = np.full(6, 3.0)
    r = np.array([5.0, 5.0, 1.0, 1.0, 3.0, 4.0])
    outs = np.array([xin.pmd_release(r, mu, S, rng, sweeps=2, tries=3) for _ in range(1500)]) + mu
    assert set(np.unique(outs)) <= set(S)
    for j in range(6):  # every coordinate uniform on S whatever r is (first-order deniability)
        freq = np.array([(outs[:, j] == s).mean() for s in S])
        assert np.abs(freq - 0.2).max() < 0.05
    # …but the released vector correlates with r′ (second-order information is kept)
    assert np.mean((outs - mu) @ (r - mu) > 0) > 0.5 or np.mean(((outs - mu) @ (r - mu)) ** 2) > 0


def ratings_dataset():
    X, full, mask = low_rank_ratings(8, n=60, m=30, density=0.5)
    X = sp.csr_matrix(np.where(mask, np.clip(np.rint(full), 1, 5), 0.0))
    return FederatedDataset.from_parts(X, np.where(np.arange(60) < 30, "A", "B"), value_kind="ratings")


@pytest.mark.parametrize("name", ["xin-public", "xin-pmc", "xin-pmd", "xin-full"])
def test_registered_methods_run(name):
    ds = ratings_dataset()
    params = {"public_fraction": 0.1, "tau": 2.0, "max_iter": 30}
    if name == "xin-pmd":
        params.update(pmd_sweeps=1, pmd_tries=1)
    doc, res = run_method(ds, RunConfig(method=name, mode="observed", n_hidden=3, method_params=params))
    assert np.isfinite(doc["overall"]["test_rmse"])
    spec = get_method(name)
    assert not spec.uses_epsilon and math.isinf(doc["privacy"]["epsilon"])
    if name in ("xin-pmc", "xin-pmd", "xin-public"):
        assert "not differential privacy" in spec.privacy


# ------------------------------------------------------------------------------------ stated rules
def test_the_share_of_public_users_is_rounded_up():
    X, _, _ = low_rank_ratings(4, n=10)
    assert len(xin.select_public_users(X, fraction=0.25)) == 3  # ⌈2.5⌉
    assert len(xin.select_public_users(X, fraction=0.11)) == 2  # ⌈1.1⌉


def test_an_item_no_public_user_rated_has_the_global_mean():
    X = sp.csr_matrix(np.array([[4.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))
    np.testing.assert_allclose(xin.item_means(X), [4.0, 3.0, 2.5])


def test_the_rank_of_v_is_capped_at_max_rank():
    rows = np.random.default_rng(3).normal(size=(8, 6)) * 5
    assert xin.shrink_step(rows, None, 0.1).shape[1] == 6
    assert xin.shrink_step(rows, None, 0.1, max_rank=2).shape[1] == 2


def test_private_users_stream_in_descending_order_of_their_ratings(monkeypatch):
    X, _, _ = low_rank_ratings(9, n=12, m=10, density=0.5)
    seen = []
    real = xin.complete_rows

    def record(Xb, mu, V, rho):
        if Xb.shape[0] == 1:  # a private user completing its own row (the public users are 2)
            seen.append(int(Xb.nnz))
        return real(Xb, mu, V, rho)

    monkeypatch.setattr(xin, "complete_rows", record)
    xin.XinJaakkola(n_public=2, tau=1.0, mechanism="pmc", batch=1, max_iter=5, random_state=0).fit(X)
    assert len(seen) == 10 and seen == sorted(seen, reverse=True) and seen[0] > seen[-1]


def test_pmd_draws_from_every_rating_of_the_scale_up_to_the_value_bound():
    ds = ratings_dataset()
    params = {"public_fraction": 0.1, "tau": 2.0, "max_iter": 5, "pmd_sweeps": 1, "pmd_tries": 1}
    _, res = run_method(ds, RunConfig(method="xin-pmd", mode="observed", n_hidden=3, method_params=params))
    assert res.model.values == tuple(float(v) for v in range(1, int(ds.value_max) + 1))
    assert res.model.values[-1] == float(ds.value_max)


@pytest.mark.parametrize("weight", [None, 0.3])
def test_private_vectors_enter_the_m_step_at_the_private_weight(monkeypatch, weight):
    X, _, _ = low_rank_ratings(10, n=12, m=8)
    seen = []
    real = xin.fit_em

    def record(*args, **kw):
        if kw.get("extra_weights") is not None:
            seen.append(np.asarray(kw["extra_weights"]))
        return real(*args, **kw)

    monkeypatch.setattr(xin, "fit_em", record)
    kw = {} if weight is None else {"private_weight": weight}
    xin.XinJaakkola(n_public=2, tau=1.0, mechanism="pmc", batch=5, max_iter=5, random_state=0, **kw).fit(X)
    assert [len(w) for w in seen] == [5, 10]
    assert all(np.all(w == (0.5 if weight is None else weight)) for w in seen)
