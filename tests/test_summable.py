"""Summable releases (dp-popularity): noise shares sized for the tolerated dropouts, the ledger's two
guarantees, the public grid that makes SecAgg+'s quantisation exact, and bad parameters."""
from __future__ import annotations

import math

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
