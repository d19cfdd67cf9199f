"""The ``dp-prototypes`` method: API, bounds, ledger accounting, non-private limit, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.federation.dp_prototypes import DEFAULT_SPLIT, DPPrototypes
from dpfed_core.errors import BudgetExceededError, ConfigError
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.federation.prototypes import PROTOTYPE_METHODS, make_prototype_method


def clustered(n=600, m=40, k=4, seed=0, vmax=5.0):
    """k well-separated groups of users, each rating its own block of items high."""
    g = np.random.default_rng(seed)
    lab = g.integers(k, size=n)
    X = np.zeros((n, m))
    block = m // k
    for j in range(k):
        rows = lab == j
        X[np.ix_(rows, np.arange(j * block, (j + 1) * block))] = vmax
    X *= g.random((n, m)) < 0.8
    return sp.csr_matrix(X), lab


def release(method, X, eps=None, delta=None, seed=0):
    ledger = PrivacyLedger(method.epsilon if eps is None else eps, method.delta if delta is None else delta)
    rel = method.release(X, np.random.default_rng(seed), ledger.for_entity("h"))
    return rel, ledger


def spent_as_planned(meth, ledger, m: int):
    """Every stage that ran spent its planned share: the stages that always run (size, recovery)
    exactly; the repeated ones (partition level tests, search steps) at most their share — they may
    stop early on a released (DP) outcome, and then spend less, never more."""
    plan = meth.budget_plan(m, meth.k_)
    per = {}
    for r in ledger.rows:
        per[r.stage] = per.get(r.stage, 0.0) + r.epsilon
    for stage, eps in per.items():
        key = {"recovery: counts": "counts", "recovery: support": "support", "recovery: sums": "sums",
               "local search": "search", "trial choice": "choice"}.get(stage, stage)
        if stage in ("size", "recovery: counts", "recovery: support", "recovery: sums", "trial choice"):
            assert eps == pytest.approx(plan[key], rel=1e-9), (stage, eps, plan[key])
        else:
            assert eps <= plan[key] * (1 + 1e-9), (stage, eps, plan[key])


def test_dp_registered_and_constructible_by_name():
    assert PROTOTYPE_METHODS["dp-prototypes"] is DPPrototypes
    m = make_prototype_method("dp-prototypes", k=3, value_max=5.0, epsilon=2.0, delta=1e-6, support=10)
    assert m.private and m.get_params()["support"] == 10


@pytest.mark.parametrize("variant", ["paper", "gaussian"])
def test_dp_release_shapes_bounds_and_support(variant):
    X, _ = clustered()
    meth = DPPrototypes(k=4, value_max=5.0, epsilon=2.0, delta=1e-6, support=10, variant=variant,
                        cluster_size=None)
    rel, ledger = release(meth, X)
    P = rel.prototypes
    assert P.shape == (4, 40) and rel.counts.shape == (4,)
    assert P.min() >= 0 and P.max() <= 5.0 and (rel.counts >= 0).all()
    assert ((P != 0).sum(1) <= 10).all()
    eps, dlt = ledger.guarantee()
    assert eps <= 2.0 and dlt <= 1e-6
    spent_as_planned(meth, ledger, 40)  # the budget of every stage that ran is used, not wasted
    for row in ledger.rows:
        assert math.isfinite(row.sensitivity) and math.isfinite(row.noise_scale) and row.noise_scale > 0


def test_dp_ledger_rows_name_every_stage():
    X, _ = clustered()
    meth = DPPrototypes(k=4, value_max=5.0, epsilon=20.0, delta=1e-6, support=10, refine_steps=1, trials=2,
                        variant="paper", cluster_size=None)
    _, ledger = release(meth, X)
    stages = {r.stage for r in ledger.rows}
    assert stages == {"size", "candidates", "local search", "recovery: counts", "recovery: support",
                      "recovery: sums", "trial choice"}
    assert sum(r.stage == "recovery: sums" for r in ledger.rows) == 4  # 2 trials × (1 + 1 refinement)
    # each row states what one user moves its input by (deterministic: the audits cannot see a factor 2)
    lam, bound, s = 5.0 * math.sqrt(10), 5.0, 10  # Λ = Λ∞·√support, Λ∞, support
    for r in ledger.rows:
        want = {"local search": 4 * lam * lam, "trial choice": 4 * lam * lam,  # losses clipped at 4Λ²
                "recovery: sums": s * bound}.get(r.stage)  # s selected sums, each moved by up to Λ∞
        if want is not None:  # monotone Gumbel β and Laplace b alike: Δ/ε
            assert r.sensitivity == pytest.approx(want) and r.noise_scale == pytest.approx(want / r.epsilon)
    # and no smaller clip is true: one user far from every prototype moves a trial's loss by all of 4Λ²
    from dpfed_core.federation.prototype_mechanisms import clipped_loss

    far = sp.vstack([X, sp.csr_matrix(np.full((1, X.shape[1]), bound))]).tocsr()
    P0 = np.zeros((1, X.shape[1]))
    assert clipped_loss(far, P0, 4 * lam * lam) - clipped_loss(X, P0, 4 * lam * lam) == pytest.approx(4 * lam * lam)


def test_dp_ledger_total_never_above_request_random_configs():
    X, _ = clustered(n=300, m=30)
    g = np.random.default_rng(11)
    for i in range(25):
        eps = float(10 ** g.uniform(-2, 1.5))
        delta = float(10 ** g.uniform(-9, -3))
        split = {key: float(g.uniform(0.01, 1)) for key in DEFAULT_SPLIT if g.random() < 0.7}
        variant = ["paper", "gaussian"][i % 2]
        if variant == "gaussian":
            split["delta_candidates"] = float(g.uniform(0.05, 1.0))
        meth = DPPrototypes(
            k=int(g.integers(1, 8)), value_max=5.0, epsilon=eps, delta=delta, variant=variant,
            support=int(g.integers(1, 40)), split=split, trials=int(g.integers(1, 3)),
            refine_steps=int(g.integers(0, 3)), search_steps=int(g.integers(0, 6)),
            projection_dim=None if g.random() < 0.5 else int(g.integers(2, 7)),
            n_grids=int(g.integers(1, 4)), depth=int(g.integers(1, 5)),
            final_choice=bool(g.random() < 0.5),
            cluster_size=[None, 50.0, 150.0, 1000.0][int(g.integers(4))],
            row_scaling=["clip", "normalise"][int(g.integers(2))], threshold=float(g.uniform(0, 2)))
        _, ledger = release(meth, X, seed=i)
        e, d = ledger.guarantee()
        assert e <= eps and d <= delta, (i, e, eps, d, delta)
        spent_as_planned(meth, ledger, X.shape[1])


def test_dp_refuses_to_overspend_the_ledger():
    X, _ = clustered()
    meth = DPPrototypes(k=4, value_max=5.0, epsilon=2.0, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        release(meth, X, eps=1.0)


def test_dp_infinite_epsilon_is_the_labelled_non_private_limit():
    X, lab = clustered()
    meth = DPPrototypes(k=4, value_max=5.0, epsilon=math.inf, delta=0.0, support=10, refine_steps=1,
                        cluster_size=None)
    rel, ledger = release(meth, X)
    assert not ledger.is_private and all(math.isinf(r.epsilon) for r in ledger.rows)
    # exact counts, and each true group is recovered as one cluster
    assert sorted(rel.counts) == sorted(np.bincount(lab).astype(float))


def test_dp_high_epsilon_recovers_the_groups():
    X, lab = clustered(n=2000)
    meth = DPPrototypes(k=4, value_max=5.0, epsilon=50.0, delta=1e-6, support=10, cluster_size=None)
    rel, _ = release(meth, X, seed=3)
    # every prototype puts its mass on one group's item block
    blocks = rel.prototypes.reshape(4, 4, 10).sum(2)
    assert sorted(blocks.argmax(1).tolist()) == [0, 1, 2, 3]


def test_dp_same_seed_same_release_and_no_dependence_on_k_vs_n():
    X, _ = clustered(n=30)
    meth = DPPrototypes(k=50, value_max=5.0, epsilon=1.0, delta=1e-6, cluster_size=None)  # k > n is allowed
    a, _ = release(meth, X, seed=4)
    b, _ = release(meth, X, seed=4)
    np.testing.assert_array_equal(a.prototypes, b.prototypes)
    assert a.prototypes.shape == (50, 40)


@pytest.mark.parametrize("params", [
    dict(epsilon=0.0), dict(epsilon=-1.0), dict(epsilon=float("nan")), dict(delta=0.0), dict(delta=1.0),
    dict(variant="laplace"), dict(split={"bogus": 1.0}), dict(split={"sums": -1.0}),
    dict(split={"sums": 0.0}), dict(value_min=1.0), dict(row_norm=0.0), dict(projection_dim=0),
    dict(trials=0), dict(support=0), dict(k=0),
])
def test_dp_friendly_config_errors(params):
    X, _ = clustered(n=50)
    base = dict(k=3, value_max=5.0, epsilon=1.0, delta=1e-6)
    base.update(params)
    with pytest.raises(ConfigError):
        release(DPPrototypes(**base), X, eps=1.0, delta=1e-6)


def test_dp_auto_k_depends_on_the_noisy_size_only():
    meth = DPPrototypes(k=10, value_max=5.0, cluster_size=100.0)
    assert [meth.effective_k(x) for x in (-5.0, 0.0, 99.9, 100.0, 350.0, 5000.0)] == [1, 1, 1, 1, 3, 10]
    X, _ = clustered(n=600)
    meth = DPPrototypes(k=10, value_max=5.0, epsilon=1.0, delta=1e-6, cluster_size=100.0)
    rel, ledger = release(meth, X, seed=1)
    assert ledger.rows[0].stage == "size" and "number of clusters k" in ledger.rows[0].note
    assert rel.prototypes.shape[0] == meth.effective_k(meth.n_hat_) == meth.k_
    assert ledger.guarantee()[0] <= 1.0
    spent_as_planned(meth, ledger, 40)


def test_dp_auto_k_one_spends_everything_on_the_recovery():
    X, _ = clustered(n=300)
    meth = DPPrototypes(k=10, value_max=5.0, epsilon=1.0, delta=1e-6)  # default cluster_size 1000 → k = 1
    rel, ledger = release(meth, X, seed=2)
    assert rel.prototypes.shape == (1, 40) and meth.k_ == 1
    assert {r.stage for r in ledger.rows} == {"size", "recovery: counts", "recovery: sums"}
    eps, dlt = ledger.guarantee()
    assert 0.999 <= eps <= 1.0 and dlt <= 1e-6
    plan = meth.budget_plan(40, 1)
    assert plan["size"] == pytest.approx(DPPrototypes(k=10, value_max=5.0).budget_plan(40)["size"])


def test_dp_defaults_paper_variant_and_gaussian_method():
    """SPEC §2: the paper's mechanism is the default of ``dp-prototypes``; ``dp-gaussian`` is the
    same class with the Gaussian recovery as its default, registered as its own method."""
    from dpfed_core.federation.dp_prototypes import DPGaussianPrototypes
    from dpfed_core.federation.prototypes import PROTOTYPE_METHODS

    assert DPPrototypes().variant == "paper"
    assert PROTOTYPE_METHODS["dp-gaussian"] is DPGaussianPrototypes
    g = DPGaussianPrototypes(k=3, value_max=5.0, epsilon=2.0)
    assert g.variant == "gaussian" and g.k == 3 and g.epsilon == 2.0 and g.private
    assert DPGaussianPrototypes(variant="paper").variant == "paper"


def test_dp_gaussian_all_items_normalised_rows():
    X, _ = clustered(n=300)
    meth = DPPrototypes(k=1, value_max=5.0, epsilon=5.0, delta=1e-6, variant="gaussian")
    rel, ledger = release(meth, X, seed=0)
    assert meth.variant == "gaussian" and meth.row_scaling == "normalise"
    assert (rel.prototypes != 0).sum() > 20  # no top-64 truncation: every positive noisy mean is kept
    sums = [r for r in ledger.rows if r.stage == "recovery: sums"][0]
    assert sums.sensitivity == pytest.approx(5.0 * math.sqrt(40)) and "normalised" in sums.note


@pytest.mark.parametrize("scaling", ["clip", "normalise"])
def test_every_row_a_sum_reads_has_norm_at_most_the_public_bound(scaling):
    """The Gaussian sums' L2 sensitivity is Λ because every user's scaled row has norm ≤ Λ — for the
    recovery's rows (``row_scaling``) and the candidate stage's projected rows (``clip_rows``) alike;
    a row already shorter is kept as it is by clipping and scaled to exactly Λ by normalising."""
    from dpfed_core.federation.prototype_mechanisms import clip_rows

    lam = 2.0
    heavy = sp.random(60, 30, density=0.3, random_state=3, format="csr") * 50.0  # rows far above Λ
    short = sp.csr_matrix(np.full((1, 30), 0.01))  # norm ≈ 0.055
    X = sp.vstack([heavy, short, sp.csr_matrix((1, 30))]).tocsr()
    S = DPPrototypes(k=2, value_max=100.0, row_norm=lam, row_scaling=scaling)._scale_rows(X, lam)
    norms = np.sqrt(np.asarray(S.multiply(S).sum(1)).ravel())
    before = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    assert norms.max() <= lam * (1 + 1e-12)
    np.testing.assert_allclose(norms[:60][before[:60] > lam], lam, rtol=1e-12)
    if scaling == "clip":
        np.testing.assert_array_equal(S[60].toarray(), short.toarray())
    else:
        assert norms[60] == pytest.approx(lam)
    assert norms[61] == 0
    Y = np.random.default_rng(4).standard_normal((40, 8)) * np.r_[np.full(20, 10.0), np.full(20, 0.1)][:, None]
    C = clip_rows(Y, lam)
    assert np.linalg.norm(C, axis=1).max() <= lam * (1 + 1e-12)
    np.testing.assert_allclose(np.linalg.norm(C[:20], axis=1), lam, rtol=1e-12)
    np.testing.assert_array_equal(C[20:], Y[20:])


def test_the_projection_dimension_follows_the_released_user_count_not_the_true_one(monkeypatch):
    """p (the candidate stage's projection dimension) is a function of the size stage's noisy count
    n̂: with n̂ made far larger than the rows (as count noise may), the release projects to the p of
    n̂ — the true count, a private quantity, would give a smaller p."""
    from dpfed_core.federation import dp_prototypes as dpp

    real = dpp.mech.count_mechanism

    def count(values, *a, stage="", **k):
        out = real(values, *a, stage=stage, **k)
        return (out[0] * 50, *out[1:]) if stage == "size" else out

    monkeypatch.setattr(dpp.mech, "count_mechanism", count)
    X = sp.csr_matrix(np.random.default_rng(0).integers(0, 2, size=(200, 12)).astype(float))
    meth = DPPrototypes(k=3, value_max=1.0, epsilon=2.0, delta=1e-6)
    meth.release(X, np.random.default_rng(0), PrivacyLedger(2.0, 1e-6).for_entity("e"))
    assert meth.p_ == dpp.default_projection_dim(meth.n_hat_) > dpp.default_projection_dim(200.0)


@pytest.mark.parametrize("vmin", [0.0, -2.0, -5.0])
def test_the_paper_recoverys_support_is_selected_at_the_sensitivity_of_one_coordinate(vmin):
    """The support of each cluster sum (the paper's top-s) is a Gumbel top-s over coordinates each one
    user moves by at most Λ∞ = max(|value_min|, value_max): its row states Λ∞ and the scale
    s·Λ∞/ε (2·s·Λ∞/ε when entries can be negative, the utility then not monotone)."""
    X = sp.csr_matrix(np.random.default_rng(1).integers(0, 4, size=(120, 20)).astype(float))
    s, vmax = 4, 3.0
    led = PrivacyLedger(2.0, 1e-6)
    DPPrototypes(k=1, value_max=vmax, value_min=vmin, variant="paper", support=s, epsilon=2.0,
                 delta=1e-6).release(X, np.random.default_rng(0), led.for_entity("e"))
    (row,) = [r for r in led.rows if r.stage == "recovery: support"]
    bound = max(abs(vmin), vmax)
    assert row.sensitivity == bound
    assert row.noise_scale == pytest.approx(s * (1 if vmin == 0 else 2) * bound / row.epsilon)


# ------------------------------------------------------------- the building blocks' own rules
def test_the_clipped_loss_counts_each_user_at_most_the_cap():
    """Σ_i min(min_j ‖x_i − p_j‖², cap): a user far from every centre adds exactly the cap, so one
    user moves the loss by at most the cap (the trial choice's sensitivity)."""
    from dpfed_core.federation.prototype_mechanisms import clipped_loss

    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [30.0, 0.0]]))
    P = np.array([[1.0, 0.0], [0.0, 0.0]])
    assert clipped_loss(X, P, 4.0) == pytest.approx(0.0 + 1.0 + 4.0)
    assert clipped_loss(X, P, 0.5) == pytest.approx(0.0 + 0.5 + 0.5)


