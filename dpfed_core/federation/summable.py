"""Summable releases: statistics that add up across entities, so a secure sum can hide each share.

An entity's release is a vector s_h (length m, one value per item) whose **sum** Σ_h s_h is all
the server needs. With secure aggregation (Flower's SecAgg+ in a deployment, see
:mod:`dpfed_core.deployment`) the server sees only that sum, so each entity adds only a
*share* of the DP noise: with H entities of which at most ``max_dropouts`` = d may drop out of the
secure sum, each adds N(0, σ²/(H − d)); any ≥ H − d surviving shares carry noise of variance ≥ σ².

* Guarantee **against the server** (sees only the sum): the Gaussian mechanism with σ, i.e. the
  requested (ε, δ) — this is what the ledger row charges.
* Guarantee against **the server together with all other entities** (they can subtract their own
  shares): only the entity's own share σ/√(H − d) protects it; the weaker ε is stated in the ledger
  row's note and in :attr:`SummableShare.coalition_epsilon`.

Every share is rounded to the public grid :data:`GRID` so that the secure sum's integer quantisation
is exact: the deployment's sum then equals the in-process sum bit for bit. Rounding a share is
post-processing of *that share* (so the coalition guarantee holds as stated), but the sum of rounded
shares is not a post-processing of the noisy sum: the guarantee against the server holds (up to
10⁻⁹ more ε and 3·10⁻⁹·δ more δ) only when every share carries enough grid steps of noise
(:func:`rounding_covered`; docs/DEPLOYMENT.md § Rounding each share), and a run whose shares carry
fewer says so in its guarantee (:func:`~dpfed_core.federation.summable_protocol.rounding_warning`).

Hook for new summable methods: subclass :class:`SummableMethod` and decorate it with
:func:`register_summable_method`; the in-process runner (``dpfed_core.methods``) and the Flower
deployment both pick it up by name.

Why one module of ~820 lines: the hook, the two methods every other summable method is measured
against (``dp-popularity``, ``dp-cooccurrence``) and the round-2 fits they share are read together
when a method is added or audited; ``dp-als`` and plug-ins live in their own modules.
"""
from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import Param
from dpfed_core.errors import ConfigError
from dpfed_core.privacy import mechanisms as mech
from dpfed_core.privacy.budget_split import BudgetSplit, split_by, split_evenly_over
from dpfed_core.privacy.ledger import EntityLedger
from dpfed_core.privacy.mechanisms import SECURE_SHARE, gaussian_sigma
from dpfed_core.privacy.noise import gaussian_float_delta
from dpfed_core.privacy.statement import epsilon_that_holds

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


#: Coordinates of all the secure sums of one run together that :func:`rounding_covered` allows for: a
#: public bound above any run a machine can hold (10¹² float64 values are 8 TB; the default
#: dp-cooccurrence run on 600 items has about 180,000 per share).
ROUNDING_COORDINATES = 10 ** 12
#: What the rounding of the shares may add to the run's (ε, δ) where :func:`rounding_covered` holds:
#: at most this much ε, and three times this fraction of δ.
ROUNDING_SLACK = 1e-9


def rounding_covered(grid_steps: float, n_shares: int, epsilon: float, delta: float,
                     coordinates: int = ROUNDING_COORDINATES) -> bool:
    """Is the secure sum of ``n_shares`` shares, each rounded to :data:`GRID` *before* it is summed,
    as private as the noisy sum whose (ε, δ) the ledger charges — up to :data:`ROUNDING_SLACK` more ε
    and 3·:data:`ROUNDING_SLACK`·δ more δ — when every coordinate of every share carries at least
    ``grid_steps`` grid steps (τ) of Gaussian noise, over at most ``coordinates`` coordinates in all?

    Rounding each share is post-processing of that share, not of the sum, so the guarantee against
    the server needs an argument (docs/DEPLOYMENT.md § Rounding each share). Per coordinate, in grid
    units, with H = ``n_shares``, s = τ√H and μ the exact sum: (1) Poisson summation gives
    |P(S = k) − Q(k)| ≤ η = 2(H + 1)·Σ_{i≥1} exp(−π²τ²(2i − 1)²/2) for every k, where Q is a
    post-processing of the Gaussian sum T (draw T, then k with weight B_H(k − T), the density of a sum
    of H uniforms on [−½, ½]); (2) both laws leave the window |k − μ| ≤ c·s + H/2 with probability
    ≤ 2Φ̄(c), and inside it Q(k) ≥ (8/9)·φ(c + (H/2 + a)/s)/s, a = 3√(H/12); (3) so outside an event
    of probability t = 4·coordinates·Φ̄(c) the laws of the whole transcript are within the ratio
    (1 ± κ)^coordinates, κ = η/Q_min, and the run is (ε + coordinates·ln((1 + κ)/(1 − κ)),
    δ·(1 + κ)^coordinates + (1 + e^ε)·t)-DP. c is chosen so that e^ε·t ≤ slack·δ; covered when then
    coordinates·ln((1 + κ)/(1 − κ)) ≤ slack, so (1 + κ)^coordinates ≤ 1 + slack/2 + … and the δ grows
    by less than 3·slack·δ. (OpenDP's noise lies on the 2⁻⁴⁰ grid, not the real line:
    2³⁴ of its steps per grid step, a difference below every term here.)"""
    from scipy.optimize import brentq
    from scipy.special import log_ndtr

    tau, H, M = float(grid_steps), int(n_shares), float(coordinates)
    epsilon, delta = float(epsilon), float(delta)
    if math.isinf(tau):
        return True
    if not (tau > 0 and H >= 1 and M >= 1 and math.isfinite(epsilon) and delta > 0):
        return False
    slack = ROUNDING_SLACK
    # (2)-(3): the window's half-width c (in sd of T) whose tails, times e^ε, stay within slack·δ
    log_tail = math.log(slack * delta) - epsilon - math.log(4.0 * M)
    c = brentq(lambda x: float(log_ndtr(-x)) - log_tail, 0.0, 1e4)
    s = tau * math.sqrt(H)
    a = 3.0 * math.sqrt(H / 12.0)
    z = c + (H / 2.0 + a) / s
    log_q_min = math.log(8.0 / 9.0) - 0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(s)
    log_kappa = rounding_log_eta(tau, H) - log_q_min
    if log_kappa > math.log(0.5):
        return False
    kappa = math.exp(log_kappa)
    return M * (math.log1p(kappa) - math.log1p(-kappa)) <= slack


