"""Samplers and mechanisms (SPEC §3): goodness of fit, exact probabilities, calibration, errors.

Fixed seeds everywhere; thresholds are p-values of 1e-4 (a correct sampler fails one such test
with probability 1e-4 for a *random* seed, and never for the fixed one)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpfed_core.privacy import mechanisms as mech
from dpfed_core.errors import BudgetExceededError, ConfigError
from dpfed_core.privacy.ledger import PrivacyLedger


def led():
    """An unbounded ledger view: these tests check the samplers; the charge is checked below."""
    return PrivacyLedger(math.inf).for_entity("test")


L = dict(stage="test")

P_MIN = 1e-4


def rng(seed=0):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------- samplers
@pytest.mark.parametrize("scale", [0.3, 1.0, 7.0])
def test_mech_laplace_noise_fits_laplace(scale):
    x = mech.laplace_noise(scale, 20000, rng(1))
    assert stats.kstest(x, stats.laplace(scale=scale).cdf).pvalue > P_MIN


def test_mech_laplace_mechanism_scale_is_sensitivity_over_epsilon():
    values = np.full(20000, 3.0)
    out, b = mech.laplace_mechanism(values, 2.0, 0.5, rng(2), ledger=led(), **L)
    assert b == pytest.approx(4.0, rel=1e-7)  # OpenDP charges the 2^-40 rounding
    assert stats.kstest(out - 3.0, stats.laplace(scale=4.0).cdf).pvalue > P_MIN


@pytest.mark.parametrize("scale", [0.7, 3.0])
def test_mech_count_mechanism_fits_discrete_laplace(scale):
    out, b = mech.count_mechanism(np.full(20000, 7), 1, 1.0 / scale, rng(3), ledger=led(), **L)
    assert b == scale and out.dtype == np.int64
    q = math.exp(-1.0 / scale)
    z = np.arange(-60, 61)
    pmf = (1 - q) / (1 + q) * q ** np.abs(z)
    observed = np.array([(out - 7 == v).sum() for v in z])
    keep = pmf * out.size >= 5
    expected = np.append(pmf[keep], pmf[~keep].sum()) * out.size
    obs = np.append(observed[keep], observed[~keep].sum())
    assert stats.chisquare(obs, expected * obs.sum() / expected.sum()).pvalue > P_MIN


def test_mech_gaussian_mechanism_fits_normal_with_opendp_sigma():
    out, sigma = mech.gaussian_mechanism(np.zeros(20000), 1.0, 1.0, 1e-5, rng(4), ledger=led(), **L)
    assert sigma == mech.gaussian_sigma(1.0, 1e-5, 1.0, 20000)
    # OpenDP's map (zCDP → (ε, δ)) needs a little more noise than the continuous analytic curve
    assert 1.0 < sigma / mech.gaussian_sigma_analytic(1.0, 1e-5, 1.0) < 1.1
    assert stats.kstest(out, stats.norm(scale=sigma).cdf).pvalue > P_MIN


@pytest.mark.parametrize("eps,delta", [(0.3, 1e-6), (1.0, 1e-3), (8.0, 1e-8)])
def test_mech_gaussian_sigma_meets_delta_by_opendp_map(eps, delta):
    from dpfed_core.privacy.noise import gaussian_float_delta

    sigma = mech.gaussian_sigma(eps, delta, 2.0, 100)
    assert gaussian_float_delta(sigma, 2.0, 100, eps) <= delta
    assert gaussian_float_delta(0.999 * sigma, 2.0, 100, eps) > delta  # tight: δ is not ignored
    assert mech.gaussian_sigma(eps, delta * 10, 2.0, 100) < sigma  # and it matters


@pytest.mark.parametrize("eps", [0.7, 2.5])
def test_mech_laplace_scale_meets_epsilon_by_opendp_map(eps):
    """b = Δ/ε up to OpenDP's rounding, on both sides of ε = 1: a scale met by the map but larger than
    Δ/ε is noise no budget asked for."""
    from dpfed_core.privacy.noise import laplace_float_epsilon

    for size in (1, 1000, 10**6):
        b = mech.laplace_scale(3.0, eps, size)
        assert laplace_float_epsilon(b, 3.0, size) <= eps
        assert b == pytest.approx(3.0 / eps, rel=1e-5)


@pytest.mark.parametrize("sens", [0.5, 2.0, 7.0])
@pytest.mark.parametrize("eps,delta", [(0.3, 1e-6), (1.0, 1e-5), (4.0, 1e-8)])
def test_mech_analytic_gaussian_sigma_is_the_smallest_sigma_of_the_profile_written_apart(eps, delta, sens):
    """Checked against Balle & Wang's profile written here with SciPy's normal distribution, not with
    the module's own: δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) is at most δ at the σ returned and
    above it 0.5 % below; σ scales with Δ."""
    def profile(sigma: float) -> float:
        a, b = sens / (2 * sigma), eps * sigma / sens
        return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)

    sigma = mech.gaussian_sigma_analytic(eps, delta, sens)
    assert profile(sigma) <= delta
    assert profile(0.995 * sigma) > delta
    assert sigma == pytest.approx(sens * mech.gaussian_sigma_analytic(eps, delta, 1.0), rel=1e-8)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-5), (5.0, 1e-8), (50.0, 1e-6)])
def test_mech_analytic_gaussian_sigma_attains_delta(eps, delta):
    sigma = mech.gaussian_sigma_analytic(eps, delta, 2.0)
    # the privacy profile at σ is at most δ, and 1% less noise would exceed it
    assert mech._gauss_delta(sigma, eps, 2.0) <= delta
    assert mech._gauss_delta(0.99 * sigma, eps, 2.0) > delta
    if eps < 1:  # analytic is never worse than the classic bound where that bound is valid
        assert sigma <= mech.gaussian_sigma_classic(eps, delta, 2.0)


# ---------------------------------------------------------------------- exact distributions
@pytest.mark.parametrize("monotone", [False, True])
def test_mech_exponential_mechanism_exact_probabilities(monotone):
    u = np.array([0.0, 1.0, 2.5, 3.0, -1.0])
    eps, sens, n = 1.3, 1.0, 40000
    g = rng(5)
    draws = np.array([mech.exponential_mechanism(u, sens, eps, g, monotone=monotone, ledger=led(), **L) for _ in range(n)])
    p = mech.exponential_mechanism_probabilities(u, sens, eps, monotone=monotone)
    expected = np.exp((1 if monotone else 0.5) * eps * u / sens)
    np.testing.assert_allclose(p, expected / expected.sum())
    observed = np.bincount(draws, minlength=u.size)
    assert stats.chisquare(observed, n * p).pvalue > P_MIN


def test_mech_exponential_mechanism_handles_huge_utilities_and_minus_inf():
    u = np.array([-1e300, 1e6, 1e6 - 1, -np.inf])
    g = rng(6)
    picks = {mech.exponential_mechanism(u, 1.0, 2.0, g, ledger=led(), **L) for _ in range(200)}
    assert picks <= {1, 2} and 3 not in picks
    assert np.isfinite(mech.exponential_mechanism_probabilities(u, 1.0, 2.0)[:3]).all()


def test_mech_exponential_mechanism_infinite_epsilon_is_argmax():
    assert mech.exponential_mechanism([1.0, 5.0, 2.0], 1.0, math.inf, rng(7), ledger=led(), **L) == 1


@pytest.mark.parametrize("monotone", [False, True])
def test_mech_gumbel_top_s_exact_sequence_probabilities(monotone):
    u = np.array([0.0, 2.0, 1.0, 3.0])
    s, eps, sens, n = 2, 2.0, 1.0, 40000
    g = rng(8)
    out = mech.gumbel_top_s(np.tile(u, (n, 1)), s, sens, eps, g, monotone=monotone, ledger=led(), **L)  # one draw per row
    seqs = list(itertools.permutations(range(u.size), s))
    code = {q: i for i, q in enumerate(seqs)}
    observed = np.bincount([code[tuple(r)] for r in out], minlength=len(seqs))
    probs = np.array([mech.top_s_sequence_probability(u, q, sens, eps, monotone) for q in seqs])
    assert probs.sum() == pytest.approx(1.0)
    assert stats.chisquare(observed, n * probs).pvalue > P_MIN


def test_mech_gumbel_top_s_rows_and_exact_limit():
    u = np.array([[1.0, 5.0, 3.0, 4.0], [9.0, 0.0, 8.0, 7.0]])
    np.testing.assert_array_equal(mech.gumbel_top_s(u, 2, 1.0, math.inf, rng(9), ledger=led(), **L), [[1, 3], [0, 2]])
    with pytest.raises(ConfigError):
        mech.gumbel_top_s(u, 5, 1.0, 1.0, rng(9), ledger=led(), **L)


# ------------------------------------------------------------------------- private partition
def test_mech_partition_keep_matches_its_probability():
    gamma = mech.partition_threshold(0.5, 0.01)
    c = np.repeat([0, 5, 8, 9, 12], 4000)
    keep = mech.partition_keep(c, 0.5, gamma, rng(12), ledger=led(), **L)
    p = mech.partition_keep_probability([0, 5, 8, 9, 12], 0.5, gamma)
    for v, pv in zip([0, 5, 8, 9, 12], p):
        assert stats.binomtest(int(keep[c == v].sum()), 4000, pv).pvalue > P_MIN


def test_mech_partition_keep_row_states_the_delta_of_a_cube_only_the_new_user_holds():
    """A cube held by the added user alone (count 1 against absent) is kept with probability f(1):
    the test's δ, which its ledger row must state (with ε' and the count's scale 1/ε')."""
    for eps_l, d1 in ((0.5, 0.01), (0.2, 1e-6)):
        gamma = mech.partition_threshold(eps_l, d1)
        ledger = PrivacyLedger(math.inf)
        mech.partition_keep(np.array([0, 3, 40]), eps_l, gamma, rng(1), ledger=ledger.for_entity("e"), stage="level")
        (row,) = ledger.rows
        f1 = float(mech.partition_keep_probability([1], eps_l, gamma)[0])
        assert 0 < f1 <= d1 and row.delta == pytest.approx(f1, rel=1e-12)
        assert row.epsilon == eps_l and row.noise_scale == pytest.approx(1 / eps_l)


def test_mech_partition_keep_probability_ratio_bounds_and_threshold():
    eps_l = 0.3
    gamma = mech.partition_threshold(eps_l, 1e-7)
    c = np.arange(0, int(gamma) + 60)
    f = mech.partition_keep_probability(c, eps_l, gamma)
    assert np.all(np.diff(f) >= 0) and f[-1] > 0.99
    # ε'-DP for a count change of 1, for keep and for drop
    assert np.all(f[2:] / f[1:-1] <= math.exp(eps_l) * (1 + 1e-6))  # 1 − f loses digits near 1
    assert np.all((1 - f[1:-1]) / (1 - f[2:]) <= math.exp(eps_l) * (1 + 1e-6))
    assert f[1] <= 1e-7 < f[2]  # a cube created by one user is kept with probability δ₁ ≤ 1e-7
    assert f[1] > math.exp(-eps_l) * 1e-7  # γ is the smallest integer threshold that achieves it
    assert mech.partition_keep_probability([3, 4, 5], math.inf, 4.0).tolist() == [0, 1, 1]


# ----------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_mech_rejects_bad_epsilon(bad):
    with pytest.raises(ConfigError):
        mech.laplace_mechanism([1.0], 1.0, bad, rng(), ledger=led(), **L)
    with pytest.raises(ConfigError):
        mech.exponential_mechanism([1.0, 2.0], 1.0, bad, rng(), ledger=led(), **L)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1])
def test_mech_gaussian_rejects_bad_delta(delta):
    with pytest.raises(ConfigError):
        mech.gaussian_sigma_analytic(1.0, delta, 1.0)


def test_mech_infinite_epsilon_adds_no_noise():
    out, b = mech.laplace_mechanism([1.0, 2.0], 1.0, math.inf, rng(), ledger=led(), **L)
    assert b == 0 and out.tolist() == [1.0, 2.0]
    out, s = mech.gaussian_mechanism([1.0], 1.0, math.inf, 1e-6, rng(), ledger=led(), **L)
    assert s == 0 and out.tolist() == [1.0]


def test_a_gaussian_given_no_noise_at_a_finite_epsilon_records_an_infinite_rho():
    """σ = 0 handed to the Gaussian at a finite ε releases the exact values: its row's ρ is ∞ (no zCDP
    accountant can absorb it), never 0."""
    ledger = PrivacyLedger(math.inf)
    out, s = mech.gaussian_mechanism([1.0, 2.0], 1.0, 1.0, 1e-6, rng(), ledger=ledger.for_entity("h"), sigma=0.0, **L)
    assert s == 0 and out.tolist() == [1.0, 2.0]
    assert ledger.rows[0].rho == math.inf


def test_every_mechanism_charges_its_ledger_before_drawing():
    """A draw never escapes its charge: each mechanism records its own row (mechanism, ε, δ,
    sensitivity, scale, and ρ for the Gaussian), and a ledger that refuses the spend stops the
    mechanism before any noise is drawn."""
    ledger = PrivacyLedger(1.0, 1e-6)
    e = ledger.for_entity("h")
    mech.count_mechanism([3, 4], 1, 0.25, rng(), ledger=e, stage="size")
    mech.gaussian_mechanism(np.zeros(5), 2.0, 0.25, 5e-7, rng(), ledger=e, stage="sums")
    mech.laplace_mechanism(np.zeros(3), 1.0, 0.25, rng(), ledger=e, stage="sums")
    rows = ledger.rows
    assert [r.stage for r in rows] == ["size", "sums", "sums"]
    assert rows[0].noise_scale == pytest.approx(4.0) and rows[0].epsilon == 0.25
    g = rows[1]
    assert g.sensitivity == 2.0 and g.rho is not None and g.rho == pytest.approx(2.0 ** 2 / (2 * g.noise_scale ** 2))
    assert rows[2].noise_scale == pytest.approx(mech.laplace_scale(1.0, 0.25, 3))

    class Exploding:
        """A generator whose use would mean noise was drawn."""

        def __getattr__(self, item):
            raise AssertionError("noise drawn after a refused charge")

    with pytest.raises(BudgetExceededError):
        mech.count_mechanism([1], 1, 0.5, Exploding(), ledger=e, stage="too much")
    assert len(ledger.rows) == 3


def test_gaussian_rows_compose_by_rho_and_say_so():
    """Two Gaussian rows of one entity compose in zCDP (ρ adds up), tighter than adding their ε."""
    from dpfed_core.privacy.ledger import ZCDP, compose
    from dpfed_core.privacy.noise import zcdp_epsilon

    ledger = PrivacyLedger(2.0, 1e-6)
    e = ledger.for_entity("h")
    for _ in range(2):
        mech.gaussian_mechanism(np.zeros(10), 1.0, 1.0, 5e-7, rng(), ledger=e, stage="g")
    eps, dlt, how = compose(ledger.rows, 1e-6)
    assert how == ZCDP and eps < 2.0 and dlt == 1e-6
    assert eps == pytest.approx(zcdp_epsilon(sum(r.rho for r in ledger.rows), 1e-6))
    assert ledger.spent("h") == (eps, dlt) and ledger.accountant("h") == ZCDP


@pytest.mark.parametrize("monotone", [False, True])
def test_selection_rows_record_the_zcdp_rho_of_their_gumbel_scale(monotone):
    """The ρ on a selection's ledger row is OpenDP's map of the Gumbel scale actually drawn: the
    exponential mechanism at ε is ε²/8-zCDP, s peeled picks at ε/s each s·(ε/s)²/8 — for monotone
    utilities (scale Δ/ε) and general ones (2Δ/ε, whose map must count the factor 2) alike."""
    u = np.array([0.0, 1.0, 3.0, 2.0, 0.5])
    for eps, sens, s in ((1.0, 1.0, 2), (0.3, 2.5, 3)):
        led = PrivacyLedger(math.inf)
        mech.exponential_mechanism(u, sens, eps, np.random.default_rng(0), monotone=monotone,
                                   ledger=led.for_entity("e"), stage="pick")
        mech.gumbel_top_s(u, s, sens, eps, np.random.default_rng(0), monotone=monotone,
                          ledger=led.for_entity("e"), stage="top")
        pick, top = led.rows
        assert pick.rho == pytest.approx(eps ** 2 / 8, rel=1e-9)
        assert top.rho == pytest.approx(s * (eps / s) ** 2 / 8, rel=1e-9)
        assert pick.noise_scale == pytest.approx((1 if monotone else 2) * sens / eps)


# ------------------------------------------------------------- sensitivities, sizes and thresholds
def test_every_mechanism_refuses_an_infinite_or_negative_sensitivity_before_recording():
    """The sensitivity must be a finite non-negative number: an infinite one calibrates no noise a
    row could state, and the refusal comes before any row is written."""
    ledger = PrivacyLedger(math.inf)
    e = ledger.for_entity("h")
    for bad in (math.inf, -1.0, float("nan")):
        with pytest.raises(ConfigError, match="sensitivity must be a finite non-negative number"):
            mech.count_mechanism([3, 4], bad, 1.0, rng(), ledger=e, **L)
        with pytest.raises(ConfigError, match="sensitivity must be a finite non-negative number"):
            mech.laplace_mechanism([1.0, 2.0], bad, 1.0, rng(), ledger=e, **L)
        with pytest.raises(ConfigError, match="sensitivity must be a finite non-negative number"):
            mech.exponential_mechanism([1.0, 2.0], bad, 1.0, rng(), ledger=e, **L)
        with pytest.raises(ConfigError, match="sensitivity must be a finite non-negative number"):
            mech.gumbel_top_s([1.0, 2.0, 3.0], 2, bad, 1.0, rng(), ledger=e, **L)
    assert ledger.rows == []


def test_the_count_mechanisms_scale_is_its_sensitivity_over_epsilon():
    """b = Δ/ε: a count one user moves by 3 gets three times the noise of a count it moves by 1, and
    the row states that Δ and that b."""
    ledger = PrivacyLedger(math.inf)
    out, b = mech.count_mechanism(np.full(20000, 7), 3, 0.5, rng(3), ledger=ledger.for_entity("h"), **L)
    (row,) = ledger.rows
    assert b == 6.0 and row.noise_scale == 6.0 and row.sensitivity == 3.0
    q = math.exp(-1.0 / 6.0)
    assert np.var(out - 7) == pytest.approx(2 * q / (1 - q) ** 2, rel=0.05)


def test_the_laplace_mechanism_calibrates_to_the_rounding_of_the_whole_vector():
    """OpenDP's map charges the rounding of every coordinate (size·2^k): the scale a release of a
    long vector uses and records meets ε by the map at the vector's own size."""
    from dpfed_core.privacy.noise import laplace_float_epsilon

    n = 200_000
    ledger = PrivacyLedger(math.inf)
    _, b = mech.laplace_mechanism(np.zeros(n), 1.0, 0.5, rng(), ledger=ledger.for_entity("h"), **L)
    assert b == mech.laplace_scale(1.0, 0.5, n) == ledger.rows[0].noise_scale
    assert laplace_float_epsilon(b, 1.0, n) <= 0.5


