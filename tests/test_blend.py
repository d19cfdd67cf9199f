"""The entity's own blend: the ``local`` reference and round 2 keeping what the entity knows."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation.experiments import make_split, run_method
from dpfed_core.methods import get_method
from dpfed_core.models.blend import choose_weights, fit_blend, holdout_mar, holdout_split, popularity
from dpfed_core.privacy.model import PrivacyModel


def _popular_data(n=200, m=30, seed=0):
    """Users pick items by a shared popularity (Zipf-like): popularity is the informative part."""
    g = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, m + 1)
    p /= p.sum()
    rows = [g.choice(m, size=int(g.integers(3, 8)), replace=False, p=p) for _ in range(n)]
    X = sp.lil_matrix((n, m))
    for u, items in enumerate(rows):
        X[u, items] = 1.0
    return sp.csr_matrix(X)



def test_with_known_items_only_the_shrunk_default_weighs_the_site_against_the_federation_where_it_speaks():
    """Round 2 on a DP catalogue (``known_only``), a site too small for evidence: its default is its
    popularity shrunk toward the federation's on the items the broadcast popularity speaks of among
    those the site knows; the site's other items (outside the catalogue, g = 0 there) say "not shared",
    not "never used", so they take no part in the empirical-Bayes weight λ."""
    from dpfed_core.federation.summable import KNOWN_ONLY, DPCooccurrence
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS, shrinkage_weight, shrunk_popularity

    X = _popular_data(n=MIN_EVIDENCE_USERS - 5, m=8, seed=4)
    X = sp.csr_matrix(sp.hstack([X, sp.csr_matrix((X.shape[0], 4))]))  # items 8–11: unknown to the site
    g = np.random.default_rng(5).random(12)
    g[4:8] = 0.0                                                       # the site's items 4–7: not shared
    known = popularity(X) > 0
    g_known = g * known
    support = g_known != 0
    lam = shrinkage_weight(X, g_known, support)
    assert 0.0 < lam < 1.0 and not np.isclose(lam, shrinkage_weight(X, g_known))  # the support matters here
    eb = shrunk_popularity(X, g_known, support)
    m = DPCooccurrence(rank=3, max_iter=20, holdout_evidence=1.0)
    # the broadcast as the site lifts it onto the names it holds (zero rows elsewhere)
    V_fed = np.random.default_rng(6).random((12, 3)) * known[:, None]
    public = {"V": np.hstack([V_fed, (g_known / np.linalg.norm(g_known))[:, None]]), KNOWN_ONLY: True}
    U, L, U_loc = m.fit_local(X, public, 0.1, "zero", np.random.default_rng(7))
    assert not np.any(U[:, :-1])
    scores = U @ public["V"].T + U_loc @ L.T
    np.testing.assert_allclose(scores, np.broadcast_to(eb / np.linalg.norm(eb), scores.shape), atol=1e-12)

def test_in_observed_mode_a_sites_blend_predicts_on_its_values_scale_and_keeps_its_rankings():
    """The blend is chosen for ranking from unit-scaled parts; in observed mode the site maps its scores
    onto its own values by one positive least-squares factor: the same rankings (every score times the
    same a > 0), training error on the values never worse than the unscaled blend's, and the factor is
    the least-squares one (a small change either way fits worse)."""
    from dpfed_core.models.blend import fit_site_model, value_scale

    g = np.random.default_rng(3)
    X = _popular_data(n=120, m=25, seed=3)
    X.data = g.integers(1, 6, X.nnz).astype(float)  # ratings on the observed entries
    _, _, obs = fit_site_model(X, rank=3, lam=0.1, mode="observed", max_iter=60, evidence=1.0)
    a = obs["value_scale"]
    assert a > 1.0  # unit-scaled parts score far below ratings of 1–5
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))

    def scores(blocks, scale=1.0):
        return scale * sum(np.einsum("ij,ij->i", U[rows], V[X.indices]) for _, U, V in blocks)

    unscaled = [(p, U / a, V) for p, U, V in obs["blocks"]]
    s = scores(unscaled)
    np.testing.assert_allclose(scores(obs["blocks"]), a * s, rtol=1e-12)
    assert value_scale(X, unscaled) == pytest.approx(a, rel=1e-12)
    sse = [float(np.sum((X.data - scores(unscaled, f)) ** 2)) for f in (1.0, 0.9 * a, a, 1.1 * a)]
    assert sse[2] < min(sse[0], sse[1], sse[3])
    full = np.hstack([U for _, U, _ in obs["blocks"]]) @ np.hstack([V for _, _, V in obs["blocks"]]).T
    full_unscaled = np.hstack([U for _, U, _ in unscaled]) @ np.hstack([V for _, _, V in unscaled]).T
    np.testing.assert_array_equal(np.argsort(-full, axis=1, kind="stable"),
                                  np.argsort(-full_unscaled, axis=1, kind="stable"))
    _, _, zero = fit_site_model(X, rank=3, lam=0.1, mode="zero", max_iter=60, evidence=1.0)
    assert "value_scale" not in zero  # zero mode ranks: its scores stay as the blend chose them


def test_holdout_hides_one_item_of_each_user_with_two():
    X = _popular_data()
    red, hidden, has = holdout_split(X, np.random.default_rng(1))
    cnt = np.diff(X.indptr)
    assert (has == (cnt >= 2)).all()
    assert (np.diff(red.indptr) == cnt - has).all()
    assert all(X[u, hidden[u]] == 1 and red[u, hidden[u]] == 0 for u in np.flatnonzero(has))


def test_the_blend_picks_the_informative_part_and_never_loses_to_a_part_alone():
    X = _popular_data()
    red, hidden, has = holdout_split(X, np.random.default_rng(2))
    noise = np.random.default_rng(3).random(X.shape)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    pop = popularity(red)
    pop /= np.linalg.norm(pop)
    wm, wi, best = choose_weights([(noise, np.eye(X.shape[1]))], [pop], red, hidden, has)
    assert wi[0] > 0
    assert best <= holdout_mar(noise, red, hidden, has) + 1e-12
    assert best <= holdout_mar(np.tile(pop, (X.shape[0], 1)), red, hidden, has) + 1e-12
    U, V, info = fit_blend(X, [lambda Z: (noise, np.eye(X.shape[1]))], [popularity], np.random.default_rng(2))
    assert (U @ V.T).shape == X.shape and info["item_weights"][0] > 0


def test_local_is_a_reference_that_releases_nothing_and_beats_individual_on_the_sample():
    ds = load_data("sample:clinic")
    spec = get_method("local")
    assert spec.privacy_model is PrivacyModel.NO_RELEASE
    cfg = RunConfig(method="local", rank=5, seed=0, max_iter=100)
    split = make_split(ds, cfg)
    doc, res = run_method(ds, cfg, split)
    assert doc["messages"] == [] and not res.ledger.rows
    assert set(res.extra["blend_weights"]) == set(ds.entity_names)
    ind, _ = run_method(ds, cfg.replace(method="individual"), split)
    assert doc["overall"]["mar"] < ind["overall"]["mar"]


def test_round_two_keeps_the_entity_s_own_model():
    """dp-cooccurrence's round 2 blends the entity's own NMF and popularity with the federation's
    parts: its local columns exist, and at ε = inf (exact sums) it is not worse than local."""
    ds = load_data("sample:clinic")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=float("inf"), rank=5, seed=0, max_iter=100,
                    aggregation="secure")
    split = make_split(ds, cfg)
    doc, res = run_method(ds, cfg, split)
    f = res.entity_factors()
    assert res.V.shape == res.model.public_["V"].shape  # V is what was broadcast
    # entities keep local columns beside the broadcast V (where the hold-out gave their own parts a weight)
    h = next(h for h, w in enumerate(f.local_widths) if w > 0)
    assert f.entity(h)[1].shape[1] > res.V.shape[1]
    loc, _ = run_method(ds, cfg.replace(method="local"), split)
    assert doc["overall"]["mar"] <= loc["overall"]["mar"] + 0.01
    off, _ = run_method(ds, cfg.replace(prototype_params={"local_blend": False}), split)
    assert off["overall"]["mar"] > doc["overall"]["mar"]


def test_sampled_holdout_rank_is_the_exact_one_on_every_item_and_close_on_a_sample():
    """The capped hold-out ranks the hidden item among candidate items: with every item as
    candidate it is exactly :func:`holdout_mar`; on a uniform sample of the items it estimates it."""
    from dpfed_core.models.blend import _blocked_mar

    X = _popular_data(n=400, m=300, seed=4)
    red, hidden, has = holdout_split(X, np.random.default_rng(5))
    g = np.random.default_rng(6)
    U, V = g.random((X.shape[0], 3)), g.random((X.shape[1], 3))
    pop = popularity(red)
    pop /= np.linalg.norm(pop)
    for wm, item in (([1.0], np.zeros(X.shape[1])), ([0.5], pop), ([0.0], pop)):
        exact = holdout_mar((wm[0] * U) @ V.T + item, red, hidden, has)
        assert _blocked_mar([(U, V)], wm, item, red, hidden, has) == pytest.approx(exact, abs=1e-12)
        every = _blocked_mar([(U, V)], wm, item, red, hidden, has, np.arange(X.shape[1]))
        assert every == pytest.approx(exact, abs=1e-12)
        half = _blocked_mar([(U, V)], wm, item, red, hidden, has, np.sort(g.choice(X.shape[1], 150, replace=False)))
        assert half == pytest.approx(exact, abs=0.03)


def test_the_weight_search_is_capped_in_users_and_items(monkeypatch):
    """Above the caps only a sample of hold-out users × candidate items is scored, and the blend still
    finds the informative part; below them the generator is not drawn from (same weights as before)."""
    from dpfed_core.models import blend

    X = _popular_data(n=300, m=40, seed=7)
    sizes = []
    real = blend._HoldoutScores.mar

    def spy(self, wm, item):
        sizes.append((self.n_users, self.cols.size))  # hold-out users × candidate items actually scored
        return real(self, wm, item)

    monkeypatch.setattr(blend._HoldoutScores, "mar", spy)
    noise = np.random.default_rng(8).random(X.shape)
    own = [lambda Z: (noise, np.eye(X.shape[1]))]
    _, _, free = fit_blend(X, own, [popularity], np.random.default_rng(9))
    assert sizes and all(s == (sizes[0][0], 40) for s in sizes) and sizes[0][0] > 100
    sizes.clear()
    monkeypatch.setattr(blend, "HOLDOUT_USERS", 100)
    monkeypatch.setattr(blend, "HOLDOUT_ITEMS", 25)
    _, _, capped = fit_blend(X, own, [popularity], np.random.default_rng(9))
    assert sizes and all(s == (100, 25) for s in sizes)
    assert capped["item_weights"][0] > 0 and free["item_weights"][0] > 0



def test_the_hold_outs_scored_users_are_a_uniform_sample_of_those_with_a_hidden_item(monkeypatch):
    """Above HOLDOUT_USERS hold-out users the search scores a uniform sample of them: sorted, distinct,
    each with a hidden item — not the site's first users, whose rows may be ordered by anything (by
    arrival, by size)."""
    from dpfed_core.models import blend

    monkeypatch.setattr(blend, "HOLDOUT_USERS", 20)
    has = np.ones(200, dtype=bool)
    has[::3] = False  # users with one item have no hidden item
    picks = []
    for seed in range(10):
        pick, cols = blend.holdout_sample(has, 30, np.random.default_rng(seed))
        assert cols is None and pick.size == 20 and np.all(np.diff(pick) > 0) and has[pick].all()
        picks.append(pick)
    eligible = np.flatnonzero(has)
    assert np.median([p.mean() for p in picks]) == pytest.approx(eligible.mean(), rel=0.25)
    assert np.unique(np.concatenate(picks)).size > 0.5 * eligible.size


def test_the_hold_outs_candidate_items_and_fit_rows_are_uniform_samples(monkeypatch):
    """Above the caps the hold-out ranks each hidden item among a uniform sample of the items (not the
    first ones: an item axis is ordered by anything, often by popularity) and fits its matrix parts on
    the scored users and a uniform sample of the other rows."""
    from dpfed_core.models import blend

    monkeypatch.setattr(blend, "HOLDOUT_ITEMS", 20)
    monkeypatch.setattr(blend, "HOLDOUT_FIT_USERS", 40)
    has = np.ones(10, dtype=bool)
    items, rows = [], []
    for seed in range(10):
        _, cols = blend.holdout_sample(has, 200, np.random.default_rng(seed))
        assert cols.size == 20 and np.all(np.diff(cols) > 0) and cols.max() < 200
        items.append(cols)
        pick = np.arange(0, 30, 3)  # 10 scored users of 300 rows
        fit = blend.holdout_fit_rows(pick, 300, np.random.default_rng(seed))
        assert fit.size == 40 and np.all(np.diff(fit) > 0) and np.isin(pick, fit).all()
        rows.append(np.setdiff1d(fit, pick))
    assert np.median([c.mean() for c in items]) == pytest.approx(99.5, rel=0.25)
    assert np.unique(np.concatenate(items)).size > 100
    assert np.median([r.mean() for r in rows]) == pytest.approx(150, rel=0.25)
    assert np.unique(np.concatenate(rows)).size > 150

def test_a_large_site_fits_the_hold_out_s_matrix_parts_on_its_scored_users_and_a_sample(monkeypatch):
    """Above HOLDOUT_FIT_USERS rows the hold-out's matrix parts see the scored users and a uniform
    sample of the others, the refit every row; a part that models each row by itself then scores the
    hold-out exactly as when fitted on every reduced row (the scored users' rows are found in the
    sample, not taken by their place in the site)."""
    from dpfed_core.models import blend

    X = _popular_data(n=400, m=30, seed=11)
    seen = []

    def own_rows(Z):  # each user's factors are its own (reduced) row: a per-row model
        seen.append(Z.shape[0])
        return Z.toarray() + 1e-3 * np.arange(Z.shape[1]), np.eye(Z.shape[1])

    monkeypatch.setattr(blend, "HOLDOUT_USERS", 50)
    monkeypatch.setattr(blend, "HOLDOUT_FIT_USERS", 10 ** 9)
    _, _, every = fit_blend(X, [own_rows], [popularity], np.random.default_rng(12))
    assert seen == [400, 400] or seen == [400]
    seen.clear()
    monkeypatch.setattr(blend, "HOLDOUT_FIT_USERS", 120)
    _, _, sample = fit_blend(X, [own_rows], [popularity], np.random.default_rng(12))
    assert seen[0] == 120 and all(n == 400 for n in seen[1:])
    assert sample["holdout_mar"] == every["holdout_mar"]
    assert sample["matrix_weights"] == every["matrix_weights"]
    assert sample["item_weights"] == every["item_weights"]


def test_hold_out_fit_rows_hold_every_scored_user_and_draw_only_above_the_cap():
    from dpfed_core.models.blend import HOLDOUT_FIT_USERS, holdout_fit_rows

    g = np.random.default_rng(3)
    state = g.bit_generator.state
    assert holdout_fit_rows(None, 10 * HOLDOUT_FIT_USERS, g) is None
    assert holdout_fit_rows(np.arange(10), HOLDOUT_FIT_USERS, g) is None
    assert g.bit_generator.state == state
    pick = np.sort(g.choice(3 * HOLDOUT_FIT_USERS, 1000, replace=False))
    rows = holdout_fit_rows(pick, 3 * HOLDOUT_FIT_USERS, g)
    assert rows.size == HOLDOUT_FIT_USERS and np.all(np.diff(rows) > 0)
    assert np.isin(pick, rows).all() and rows.max() < 3 * HOLDOUT_FIT_USERS


@pytest.mark.parametrize("capped", [False, True])
def test_the_cached_weight_search_scores_every_weight_vector_as_the_direct_scoring(capped, monkeypatch):
    """The search keeps every part's hold-out scores (one product per part); each weight
    vector it scores must get exactly the MAR that scoring Σ_k (w_k·U_k) V_kᵀ + item from scratch
    gives (the weights are powers of two, so even the rounding agrees)."""
    from dpfed_core.models import blend

    X = _popular_data(n=300, m=60, seed=11)
    red, hidden, has = holdout_split(X, np.random.default_rng(12))
    g = np.random.default_rng(13)
    mats = [blend._unit_factors(g.random((X.shape[0], 3)), g.random((X.shape[1], 3))) for _ in range(2)]
    vecs = [blend._unit(popularity(red)), blend._unit(g.random(X.shape[1]))]
    cols = np.sort(g.choice(X.shape[1], 25, replace=False)) if capped else None
    scored = []
    real = blend._HoldoutScores.mar
    monkeypatch.setattr(blend._HoldoutScores, "mar",
                        lambda self, wm, item: scored.append((list(wm), item)) or real(self, wm, item))
    wm, wi, best = blend.choose_weights(mats, vecs, red, hidden, has, cols)
    assert len(scored) > 10
    users = np.flatnonzero(has)
    for w, item in scored:
        S = item[None, :] + sum(((wk * U) @ V.T for wk, (U, V) in zip(w, mats) if wk), np.zeros(X.shape))
        if cols is None:
            direct = holdout_mar(S, red, hidden, has)
        else:  # the sampled formula, written out per user
            ranks = []
            for u in users:
                cand = np.setdiff1d(cols, np.append(red[u].indices, hidden[u]))
                s_h = item[hidden[u]] + sum(float((wk * U[u]) @ V[hidden[u]]) for wk, (U, V) in zip(w, mats) if wk)
                ranks.append(((S[u, cand] > s_h).sum() + 0.5 * (S[u, cand] == s_h).sum()) / max(cand.size, 1))
            direct = float(np.mean(ranks))
        assert real(blend._HoldoutScores(mats, red, hidden, has, cols), w, item) == pytest.approx(direct, abs=1e-12)
    assert best == min(real(blend._HoldoutScores(mats, red, hidden, has, cols), w, item) for w, item in scored)


# ----------------------------------------------------------------- one-standard-error rule
def _noise_and_pop(X, red, seed=3):
    noise = np.random.default_rng(seed).random(X.shape)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    pop = popularity(red)
    return (noise, np.eye(X.shape[1])), pop / np.linalg.norm(pop)


def test_holdout_ranks_are_the_users_ranks_whose_mean_is_the_mar():
    from dpfed_core.models import blend

    X = _popular_data()
    red, hidden, has = holdout_split(X, np.random.default_rng(2))
    mat, pop = _noise_and_pop(X, red)
    hs = blend._HoldoutScores([mat], red, hidden, has, None)
    for wm, wi in (([1.0], 0.0), ([0.5], 1.0), ([0.0], 1.0)):
        r = hs.ranks(wm, wi * pop)
        assert r.shape == (int(has.sum()),) and (r >= 0).all() and (r <= 1).all()
        assert r.mean() == pytest.approx(hs.mar(wm, wi * pop), abs=1e-12)
    # the ranks are the users' own: one user's rank read off the direct scoring
    S = np.tile(pop, (X.shape[0], 1))
    u = int(np.flatnonzero(has)[0])
    row = S[u].copy()
    row[red[u].indices] = -np.inf
    s_h = row[hidden[u]]
    n_cand = X.shape[1] - red[u].nnz
    direct = ((row > s_h).sum() + 0.5 * ((row == s_h).sum() - 1)) / (n_cand - 1)
    assert hs.ranks([0.0], pop)[0] == pytest.approx(direct, abs=1e-12)


def test_evidence_keeps_the_default_on_a_tiny_holdout_and_leaves_it_on_a_large_one():
    """The default (a noise matrix part) is worse than popularity. On a hold-out of two users —
    popularity far better for one, worse for the other — the mean gain is within one paired standard
    error and the rule keeps the default (the plain search leaves it); on every user the gain is
    many standard errors and the rule leaves it too."""
    from dpfed_core.models import blend

    X = _popular_data()
    red, hidden, has = holdout_split(X, np.random.default_rng(2))
    mat, pop = _noise_and_pop(X, red)
    hs = blend._HoldoutScores([mat], red, hidden, has, None)
    diff = hs.ranks([0.0], pop) - hs.ranks([1.0], 0 * pop)  # popularity alone − the default, per user
    users = np.flatnonzero(has)
    few = np.zeros_like(has)
    few[users[[int(np.argmin(diff)), int(np.argmax(diff))]]] = True
    assert diff.min() < -abs(diff.max()) and diff.max() > 0  # a mean gain, one user against it
    default = ([1.0], [0.0])
    wm0, wi0, _ = choose_weights([mat], [pop], red, hidden, few)
    wm1, wi1, best1 = choose_weights([mat], [pop], red, hidden, few, evidence=1.0, default=default)
    assert wi0[0] > 0                       # the plain search follows 3 users' ranks
    assert (wm1, wi1) == ([1.0], [0.0])     # the rule does not: not enough evidence
    assert best1 == pytest.approx(holdout_mar(mat[0], red, hidden, few), abs=1e-12)
    wm2, wi2, best2 = choose_weights([mat], [pop], red, hidden, has, evidence=1.0, default=default)
    assert wi2[0] > 0 and best2 < holdout_mar(mat[0], red, hidden, has) - 0.05
    # an impossible bar (z huge) keeps the default whatever the hold-out size
    assert choose_weights([mat], [pop], red, hidden, has, evidence=1e6, default=default)[:2] == ([1.0], [0.0])
    # z = 0 is the plain search
    assert choose_weights([mat], [pop], red, hidden, has, evidence=0.0)[:2] == choose_weights([mat], [pop], red, hidden, has)[:2]


def test_fit_blend_without_holdout_users_returns_the_default_under_the_rule():
    X = sp.csr_matrix(np.eye(6))  # every user has one item: no hold-out
    mat = lambda Z: (np.ones((6, 1)), np.ones((6, 1)))
    _, _, info = fit_blend(X, [mat], [popularity], np.random.default_rng(0), evidence=1.0, default=([0.0], [1.0]))
    assert info["matrix_weights"] == [0.0] and info["item_weights"] == [1.0]
    _, _, plain = fit_blend(X, [mat], [popularity], np.random.default_rng(0))
    assert plain["matrix_weights"] == [1.0] and plain["item_weights"] == [0.0]
    # with the rule off (evidence 0) there is still nothing to search on: the default, as documented
    _, _, off = fit_blend(X, [mat], [popularity], np.random.default_rng(0), evidence=0.0, default=([0.0], [1.0]))
    assert off["matrix_weights"] == [0.0] and off["item_weights"] == [1.0]
    # without matrix parts the first item part alone scores the users, never nothing
    U, V, items = fit_blend(X, [], [popularity, popularity], np.random.default_rng(0))
    assert items["matrix_weights"] == [] and items["item_weights"] == [1.0, 0.0]
    np.testing.assert_allclose(U @ V.T, np.full((6, 6), 1 / np.sqrt(6)))


def test_round_two_keeps_the_shrunk_default_without_evidence():
    """dp-cooccurrence's round 2 on a site too small for evidence (< MIN_EVIDENCE_USERS hold-out users):
    the blend is its default — the site's popularity shrunk toward the federation's, one
    empirical-Bayes vector in a local column; neither the federation's factors nor the broadcast DP
    popularity column get weight without evidence. On a larger site under an impossible bar (z huge)
    nothing beats the site's own default: its own popularity alone, as ``local`` keeps."""
    from dpfed_core.federation.summable import DPCooccurrence
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS, shrinkage_weight, shrunk_popularity

    X = _popular_data(n=MIN_EVIDENCE_USERS - 5, m=12, seed=4)
    g = np.random.default_rng(5).random(12)
    V_fed = np.random.default_rng(6).random((12, 3))
    assert 0.0 < shrinkage_weight(X, g) < 1.0
    eb = shrunk_popularity(X, g)
    assert not np.allclose(eb / np.linalg.norm(eb), popularity(X) / np.linalg.norm(popularity(X)))
    m = DPCooccurrence(rank=3, max_iter=20, holdout_evidence=1.0)
    public = {"V": np.hstack([V_fed, (g / np.linalg.norm(g))[:, None]])}
    U, L, U_loc = m.fit_local(X, public, 0.1, "zero", np.random.default_rng(7))
    assert not np.any(U[:, :-1])                                 # no federation factors without evidence
    # the shrunk popularity at weight 1: its own part a local column on the site's items only, its g
    # part on the broadcast popularity column; together the unit empirical-Bayes vector
    assert L.shape == (12, 1) and np.allclose(U_loc, 1.0)
    assert not np.any(L[popularity(X) == 0])
    scores = U @ public["V"].T + U_loc @ L.T
    assert np.allclose(scores, eb / np.linalg.norm(eb))
    big = _popular_data(n=120, m=12, seed=4)
    m = DPCooccurrence(rank=3, max_iter=20, holdout_evidence=1e6)
    U, L, U_loc = m.fit_local(big, public, 0.1, "zero", np.random.default_rng(7))
    own = popularity(big)
    assert not np.any(U) and L.shape == (12, 1) and np.allclose(L[:, 0], own / np.linalg.norm(own))


