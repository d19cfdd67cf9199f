"""Differential-privacy samplers and mechanisms used by the DP prototypes (SPEC §2).

Every function takes an explicit :class:`numpy.random.Generator` ``rng``; nothing touches global
random state. The *noise* is drawn through :func:`dpfed_core.privacy.noise.sampler_for`: OpenDP's
exact samplers from OS entropy when ``rng`` is a production
:class:`~dpfed_core.privacy.noise.SecureGenerator`, reproducible NumPy noise (simulation mode, no
privacy claim) for any other generator. Each mechanism documents, next to its code and in the style of OpenDP, its

* **input domain / neighbouring relation** — what one user can change,
* **sensitivity** — how far one user can move the quantity, in the metric the noise is calibrated to,
* **privacy map** — the (ε, δ) the call costs for that sensitivity and noise scale.

Privacy unit throughout: one user (one row of one entity), unbounded DP (add or remove a user).

**A draw never escapes its charge**: every mechanism takes the entity's ledger view (``ledger``) and
the ``stage`` it belongs to, records its own row — mechanism, ε, δ, sensitivity, noise scale and,
for the Gaussian, the zCDP ρ of OpenDP's map — and only then draws. A spend the ledger refuses
(:class:`~dpfed_core.errors.BudgetExceededError`) raises before any noise exists.

``epsilon = inf`` is accepted everywhere and means the exact, non-private answer (zero noise,
argmax instead of sampling), recorded with ε = inf.

Monotone utilities. For the exponential mechanism and the one-shot Gumbel top-s, ``monotone=True``
may be passed when adding a user can only move *every* utility in the *same* direction (by at most
Δ) — e.g. a clipped loss (every loss grows) or a coordinate-wise sum of non-negative values (every
sum grows). Then the factor 2 of the general mechanism is not needed (McSherry & Talwar 2007,
Thm. 6 remark; Dwork & Roth 2014, §3.4): sampling ∝ exp(ε·u/Δ) is ε-DP. The neighbouring-dataset
tests in ``tests/test_dp_neighbours.py`` check both forms empirically.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from dpfed_core.errors import BudgetExceededError, ConfigError
from dpfed_core.privacy.noise import noise_label, sampler_for

__all__ = [
    "laplace_noise",
    "laplace_mechanism",
    "laplace_scale",
    "count_mechanism",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "gaussian_mechanism",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gumbel_top_s",
    "top_s_sequence_probability",
    "partition_keep_probability",
    "partition_keep",
    "partition_threshold",
    "partition_selection",
    "SECURE_SHARE",
]


def _check_eps(epsilon: float, what: str) -> float:
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ConfigError(f"{what}: ε must be positive (or inf for the exact answer), got {epsilon}")
    return epsilon


def _record(ledger, stage: str, mechanism: str, epsilon: float, delta: float, sensitivity: float,
            scale: float, note: str, rng: np.random.Generator, rho: float | None = None) -> None:
    """The mechanism's own ledger row, written before its noise is drawn (non-private: ε = inf)."""
    private = math.isfinite(epsilon)
    ledger.spend(stage, mechanism if private else f"{mechanism} (non-private limit: exact)", float(epsilon),
                 float(delta) if private else 0.0, float(sensitivity), float(scale), note,
                 noise_label(rng) if private else "", rho if private else None)


def _top_k_rho(k: int, beta: float, sensitivity: float, monotone: bool) -> float:
    """ρ of a Gumbel top-k draw by OpenDP's map of the measurement that samples it."""
    from dpfed_core.privacy.noise import noisy_top_k_rho

    return noisy_top_k_rho(int(k), float(beta), float(sensitivity), bool(monotone))


def _check_sensitivity(sensitivity: float, what: str) -> float:
    sensitivity = float(sensitivity)
    if not math.isfinite(sensitivity) or sensitivity < 0:
        raise ConfigError(f"{what}: sensitivity must be a finite non-negative number, got {sensitivity}")
    return sensitivity