def rounding_log_eta(grid_steps: float, n_shares: int) -> float:
    """ln η: the bound on |P(S = k) − Q(k)| at every k of step (1) of :func:`rounding_covered` —
    η = 2(H + 1)·Σ_{i≥1} exp(−π²τ²(2i − 1)²/2) ≤ 2(H + 1)·exp(−π²τ²/2)/(1 − exp(−4π²τ²)): each rounded
    share's characteristic function on [−π, π] is its unrounded one (times the uniform's) plus the
    aliases at ω + 2πl, l ≠ 0, each at most exp(−τ²(ω + 2πl)²/2) ≤ exp(−π²τ²(2|l| − 1)²/2); H shares
    and Q's own aliases make H + 1 such errors."""
    tau, H = float(grid_steps), int(n_shares)
    pt2 = math.pi ** 2 * tau * tau
    return math.log(2.0 * (H + 1)) - 0.5 * pt2 - math.log1p(-math.exp(-4.0 * pt2))


def share_grid_steps(rows, divisor: float, spread: Callable[[str], float] = lambda stage: 1.0) -> float:
    """The fewest grid steps of noise any share of a secure sum carried on any coordinate, from the
    ledger ``rows`` (each share's row records the sum's σ; the share adds σ/``divisor`` — √(H − d), public
    — times ``spread`` of its stage: :meth:`SummableMethod.noise_spread`). inf when no row is a share of
    a secure sum (no secure aggregation, or a non-private run)."""
    steps = [float(r.noise_scale) / float(divisor) * spread(r.stage) / GRID for r in rows
             if str(r.mechanism).startswith(SECURE_SHARE) and math.isfinite(r.epsilon)]
    return min(steps, default=math.inf)


@functools.lru_cache(maxsize=1024)
def coalition_epsilon(sigma: float, delta: float, sensitivity: float, size: int) -> float:
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


def release_words(stage: str, plural: bool = False) -> str:
    """A stage's release in words ("popularity release"); a one-stage method's only stage is named
    ``release``, which is then the whole phrase (never "release release")."""
    word = "releases" if plural else "release"
    return word if stage == "release" else f"{stage} {word}"