def test_a_gaussian_rows_rho_is_opendps_map_at_the_vectors_own_size():
    """ρ on the row is the map of the sampler that drew the whole vector: rounding included for
    every coordinate, so a long vector's ρ is never the (smaller) ρ of one coordinate."""
    from dpfed_core.privacy.noise import gaussian_float_rho

    n = 200_000
    ledger = PrivacyLedger(math.inf)
    _, sigma = mech.gaussian_mechanism(np.zeros(n), 1.0, 1.0, 1e-6, rng(), ledger=ledger.for_entity("h"), **L)
    (row,) = ledger.rows
    assert row.rho == gaussian_float_rho(sigma, 1.0, n)
    assert row.rho > gaussian_float_rho(sigma, 1.0, 1)


def test_top_s_may_select_every_coordinate():
    """1 ≤ s ≤ m: s = m is a (noisy) ordering of all the coordinates."""
    u = np.array([1.0, 5.0, 3.0, 4.0])
    out = mech.gumbel_top_s(u, 4, 1.0, 1.0, rng(9), ledger=led(), **L)
    assert sorted(out.tolist()) == [0, 1, 2, 3]
    np.testing.assert_array_equal(mech.gumbel_top_s(u, 4, 1.0, math.inf, rng(9), ledger=led(), **L), [1, 3, 2, 0])
    with pytest.raises(ConfigError, match="1 ≤ s ≤ 4"):
        mech.gumbel_top_s(u, 0, 1.0, 1.0, rng(9), ledger=led(), **L)