# ---------------------------------------------------------------------------------------- Laplace
def laplace_noise(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """``size`` i.i.d. Laplace(0, b = ``scale``) draws (OpenDP's float Laplace in production);
    ``scale = 0`` gives zeros."""
    if scale == 0:
        return np.zeros(size)
    if not scale > 0:
        raise ConfigError(f"Laplace scale must be positive, got {scale}")
    return sampler_for(rng).laplace(np.zeros(size), scale)


def laplace_scale(sensitivity: float, epsilon: float, size: int) -> float:
    """Laplace scale b for ``size`` real coordinates at L1 sensitivity Δ and ε, by OpenDP's privacy
    map of its float Laplace: the input is rounded to the grid 2^k, which can move the L1 distance by
    up to size·2^k, so b = (Δ + size·2^k)/ε, rounded up until OpenDP's map(Δ) ≤ ε."""
    from dpfed_core.privacy.noise import laplace_float_epsilon

    if math.isinf(epsilon) or sensitivity == 0:
        return 0.0
    b = sensitivity / epsilon
    for _ in range(4):
        eps_map = laplace_float_epsilon(b, sensitivity, max(int(size), 1))
        if eps_map <= epsilon:
            return b
        b *= (eps_map / epsilon) * (1 + 1e-12)
    raise AssertionError(f"Laplace calibration did not converge (Δ={sensitivity}, ε={epsilon})")


def laplace_mechanism(values, sensitivity: float, epsilon: float, rng: np.random.Generator, *,
                      ledger, stage: str, note: str = "") -> tuple[np.ndarray, float]:
    """Release ``values + Lap(b)`` coordinate-wise, real-valued.

    * Neighbouring relation: one user added or removed.
    * Sensitivity: ``sensitivity`` = Δ₁, the largest L1 distance one user can move ``values``.
    * Sampler: OpenDP ``make_laplace`` on a float vector domain of known size (exact, OS entropy;
      the input is rounded to the grid 2^-40 and discrete Laplace noise is added in grid units).
    * Privacy map: OpenDP's, ε = (Δ₁ + size·2^k)/b; b from :func:`laplace_scale`, so the release is
      ε-DP (δ = 0). ``epsilon = inf`` → no noise.

    Returns (noisy values, noise scale b).
    """
    epsilon = _check_eps(epsilon, "Laplace mechanism")
    sensitivity = _check_sensitivity(sensitivity, "Laplace mechanism")
    values = np.asarray(values, dtype=np.float64)
    scale = laplace_scale(sensitivity, epsilon, values.size)
    _record(ledger, stage, "Laplace (OpenDP float)", epsilon, 0.0, sensitivity, scale, note, rng)
    if scale == 0:
        return values.copy(), 0.0
    return sampler_for(rng).laplace(values, scale), scale


def count_mechanism(counts, sensitivity: int, epsilon: float, rng: np.random.Generator, *,
                    ledger, stage: str, note: str = "") -> tuple[np.ndarray, float]:
    """Release integer ``counts + Z`` with Z discrete Laplace, P(Z = z) ∝ exp(−|z|/b), b = Δ/ε.

    * Neighbouring relation: one user added or removed.
    * Sensitivity: ``sensitivity`` = Δ₁ (an integer; 1 for a user count, or for disjoint counts of
      which one user is in exactly one).
    * Sampler: OpenDP ``make_laplace`` on an integer vector domain (discrete Laplace, exact, OS
      entropy; Canonne, Kamath & Steinke 2020). Output stays an integer, so no floating-point
      artefact can reveal the true count (Mironov 2012).
    * Privacy map: ε = Δ₁/b (pure ε-DP). ``epsilon = inf`` → the exact counts.

    Returns (noisy counts as int64, noise scale b).
    """
    epsilon = _check_eps(epsilon, "count mechanism")
    sensitivity = _check_sensitivity(sensitivity, "count mechanism")
    c = np.rint(np.asarray(counts, dtype=np.float64)).astype(np.int64)
    scale = 0.0 if math.isinf(epsilon) or sensitivity == 0 else sensitivity / epsilon
    _record(ledger, stage, "discrete Laplace", epsilon, 0.0, sensitivity, scale, note, rng)
    if scale == 0:
        return c, 0.0
    return sampler_for(rng).discrete_laplace(c, scale), scale


# --------------------------------------------------------------------------------------- Gaussian
def _gauss_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """δ achieved by N(0, σ²) noise at ε for L2 sensitivity Δ (Balle & Wang 2018, Thm. 8):
    δ = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ), computed in log space for large ε."""
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    from scipy import special  # deferred: scipy.special costs ~50 ms at start-up

    first = special.ndtr(a - b)
    second = math.exp(epsilon + special.log_ndtr(-a - b)) if epsilon < 700 else 0.0
    return float(first - second)


def _check_delta(delta: float) -> None:
    if not 0 < delta < 1:
        raise ConfigError(f"the Gaussian mechanism needs 0 < δ < 1, got δ={delta}", param="delta")


@functools.lru_cache(maxsize=4096)
def gaussian_sigma_analytic(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ for which N(0, σ²) noise is (ε, δ)-DP at L2 sensitivity Δ — the *analytic*
    Gaussian mechanism (Balle & Wang 2018), exact up to the root finder's 1e-12 relative tolerance;
    valid for every ε > 0 (unlike the classic bound, which needs ε < 1). σ is rounded *up* by the
    tolerance so the guarantee holds."""
    from scipy.optimize import brentq

    epsilon = _check_eps(epsilon, "Gaussian mechanism")
    sensitivity = _check_sensitivity(sensitivity, "Gaussian mechanism")
    _check_delta(delta)
    if math.isinf(epsilon) or sensitivity == 0:
        return 0.0
    f = lambda log_s: _gauss_delta(math.exp(log_s), epsilon, sensitivity) - delta  # noqa: E731
    lo, hi = math.log(sensitivity) - 30, math.log(sensitivity) + 30
    log_sigma = brentq(f, lo, hi, xtol=1e-13, rtol=1e-12)
    return math.exp(log_sigma) * (1 + 1e-9)


def gaussian_sigma_classic(epsilon: float, delta: float, sensitivity: float) -> float:
    """Classic calibration σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm. A.1; valid for ε < 1).
    Kept for comparison only; :func:`gaussian_mechanism` uses the analytic calibration."""
    epsilon = _check_eps(epsilon, "Gaussian mechanism")
    _check_delta(delta)
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


@functools.lru_cache(maxsize=4096)
def gaussian_sigma(epsilon: float, delta: float, sensitivity: float, size: int = 1) -> float:
    """σ of :func:`gaussian_mechanism` for ``size`` coordinates: the smallest σ at which OpenDP's
    float Gaussian is (ε, δ)-DP at L2 sensitivity Δ *by OpenDP's own privacy map* — its zCDP
    ρ = Δ'²/2σ² (Δ' the sensitivity plus the rounding to the grid) converted to (ε, δ) by OpenDP's
    optimal zCDP → approximate-DP conversion: ρ* is the largest ρ whose conversion is (ε, δ), and
    σ = Δ'/√(2ρ*), rounded up. 3–9 % above :func:`gaussian_sigma_analytic` (the continuous
    mechanism's exact curve), the price of a proof that covers the sampler actually used."""
    from dpfed_core.privacy.noise import gaussian_float_sigma_for_rho, zcdp_rho_for_epsilon

    epsilon = _check_eps(epsilon, "Gaussian mechanism")
    sensitivity = _check_sensitivity(sensitivity, "Gaussian mechanism")
    _check_delta(delta)
    if math.isinf(epsilon) or sensitivity == 0:
        return 0.0
    return gaussian_float_sigma_for_rho(zcdp_rho_for_epsilon(float(epsilon), float(delta)), float(sensitivity),
                                        max(int(size), 1))