class SummableMethod(ABC):
    """Base class. Parameters are stored as given; :meth:`share` computes one entity's share and
    spends through its ledger view; :meth:`combine` (or, for one-stage methods, :meth:`finish`) turns
    the secure sum into what the server broadcasts; :meth:`fit_local` is round 2 on an entity.

    The interface shared by the in-process runner (:mod:`dpfed_core.federation.summable_protocol`) and the
    Flower deployment:

    * ``stages`` — names of the secure sums, in order (one-stage methods: ``("release",)``).
      Stage s: every entity calls ``share(X_h, rng, ledger, H, stage=s, public=public)``; the
      element-wise sum of the ``values`` arrays over the entities is all the server needs; it calls
      ``public = combine(s, total, public, rng, n_participants)``, and ``public`` (public
      post-processing of the sums only) is broadcast before the next stage.
    * after the last stage, ``public["V"]`` (m × r, ≥ 0) is the shared item factors; round 2 on
      entity h is ``fit_local(X_h, public, lam, mode, rng)`` → ``(U_h, L_h, U_loc_h)``: scores of
      the entity's users are ``U_h @ V.T + U_loc_h @ L_h.T`` (``L_h``: optional m × c columns the
      entity computed from its own data only; never sent).
    * ``aggregation``: ``"secure"`` — the server sees only each sum; each entity adds a share
      σ/√(H − d) of the noise (d = ``max_dropouts`` tolerated missing entities);
      ``"none"`` — the server sees every entity's release, so each adds the full σ.
    """

    name: str = ""
    private: bool = True
    stages: tuple[str, ...] = ("release",)
    #: Keys of ``public`` that the entities' shares of a later stage read: what is broadcast to the
    #: entities between two secure sums (public post-processing only), in-process and deployed.
    public_keys: tuple[str, ...] = ()
    #: How each public key is described in the message log (the key itself when absent).
    public_key_labels: dict[str, str] = {}
    #: Declared parameters beyond the run's main controls (see :class:`~dpfed_core.config.Param`).
    parameters: tuple[Param, ...] = ()
    #: Every release is a Gaussian calibrated from the zCDP budget ρ(ε, δ) of the method's (ε, δ) and
    #: records its ρ: the run may then share one ρ between the method and a federation-wide DP
    #: catalogue (``evaluation.experiments``); otherwise the catalogue's share is split off by
    #: basic composition.
    zcdp_budget: bool = False
    #: Round 2's defaults (:func:`blended_round2`), for a method whose constructor does not take
    #: them: blend the entity's own model with the federation's parts, the one-standard-
    #: error rule at z = 1, and the entity's own NMF at rank 10 (a method's ``rank`` when it has one);
    #: its ridge λ is the run's, passed to :meth:`fit_local`.
    local_blend: bool = True
    holdout_evidence: float = 1.0
    round2_default: str = "shrunk"
    rank: int = 10
    max_iter: int = 200
    #: True when every share is its exact values plus the draws of :meth:`gaussian_share` (or of
    #: ``mechanisms.gaussian_mechanism``), changed afterwards only by public linear maps and
    #: :func:`to_grid`: a process that forms the sum itself may then sum the exact values and draw the
    #: sum's noise once (:class:`~dpfed_core.privacy.noise.SumNoise`: every share but the last gets
    #: zeros back). False for a method that does not say so: a share that clipped or thresholded its
    #: noisy values would not add up to the noisy sum.
    noise_drawn_for_the_sum: bool = False

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0, aggregation: str = "secure") -> None:
        self.value_max = value_max
        self.epsilon = epsilon
        self.delta = delta
        self.max_dropouts = max_dropouts
        self.aggregation = aggregation

    def check(self, n_entities: int) -> None:
        if self.aggregation not in ("secure", "none"):
            raise ConfigError(f"aggregation must be 'secure' or 'none', got {self.aggregation!r}", param="aggregation")
        d = self.max_dropouts
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise ConfigError(f"max_dropouts must be a whole number ≥ 0, got {d!r}", param="max_dropouts")
        if self.aggregation == "secure" and n_entities - d < 2:
            raise ConfigError(
                f"max_dropouts={d} leaves fewer than 2 of the {n_entities} entities in the secure sum; "
                f"lower max_dropouts to at most {max(n_entities - 2, 0)}", param="max_dropouts")

    def share_divisor(self, n_entities: int) -> float:
        """√(H − d) under secure aggregation (each entity adds σ/√(H − d)); 1 without it."""
        if self.aggregation == "secure":
            return math.sqrt(n_entities - self.max_dropouts)
        return 1.0

    def public_bounds(self, n_items: int | None = None) -> dict[str, float]:
        """The public bounds this method clips and scales one user's row with (``row_norm``), derived
        from public inputs only: its parameters and the value bound (``n_items``, the catalogue's size,
        for a bound that grows with it; None: not known yet). A bound the method does not use is
        absent — one it fixes itself (a row scaled to unit norm) is no bound a site sets; a site's
        policy checks these before it accepts a run. Default: none."""
        return {}

    def noise_spread(self, stage: str) -> float:
        """The smallest factor the release of ``stage`` applies to its noise on a coordinate before the
        share is rounded (1: every coordinate carries the share's σ; a packed symmetric matrix whose
        off-diagonal noise is σ/√2: 1/√2). Public: it states how many grid steps of noise a share
        carries (:func:`share_grid_steps`)."""
        return 1.0

    def calibrate(self, n_entities: int, size: int | None = None) -> None:
        """Compute the method's public noise calibration now — the σ and coalition ε of its releases,
        cached pure functions of public parameters — so that processes forked afterwards (a local
        deployment's sites, :func:`~dpfed_core.deployment.hooks.warm_calibration`) find it cached.
        ``size``: the length of a one-stage release when it is public (a declared catalogue's size),
        else None. Default: :meth:`budget` where the method plans its stages; nothing otherwise."""
        budget = getattr(self, "budget", None)
        if callable(budget):
            budget(n_entities)

    def _one_stage_noise(self, sensitivity: float, size: int, n_entities: int) -> tuple[float, float]:
        """(σ of the secure sum, coalition ε of one entity's share) of a one-stage release of ``size``
        coordinates at the method's whole (ε, δ): OpenDP's map, cached."""
        sigma = gaussian_sigma(self.epsilon, self.delta, sensitivity, size)
        return sigma, coalition_epsilon(sigma / self.share_divisor(n_entities), self.delta, sensitivity, size)

    def budget_split(self) -> BudgetSplit | None:
        """How the method's (ε, δ) is shared across its stages, declared once
        (:mod:`dpfed_core.privacy.budget_split`); :meth:`gaussian_share` at each stage then charges
        that stage's share. Default: None for one stage (it spends the whole budget), the budget split
        evenly over the stages otherwise. Override it to split otherwise, e.g.
        ``split_by({"popularity": 0.3, "pairs": 0.7})``: zCDP, the stages' ρ add up to ρ(ε, δ)."""
        stages = tuple(self.stages)
        return None if len(stages) == 1 else split_evenly_over(stages)

    def gaussian_share(self, values: np.ndarray, sensitivity: float, rng: np.random.Generator,
                       ledger: EntityLedger, n_entities: int, stage: str = "release") -> SummableShare:
        """One entity's share of a Gaussian sum: σ calibrated by OpenDP's map for L2 ``sensitivity``
        (what one user can move the *sum* by), the row charged on the entity's ledger before the share
        σ/√(H − d) (secure aggregation; σ without it) is drawn, the coalition ε of the share, and the
        values rounded to the grid.

        One stage (no :meth:`budget_split`): σ at the method's whole (ε, δ) for the vector's size, the
        coalition ε of this share. Several stages: σ at ``stage``'s share of the split (one Gaussian sum
        per stage), the row's own (ε_s, δ_s) and ρ, and the coalition ε of all the stages together."""
        values = np.asarray(values, dtype=np.float64)
        if math.isinf(float(self.epsilon)):
            mech.gaussian_mechanism(values, sensitivity, math.inf, 0.0, rng, ledger=ledger, stage=stage,
                                    mechanism="exact sums")
            return SummableShare(to_grid(values), 0.0, math.inf, "non-private: exact sums")
        divisor = self.share_divisor(n_entities)
        split = self.budget_split()
        if split is None:
            epsilon, delta, of_stages = self.epsilon, self.delta, ""
            sigma, eps_c = self._one_stage_noise(sensitivity, values.size, n_entities)
        else:
            split.check_stages(self.stages)
            plan = split.plan(float(self.epsilon), float(self.delta))
            epsilon, delta = plan.stage_epsilon(stage), plan.stage_delta
            sigma = plan.sigma(stage, sensitivity)
            eps_c = plan.coalition_epsilon(divisor)
            of_stages = (f"; stage {stage!r} has ρ={plan.rho[stage]:.4g} of the split ρ={plan.rho_total:.4g}, the "
                         f"{len(plan.rho)} stages compose (zCDP, ρ adds up) to ε={plan.total_epsilon():.4g}")
        if self.aggregation == "secure":
            note = (f"noise share σ/√{divisor ** 2:.0f} of a secure sum (σ={sigma:.4g}){of_stages}; against the "
                    f"server with all other entities: ε={epsilon_that_holds(eps_c)}, δ={self.delta:.3g}")
            name = SECURE_SHARE
        else:
            note = (f"no secure aggregation: the entity adds the full σ={sigma:.4g}; the server sees its "
                    f"release{of_stages}")
            name = "Gaussian (own release)"
        noisy, _ = mech.gaussian_mechanism(values, sensitivity, epsilon, delta, rng, ledger=ledger,
                                           stage=stage, note=note, sigma=sigma, divisor=divisor, mechanism=name)
        return SummableShare(to_grid(noisy), sigma / divisor, eps_c, note)

    def check_participants(self, n_participants: int, n_entities: int) -> None:
        """Stop with a clear message when more entities dropped out than the shares were sized for:
        the sum would then carry less noise than σ and the guarantee against the server would fail."""
        if self.aggregation == "secure" and n_participants < n_entities - self.max_dropouts:
            raise ConfigError(
                f"only {n_participants} of {n_entities} entities contributed to the secure sum, but the "
                f"noise shares were sized for at most {self.max_dropouts} missing; the sum is not released. "
                "Rerun with a larger max_dropouts", param="max_dropouts")

    @abstractmethod
    def share(self, X: sp.csr_matrix, rng: np.random.Generator, ledger: EntityLedger,
              n_entities: int, stage: str = "release", public: dict | None = None) -> SummableShare:
        """One entity's share (X: its training rows, n_h × m)."""

    def public_ahead(self, stage: str, n_items: int) -> dict | None:
        """The public inputs the shares of ``stage`` read when public facts alone fix them — the
        catalogue's size ``n_items`` — without any earlier stage's release; None when they come from
        an earlier stage's secure sum (the default for every stage but the first).

        A stage whose inputs are known ahead does not have to wait for the previous sum: a deployment
        may carry both stages' shares in one secure sum (:func:`fused_stages`). The server's
        ``combine`` of the earlier stage must then produce the same public keys (it is checked)."""
        return {} if stage == self.stages[0] else None

    def share_length(self, stage: str, n_items: int, public: dict) -> int | None:
        """Length of one entity's share vector of ``stage`` (a message shape: public), given the
        catalogue's size and the public inputs of the stage; None when the method does not say (its
        stages are then never fused)."""
        return None

    def finish(self, total: np.ndarray) -> np.ndarray:
        """Item factors V (m × r, non-negative) from the secure sum of all shares (one-stage methods)."""
        raise NotImplementedError

    def combine(self, stage: str, total: np.ndarray, public: dict | None, rng: np.random.Generator,
                n_participants: int) -> dict:
        """Server step after the secure sum of ``stage`` (post-processing only)."""
        out = dict(public or {})
        out["V"] = self.finish(total)
        return out

    def broadcast_parts(self, n_columns: int) -> tuple[slice | None, int | None]:
        """Where round 2 finds the federation's parts in the broadcast V (m × ``n_columns``): the
        columns of shared item factors (None: none) and the column of the DP global popularity
        (None: none). Default: every column is an item factor."""
        return slice(0, n_columns), None

    def fit_local(self, X: sp.csr_matrix, public: dict, lam: float, mode: str,
                  rng: np.random.Generator):
        """Round 2 on one entity. With ``local_blend`` (the default of every summable method but the
        dp-popularity baseline) it keeps what the entity knows: :func:`blended_round2`. Without:
        U_h ≥ 0 on the broadcast V alone (no entity-only columns)."""
        if self.local_blend:
            return blended_round2(self, X, public, lam, mode, rng)
        from dpfed_core.models.factorization import fit_rows_given

        return fit_rows_given(X, public["V"], lam, mode), None, None

    def notes(self, public: dict) -> list[str]:
        """What the server step did, in words for the run's notes (public quantities only)."""
        return []

    def set_public_inputs(self, item_features=None) -> "SummableMethod":
        """Public inputs every entity holds besides the broadcast (no privacy cost): ``item_features``
        (n_items × f, the dataset's declared public item side information, or None)."""
        self._item_features = item_features
        return self

    def public_item_features(self):
        """The public item features set by :meth:`set_public_inputs` (None when there are none)."""
        return getattr(self, "_item_features", None)

    def get_params(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and not k.endswith("_")}


