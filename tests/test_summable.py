"""Summable releases (dp-popularity): noise shares sized for the tolerated dropouts, the ledger's two
guarantees, the public grid that makes SecAgg+'s quantisation exact, and bad parameters."""
from __future__ import annotations

import math
import os
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpfed_core.errors import ConfigError
from dpfed_core.federation.summable import GRID, make_summable_method, secagg_ranges, to_grid
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.privacy.mechanisms import gaussian_sigma


def _rows(n=40, m=25, seed=3):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(np.minimum(rng.poisson(1.0, (n, m)), 5).astype(float))


@pytest.mark.parametrize("H,d", [(3, 0), (3, 1), (10, 4)])
def test_noise_share_is_sigma_over_sqrt_survivors(H, d):
    X = _rows()
    m = make_summable_method("dp-popularity", value_max=5.0, epsilon=1.0, delta=1e-6, max_dropouts=d)
    sigma = gaussian_sigma(1.0, 1e-6, 5.0, X.shape[1])
    exact = make_summable_method("dp-popularity", value_max=5.0, epsilon=math.inf).share(
        X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("a"), H).values
    draws = []
    for s in range(200):
        led = PrivacyLedger(1.0, 1e-6)
        share = m.share(X, np.random.default_rng(s), led.for_entity("a"), H)
        assert share.sigma_share == pytest.approx(sigma / math.sqrt(H - d))
        assert led.guarantee() == pytest.approx((1.0, 1e-6))
        draws.append(share.values - exact)
    z = np.ravel(draws) / (sigma / math.sqrt(H - d))
    # Kolmogorov–Smirnov against N(0, 1) (fixed seeds; grid rounding is 2⁻⁶ ≪ σ).
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # The weaker guarantee against the server colluding with all other entities is stated.
    assert share.coalition_epsilon > 1.0 and "against the server with all other entities" in share.note


@pytest.mark.parametrize("catalogue", ["declared", "secure"])
def test_the_warm_calibration_is_the_one_a_site_draws_its_popularity_share_with(catalogue):
    """A local deployment's warm interpreter computes dp-popularity's σ and coalition ε before it forks
    the sites (from the run's public JSON and the data's public value bound): a site's share then
    finds both in the cache, at the values it would compute. A DP-selected catalogue's size is not
    public before the run: nothing is computed, nothing fails."""
    from dpfed_core.config import RunConfig
    from dpfed_core.deployment.hooks import warm_calibration
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.federation.summable import coalition_epsilon

    X = _rows()
    cfg = RunConfig(method="dp-popularity", epsilon=0.7, delta=1e-6, aggregation="secure", max_dropouts=1)
    gaussian_sigma.cache_clear()
    coalition_epsilon.cache_clear()
    warm_calibration(run_json(cfg, catalogue, X.shape[1]), 4, value_max=5.0)
    warmed = gaussian_sigma.cache_info().currsize
    assert warmed == (1 if catalogue == "declared" else 0)
    assert coalition_epsilon.cache_info().currsize == warmed
    site = make_summable_method("dp-popularity", value_max=5.0, epsilon=0.7, delta=1e-6, max_dropouts=1)
    share = site.share(X, np.random.default_rng(0), PrivacyLedger(0.7, 1e-6).for_entity("a"), 4)
    assert gaussian_sigma.cache_info().misses == warmed + (catalogue == "secure")
    assert coalition_epsilon.cache_info().hits == (catalogue == "declared")
    assert share.sigma_share == pytest.approx(gaussian_sigma(0.7, 1e-6, 5.0, X.shape[1]) / math.sqrt(3))


def test_shares_are_on_the_grid_and_the_quantisation_is_exact():
    X = _rows()
    m = make_summable_method("dp-popularity", value_max=5.0, epsilon=1.0)
    v = m.share(X, np.random.default_rng(1), PrivacyLedger(1.0, 1e-6).for_entity("a"), 3).values
    np.testing.assert_array_equal(v, to_grid(v))
    for H in (2, 3, 10, 30, 100):
        T, M, c = secagg_ranges(H)
        assert H * T < M == 2 ** 32 and T / (2 * c) == 1 / GRID
        q = (v + c) * T / (2 * c)
        np.testing.assert_array_equal(q, np.round(q))  # SecAgg+'s stochastic rounding has nothing to round


