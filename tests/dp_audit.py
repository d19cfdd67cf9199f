"""A reusable empirical privacy audit (SPEC §3): estimate a lower bound on ε from a mechanism's
outputs on two neighbouring datasets.

For an event E, (ε, δ)-DP requires P_D(E) ≤ e^ε·P_D'(E) + δ in both directions, so
ε ≥ ln((P_D(E) − δ) / P_D'(E)). We estimate both probabilities from independent runs and use
Clopper–Pearson bounds (the lower bound of the numerator, the upper bound of the denominator), with
a Bonferroni correction over all events, so the returned value is a lower bound on the true ε with
probability ≥ 1 − ``alpha``. A correct mechanism therefore stays under its claimed ε except with
probability ``alpha`` (1e-6 by default: with fixed seeds the result is deterministic anyway), and a
broken one whose real privacy loss is clearly above the claim is flagged.

Events are half-lines {T > t} and {T ≤ t} of scalar statistics T of the output, with thresholds t
taken from quantiles of a separate *calibration* batch of runs, so the event choice does not
depend on the samples used for estimation. The canary tests (``test_dp_canaries.py``) call the very
same functions on deliberately broken mechanisms and assert that they *are* flagged.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
from scipy import stats

QUANTILES = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999)


def clopper_pearson(successes: np.ndarray, trials: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided (1 − alpha) Clopper–Pearson interval for each count in ``successes``."""
    x = np.asarray(successes, dtype=float)
    lo = np.where(x > 0, stats.beta.ppf(alpha / 2, x, trials - x + 1), 0.0)
    hi = np.where(x < trials, stats.beta.ppf(1 - alpha / 2, x + 1, trials - x), 1.0)
    return np.nan_to_num(lo), np.nan_to_num(hi, nan=1.0)


def epsilon_lower_bound(events_a: np.ndarray, events_b: np.ndarray, delta: float = 0.0,
                        alpha: float = 1e-6) -> float:
    """Lower bound on ε from boolean event indicators.

    events_a, events_b : (runs, n_events) booleans — which events occurred in each run on D and D'.
    Returns max over events and both directions of ln((lo(P) − δ) / hi(Q)), floored at 0.
    """
    n_a, n_ev = events_a.shape
    n_b = events_b.shape[0]
    a_lo, a_hi = clopper_pearson(events_a.sum(0), n_a, alpha / (2 * n_ev))
    b_lo, b_hi = clopper_pearson(events_b.sum(0), n_b, alpha / (2 * n_ev))
    with np.errstate(divide="ignore", invalid="ignore"):
        ab = np.log(np.maximum(a_lo - delta, 0) / b_hi)
        ba = np.log(np.maximum(b_lo - delta, 0) / a_hi)
    best = np.nanmax(np.concatenate([ab, ba, [0.0]]))
    return float(best) if np.isfinite(best) else math.inf


def threshold_events(stats_cal: np.ndarray, quantiles: Sequence[float] = QUANTILES):
    """Events {T_j > t} for thresholds at calibration quantiles of each statistic T_j.

    stats_cal : (runs, n_stats). Returns a function mapping (runs, n_stats) statistics to
    (runs, n_events) booleans (complements are covered by testing both directions)."""
    thr = np.quantile(stats_cal, quantiles, axis=0)  # (n_q, n_stats)

    def events(stat: np.ndarray) -> np.ndarray:
        stat = np.asarray(stat, dtype=float)
        return (stat[:, None, :] > thr[None, :, :]).reshape(stat.shape[0], -1)

    return events


def audit_statistics(sample_a: Callable[[int, np.random.Generator], np.ndarray],
                     sample_b: Callable[[int, np.random.Generator], np.ndarray],
                     runs: int, seed: int, delta: float = 0.0, alpha: float = 1e-6,
                     calibration: float = 0.2, extra_events: Callable | None = None) -> float:
    """Audit a mechanism given samplers of output statistics on D (``sample_a``) and D' (``sample_b``).

    sample_x(runs, rng) -> (runs, n_stats) array of scalar statistics of independent outputs.
    A fraction ``calibration`` of the runs on each side sets the thresholds; the rest estimate.
    ``extra_events`` (optional) maps statistics to more boolean events (e.g. exact outcomes).
    Returns the ε lower bound.
    """
    rng = np.random.default_rng(seed)
    n_cal = int(runs * calibration)
    cal = np.vstack([sample_a(n_cal, rng), sample_b(n_cal, rng)])
    ev = threshold_events(cal)
    sa, sb = sample_a(runs - n_cal, rng), sample_b(runs - n_cal, rng)
    ea, eb = ev(sa), ev(sb)
    if extra_events is not None:
        ea = np.hstack([ea, extra_events(sa)])
        eb = np.hstack([eb, extra_events(sb)])
    return epsilon_lower_bound(ea, eb, delta, alpha)