#: The mechanism name of every share of a secure sum on its ledger row (a release may add its own
#: qualifier after it): what reads the ledger finds the shares by this prefix.
SECURE_SHARE = "Gaussian share of a secure sum"


def gaussian_mechanism(values, sensitivity: float, epsilon: float, delta: float,
                       rng: np.random.Generator, *, ledger, stage: str, note: str = "",
                       sigma: float | None = None, divisor: float = 1.0,
                       mechanism: str = "Gaussian (OpenDP map)") -> tuple[np.ndarray, float]:
    """Release ``values + N(0, σ²I)`` with σ from :func:`gaussian_sigma` (or the given ``sigma``,
    calibrated by the caller for (ε, δ) — e.g. one of several jointly calibrated releases).

    * Neighbouring relation: one user added or removed.
    * Sensitivity: ``sensitivity`` = Δ₂, the largest L2 distance one user can move ``values``
      (for a sum of rows clipped to ℓ2 norm ≤ Λ, Δ₂ = Λ).
    * Sampler: OpenDP ``make_gaussian`` on a float vector domain of known size (discrete Gaussian on
      the grid 2^-40, exact, OS entropy).
    * Privacy map: OpenDP's zCDP map (ρ, recorded on the ledger row so that Gaussian releases
      compose by adding ρ) converted to (ε, δ) (see :func:`gaussian_sigma`). ``epsilon = inf`` → no noise.
    * ``divisor``: secure aggregation — this entity adds σ/divisor, the sum of the shares carries σ;
      the row charges the sum's σ (the guarantee against the server).
    * ``rng`` carrying a :class:`~dpfed_core.privacy.noise.SumNoise` (a process forming the sum
      itself): the row is charged the same; the values join the sum's running total and the last share
      gets the sum with its one draw, every other share zeros.

    Returns (noisy values, σ).
    """
    from dpfed_core.privacy.noise import gaussian_float_rho

    values = np.asarray(values, dtype=np.float64)
    if math.isinf(float(epsilon)):
        _record(ledger, stage, mechanism, math.inf, 0.0, sensitivity, 0.0, note, rng)
        return values.copy(), 0.0
    if sigma is None:
        sigma = gaussian_sigma(epsilon, delta, sensitivity, values.size)
    rho = gaussian_float_rho(float(sigma), float(sensitivity), max(values.size, 1)) if sigma > 0 else math.inf
    _record(ledger, stage, mechanism, epsilon, delta, sensitivity, sigma, note, rng, rho)
    pooled = getattr(rng, "sum_noise", None)
    if pooled is not None:
        return pooled.gaussian(rng, sampler_for(rng), values, sigma / divisor), sigma
    return sampler_for(rng).gaussian(values, sigma / divisor), sigma