def test_the_shrunk_popularity_is_the_empirical_bayes_estimate_on_what_the_federation_speaks_of():
    """(1 − λ)·p̂ + λ·q on the support (q: g scaled to p̂'s total there), p̂ elsewhere; a g that speaks of
    a few items lifts them by λ's share of the site's own mass, not by a unit vector's."""
    from dpfed_core.models.blend import shrinkage_weight, shrunk_popularity

    X = _popular_data(n=12, m=30, seed=3)
    n = int(np.count_nonzero(np.diff(X.indptr)))
    p = popularity(X) / n
    g = np.zeros(30)
    g[[0, 1, 2, 7]] = [0.9, 0.2, 0.4, 0.3]
    S = g != 0
    lam = shrinkage_weight(X, g, S)
    assert 0.0 < lam < 1.0
    e = shrunk_popularity(X, g, S)
    q = g[S] * p[S].sum() / g[S].sum()
    np.testing.assert_allclose(e[S], (1 - lam) * p[S] + lam * q)
    np.testing.assert_array_equal(e[~S], p[~S])                    # outside: the site's own
    assert np.isclose(e.sum(), p.sum())                            # mass preserved: a shift, not a lift
    # on every item (no support) the zeros of g count as "never used" and pull every other item down
    full = shrunk_popularity(X, g)
    lam_full = shrinkage_weight(X, g)
    np.testing.assert_allclose(full[~S], (1 - lam_full) * p[~S])
    # a g that knows nothing changes nothing
    np.testing.assert_array_equal(shrunk_popularity(X, np.zeros(30)), p)