def audit_outcomes(out_a: np.ndarray, out_b: np.ndarray, delta: float = 0.0, alpha: float = 1e-6) -> float:
    """Audit a mechanism with a finite output set: events {output == o} for each observed o.
    out_a, out_b : (runs,) integer (or hashable-coded) outputs on D and D'."""
    outcomes = np.union1d(out_a, out_b)
    ea = out_a[:, None] == outcomes[None, :]
    eb = out_b[:, None] == outcomes[None, :]
    return epsilon_lower_bound(ea, eb, delta, alpha)


# ----------------------------------------------------------------- audits of dpfed's mechanisms
# Each returns the ε lower bound(s); the real tests assert they stay under the claim, the canary
# tests call the same functions on broken mechanisms and assert they exceed it.

def scratch():
    """A fresh unbounded ledger view for an audit's thousands of releases: the production mechanisms
    charge it as they charge a run's ledger; the audit only needs their outputs."""
    from dpfed_core.privacy.ledger import PrivacyLedger

    return PrivacyLedger(math.inf).for_entity("audit")


def audit_laplace_count(laplace_fn, epsilon: float, runs: int = 40000, seed: int = 0) -> float:
    """A count released with ``laplace_fn(values, sensitivity=1, epsilon, rng)``; D has 5 users,
    D' one more. Vectorised: one call draws all runs."""
    def sampler(count):
        return lambda r, g: laplace_fn(np.full(r, float(count)), 1.0, epsilon, g, ledger=scratch(),
                                       stage="audit")[0][:, None]
    return audit_statistics(sampler(5), sampler(6), runs, seed)


def audit_exponential_mechanism(em_fn, epsilon: float, sensitivity: float = 1.0, runs: int = 30000,
                                seed: int = 0, monotone: bool = True) -> float:
    """EM over 4 outcomes; D' adds a user who raises the *loss* of outcome 0 by the full
    sensitivity and leaves the others (the worst case of a monotone clipped loss) or, for a
    general (``monotone=False``) utility, also lowers the others' losses by the full sensitivity
    (the case that needs the factor 2)."""
    loss_a = np.array([0.0, 0.5, 1.0, 2.0]) * sensitivity
    shift = [1.0, 0.0, 0.0, 0.0] if monotone else [1.0, -1.0, -1.0, -1.0]
    loss_b = loss_a + np.array(shift) * sensitivity
    g = np.random.default_rng(seed)
    led = scratch()
    out_a = np.array([em_fn(-loss_a, sensitivity, epsilon, g, monotone=monotone, ledger=led, stage="audit")
                      for _ in range(runs)])
    led = scratch()
    out_b = np.array([em_fn(-loss_b, sensitivity, epsilon, g, monotone=monotone, ledger=led, stage="audit")
                      for _ in range(runs)])
    return audit_outcomes(out_a, out_b)


def recovery_sampler(method, rows, eps: tuple[float, float, float], delta_sum: float = 0.0):
    """A sampler of the production recovery stage (``method._preprocess`` then ``method._recover``)
    on one cluster with rows ``rows``: the cluster is replicated r times with one label per copy and
    recovered in a single call (clusters are disjoint and recovered independently, so the r outputs
    are independent samples of the one-cluster output). Returns (r, 1 + m) arrays: the noisy count
    and the prototype."""
    import copy

    import scipy.sparse as sp

    from dpfed_core.privacy.ledger import PrivacyLedger

    rows = sp.csr_matrix(rows, dtype=float)

    def sample(r, g):
        X = sp.vstack([rows] * r).tocsr()
        labels = np.repeat(np.arange(r), rows.shape[0])
        meth = copy.copy(method)
        meth.k = r
        meth.spend_ = []
        Xc, Xs = meth._preprocess(X)
        P, counts = meth._recover(Xc, Xs, labels, *eps, delta_sum, g,
                                  PrivacyLedger(math.inf).for_entity("audit"), "")
        return np.column_stack([counts, P])
    return sample


def audit_recovery(method, X_a, X_b, reps: int, eps: tuple[float, float, float], delta_sum: float = 0.0,
                   seed: int = 0) -> dict[str, float]:
    """Recovery stage (counts, support, sums) of a :class:`DPPrototypes`-like ``method``, run through
    the production ``_preprocess`` and ``_recover`` (see :func:`recovery_sampler`). ``X_a`` / ``X_b``
    are the rows of *one cluster* in D and D'. Returns ε lower bounds for the noisy counts alone,
    for the whole per-cluster output ("all": counts, every coordinate, their sum, the number of
    interior and non-zero coordinates), and for the projection of the prototype on the direction
    in which D' differs ("direction": the most powerful single statistic for Gaussian sums)."""
    vmax_pub = float(method.value_max)

    def feats(sample):
        def f(r, g):
            out = sample(r, g)
            counts, P = out[:, :1], out[:, 1:]
            middle = ((P > 0) & (P < vmax_pub)).sum(1)
            return np.column_stack([counts, P, P.sum(1), middle, (P != 0).sum(1)])
        return f

    sa, sb = feats(recovery_sampler(method, X_a, eps, delta_sum)), feats(recovery_sampler(method, X_b, eps, delta_sum))
    rng = np.random.default_rng(seed)
    n_cal = reps // 5
    cal = np.vstack([sa(n_cal, rng), sb(n_cal, rng)])
    A, B = sa(reps, rng), sb(reps, rng)
    m = np.asarray(X_a).shape[1]
    # the noisy sums, recovered from the release as prototype × max(noisy count, 1) (exact where
    # the prototype is not clipped): the most direct view of the sums' noise
    sums = lambda Z: Z[:, 1:1 + m] * np.maximum(Z[:, :1], 1.0)  # noqa: E731
    S_cal = sums(cal)
    half = n_cal
    u = S_cal[half:].mean(0) - S_cal[:half].mean(0)  # direction from calibration runs only
    u = u / max(np.linalg.norm(u), 1e-300)
    proj = lambda Z: (sums(Z) @ u)[:, None]  # noqa: E731
    ev_all = threshold_events(cal)
    ev_cnt = threshold_events(cal[:, :1])
    ev_dir = threshold_events(proj(cal))
    return {"counts": epsilon_lower_bound(ev_cnt(A[:, :1]), ev_cnt(B[:, :1])),
            "all": epsilon_lower_bound(ev_all(A), ev_all(B), delta_sum),
            "direction": epsilon_lower_bound(ev_dir(proj(A)), ev_dir(proj(B)), delta_sum)}


