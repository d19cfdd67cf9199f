"""Differential-privacy samplers and mechanisms used by the DP prototypes (SPEC §2).

Every function takes an explicit :class:`numpy.random.Generator`; nothing touches global random
state. Each mechanism documents, next to its code and in the style of OpenDP, its

* **input domain / neighbouring relation** — what one user can change,
* **sensitivity** — how far one user can move the quantity, in the metric the noise is calibrated to,
* **privacy map** — the (ε, δ) the call costs for that sensitivity and noise scale.

Privacy unit throughout: one user (one row of one entity), unbounded DP (add or remove a user).

``epsilon = inf`` is accepted everywhere and means the exact, non-private answer (zero noise,
argmax instead of sampling). The caller records such a call in the ledger with ε = inf.

Monotone utilities. For the exponential mechanism and the one-shot Gumbel top-s, ``monotone=True``
may be passed when adding a user can only move *every* utility in the *same* direction (by at most
Δ) — e.g. a clipped loss (every loss grows) or a coordinate-wise sum of non-negative values (every
sum grows). Then the factor 2 of the general mechanism is not needed (McSherry & Talwar 2007,
Thm. 6 remark; Dwork & Roth 2014, §3.4): sampling ∝ exp(ε·u/Δ) is ε-DP. The neighbouring-dataset
tests in ``tests/test_dp_neighbours.py`` check both forms empirically.
"""
from __future__ import annotations

import math

import numpy as np

from dpfed_core.errors import ConfigError

__all__ = [
    "laplace_noise",
    "laplace_mechanism",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "gaussian_mechanism",
    "gumbel_noise",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gumbel_top_s",
    "top_s_sequence_probability",
    "partition_keep_probability",
    "partition_threshold",
]


def _check_eps(epsilon: float, what: str) -> float:
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ConfigError(f"{what}: ε must be positive (or inf for the exact answer), got {epsilon}")
    return epsilon


def _check_sensitivity(sensitivity: float, what: str) -> float:
    sensitivity = float(sensitivity)
    if not math.isfinite(sensitivity) or sensitivity < 0:
        raise ConfigError(f"{what}: sensitivity must be a finite non-negative number, got {sensitivity}")
    return sensitivity