def test_a_site_without_rows_takes_the_federations_popularity_as_its_weight_says():
    """λ = 1 for a site with no rows: its shrunk popularity is the federation's g on the support (scaled
    to one user's total), never zeros that would rank every item alike."""
    from dpfed_core.models.blend import shrinkage_weight, shrunk_popularity

    X = sp.csr_matrix((5, 30))
    g = np.zeros(30)
    g[[0, 1, 2, 7]] = [0.9, 0.2, 0.4, 0.3]
    assert shrinkage_weight(X, g) == 1.0
    e = shrunk_popularity(X, g, g != 0)
    np.testing.assert_allclose(e, g / g.sum())
    assert np.argmax(e) == 0
    np.testing.assert_array_equal(shrunk_popularity(X, np.zeros(30)), np.zeros(30))


def test_a_site_with_evidence_is_the_local_model_unless_the_federation_beats_its_own_blend():
    """Nested evidence: a site whose hold-out is large enough for evidence first chooses its own blend
    exactly as ``local`` does; the federation's parts enter only where the whole search beats that
    blend by the rule. At ε = 0.05 the federation has next to nothing to add, so nearly every such site
    of the clinic sample is exactly ``local``, score for score (tested against the default instead, the
    searched blend — led by the site's own NMF — cleared the bar and carried in federation parts
    fitted to the hold-out's noise)."""
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS

    ds = load_data("sample:clinic")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=0.05, rank=3, max_iter=40, simulation=True, seed=1)
    split = make_split(ds, cfg)
    _, res = run_method(ds, cfg, split)
    _, lres = run_method(ds, RunConfig(method="local", rank=3, max_iter=40, seed=1), split)
    train = split.train
    large = same = 0
    for sl in ds.entity_slices():
        rows = np.arange(sl.start, sl.stop)
        if np.count_nonzero(np.diff(train[rows].indptr) >= 2) < 2 * MIN_EVIDENCE_USERS:
            continue
        large += 1
        same += bool(np.allclose(res.entity_factors().scores(rows), lres.entity_factors().scores(rows),
                                 rtol=0, atol=1e-12))
    assert large >= 5 and same >= 0.8 * large, (same, large)


