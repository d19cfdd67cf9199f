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
    # full EM has no public users: it reads no share of them
    params = {"tau": 2.0, "max_iter": 30, **({} if name == "xin-full" else {"public_fraction": 0.1})}
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


# ------------------------------------------------------------------------------------ the paper's steps by hand
def test_the_public_users_are_the_heaviest_with_ties_taken_by_index():
    counts = [1, 3, 2, 3, 0]
    X = sp.csr_matrix(np.array([[1.0] * c + [0.0] * (4 - c) for c in counts]))
    assert list(xin.select_public_users(X, n_public=1)) == [1]
    assert list(xin.select_public_users(X, n_public=2)) == [1, 3]
    assert list(xin.select_public_users(X, n_public=3)) == [1, 2, 3]


@pytest.mark.parametrize("shape", [(230, 260), (260, 230)])
def test_the_m_step_through_the_gram_matrix_is_the_thin_svds_soft_threshold(shape):
    """Above 200 rows and columns the M-step goes through the smaller Gram matrix; it must give the
    same V Vᵀ = Q diag(d − τ)₊ Qᵀ, and its rank cap must keep the largest singular values."""
    n, m = shape
    rng = np.random.default_rng(12)
    A = 3 * rng.normal(size=(n, 5)) @ rng.normal(size=(5, m)) + rng.normal(size=(n, m))
    _, d, Qt = np.linalg.svd(A, full_matrices=False)
    tau = 60.0
    assert (d > tau).sum() == 5  # the test needs several singular values above τ
    for cap in (None, 3):
        keep = 5 if cap is None else cap
        V = xin.shrink_step(A, None, tau, max_rank=cap)
        assert V.shape == (m, keep)
        want = Qt[:keep].T @ np.diag(d[:keep] - tau) @ Qt[:keep]
        np.testing.assert_allclose(V @ V.T, want, atol=1e-8 * np.abs(want).max())


def test_the_e_step_keeps_each_observed_rating_centred_and_fills_the_rest_by_eq4():
    X = sp.csr_matrix(np.array([[4.0, 0.0, 0.0], [0.0, 1.0, 2.0]]))
    mu = np.array([3.0, 2.0, 1.0])
    V = np.array([[1.0], [2.0], [0.5]])
    # user 0: u = 1·(4 − 3)/(1 + ρ) = 1/3 with ρ = 2; user 1: u = (2·(−1) + 0.5·1)/(4 + 0.25 + 2) = −0.24
    np.testing.assert_allclose(xin.local_factors(X, mu, V, 2.0), [[1 / 3], [-0.24]])
    np.testing.assert_allclose(xin.complete_rows(X, mu, V, 2.0), [[1.0, 2 / 3, 1 / 6], [-0.24, -1.0, 1.0]])


def test_em_iterates_until_the_relative_change_is_below_tol_or_max_iter():
    X, _, _ = low_rank_ratings(13, n=30, m=15)
    _, _, it = xin.fit_em(X, 2.0, max_iter=500, tol=1e-4)
    assert 3 < it < 500
    assert xin.fit_em(X, 2.0, max_iter=3, tol=1e-4)[2] == 3


def test_frozen_private_rows_enter_the_m_step_at_their_weights_after_a_warm_started_e_step():
    X, _, _ = low_rank_ratings(14, n=6, m=10, density=0.6)
    rng = np.random.default_rng(15)
    E = rng.normal(size=(3, 10))
    V0 = rng.normal(size=(10, 2))
    w = np.array([0.5, 0.2, 0.9])
    mu, V, _ = xin.fit_em(X, 0.5, max_iter=1, extra_rows=E, extra_weights=w, V0=V0, max_rank=None)
    C = xin.complete_rows(X, xin.item_means(X), V0, 0.5)
    want = xin.shrink_step(np.vstack([C, E]), np.concatenate([np.ones(6), w]), 0.5)
    np.testing.assert_allclose(V @ V.T, want @ want.T, atol=1e-12)


