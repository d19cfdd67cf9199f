"""Friedman, Berkovsky & Kaafar (2016): update rules on tiny problems, noise scales against the
paper's formulas, Laplace / Gamma goodness of fit, budget accounting, and engine smoke tests."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpfed_core.methods.comparison import friedman as fr
from dpfed_core.methods.comparison.friedman import FriedmanMF, Ratings
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.experiments import run_method
from dpfed_core.methods import get_method


def tiny_ratings(seed: int = 0, n: int = 30, m: int = 20, density: float = 0.4) -> Ratings:
    rng = np.random.default_rng(seed)
    mask = rng.random((n, m)) < density
    mask[np.arange(n), rng.integers(0, m, n)] = True
    u, i = np.nonzero(mask)
    return Ratings(u, i, rng.integers(1, 6, len(u)).astype(float), n, m)


def rating_dataset(seed: int = 0, n: int = 60, m: int = 40) -> FederatedDataset:
    rng = np.random.default_rng(seed)
    # Low-rank-ish ratings so the factor models have something to find.
    a, b = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
    full = np.clip(np.rint(3 + a @ b.T * 0.8 + rng.normal(0, 0.3, (n, m))), 1, 5)
    mask = rng.random((n, m)) < 0.5
    X = sp.csr_matrix(np.where(mask, full, 0.0))
    return FederatedDataset.from_parts(X, np.where(np.arange(n) < n // 2, "A", "B"),
                                       value_kind="ratings", name="tiny ratings")


# ------------------------------------------------------------------------------------ SGD rules
@pytest.mark.parametrize("batch_size", [1, 64])
def test_sgd_single_rating_by_hand(batch_size):
    R = Ratings(np.array([0]), np.array([0]), np.array([2.0]), 1, 1)
    P, Q = np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]])
    fr.sgd_epoch(R, P, Q, lr=0.1, lam=0.1, rng=np.random.default_rng(0), batch_size=batch_size)
    # e = 2 − 0.5 = 1.5; q ← q + 0.1(1.5 p − 0.1 q) = (0.645, 0.495);
    # p ← p + 0.1(1.5 q_new − 0.1 p) = (1.08675, 0.07425)   (Alg. 4: p uses the new q)
    np.testing.assert_allclose(Q, [[0.645, 0.495]])
    np.testing.assert_allclose(P, [[1.08675, 0.07425]])


def test_sgd_simultaneous_update_uses_old_q():
    R = Ratings(np.array([0]), np.array([0]), np.array([2.0]), 1, 1)
    P, Q = np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]])
    fr.sgd_epoch(R, P, Q, 0.1, 0.1, np.random.default_rng(0), batch_size=1, q_first=False)
    np.testing.assert_allclose(P, [[1.0 + 0.1 * (0.75 - 0.1), 0.1 * 0.75]])  # Eq. 2


@pytest.mark.parametrize("batch_size", [1, 64])
def test_sgd_error_clamp_and_projection(batch_size):
    """The exact loop and the mini-batch path clamp the error and project both factors alike."""
    R = Ratings(np.array([0]), np.array([0]), np.array([100.0]), 1, 1)
    P, Q = np.array([[0.3, 0.0]]), np.array([[0.4, 0.0]])
    fr.sgd_epoch(R, P, Q, 0.1, 0.0, np.random.default_rng(0), batch_size=batch_size, e_max=2.0, p_max=0.4,
                 q_max=0.5)
    # e clamped to 2: q = 0.4 + 0.1·2·0.3 = 0.46 (inside 0.5); p = 0.3 + 0.1·2·0.46 = 0.392.
    np.testing.assert_allclose(Q, [[0.46, 0.0]])
    np.testing.assert_allclose(P, [[0.392, 0.0]])
    fr.sgd_epoch(R, P, Q, 0.5, 0.0, np.random.default_rng(0), batch_size=batch_size, e_max=2.0, p_max=0.4,
                 q_max=0.5)
    assert np.linalg.norm(P) <= 0.4 + 1e-12 and np.linalg.norm(Q) <= 0.5 + 1e-12


def test_minibatch_matches_sequential_sgd():
    R = tiny_ratings(1)
    R = R.with_values(R.values - R.values.mean())
    out = []
    for bs in (1, 16):
        P, Q = fr.init_factors(R.n_users, R.n_items, 3, np.random.default_rng(5))
        for _ in range(5):
            fr.sgd_epoch(R, P, Q, 0.01, 0.06, np.random.default_rng(7), batch_size=bs)
        out.append(P @ Q.T)
    # Same visiting order; summed in-batch updates differ only at O(γ²).
    assert np.max(np.abs(out[0] - out[1])) < 2e-3


# ------------------------------------------------------------------------------------ ALS rule
def test_ridge_rows_is_count_weighted_als_wr():
    R = tiny_ratings(2)
    Q = np.random.default_rng(3).normal(size=(R.n_items, 2))
    P, cnt = fr.ridge_rows(R, Q, lam=0.5, by="user")
    for u in range(R.n_users):
        sel = R.users == u
        Qu, r = Q[R.items[sel]], R.values[sel]
        expect = np.linalg.solve(Qu.T @ Qu + 0.5 * sel.sum() * np.eye(2), Qu.T @ r)
        np.testing.assert_allclose(P[u], expect, atol=1e-10)
        # the gradient of J_Q(p_u) = Σ(r − p q)² + n_u λ‖p‖² vanishes there
        grad = -2 * Qu.T @ (r - Qu @ P[u]) + 2 * sel.sum() * 0.5 * P[u]
        np.testing.assert_allclose(grad, 0, atol=1e-9)
    assert cnt.sum() == R.n


def test_ridge_rows_cold_rows_are_zero():
    R = Ratings(np.array([0]), np.array([1]), np.array([1.0]), 2, 3)
    P, cnt = fr.ridge_rows(R, np.ones((3, 2)), 0.1)
    assert np.all(P[1] == 0) and list(cnt) == [1, 0]


# ------------------------------------------------------------------------------------ global effects
def test_exact_global_effects_by_hand():
    # users 0,1; items 0,1. Ratings: (0,0)=5, (0,1)=3, (1,0)=3.
    R = Ratings(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([5.0, 3.0, 3.0]), 2, 3)
    ge = fr.exact_global_effects(R)
    np.testing.assert_allclose(ge.item_avg, [4.0, 3.0, 11 / 3])  # item 2 unrated → global mean
    np.testing.assert_allclose(ge.user_avg, [(1 + 0) / 2, -1.0])


def test_private_global_effects_noiseless_by_hand():
    R = Ratings(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([5.0, 3.0, 3.0]), 2, 2)
    ge = fr.private_global_effects(R, math.inf, math.inf, math.inf, math.inf, np.random.default_rng(0),
                                   beta_m=1.0, beta_u=1.0)
    g = 11 / 3
    ia = np.array([(8 + g) / 3, (3 + g) / 2])
    np.testing.assert_allclose(ge.global_avg, g)
    np.testing.assert_allclose(ge.item_avg, ia)
    resid = np.array([5 - ia[0], 3 - ia[1], 3 - ia[0]])
    g2 = resid.mean()
    np.testing.assert_allclose(ge.user_avg, [(resid[0] + resid[1] + g2) / 3, (resid[2] + g2) / 2])


@pytest.mark.parametrize("variant", ["bounded", "unbounded"])
def test_private_global_effects_noise_scales_match_paper(variant):
    R = tiny_ratings(4)
    led = fr.PrivacyLedger(1.0)
    fr.private_global_effects(R, 0.01, 0.14, 0.01, 0.14, np.random.default_rng(0), variant=variant, ledger=led)
    rows = {r.stage: r for r in led.rows}
    if variant == "bounded":  # Alg. 1–2: Lap(Δr/ε), Δr = r_max − r_min = 4 for sums and residual sums
        expect = {"global average (items)": 4 / 0.01, "item averages": 4 / 0.14,
                  "global average (users)": 4 / 0.01, "user averages": 4 / 0.14}
    else:  # raw sums: max|r| = 5 with ε/2; residual sums: Δr = 4 with ε/2
        expect = {"global average (items)": 5 / 0.005, "item averages": 5 / 0.07,
                  "global average (users)": 4 / 0.005, "user averages": 4 / 0.07}
    for stage, scale in expect.items():
        assert rows[stage].noise_scale == pytest.approx(scale)
    assert led.guarantee()[0] == pytest.approx(0.30)
    ge = fr.private_global_effects(R, 0.01, 0.14, 0.01, 0.14, np.random.default_rng(1), variant=variant)
    assert ge.item_avg.min() >= 1 and ge.item_avg.max() <= 5  # clamps of Alg. 1 and 2
    assert np.abs(ge.user_avg).max() <= 2


def test_noisy_average_noise_is_laplace():
    rng = np.random.default_rng(11)
    n = 4000
    out = fr._noisy_average(np.zeros(n), np.full(n, 9.0), 0.0, 1.0, 2.5, 0.0, rng)
    noise = out * 10.0  # (0 + Lap(b)) / (9 + 1)
    assert stats.kstest(noise, stats.laplace(scale=2.5).cdf).pvalue > 0.01


# ------------------------------------------------------------------------------------ mechanisms
def test_input_perturbation_bounded_scale_and_laplace_fit():
    R = Ratings(np.zeros(5000, int), np.arange(5000), np.zeros(5000), 1, 5000)
    led = fr.PrivacyLedger(0.7)
    noisy = fr.perturb_ratings_bounded(R, 1.0, 0.7, np.random.default_rng(3), led, clamp=False)
    b = 2 * 1.0 / 0.7  # Alg. 3: Lap(Δr/ε_MF), Δr = 2B
    assert led.rows[0].noise_scale == pytest.approx(b)
    assert stats.kstest(noisy.values, stats.laplace(scale=b).cdf).pvalue > 0.01
    clamped = fr.perturb_ratings_bounded(R, 1.0, 0.7, np.random.default_rng(3))
    assert np.abs(clamped.values).max() <= 1.0


def test_input_perturbation_unbounded_fake_ratings():
    n, m, eps, alpha, B = 60, 50, 20.0, 0.6, 50.0  # b = 2.5 ≪ B: no clamping, to test the tail law
    R = Ratings(np.array([0]), np.array([0]), np.array([0.5]), n, m)
    led = fr.PrivacyLedger(eps)
    out = fr.perturb_ratings_unbounded(R, B, alpha, eps, np.random.default_rng(8), led)
    b = B / eps
    assert led.rows[0].noise_scale == pytest.approx(b)
    # K ~ Binomial(n·m − 1, e^{−α/b}); survivors' |value| − α ~ Exp(b) (Laplace tail beyond α).
    p = math.exp(-alpha / b)
    assert abs(out.n - (n * m - 1) * p) < 5 * math.sqrt((n * m) * p * (1 - p)) + 1
    assert np.all(np.abs(out.values) > alpha)
    assert stats.kstest(np.abs(out.values) - alpha, stats.expon(scale=b).cdf).pvalue > 0.01
    cells = out.users * m + out.items
    assert len(np.unique(cells)) == len(cells)
    # a missing cell's noise is Laplace: beyond ±α on either side with equal chance
    fake = out.values[cells != 0]
    assert stats.binomtest(int((fake > 0).sum()), fake.size, 0.5).pvalue > 0.001 and (fake < 0).any()


def test_knorm_noise_gamma_radius_and_uniform_direction():
    noise, scale = fr.knorm_noise(6000, 3, 0.5, 2.0, np.random.default_rng(9))
    assert scale == pytest.approx(0.25)
    r = np.linalg.norm(noise, axis=1)
    assert stats.kstest(r, stats.gamma(a=3, scale=0.25).cdf).pvalue > 0.01
    assert np.abs((noise / r[:, None]).mean(axis=0)).max() < 0.05
    assert np.all(fr.knorm_noise(4, 3, 0.5, math.inf, np.random.default_rng(0))[0] == 0)


def test_knorm_noise_per_row_has_a_gamma_radius_of_shape_d_at_each_rows_scale():
    """PALS's per-row K-norm noise: row r's radius ~ Γ(shape = d, scale = scales[r]); a zero scale (a row
    without ratings) gets no noise."""
    scales = np.repeat([0.0, 0.25, 1.0], 4000)
    noise = fr.knorm_noise_rows(4, scales, np.random.default_rng(3))
    r = np.linalg.norm(noise, axis=1)
    assert np.all(r[:4000] == 0)
    for lo, sc in ((4000, 0.25), (8000, 1.0)):
        assert stats.kstest(r[lo:lo + 4000], stats.gamma(a=4, scale=sc).cdf).pvalue > 0.01


def test_psgd_bounded_noise_scale_and_budget():
    R = tiny_ratings(5)
    m = FriedmanMF("psgd", 2.0, factors=2, iterations=5, random_state=0).fit(R)
    rows = [r for r in m.ledger_.rows if r.stage.startswith("PSGD")]
    assert len(rows) == 5
    # Alg. 4: Lap(k·Δr/ε_MF) with Δr = 2B = 2, k = 5, ε_MF = 0.7·2
    assert rows[0].noise_scale == pytest.approx(5 * 2 / 1.4)
    assert m.ledger_.guarantee()[0] == pytest.approx(2.0)
    assert np.linalg.norm(m.P_, axis=1).max() <= 0.4 + 1e-9
    assert np.linalg.norm(m.Q_, axis=1).max() <= 0.5 + 1e-9


def test_psgd_unbounded_sensitivities_alg5():
    R = tiny_ratings(6)
    m = FriedmanMF("psgd", 1.0, variant="unbounded", factors=2, lam=0.045, iterations=5, random_state=0).fit(R)
    e_max = 1 + 0.4 * 0.5
    s_p, s_q = 0.01 * (e_max * 0.5 + 0.045 * 0.4), 0.01 * (e_max * 0.4 + 0.045 * 0.5)
    assert s_p == pytest.approx(0.00618) and s_q == pytest.approx(0.005025)  # notes §4.2 (ML-1M values)
    users = [r for r in m.ledger_.rows if r.stage.startswith(("PALS", "PSGD")) and r.stage.endswith("(users)")]
    items = [r for r in m.ledger_.rows if r.stage.startswith(("PALS", "PSGD")) and r.stage.endswith("(items)")]
    assert users[0].sensitivity == pytest.approx(s_p) and items[0].sensitivity == pytest.approx(s_q)
    assert users[0].noise_scale == pytest.approx(2 * 5 * s_p / 0.7)  # Gamma scale 2k·s_p/ε_MF
    assert m.ledger_.guarantee()[0] == pytest.approx(1.0)
    # the sensitivities hold only inside the norm bounds: every factor is projected back after its noise
    assert np.linalg.norm(m.P_, axis=1).max() <= 0.4 + 1e-9
    assert np.linalg.norm(m.Q_, axis=1).max() <= 0.5 + 1e-9


@pytest.mark.parametrize("variant", ["bounded", "unbounded"])
def test_pals_sensitivity_theorem6_table1(variant):
    R = tiny_ratings(7)
    lam, B, pm, qm = 0.06, 1.0, 0.4, 0.5
    m = FriedmanMF("pals", 3.0, variant=variant, factors=2, lam=lam, iterations=5, random_state=0).fit(R)
    rows_u = [r for r in m.ledger_.rows if r.stage.startswith(("PALS", "PSGD")) and r.stage.endswith("(users)")]
    rows_i = [r for r in m.ledger_.rows if r.stage.startswith(("PALS", "PSGD")) and r.stage.endswith("(items)")]
    assert len(rows_u) == len(rows_i) == 5
    if variant == "bounded":  # Theorem 6: Δp_u = q_max·2B/(n_u λ) (ledger shows n_u = 1)
        assert rows_u[0].sensitivity == pytest.approx(qm * 2 * B / lam)
        assert rows_i[0].sensitivity == pytest.approx(pm * 2 * B / lam)
    else:  # Table 1 ÷ 2nλ
        assert rows_u[0].sensitivity == pytest.approx((qm * (B + qm * pm) + lam * pm) / lam)
        assert rows_i[0].sensitivity == pytest.approx((pm * (B + qm * pm) + lam * qm) / lam)
    eps_step = 0.7 * 3.0 / 10
    assert rows_u[0].noise_scale == pytest.approx(rows_u[0].sensitivity / eps_step)
    assert m.ledger_.guarantee()[0] == pytest.approx(3.0)
    assert np.linalg.norm(m.P_, axis=1).max() <= pm + 1e-9


def test_pals_per_user_noise_scale_divides_by_count(monkeypatch):
    R = tiny_ratings(8)
    seen = []
    real = fr.knorm_noise_rows
    monkeypatch.setattr(fr, "knorm_noise_rows", lambda d, s, rng: (seen.append(np.array(s)), real(d, s, rng))[1])
    FriedmanMF("pals", 1.0, factors=2, lam=0.06, iterations=1, random_state=0).fit(R)
    n_u = R.user_counts()
    # Alg. 6 / Theorem 6: Gamma scale 2k·q_max·Δr/(ε_MF·n_u·λ), k = 1
    np.testing.assert_allclose(seen[0], 2 * 1 * 0.5 * 2 / (0.7 * n_u * 0.06))


def test_isgd_and_ge_budget_and_clamped_predictions():
    R = tiny_ratings(9)
    for algo in ("ge", "isgd"):
        for variant in ("bounded", "unbounded"):
            m = FriedmanMF(algo, 1.5, variant=variant, factors=2, random_state=1).fit(R)
            assert m.ledger_.guarantee()[0] == pytest.approx(1.5)
            assert all(r.entity == fr.CURATOR for r in m.ledger_.rows)
            pred = m.predict(R.users, R.items)
            assert pred.min() >= 1 and pred.max() <= 5
            U, V = m.factors_uv()
            np.testing.assert_allclose((U @ V.T)[R.users, R.items], m.predict(R.users, R.items, clamp=False))


def test_seeded_runs_are_reproducible():
    R = tiny_ratings(10)
    a = FriedmanMF("isgd", 1.0, factors=2, random_state=3).fit(R).P_
    b = FriedmanMF("isgd", 1.0, factors=2, random_state=3).fit(R).P_
    np.testing.assert_array_equal(a, b)


def test_more_budget_helps_on_average():
    R = tiny_ratings(12, n=80, m=40, density=0.5)
    err = {}
    for eps in (0.2, 50.0):
        e = []
        for s in range(5):
            m = FriedmanMF("ge", eps, random_state=s).fit(R)
            e.append(np.sqrt(np.mean((m.predict(R.users, R.items) - R.values) ** 2)))
        err[eps] = np.mean(e)
    assert err[50.0] < err[0.2]


# ------------------------------------------------------------------------------------ engine
FRIEDMAN_METHODS = ["global-average", "item-average", "global-effects", "ge-mf",
                    "friedman-ge", "friedman-isgd", "friedman-psgd", "friedman-pals"]


@pytest.mark.parametrize("name", FRIEDMAN_METHODS)
def test_registered_methods_run(name):
    ds = rating_dataset()
    spec = get_method(name)
    if name.startswith("friedman-"):
        assert spec.uses_epsilon and "rating-level DP, trusted central curator" in spec.privacy
        assert "not comparable one-for-one with user-level federated ε" in spec.privacy
    cfg = RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, seed=1, n_hidden=3,
                    method_params={"iterations": 3} if name in ("ge-mf", "friedman-isgd", "friedman-psgd",
                                                                "friedman-pals") else {})
    doc, res = run_method(ds, cfg)
    assert np.isfinite(doc["overall"]["test_rmse"])
    assert res.U.shape[0] == ds.n_users and res.V.shape[0] == ds.n_items
    eps = doc["privacy"]["epsilon"]
    assert (eps == pytest.approx(2.0)) if spec.uses_epsilon else math.isinf(eps)
    assert all(m["receiver"] == fr.CURATOR for m in doc["messages"])


def test_unbounded_variant_through_engine_and_bad_params():
    ds = rating_dataset(1)
    cfg = RunConfig(method="friedman-pals", epsilon=5.0, mode="observed", rank=2, n_hidden=3,
                    method_params={"variant": "unbounded", "iterations": 2})
    doc, _ = run_method(ds, cfg)
    assert np.isfinite(doc["overall"]["test_rmse"])
    from dpfed_core.errors import ConfigError
    with pytest.raises(ConfigError):
        run_method(ds, cfg.replace(method_params={"variant": "sideways"}))
    with pytest.raises(ConfigError):
        run_method(ds, cfg.replace(method_params={"no_such_option": 1}))


# ------------------------------------------------------------------------------------ stated rules
def test_a_stage_with_a_zero_share_of_epsilon_is_refused_by_name():
    R = tiny_ratings(13)
    from dpfed_core.errors import ConfigError
    with pytest.raises(ConfigError, match="positive ε share"):
        FriedmanMF("isgd", 1.0, factors=2, split=(0.01, 0.14, 0.01, 0.14, 0.0), random_state=0).fit(R)
    with pytest.raises(ConfigError, match="positive ε share"):
        fr._scale(1.0, 0.0)
    assert fr._scale(2.0, math.inf) == 0.0


def test_a_split_over_the_whole_budget_is_refused():
    from dpfed_core.errors import ConfigError
    with pytest.raises(ConfigError, match="summing to ≤ 1"):
        FriedmanMF("isgd", 1.0, split=(0.1, 0.3, 0.1, 0.3, 0.7))._validate()
    FriedmanMF("isgd", 1.0, split=(0.1, 0.2, 0.1, 0.2, 0.4))._validate()  # exactly 1 is the whole budget


def test_a_noisy_count_below_one_is_floored_at_one():
    # (Σ + β·prior + noise) / max(count + noise + β, 1): no noise, no β and no ratings → Σ / 1
    out = fr._noisy_average(np.array([3.0, 6.0]), np.array([0.0, 4.0]), 0.0, 0.0, 0.0, 0.0,
                            np.random.default_rng(0))
    np.testing.assert_allclose(out, [3.0, 1.5])


def test_residuals_take_off_the_item_and_the_user_average_and_clamp_to_b():
    R = Ratings(np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([5.0, 2.0, 4.0]), 2, 2)
    ge = fr.GlobalEffects(3.5, np.array([4.0, 3.0]), 0.0, np.array([0.5, -0.25]))
    out = fr.clamp_residuals(R, ge, B=1.0)
    # 5 − 4 − 0.5 = 0.5; 2 − 3 − 0.5 = −1.5 → −1; 4 − 3 + 0.25 = 1.25 → 1
    np.testing.assert_allclose(out.values, [0.5, -1.0, 1.0])


def test_the_automatic_mini_batch_is_a_hundredth_of_the_ratings_within_64_and_4096():
    assert fr.auto_batch_size(50_000) == 500
    assert fr.auto_batch_size(100) == 64
    assert fr.auto_batch_size(1_000_000) == 4096


def test_default_iterations_are_the_papers_per_algorithm():
    want = {"isgd": 20, "sgd": 20, "psgd": 5, "pals": 5, "als": 10}
    assert {a: FriedmanMF(a)._iters() for a in want} == want
    m = FriedmanMF("psgd", 2.0, factors=2, random_state=0).fit(tiny_ratings(5))
    assert len([r for r in m.ledger_.rows if r.stage.startswith("PSGD")]) == 5


def test_the_rating_scale_starts_at_one_for_ratings_and_at_zero_for_counts():
    ds = rating_dataset()
    cfg = RunConfig(method="friedman-isgd", epsilon=1.0, rank=2)
    est = fr._estimator_from_config("isgd", ds, cfg, np.random.default_rng(0), 1.0)
    assert (est.r_min, est.r_max) == (1.0, float(ds.value_max))
    counts = FederatedDataset.from_parts(sp.csr_matrix(np.array([[0.0, 3.0], [2.0, 0.0]])), np.array(["A", "B"]),
                                         value_kind="counts", value_max=7.0, name="tiny counts")
    est = fr._estimator_from_config("isgd", counts, cfg, np.random.default_rng(0), 1.0)
    assert (est.r_min, est.r_max) == (0.0, 7.0)


def test_private_preprocessing_gives_clean_mf_the_private_global_effects():
    R = tiny_ratings(14)
    exact = FriedmanMF("als", 1.0, factors=2, iterations=1, random_state=0).fit(R)
    assert [r.stage for r in exact.ledger_.rows][0] == "global effects"
    noisy = FriedmanMF("als", 1.0, factors=2, iterations=1, private_preprocessing=True, random_state=0).fit(R)
    stages = [r.stage for r in noisy.ledger_.rows]
    assert stages == ["global average (items)", "item averages", "global average (users)", "user averages",
                      "factorisation"]
    # no private factorisation reads a fifth share: the global effects take §5.4's split of the whole ε
    assert [r.epsilon for r in noisy.ledger_.rows][:4] == pytest.approx([0.01, 0.54, 0.01, 0.44])
    assert sum(r.epsilon for r in noisy.ledger_.rows[:4]) == pytest.approx(1.0)
    # the factorisation reads the exact ratings: the model as a whole is not private
    assert math.isinf(noisy.ledger_.rows[4].epsilon) and math.isinf(noisy.ledger_.guarantee()[0])


@pytest.mark.parametrize("algorithm, private_preprocessing", [("ge", False), ("als", True), ("sgd", True)])
def test_a_split_giving_the_factorisation_a_share_nothing_spends_is_refused(algorithm, private_preprocessing):
    """Private global effects alone and clean MF on private preprocessing run no private factorisation:
    a non-zero fifth (MF) share would be left unspent while the ledger reads as if the global effects had
    the whole split, so it is refused naming split; with the fifth share at 0 the ledger charges each of the
    four averages its share of ε and nothing else."""
    from dpfed_core.errors import ConfigError

    kwargs = {"factors": 2, "iterations": 1, "private_preprocessing": private_preprocessing, "random_state": 0}
    with pytest.raises(ConfigError) as refused:
        FriedmanMF(algorithm, 1.0, split=(0.1, 0.2, 0.1, 0.2, 0.4), **kwargs).fit(tiny_ratings(20))
    assert str(refused.value) == (
        f"split gives the factorisation (its fifth share) 0.4 of ε, but {algorithm} runs no private "
        "factorisation to spend it (only isgd, psgd and pals read the fifth share): give 0 as the fifth "
        "share of split"), str(refused.value)
    model = FriedmanMF(algorithm, 2.0, split=(0.1, 0.3, 0.1, 0.2, 0.0), **kwargs).fit(tiny_ratings(20))
    charged = [r.epsilon for r in model.ledger_.rows if math.isfinite(r.epsilon)]
    assert charged == pytest.approx([0.2, 0.6, 0.2, 0.4])
    assert len(model.ledger_.rows) == (4 if algorithm == "ge" else 5)


def test_a_private_factorisation_is_charged_its_fifth_share():
    """isgd reads the fifth share: the ledger charges the four averages and the input perturbation
    their shares, and composes to their sum."""
    model = FriedmanMF("isgd", 2.0, factors=2, iterations=1, split=(0.1, 0.2, 0.1, 0.2, 0.3),
                       random_state=0).fit(tiny_ratings(21))
    assert [r.epsilon for r in model.ledger_.rows] == pytest.approx([0.2, 0.4, 0.2, 0.4, 0.6])
    assert model.ledger_.guarantee()[0] == pytest.approx(1.8)


def test_the_engine_refuses_an_mf_share_private_global_effects_would_leave_unspent():
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.service import check_run
    from dpfed_core.ui import engine as dash

    config = RunConfig(method="friedman-ge", epsilon=1.0, mode="observed", rank=2, seed=0,
                       method_params={"split": "0.1,0.2,0.1,0.2,0.4"})
    with pytest.raises(ConfigError) as refused:
        check_run(rating_dataset(), config)
    assert str(refused.value) == (
        "friedman-ge releases private global effects only and fits no factors: the fifth (MF) share of its "
        "parameter split, given as 0.1,0.2,0.1,0.2,0.4, would be left unspent (only friedman-isgd, friedman-psgd "
        "and friedman-pals spend it on their factorisation); give 0 as the fifth share of split in "
        "prototype_params") and refused.value.param == "prototype_params"
    assert "--param" in refused.value.render(CLI_NAMES)
    assert "the method's parameters" in dash.friendly_message(refused.value)
    check_run(rating_dataset(), config.replace(method_params={"split": "0.1,0.3,0.1,0.5,0"}))
    check_run(rating_dataset(), config.replace(method="friedman-isgd"))


def test_the_observation_mode_note_is_given_in_zero_mode_only():
    def says_mode(mode):
        return any("observation mode 'observed'" in n for n in fr._notes(RunConfig(method="friedman-ge", mode=mode)))
    assert says_mode("zero") and not says_mode("observed")


def test_only_psgd_and_pals_say_their_unbounded_guarantee_is_as_claimed_by_the_paper():
    claimed = "unbounded variant: guarantee as claimed by the paper"
    assert {m: claimed in get_method(m).privacy for m in ("friedman-ge", "friedman-isgd", "friedman-psgd",
                                                        "friedman-pals")} == {
        "friedman-ge": False, "friedman-isgd": False, "friedman-psgd": True, "friedman-pals": True}


def test_explicit_zeros_of_a_sparse_matrix_are_not_ratings():
    X = sp.csr_matrix((np.array([4.0, 0.0, 2.0]), (np.array([0, 0, 1]), np.array([0, 1, 1]))), shape=(2, 3))
    R = Ratings.from_matrix(X)
    assert (R.n, list(R.users), list(R.items), list(R.values)) == (2, [0, 1], [0, 1], [4.0, 2.0])


def test_an_unbounded_average_draws_noise_on_its_count_too():
    """Unbounded (existence) DP keeps counts private: with no noise on the sum, the count's noise alone
    still moves the average."""
    out = fr._noisy_average(np.full(200, 10.0), np.full(200, 10.0), 0.0, 0.0, 0.0, 1.0, np.random.default_rng(4))
    assert np.std(out) > 0.05 and not np.allclose(out, 1.0)


def test_private_global_effects_refuse_an_unknown_variant_and_an_empty_rating_scale():
    from dpfed_core.errors import ConfigError
    R = tiny_ratings(15)
    with pytest.raises(ConfigError, match="variant must be 'bounded' or 'unbounded'"):
        fr.private_global_effects(R, 1.0, 1.0, 1.0, 1.0, np.random.default_rng(0), variant="sideways")
    for lo, hi in ((5.0, 5.0), (5.0, 1.0)):
        with pytest.raises(ConfigError, match="need r_max > r_min"):
            fr.private_global_effects(R, 1.0, 1.0, 1.0, 1.0, np.random.default_rng(0), r_min=lo, r_max=hi)


def test_the_user_averages_are_stabilised_by_beta_u_and_the_item_averages_by_beta_m():
    R = Ratings(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([5.0, 3.0, 3.0]), 2, 2)
    ge = fr.private_global_effects(R, math.inf, math.inf, math.inf, math.inf, np.random.default_rng(0),
                                   beta_m=1.0, beta_u=4.0)
    g = 11 / 3
    ia = np.array([(8 + g) / 3, (3 + g) / 2])
    np.testing.assert_allclose(ge.item_avg, ia)
    resid = np.array([5 - ia[0], 3 - ia[1], 3 - ia[0]])
    g2 = resid.mean()
    np.testing.assert_allclose(ge.user_avg, [(resid[0] + resid[1] + 4 * g2) / 6, (resid[2] + 4 * g2) / 5])


def test_a_batch_size_below_one_is_refused_by_name():
    from dpfed_core.errors import ConfigError
    R = tiny_ratings(16)
    P, Q = fr.init_factors(R.n_users, R.n_items, 2, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="batch_size must be ≥ 1 or 'auto'"):
        fr.sgd_epoch(R, P, Q, 0.01, 0.06, np.random.default_rng(0), batch_size=0)


def test_an_sgd_epoch_visits_the_ratings_in_the_order_its_generator_draws():
    """The paper's SGD visits ratings in a fresh random order: the same start under another seed ends
    elsewhere (no noise is drawn, so only the order differs)."""
    R = tiny_ratings(17)
    R = R.with_values(R.values - R.values.mean())
    out = []
    for seed in (1, 2):
        P, Q = fr.init_factors(R.n_users, R.n_items, 2, np.random.default_rng(5))
        fr.sgd_epoch(R, P, Q, 0.2, 0.06, np.random.default_rng(seed), batch_size=1)
        out.append(P @ Q.T)
    assert np.max(np.abs(out[0] - out[1])) > 1e-6


@pytest.mark.parametrize("kwargs, message", [
    ({"epsilon": 0.0}, "ε must be positive"),
    ({"epsilon": -1.0}, "ε must be positive"),
    ({"epsilon": float("nan")}, "ε must be positive"),
    ({"factors": 0}, r"factors \(d\) must be ≥ 1"),
    ({"split": (0.5, -0.1, 0.1, 0.1, 0.3)}, "5 non-negative shares"),
    ({"split": (0.1, 0.2, 0.1, 0.5)}, "5 non-negative shares"),
    ({"algorithm": "psgd2"}, "unknown Friedman algorithm 'psgd2'"),
    ({"variant": "sideways"}, "variant must be 'bounded' or 'unbounded'"),
])
def test_a_model_with_an_invalid_setting_is_refused_before_it_reads_a_rating(kwargs, message):
    """Even the clean ALS, which draws no noise, refuses an ε it could not have spent."""
    from dpfed_core.errors import ConfigError
    base = {"algorithm": "als", "epsilon": 1.0, "factors": 2, "iterations": 1, "random_state": 0}
    with pytest.raises(ConfigError, match=message):
        FriedmanMF(**{**base, **kwargs}).fit(tiny_ratings(18))


def test_clean_mf_factorises_the_exact_residuals_unclamped(monkeypatch):
    """Without private preprocessing, clean MF reads r − IAvg(i) − UAvg(u) of the exact averages as they
    are (the clamp to ±B belongs to the private pipeline)."""
    R = tiny_ratings(19)
    seen = {}
    model = FriedmanMF("als", 1.0, factors=2, iterations=1, random_state=0)
    monkeypatch.setattr(model, "_fit_als", lambda Rt, *a: seen.setdefault("Rt", Rt))
    model.fit(R)
    ge = fr.exact_global_effects(R)
    want = R.values - ge.item_avg[R.items] - ge.user_avg[R.users]
    assert np.abs(want).max() > 1.0  # the test needs residuals beyond B = 1
    np.testing.assert_allclose(seen["Rt"].values, want)


def test_bounded_psgd_clamps_every_error_at_two_unless_told_otherwise(monkeypatch):
    seen = []
    real = fr.sgd_epoch
    monkeypatch.setattr(fr, "sgd_epoch", lambda *a, **k: seen.append(k["e_max"]) or real(*a, **k))
    FriedmanMF("psgd", 2.0, factors=2, iterations=2, random_state=0).fit(tiny_ratings(20))
    FriedmanMF("psgd", 2.0, factors=2, iterations=2, e_max=0.5, random_state=0).fit(tiny_ratings(20))
    assert seen == [2.0, 2.0, 0.5, 0.5]


def test_unbounded_psgd_noises_every_user_and_item_factor():
    """At a tiny ε the K-norm noise dwarfs every SGD step: each row of both factor matrices ends on its
    norm ball, which only the noise pushes it to."""
    m = FriedmanMF("psgd", 1e-3, variant="unbounded", factors=2, iterations=2, random_state=0).fit(tiny_ratings(21))
    np.testing.assert_allclose(np.linalg.norm(m.P_, axis=1), 0.4)
    np.testing.assert_allclose(np.linalg.norm(m.Q_, axis=1), 0.5)


def test_unbounded_input_perturbation_clamps_fake_ratings_to_b():
    n, m, B = 40, 30, 1.0
    R = Ratings(np.array([0, 1]), np.array([0, 1]), np.array([0.5, -0.5]), n, m)
    out = fr.perturb_ratings_unbounded(R, B, 0.6, 0.5, np.random.default_rng(9))
    assert out.n > 100  # b = 2: most missing cells survive the threshold
    assert np.abs(out.values).max() == pytest.approx(B) and np.all(np.abs(out.values) <= B)


def test_the_estimator_takes_the_runs_rank_and_lambda_unless_its_parameters_set_them():
    ds = rating_dataset()
    cfg = RunConfig(method="friedman-isgd", epsilon=1.0, rank=5, lam=0.3)
    est = fr._estimator_from_config("isgd", ds, cfg, np.random.default_rng(0), 1.0)
    assert (est.factors, est.lam, est.batch_size) == (5, 0.3, "auto")
    est = fr._estimator_from_config("isgd", ds, cfg.replace(method_params={"factors": 3, "lam": 0.1,
                                                                          "batch_size": " 32 "}),
                                    np.random.default_rng(0), 1.0)
    assert (est.factors, est.lam, est.batch_size) == (3, 0.1, 32)


def test_a_batch_size_that_is_not_a_whole_number_is_refused_naming_it():
    from dpfed_core.errors import ConfigError
    cfg = RunConfig(method="friedman-pals", epsilon=1.0, rank=2, method_params={"batch_size": "large"})
    with pytest.raises(ConfigError, match="batch_size must be 'auto' or a whole number, got 'large'"):
        fr._estimator_from_config("pals", rating_dataset(), cfg, np.random.default_rng(0), 1.0)


def test_the_average_baselines_score_by_the_exact_averages_and_count_what_reached_the_curator():
    ds = rating_dataset(2)
    X = ds.X.tocsr()
    R = Ratings.from_matrix(X)
    cfg = RunConfig(method="item-average", mode="observed")
    res = fr._make_fit("item-average", False)(ds, X, cfg, np.random.default_rng(0), lambda *a, **k: None)
    np.testing.assert_allclose((res.U @ res.V.T)[0], fr.item_average(R))
    assert len(np.unique(np.round(fr.item_average(R), 9))) > 1
    res = fr._make_fit("global-effects", False)(ds, X, cfg, np.random.default_rng(0), lambda *a, **k: None)
    ge = fr.exact_global_effects(R)
    np.testing.assert_allclose(res.U @ res.V.T, ge.user_avg[:, None] + ge.item_avg[None, :])
    sizes = {msg.sender: msg.bytes for msg in res.messages}
    for name, sl in zip(ds.entity_names, ds.entity_slices()):
        block = X[sl]
        assert sizes[name] == block.data.nbytes + block.indices.nbytes + block.indptr.nbytes > 0
    assert any("cannot clamp predictions to the rating scale" in n for n in res.extra["notes"])


@pytest.mark.parametrize("name, params, ignored", [
    ("global-average", {"variant": "unbounded"}, "variant"),
    ("item-average", {"solver": "sgd"}, "solver"),
    ("global-effects", {"variant": "bounded", "lr": 0.5}, "lr"),
    ("friedman-isgd", {"solver": "sgd"}, "solver"),
    ("friedman-pals", {"solver": "sgd", "iterations": 1}, "solver"),
])
def test_a_parameter_the_method_would_ignore_is_refused_naming_it_and_its_default_is_accepted(name, params, ignored):
    """The averages read none of the Friedman parameters and only ge-mf reads ``solver``: a value other
    than the default would give a result that silently did not use it, so the run's check and the fit
    both refuse it naming the parameter and where it is set; the default value is what runs anyway."""
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.service import check_run

    ds = rating_dataset()
    cfg = RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, seed=1, n_hidden=3, method_params=params)
    with pytest.raises(ConfigError, match=f"parameter {ignored}, given as .*, would be ignored") as refused:
        check_run(ds, cfg)
    assert refused.value.param == "prototype_params" and "--param" in refused.value.render(CLI_NAMES)
    with pytest.raises(ConfigError, match=f"parameter {ignored}, given as .*, would be ignored"):
        run_method(ds, cfg)
    defaults = {p.name: p.default for p in get_method(name).parameters}
    check_run(ds, cfg.replace(method_params={k: defaults[k] for k in params}))
    # ge-mf reads its solver: both are accepted and give different fits
    fits = [run_method(ds, cfg.replace(method="ge-mf", method_params={"solver": s, "iterations": 2}))[1].V
            for s in ("als", "sgd")]
    assert not np.allclose(fits[0], fits[1])


@pytest.mark.parametrize("name, private", [("global-average", False), ("ge-mf", False), ("friedman-ge", True)])
def test_a_non_private_baseline_is_not_said_to_have_an_epsilon_protecting_one_rating(name, private):
    ds = rating_dataset()
    cfg = RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, seed=1, n_hidden=3,
                    method_params={"iterations": 2} if name == "ge-mf" else {})
    doc, res = run_method(ds, cfg)
    said = " ".join(res.extra["notes"])
    assert ("its ε protects one rating" in said) is private
    assert ("no privacy" in said) is (not private)


def test_a_zero_share_is_refused_alike_at_a_finite_and_an_infinite_epsilon():
    """ε = inf is the exact answer for every stage with a share; a stage given none is refused as at a finite ε
    (inf · 0 would be nan: a noise scale nobody could read)."""
    R = tiny_ratings()
    for eps in (math.inf, 1.0):
        with pytest.raises(fr.ConfigError, match="every stage needs a positive ε share, got 0.0"):
            FriedmanMF(algorithm="psgd", epsilon=eps, factors=2, split=(0.25, 0, 0.25, 0.25, 0.25),
                       random_state=0).fit(R)
    exact = FriedmanMF(algorithm="ge", epsilon=math.inf, split=(0.25, 0.25, 0.25, 0.25, 0), random_state=0).fit(R)
    clean = fr.exact_global_effects(R)
    assert np.isfinite(exact.ge_.item_avg).all() and exact.ge_.item_avg.shape == clean.item_avg.shape