def test_the_shrinkage_weight_is_empirical_bayes():
    """λ = V/(V + D): a site of few users leans on the federation, and so does one whose case mix is the
    federation's; a site whose items differ from the
    federation's beyond its noise keeps its own popularity, and a federation that knows nothing gets
    no weight."""
    from dpfed_core.models.blend import shrinkage_weight

    g = np.r_[np.linspace(1.0, 0.1, 10), np.zeros(10)]
    rng = np.random.default_rng(0)

    def site(n, p):
        return sp.csr_matrix((rng.random((n, 20)) < p).astype(float))

    small = shrinkage_weight(site(5, g * 0.5), g)
    large_same = shrinkage_weight(site(2000, g * 0.5), g)
    other = np.r_[np.zeros(10), np.linspace(1.0, 0.1, 10)] * 0.5
    large_other = shrinkage_weight(site(2000, other), g)
    # the same case mix (no divergence beyond the noise): all the way to the federation
    assert small > 0.5 and large_other < 0.01 and large_same > 0.9
    assert shrinkage_weight(site(50, g * 0.5), np.zeros(20)) == 0.0


def test_clearly_lower_is_a_paired_one_standard_error_test():
    from dpfed_core.models.blend import _clearly_lower

    d = np.tile([-0.03, 0.01, -0.02, 0.0], 5)      # 20 users: mean −0.01, sd 0.0168, SE 0.00376
    assert _clearly_lower(d, 2.5) and not _clearly_lower(d, 2.8)
    assert not _clearly_lower(np.full(19, -0.5), 1.0)             # fewer than 20 users: no evidence
    assert not _clearly_lower(np.zeros(50), 0.0)                  # a tie is not lower
    assert _clearly_lower(np.full(20, -0.01), 5.0)                # a constant gain has SE 0
    assert not _clearly_lower(np.tile([0.02, -0.01, 0.0], 7), 0.0)  # higher on average


def test_dp_popularity_stays_the_plain_baseline_and_blends_on_request():
    """dp-popularity's round 2 is the DP popularity list by default (the baseline: one column,
    no local parts); ``local_blend=True`` keeps what the entity knows like dp-cooccurrence: local
    columns beside the broadcast column, and a MAR far below the plain list's and near ``local``'s."""
    ds = load_data("sample:clinic")
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=5, seed=0, max_iter=100, simulation=True)
    split = make_split(ds, cfg)
    plain, res = run_method(ds, cfg, split)
    assert res.entity_factors().local_widths == (0,) * ds.n_entities
    blended, res_b = run_method(ds, cfg.replace(prototype_params={"local_blend": True}), split)
    assert any(w > 0 for w in res_b.entity_factors().local_widths)
    assert res_b.V.shape == res.V.shape == (ds.n_items, 1)  # the same one broadcast column
    loc, _ = run_method(ds, cfg.replace(method="local"), split)
    assert blended["overall"]["mar"] < plain["overall"]["mar"] - 0.05
    assert blended["overall"]["mar"] <= loc["overall"]["mar"] + 0.01
    # the same release: the ledger is the plain run's
    assert [r.rho for r in res_b.ledger.rows] == [r.rho for r in res.ledger.rows]


def test_the_broadcast_popularity_column_scores_what_the_blend_chose():
    """The blend scores the unit DP popularity; U_h on the raw broadcast column (any norm) must give
    the entity's users exactly those scores: U_h V[:, pop] = w · g/‖g‖."""
    from dpfed_core.federation.summable import DPPopularity

    X = _popular_data(n=120, m=25, seed=11)
    g = 40.0 * popularity(X) + np.random.default_rng(12).random(25)  # a raw (not unit) broadcast column
    method = DPPopularity(epsilon=1.0, local_blend=True, holdout_evidence=0.0)
    U_h, L_h, U_loc = method.fit_local(X, {"V": g[:, None]}, 0.1, "zero", np.random.default_rng(13))
    assert U_h.shape == (120, 1)
    w = np.unique(np.round(U_h[:, 0] * np.linalg.norm(g), 12))
    assert w.size == 1 and w[0] > 0  # one weight for every user, on the unit vector
    assert w[0] in (0.25, 0.5, 1.0, 2.0, 4.0)  # a weight of the search's grid, not a multiple of ‖g‖
    S = U_h @ g[:, None].T + (U_loc @ L_h.T if L_h is not None else 0.0)
    assert np.isfinite(S).all() and S.shape == X.shape


def test_a_kept_site_fit_is_exactly_the_fit_and_leaves_the_stream_where_the_fit_would():
    from dpfed_core.models.blend import _SiteFits

    fits = _SiteFits(1 << 20)
    calls = []
    rng = np.random.default_rng(5)

    def fit(Z):
        calls.append(Z.shape)
        return rng.random((Z.shape[0], 2)), rng.random((Z.shape[1], 2))

    part = fits.part("t", fit, (2, 0.1), rng)
    X = _popular_data(n=30, m=10, seed=1)
    U1, V1 = part(X)
    after = rng.bit_generator.state
    follow = rng.random()
    rng.bit_generator.state = np.random.default_rng(5).bit_generator.state  # same stream, same start
    U2, V2 = part(X)
    assert len(calls) == 1 and fits.hits == 1
    assert np.array_equal(U1, U2) and np.array_equal(V1, V2)
    assert rng.bit_generator.state == after and rng.random() == follow
    U2[:] = -1.0  # a caller changing what it got changes nothing kept
    rng.bit_generator.state = np.random.default_rng(5).bit_generator.state
    assert np.array_equal(part(X)[0], U1)
    part(X)  # the stream has moved on: another state, a new fit
    assert len(calls) == 2
    rng.bit_generator.state = np.random.default_rng(5).bit_generator.state
    Y = X.copy()
    Y.data[0] += 1.0
    part(Y)  # other rows: a new fit
    assert len(calls) == 3
    other = fits.part("t", fit, (3, 0.1), rng)  # other parameters: a new fit
    rng.bit_generator.state = np.random.default_rng(5).bit_generator.state
    other(X)
    assert len(calls) == 4