def test_bad_parameters_name_the_fix():
    X = _rows()
    with pytest.raises(ConfigError, match="max_dropouts"):
        make_summable_method("dp-popularity", value_max=5.0, epsilon=1.0, max_dropouts=2).share(
            X, np.random.default_rng(0), PrivacyLedger(1.0, 1e-6).for_entity("a"), 3)
    with pytest.raises(ConfigError, match="bad parameter"):
        make_summable_method("dp-popularity", value_max=5.0, bogus=1)
    with pytest.raises(ConfigError, match="at least 2 entities"):
        secagg_ranges(1)


def test_stages_fuse_only_when_public_facts_fix_their_inputs():
    """fused_stages: dp-cooccurrence's co-occurrence stage joins the popularity sum exactly when the
    catalogue has at most max_items items (its item list is then every item, whatever the popularity
    sum says — and the server's combine agrees); with more items it waits for the sum. A method that
    states nothing ahead (the default hooks) is never fused."""
    from dpfed_core.federation.summable import SummableMethod, fused_stages

    cooc = make_summable_method("dp-cooccurrence", epsilon=1.0, max_items=50)
    assert fused_stages(cooc, 50) == [("popularity", "co-occurrence")]
    assert fused_stages(cooc, 51) == [("popularity",), ("co-occurrence",)]
    assert cooc.share_length("co-occurrence", 50, cooc.public_ahead("co-occurrence", 50)) == 50 * 51 // 2
    # what the shares were made with is what the server's combine of the popularity sum broadcasts
    public = cooc.combine("popularity", np.random.default_rng(0).random(50), {"n_entities": 3},
                          np.random.default_rng(1), 3)
    np.testing.assert_array_equal(public["items"], cooc.public_ahead("co-occurrence", 50)["items"])
    assert fused_stages(make_summable_method("dp-popularity", epsilon=1.0), 10) == [("release",)]

    class TwoStages(SummableMethod):
        stages = ("a", "b")

        def share(self, X, rng, ledger, n_entities, stage="a", public=None):
            raise NotImplementedError

    assert fused_stages(TwoStages(), 10) == [("a",), ("b",)]


# ============================================================ the one protocol of summable methods
from dpfed_core.federation import summable_protocol as spr  # noqa: E402
from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.federation.summable import SummableMethod, fused_stages  # noqa: E402


class _TopThenPairs(SummableMethod):
    """Two Gaussian sums: every item's count, then the counts of the 3 items the server chose from the
    first sum (the broadcast ``top``); the server keeps a quantity of its own it never broadcasts."""

    name = "top-then-pairs"
    stages = ("counts", "pairs")
    public_keys = ("top",)
    public_key_labels = {"top": "the chosen items"}
    local_blend = False

    def share(self, X, rng, ledger, n_entities, stage="counts", public=None):
        cols = slice(None) if stage == "counts" else public["top"]
        return self.gaussian_share(np.asarray(X[:, cols].sum(axis=0)).ravel(), 1.0, rng, ledger, n_entities,
                                   stage=stage)

    def combine(self, stage, total, public, rng, n_participants):
        out = dict(public)
        if stage == "counts":
            out["top"] = np.sort(np.argsort(-total, kind="stable")[:3])
            out["server_only"] = total.copy()
        else:
            V = np.full((public["server_only"].size, 1), 0.5)
            V[public["top"], 0] += np.maximum(total, 0.0)
            out["V"] = V
            out["server_draw"] = float(rng.random())
        return out


def _sites(H=3, seed=5):
    rng = np.random.default_rng(seed)
    return [sp.csr_matrix(np.minimum(rng.poisson(0.8, (8 + 2 * h, 12)), 5).astype(float)) for h in range(H)]


def _stages(method, X, n_jobs=1, eps=math.inf, **kw):
    led = PrivacyLedger(eps, 1e-6 if math.isfinite(eps) else 0.0)
    public, sums = spr.run_stages(method, X, [np.random.default_rng(10 + h) for h in range(len(X))],
                                  [led.for_entity(f"e{h}") for h in range(len(X))], np.random.default_rng(99),
                                  n_jobs=n_jobs, **kw)
    return public, sums, led


