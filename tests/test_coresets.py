"""The LSH-tree private coreset (``candidates="lsh"``): structure, ledger, and
neighbouring-dataset audits of its two mechanisms and of the whole release, each with a power check
(the same audit flags a copy whose noise is too small). Fixed seeds."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.federation import coresets
from dpfed_core.federation.dp_prototypes import DPPrototypes
from dpfed_core.privacy import mechanisms as mech
from dpfed_core.privacy.ledger import PrivacyLedger
from tests.dp_audit import audit_statistics


def _blobs(n=600, d=8, k=4, seed=0):
    g = np.random.default_rng(seed)
    c = g.standard_normal((k, d))
    c = 0.8 * c / np.linalg.norm(c, axis=1, keepdims=True)
    X = c[g.integers(k, size=n)] + 0.02 * g.standard_normal((n, d))
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0), c


def test_exact_tree_leaves_are_disjoint_means_of_their_users():
    X, _ = _blobs()
    core = coresets.lsh_tree_coreset(X, 1.0, 6, math.inf, math.inf, 0.0, 20, 60, np.random.default_rng(1),
                                     PrivacyLedger(math.inf).for_entity("e"))
    L = core.points.shape[0]
    assert core.weights.shape == (L,) and core.levels.shape == (L,)
    assert core.n_root == X.shape[0]
    members = core.leaf_of >= 0
    # exact counts: every leaf's weight is its number of users, its point their mean
    assert np.array_equal(np.bincount(core.leaf_of[members], minlength=L), core.weights)
    for j in range(L):
        assert np.allclose(core.points[j], X[core.leaf_of == j].mean(0))
    # only users whose own child fell below the threshold are cut; a leaf has ≥ min_node users
    # unless it is the root
    assert members.mean() > 0.9 and (core.weights[core.levels > 0] >= 20).all()
    # the root's children are both counted (empty ones included): 2 counts at level 1
    assert core.tree_counts[1].size == 2


def test_capped_thresholds_lower_both_to_the_released_root_count():
    # the cap binds: keep = n̂/c, the branch threshold keeps its ratio to the keep threshold
    assert coresets.capped_thresholds(300.0, 900.0, 1000.0, 10.0) == (100.0, 300.0)
    # the cap does not bind: the thresholds are unchanged
    assert coresets.capped_thresholds(50.0, 150.0, 1000.0, 10.0) == (50.0, 150.0)
    # never below one user, whatever the (noisy, possibly negative) root count
    assert coresets.capped_thresholds(300.0, 900.0, -40.0, 10.0) == (1.0, 3.0)
    with pytest.raises(ValueError, match="cap_divisor"):
        coresets.capped_thresholds(300.0, 900.0, 1000.0, 0.0)


def test_the_cap_is_lowered_by_up_to_one_and_a_half_while_it_stays_above_the_count_noise():
    # n̂/c = 100; a count noise scale b ≤ n̂/(1.5c) = 66.7: the finer cap n̂/(1.5c)
    keep, branch = coresets.capped_thresholds(300.0, 900.0, 1000.0, 10.0, count_scale=20.0)
    assert keep == pytest.approx(1000.0 / 15.0) and branch == pytest.approx(3 * keep)
    # b between n̂/(1.5c) and n̂/c: the cap is b itself (not below the noise of one count)
    assert coresets.capped_thresholds(300.0, 900.0, 1000.0, 10.0, count_scale=80.0) == (80.0, 240.0)
    # b ≥ n̂/c (small ε, few users a cluster): the cap n̂/c, unchanged
    assert coresets.capped_thresholds(300.0, 900.0, 1000.0, 10.0, count_scale=500.0) == (100.0, 300.0)
    # a noise threshold below every cap is not raised
    assert coresets.capped_thresholds(50.0, 150.0, 1000.0, 10.0, count_scale=20.0) == (50.0, 150.0)


def test_the_tree_lowers_its_cap_by_the_scale_of_its_own_count_noise(monkeypatch):
    # ε_tree = 11·ε_level with 10 levels: b = 1/ε_level, read by the tree from its own ε. With
    # cap_divisor 8: ε_level = 1 (b = 1) gives the finer cap n̂/12; ε_level = 1/1000 (b = 1000, more
    # than n̂/8) leaves the cap at n̂/8 — n̂ the released root count in both cases
    X, _ = _blobs(n=600)
    led = PrivacyLedger(math.inf).for_entity("e")
    seen = {}
    real = coresets.capped_thresholds

    def spy(*a, **kw):
        seen["b"] = kw.get("count_scale")
        seen["out"] = real(*a, **kw)
        return seen["out"]

    monkeypatch.setattr(coresets, "capped_thresholds", spy)
    for eps_level, b, divisor in ((1.0, 1.0, 12.0), (1 / 1000, 1000.0, 8.0)):
        tree = coresets.build_lsh_tree(X, 10, 11 * eps_level, 400.0, 1200.0, np.random.default_rng(3), led,
                                       cap_divisor=8.0)
        assert seen["b"] == pytest.approx(b)
        assert seen["out"][0] == pytest.approx(max(1.0, tree.n_root / divisor))


def test_capped_tree_splits_clusters_an_uncapped_threshold_keeps_whole():
    # 4 clusters of ~150 users and a keep threshold of 400 (as a large σ at small ε gives): without
    # the cap the root cannot split; capped (exact counts, so the finer cap n̂/(1.5·8) = 50 applies)
    # the leaves reach the clusters
    X, c = _blobs(n=600)
    led = PrivacyLedger(math.inf).for_entity("e")
    plain = coresets.build_lsh_tree(X, 8, math.inf, 400.0, 1200.0, np.random.default_rng(3), led)
    capped = coresets.build_lsh_tree(X, 8, math.inf, 400.0, 1200.0, np.random.default_rng(3), led,
                                     cap_divisor=8.0)
    assert plain.counts.size == 1
    assert capped.counts.size >= 4 and (capped.counts[capped.levels > 0] >= 50).all()
    # the leaves separate the clusters: most users share their leaf's majority cluster, and the
    # majorities cover at least 3 of the 4 clusters (the root alone: 1 and ~25 %)
    truth = np.argmin(((X[:, None] - c[None]) ** 2).sum(-1), axis=1)
    majority = [np.bincount(truth[capped.leaf_of == j], minlength=4).argmax() for j in range(capped.counts.size)]
    pure = sum(np.bincount(truth[capped.leaf_of == j], minlength=4).max() for j in range(capped.counts.size))
    assert pure >= 0.8 * (capped.leaf_of >= 0).sum() and len(set(majority)) >= 3


def test_dp_lsh_cap_reads_the_released_root_count_never_the_true_one(monkeypatch):
    # the root's released count is 6,000 for 600 users (a deterministic stand-in for its noise): the
    # cap n̂/8 = 750 is above the keep threshold 400, so nothing is lowered and the root stays whole;
    # a cap of the true count (75) would split it
    X, _ = _blobs(n=600)
    real = coresets._noisy_counts

    def released(true, eps_level, rng, ledger, level, depth):
        out = real(true, eps_level, rng, ledger, level, depth)
        return out + 5400.0 if level == 0 else out

    monkeypatch.setattr(coresets, "_noisy_counts", released)
    led = PrivacyLedger(math.inf).for_entity("e")
    tree = coresets.build_lsh_tree(X, 8, math.inf, 400.0, 1200.0, np.random.default_rng(3), led, cap_divisor=8.0)
    assert tree.n_root == 6000.0 and tree.counts.size == 1


def test_tree_depth_rule_is_a_function_of_epsilon_only():
    assert coresets.default_depth(0.1) == coresets.default_depth(0.99) == 10
    assert coresets.default_depth(1.0) == coresets.default_depth(30.0) == 15
    assert _lsh(epsilon=0.5).lsh_depth_for() == 10 and _lsh(epsilon=0.5, lsh_depth=4).lsh_depth_for() == 4
    X, _ = _blobs(n=2000)
    led = PrivacyLedger(0.5, 1e-6)
    _lsh(epsilon=0.5, refine_steps=0).release(sp.csr_matrix(X), np.random.default_rng(0), led.for_entity("e"))
    levels = [r for r in led.rows if r.stage == "candidates"]
    # each counted level is charged ε_tree/(D + 1) with D = 10
    plan = _lsh(epsilon=0.5, refine_steps=0).budget_plan(8, 4)
    assert math.isclose(levels[0].epsilon, plan["candidates"] / 11)


def test_weighted_kmeans_always_returns_k_rows():
    P = np.array([[0.0, 1.0], [1.0, 0.0]])
    C, w = coresets.weighted_kmeans(P, np.array([3.0, 5.0]), 4, np.random.default_rng(0))
    assert C.shape == (4, 2) and np.allclose(w, [3, 5, 0, 0]) and np.allclose(C[2:], P[1])
    X, c = _blobs()
    C, w = coresets.weighted_kmeans(X, np.ones(len(X)), 4, np.random.default_rng(0))
    assert np.isclose(w.sum(), len(X))
    # each true centre has a k-means centre next to it
    assert (((c[:, None] - C[None]) ** 2).sum(-1).min(1) < 0.01).all()


def _lsh(**kw):
    base = dict(k=4, value_max=1.0, value_min=-1.0, row_norm=1.0, epsilon=1.0, delta=1e-6,
                variant="gaussian", row_scaling="clip", cluster_size=None, candidates="lsh")
    base.update(kw)
    return DPPrototypes(**base)


def test_lsh_release_ledger_and_shape():
    X, c = _blobs(n=4000)
    led = PrivacyLedger(1.0, 1e-6)
    meth = _lsh(refine_steps=0)  # the coreset alone: its k-means centres are the prototypes
    rel = meth.release(sp.csr_matrix(X), np.random.default_rng(0), led.for_entity("e"))
    assert rel.prototypes.shape == (4, 8) and rel.counts.shape == (4,)
    stages = [r.stage for r in led.rows]
    # one row per counted tree level (the mechanism records each), then the leaf sums
    n_levels = stages.count("candidates")
    assert 1 <= n_levels <= meth.lsh_depth_for() + 1 and stages == ["candidates"] * n_levels + ["coreset sums"]
    eps, delta = led.guarantee()
    assert eps <= 1.0 and delta <= 1e-6
    levels = led.rows[:n_levels]
    e_level = levels[0].epsilon
    assert all(r.delta == 0 and r.epsilon == e_level and math.isclose(r.noise_scale, 1.0 / e_level) for r in levels)
    assert e_level * (meth.lsh_depth_for() + 1) <= meth.budget_plan(8, 4)["candidates"] * (1 + 1e-9)
    # the leaf noise is at least the continuous Gaussian mechanism's σ for its (ε, δ) at Λ = 1
    leaf = led.rows[-1]
    assert leaf.noise_scale >= mech.gaussian_sigma_analytic(leaf.epsilon, leaf.delta, 1.0) * (1 - 1e-9)
    # with 1,000 users per blob the release is far better than one cluster
    loss = lambda P: ((X[:, None] - P[None]) ** 2).sum(-1).min(1).mean()  # noqa: E731
    assert loss(rel.prototypes) < 0.2 * loss(X.mean(0, keepdims=True))


def test_lsh_refinement_adds_recovery_rows_within_budget():
    X, _ = _blobs(n=2000)
    led = PrivacyLedger(1.0, 1e-6)
    _lsh(refine_steps=2).release(sp.csr_matrix(X), np.random.default_rng(0), led.for_entity("e"))
    stages = [r.stage for r in led.rows]
    first_sum = stages.index("coreset sums")
    assert set(stages[:first_sum]) == {"candidates"} and stages.count("recovery: sums") == 2
    eps, delta = led.guarantee()
    assert eps <= 1.0 and delta <= 1e-6


def test_lsh_non_private_limit_is_labelled():
    X, _ = _blobs(n=1000)
    led = PrivacyLedger(math.inf)
    rel = _lsh(epsilon=math.inf).release(sp.csr_matrix(X), np.random.default_rng(0), led.for_entity("e"))
    assert rel.prototypes.shape == (4, 8) and all(math.isinf(r.epsilon) for r in led.rows)


@pytest.mark.parametrize("kw,msg", [(dict(candidates="grid"), "candidates must be"),
                                    (dict(trials=2), "trials > 1"),
                                    (dict(lsh_depth=0), "lsh_depth"),
                                    (dict(lsh_node_factor=-1.0), "lsh_node_factor"),
                                    (dict(lsh_node_cap=0.0), "lsh_node_cap"),
                                    (dict(lsh_node_cap="2"), "lsh_node_cap")])
def test_lsh_bad_configuration_names_the_parameter(kw, msg):
    with pytest.raises(ConfigError, match=msg):
        _lsh(**kw).release(sp.csr_matrix(np.eye(3)), np.random.default_rng(0), PrivacyLedger(1.0, 1e-6).for_entity("e"))


# ------------------------------------------------------------------ neighbouring-dataset audits
def _tree_sampler(X, eps_noise, depth=1):
    """Tree counts of ``runs`` trees on X: the sum of the counts on the path of the users (all at the
    origin, so every hash bit is 0 and the path is node 0 of every level) and each of them.
    Thresholds −inf: every node is kept and branches, so D's and D''s trees have the same shape and
    the extra user moves one count per level (the worst case)."""
    def sample(r, g):
        out = np.empty((r, depth + 2))
        for i in range(r):
            core = coresets.build_lsh_tree(X, depth, eps_noise, -np.inf, -np.inf, g,
                                               PrivacyLedger(math.inf).for_entity("audit"))
            path = [c[0] for c in core.tree_counts]
            out[i] = [sum(path), *path]
        return out
    return sample


def test_dp_lsh_tree_counts_stay_under_epsilon_and_audit_has_power():
    # D: 5 users at the origin; D': one more, on the same path at every level
    D, Dp = np.zeros((5, 2)), np.zeros((6, 2))
    eps = 1.0
    lb = audit_statistics(_tree_sampler(D, eps), _tree_sampler(Dp, eps), 12000, seed=11)
    assert 0.3 < lb <= eps  # under the claim, and not vacuous
    # power: the same audit flags a tree whose count noise is 2.5× too small
    lb_bad = audit_statistics(_tree_sampler(D, 2.5 * eps), _tree_sampler(Dp, 2.5 * eps), 12000, seed=11)
    assert lb_bad > eps


def _release_stats(meth, X, runs, g):
    out = []
    for _ in range(runs):
        led = PrivacyLedger(meth.epsilon, meth.delta)
        rel = meth.release(sp.csr_matrix(X), g, led.for_entity("e"))
        assert led.guarantee()[0] <= meth.epsilon
        P = rel.prototypes
        out.append(np.concatenate([rel.counts, P.ravel(), [P.sum(), rel.counts.sum()]]))
    return np.array(out)


class _SmallLeafNoise(DPPrototypes):
    """Mutant: charges the leaf sums at (ε, δ) but draws a tenth of the calibrated σ (the Gaussian
    mechanism is told a tenth of the sensitivity)."""

    def _release_lsh(self, Xc, Xs, k, plan, delta, rng, ledger):
        real = mech.gaussian_mechanism
        try:
            mech.gaussian_mechanism = lambda v, sens, e, d, g, **kw: real(v, sens / 10, e, d, g, **kw)
            return super()._release_lsh(Xc, Xs, k, plan, delta, rng, ledger)
        finally:
            mech.gaussian_mechanism = real


def _audit_release_and_mutant(bad_cls, eps: float, delta: float, **kw) -> tuple[float, float]:
    """ε lower bounds of the release and of a mutant class on D: two users, D': one more at the
    worst spot (a full row of norm Λ in a new direction); 2,000 runs each."""
    D = np.array([[0.6, 0.0, 0.0], [0.0, 0.6, 0.0]])
    Dp = np.vstack([D, [[0.0, 0.0, 1.0]]])
    kw = dict(k=4, epsilon=eps, delta=delta, lsh_depth=2, lsh_node_factor=0.05, **kw)
    bounds = []
    for meth in (_lsh(**kw), bad_cls(**{**dict(value_max=1.0, value_min=-1.0, row_norm=1.0, variant="gaussian",
                                                row_scaling="clip", cluster_size=None, candidates="lsh"), **kw})):
        bounds.append(audit_statistics(lambda r, g, m=meth: _release_stats(m, D, r, g),
                                       lambda r, g, m=meth: _release_stats(m, Dp, r, g), 2000, seed=12, delta=delta))
    return bounds[0], bounds[1]


def test_dp_lsh_end_to_end_release_stays_under_epsilon_and_audit_has_power():
    # refine_steps=0: the prototypes are the coreset's centres, so the audit sees the leaf sums' noise
    lb, lb_bad = _audit_release_and_mutant(_SmallLeafNoise, 1.0, 1e-3, refine_steps=0)
    assert lb <= 1.0 < lb_bad


def test_dp_lsh_leaf_average_divides_by_the_released_count_never_the_true_one():
    # exact sums (no leaf noise) but noisy counts: every leaf point must be its users' sum divided by
    # max(noisy count, 1) — the released count — so the division reveals nothing more (a true-count
    # denominator would turn the point into the exact mean)
    X, _ = _blobs(n=300)
    g = np.random.default_rng(4)
    audit = PrivacyLedger(math.inf).for_entity("audit")
    tree = coresets.build_lsh_tree(X, 3, 0.3, 1.0, 3.0, g, audit)
    pts, sigma = coresets.noisy_leaf_averages(X, tree, 1.0, math.inf, 0.0, g, audit)
    assert sigma == 0.0
    for j in range(tree.counts.size):
        s = X[tree.leaf_of == j].sum(0)
        want = s / max(tree.counts[j], 1.0)
        want = want * min(1.0, 1.0 / max(np.linalg.norm(want), 1e-300))
        np.testing.assert_allclose(pts[j], want, rtol=1e-9, atol=1e-12)
    assert not np.allclose(tree.counts, np.bincount(tree.leaf_of[tree.leaf_of >= 0], minlength=tree.counts.size))


def test_james_stein_shrinkage_lowers_the_error_of_noisy_averages():
    """The leaf averages' shrinkage (post-processing): factor in [0, 1], identity without noise,
    and a lower mean squared error than the raw noisy averages when the noise is comparable to
    the signal (m = 100, noise norm ≈ signal norm), higher-signal averages shrunk less."""
    g = np.random.default_rng(5)
    L, m, sigma = 400, 100, 8.0
    truth = g.standard_normal((L, m))
    truth *= (0.8 / np.linalg.norm(truth, axis=1))[:, None]
    counts = np.full(L, 100.0)
    counts[: L // 2] = 400.0
    noisy = truth + g.normal(0.0, 1.0, (L, m)) * (sigma / counts)[:, None]
    shrunk = coresets.james_stein(noisy, counts, sigma)
    factor = (shrunk * noisy).sum(1) / (noisy * noisy).sum(1)
    assert np.all(factor >= 0) and np.all(factor <= 1)
    assert np.allclose(shrunk / factor[:, None], noisy)  # a scaling, never a change of direction
    err_raw = ((noisy - truth) ** 2).sum(1)
    err_js = ((shrunk - truth) ** 2).sum(1)
    assert err_js[L // 2:].mean() < 0.75 * err_raw[L // 2:].mean()  # noisy leaves: large gain
    assert err_js[: L // 2].mean() <= err_raw[: L // 2].mean()
    assert factor[: L // 2].mean() > factor[L // 2:].mean()
    assert np.array_equal(coresets.james_stein(noisy, counts, 0.0), noisy)


# ------------------------------------------------------------------ DP-Lloyd steps after the coreset
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 3.13, 10.0])
def test_lsh_default_refine_steps_follow_the_public_rule_within_budget(eps):
    from dpfed_core.federation.dp_prototypes import default_refine_steps
    from dpfed_core.privacy.ledger import ZCDP

    X, _ = _blobs(n=2000)
    delta = 1e-6
    led = PrivacyLedger(eps, delta)
    meth = _lsh(epsilon=eps, delta=delta)  # refine_steps=None: the rule
    meth.release(sp.csr_matrix(X), np.random.default_rng(0), led.for_entity("e"))
    # the rule of the public parameters and the tree's released root count
    R = default_refine_steps(eps, delta, 4, 8, 1.0, n_hat=meth.coreset_.n_root,
                             step_sigma=lambda r: meth.lloyd_step_sigma(8, 4, r))
    assert meth.refine_steps_ == R and (R == 0) == (eps < 1)
    stages = [r.stage for r in led.rows]
    # every step is charged: one count release and one Gaussian sum release per step
    assert stages.count("recovery: sums") == R and stages.count("recovery: counts") == R
    assert stages.count("coreset sums") == 1
    # each step's sums carry the σ of an R-step plan
    if R > 0:
        sums = [r for r in led.rows if r.stage == "recovery: sums"]
        assert all(math.isclose(r.noise_scale, meth.lloyd_step_sigma(8, 4, R)) for r in sums)
    got_eps, got_delta = led.guarantee()
    assert got_eps <= eps * (1 + 1e-9) and got_delta <= delta * (1 + 1e-9)
    if R > 0:
        # the Gaussian rows are planned in zCDP: the ledger's total is the zCDP composition, and the
        # Gaussian rows' stated ε add up (basic composition) to more than the request
        assert led.accountant("e") == ZCDP
        assert sum(r.epsilon for r in led.rows) > eps
        gauss = [r for r in led.rows if r.stage in ("coreset sums", "recovery: sums")]
        assert all(r.rho is not None and r.rho > 0 for r in gauss)


def test_lsh_refine_steps_follow_the_released_root_count_not_the_true_one(monkeypatch):
    """R is a function of the tree's *released* root count: with that count made far smaller than
    the rows (as count noise may), the release runs the steps of the released count — the true
    count, a private quantity, would give more."""
    import dataclasses

    from dpfed_core.federation import dp_prototypes as dpp

    real = coresets.build_lsh_tree
    monkeypatch.setattr(coresets, "build_lsh_tree",
                        lambda *a, **k: (lambda t: dataclasses.replace(t, n_root=t.n_root / 20))(real(*a, **k)))
    X, _ = _blobs(n=20000)
    meth = _lsh(epsilon=3.0)
    meth.release(sp.csr_matrix(X), np.random.default_rng(0), PrivacyLedger(3.0, 1e-6).for_entity("e"))
    rule = lambda n: dpp.default_refine_steps(3.0, 1e-6, 4, 8, 1.0, n_hat=n,  # noqa: E731
                                              step_sigma=lambda r: meth.lloyd_step_sigma(8, 4, r))
    assert meth.refine_steps_ == rule(meth.coreset_.n_root) < rule(float(X.shape[0]))


def test_lsh_refine_rule_reads_parameters_and_the_released_count_only():
    from dpfed_core.federation import dp_prototypes as dpp

    rule = dpp.default_refine_steps
    a = _lsh(epsilon=2.0)
    sig = lambda r: a.lloyd_step_sigma(8, 4, r)  # noqa: E731
    # before the tree: the floor, the same whatever the rows
    assert a.refine_steps_for(8, 4) == rule(2.0, 1e-6, 4, 8, 1.0) == 1
    assert rule(0.5, 1e-6, 4, 8, 1.0, n_hat=1e9, step_sigma=sig) == 0
    # more users per cluster → less noise per centre → at least as many steps, up to the cap
    Rs = [rule(2.0, 1e-6, 4, 8, 1.0, n_hat=n, step_sigma=sig) for n in (10, 1e3, 1e4, 1e5, 1e7)]
    assert Rs == sorted(Rs) and Rs[0] == 1 and Rs[-1] == dpp.MAX_REFINE_STEPS
    # the chosen R is the largest whose per-step noise on a centre of n̂/k users is ≤ the ratio
    n_hat = math.sqrt(8) * 4 * (sig(3) + sig(4)) / 2 / dpp.STEP_NOISE_RATIO  # between 3 and 4 steps' need
    R = rule(2.0, 1e-6, 4, 8, 1.0, n_hat=n_hat, step_sigma=sig)
    ratio = lambda r: math.sqrt(8) * sig(r) * 4 / n_hat  # noqa: E731
    assert R == 3
    assert ratio(R) <= dpp.STEP_NOISE_RATIO < ratio(R + 1)
    # more steps share the Lloyd budget: each is noisier
    assert sig(1) < sig(2) < sig(5)
    assert _lsh(epsilon=2.0, refine_steps=3).refine_steps_for(8, 4) == 3
    assert _lsh(epsilon=2.0, candidates="partition").refine_steps_for(8, 4) == 0
    # the non-private limit runs the most steps (no noise)
    assert rule(math.inf, 0.0, 4, 8, 1.0, n_hat=100, step_sigma=lambda r: 0.0) == dpp.MAX_REFINE_STEPS


class _SmallLloydNoise(DPPrototypes):
    """Mutant: draws the DP-Lloyd sums with a tenth of the planned σ while telling the ledger the
    planned ρ (σ and sensitivity both divided by 10), so only an audit can see it."""

    def _release_lsh(self, Xc, Xs, k, plan, delta, rng, ledger):
        real = mech.gaussian_mechanism

        def small(v, sens, e, d, g, **kw):
            if kw.get("stage") == "recovery: sums" and kw.get("sigma"):
                return real(v, sens / 10, e, d, g, **{**kw, "sigma": kw["sigma"] / 10})
            return real(v, sens, e, d, g, **kw)
        try:
            mech.gaussian_mechanism = small
            return super()._release_lsh(Xc, Xs, k, plan, delta, rng, ledger)
        finally:
            mech.gaussian_mechanism = real


def test_dp_lsh_lloyd_release_stays_under_epsilon_and_audit_has_power():
    # the coreset + one DP-Lloyd step (the zCDP-planned path); larger counts and Lloyd shares than
    # the defaults, so that a prototype is the Lloyd sum over a near-true count and the audit sees
    # the Lloyd noise (with the default 2 % on the counts, a count's Laplace noise hides a tenth of σ
    # as well as the full σ)
    lb, lb_bad = _audit_release_and_mutant(_SmallLloydNoise, 1.0, 1e-3, refine_steps=1,
                                           split={"counts": 0.3, "sums": 1.5})
    assert lb <= 1.0 < lb_bad


def test_the_lsh_release_grows_its_tree_with_the_public_thresholds_and_a_cap_of_nodecap_times_k(monkeypatch):
    """The keep threshold is node_factor·√m·σ/Λ of the leaf sums' public σ, the branch threshold
    BRANCH_FACTOR times it, and the cap divisor lsh_node_cap·k."""
    X, _ = _blobs(n=300)
    seen = {}
    real = coresets.build_lsh_tree

    def spy(X, depth, eps_tree, min_node, min_branch, rng, ledger, cap_divisor=None):
        seen.update(min_node=min_node, min_branch=min_branch, cap=cap_divisor)
        return real(X, depth, eps_tree, min_node, min_branch, rng, ledger, cap_divisor=cap_divisor)

    monkeypatch.setattr(coresets, "build_lsh_tree", spy)
    meth = DPPrototypes(k=4, value_max=1.0, candidates="lsh", variant="paper", epsilon=1.0, delta=1e-6,
                        cluster_size=None)
    meth.release(sp.csr_matrix(X), np.random.default_rng(0), PrivacyLedger(1.0, 1e-6).for_entity("e"))
    assert seen["min_branch"] == coresets.BRANCH_FACTOR * seen["min_node"]
    assert seen["min_node"] > 1.0
    assert seen["cap"] == coresets.DEFAULT_NODE_CAP * 4


def test_the_coresets_centres_are_released_within_the_public_value_bounds():
    """Without refinement the weighted k-means centres of the coreset are the prototypes, clipped to
    [value_min, value_max] like every other recovery (rows normalised to Λ can exceed the value bound
    coordinate-wise)."""
    X, _ = _blobs(n=1000)
    meth = _lsh(refine_steps=0, value_max=0.2, value_min=-0.2, row_scaling="normalise")
    rel = meth.release(sp.csr_matrix(X), np.random.default_rng(0), PrivacyLedger(1.0, 1e-6).for_entity("e"))
    assert rel.prototypes.min() >= -0.2 and rel.prototypes.max() <= 0.2
    assert np.abs(meth.centres_).max() > 0.2


def test_the_lloyd_split_gives_the_leaf_sums_one_minus_w_and_each_step_w_over_r():
    from dpfed_core.federation.dp_prototypes import lsh_lloyd_split

    fr = lsh_lloyd_split(3, 0.4).fractions()
    assert list(fr) == ["coreset sums", "lloyd sums 1", "lloyd sums 2", "lloyd sums 3"]
    assert fr["coreset sums"] == pytest.approx(0.6)
    assert all(fr[f"lloyd sums {r}"] == pytest.approx(0.4 / 3) for r in (1, 2, 3))
    assert sum(fr.values()) == pytest.approx(1.0)


def test_the_leaf_threshold_is_node_factor_root_m_sigma_over_lambda_and_at_least_one():
    assert coresets.leaf_threshold(100, 2.0, 4.0, 3.0) == pytest.approx(3.0 * 10.0 * 2.0 / 4.0)
    assert coresets.leaf_threshold(100, 0.0, 1.0) == 1.0  # ε = inf: every non-empty node counts
    assert coresets.leaf_threshold(4, 0.01, 1.0, 3.0) == 1.0


def test_a_zero_row_hashes_to_zeros_and_a_negative_projection_to_one():
    H = np.array([[1.0, 0.0], [0.0, -1.0]])
    bits = coresets._hash_bits(np.array([[0.0, 0.0], [-1.0, 1.0], [1.0, 0.0]]), H)
    assert bits.tolist() == [[0, 0], [1, 1], [0, 0]]


def test_a_node_whose_count_equals_a_threshold_branches_and_is_kept():
    """Keep and branch are ≥ tests: four identical users, thresholds 4, depth 1 — the root branches
    and the child of all four (count 4) is kept, a leaf at level 1; its empty sibling is not."""
    X = np.tile([[0.5, -0.5, 0.2]], (4, 1))
    tree = coresets.build_lsh_tree(X, 1, math.inf, 4.0, 4.0, np.random.default_rng(0),
                                   PrivacyLedger(math.inf).for_entity("e"))
    assert tree.levels.tolist() == [1] and tree.counts.tolist() == [4.0]
    assert sorted(tree.tree_counts[1].tolist()) == [0.0, 4.0]


def test_james_stein_is_baranchiks_positive_part_estimator():
    """factor = max(0, 1 − (m − 2)·v/‖a‖²), v = σ²/max(count, 1)²; fewer than 3 coordinates or σ = 0:
    unchanged."""
    a = np.array([[3.0, 4.0, 0.0, 0.0], [0.1, 0.0, 0.0, 0.0]])
    counts = np.array([2.0, 0.0])
    out = coresets.james_stein(a, counts, 2.0)
    np.testing.assert_allclose(out[0], a[0] * (1 - 2 * (2.0 / 2.0) ** 2 / 25.0))
    np.testing.assert_array_equal(out[1], 0.0)  # 1 − 2·4/0.01 < 0: shrunk to 0, never flipped
    np.testing.assert_array_equal(coresets.james_stein(a[:, :1], counts, 2.0), a[:, :1])
    np.testing.assert_array_equal(coresets.james_stein(a[:, :2], counts, 2.0), a[:, :2])
    np.testing.assert_array_equal(coresets.james_stein(a, counts, 0.0), a)


def test_noisy_leaf_points_stay_in_the_lambda_ball_and_weights_are_never_negative():
    """Even under heavy noise (tiny ε) every coreset point has norm ≤ Λ and every weight is the
    released count clipped at 0."""
    X, _ = _blobs(n=200)
    core = coresets.lsh_tree_coreset(X, 1.0, 4, 0.05, 0.05, 1e-6, 1.0, 3.0, np.random.default_rng(2),
                                     PrivacyLedger(math.inf).for_entity("e"))
    assert (np.linalg.norm(core.points, axis=1) <= 1.0 + 1e-12).all()
    assert (core.weights >= 0).all()
    # two coordinates (no shrinkage): noisy averages beyond Λ are clipped back to the ball, exactly onto it
    X2, _ = _blobs(n=200, d=2)
    tree = coresets.build_lsh_tree(X2, 4, 0.05, 1.0, 3.0, np.random.default_rng(2),
                                   PrivacyLedger(math.inf).for_entity("e"))
    pts, _ = coresets.noisy_leaf_averages(X2, tree, 1.0, 0.05, 1e-6, np.random.default_rng(2),
                                          PrivacyLedger(math.inf).for_entity("e"))
    norms = np.linalg.norm(pts, axis=1)
    assert (norms <= 1.0 + 1e-12).all() and np.isclose(norms, 1.0).sum() >= 2
    # two users, the root's released count −53: the root is the one leaf, of weight 0
    core = coresets.lsh_tree_coreset(np.full((2, 3), 0.3), 1.0, 2, 0.05, 0.05, 1e-6, 1.0, 3.0,
                                     np.random.default_rng(4), PrivacyLedger(math.inf).for_entity("e"))
    assert core.n_root < 0 and core.levels.tolist() == [0] and core.weights.tolist() == [0.0]


def test_weighted_kmeans_ignores_negative_weights_and_pads_with_the_heaviest_centre():
    P = np.array([[0.0, 1.0], [1.0, 0.0], [5.0, 5.0]])
    C, w = coresets.weighted_kmeans(P, np.array([3.0, -50.0, 1.0]), 5, np.random.default_rng(0))
    assert np.allclose(w, [3.0, 0.0, 1.0, 0.0, 0.0]) and np.allclose(C[3:], P[0])


def test_the_lsh_trees_thresholds_read_public_inputs_never_the_number_of_users(monkeypatch):
    """The keep and branch thresholds of the tree are functions of the catalogue's size, the leaf sums' public
    σ and Λ: an entity with twice the users (same items) grows its tree with the very same thresholds."""
    seen = []
    real = coresets.build_lsh_tree

    def spy(X, depth, eps_tree, min_node, min_branch, rng, ledger, cap_divisor=None):
        seen.append((min_node, min_branch))
        return real(X, depth, eps_tree, min_node, min_branch, rng, ledger, cap_divisor=cap_divisor)

    monkeypatch.setattr(coresets, "build_lsh_tree", spy)
    X, _ = _blobs(n=300)
    for rows in (X, np.vstack([X, X])):
        meth = DPPrototypes(k=4, value_max=1.0, candidates="lsh", variant="gaussian", epsilon=1.0, delta=1e-6,
                            cluster_size=None, refine_steps=0)
        meth.release(sp.csr_matrix(rows), np.random.default_rng(0), PrivacyLedger(1.0, 1e-6).for_entity("e"))
    assert len(seen) == 2 and seen[0] == seen[1]


def test_the_paper_variants_lloyd_steps_share_the_recovery_budget():
    """With the paper's Laplace recovery after the LSH coreset, R DP-Lloyd steps each spend 1/R of the
    counts, support and sums shares: R rows of each, together their planned ε, the release within ε."""
    X, _ = _blobs(n=600)
    R = 2
    meth = DPPrototypes(k=4, value_max=1.0, candidates="lsh", variant="paper", epsilon=1.0, delta=1e-6,
                        cluster_size=None, refine_steps=R, support=3)
    ledger = PrivacyLedger(1.0, 1e-6)
    meth.release(sp.csr_matrix(np.abs(X)), np.random.default_rng(0), ledger.for_entity("e"))
    plan = meth.budget_plan(X.shape[1], meth.k_)
    for stage, key in (("recovery: counts", "counts"), ("recovery: support", "support"), ("recovery: sums", "sums")):
        eps = [r.epsilon for r in ledger.rows if r.stage == stage]
        assert len(eps) == R and all(e == pytest.approx(plan[key] / R, rel=1e-9) for e in eps), stage
    assert ledger.guarantee()[0] <= 1.0