def fused_stages(method: SummableMethod, n_items: int) -> list[tuple[str, ...]]:
    """The method's stages grouped into secure sums: a stage joins the previous stage's sum when its
    public inputs are known ahead (:meth:`SummableMethod.public_ahead`) and every stage of the group
    states its share length (the server splits the sum by them). Fusing changes no release: each
    entity draws the same shares, in the same order, from the same stream, and the server learns the
    same sums — in one SecAgg+ protocol (four message rounds) instead of one per stage.

    E.g. ``dp-cooccurrence`` on a catalogue of at most ``max_items`` items: the co-occurrence stage
    takes every item whatever the popularity sum says, so ``[("popularity", "co-occurrence")]``."""
    groups: list[list[str]] = []
    public: dict = {}
    known_before = False  # the previous stage's share length is known from public facts
    for stage in method.stages:
        ahead = method.public_ahead(stage, n_items)
        if ahead is not None:
            public = {**public, **ahead}
        known = ahead is not None and method.share_length(stage, n_items, public) is not None
        if groups and known and known_before:
            groups[-1].append(stage)
        else:
            groups.append([stage])
        known_before = known
    return [tuple(g) for g in groups]


def fused_inputs(method: SummableMethod, group: Sequence[str], n_items: int, public: dict) -> Iterator[tuple[str, dict]]:
    """``(stage, public inputs of its shares)`` for each stage of one secure sum (a group of
    :func:`fused_stages`), starting from ``public`` (what the previous sums broadcast): every stage
    adds the inputs public facts fix ahead (:meth:`SummableMethod.public_ahead`). The node makes its
    shares, and the server reads their lengths, from the same inputs."""
    for stage in group:
        public = {**public, **(method.public_ahead(stage, n_items) or {})}
        yield stage, public


SUMMABLE_METHODS: dict[str, Callable[..., SummableMethod]] = {}


def register_summable_method(name: str):
    def deco(cls):
        cls.name = name
        SUMMABLE_METHODS[name] = cls
        return cls
    return deco


def draws_noise_once(name: str) -> bool:
    """Whether the summable method ``name``'s in-process production runs draw each sum's noise once
    (its class's ``noise_drawn_for_the_sum``); False for any other name."""
    cls = SUMMABLE_METHODS.get(name)
    return bool(getattr(cls, "noise_drawn_for_the_sum", False))