def test_each_stage_sums_every_entitys_share_and_the_next_reads_only_the_declared_broadcast():
    X = _sites()
    method = _TopThenPairs(epsilon=math.inf)
    public, sums, _ = _stages(method, X)
    counts = sum(np.asarray(x.sum(axis=0)).ravel() for x in X)
    np.testing.assert_array_equal(sums["counts"], counts)
    seen = sums[("pairs", "public")]  # what the entities made their pairs shares with
    assert sums[("counts", "public")] == {"n_entities": 3}
    np.testing.assert_array_equal(sums["pairs"], counts[seen["top"]])
    assert len(sums[("counts", "shares")]) == 3 and "V" in public
    assert set(spr.broadcast_between_stages(method, seen)) == {"top"}  # never the server's own quantities
    _, kept, _ = _stages(method, X, keep_shares=False)
    assert kept[("counts", "shares")] == [] and kept[("pairs", "shares")] == []
    # the audit's run: the last sum as released, no server step after it
    last, audit, _ = _stages(method, X, final_combine=False)
    assert "V" not in last and "top" in last
    np.testing.assert_array_equal(audit["pairs"], sums["pairs"])


def test_shares_made_in_threads_spend_the_same_rows_in_order_and_sum_the_same():
    X = _sites(H=4)
    method = _TopThenPairs(epsilon=1.0, delta=1e-6)
    _, one, led1 = _stages(method, X, eps=1.0)
    _, two, led2 = _stages(method, X, n_jobs=2, eps=1.0)
    assert [(r.entity, r.stage) for r in led1.rows] == [(f"e{h}", s) for s in ("counts", "pairs") for h in range(4)]
    assert led2.rows == led1.rows
    for stage in ("counts", "pairs"):
        np.testing.assert_array_equal(two[stage], one[stage])
    assert spr._workers(-1, 1000) == min(1000, os.cpu_count() or 1)  # −1: every core
    assert (spr._workers(0, 5), spr._workers(3, 2), spr._workers(2, 9)) == (1, 2, 2)


def test_a_share_made_in_a_thread_is_refused_before_its_noise_is_drawn(monkeypatch):
    """A thread's share spends on a ledger bounded by the run's budget, so a share above it is refused
    before any noise exists — never drawn first and refused when its rows reach the run's ledger."""
    from dpfed_core.errors import BudgetExceededError
    from dpfed_core.privacy import mechanisms

    def no_draw(rng):
        raise AssertionError("noise drawn for a share the budget refuses")

    monkeypatch.setattr(mechanisms, "sampler_for", no_draw)
    method = make_summable_method("dp-popularity", value_max=5.0, epsilon=10.0, delta=1e-6, aggregation="none")
    with pytest.raises(BudgetExceededError):
        _stages(method, _sites(H=3), n_jobs=2, eps=1.0)


def test_the_trust_record_states_both_guarantees_and_where_the_sum_was_formed():
    led = PrivacyLedger(1.0, 1e-6)
    led.for_entity("a").spend("release", "Gaussian", 1.0, 1e-6)
    secure = make_summable_method("dp-popularity", epsilon=1.0, aggregation="secure", max_dropouts=1)
    here = spr.trust_record(secure, led, [3.0, 5.0, 4.0], in_process=True)
    assert here["max_dropouts"] == 1 and here["in_process"] is True and "formed in this process" in here["sum"]
    assert here["against_server"]["epsilon"] == pytest.approx(1.0)
    assert here["against_server_and_other_entities"]["epsilon"] == 5.0  # the weakest entity's share
    there = spr.trust_record(secure, led, [3.0, 5.0], in_process=False)
    assert there["in_process"] is False and "SecAgg+" in there["sum"]
    assert spr.run_notes(secure, {}, in_process=True)[0] == spr.IN_PROCESS_NOTE
    assert spr.run_notes(secure, {}, in_process=False)[0] == "secure sums formed by Flower's SecAgg+"
    plain = make_summable_method("dp-popularity", epsilon=1.0, aggregation="none", max_dropouts=1)
    own = spr.trust_record(plain, led, [3.0, 5.0], in_process=True)
    assert own["max_dropouts"] == 0 and "no secure sum" in own["sum"]
    assert own["against_server_and_other_entities"] == own["against_server"]  # nothing to collude against
    assert spr.run_notes(plain, {}, in_process=True)[0] == spr.NO_SECAGG_NOTE