def test_exact_partition_tests_keep_a_count_equal_to_the_threshold():
    """Without noise (ε = inf) a cube or key is kept when its count is at least the threshold γ —
    the same rule as the noisy test and as partition_keep_probability."""
    c = np.array([3, 4, 5])
    assert mech.partition_keep(c, math.inf, 4.0, rng(), ledger=led(), **L).tolist() == [False, True, True]
    assert mech.partition_selection(c, 1, math.inf, 1e-6, 4, rng(), ledger=led(), **L).tolist() == [False, True, True]


def test_partition_selection_keeps_a_key_when_count_plus_noise_reaches_the_threshold():
    """keep ⇔ count + discrete Laplace(Δ/ε) ≥ threshold: a key whose count equals the threshold is
    kept with probability P(Z ≥ 0) = 1/(1 + q), q = e^{−ε/Δ} (as OpenDP's Laplace threshold does)."""
    n, eps = 20000, 1.0
    keep = mech.partition_selection(np.full(n, 9), 1, eps, 1e-2, 9, rng(5), ledger=led(), **L)
    q = math.exp(-eps)
    assert stats.binomtest(int(keep.sum()), n, 1 / (1 + q)).pvalue > P_MIN



def test_partition_selection_refuses_a_threshold_its_delta_does_not_cover_before_any_draw():
    """OpenDP's privacy map decides the row: a threshold too low for the caller's δ (a key held by one
    user kept with probability above δ) is refused before anything is recorded or drawn; every
    threshold whose map fits passes — the catalogue rule's 1 + k included — and records the map."""
    from dpfed_core.errors import BudgetExceededError
    from dpfed_core.privacy.catalogue import selection_threshold
    from dpfed_core.privacy.noise import laplace_threshold

    eps, delta, per_user = 1.0, 1e-6, 4
    _, k = selection_threshold(eps, delta, per_user)
    counts = np.array([1, 5, 50])
    refused = 0
    for t in range(2, int(k) + 2):
        ledger, g = led(), rng()
        before = g.bit_generator.state
        mapped = laplace_threshold(per_user / eps, t).map((per_user, per_user, 1))[1]
        if mapped > delta:
            refused += 1
            with pytest.raises(BudgetExceededError, match=r"beyond the \(1, 1e-06\) it was given; nothing drawn"):
                mech.partition_selection(counts, per_user, eps, delta, t, g, ledger=ledger, **L)
            assert ledger.ledger.rows == [] and g.bit_generator.state == before
        else:
            mech.partition_selection(counts, per_user, eps, delta, t, g, ledger=ledger, **L)
            (row,) = ledger.ledger.rows
            assert row.epsilon == pytest.approx(eps) and row.delta == pytest.approx(mapped) and row.delta <= delta
    assert refused >= 2 * k // 3, (refused, k)  # most thresholds below the rule's cost more than δ