def test_pmc_gives_a_centred_zero_a_random_sign_and_takes_a_public_h():
    rng = np.random.default_rng(16)
    r = np.array([0.0, 1.0, -1.0, 2.0])
    outs = np.array([xin.pmc_release(r, rng) for _ in range(400)])
    np.testing.assert_allclose(np.abs(outs), 1.0)  # h = mean|r − μ| = 1, also where r − μ = 0
    assert (outs[:, 0] > 0).any() and (outs[:, 0] < 0).any()
    # the zero's sign is its own draw, not the global flip of the others
    assert (np.sign(outs[:, 0]) != np.sign(outs[:, 1])).any() and (np.sign(outs[:, 0]) == np.sign(outs[:, 1])).any()
    np.testing.assert_allclose(np.abs([xin.pmc_release(r, rng, h=0.3) for _ in range(20)]), 0.3)


class _PickCandidate:
    """A generator that draws as ``seed`` would but releases candidate ``j`` at the end."""

    def __init__(self, seed: int, j: int):
        self._g, self._j = np.random.default_rng(seed), j

    def integers(self, *args, **kwargs):
        return self._j

    def __getattr__(self, name):
        return getattr(self._g, name)


def pmd_candidates(r, mu, S, seed, sweeps, tries):
    return np.array([xin.pmd_release(r, mu, S, _PickCandidate(seed, j), sweeps, tries) for j in range(len(S))])


def test_every_coordinate_of_the_pmd_candidates_is_a_permutation_of_the_rating_scale():
    S = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    mu = np.linspace(2.0, 4.0, 8)
    r = np.array([5.0, 1.0, 4.0, 4.0, 2.0, 3.0, 5.0, 1.0])
    for sweeps, tries in ((0, 0), (3, 4)):
        A = pmd_candidates(r, mu, S, 17, sweeps, tries) + mu
        np.testing.assert_allclose(np.sort(A, axis=0), np.repeat(S[:, None], 8, axis=1))


def test_the_pmd_search_aligns_the_candidates_with_the_centred_ratings():
    """The swaps lower L = (1/K) Σ ‖a aᵀ − r′r′ᵀ‖²_F, i.e. raise (a·r′)² against ‖a‖⁴: after the search
    the candidates are far better aligned with r′ than the random permutations they start from."""
    S = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    rng = np.random.default_rng(18)
    m = 40
    mu = np.full(m, 3.0)
    r = rng.choice(S, m)

    def mean_cos2(sweeps, tries):
        c = []
        for seed in range(6):
            A = pmd_candidates(r, mu, S, seed, sweeps, tries)
            c.extend((A @ (r - mu)) ** 2 / (np.sum(A * A, axis=1) * np.sum((r - mu) ** 2)))
        return float(np.mean(c))

    assert mean_cos2(3, 5) > 4 * mean_cos2(0, 0)


# ------------------------------------------------------------------------------------ the streamed protocol
def integer_ratings(seed=19, n=16, m=10):
    X, full, mask = low_rank_ratings(seed, n=n, m=m, density=0.6)
    return sp.csr_matrix(np.where(mask, np.clip(np.rint(full), 1, 5), 0.0))


def test_a_pmd_user_rounds_its_completion_onto_the_scale_and_searches_with_the_settings_given(monkeypatch):
    X = integer_ratings()
    seen = []
    real = xin.pmd_release

    def record(r_full, mu, values, rng, sweeps=2, tries=5):
        seen.append((np.array(r_full), sweeps, tries))
        return real(r_full, mu, values, rng, sweeps, tries)

    monkeypatch.setattr(xin, "pmd_release", record)
    xin.XinJaakkola(n_public=3, tau=1.0, mechanism="pmd", batch=4, max_iter=5, pmd_sweeps=3, pmd_tries=1,
                    random_state=0).fit(X)
    assert len(seen) == 13
    assert all(set(r.tolist()) <= {1.0, 2.0, 3.0, 4.0, 5.0} for r, _, _ in seen)
    assert {(s, t) for _, s, t in seen} == {(3, 1)}