# ---------------------------------------------------------------------------------------- Laplace
def laplace_noise(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """i.i.d. Laplace(0, b = ``scale``) samples; ``scale = 0`` gives zeros.

    Sampler: NumPy's inverse-CDF Laplace (PCG64 doubles). Not hardened against floating-point
    attacks (Mironov 2012); fine for a research tool, stated in the dashboard.
    """
    if scale == 0:
        return np.zeros(size)
    if not scale > 0:
        raise ConfigError(f"Laplace scale must be positive, got {scale}")
    return rng.laplace(0.0, scale, size=size)


def laplace_mechanism(values, sensitivity: float, epsilon: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Release ``values + Lap(Δ₁/ε)`` coordinate-wise.

    * Neighbouring relation: one user added or removed.
    * Sensitivity: ``sensitivity`` = Δ₁, the largest L1 distance one user can move ``values``.
    * Privacy map: Δ₁ / b = ε, δ = 0 (pure ε-DP). ``epsilon = inf`` → no noise.

    Returns (noisy values, noise scale b).
    """
    epsilon = _check_eps(epsilon, "Laplace mechanism")
    sensitivity = _check_sensitivity(sensitivity, "Laplace mechanism")
    values = np.asarray(values, dtype=np.float64)
    scale = 0.0 if math.isinf(epsilon) else sensitivity / epsilon
    return values + laplace_noise(scale, values.shape, rng), scale


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


def gaussian_sigma_analytic(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ for which N(0, σ²) noise is (ε, δ)-DP at L2 sensitivity Δ — the *analytic*
    Gaussian mechanism (Balle & Wang 2018), exact up to the root finder's 1e-12 relative tolerance;
    valid for every ε > 0 (unlike the classic bound, which needs ε < 1). σ is rounded *up* by the
    tolerance so the guarantee holds."""
    from scipy.optimize import brentq

    epsilon = _check_eps(epsilon, "Gaussian mechanism")
    sensitivity = _check_sensitivity(sensitivity, "Gaussian mechanism")
    if not 0 < delta < 1:
        raise ConfigError(f"the Gaussian mechanism needs 0 < δ < 1, got δ={delta}")
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
    if not 0 < delta < 1:
        raise ConfigError(f"the Gaussian mechanism needs 0 < δ < 1, got δ={delta}")
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def gaussian_mechanism(values, sensitivity: float, epsilon: float, delta: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Release ``values + N(0, σ²I)`` with σ from :func:`gaussian_sigma_analytic`.

    * Neighbouring relation: one user added or removed.
    * Sensitivity: ``sensitivity`` = Δ₂, the largest L2 distance one user can move ``values``
      (for a sum of rows clipped to ℓ2 norm ≤ Λ, Δ₂ = Λ).
    * Privacy map: (ε, δ)-DP by the analytic Gaussian calibration. ``epsilon = inf`` → no noise.

    Returns (noisy values, σ).
    """
    values = np.asarray(values, dtype=np.float64)
    if math.isinf(float(epsilon)):
        return values.copy(), 0.0
    sigma = gaussian_sigma_analytic(epsilon, delta, sensitivity)
    return values + sigma * rng.standard_normal(values.shape), sigma


# ------------------------------------------------------------------------- exponential mechanism
def gumbel_noise(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """i.i.d. standard Gumbel(0, β = ``scale``) samples (max-type: CDF exp(−exp(−x/β)))."""
    return scale * rng.gumbel(0.0, 1.0, size=size)


def _em_scale(sensitivity: float, epsilon: float, monotone: bool) -> float:
    """Gumbel scale β so that argmax(u + Gumbel(β)) is the exponential mechanism at ε:
    β = 2Δ/ε in general, Δ/ε for monotone utilities."""
    return (1.0 if monotone else 2.0) * sensitivity / epsilon


def exponential_mechanism(utilities, sensitivity: float, epsilon: float, rng: np.random.Generator,
                          monotone: bool = False) -> int:
    """Index r chosen with probability ∝ exp(ε·u_r / (2Δ)) (∝ exp(ε·u_r/Δ) if ``monotone``).

    Sampled with the Gumbel-max trick — argmax_r(u_r + Gumbel(β)) — so no exponential of a large
    number is ever formed. Entries equal to −inf are never chosen.

    * Neighbouring relation: one user added or removed.
    * Sensitivity: Δ = max over r of |u_r(D) − u_r(D')|. ``monotone``: additionally every u_r moves
      in the same direction under any one neighbouring change.
    * Privacy map: ε-DP (δ = 0). ``epsilon = inf`` → exact argmax (ties broken at random).
    """
    u = np.asarray(utilities, dtype=np.float64).ravel()
    epsilon = _check_eps(epsilon, "exponential mechanism")
    sensitivity = _check_sensitivity(sensitivity, "exponential mechanism")
    if not np.any(np.isfinite(u)):
        raise ValueError("exponential mechanism: no finite utility to choose from")
    if math.isinf(epsilon) or sensitivity == 0:
        best = np.flatnonzero(u == u.max())
        return int(best[rng.integers(best.size)])
    beta = _em_scale(sensitivity, epsilon, monotone)
    return int(np.argmax(u + gumbel_noise(beta, u.shape, rng)))


def exponential_mechanism_probabilities(utilities, sensitivity: float, epsilon: float,
                                        monotone: bool = False) -> np.ndarray:
    """Exact output distribution of :func:`exponential_mechanism` (log-sum-exp normalised)."""
    u = np.asarray(utilities, dtype=np.float64).ravel()
    logits = u / _em_scale(sensitivity, epsilon, monotone)
    return np.exp(logits - _logsumexp(logits))


def gumbel_top_s(utilities, s: int, sensitivity: float, epsilon: float, rng: np.random.Generator,
                 monotone: bool = False) -> np.ndarray:
    """One-shot top-s: the s largest of u + Gumbel(β), in decreasing order of the noisy value.

    Works row-wise on a 2-D array (one independent selection per row; returns shape (rows, s)).
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
    if math.isinf(epsilon) or sensitivity == 0:
        # tiny jitter breaks ties at random without changing any strict order
        noisy = u2 + rng.random(u2.shape) * 1e-12 * (1 + np.abs(u2))
    else:
        beta = s * _em_scale(sensitivity, epsilon, monotone)
        noisy = u2 + gumbel_noise(beta, u2.shape, rng)
    part = np.argpartition(-noisy, s - 1, axis=1)[:, :s]
    order = np.argsort(-np.take_along_axis(noisy, part, axis=1), axis=1)
    out = np.take_along_axis(part, order, axis=1)
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
    """f(c) of the private partition (Balcan et al. 2017, Alg. 4 of the paper's appendix):
    ½·exp(−ε'(γ − c)) for c ≤ γ, else 1 − ½·exp(−ε'(c − γ)). Vectorised over ``counts``.

    * Neighbouring relation: one user added or removed changes one cube count per level by 1.
    * Sensitivity: 1 (a count).
    * Privacy map: f(c+1)/f(c) ≤ e^ε' and (1−f(c))/(1−f(c+1)) ≤ e^ε', so each level's keep/drop
      decisions are ε'-DP for cubes that exist in both datasets; a cube that exists only because of
      the added user (c = 1 vs absent) is kept with probability f(1), which is charged to δ.
      ``eps_level = inf`` keeps exactly the cubes with c ≥ γ.
    """
    c = np.asarray(counts, dtype=np.float64)
    if math.isinf(eps_level):
        return (c >= gamma).astype(np.float64)
    z = eps_level * (c - gamma)
    return np.where(z <= 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))


def partition_threshold(eps_level: float, delta_per_test: float) -> float:
    """The γ that makes f(1) = ½·exp(−ε'(γ−1)) equal ``delta_per_test``: γ = 1 + ln(1/(2δ₁))/ε'."""
    if not 0 < delta_per_test < 0.5:
        raise ConfigError(f"private partition: δ per level must be in (0, 0.5), got {delta_per_test}")
    return 1.0 + math.log(1.0 / (2.0 * delta_per_test)) / eps_level


def _logsumexp(x: np.ndarray) -> float:
    """log Σ exp(x), stable (the maximum is factored out); scipy.special.logsumexp without the import."""
    x = np.asarray(x, dtype=float)
    m = float(np.max(x)) if x.size else -math.inf
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.exp(x - m).sum()))