def test_the_partition_threshold_refuses_a_delta_per_level_outside_its_range():
    for bad in (0.0, 0.5, 0.7, -1e-3):
        with pytest.raises(ConfigError, match=r"δ per level must be in \(0, 0.5\)"):
            mech.partition_threshold(1.0, bad)
    assert mech.partition_threshold(1.0, 0.49) == 2.0


def test_the_partition_threshold_is_the_smallest_gamma_whose_single_user_cube_stays_within_delta():
    """δ₁ just below q^k/(1+q): ln(1/(δ₁(1+q)))/ε' is a hair above k, so γ = k + 2 — the smallest
    integer whose f(1) ≤ δ₁ (γ = k + 1 would keep a one-user cube with probability above δ₁)."""
    for eps_l in (1.0, 0.5, 0.3):
        q = math.exp(-eps_l)
        for k in (2, 3, 5, 8):
            d1 = q ** k / (1 + q) * (1 - 1e-13)
            gamma = mech.partition_threshold(eps_l, d1)
            assert mech.partition_keep_probability([1], eps_l, gamma)[0] <= d1
            assert gamma == k + 2
            assert mech.partition_keep_probability([1], eps_l, gamma - 1)[0] > d1


def test_the_classic_gaussian_calibration_is_the_textbook_formula():
    """σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm. A.1), kept for comparison."""
    assert mech.gaussian_sigma_classic(0.5, 1e-5, 2.0) == pytest.approx(
        2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-12)