def test_gaussian_recovery_zeroes_sums_within_threshold_sigma_and_keeps_the_largest_magnitudes():
    """Post-processing with the public σ: noisy sums within τ·σ of 0 are zeroed, then each prototype
    keeps its s largest magnitudes (negative values included when value_min < 0)."""
    from dpfed_core.federation.prototype_mechanisms import recover_gaussian

    sums = np.array([[10.0, -9.0, 0.5, 1.5, -0.2, 6.0]])
    sigma, tau = 0.4, 2.0
    noisy = sums + sigma * np.random.default_rng(0).standard_normal(sums.shape)
    want = np.where(np.abs(noisy) < tau * sigma, 0.0, noisy)
    want = np.clip(want / 2.0, -5.0, 5.0)
    keep = np.argsort(-np.abs(want[0]))[:3]
    P = recover_gaussian(sums, np.array([[2.0]]), 3, 1.0, -5.0, 5.0, 1.0, 1e-6, tau, np.random.default_rng(0),
                         PrivacyLedger(math.inf).for_entity("e"), "test", sigma=sigma)
    assert sorted(np.flatnonzero(P[0]).tolist()) == sorted(keep.tolist())
    np.testing.assert_allclose(P[0, keep], want[0, keep])
    assert set(np.flatnonzero(P[0]).tolist()) == {0, 1, 5}
    P = recover_gaussian(sums, np.array([[1.0]]), 6, 1.0, -50.0, 50.0, 1.0, 1e-6, tau, np.random.default_rng(0),
                         PrivacyLedger(math.inf).for_entity("e"), "test", sigma=sigma)
    np.testing.assert_array_equal(P[0] == 0, np.abs(noisy[0]) < tau * sigma)
    assert (P[0] == 0).sum() == 2  # 0.5 and −0.2 are within 2σ = 0.8 of 0; 1.5 is not