def summable_params(config) -> dict:
    """A summable method's parameters from a run configuration, the same for the in-process runner
    and the Flower deployment: the trust model (``aggregation``, ``max_dropouts``) and, where the
    method takes them, ``rank``, ``lam``, ``max_iter``, ``mode`` from the configuration; then ``--param
    KEY=VALUE`` (``prototype_params``) and ``method_params`` (which wins on a clash)."""
    import inspect

    cls = SUMMABLE_METHODS.get(getattr(config, "method", ""))
    accepted = set(inspect.signature(cls.__init__).parameters) if cls is not None else set()
    base = {"aggregation": getattr(config, "aggregation", "secure"),
            "max_dropouts": getattr(config, "max_dropouts", 0),
            "rank": getattr(config, "rank", None), "lam": getattr(config, "lam", None),
            "max_iter": getattr(config, "max_iter", None), "mode": getattr(config, "mode", None)}
    out = {k: v for k, v in base.items() if k in accepted and v is not None}
    return {**out, **config.params}


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
    The server's V = max(sum, 0) as one latent factor (m × 1): the DP global popularity.

    Round 2: by default U_h ≥ 0 on that one column — every user of every entity ranks items by the
    DP popularity list: the one-line DP baseline every DP method must beat, kept as such.
    ``local_blend=True`` makes it keep what the entity knows like every other summable method
    (:func:`blended_round2`: the entity's own NMF and popularity blended with the DP popularity,
    weights on a local hold-out) — "summed DP popularity blended into the entity's own model".
    """

    noise_drawn_for_the_sum = True  # exact values + one Gaussian draw, ÷ public weights, to_grid

    zcdp_budget = True  # one Gaussian at ρ(ε, δ) (:meth:`SummableMethod.gaussian_share`), ρ recorded
    parameters = (
        Param("row_norm", "float", None, "Λ, public ℓ2 bound of one user's row (the L2 sensitivity); "
              "none = the value bound Λ∞", low=0, low_open=True, optional=True),
        Param("local_blend", "bool", False, "round 2 keeps what the entity knows: its own NMF and popularity "
              "blended with the DP popularity (weights on a local hold-out); off = the plain DP popularity "
              "list, the baseline"),
        Param("holdout_evidence", "float", 1.0, "with local_blend: keep the entity's own blend (as local fits "
              "it) unless the DP popularity's parts beat it on the local hold-out by more than this many paired "
              "standard errors (0: the plain search)", low=0, high=10),
    )

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0, aggregation: str = "secure", row_norm: float | None = None,
                 local_blend: bool = False, holdout_evidence: float = 1.0, rank: int = 10,
                 max_iter: int = 200) -> None:
        super().__init__(value_max, epsilon, delta, max_dropouts, aggregation)
        self.row_norm = row_norm
        self.local_blend = local_blend
        self.holdout_evidence = holdout_evidence
        self.rank = rank
        self.max_iter = max_iter

    def broadcast_parts(self, n_columns):
        return None, 0  # V is the DP popularity column alone

    def calibrate(self, n_entities: int, size: int | None = None) -> None:
        """The one release's σ and coalition ε, when its length (the declared catalogue's size) is public."""
        if size is not None and not math.isinf(float(self.epsilon)):
            self.check(n_entities)
            self._one_stage_noise(self._bound(), int(size), n_entities)

    def public_bounds(self, n_items: int | None = None) -> dict[str, float]:
        """``row_norm``: the ℓ2 bound Λ of one user's row (:meth:`_bound`; it does not grow with the
        catalogue)."""
        return {"row_norm": self._bound()}

    def _bound(self) -> float:
        lam = self.value_max if self.row_norm is None else self.row_norm
        if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam > 0):
            raise ConfigError(f"row_norm must be a positive number, got {lam!r}")
        return float(lam)

    def share(self, X, rng, ledger, n_entities, stage="release", public=None):
        self.check(n_entities)
        lam = self._bound()
        Xc = sp.csr_matrix(X, dtype=np.float64, copy=True)
        np.clip(Xc.data, 0.0, self.value_max, out=Xc.data)
        norms = _row_norms(Xc)
        scale = np.minimum(1.0, lam / np.maximum(norms, 1e-300))
        totals = np.asarray(Xc.T @ scale).ravel()  # Σ_u scale_u · x_u, summed in user order
        return self.gaussian_share(totals, lam, rng, ledger, n_entities, stage="item totals")

    def finish(self, total):
        return np.maximum(np.asarray(total, dtype=np.float64), 0.0)[:, None]


# ----------------------------------------------------------------------------- dp-cooccurrence
def _unit_rows(X: sp.csr_matrix, value_max: float, copy: bool = True) -> sp.csr_matrix:
    """Entries clipped to [0, Λ∞], then every non-empty row scaled to ℓ2 norm exactly 1 (a user's
    new row depends on that user's row only: one user adds one unit vector). ``copy=False`` works on
    ``X``'s own arrays when they are float64 (for a matrix the caller made and owns).

    Done on the stored values in place, so a site's release holds one copy of its rows and one value
    array beside it (elementwise products and a diagonal product would each copy the rows); the
    values are those of the plain expression to the last bit."""
    Xc = sp.csr_matrix(X, dtype=np.float64, copy=copy)
    np.clip(Xc.data, 0.0, value_max, out=Xc.data)
    Xc.eliminate_zeros()
    norms = _row_norms(Xc)
    scale = np.where(norms > 0, 1.0 / np.maximum(norms, 1e-300), 0.0)
    Xc.data *= np.repeat(scale, np.diff(Xc.indptr))
    return Xc


def _on_items(X: sp.csr_matrix, items: np.ndarray) -> sp.csr_matrix:
    """X's columns ``items``: X itself when they are every column in order (a catalogue within
    ``max_items``), so a share does not copy the site's rows by a column index to get them back."""
    if items.size == X.shape[1] and np.array_equal(items, np.arange(X.shape[1])):
        return X
    return sp.csr_matrix(X[:, items])


def _row_norms(X: sp.csr_matrix) -> np.ndarray:
    """Every row's ℓ2 norm, its squares summed as scipy's CSR row sum sums them (``reduceat`` over
    the non-empty rows), with one value array beside the rows instead of a copy of the matrix."""
    sq = np.zeros(X.shape[0])
    rows = np.flatnonzero(np.diff(X.indptr))
    if rows.size:
        sq[rows] = np.add.reduceat(np.square(X.data), X.indptr[rows])
    return np.sqrt(sq)