# ------------------------------------------------------------------------- exponential mechanism
def _em_scale(sensitivity: float, epsilon: float, monotone: bool) -> float:
    """Gumbel scale β so that argmax(u + Gumbel(β)) is the exponential mechanism at ε:
    β = 2Δ/ε in general, Δ/ε for monotone utilities."""
    return (1.0 if monotone else 2.0) * sensitivity / epsilon


def exponential_mechanism(utilities, sensitivity: float, epsilon: float, rng: np.random.Generator,
                          monotone: bool = False, *, ledger, stage: str, note: str = "") -> int:
    """Index r chosen with probability ∝ exp(ε·u_r / (2Δ)) (∝ exp(ε·u_r/Δ) if ``monotone``).

    Sampled with the Gumbel-max trick — argmax_r(u_r + Gumbel(β)) — so no exponential of a large
    number is ever formed; in production by OpenDP ``make_noisy_max`` with Gumbel noise (its
    zero-concentrated measure; exact, OS entropy). Entries equal to −inf are never chosen.

    * Neighbouring relation: one user added or removed.
    * Sensitivity: Δ = max over r of |u_r(D) − u_r(D')|. ``monotone``: additionally every u_r moves
      in the same direction under any one neighbouring change.
    * Privacy map: ε-DP (δ = 0), McSherry & Talwar 2007 (OpenDP states the same mechanism as
      ρ = ε²/8-zCDP, Cesar & Rogers 2021; a unit test checks the two maps agree).
      ``epsilon = inf`` → exact argmax (ties broken at random).
    """
    u = np.asarray(utilities, dtype=np.float64).ravel()
    epsilon = _check_eps(epsilon, "exponential mechanism")
    sensitivity = _check_sensitivity(sensitivity, "exponential mechanism")
    if not np.any(np.isfinite(u)):
        raise ValueError("exponential mechanism: no finite utility to choose from")
    exact = math.isinf(epsilon) or sensitivity == 0
    beta = 0.0 if exact else _em_scale(sensitivity, epsilon, monotone)
    _record(ledger, stage, "exponential mechanism (Gumbel-max" + (", monotone)" if monotone else ")"), epsilon,
            0.0, sensitivity, beta, note, rng, None if exact else _top_k_rho(1, beta, sensitivity, monotone))
    if exact:
        best = np.flatnonzero(u == u.max())
        return int(best[rng.integers(best.size)])  # ties at random (data-independent choice)
    return sampler_for(rng).noisy_max(u, beta)