def test_every_grid_of_the_private_partition_reports_levels_by_cube_side():
    """Level a of the unshifted grid and level a + 1 of a shifted grid (root side 4Λ) have the same
    cube side 2Λ/2^a and report the same level: with every cube kept, the unshifted grid reports
    levels 1..depth, each shifted grid 0..depth (its first tested cube has side 2Λ), and every grid
    a root at level 0."""
    from dpfed_core.federation.prototype_mechanisms import private_partition

    Y = np.full((12, 3), 0.1)
    depth, grids = 4, 3
    C, lev = private_partition(Y, 1.0, depth, grids, math.inf, 1.0, np.random.default_rng(0),
                               PrivacyLedger(math.inf).for_entity("e"))
    shifted = [0, *range(0, depth + 1)]
    assert sorted(lev.tolist()) == sorted([0, *range(1, depth + 1), *shifted * (grids - 1)])
    assert C.shape == (lev.size, 3)


def test_the_default_projection_dimension_is_half_the_log_of_the_noisy_size_within_three_and_ten():
    from dpfed_core.federation.dp_prototypes import default_projection_dim

    assert default_projection_dim(math.exp(14.0)) == 7
    assert default_projection_dim(math.exp(9.2)) == 5
    assert default_projection_dim(100.0) == 3  # round(2.3) = 2, raised to 3
    assert default_projection_dim(-5.0) == 3  # a noisy size may be negative
    assert default_projection_dim(1e12) == 10  # round(13.8) = 14, capped at 10