def test_site_fits_stay_within_their_bytes():
    from dpfed_core.models.blend import _SiteFits

    fits = _SiteFits(3 * 800)  # three fits of 100 doubles
    part = fits.part("t", lambda Z: (np.full(100, float(Z.sum())),), ())
    for k in range(6):
        part(sp.csr_matrix(np.full((1, 1), float(k + 1))))
    assert fits.bytes <= 3 * 800 and len(fits._fits) == 3
    part(sp.csr_matrix(np.full((1, 1), 6.0)))  # the most recent is kept
    assert fits.hits == 1
    big = _SiteFits(100)
    big.part("t", lambda Z: (np.zeros(1000),), ())(sp.csr_matrix(np.ones((1, 1))))
    assert big.bytes == 0 and not big._fits  # too large to keep: refitted when asked again


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_local_and_round_two_fit_the_site_s_own_model_once_and_get_what_two_fits_give(mode, monkeypatch):
    from dpfed_core.models import blend

    X = _popular_data(n=80, m=25, seed=9)
    feats = sp.csr_matrix(np.random.default_rng(2).integers(0, 2, (25, 4)).astype(float))
    V_fed = np.random.default_rng(3).random((25, 3))
    g = np.random.default_rng(4).random(25)
    kw = dict(rank=3, lam=0.1, mode=mode, max_iter=40, features=feats)

    searches = []
    real_search = blend.choose_weights
    monkeypatch.setattr(blend, "choose_weights", lambda *a, **k: searches.append(1) or real_search(*a, **k))

    def fit_both():
        blend.SITE_FITS.clear()
        searches.clear()
        local = blend.fit_site_model(X, **kw)
        misses = blend.SITE_FITS.misses
        fed = blend.fit_site_model(X, V_fed=V_fed, g=g, **kw)
        return local, fed, misses

    local, fed, misses = fit_both()
    assert blend.SITE_FITS.hits >= 2  # the own NMF and the content model, at least on the hold-out
    assert blend.SITE_FITS.misses == misses  # round 2 fitted nothing of the site's own again
    # round 2's nested evidence starts from the blend local chose: searched once (local's search), read
    # once — round 2 searches only the whole blend
    assert len(searches) == 2
    monkeypatch.setattr(blend.SITE_FITS, "max_bytes", 0)  # nothing kept: every part fitted afresh
    local0, fed0, _ = fit_both()
    assert blend.SITE_FITS.hits == 0 and len(searches) == 3  # and the own blend searched again
    for a, b in ((local, local0), (fed, fed0)):
        assert a[2]["matrix_weights"] == b[2]["matrix_weights"] and a[2]["item_weights"] == b[2]["item_weights"]
        for (pa, Ua, Va), (pb, Ub, Vb) in zip(a[2]["blocks"], b[2]["blocks"]):
            assert pa == pb and np.array_equal(Ua, Ub) and np.array_equal(Va, Vb)



def _groups(n=120, m=24, n_groups=4, seed=11):
    """Users each keep to one of ``n_groups`` blocks of items: the site's own NMF, not its popularity,
    ranks a user's unseen items."""
    g = np.random.default_rng(seed)
    per = m // n_groups
    p = np.full((n, m), 0.02)
    for u, k in enumerate(g.integers(n_groups, size=n)):
        p[u, k * per:(k + 1) * per] = 0.5
    return sp.csr_matrix((g.random((n, m)) < p).astype(float))


@pytest.mark.parametrize("changed", [{"evidence": 1e6}, {"lam": 5.0}])
def test_a_site_fit_kept_for_reuse_is_read_again_only_under_the_same_rule_and_ridge(changed):
    """The site's own NMF and own blend are kept for reuse within the process (a long-lived dashboard
    fits many runs): a fit with another one-standard-error z or another ridge λ is that fit, exactly as
    if nothing had been kept — never the kept fit of the first."""
    from dpfed_core.models import blend

    X = _groups()
    kw = dict(rank=3, lam=0.1, mode="zero", max_iter=40, evidence=1.0)
    other = {**kw, **changed}

    def weights_and_blocks(info):
        return info["matrix_weights"], info["item_weights"], [(p, U.copy(), V.copy()) for p, U, V in info["blocks"]]

    blend.SITE_FITS.clear()
    first = weights_and_blocks(blend.fit_site_model(X, **kw)[2])
    after = weights_and_blocks(blend.fit_site_model(X, **other)[2])
    blend.SITE_FITS.clear()
    fresh = weights_and_blocks(blend.fit_site_model(X, **other)[2])
    blend.SITE_FITS.clear()
    assert after[:2] == fresh[:2]
    assert [p for p, _, _ in after[2]] == [p for p, _, _ in fresh[2]]
    for (_, Ua, Va), (_, Ub, Vb) in zip(after[2], fresh[2]):
        np.testing.assert_array_equal(Ua, Ub)
        np.testing.assert_array_equal(Va, Vb)
    # the change matters here: the first fit is another model
    assert first[:2] != fresh[:2] or any(not np.array_equal(Ua @ Va.T, Ub @ Vb.T)
                                         for (_, Ua, Va), (_, Ub, Vb) in zip(first[2], fresh[2]))