# ------------------------------------------------------------------ power checks and recording
class ScaledSampler:
    """Wraps a sampler and multiplies every noise scale by ``factor`` — a *mutant* of every
    mechanism at once, used by the power checks: the same audit on the same production code with
    the noise quartered must report an ε lower bound above the claim."""

    def __init__(self, inner, factor: float) -> None:
        self.inner, self.factor = inner, factor
        self.simulation = inner.simulation

    def discrete_laplace(self, values, scale):
        return self.inner.discrete_laplace(values, scale * self.factor)

    def laplace(self, values, scale):
        return self.inner.laplace(values, scale * self.factor)

    def gaussian(self, values, sigma):
        return self.inner.gaussian(values, sigma * self.factor)

    def noisy_max(self, utilities, scale):
        return self.inner.noisy_max(utilities, scale * self.factor)

    def noisy_top_k(self, utilities, k, scale):
        return self.inner.noisy_top_k(utilities, k, scale * self.factor)


class RecordingSampler:
    """Wraps a sampler and records (kind, scale, number of coordinates) of every draw."""

    def __init__(self, inner, log: list) -> None:
        self.inner, self.log = inner, log
        self.simulation = inner.simulation

    def _rec(self, kind, scale, values):
        self.log.append((kind, float(scale), int(np.size(values))))

    def discrete_laplace(self, values, scale):
        self._rec("discrete_laplace", scale, values)
        return self.inner.discrete_laplace(values, scale)

    def laplace(self, values, scale):
        self._rec("laplace", scale, values)
        return self.inner.laplace(values, scale)

    def gaussian(self, values, sigma):
        self._rec("gaussian", sigma, values)
        return self.inner.gaussian(values, sigma)

    def noisy_max(self, utilities, scale):
        self._rec("noisy_max", scale, utilities)
        return self.inner.noisy_max(utilities, scale)

    def noisy_top_k(self, utilities, k, scale):
        self._rec("noisy_top_k", scale, utilities)
        return self.inner.noisy_top_k(utilities, k, scale)


def patch_sampler(monkeypatch, wrap) -> None:
    """Make every mechanism draw through ``wrap(real_sampler)`` (the production code is unchanged:
    only the sampler it asks for is wrapped)."""
    from dpfed_core.privacy import mechanisms as mech
    from dpfed_core.privacy import noise

    real = noise.sampler_for
    monkeypatch.setattr(mech, "sampler_for", lambda rng: wrap(real(rng)))


class CapturingSampler:
    """Wraps a sampler and keeps (kind, scale, the exact vector the noise is added to) of every
    draw: the release-level sensitivity tests compare those vectors between neighbouring datasets."""

    def __init__(self, inner, log: list) -> None:
        self.inner, self.log = inner, log
        self.simulation = inner.simulation

    def discrete_laplace(self, values, scale):
        self.log.append(("discrete_laplace", float(scale), np.array(values, dtype=float, copy=True)))
        return self.inner.discrete_laplace(values, scale)

    def laplace(self, values, scale):
        self.log.append(("laplace", float(scale), np.array(values, dtype=float, copy=True)))
        return self.inner.laplace(values, scale)

    def gaussian(self, values, sigma):
        out = self.inner.gaussian(values, sigma)
        self.log.append(("gaussian", float(sigma), np.array(values, dtype=float, copy=True), np.array(out)))
        return out

    def noisy_max(self, utilities, scale):
        self.log.append(("noisy_max", float(scale), np.array(utilities, dtype=float, copy=True)))
        return self.inner.noisy_max(utilities, scale)

    def noisy_top_k(self, utilities, k, scale):
        self.log.append(("noisy_top_k", float(scale), np.array(utilities, dtype=float, copy=True)))
        return self.inner.noisy_top_k(utilities, k, scale)