def _packed_weights(M: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Upper-triangle indices of an M × M matrix and the weights (1 on the diagonal, √2 off it)
    under which the packed vector has the Frobenius norm of the matrix."""
    iu = np.triu_indices(M)
    w = np.where(iu[0] == iu[1], 1.0, math.sqrt(2.0))
    return iu, w


def unpack_symmetric(packed: np.ndarray, M: int) -> np.ndarray:
    """The symmetric M × M matrix of a packed upper triangle (row-major, diagonal included); a stack of
    them for a stack of packed vectors (``packed`` … × M(M + 1)/2)."""
    iu = np.triu_indices(M)
    packed = np.asarray(packed)
    C = np.zeros((*packed.shape[:-1], M, M))
    C[..., iu[0], iu[1]] = packed
    return C + np.swapaxes(np.triu(C, 1), -1, -2)


def cooccurrence_split(pop_share: float) -> BudgetSplit:
    """dp-cooccurrence's declared split: w of ρ to the popularity release, 1 − w to the co-occurrence
    release (:mod:`dpfed_core.privacy.budget_split`: zCDP, the two rows' ρ add up to at most ρ(ε, δ))."""
    return split_by({"popularity": pop_share, "co-occurrence": 1.0 - pop_share})


@functools.lru_cache(maxsize=256)
def _cooccurrence_plan(epsilon: float, delta: float, pop_share: float, divisor: float) -> dict:
    """Calibration of :class:`DPCooccurrence` (a pure function of public parameters, cached: every
    entity and the server need the same plan).

    By OpenDP's map of the sampler actually used (its float Gaussian, zCDP): the largest total ρ
    whose optimal conversion is (ε, δ) (:func:`~dpfed_core.privacy.noise.zcdp_rho_for_epsilon`) is
    split w : 1 − w between the two releases (:func:`cooccurrence_split`); each σ is the smallest
    whose map is ≤ its ρ at any vector size (:data:`~dpfed_core.privacy.noise.PLANNING_SIZE`). The
    ledger composes the two rows by adding their ρ (:func:`~dpfed_core.privacy.ledger.compose`),
    which is valid adaptively (the co-occurrence release depends on the server's view of the first).
    Against the server with every other entity only the entity's own shares σ/divisor protect it:
    ρ·divisor²."""
    if math.isinf(epsilon):
        return {"sigma": {"popularity": 0.0, "co-occurrence": 0.0}, "rho": {"popularity": math.inf,
                "co-occurrence": math.inf}, "epsilon": math.inf, "coalition_epsilon": math.inf, "divisor": divisor}
    plan = cooccurrence_split(pop_share).plan(epsilon, delta)
    return {"sigma": {k: plan.sigma(k, 1.0) for k in plan.rho}, "rho": dict(plan.rho),
            "epsilon": plan.total_epsilon(), "divisor": divisor,
            "coalition_epsilon": plan.coalition_epsilon(divisor),
            # each release on its own at half the δ: the rows' own (ε, δ), which basic composition adds up
            "stage_epsilon": {k: plan.stage_epsilon(k) for k in plan.rho}}


#: dp-cooccurrence's default share of the precision for the popularity release, by trust model
#: (see :class:`DPCooccurrence`, ``pop_share``).
POP_SHARE_SECURE = 0.5
POP_SHARE_NONE = 0.85


@register_summable_method("dp-cooccurrence")
class DPCooccurrence(SummableMethod):
    """DP item co-occurrence ("Analyze Gauss"): summable popularity + Xᵀ X of unit-norm rows, the
    server's denoised factorisation, and a local blend with popularity in round 2.

    Two secure sums per run (``stages``), every user's row clipped to [0, Λ∞] and scaled to ℓ2 = 1:

    1. *popularity*: p_h = Σ_u x̃_u (m,) + Gaussian share. L2 sensitivity 1.
       Server: p̂ = Σ_h p_h. If m > ``max_items``, it keeps the ``max_items`` items of largest p̂
       (the DP choice of the items worth a dimension: post-processing of a charged release) and
       broadcasts that list (public from then on).
    2. *co-occurrence*: C_h = X̃_Sᵀ X̃_S on the selected items S (rows re-normalised on S), sent as
       the packed upper triangle v = (diag C, offdiag C) with noise N(0, σ²) on (diag, √2·offdiag),
       i.e. symmetric noise, σ on the diagonal and σ/√2 off it. Sensitivity: one user adds
       x̃x̃ᵀ, whose Frobenius norm ‖x̃‖² ≤ 1 is the L2 norm of (diag, √2·offdiag): Δ₂ = 1.
       Server: eigen-decomposition of Ĉ = Σ_h C_h; keeps the eigen-directions above the noise edge
       √(2M)·σ_sum (the spectral norm of the symmetric noise of the sum, σ_sum = σ_share·√n, public),
       clips the rank-k reconstruction at 0 and factorises its rows Ĉ ≈ W Vᵀ (non-negative HALS,
       ``rank``, ``lam``). Broadcast: V (zero rows for unselected items) and the popularity column
       g = max(p̂, 0)/‖·‖.

    Privacy map: OpenDP's map of its float Gaussian (zCDP, rounding to the 2⁻⁴⁰ grid included):
    the two releases get ρ_p = w·ρ and ρ_c = (1 − w)·ρ, w = :meth:`popularity_share`, ρ the largest total whose
    optimal conversion is (ε, δ) (:func:`_cooccurrence_plan`). Each release records its own ledger
    row (its ρ, and its own (ε, δ/2)); the ledger composes the pair by adding ρ — nothing is split
    in proportion. Against the server with every other entity (secure aggregation) only the
    entity's own shares σ/√(H−d) protect it: ρ·(H − d) (row notes, ``coalition_epsilon``).

    Round 2 (local, nothing leaves the entity, :meth:`fit_local`): the entity's users are scored by a
    blend of U_h ≥ 0 fitted on the broadcast V, the DP global popularity g, the entity's own NMF and
    its own popularity, weights chosen on a hold-out of one training item per user. The federation's
    parts enter only when they beat the entity's own blend (as ``local`` chooses it) on the hold-out
    by more than ``holdout_evidence`` paired standard errors (nested evidence,
    :func:`~dpfed_core.models.blend.fit_blend`); an entity of a few users, whose hold-out cannot tell
    a better blend from its noise, keeps its popularity shrunk toward the federation's by empirical
    Bayes (:func:`~dpfed_core.models.blend.shrunk_popularity`).

    Parameters
    ----------
    pop_share : float or None
        Share w of the Gaussian precision μ² given to the popularity release (the rest to the
        co-occurrence release); the pair composes to (ε, δ) exactly. Default None: w =
        :data:`POP_SHARE_SECURE` (0.5) with secure aggregation, :data:`POP_SHARE_NONE` (0.85) without
        — a public choice (the trust model is public): without secure aggregation the summed noise
        grows with √H and the co-occurrence sum rarely keeps a direction (at 0.5: none on eICU by
        hospital and MovieLens by occupation at ε ≤ 3, at most 1 on the clinic sample and 2 on eICU by
        region; the diagnostic table of bench/results/utility.md), so the precision is better
        spent on popularity. Measured on the utility benchmark's federations (3 seeds, MAR − local):
        eICU by hospital ε = 3, −0.0048 ± 0.0040 at 0.5 → −0.0127 ± 0.0084 at 0.85 (0.95: −0.0128);
        eICU by region, clinic, MovieLens by occupation and ZIP within ±0.0014 of 0.5. Chosen on the
        same federations the benchmark reports (optimistic for them). The price where the
        co-occurrence does keep directions without secure aggregation: the clinic sample at ε = 10
        (bench/results/dashboard_defaults.md, rank 8, 3 seeds) 0.1469 ± 0.0058 against 0.1439 ± 0.0054
        at 0.5 on the same seeds and splits (re-run on 2026-12-04) — there set ``pop_share=0.5``. With secure aggregation 0.5
        (prototypes: 0.5 beat 0.3 and 0.8 on clinic and eICU at ε ≥ 1; 0.8 better only at ε = 0.3).
    max_items : int
        Items kept for the co-occurrence release when the catalogue is larger (chosen from the DP
        popularity sum). Default 600 (not tuned: bounds the m² message and the server's eigen-solve).
    local_blend : bool
        Round 2 keeps what the entity knows: each entity blends its own NMF and its own (exact, local)
        popularity with the federation's parts (weights on a local hold-out). Default True.
    holdout_evidence : float
        z of the one-standard-error rule of round 2's blend (0: the plain search). Default 1 (the
        usual one-standard-error rule; not tuned).
    rank, lam, max_iter : int, float, int
        The server's NMF of the denoised co-occurrence (from the run's configuration).
    """

    noise_drawn_for_the_sum = True  # exact values + one Gaussian draw, ÷ public weights, to_grid

    stages = ("popularity", "co-occurrence")
    zcdp_budget = True  # both releases split ρ(ε, δ) (:func:`_cooccurrence_plan`) and record ρ
    public_keys = ("items",)
    public_key_labels = {"items": "selected items"}
    parameters = (
        Param("pop_share", "float", None, "share w of the Gaussian precision μ² given to the popularity "
              "release (the rest to the co-occurrence release); none = 0.5 with secure aggregation, 0.85 "
              "without", low=0, high=1, low_open=True, high_open=True, optional=True),
        Param("max_items", "int", 600, "items kept for the co-occurrence release (chosen from the DP "
              "popularity sum); bounds the M² message", low=2, high=5000),
        Param("local_blend", "bool", True, "round 2 keeps what the entity knows: its own NMF and popularity "
              "blended with the federation's parts (weights on a local hold-out)"),
        Param("holdout_evidence", "float", 1.0, "round 2 keeps the entity's own blend (as local fits it) unless "
              "the federation's parts beat it on the local hold-out by more than this many paired standard errors "
              "(0: the plain search)", low=0, high=10),
        Param("round2_default", "choice", "shrunk", "what an entity whose hold-out is too small for evidence keeps: "
              "'shrunk' (its popularity shrunk toward the federation's by empirical Bayes) or 'alone' (its own "
              "popularity, as local keeps)", choices=("shrunk", "alone")),
    )

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0, aggregation: str = "secure", pop_share: float | None = None,
                 max_items: int = 600, rank: int = 10, lam: float = 0.1, max_iter: int = 200,
                 local_blend: bool = True, holdout_evidence: float = 1.0, round2_default: str = "shrunk") -> None:
        super().__init__(value_max, epsilon, delta, max_dropouts, aggregation)
        self.round2_default = round2_default
        self.pop_share = pop_share
        self.max_items = max_items
        self.rank = rank
        self.lam = lam
        self.max_iter = max_iter
        self.local_blend = local_blend
        self.holdout_evidence = holdout_evidence

    # -------------------------------------------------------------- privacy map
    def check(self, n_entities: int) -> None:
        super().check(n_entities)
        if self.pop_share is not None and not (isinstance(self.pop_share, (int, float))
                                                and not isinstance(self.pop_share, bool) and 0 < self.pop_share < 1):
            raise ConfigError(f"pop_share must be strictly between 0 and 1, got {self.pop_share!r} "
                              "(e.g. pop_share=0.5)", param="prototype_params")
        if isinstance(self.max_items, bool) or not isinstance(self.max_items, (int, np.integer)) or self.max_items < 2:
            raise ConfigError(f"max_items must be a whole number ≥ 2, got {self.max_items!r} (e.g. max_items=600)",
                              param="prototype_params")

    def popularity_share(self) -> float:
        """The share w of the precision the popularity release gets: ``pop_share``, or by default
        :data:`POP_SHARE_SECURE` with secure aggregation and :data:`POP_SHARE_NONE` without."""
        if self.pop_share is not None:
            return float(self.pop_share)
        return POP_SHARE_SECURE if self.aggregation == "secure" else POP_SHARE_NONE

    def budget_split(self) -> BudgetSplit:
        return cooccurrence_split(self.popularity_share())

    def noise_spread(self, stage: str) -> float:
        # the co-occurrence share is divided by (1, √2·offdiag) after its noise: σ/√2 off the diagonal
        return 1.0 / math.sqrt(2.0) if stage == "co-occurrence" else 1.0

    def budget(self, n_entities: int) -> dict:
        """The calibrated noise (public): multipliers per release, the certified ε against the
        server and the coalition ε each entity's own shares give (zCDP and basic sums for reference)."""
        self.check(n_entities)
        return dict(_cooccurrence_plan(float(self.epsilon), float(self.delta), self.popularity_share(),
                                       self.share_divisor(n_entities)))

    def public_ahead(self, stage, n_items):
        if stage == "popularity":
            return {}
        if stage == "co-occurrence" and n_items <= self.max_items:
            # combine("popularity") keeps every item when there are at most max_items of them
            return {"items": np.arange(n_items)}
        return None

    def share_length(self, stage, n_items, public):
        if stage == "popularity":
            return int(n_items)
        if stage == "co-occurrence" and "items" in public:
            M = int(np.size(public["items"]))
            return M * (M + 1) // 2
        return None

    # -------------------------------------------------------------- round 1, entity side
    def share(self, X, rng, ledger, n_entities, stage="popularity", public=None):
        self.check(n_entities)
        if stage not in self.stages:
            raise ConfigError(f"dp-cooccurrence has stages {self.stages}, got {stage!r}")
        plan = self.budget(n_entities)
        Xn = _unit_rows(X, self.value_max)
        if stage == "popularity":
            values = np.asarray(Xn.sum(axis=0)).ravel()
            weight = 1.0
        else:
            items = np.asarray((public or {})["items"], dtype=np.int64)
            Xs = _unit_rows(_on_items(Xn, items), 1.0, copy=False)  # Xn itself or a copy: either is ours
            del Xn
            iu, weight = _packed_weights(items.size)
            values = (Xs.T @ Xs).toarray()[iu] * weight  # (diag, √2·offdiag): L2 norm = Frobenius
        private = math.isfinite(float(self.epsilon))
        sigma = plan["sigma"][stage]
        sigma_share = sigma / plan["divisor"]
        if not private:
            mech.gaussian_mechanism(values, 1.0, math.inf, 0.0, rng, ledger=ledger, stage=stage,
                                    mechanism="exact sums")
            return SummableShare(to_grid(values / weight), 0.0, math.inf, "non-private: exact sums")
        if self.aggregation == "secure":
            note = (f"noise share σ/√{plan['divisor'] ** 2:.0f} of a secure sum (σ={sigma:.4g}, ρ={plan['rho'][stage]:.4g});"
                    f" the two releases compose (zCDP, ρ adds up) to ε={plan['epsilon']:.4g} against the server; "
                    f"against the server with all other entities: ε={plan['coalition_epsilon']:.4g}, "
                    f"δ={self.delta:.3g}")
            mech_name = SECURE_SHARE
        else:
            note = (f"no secure aggregation: full σ={sigma:.4g} (ρ={plan['rho'][stage]:.4g}) on the entity's own "
                    f"release; the two releases compose (zCDP, ρ adds up) to ε={plan['epsilon']:.4g}")
            mech_name = "Gaussian (own release)"
        # (diag, √2·offdiag) has L2 sensitivity 1: the mechanism charges σ of the sum, draws the share
        noisy, _ = mech.gaussian_mechanism(values, 1.0, plan["stage_epsilon"][stage], self.delta / 2, rng,
                                           ledger=ledger, stage=stage, note=note, sigma=sigma,
                                           divisor=plan["divisor"], mechanism=mech_name)
        return SummableShare(to_grid(noisy / weight), sigma_share, plan["coalition_epsilon"], note)

    # -------------------------------------------------------------- server side
    def combine(self, stage, total, public, rng, n_participants):
        from dpfed_core.models.factorization import fit_nmf

        out = dict(public or {})
        total = np.asarray(total, dtype=np.float64)
        if stage == "popularity":
            m = total.size
            out["popularity"] = total
            if m > self.max_items:
                # DP choice of the items worth a dimension: post-processing of the charged release.
                items = np.sort(np.argsort(-total, kind="stable")[: self.max_items])
            else:
                items = np.arange(m)
            out["items"] = items
            return out
        items = np.asarray(out["items"])
        M = items.size
        m = out["popularity"].size
        C = unpack_symmetric(total, M)
        H = int(out.get("n_entities", n_participants))
        self.check_participants(n_participants, H)
        plan = self.budget(H)
        # Noise std of the sum on the (diag, √2·offdiag) scale: public (σ, the shares, who took part).
        sigma_sum = plan["sigma"]["co-occurrence"] / plan["divisor"] * math.sqrt(n_participants)
        w, Q = np.linalg.eigh(C)
        edge = math.sqrt(2.0 * M) * sigma_sum
        keep = w > edge
        out["kept_directions"] = int(keep.sum())
        out["noise_edge"] = edge
        V = np.zeros((m, self.rank))
        if keep.any():
            Cd = np.maximum((Q[:, keep] * w[keep]) @ Q[:, keep].T, 0.0)
            _, V_s, _ = fit_nmf(Cd, self.rank, self.lam, "zero", max_iter=self.max_iter, rng=rng)
            V[items] = V_s
        g = np.maximum(out["popularity"], 0.0)
        g = g / max(float(np.linalg.norm(g)), 1e-300)
        out["V"] = np.hstack([V, g[:, None]])
        return out

    def notes(self, public: dict) -> list[str]:
        if "kept_directions" not in public:
            return []
        return [f"server kept {public['kept_directions']} eigen-direction(s) of the co-occurrence sum "
                f"above the noise edge {public['noise_edge']:.3g}"]

    # -------------------------------------------------------------- round 2, entity side
    def broadcast_parts(self, n_columns):
        # V = [item factors of the denoised co-occurrence | unit DP popularity column]
        return slice(0, n_columns - 1), n_columns - 1

    def fit_local(self, X, public, lam, mode, rng):
        """Round 2 keeps what the entity knows (:func:`blended_round2`); ``local_blend=False``: the
        federation's parts only (factors on the broadcast V and the DP popularity, weights on the
        hold-out)."""
        return blended_round2(self, X, public, lam, mode, rng)


#: Key of round 2's public inputs saying the broadcast V was mapped onto the item names the site
#: knows (a DP-selected catalogue): the site's fit then masks the federation's parts by the items of
#: the rows each part is fitted on (:func:`~dpfed_core.models.blend.fit_site_model`, ``known_only``).
KNOWN_ONLY = "known_only"


def blended_round2(method: SummableMethod, X: sp.csr_matrix, public: dict, lam: float, mode: str,
                   rng: np.random.Generator):
    """Round 2 keeps what the entity knows, for any summable method: its users' scores
    blend the federation's parts — user factors on the broadcast item factors and the DP global
    popularity g (where :meth:`~SummableMethod.broadcast_parts` finds them in V) — with its own NMF
    (``method.rank``) and its own (exact, local) popularity and, with public item features, g smoothed
    over them, the entity's feature profile and a content model; weights chosen on a local hold-out
    by :func:`~dpfed_core.models.blend.fit_site_model` — the routine ``local`` is fitted with too (the
    search includes the entity alone, so the federation can only add to it on the hold-out). With a
    DP-selected catalogue ``public["V"]`` is already on the entity's own item axis (zero rows for the
    items the catalogue does not share), so every item the entity has rows for stays scored. ``method.local_blend`` False: the federation's
    parts only. Nothing leaves the entity; only ``public["V"]`` is read (what a deployed node gets).

    Nested evidence (:func:`~dpfed_core.models.blend.fit_blend`): an entity whose hold-out is large
    enough first chooses its own blend exactly as ``local`` does; the bar is the better on the hold-out
    of that blend and the shrunk default below, and the federation's parts enter only where the whole
    search beats the bar by more than ``method.holdout_evidence`` paired standard errors. A small
    entity's hold-out cannot tell a better blend from its own noise: it keeps the
    default, its own counts shrunk toward the federation's DP popularity by empirical Bayes
    (:func:`~dpfed_core.models.blend.shrunk_popularity`; ``round2_default="alone"``: its own
    popularity, as ``local``).

    Returns ``(U_h, L_h, U_loc_h)`` as :meth:`SummableMethod.fit_local`."""
    from dpfed_core.models.blend import fit_site_model

    V = np.asarray(public["V"], dtype=np.float64)
    fac, pop = method.broadcast_parts(V.shape[1])
    V_fed = V[:, fac] if fac is not None else None
    g = V[:, pop] if pop is not None else None
    g_norm = float(np.linalg.norm(g)) if g is not None else 0.0
    # the site's own stream (a function of its rows): the same hold-out and own model as ``local``
    matrix_names, item_names, info = fit_site_model(
        X, rank=int(method.rank), lam=lam, mode=mode, max_iter=int(method.max_iter), rng=None,
        evidence=float(method.holdout_evidence), features=method.public_item_features(), V_fed=V_fed, g=g,
        own=bool(method.local_blend), default_rule=str(getattr(method, "round2_default", "shrunk")),
        known_only=bool(public.get(KNOWN_ONLY, False)))
    n = X.shape[0]
    U_h = np.zeros((n, V.shape[1]))
    local_U, local_V = [], []
    for (kind, j), U_b, V_b in info["blocks"]:
        name = {"matrix": matrix_names, "item": item_names}.get(kind, [None] * (j + 1))[j]
        if name == "federation":
            U_h[:, fac] = U_b                 # on the broadcast item factors
        elif name == "dp popularity":
            # on the broadcast popularity column: the blend scored its unit vector
            U_h[:, pop] += U_b[:, 0] / g_norm if g_norm > 1e-300 else 0.0
        elif name == "shrunk popularity" and info.get("shrunk_parts") is not None:
            # unit(own + c·g): the site's own part a local column on its items, c·g on the broadcast column
            own_v, c = info["shrunk_parts"]
            U_h[:, pop] += U_b[:, 0] * c
            local_U.append(U_b)
            local_V.append(own_v[:, None])
        elif name is not None:
            local_U.append(U_b)               # the entity's own parts: local columns, never sent
            local_V.append(V_b)
    if local_U:
        return U_h, np.hstack(local_V), np.hstack(local_U)
    return U_h, None, None


def own_round2(method: SummableMethod, X: sp.csr_matrix, lam: float, mode: str,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """Round 2 when the federation shares nothing (an empty DP catalogue): the entity's own parts only,
    by the routine of :func:`blended_round2` — ``(U_loc, L)`` of its own columns, or None when the
    method's round 2 keeps no own parts (``local_blend`` False: every score is then 0)."""
    from dpfed_core.models.blend import blend_columns, fit_site_model

    if not method.local_blend:
        return None
    _, _, info = fit_site_model(X, rank=int(method.rank), lam=lam, mode=mode, max_iter=int(method.max_iter),
                                rng=None, evidence=float(method.holdout_evidence),
                                features=method.public_item_features())
    return blend_columns(info)
