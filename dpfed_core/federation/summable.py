"""Summable releases: statistics that add up across entities, so a secure sum can hide each share.

An entity's release is a vector s_h (length m, one value per item) whose **sum** Σ_h s_h is all
the server needs. With secure aggregation (Flower's SecAgg+ in a deployment, see
:mod:`dpfed_core.federation.deployment`) the server sees only that sum, so each entity adds only a
*share* of the DP noise: with H entities of which at most ``max_dropouts`` = d may drop out of the
secure sum, each adds N(0, σ²/(H − d)); any ≥ H − d surviving shares carry noise of variance ≥ σ².

* Guarantee **against the server** (sees only the sum): the Gaussian mechanism with σ, i.e. the
  requested (ε, δ) — this is what the ledger row charges.
* Guarantee against **the server together with all other entities** (they can subtract their own
  shares): only the entity's own share σ/√(H − d) protects it; the weaker ε is stated in the ledger
  row's note and in :attr:`SummableShare.coalition_epsilon`.

Every share is rounded to the public grid :data:`GRID` (post-processing, no privacy cost) so that
the secure sum's integer quantisation is exact: the deployment's sum then equals the in-process sum
bit for bit.

Hook for new summable methods: subclass :class:`SummableMethod` and decorate it with
:func:`register_summable_method`; the in-process runner (``dpfed_core.methods``) and the Flower
deployment both pick it up by name.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import EntityLedger
from dpfed_core.privacy.mechanisms import gaussian_sigma
from dpfed_core.privacy.noise import gaussian_float_delta, noise_label, sampler_for

#: Public rounding grid of every share (2⁻⁶): fine next to any DP noise, coarse enough that
#: SecAgg+'s integer quantisation of a share in [−c, c] is exact (c = GRID·T/2, T its target range).
GRID = 2.0 ** -6


@dataclass(frozen=True)
class SummableShare:
    """What one entity contributes to a secure sum.

    values : (m,) float64 on the grid :data:`GRID`.
    sigma_share : standard deviation of the noise this entity added.
    coalition_epsilon : ε of this entity's users against the server colluding with every other
        entity (only this entity's own noise share protects them).
    """

    values: np.ndarray
    sigma_share: float
    coalition_epsilon: float
    note: str = ""


def secagg_ranges(n_entities: int) -> tuple[int, int, float]:
    """SecAgg+ parameters for ``n_entities`` contributors: (quantisation range T, modulus M,
    clipping range c). M = 2³² (Flower's maximum); T is the largest power of two with
    n·T < M, so the sum of n quantised shares and of their n weight factors never wraps around;
    c = GRID·T/2 makes one quantisation step exactly one grid step."""
    if n_entities < 2:
        raise ConfigError(f"secure aggregation needs at least 2 entities, got {n_entities}")
    modulus = 2 ** 32
    target = 2 ** (32 - math.ceil(math.log2(n_entities + 1)))
    return target, modulus, GRID * target / 2


def to_grid(values: np.ndarray) -> np.ndarray:
    """Round to the nearest multiple of :data:`GRID` (exact in float64 for |x| < 2⁴⁶)."""
    return np.round(np.asarray(values, dtype=np.float64) / GRID) * GRID


def _epsilon_of_sigma(sigma: float, delta: float, sensitivity: float, size: int) -> float:
    """Smallest ε (to 1e-6 relative, rounded up) at which Gaussian noise of scale σ on ``size``
    coordinates is (ε, δ)-DP at L2 sensitivity Δ by OpenDP's privacy map (the map that calibrates
    σ in :func:`~dpfed_core.privacy.mechanisms.gaussian_sigma`)."""
    if sigma <= 0:
        return math.inf

    def ok(eps: float) -> bool:
        try:
            return gaussian_float_delta(float(sigma), float(sensitivity), int(size), float(eps)) <= delta
        except Exception:  # OpenDP refuses a map that overflows: far from enough
            return False

    lo, hi = 0.0, 1.0
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > 1e6:
            return math.inf
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


class SummableMethod(ABC):
    """Base class. Parameters are stored as given; :meth:`share` computes one entity's share and
    spends through its ledger view; :meth:`finish` turns the secure sum into item factors V."""

    name: str = ""
    private: bool = True

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0) -> None:
        self.value_max = value_max
        self.epsilon = epsilon
        self.delta = delta
        self.max_dropouts = max_dropouts

    def check(self, n_entities: int) -> None:
        d = self.max_dropouts
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise ConfigError(f"max_dropouts must be a whole number ≥ 0, got {d!r} (--max-dropouts)")
        if n_entities - d < 2:
            raise ConfigError(
                f"max_dropouts={d} leaves fewer than 2 of the {n_entities} entities in the secure sum; "
                f"lower --max-dropouts to at most {max(n_entities - 2, 0)}")

    @abstractmethod
    def share(self, X: sp.csr_matrix, rng: np.random.Generator, ledger: EntityLedger,
              n_entities: int) -> SummableShare:
        """One entity's share (X: its training rows, n_h × m)."""

    @abstractmethod
    def finish(self, total: np.ndarray) -> np.ndarray:
        """Item factors V (m × r, non-negative) from the secure sum of all shares."""

    def get_params(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and not k.endswith("_")}


SUMMABLE_METHODS: dict[str, Callable[..., SummableMethod]] = {}


def register_summable_method(name: str):
    def deco(cls):
        cls.name = name
        SUMMABLE_METHODS[name] = cls
        return cls
    return deco


def summable_params(config) -> dict:
    """A summable method's parameters from a run configuration (``--param KEY=VALUE`` lands in
    ``prototype_params``; ``method_params`` wins on a clash)."""
    return {**dict(config.prototype_params or {}), **dict(config.method_params or {})}


def make_summable_method(name: str, **params) -> SummableMethod:
    if name not in SUMMABLE_METHODS:
        raise ConfigError(f"unknown summable method {name!r}; choose one of {', '.join(sorted(SUMMABLE_METHODS))}")
    try:
        return SUMMABLE_METHODS[name](**params)
    except TypeError as exc:
        raise ConfigError(f"bad parameter for {name}: {exc}") from None


@register_summable_method("dp-popularity")
class DPPopularity(SummableMethod):
    """DP item popularity: the noisy sum of users' clipped rows, through a secure sum.

    Mechanism (per entity): entries clipped to [0, Λ∞]; each user's row scaled to ℓ2 norm ≤ Λ
    (``row_norm``, public; default Λ∞); s_h = Σ_users row + N(0, σ²/(H − d)·I).
    Sensitivity: adding or removing one user moves Σ_h s_h by at most Λ in ℓ2.
    Privacy map: σ = :func:`~dpfed_core.privacy.mechanisms.gaussian_sigma` (OpenDP's zCDP map of its
    float Gaussian, m coordinates) on the secure sum → (ε, δ)-DP against the server; against the
    server with every other entity: (ε_c, δ), ε_c the same map's ε at σ/√(H − d).
    Sampler: :func:`~dpfed_core.privacy.noise.sampler_for` — OpenDP's exact Gaussian from OS entropy in
    production, the seeded generator in simulation. The sum of the H − d surviving shares is a sum of
    independent discrete Gaussians on the 2⁻⁴⁰ grid with σ ≫ grid, which is within a negligible
    divergence of one discrete Gaussian of variance Σ σ_h² (Kairouz, Liu & Steinke 2021, "The
    distributed discrete Gaussian mechanism"); that gap is stated here, not charged.
    The server's V = max(sum, 0) as one latent factor (m × 1); round 2 fits U_h ≥ 0 locally.
    """

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0, row_norm: float | None = None) -> None:
        super().__init__(value_max, epsilon, delta, max_dropouts)
        self.row_norm = row_norm

    def _bound(self) -> float:
        lam = self.value_max if self.row_norm is None else self.row_norm
        if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam > 0):
            raise ConfigError(f"row_norm must be a positive number, got {lam!r}")
        return float(lam)

    def share(self, X, rng, ledger, n_entities):
        self.check(n_entities)
        lam = self._bound()
        X = sp.csr_matrix(X, dtype=np.float64)
        Xc = X.copy()
        np.clip(Xc.data, 0.0, self.value_max, out=Xc.data)
        norms = np.sqrt(np.asarray(Xc.multiply(Xc).sum(axis=1)).ravel())
        scale = np.minimum(1.0, lam / np.maximum(norms, 1e-300))
        totals = np.asarray((sp.diags(scale) @ Xc).sum(axis=0)).ravel()
        survivors = n_entities - self.max_dropouts
        if math.isinf(float(self.epsilon)):
            ledger.spend("item totals", "exact sums (non-private)", math.inf, 0.0, lam, 0.0)
            return SummableShare(to_grid(totals), 0.0, math.inf, "non-private: exact totals")
        m = totals.size
        sigma = gaussian_sigma(self.epsilon, self.delta, lam, m)
        sigma_share = sigma / math.sqrt(survivors)
        eps_c = _epsilon_of_sigma(sigma_share, self.delta, lam, m)
        note = (f"noise share σ/√{survivors} of a secure sum over ≥ {survivors} of {n_entities} entities "
                f"(σ={sigma:.4g}); against the server with all other entities: ε={eps_c:.4g}, "
                f"δ={self.delta:.3g}")
        values = sampler_for(rng).gaussian(totals, sigma_share)
        ledger.spend("item totals", "Gaussian share of a secure sum", self.epsilon, self.delta, lam, sigma, note,
                     noise_label(rng))
        return SummableShare(to_grid(values), sigma_share, eps_c, note)

    def finish(self, total):
        return np.maximum(np.asarray(total, dtype=np.float64), 0.0)[:, None]