def test_a_sites_content_model_is_fitted_on_all_its_rows_with_the_features_it_is_given():
    """The site's content model (users' profiles over the public item features) is refitted on every
    row of the site after the hold-out search, as every part is; a second fit of the same rows with
    other features is that fit, not the kept fit of the first features."""
    from dpfed_core.models import blend
    from dpfed_core.models.side_information import content_factors

    X = _groups()
    informative = np.repeat(np.eye(4), 6, axis=0)                       # the users' item blocks
    other = np.random.default_rng(12).integers(0, 2, (24, 3)).astype(float)
    kw = dict(rank=3, lam=0.1, mode="zero", max_iter=40, evidence=0.0)

    def content_block(features):
        mnames, _, info = blend.fit_site_model(X, features=features, **kw)
        j = mnames.index("own content")
        w = info["matrix_weights"][j]
        (U, V), = [(U, V) for (kind, i), U, V in info["blocks"] if (kind, i) == ("matrix", j)] or [(None, None)]
        return w, U, V, info

    blend.SITE_FITS.clear()
    w, U, V, _ = content_block(informative)
    assert w > 0
    U_c, V_c = blend._unit_factors(*content_factors(X, informative, 0.1, "zero"))
    np.testing.assert_allclose(U, U_c * w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(V, V_c, rtol=1e-12, atol=1e-15)
    after = content_block(other)[3]
    blend.SITE_FITS.clear()
    fresh = content_block(other)[3]
    blend.SITE_FITS.clear()
    assert (after["matrix_weights"], after["item_weights"]) == (fresh["matrix_weights"], fresh["item_weights"])
    for (pa, Ua, Va), (pb, Ub, Vb) in zip(after["blocks"], fresh["blocks"]):
        assert pa == pb
        np.testing.assert_array_equal(Ua, Ub)
        np.testing.assert_array_equal(Va, Vb)

def _site_with_own_items(n=300, common=20, seed=4):
    """Each user: two of ``common`` shared items and two items no other user has."""
    g = np.random.default_rng(seed)
    X = sp.lil_matrix((n, common + 2 * n))
    for u in range(n):
        X[u, g.choice(common, 2, replace=False)] = 1.0
        X[u, [common + 2 * u, common + 2 * u + 1]] = 1.0
    return sp.csr_matrix(X)


def test_the_releases_leave_out_exactly_the_entries_the_site_validates_on(monkeypatch):
    from dpfed_core.models import blend

    X = _site_with_own_items()
    released = blend.released_rows(X)
    held = X - released
    held.eliminate_zeros()
    cnt = np.diff(X.indptr)
    assert (np.diff(held.indptr) == (cnt >= 2)).all() and (held.data == 1).all()
    seen = []
    real = blend.holdout_split

    def spy(Z, rng):
        out = real(Z, rng)
        seen.append(out[0])
        return out

    monkeypatch.setattr(blend, "holdout_split", spy)
    blend.fit_site_model(X, rank=2, lam=0.1, mode="zero", max_iter=20)  # the default stream: the site's own
    assert len(seen) == 1 and (seen[0] != released).nnz == 0


def test_round_one_reads_every_site_s_rows_without_its_validation_entries(monkeypatch):
    import dpfed_core.federation.summable_protocol as protocol
    from dpfed_core.models.blend import released_rows

    ds = load_data("sample:clinic")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure", simulation=True, rank=3)
    split = make_split(ds, cfg)
    captured = []
    real = protocol.run_stages

    def spy(method, matrices, *args, **kwargs):
        captured.append([M.copy() for M in matrices])
        return real(method, matrices, *args, **kwargs)

    monkeypatch.setattr(protocol, "run_stages", spy)
    run_method(ds, cfg, split)
    (mats,) = captured
    for M, sl in zip(mats, ds.entity_slices()):
        expected = released_rows(split.train[sl])
        assert M.nnz < split.train[sl].nnz and (M != expected).nnz == 0


@pytest.mark.parametrize("known_only", [False, True])
def test_an_item_only_the_hidden_entry_names_is_unknown_on_the_holdout(known_only):
    """A federation part that scores exactly the held-out items (the extreme of a release that carried
    them) must not look useful on the hold-out when the site knows items by the rows a part is fitted
    on: only with that mask is the weight left at the site's own default."""
    from dpfed_core.models.blend import fit_site_model, released_rows

    X = _site_with_own_items()
    held = X - released_rows(X)
    g = np.zeros(X.shape[1])
    g[np.unique(held.indices)] = 1.0
    g[:20] = 0.0  # only the items no one else holds
    _, item_names, info = fit_site_model(X, rank=2, lam=0.1, mode="zero", max_iter=20, g=g,
                                         default_rule="alone", known_only=known_only)
    w = dict(zip(item_names, info["item_weights"]))["dp popularity"]
    assert (w == 0.0) if known_only else (w > 0.0)



def test_an_item_only_the_hidden_entry_names_is_unknown_on_the_holdout_to_the_popularity_over_features():
    """The same under public item features: with ``known_only`` the DP popularity smoothed over the
    features is smoothed from the popularity the hold-out's rows know, so a part that scores exactly the
    held-out items gains no weight on the hold-out through the features either."""
    from dpfed_core.models.blend import fit_site_model, released_rows

    X = _site_with_own_items()
    held = X - released_rows(X)
    g = np.zeros(X.shape[1])
    g[np.unique(held.indices)] = 1.0
    g[:20] = 0.0
    features = np.eye(X.shape[1])  # each item its own feature: the smoothing keeps g as it is
    weights = {}
    for known_only in (False, True):
        _, item_names, info = fit_site_model(X, rank=2, lam=0.1, mode="zero", max_iter=20, g=g, features=features,
                                             default_rule="alone", known_only=known_only)
        weights[known_only] = dict(zip(item_names, info["item_weights"]))["dp popularity over features"]
    assert weights[False] > 0.0 and weights[True] == 0.0

def test_a_site_digest_does_not_depend_on_how_its_rows_are_fed_to_the_hash(monkeypatch):
    """The site's stream is a hash of its rows fed a chunk at a time: the same bytes whatever the
    chunk, so the same stream (and the same hold-out) as the rows fed whole."""
    from dpfed_core.models import blend

    X = _popular_data(n=300, m=40, seed=5)
    whole = blend.site_rng(X).random(4)
    monkeypatch.setattr(blend, "_HASH_CHUNK", 7)
    np.testing.assert_array_equal(blend.site_rng(X).random(4), whole)
    import hashlib

    h = hashlib.blake2b(digest_size=20, person=b"dpfed-site-memo")   # the rows' arrays fed whole
    for a in (np.asarray(X.shape, np.int64), X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data):
        h.update(a.tobytes())
    h.update(b"|")
    assert blend._digest(X) == h.digest() == blend._digest(X.copy())


def test_a_site_s_rows_are_hashed_once_for_its_streams_and_its_fit_keys(monkeypatch):
    """The site's digest seeds its streams and stands for its rows in every key of its own fits: the
    rows are read by the hash once per fit, not once per key (the reduced rows are other rows)."""
    from dpfed_core.models import blend

    X = _popular_data(n=300, m=30, seed=5)
    real, hashed = blend._hash_csr, []
    monkeypatch.setattr(blend, "_hash_csr", lambda h, Z: hashed.append(sp.csr_matrix(Z).nnz) or real(h, Z))
    blend.SITE_FITS.clear()
    _, _, first = blend.fit_site_model(X, rank=3, lam=0.1, mode="zero", max_iter=20)
    assert hashed.count(X.nnz) == 1
    hits = blend.SITE_FITS.hits
    _, _, again = blend.fit_site_model(X.copy(), rank=3, lam=0.1, mode="zero", max_iter=20)
    assert blend.SITE_FITS.hits > hits  # equal rows, another matrix: the kept fits are found by content
    assert again["matrix_weights"] == first["matrix_weights"] and again["holdout_mar"] == first["holdout_mar"]


def test_a_sites_scores_are_its_unit_parts_at_the_weights_it_reports():
    """The refit model scores Σ w_k·(part k scaled to unit rows) at exactly the weights ``info`` states:
    without a hold-out the rule keeps the default (0.5 on the matrix part, 2 on popularity), and the
    scores are that blend, computed here from the parts themselves."""
    g = np.random.default_rng(21)
    n, m = 6, 8
    X = sp.csr_matrix((np.ones(n), (np.arange(n), [0, 0, 1, 2, 2, 2])), shape=(n, m))  # one item a user
    U0, V0 = g.random((n, 3)), g.random((m, 3))
    U, V, info = fit_blend(X, [lambda Z: (U0, V0)], [popularity], np.random.default_rng(0), evidence=1.0,
                           default=([0.5], [2.0]))
    assert info["matrix_weights"] == [0.5] and info["item_weights"] == [2.0]
    S = U0 @ V0.T
    pop = popularity(X)
    want = 0.5 * S / np.linalg.norm(S, axis=1, keepdims=True) + 2.0 * pop / np.linalg.norm(pop)
    np.testing.assert_allclose(U @ V.T, want, atol=1e-12)


def test_a_user_with_one_item_keeps_it_on_the_holdout():
    X = sp.csr_matrix(np.array([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]], float))
    red, hidden, has = holdout_split(X, np.random.default_rng(0))
    assert has.tolist() == [False, True, False, True]
    assert (red[0] != X[0]).nnz == 0 and red[2].nnz == 0
    assert np.diff(red.indptr).tolist() == [1, 1, 0, 3]


def _signal_parts(g: np.random.Generator, n: int, m: int, parts: int):
    """A hold-out of n users (no training rows, one hidden item each) and ``parts`` matrix parts: noise
    plus a signal on the hidden item for about 60 % of the users."""
    train, hidden, has = sp.csr_matrix((n, m)), g.integers(0, m, n), np.ones(n, bool)
    onehot = np.eye(m)[hidden]
    mats = []
    for _ in range(parts):
        S = g.random((n, m)) + onehot * g.random((n, 1)) * 2 * (g.random((n, 1)) < 0.6)
        mats.append((S / np.linalg.norm(S, axis=1, keepdims=True), np.eye(m)))
    return train, hidden, has, mats


def test_the_search_drops_a_part_that_is_best_alone_when_the_others_beat_it_together():
    """Weight 0 is on every part's grid: the coordinate search starts from the best single part and may
    leave it at 0 once the other parts together rank the hold-out better without it (here part 2: best
    alone, MAR 0.167; parts 0 and 1 together 0.100). Kept at a weight of at least 0.25 it would be worse."""
    g = np.random.default_rng(184)
    n, m = 12, 6
    train, hidden, has, mats = _signal_parts(g, n, m, 3)
    alone = [holdout_mar(U, train, hidden, has) for U, _ in mats]
    assert int(np.argmin(alone)) == 2
    wm, _, best = choose_weights(mats, [], train, hidden, has)
    assert wm[2] == 0.0 and best < min(alone) - 0.05
    assert best == pytest.approx(holdout_mar(sum(w * U for w, (U, _) in zip(wm, mats)), train, hidden, has), abs=1e-12)
    for w in (0.25, 0.5, 1.0, 2.0):
        kept = holdout_mar(sum(x * U for x, (U, _) in zip(wm[:2] + [w], mats)), train, hidden, has)
        assert kept > best


def test_the_shrunk_popularity_keeps_the_sites_own_outside_the_support_whatever_g_says_there():
    from dpfed_core.models.blend import shrunk_popularity

    X = _popular_data(n=12, m=30, seed=3)
    p = popularity(X) / int(np.count_nonzero(np.diff(X.indptr)))
    g = np.linspace(1.0, 0.1, 30)       # g speaks of every item ...
    S = np.zeros(30, bool)
    S[:8] = True                        # ... but only these are the catalogue's items the site knows
    e = shrunk_popularity(X, g, S)
    np.testing.assert_array_equal(e[~S], p[~S])
    assert not np.allclose(e[S], p[S])