def _three_sites():
    """The toy sites, their names and each one's rows in the stacked matrix."""
    X = _sites()
    slices, start = [], 0
    for x in X:
        slices.append(slice(start, start + x.shape[0]))
        start += x.shape[0]
    return X, ["e0", "e1", "e2"], slices, start


def test_the_message_log_of_a_summable_run_lists_each_message_with_its_round_and_direction():
    X, names, slices, start = _three_sites()
    for aggregation in ("secure", "none"):
        method = _TopThenPairs(epsilon=1.0, delta=1e-6, aggregation=aggregation)
        rngs = [np.random.default_rng(10 + h) for h in range(3)] + [np.random.default_rng(99)]
        out = spr.fit_summable(method, X, names, slices, start, rngs, PrivacyLedger(1.0, 1e-6), 0.1, "zero",
                               lambda *a, **k: None)
        assert out["public"]["server_draw"] == np.random.default_rng(99).random()  # the server's own stream
        log = [(m.round, m.sender, m.receiver, m.content, m.shape) for m in out["messages"]]
        word = ("share of the secure sum ({} + noise share)" if aggregation == "secure"
                else "noisy {} release (full noise)")
        ups = [(1, n, "server", word.format(s), (w,)) for s, w in (("counts", 12), ("pairs", 3)) for n in names]
        down = [(1, "server", n, "the chosen items (public, from the counts sum)", (3,)) for n in names]
        V = [(2, "server", n, "item factors V (top-then-pairs)", (12, 1)) for n in names]
        assert sorted(log) == sorted(ups + down + V)
        assert [m.round for m in out["messages"]][-3:] == [2, 2, 2]


def test_a_one_stage_methods_release_is_never_called_a_release_release():
    """A one-stage method's only stage is named "release": the message log and the dashboard's progress
    lines say "release" once."""
    from dpfed_core.ui.tables import progress_text

    X, names, slices, start = _three_sites()
    events = []
    method = make_summable_method("dp-popularity", epsilon=1.0, delta=1e-6, aggregation="none")
    rngs = [np.random.default_rng(10 + h) for h in range(3)] + [np.random.default_rng(99)]
    out = spr.fit_summable(method, X, names, slices, start, rngs, PrivacyLedger(1.0, 1e-6), 0.1, "zero",
                           lambda event, **info: events.append(progress_text(event, info)))
    sent = {m.content for m in out["messages"] if m.round == 1 and m.receiver == "server"}
    assert sent == {"noisy release (full noise)"}, sent
    lines = [e for e in events if e]
    assert "Round 1 · entity **e0** (1/3) computes its DP release on its own training data…" in lines, lines
    assert "Server · adds up the releases (post-processing, no privacy cost)…" in lines, lines
    assert not any("release release" in e for e in lines), lines


def test_an_entitys_round_2_scores_on_the_broadcast_v_followed_by_its_own_columns():
    class WithOwn(_TopThenPairs):
        def fit_local(self, X, public, lam, mode, rng):
            n, m = X.shape
            return np.ones((n, 1)), np.full((m, 2), 3.0), np.full((n, 2), 2.0)

    X = _sites()[0]
    V = np.arange(12.0).reshape(12, 1)
    U_h, V_h = spr.fit_entity(WithOwn(), X, {"V": V}, 0.1, "zero", np.random.default_rng(0))
    assert U_h.shape == (X.shape[0], 3) and V_h.shape == (12, 3)
    np.testing.assert_array_equal(V_h[:, :1], V)
    np.testing.assert_array_equal(V_h[:, 1:], 3.0)
    np.testing.assert_array_equal(U_h @ V_h.T, np.ones((X.shape[0], 1)) @ V.T + 12.0)


def test_a_share_is_rounded_to_the_nearest_grid_point_either_side_of_zero():
    x = np.array([0.6, -0.6, 0.4, -0.4, 2.5 + 0.51, -7.49]) * GRID
    np.testing.assert_array_equal(to_grid(x), np.array([1.0, -1.0, 0.0, 0.0, 3.0, -7.0]) * GRID)


def test_a_secure_sum_is_released_with_every_entity_but_the_tolerated_dropouts_and_never_fewer():
    m = make_summable_method("dp-popularity", epsilon=1.0, max_dropouts=1)
    m.check_participants(5, 5)
    m.check_participants(4, 5)  # one dropped: the shares were sized for it
    with pytest.raises(ConfigError, match="only 3 of 5 entities contributed"):
        m.check_participants(3, 5)
    make_summable_method("dp-popularity", epsilon=1.0, aggregation="none").check_participants(1, 5)