def test_a_pmc_user_releases_the_signs_of_its_centred_completion(monkeypatch):
    X = integer_ratings()
    seen = []
    real = xin.pmc_release
    monkeypatch.setattr(xin, "pmc_release", lambda r, rng, h=None: (seen.append(np.array(r)), real(r, rng, h))[1])
    model = xin.XinJaakkola(n_public=3, tau=1.0, mechanism="pmc", batch=4, max_iter=5, random_state=0).fit(X)
    assert len(seen) == 13
    rated = X.toarray() > 0
    private = np.setdiff1d(np.arange(16), model.public_)
    private = private[np.argsort(-rated[private].sum(axis=1), kind="stable")]
    for k, u in enumerate(private):  # on its own ratings the release's input is y − μ of the public users' μ
        mu = xin.item_means(X[model.public_])
        np.testing.assert_allclose(seen[k][rated[u]], X.toarray()[u, rated[u]] - mu[rated[u]])


def test_the_model_predicts_by_eq4_with_its_tau_and_keeps_its_rank_and_em_settings():
    X, _, _ = low_rank_ratings(20, n=40, m=20, density=0.6)
    model = xin.XinJaakkola(n_public=20, tau=1.5, max_rank=1, max_iter=3, random_state=0).fit(X)
    assert model.V_.shape[1] == 1 and model.em_iterations_ == 3
    assert xin.XinJaakkola(n_public=20, tau=1.5, max_iter=3).fit(X).V_.shape[1] > 1  # the cap binds
    Sigma = model.V_ @ model.V_.T
    for u in (0, 25, 39):
        phi = X[u].indices
        y = X[u].data
        eq4 = model.mu_ + Sigma[:, phi] @ np.linalg.solve(1.5 * np.eye(len(phi)) + Sigma[np.ix_(phi, phi)],
                                                          y - model.mu_[phi])
        np.testing.assert_allclose(model.predict(np.full(20, u), np.arange(20)), eq4, atol=1e-10)
    assert list(xin.XinJaakkola(mechanism="full", tau=1.5, max_iter=3).fit(X).public_) == list(range(40))


def test_each_entitys_private_users_send_one_vector_each_and_are_charged():
    ds = ratings_dataset()
    cfg = RunConfig(method="xin-pmc", mode="observed", n_hidden=3,
                    method_params={"public_fraction": 0.1, "tau": 2.0, "max_iter": 5})
    train = ds.X.tocsr()
    res = xin._make_fit("pmc")(ds, train, cfg, np.random.default_rng(0), lambda *a, **k: None)
    public = set(res.model.public_.tolist())
    assert len(public) == 6
    for name, sl in zip(ds.entity_names, ds.entity_slices()):
        n_priv = sum(1 for u in range(sl.start, sl.stop) if u not in public)
        sent = [m for m in res.messages if m.sender == name and m.round == 2]
        assert [(m.shape, m.bytes) for m in sent] == [((n_priv, ds.n_items), n_priv * ds.n_items * 8)]
        assert any(r.entity == name and r.stage == "private users" and math.isinf(r.epsilon)
                   for r in res.ledger.rows)


def test_pmd_on_data_without_a_rating_scale_needs_its_values_and_draws_from_them(monkeypatch):
    """Counts have no finite scale S to permute: without ``values`` PMD would round every completion onto
    1..5 whatever the counts are, so the run is refused naming the parameter; given, S is the one used."""
    from dpfed_core.errors import ConfigError
    rng = np.random.default_rng(21)
    X = sp.csr_matrix(np.where(rng.random((40, 12)) < 0.5, rng.integers(1, 40, (40, 12)), 0).astype(float))
    ds = FederatedDataset.from_parts(X, np.where(np.arange(40) < 20, "A", "B"), value_kind="counts",
                                     value_max=40.0)
    params = {"public_fraction": 0.1, "tau": 2.0, "max_iter": 5, "pmd_sweeps": 1, "pmd_tries": 1}
    cfg = RunConfig(method="xin-pmd", mode="observed", n_hidden=2, method_params=params)
    with pytest.raises(ConfigError, match="give its parameter values .* or use xin-pmc"):
        run_method(ds, cfg)
    seen = []
    real = xin.pmd_release
    monkeypatch.setattr(xin, "pmd_release",
                        lambda r, mu, S, rng, *a: (seen.append(np.array(S)), real(r, mu, S, rng, *a))[1])
    S = tuple(float(v) for v in range(0, 41, 5))
    _, res = run_method(ds, cfg.replace(method_params={**params, "values": S}))
    assert seen and all(list(s) == list(S) for s in seen)
    pmc_params = {k: params[k] for k in ("public_fraction", "tau", "max_iter")}
    xin_pmc = cfg.replace(method="xin-pmc", method_params=pmc_params)
    assert np.isfinite(run_method(ds, xin_pmc)[0]["overall"]["test_rmse"])