def test_the_gaussian_variant_keeps_every_coordinate_by_default_and_the_paper_variant_64():
    """support=None: s = m for the Gaussian variant (its top-s is free post-processing), min(m, 64)
    for the paper variant; the default Λ is Λ∞·√min(m, 64) for both. Public: only m is read."""
    for m in (40, 100):
        X = sp.csr_matrix((1, m))
        vmin, vmax, lam, s = DPPrototypes(variant="gaussian", value_max=5.0)._bounds(X)
        assert s == m and lam == pytest.approx(5.0 * math.sqrt(min(m, 64)))
        _, _, lam_p, s_p = DPPrototypes(variant="paper", value_max=5.0)._bounds(X)
        assert s_p == min(m, 64) and lam_p == lam


@pytest.mark.parametrize("params,msg", [
    (dict(threshold=-0.5), "threshold must be a finite number ≥ 0"),
    (dict(variant="gaussian", split={"delta_candidates": 0.0}), r"delta_candidates must be in \(0, 1\]"),
])
def test_a_negative_threshold_or_no_delta_for_the_candidates_is_refused_by_name(params, msg):
    X, _ = clustered(n=50)
    ledger = PrivacyLedger(1.0, 1e-6)
    with pytest.raises(ConfigError, match=msg):
        DPPrototypes(k=3, value_max=5.0, epsilon=1.0, delta=1e-6, **params).release(
            X, np.random.default_rng(0), ledger.for_entity("h"))
    assert ledger.rows == []