@pytest.mark.parametrize("d", [-1, True, 1.5])
def test_max_dropouts_is_a_whole_number_of_at_least_zero(d):
    with pytest.raises(ConfigError, match="max_dropouts must be a whole number"):
        make_summable_method("dp-popularity", epsilon=1.0, max_dropouts=d).check(5)


def test_a_secure_sum_keeps_at_least_two_entities_beyond_the_dropouts():
    make_summable_method("dp-popularity", epsilon=1.0, max_dropouts=3).check(5)
    with pytest.raises(ConfigError, match="lower max_dropouts to at most 3"):
        make_summable_method("dp-popularity", epsilon=1.0, max_dropouts=4).check(5)
    make_summable_method("dp-popularity", epsilon=1.0, max_dropouts=4, aggregation="none").check(5)


def test_a_stage_joins_the_previous_sum_only_when_both_lengths_are_known_ahead():
    """Three stages: the second's inputs are fixed ahead but the first's length is not stated, so the
    second waits for the first sum; the third joins the second (both lengths known ahead)."""
    class ThreeStages(SummableMethod):
        stages = ("a", "b", "c")

        def share(self, X, rng, ledger, n_entities, stage="a", public=None):
            raise NotImplementedError

        def public_ahead(self, stage, n_items):
            return {} if stage == "a" else {f"for_{stage}": n_items}

        def share_length(self, stage, n_items, public):
            # a stage states its length from its own fixed-ahead input only
            return None if stage == "a" else (n_items if f"for_{stage}" in public else None)

    assert fused_stages(ThreeStages(), 7) == [("a",), ("b", "c")]


def test_a_methods_run_parameters_leave_out_what_the_run_does_not_set():
    from dpfed_core.federation.summable import summable_params

    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="none", max_dropouts=0)
    params = summable_params(cfg)
    assert params["aggregation"] == "none" and params["max_dropouts"] == 0
    assert all(v is not None for v in params.values())
    cfg2 = SimpleNamespace(method="dp-popularity", aggregation="secure", max_dropouts=None, params={})
    assert "max_dropouts" not in summable_params(cfg2)
def test_the_coalition_epsilon_is_rounded_up_to_meet_delta_by_opendps_map():
    """The stated ε against the server and the other entities is one at which the share's noise is
    (ε, δ)-DP by OpenDP's map — rounded up, never the last ε the search found too small."""
    from dpfed_core.federation.summable import coalition_epsilon
    from dpfed_core.privacy.noise import gaussian_float_delta

    for sigma, size in ((3.0, 25), (0.8, 1000), (12.0, 7)):
        eps = coalition_epsilon(sigma, 1e-6, 1.0, size)
        assert gaussian_float_delta(sigma, 1.0, size, eps) <= 1e-6
        assert gaussian_float_delta(sigma, 1.0, size, eps * (1 - 1e-5)) > 1e-6
    assert coalition_epsilon(0.0, 1e-6, 1.0, 5) == math.inf


def test_a_secure_sum_releases_with_up_to_max_dropouts_missing_and_refuses_more():
    m = make_summable_method("dp-popularity", value_max=5.0, epsilon=1.0, max_dropouts=2)
    for present in (5, 4, 3):
        m.check_participants(present, 5)
    with pytest.raises(ConfigError, match="only 2 of 5 entities contributed"):
        m.check_participants(2, 5)
    make_summable_method("dp-popularity", value_max=5.0, epsilon=1.0, aggregation="none").check_participants(1, 5)


def test_dp_popularity_bounds_each_row_by_row_norm_and_states_it_as_the_sensitivity():
    """row_norm Λ: entries clipped to [0, Λ∞], each user's row scaled to ℓ2 ≤ Λ, Λ the L2 sensitivity
    the row states; without row_norm, Λ = Λ∞."""
    X = _rows()
    X.data *= 3.0  # beyond the value bound 5
    X.data[0] = -4.0  # below 0
    Xc = X.toarray().clip(0, 5.0)
    for row_norm, lam in ((2.0, 2.0), (None, 5.0)):
        exact = make_summable_method("dp-popularity", value_max=5.0, epsilon=math.inf, row_norm=row_norm).share(
            X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("a"), 3).values
        norms = np.linalg.norm(Xc, axis=1)
        want = (Xc * np.minimum(1.0, lam / np.maximum(norms, 1e-300))[:, None]).sum(axis=0)
        np.testing.assert_allclose(exact, to_grid(want))
        led = PrivacyLedger(1.0, 1e-6)
        share = make_summable_method("dp-popularity", value_max=5.0, epsilon=1.0, row_norm=row_norm).share(
            X, np.random.default_rng(0), led.for_entity("a"), 3)
        (row,) = led.rows
        assert row.sensitivity == lam
        assert share.sigma_share == pytest.approx(gaussian_sigma(1.0, 1e-6, lam, X.shape[1]) / math.sqrt(3))