def test_pmd_on_data_without_a_rating_scale_is_refused_by_the_checks_before_a_run_is_charged():
    """The rule depends only on the data's declared kind of value (public), so the one check before a run
    is charged (the dashboard's Run button, the CLI's run) refuses it, not the fit after the charge."""
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.service import check_run
    X = sp.csr_matrix((np.random.default_rng(2).random((40, 12)) < 0.5).astype(float))
    ds = FederatedDataset.from_parts(X, np.where(np.arange(40) < 20, "A", "B"), value_kind="counts",
                                     value_max=1.0)
    with pytest.raises(ConfigError, match="give its parameter values .* or use xin-pmc"):
        check_run(ds, RunConfig(method="xin-pmd"))
    check_run(ds, RunConfig(method="xin-pmd", method_params={"values": (0.0, 1.0)}))
    check_run(ds, RunConfig(method="xin-pmc"))


@pytest.mark.parametrize("values", ["3", "1,1,2,2"])
def test_a_pmd_rating_set_of_one_value_or_a_repeated_one_is_refused_naming_values(values):
    from dpfed_core.errors import ConfigError
    cfg = RunConfig(method="xin-pmd", mode="observed", n_hidden=3,
                    method_params={"public_fraction": 0.1, "tau": 2.0, "max_iter": 5, "pmd_sweeps": 1,
                                   "pmd_tries": 1, "values": values})
    with pytest.raises(ConfigError, match="rating set values needs at least two distinct numbers, each given once; "
                                          f"got {values.replace(',', ', ')}$"):
        run_method(ratings_dataset(), cfg)
    two = cfg.replace(method_params={**cfg.method_params, "values": "1,2"})
    assert run_method(ratings_dataset(), two)[1].model.values == (1.0, 2.0)


@pytest.mark.parametrize("params, message", [
    ({"n_public": 61}, "n_public, the number of public users, must be between 1 and the 60 users of the data, got 61"),
    ({"tau": 0}, "xin-public parameter tau must be a number in \\(0, ∞\\), got 0"),
])
def test_more_public_users_than_users_or_a_zero_tau_is_refused_naming_the_parameter(params, message):
    from dpfed_core.errors import ConfigError
    cfg = RunConfig(method="xin-public", mode="observed", n_hidden=3, method_params=params)
    with pytest.raises(ConfigError, match=message) as err:
        run_method(ratings_dataset(), cfg)
    assert err.value.param == "prototype_params"
    every = cfg.replace(method_params={"n_public": 60, "tau": 2.0, "max_iter": 3})
    assert len(run_method(ratings_dataset(), every)[1].model.public_) == 60


def test_em_stops_at_the_first_iteration_whose_completed_rows_moved_less_than_tol_relative_to_the_last():
    """The stopping rule the docstring states: the change of the completed rows relative to the previous
    iteration's, checked from the second iteration on."""
    X, _, _ = low_rank_ratings(13, n=30, m=15)
    mu = xin.item_means(X)
    V, prev, changes = np.zeros((X.shape[1], 0)), None, []
    for _ in range(40):
        C = xin.complete_rows(X, mu, V, 2.0)
        V = xin.shrink_step(C, None, 2.0, 50)
        if prev is not None:
            changes.append(np.linalg.norm(C - prev) / np.linalg.norm(prev))
        prev = C
    # a tolerance equal to the change at iteration 4 (changes[j] belongs to iteration j + 2): the first
    # iteration strictly below it is where the fit stops
    tol = changes[2]
    expected = next(j + 2 for j, c in enumerate(changes) if c < tol)
    assert xin.fit_em(X, 2.0, max_iter=40, tol=tol)[2] == expected
    assert xin.fit_em(X, 2.0, max_iter=40, tol=math.inf)[2] == 2
    assert "completed rows" in xin.fit_em.__doc__ and "V Vᵀ" not in xin.fit_em.__doc__