def exponential_mechanism_probabilities(utilities, sensitivity: float, epsilon: float,
                                        monotone: bool = False) -> np.ndarray:
    """Exact output distribution of :func:`exponential_mechanism` (log-sum-exp normalised)."""
    u = np.asarray(utilities, dtype=np.float64).ravel()
    logits = u / _em_scale(sensitivity, epsilon, monotone)
    return np.exp(logits - _logsumexp(logits))


def gumbel_top_s(utilities, s: int, sensitivity: float, epsilon: float, rng: np.random.Generator,
                 monotone: bool = False, *, ledger, stage: str, note: str = "") -> np.ndarray:
    """One-shot top-s: the s largest of u + Gumbel(β), in decreasing order of the noisy value.

    Works row-wise on a 2-D array (one independent selection per row; returns shape (rows, s)).
    In production sampled by OpenDP ``make_noisy_top_k`` with Gumbel noise (exact, OS entropy).
    Equivalent in distribution to s *peeled* exponential mechanisms, each at ε/s (Durfee & Rogers
    2019, Lemma 4.2), so the scale is β = 2·s·Δ/ε (s·Δ/ε if ``monotone``).

    * Neighbouring relation: one user added or removed.
    * Sensitivity: Δ = per-coordinate sensitivity (Δ∞): the most one user moves any single u_r.
    * Privacy map: s peeled ε/s-DP mechanisms → ε-DP by basic composition (δ = 0).
      ``epsilon = inf`` → exact top-s.
    """
    u = np.asarray(utilities, dtype=np.float64)
    epsilon = _check_eps(epsilon, "Gumbel top-s")
    sensitivity = _check_sensitivity(sensitivity, "Gumbel top-s")
    one_d = u.ndim == 1
    u2 = u[None, :] if one_d else u
    m = u2.shape[1]
    if not 1 <= s <= m:
        raise ConfigError(f"top-s needs 1 ≤ s ≤ {m}, got s={s}")
    exact = math.isinf(epsilon) or sensitivity == 0
    beta = 0.0 if exact else s * _em_scale(sensitivity, epsilon, monotone)
    _record(ledger, stage, "Gumbel top-s (one-shot)", epsilon, 0.0, sensitivity, beta, note, rng,
            None if exact else _top_k_rho(s, beta, sensitivity, monotone))
    if exact:
        # tiny jitter breaks ties at random without changing any strict order (non-private limit)
        noisy = u2 + rng.random(u2.shape) * 1e-12 * (1 + np.abs(u2))
        part = np.argpartition(-noisy, s - 1, axis=1)[:, :s]
        order = np.argsort(-np.take_along_axis(noisy, part, axis=1), axis=1)
        out = np.take_along_axis(part, order, axis=1)
    else:
        out = sampler_for(rng).noisy_top_k(u2, s, beta)
    return out[0] if one_d else out