def test_a_stage_joins_the_previous_sum_only_when_that_stage_states_its_length_too():
    """Both stages' inputs are known ahead, but the first states no share length: the server could
    not split a fused sum, so each stage has a secure sum of its own."""
    from dpfed_core.federation.summable import SummableMethod, fused_stages

    class SecondSized(SummableMethod):
        stages = ("a", "b", "c")

        def public_ahead(self, stage, n_items):
            return {}

        def share_length(self, stage, n_items, public):
            return None if stage == "a" else n_items

        def share(self, X, rng, ledger, n_entities, stage="a", public=None):
            raise NotImplementedError

    assert fused_stages(SecondSized(), 10) == [("a",), ("b", "c")]


def test_shares_are_rounded_to_the_nearest_grid_point():
    np.testing.assert_array_equal(to_grid([0.6 * GRID, -0.6 * GRID, 2.4 * GRID, -2.4 * GRID, 3 * GRID]),
                                  [GRID, -GRID, 2 * GRID, -2 * GRID, 3 * GRID])


def test_the_deployed_server_combines_a_secure_sum_with_the_count_of_entities_that_took_part():
    """The ServerApp's combine is the method's own, given how many entities' shares the sum holds: a
    sum short of the shares its noise was sized for is refused, and the ridge follows the σ of the
    shares that took part."""
    from dpfed_core.deployment.hooks import combine_stage, summable_method

    method = summable_method(RunConfig(method="dp-als", aggregation="secure", epsilon=1.0, rank=2, mode="observed"),
                             5.0, n_entities=3)
    total, public = np.ones(4 * 3 + 4 * 2), {"n_entities": 3, "items": np.arange(4)}
    out = combine_stage(method, "als-1", total, public, np.random.default_rng(0), 3)
    assert out["ridge"] == method.combine("als-1", total, public, np.random.default_rng(0), 3)["ridge"]
    with pytest.raises(ConfigError, match="only 2 of 3 entities contributed"):
        combine_stage(method, "als-1", total, public, np.random.default_rng(0), 2)


def test_a_deployed_runs_notes_name_flowers_secure_sums_not_the_in_process_simulation():
    from dpfed_core.deployment.hooks import server_notes, summable_method
    from dpfed_core.federation.summable_protocol import IN_PROCESS_NOTE

    method = summable_method(RunConfig(method="dp-popularity", aggregation="secure", epsilon=1.0), 5.0, n_entities=3)
    notes = server_notes(method, {})
    assert notes[0].startswith("secure sums formed by Flower's SecAgg+")
    assert IN_PROCESS_NOTE not in notes


def test_a_request_for_a_dp_catalogue_at_infinite_epsilon_is_refused_by_name_at_a_site():
    """The coordinator selects a catalogue by DP only at a finite ε. A hand-written request asking for
    one at ε = ∞ is refused with the flags that fix it, not a failure inside the noise calibration."""
    import math

    from dpfed_core.config import RunConfig
    from dpfed_core.deployment.hooks import method_config, node_method, public_bounds
    from dpfed_core.errors import ConfigError

    cfg = RunConfig(method="dp-cooccurrence", epsilon=math.inf, aggregation="secure")
    for call in (lambda: method_config(cfg, True), lambda: node_method(cfg, 5.0, True, 3),
                 lambda: public_bounds(cfg, 5.0, None, True, 3)):
        with pytest.raises(ConfigError, match=r"needs a finite ε.*--items.*--epsilon"):
            call()
    assert method_config(cfg, False) is cfg
    finite = RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure")
    assert 0 < method_config(finite, True).epsilon < 1.0  # the rest after the catalogue's share