@pytest.mark.parametrize("mechanism", ["pmc", "pmd"])
def test_each_private_user_downloads_the_model_before_its_release_and_the_log_counts_every_copy(mechanism):
    """The streamed protocol sends (μ, V) to every private user before it completes its row and releases:
    the message log counts one copy per private user, with its bytes, not one per entity."""
    ds = ratings_dataset()
    cfg = RunConfig(method=f"xin-{mechanism}", mode="observed", n_hidden=3,
                    method_params={"public_fraction": 0.1, "tau": 2.0, "max_iter": 5, "max_rank": 1,
                                   **({"pmd_sweeps": 1, "pmd_tries": 1} if mechanism == "pmd" else {})})
    res = xin._make_fit(mechanism)(ds, ds.X.tocsr(), cfg, np.random.default_rng(0), lambda *a, **k: None)
    assert res.model.V_.shape[1] == 1  # rank 1 throughout: each copy is μ and one column of V
    public = set(res.model.public_.tolist())
    copies = 0
    for name, sl in zip(ds.entity_names, ds.entity_slices()):
        n_priv = sum(1 for u in range(sl.start, sl.stop) if u not in public)
        (sent,) = [m for m in res.messages if m.sender == "server" and m.receiver == name and m.round == 2]
        assert f"each of {n_priv} private users" in sent.content
        assert sent.shape == (n_priv, ds.n_items, 2) and sent.bytes == n_priv * ds.n_items * 2 * 8
        copies += sent.shape[0]
    assert copies == ds.n_users - len(public)
    public_only = xin._make_fit("none")(ds, ds.X.tocsr(), cfg.replace(method="xin-public"),
                                        np.random.default_rng(0), lambda *a, **k: None)
    assert not [m for m in public_only.messages if m.round == 2]


def test_the_dashboard_and_the_report_count_every_copy_a_user_sent_or_received():
    """A per-user message is logged once with its copies: the Federate page's count and the report's
    count each copy — every public user's ratings, each private user's download and release, and one
    model per entity at the end."""
    from dpfed_core.reporting.report import build_report
    from dpfed_core.ui.tables import messages_table

    ds = ratings_dataset()
    cfg = RunConfig(method="xin-pmc", mode="observed", n_hidden=3,
                    method_params={"public_fraction": 0.1, "tau": 2.0, "max_iter": 5})
    doc, res = run_method(ds, cfg)
    n_public = len(res.model.public_)
    sent = n_public + 2 * (ds.n_users - n_public) + ds.n_entities
    table = messages_table(doc)
    assert int(table["copies"].sum()) == sent and len(table) < sent
    page = build_report(doc, generated="x", include_plotlyjs=False)
    assert f"{sent} messages in round(s) 1, 2, 3" in page
    # a document written before messages recorded their copies counts each of its rows once
    old = {**doc, "messages": [{k: v for k, v in m.items() if k != "copies"} for m in doc["messages"]]}
    assert int(messages_table(old)["copies"].sum()) == len(doc["messages"])


def test_the_federate_page_says_the_round_the_message_log_broadcast_the_model_in():
    """Xin et al.'s model reaches the entities in round 3 and a central curator's never leaves it: the V tab
    says what the log says, not the two-round protocol's round 2."""
    from dpfed_core.ui.tables import broadcast_words

    ds = ratings_dataset()
    cfg = RunConfig(method="xin-pmc", mode="observed", n_hidden=3,
                    method_params={"public_fraction": 0.1, "tau": 2.0, "max_iter": 5})
    doc, _ = run_method(ds, cfg)
    assert broadcast_words(doc) == "broadcast to every entity in round 3"
    two_rounds = {"messages": [{"round": 1, "sender": "A", "receiver": "server"},
                               {"round": 2, "sender": "server", "receiver": "A"}]}
    assert broadcast_words(two_rounds) == "broadcast to every entity in round 2"
    curator, _ = run_method(ds, RunConfig(method="item-average", mode="observed", n_hidden=3))
    assert "no entity received it" in broadcast_words(curator)