def top_s_sequence_probability(utilities, sequence, sensitivity: float, epsilon: float,
                               monotone: bool = False) -> float:
    """Exact probability that :func:`gumbel_top_s` returns the ordered ``sequence``: the product of
    peeled exponential-mechanism probabilities (each at ε/s) over the remaining items."""
    u = np.asarray(utilities, dtype=np.float64).ravel()
    s = len(sequence)
    logits = u / (s * _em_scale(sensitivity, epsilon, monotone))
    alive = np.ones(u.size, dtype=bool)
    logp = 0.0
    for r in sequence:
        logp += logits[r] - _logsumexp(logits[alive])
        alive[r] = False
    return float(math.exp(logp))


# ------------------------------------------------------------------------------- private partition
def partition_keep_probability(counts, eps_level: float, gamma: float) -> np.ndarray:
    """Probability that :func:`partition_keep` keeps a cube holding c users: P(c + Z ≥ γ) with Z
    discrete Laplace of scale 1/ε' (q = e^{−ε'}): q^{γ−c}/(1+q) if c < γ, else 1 − q^{c−γ+1}/(1+q).
    The discrete twin of the paper's f(c) = ½·exp(−ε'(γ − c)) (Balcan et al. 2017, Alg. 4), which
    is P(c + Lap(1/ε') > γ) for the continuous Laplace. Vectorised over ``counts``; γ an integer.

    * Neighbouring relation: one user added or removed changes one cube count per level by 1.
    * Sensitivity: 1 (a count).
    * Privacy map: a discrete-Laplace count compared with a public threshold is ε'-DP for every
      cube that exists in both datasets (post-processing of an ε'-DP count); a cube that exists
      only because of the added user (c = 1 vs absent) is kept with probability f(1), charged to δ.
      ``eps_level = inf`` keeps exactly the cubes with c ≥ γ.
    """
    c = np.asarray(counts, dtype=np.float64)
    if math.isinf(eps_level):
        return (c >= gamma).astype(np.float64)
    q = math.exp(-eps_level)
    j = gamma - c  # keep iff Z ≥ j
    return np.where(j >= 1, q ** np.maximum(j, 0) / (1 + q), 1 - q ** np.maximum(1 - j, 0) / (1 + q))


def partition_keep(counts, eps_level: float, gamma: float, rng: np.random.Generator, *,
                   ledger, stage: str, note: str = "") -> np.ndarray:
    """Keep/drop decision of each cube: noisy count c + Z ≥ γ, Z discrete Laplace(1/ε') (OpenDP in
    production). Returns booleans; the keep probability is :func:`partition_keep_probability`.
    Recorded as one level test: (ε', δ₁) with δ₁ = f(1), the chance a cube only the added user
    creates is kept (computed from ε' and γ, so a wrong γ shows up as a larger δ)."""
    c = np.asarray(counts, dtype=np.int64)
    if math.isinf(eps_level):
        _record(ledger, stage, "private partition test", math.inf, 0.0, 1.0, 0.0, note, rng)
        return c >= gamma
    delta_test = float(partition_keep_probability(np.ones(1), eps_level, gamma)[0])
    _record(ledger, stage, "private partition test (discrete Laplace ≥ γ)", eps_level, delta_test, 1.0,
            1.0 / eps_level, note, rng)
    return sampler_for(rng).discrete_laplace(c, 1.0 / eps_level) >= gamma