def test_a_site_that_has_none_of_the_federations_items_takes_the_federations_order_on_them():
    """λ = 1 when the site holds none of the items g speaks of (nothing of its own to keep there): on
    those items its default is g's order (g scaled to a total of 1), elsewhere its own frequencies."""
    from dpfed_core.models.blend import shrinkage_weight, shrunk_popularity

    X = _popular_data(n=40, m=30, seed=5)[:, :20]
    X = sp.hstack([X, sp.csr_matrix((40, 10))]).tocsr()  # items 20–29: never held by the site
    g = np.r_[np.zeros(20), np.linspace(1.0, 0.1, 10)]
    S = g != 0
    assert shrinkage_weight(X, g, S) == 1.0
    e = shrunk_popularity(X, g, S)
    np.testing.assert_allclose(e[S], g[S] / g[S].sum())
    np.testing.assert_array_equal(e[~S], popularity(X)[~S] / int(np.count_nonzero(np.diff(X.indptr))))


def test_a_small_site_under_the_alone_rule_keeps_its_own_popularity():
    """A site too small for evidence keeps its default: its own popularity alone under
    ``default_rule="alone"`` (as ``local`` keeps), the popularity shrunk toward the federation's under
    the shrunk rule."""
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS, fit_site_model

    X = _popular_data(n=MIN_EVIDENCE_USERS - 5, m=12, seed=4)
    g = np.random.default_rng(5).random(12)
    V_fed = np.random.default_rng(6).random((12, 3))
    for rule, kept in (("alone", "own popularity"), ("shrunk", "shrunk popularity")):
        mnames, inames, info = fit_site_model(X, rank=3, lam=0.1, mode="zero", max_iter=20, V_fed=V_fed, g=g,
                                              default_rule=rule)
        assert dict(zip(inames, info["item_weights"])) == {name: float(name == kept) for name in inames}, rule
        assert not any(info["matrix_weights"])


@pytest.mark.parametrize("part", ["dp popularity", "federation factors"])
def test_with_known_items_only_the_holdout_cannot_see_what_the_federation_says_of_held_out_items(part):
    """Under ``known_only`` a federation part reaches the items the rows it is fitted on hold: on the
    hold-out, items that only the held-out entries name are unknown, so whatever the federation says
    of them cannot move the hold-out — the weights and hold-out MAR are those of the same part with
    those items zeroed. Without the mask the same part sees them (the contrast: the test has power)."""
    from dpfed_core.models.blend import fit_site_model, released_rows

    X = _site_with_own_items()
    Z = released_rows(X)
    held = X - Z
    held.eliminate_zeros()
    unseen = np.setdiff1d(held.indices, Z.indices)  # named only by a held-out entry
    assert unseen.size > 100
    leak = np.zeros(X.shape[1])
    leak[unseen] = 1.0
    leak[:20] = 1.0  # the common items: every user's factors have something to fit
    clean = leak.copy()
    clean[unseen] = 0.0

    def fit(vec, known_only):
        kw = {"g": vec} if part == "dp popularity" else {"V_fed": vec[:, None]}
        _, _, info = fit_site_model(X, rank=2, lam=0.1, mode="zero", max_iter=20, default_rule="alone",
                                    known_only=known_only, **kw)
        return info["matrix_weights"], info["item_weights"], info["holdout_mar"]

    assert fit(leak, True) == fit(clean, True)
    assert fit(leak, False)[2] < fit(clean, False)[2] - 0.05


def test_the_sites_popularity_counts_its_users_not_their_values():
    X = sp.csr_matrix(np.array([[5.0, 0, 1.0, 0], [1.0, 0, 0, 0], [2.0, 0, 4.0, 0]]))
    assert popularity(X).tolist() == [3.0, 0.0, 2.0, 0.0]


@pytest.mark.parametrize("users", [19, 20])
def test_a_holdout_of_min_evidence_users_is_evidence_and_one_fewer_is_not(users):
    """MIN_EVIDENCE_USERS hold-out users are enough for the rule to weigh a search against the default;
    one fewer keeps the default unsearched. Popularity beats a noise default by many standard errors."""
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS

    assert MIN_EVIDENCE_USERS == 20
    X = _popular_data(n=users, m=30, seed=8)  # every user has 3–7 items: all on the hold-out
    noise = np.random.default_rng(9).random(X.shape)
    default = ([1.0], [0.0])
    _, _, info = fit_blend(X, [lambda Z: (noise, np.eye(X.shape[1]))], [popularity], np.random.default_rng(10),
                           evidence=1.0, default=default, alone=([True], [True]), alone_default=default)
    if users < MIN_EVIDENCE_USERS:
        assert (info["matrix_weights"], info["item_weights"]) == default
    else:
        assert info["item_weights"][0] > 0 and info["holdout_mar"] < 0.3


def test_the_value_scale_is_never_negative_so_it_never_turns_a_ranking_around():
    """The least-squares factor of values on scores is used only when positive: scores that disagree
    with the values (a negative factor would reverse every ranking of the site) are left as they are."""
    from dpfed_core.models.blend import value_scale

    X = sp.csr_matrix(np.array([[5.0, 1.0]]))
    agree = [(("matrix", 0), np.array([[1.0]]), np.array([[1.0], [0.2]]))]
    assert value_scale(X, agree) == pytest.approx(5.0)  # 5.2 / 1.04: the values are 5 × the scores
    disagree = [(("matrix", 0), np.array([[1.0]]), np.array([[-1.0], [-5.0]]))]
    assert value_scale(X, disagree) == 1.0
    assert value_scale(sp.csr_matrix((1, 2)), agree) == 1.0


def test_the_bar_of_nested_evidence_is_the_default_where_it_beats_the_sites_own_blend():
    """Nested evidence: the bar the whole search must clear is the better on the hold-out of the site's
    own blend and the caller's default. Here the own part ranks the rare items first and the default
    (the federation's popularity) the right way; at a z no search can clear, the blend is the default,
    not the own blend."""
    from dpfed_core.models.blend import fit_blend

    n, m = 200, 12
    p = 0.8 ** np.arange(m)
    X = sp.csr_matrix((np.random.default_rng(0).random((n, m)) < p).astype(float))
    _, _, info = fit_blend(X, [], [lambda Z: np.arange(m, dtype=float) + 1.0, lambda Z: p.copy()],
                           np.random.default_rng(1), evidence=100.0, default=([], [0.0, 1.0]),
                           alone=([], [True, False]), alone_default=([], [1.0, 0.0]))
    assert info["item_weights"] == [0.0, 1.0]
    assert info["holdout_mar"] < 0.5


def test_a_holdout_without_users_ranks_every_blend_as_random():
    """½ is the mean rank of a random ordering: a hold-out with no user who has a hidden item is no
    evidence for any blend, and both ways of scoring it say so (never 0, a perfect ranking)."""
    from dpfed_core.models import blend

    X = _popular_data(n=20)
    red, hidden, has = holdout_split(X, np.random.default_rng(0))
    none = np.zeros_like(has)
    mat, pop = _noise_and_pop(X, red)
    assert holdout_mar(mat[0], red, hidden, none) == 0.5
    assert blend._HoldoutScores([mat], red, hidden, none, None).mar([1.0], pop) == 0.5


def test_the_search_comes_back_to_a_weight_once_the_other_weights_have_moved():
    """The coordinate search makes two passes: here one pass over the weights stops at MAR 0.067 with
    the first part at weight 1, and only after the others have moved does 0.25 on it rank the hold-out
    better (0.033). The chosen blend is one no single change of a weight on the grid improves."""
    from dpfed_core.models.blend import ITEM_WEIGHTS, MATRIX_WEIGHTS

    g = np.random.default_rng(6)
    n, m = 12, 6
    train, hidden, has, mats = _signal_parts(g, n, m, 2)
    v = g.random(m)
    items = [v / np.linalg.norm(v)]

    def mar(wm, wi):
        return holdout_mar(sum(w * U for w, (U, _) in zip(wm, mats)) + wi[0] * items[0], train, hidden, has)

    wm, wi, best = choose_weights(mats, items, train, hidden, has)
    assert (wm, wi) == ([0.25, 1.0], [1.0])
    assert best == pytest.approx(mar(wm, wi), abs=1e-12) and best < mar([1.0, 1.0], [1.0]) - 0.03
    for j in range(2):
        for w in MATRIX_WEIGHTS:
            assert mar([w if k == j else x for k, x in enumerate(wm)], wi) >= best - 1e-12
    for w in ITEM_WEIGHTS:
        assert mar(wm, [w]) >= best - 1e-12