def test_exact_counts_are_rounded_to_the_nearest_whole_number_not_down():
    """Counts formed as float sums (2.9999999999) are released as the whole numbers they stand for."""
    led = PrivacyLedger(math.inf)
    out, scale = mech.count_mechanism([2.9999999999, 1.0000000001, 0.0, 7.0], 1, math.inf, np.random.default_rng(0),
                                      ledger=led.for_entity("a"), stage="counts")
    assert scale == 0.0 and out.tolist() == [3, 1, 0, 7] and out.dtype == np.int64


def test_an_exact_choice_among_tied_utilities_is_uniform_over_the_tie():
    """At ε = ∞ the exponential mechanism is the argmax, its ties broken at random (a data-independent
    choice), not always the first tied index."""
    rng = np.random.default_rng(5)
    led = PrivacyLedger(math.inf)
    picks = [mech.exponential_mechanism([1.0, 3.0, 0.0, 3.0, 3.0], 1.0, math.inf, rng, ledger=led.for_entity("a"),
                                        stage="choice") for _ in range(600)]
    counts = np.bincount(picks, minlength=5)
    assert counts[[0, 2]].sum() == 0 and stats.chisquare(counts[[1, 3, 4]]).pvalue > 1e-4


def test_the_exact_output_distribution_holds_for_utilities_far_above_the_exponents_range():
    """Probabilities from log-sum-exp with the maximum factored out: utilities of 10^3 / β do not overflow."""
    p = mech.exponential_mechanism_probabilities([2000.0, 2000.0, 1998.0], 1.0, 2.0, monotone=True)
    q = np.exp(np.array([0.0, 0.0, -4.0]))
    assert np.allclose(p, q / q.sum(), rtol=1e-12) and math.isclose(mech._logsumexp(np.array([1e3, 1e3])),
                                                                     1e3 + math.log(2))


def test_a_negative_laplace_scale_is_refused_not_read_as_no_noise():
    from dpfed_core.privacy.noise import SecureGenerator

    for rng in (np.random.default_rng(0), SecureGenerator()):
        with pytest.raises(ConfigError, match="Laplace scale must be positive, got -0.5"):
            mech.laplace_noise(-0.5, 4, rng)
    assert np.all(mech.laplace_noise(0.0, 3, np.random.default_rng(0)) == 0)