def partition_selection(counts, sensitivity: int, epsilon: float, delta: float, threshold: float,
                        rng: np.random.Generator, *, ledger, stage: str, note: str = "") -> np.ndarray:
    """Which keys to release: those whose count + discrete Laplace(Δ/ε) ≥ ``threshold``.

    * Neighbouring relation: one user added or removed; a user touches at most Δ keys, each by at
      most 1 (the caller's per-user contribution bound).
    * Sampler and privacy map: OpenDP's ``make_laplace_threshold`` on a map of integer counts under
      the (ℓ0, ℓ1, ℓ∞) = (Δ, Δ, 1) distance — the same measurement draws the noise in production and
      states the (ε, δ) recorded on the ledger row. The caller's ``epsilon`` sets the noise scale
      and its ``threshold`` the δ (:func:`~dpfed_core.privacy.catalogue.selection_threshold`); a row
      whose map passes the caller's (ε, δ) — a threshold too low for that δ — is refused
      (:class:`~dpfed_core.errors.BudgetExceededError`) before anything is recorded or drawn, and the
      ledger refuses one that would pass the run's composed budget. In simulation the same
      distribution is drawn by NumPy.

    Returns a boolean keep mask over ``counts`` (only keys with a positive count are ever passed).
    """
    from dpfed_core.privacy.noise import SecureGenerator, laplace_threshold

    epsilon = _check_eps(epsilon, "partition selection")
    c = np.rint(np.asarray(counts, dtype=np.float64)).astype(np.int64)
    if math.isinf(epsilon):
        _record(ledger, stage, "partition selection", math.inf, 0.0, sensitivity, 0.0, note, rng)
        return c >= threshold
    scale = sensitivity / epsilon
    meas = laplace_threshold(float(scale), int(threshold))
    eps_map, delta_map = meas.map((int(sensitivity), int(sensitivity), 1))
    if float(eps_map) > epsilon * (1 + 1e-9) or float(delta_map) > float(delta) * (1 + 1e-9):
        # the privacy map, not the caller's arithmetic, decides: a threshold too low for the δ (or a Δ
        # beyond the scale's) would release more than the caller was given; refused before any draw
        raise BudgetExceededError(
            f"partition selection ({stage}): Δ = {int(sensitivity)}, threshold {int(threshold)} at scale "
            f"{scale:.4g} costs (ε, δ) = ({float(eps_map):.4g}, {float(delta_map):.3g}) by OpenDP's privacy map, "
            f"beyond the ({epsilon:.4g}, {float(delta):.3g}) it was given; nothing drawn")
    _record(ledger, stage, "partition selection (OpenDP Laplace threshold)", float(eps_map), float(delta_map),
            sensitivity, scale, note, rng)
    if isinstance(rng, SecureGenerator):
        kept = meas({i: int(v) for i, v in enumerate(c.tolist())})
        keep = np.zeros(c.size, dtype=bool)
        keep[np.fromiter(kept.keys(), dtype=np.int64, count=len(kept))] = True
        return keep
    return sampler_for(rng).discrete_laplace(c, scale) >= threshold


def partition_threshold(eps_level: float, delta_per_test: float) -> float:
    """The smallest integer γ ≥ 2 with f(1) = P(1 + Z ≥ γ) = q^{γ−1}/(1+q) ≤ ``delta_per_test``
    (q = e^{−ε'}): γ = 1 + ⌈ln(1/(δ₁(1+q)))/ε'⌉. f(1) is the δ one level test costs."""
    if not 0 < delta_per_test < 0.5:
        raise ConfigError(f"private partition: δ per level must be in (0, 0.5), got {delta_per_test}")
    q = math.exp(-eps_level)
    gamma = 1 + max(1, math.ceil(math.log(1.0 / (delta_per_test * (1 + q))) / eps_level - 1e-12))
    while q ** (gamma - 1) / (1 + q) > delta_per_test:  # guard the ceil against rounding
        gamma += 1
    return float(gamma)


def _logsumexp(x: np.ndarray) -> float:
    """log Σ exp(x), stable (the maximum is factored out); scipy.special.logsumexp without the import."""
    x = np.asarray(x, dtype=float)
    m = float(np.max(x)) if x.size else -math.inf
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.exp(x - m).sum()))