def test_one_cluster_with_several_trials_spends_nothing_on_a_trial_choice():
    """With k = 1 there is no clustering to try several times: no ε goes to the trial choice (nor to
    the candidates and the search), all of it to the recovery, and the release spends the whole ε."""
    X, _ = clustered(n=80)
    meth = DPPrototypes(k=1, trials=3, value_max=5.0, epsilon=1.0, delta=1e-6)
    plan = meth.budget_plan(X.shape[1])
    assert plan["choice"] == plan["candidates"] == plan["search"] == 0.0
    assert sum(plan.values()) == pytest.approx(1.0)
    _, ledger = release(meth, X)
    assert ledger.spent("h")[0] == pytest.approx(1.0, rel=1e-9)


def test_a_support_beyond_the_catalogue_is_every_coordinate_at_the_catalogues_sensitivity():
    """support s > m keeps all m coordinates: the sums' L1 sensitivity is m·Λ∞, not s·Λ∞."""
    X, _ = clustered(n=120, m=20)
    led = PrivacyLedger(2.0, 1e-6)
    DPPrototypes(k=1, value_max=5.0, variant="paper", support=100, epsilon=2.0, delta=1e-6).release(
        X, np.random.default_rng(0), led.for_entity("e"))
    (row,) = [r for r in led.rows if r.stage == "recovery: sums"]
    assert row.sensitivity == 20 * 5.0