def test_the_hold_out_samples_users_and_items_only_above_their_caps():
    """At exactly HOLDOUT_USERS hold-out users and HOLDOUT_ITEMS items every one is scored and the
    generator is not drawn from (the site's later draws stay where they were); one more of either is a
    sample."""
    from dpfed_core.models.blend import HOLDOUT_ITEMS, HOLDOUT_USERS, holdout_sample

    g = np.random.default_rng(4)
    state = g.bit_generator.state
    has = np.ones(HOLDOUT_USERS + 7, dtype=bool)
    has[:7] = False  # users with one item have no hidden item: HOLDOUT_USERS have one
    assert holdout_sample(has, HOLDOUT_ITEMS, g) == (None, None)
    assert g.bit_generator.state == state
    has[0] = True
    pick, cols = holdout_sample(has, HOLDOUT_ITEMS, g)
    assert pick.size == HOLDOUT_USERS and cols is None and g.bit_generator.state != state
    pick, cols = holdout_sample(has[1:], HOLDOUT_ITEMS + 1, np.random.default_rng(4))
    assert pick is None and cols.size == HOLDOUT_ITEMS


def test_the_grid_lets_an_item_part_weigh_sixteen_times_a_matrix_part():
    """Scores rank the same at any common scale, so the grid's reach is its ratios: weight 4 on an item
    part beside 0.25 on a matrix part is the only way to rank by mostly the item part with a trace of the
    matrix, and here it ranks the hold-out better (0.217) than any blend of the two without it (0.233)."""
    g = np.random.default_rng(2670)
    n, m = 12, 6
    train, hidden, has = sp.csr_matrix((n, m)), g.integers(0, m, n), np.ones(n, bool)
    onehot = np.eye(m)[hidden]
    S = g.random((n, m)) + onehot * g.random((n, 1)) * 2 * (g.random((n, 1)) < 0.6)
    mats = [(S / np.linalg.norm(S, axis=1, keepdims=True), np.eye(m))]
    v = g.random(m) + 0.3 * np.bincount(hidden, minlength=m)
    items = [v / np.linalg.norm(v)]
    wm, wi, best = choose_weights(mats, items, train, hidden, has)
    assert (wm, wi) == ([0.25], [4.0])
    without = min(holdout_mar(a * mats[0][0] + b * items[0], train, hidden, has)
                  for a in (0.0, 0.25, 0.5, 1.0, 2.0) for b in (0.0, 0.25, 0.5, 1.0, 2.0))
    assert best < without - 0.01


def test_a_sites_users_without_rows_do_not_dilute_its_frequencies():
    """The site's item frequencies are over the users who have a row: users with an empty training
    row say nothing of which items are used, so they move neither the shrinkage weight nor the
    shrunk popularity."""
    from dpfed_core.models.blend import shrinkage_weight, shrunk_popularity

    X = _popular_data(n=30, m=12, seed=5)
    padded = sp.vstack([X, sp.csr_matrix((20, 12))]).tocsr()
    g = np.random.default_rng(1).uniform(0, 5, 12)
    assert shrinkage_weight(padded, g) == pytest.approx(shrinkage_weight(X, g), rel=1e-12)
    np.testing.assert_allclose(shrunk_popularity(padded, g), shrunk_popularity(X, g), rtol=1e-12)


def test_site_fits_hand_out_copies_and_evict_as_many_as_the_bound_needs():
    """Kept fits are copied out (a caller that changes what it got changes nothing kept); a fit larger
    than the bound is not kept and pushes nothing out; a fit that needs the room of two kept ones
    evicts both, least recently used first."""
    from dpfed_core.models.blend import _SiteFits

    fits = _SiteFits(max_bytes=3 * 80)  # three fits of 10 doubles
    a = fits.remember(b"a", lambda: (np.arange(10.0),))
    a[0][:] = -1.0
    again = fits.remember(b"a", lambda: (np.zeros(10),))
    assert again[0].tolist() == list(range(10))
    again[0][:] = -2.0
    assert fits.remember(b"a", lambda: (np.zeros(10),))[0].tolist() == list(range(10))
    fits.remember(b"b", lambda: (np.ones(10),))
    fits.remember(b"big", lambda: (np.ones(40),))  # 320 bytes: beyond the bound, not kept
    assert fits.bytes == 160 and set(fits._fits) == {b"a", b"b"}
    fits.remember(b"c", lambda: (np.ones(25),))  # 200 bytes: a and b (the oldest) must both go
    assert fits.bytes <= fits.max_bytes and set(fits._fits) == {b"c"}


def test_without_its_own_parts_a_small_site_keeps_the_federations_factors_and_popularity_at_equal_weight():
    """local_blend off (the federation's parts only), a hold-out too small for evidence: the site keeps
    the federation's factors and its DP popularity at weight 1 each; factors that are all zero (the
    federation learned nothing) get no weight, only the popularity scores."""
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS, fit_site_model

    X = _popular_data(n=MIN_EVIDENCE_USERS - 5, m=12, seed=4)
    g = np.random.default_rng(5).random(12)
    V_fed = np.random.default_rng(6).random((12, 3))
    kw = dict(rank=3, lam=0.1, mode="zero", max_iter=20, evidence=1.0, own=False)
    mnames, inames, info = fit_site_model(X, V_fed=V_fed, g=g, **kw)
    assert (mnames, inames) == (["federation"], ["dp popularity"])
    assert (info["matrix_weights"], info["item_weights"]) == ([1.0], [1.0])
    _, _, info = fit_site_model(X, V_fed=np.zeros((12, 3)), g=g, **kw)
    assert (info["matrix_weights"], info["item_weights"]) == ([0.0], [1.0])


def test_item_features_on_another_item_axis_are_not_used():
    """Public item features are used only when they describe the site's item axis (one row per item):
    a table with another number of rows gives the site the model it has without features."""
    from dpfed_core.models.blend import fit_site_model

    X = _popular_data(n=60, m=12, seed=8)
    kw = dict(rank=2, lam=0.1, mode="zero", max_iter=20, evidence=1.0, g=np.random.default_rng(2).random(12))
    plain = fit_site_model(X, **kw)
    other = fit_site_model(X, features=np.random.default_rng(3).random((15, 4)), **kw)
    assert other[:2] == plain[:2] and "own feature profile" not in other[1]
    assert other[2]["item_weights"] == plain[2]["item_weights"]
    assert other[2]["matrix_weights"] == plain[2]["matrix_weights"]


def test_a_blend_is_not_better_than_itself_so_a_tie_keeps_the_sites_own_blend():
    """The bar of nested evidence takes the caller's default over the site's own blend only where the
    default ranks the hold-out strictly better: a tie (here the same blend twice) keeps the own blend."""
    from dpfed_core.models import blend

    X = _popular_data()
    red, hidden, has = holdout_split(X, np.random.default_rng(2))
    mat, pop = _noise_and_pop(X, red)
    for w in (([1.0], [0.0]), ([0.0], [1.0]), ([0.5], [2.0])):
        assert not blend._better([mat], [pop], red, hidden, has, None, w, w)
    assert blend._better([mat], [pop], red, hidden, has, None, ([0.0], [1.0]), ([1.0], [0.0]))


def test_the_sites_own_nmf_is_the_fit_of_its_used_items_put_back_on_their_columns():
    """The site's own NMF is fitted on the items it has rows for and each item's factors go back to that
    item's own column: an item nobody of the site holds gets zero factors, and the model equals the fit
    of the used columns alone."""
    from dpfed_core.models.blend import own_nmf
    from dpfed_core.models.factorization import fit_nmf

    X = _popular_data(n=40, m=12, seed=2)
    wide = sp.hstack([sp.csr_matrix((40, 3)), X[:, :6], sp.csr_matrix((40, 2)), X[:, 6:]]).tocsr()
    used = np.flatnonzero(np.diff(wide.tocsc().indptr) > 0)
    assert used.size < wide.shape[1] and used[0] > 0
    W, V = own_nmf(wide, 3, 0.1, "zero", 30, np.random.default_rng(4))
    W0, V0, _ = fit_nmf(wide[:, used], 3, 0.1, "zero", max_iter=30, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(W, W0)
    np.testing.assert_array_equal(V[used], V0)
    assert not V[np.setdiff1d(np.arange(wide.shape[1]), used)].any()


def test_the_hold_out_scores_each_item_part_computed_without_the_hidden_entries():
    """On the hold-out an item part is computed from the reduced rows, as the site would have it without
    the entries it hides: an item only a hidden entry names has no popularity there, so the site's
    popularity cannot rank it by having seen it. Computed from the full rows, it ranks the hidden items
    near the top and the hold-out overrates it."""
    X = _site_with_own_items()
    _, _, info = fit_blend(X, [], [popularity], np.random.default_rng(3))
    red, hidden, has = holdout_split(X, np.random.default_rng(3))
    pop = popularity(red)
    assert info["holdout_mar"] == pytest.approx(holdout_mar(np.tile(pop / np.linalg.norm(pop), (X.shape[0], 1)),
                                                            red, hidden, has), abs=1e-12)
    assert info["holdout_mar"] > 0.3