def test_refinements_of_the_gaussian_variant_share_the_sums_delta():
    """Each of the R + 1 recoveries of a trial gets δ_sums/(R + 1): the rows' δ add up to at most δ."""
    X, _ = clustered(n=300)
    for R in (0, 2):
        meth = DPPrototypes(k=3, value_max=5.0, variant="gaussian", refine_steps=R, cluster_size=None, epsilon=2.0,
                           delta=1e-6)
        _, ledger = release(meth, X)
        sums = [r for r in ledger.rows if r.stage == "recovery: sums"]
        assert len(sums) == R + 1
        assert all(r.delta == pytest.approx(1e-6 * 0.5 / (R + 1), rel=1e-9) for r in sums)
        assert sum(r.delta for r in ledger.rows) <= 1e-6


def test_the_non_private_limit_keeps_cubes_of_at_least_n_over_4k_users():
    X, _ = clustered(n=600)
    _, ledger = release(DPPrototypes(k=4, value_max=5.0, cluster_size=None, epsilon=math.inf), X, eps=math.inf)
    notes = [r.note for r in ledger.rows if r.stage == "candidates"]
    assert notes and all("γ=37.5" in n for n in notes)


def test_a_worker_release_is_refused_within_the_runs_budget_before_any_noise_is_drawn(monkeypatch):
    """A prototype release computed for the run (possibly in a worker process) spends on a ledger of the
    run's own (ε, δ): a method asking for more is refused at its first row, before any noise is drawn —
    the run's ledger re-checking its rows afterwards would come after the draws."""
    from dpfed_core.federation.protocol import release_entity
    from dpfed_core.privacy import mechanisms

    def no_draw(rng):
        raise AssertionError("noise drawn for a release the budget refuses")

    monkeypatch.setattr(mechanisms, "sampler_for", no_draw)
    X = sp.csr_matrix(np.random.default_rng(0).integers(0, 6, size=(40, 12)).astype(float))
    meth = DPPrototypes(k=2, value_max=5.0, epsilon=100.0, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        release_entity(meth, X, np.random.default_rng(1), "e", 1e-3, 1e-6)


@pytest.mark.parametrize("variant", ["paper", "gaussian"])
def test_every_count_row_states_that_one_user_moves_a_count_by_one(variant):
    """The noisy size n̂ and the clusters' noisy sizes are counts one added user moves by 1 (the clusters
    are disjoint): each row states sensitivity 1 and the discrete Laplace scale 1/ε it drew at."""
    X, _ = clustered(n=600)
    meth = DPPrototypes(k=4, value_max=5.0, epsilon=2.0, delta=1e-6, variant=variant, cluster_size=100.0,
                        refine_steps=1)
    _, ledger = release(meth, X)
    counts = [r for r in ledger.rows if r.stage in ("size", "recovery: counts")]
    assert {r.stage for r in counts} == {"size", "recovery: counts"}
    for r in counts:
        assert r.sensitivity == 1 and r.noise_scale == pytest.approx(1.0 / r.epsilon, rel=1e-12), r


def test_the_gaussian_variants_delta_goes_to_the_candidates_and_the_sums_as_the_split_declares():
    """delta_candidates = w: the candidate stage's level tests share w·δ (each keeps a cube of one user
    with probability at most w·δ/tests, at the threshold γ planned for it), the sums of the R + 1
    recoveries (1 − w)·δ; each row states its part."""
    from dpfed_core.federation.prototype_mechanisms import partition_plan

    X, _ = clustered(n=600)
    delta, w, R, depth, grids = 1e-6, 0.2, 1, 3, 2
    meth = DPPrototypes(k=4, value_max=5.0, epsilon=50.0, delta=delta, variant="gaussian", cluster_size=None,
                        projection_dim=3, refine_steps=R, depth=depth, n_grids=grids,
                        split={"delta_candidates": w})
    _, ledger = release(meth, X)
    tests = depth + (grids - 1) * (depth + 1)
    cand = [r.delta for r in ledger.rows if r.stage == "candidates"]
    sums = [r.delta for r in ledger.rows if r.stage == "recovery: sums"]
    assert cand and all(0 < d <= w * delta / tests for d in cand)
    _, gamma = partition_plan(meth.budget_plan(X.shape[1], 4)["candidates"], w * delta * (1 - 1e-12), depth, grids)
    assert all(f"γ={gamma:.4g}" in r.note for r in ledger.rows if r.stage == "candidates")
    assert len(sums) == R + 1 and all(d == pytest.approx((1 - w) * delta / (R + 1), rel=1e-9) for d in sums)
    assert sum(r.delta for r in ledger.rows) <= delta


def test_candidates_padded_beyond_the_partition_are_drawn_without_the_data(monkeypatch):
    """When the private partition proposes fewer than k centres, the rest are random points of the Λ-ball:
    the candidate set is then the same for two entities of different users given the same noise stream."""
    import dpfed_core.federation.dp_prototypes as dpp

    monkeypatch.setattr(dpp, "private_partition", lambda Y, *a, **k: (np.zeros((0, Y.shape[1])), np.zeros(0, int)))
    seen = []
    for seed in (0, 1):
        X, _ = clustered(n=200, seed=seed)
        meth = DPPrototypes(k=5, value_max=5.0, epsilon=2.0, delta=1e-6, cluster_size=None, projection_dim=4)
        release(meth, X, seed=7)
        seen.append(meth.candidates_)
    assert seen[0].shape == (5, 4)
    np.testing.assert_array_equal(seen[0], seen[1])
    lam = meth._bounds(X)[2]
    assert (np.linalg.norm(seen[0], axis=1) <= lam * (1 + 1e-12)).all()


def test_the_number_of_prototypes_follows_the_released_user_count_not_the_true_one(monkeypatch):
    """The automatic k = clip(⌊n̂ / cluster_size⌋, 1, k) is a function of the size stage's noisy count: with n̂
    made far larger than the rows (as count noise may), the release sends the k of n̂ — the true count, a
    private quantity, would shape the message with fewer prototypes."""
    from dpfed_core.federation import dp_prototypes as dpp

    real = dpp.mech.count_mechanism

    def count(values, *a, stage="", **k):
        out = real(values, *a, stage=stage, **k)
        return (out[0] * 50, *out[1:]) if stage == "size" else out

    monkeypatch.setattr(dpp.mech, "count_mechanism", count)
    X, _ = clustered(n=200)
    meth = DPPrototypes(k=10, value_max=5.0, epsilon=2.0, delta=1e-6, cluster_size=100.0)
    rel, _ = release(meth, X)
    assert meth.effective_k(200.0) == 2
    assert meth.k_ == meth.effective_k(meth.n_hat_) == 10 and rel.prototypes.shape == (10, X.shape[1])


@pytest.mark.parametrize("variant", ["paper", "gaussian"])
def test_one_added_user_moves_the_recovered_sums_by_at_most_the_sensitivity_they_are_released_at(monkeypatch,
                                                                                                  variant):
    """Neighbour audit of the recovery's input: adding one user (every entry far above the bound, or one
    entry only) moves the paper variant's cluster sums by at most Λ∞ per coordinate and the Gaussian
    variant's by at most Λ in ℓ2 — the sensitivities the two mechanisms are given (Λ∞ = value_max; Λ its
    default Λ∞·√64 on a catalogue of more than 64 items)."""
    import dpfed_core.federation.dp_prototypes as dpp

    seen = []
    for name in ("recover_paper", "recover_gaussian"):
        def spy(sums, denom, s, bound, *a, _real=getattr(dpp, name), **k):
            seen.append((np.array(sums), bound))
            return _real(sums, denom, s, bound, *a, **k)

        monkeypatch.setattr(dpp, name, spy)
    m = 100
    X = sp.csr_matrix(np.random.default_rng(2).integers(0, 3, size=(50, m)).astype(float))
    for user in (np.full((1, m), 100.0), np.eye(1, m) * 100.0):
        seen.clear()
        for rows in (X, sp.vstack([X, sp.csr_matrix(user)]).tocsr()):
            release(DPPrototypes(k=1, value_max=5.0, epsilon=1.0, delta=1e-6, variant=variant), rows)
        (before, bound), (after, bound_after) = seen
        assert bound == bound_after == (5.0 if variant == "paper" else 5.0 * 8)
        moved = after - before
        if variant == "paper":
            assert np.abs(moved).max() <= bound * (1 + 1e-12)
        else:
            assert np.linalg.norm(moved) <= bound * (1 + 1e-12)


@pytest.mark.parametrize("method", ["dp-prototypes", "dp-gaussian"])
def test_a_zero_delta_is_refused_naming_the_method_given_and_the_delta_flag(method, capsys, tmp_path):
    from dpfed_core.cli.main import main

    assert main(["run", "--data", "sample:clinic", "--method", method, "--delta", "0", "--dry-run",
                 "--store", str(tmp_path / "s.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {method} needs δ > 0") and err.rstrip().endswith("[--delta]"), err
