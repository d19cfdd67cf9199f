"""Composition of a dataset's releases per entity, as the budget odometer charges them, with the
pinned accountants of ``dp-accounting`` (0.6.0) and OpenDP.

* ρ → (ε, δ): :func:`zcdp_epsilon_of_rho`, the tightest conversion the pinned libraries offer (the
  Canonne–Kamath–Steinke bound, by OpenDP's map and by dp-accounting's RDP conversion; the smaller).
* A non-adaptive batch of Gaussian releases (one sweep's points): :func:`batch_pld_epsilon`, the
  PLD accountant (its discretisation is pessimistic: it can only over-state ε).
* :func:`compose_releases`: per entity, the smaller of basic composition and zCDP, each a privacy
  filter valid under fully adaptive choice, each given half of the cap's δ.

The tests compare every path with an independent dp-accounting computation (tests/test_accounting.py).
"""
from __future__ import annotations

import functools
import math
from typing import Sequence

from dpfed_core.errors import ConfigError

# =============================================================================== across releases
# The odometer composes the *releases* of a dataset (runs, sweep points) per entity. The
# functions below are what it uses; their validity argument is in docs/PRIVACY.md ("Composition
# across releases") and in :func:`compose_releases`.

#: δ at which the odometer states a guarantee when the data owner set no cap (a usual cap δ).
REFERENCE_DELTA = 1e-5

#: Relative margin added to a ρ derived from σ/Δ: OpenDP's privacy map charges the rounding of its
#: float Gaussian onto the 2⁻⁴⁰ grid as an increase of the sensitivity (Δ + rounding); 1e-4 of ρ is
#: orders of magnitude above that increase for any vector of fewer than 10¹² coordinates.
RHO_MARGIN = 1e-4


def rho_of_gaussian(sigma: float, sensitivity: float = 1.0) -> float:
    """ρ (zCDP) of one Gaussian mechanism N(0, σ²) at L2 sensitivity Δ: ρ = Δ²/(2σ²) (Bun & Steinke
    2016, Prop. 1.6), plus :data:`RHO_MARGIN`. σ = 0 (no noise) gives inf."""
    sigma, sensitivity = float(sigma), float(sensitivity)
    if math.isnan(sigma) or math.isnan(sensitivity) or sensitivity < 0:
        raise ConfigError(f"a Gaussian mechanism needs σ ≥ 0 and Δ ≥ 0, got σ={sigma}, Δ={sensitivity}")
    if sensitivity == 0:
        return 0.0
    if sigma <= 0:
        return math.inf
    return sensitivity * sensitivity / (2.0 * sigma * sigma) * (1.0 + RHO_MARGIN)


def rho_of_pure(epsilon: float) -> float:
    """ρ of a pure ε-DP mechanism: ε²/2 (Bun & Steinke 2016, Prop. 1.4)."""
    return 0.5 * float(epsilon) ** 2


#: Rényi orders the dp-accounting conversion is evaluated at: the library's default grid plus a
#: dense geometric grid (orders up to 10⁶ matter for small ρ, where the library's grid is coarse).
_RDP_ORDERS = tuple(sorted({*[1 + x / 10.0 for x in range(1, 100)], *range(11, 64), 128, 256, 512, 1024,
                            *(float(a) for a in (1.0 + 10.0 ** (k / 40.0) for k in range(-80, 241)))}))


@functools.lru_cache(maxsize=8192)
def zcdp_epsilon_of_rho(rho: float, delta: float) -> float:
    """ε at ``delta`` of a ρ-zCDP mechanism by the tightest conversion the pinned libraries offer:
    the smaller of OpenDP's zCDP → (ε, δ) map (Canonne, Kamath & Steinke 2020, Prop. 12, optimised
    over the Rényi order; :func:`~dpfed_core.privacy.noise.zcdp_epsilon`) and ``dp-accounting``'s
    RDP conversion of the same bound over :data:`_RDP_ORDERS` (ρ-zCDP is (α, ρα)-RDP for every α).
    Both are valid upper bounds, so is their minimum. 0 for ρ = 0, inf for δ ∉ (0, 1) or ρ = inf.
    (The classic ρ + 2√(ρ ln 1/δ) states 4–46 % more ε.)"""
    rho, delta = float(rho), float(delta)
    if rho <= 0:
        return 0.0
    if math.isinf(rho) or not 0 < delta < 1:
        return math.inf
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    from dpfed_core.privacy.noise import zcdp_epsilon

    eps_rdp = float(compute_epsilon(_RDP_ORDERS, [rho * a for a in _RDP_ORDERS], delta)[0])
    return min(zcdp_epsilon(rho, delta), eps_rdp)


def ledger_rho(rows: Sequence) -> tuple[float | None, bool]:
    """(ρ, Gaussian-only) of one entity's ledger rows (dicts or :class:`LedgerRow`), or (None, False)
    when a row states no ρ of its own (OpenDP's map, recorded by the mechanism: Gaussian and
    exponential-mechanism rows) and is neither a Gaussian mechanism (ρ = Δ²/2σ² from its σ and Δ)
    nor pure ε-DP (δ = 0: ρ = ε²/2) — e.g. an approximate-DP selection — so the release can only
    compose basically.
    "Gaussian-only" (every row Gaussian) means the release is exactly μ-GDP with μ² = 2ρ, which the
    PLD of a non-adaptive batch uses."""
    rho, gaussian_only = 0.0, True
    for r in rows:
        get = r.get if isinstance(r, dict) else (lambda k, _r=r: getattr(_r, k))
        eps = float(get("epsilon"))
        dlt = float(get("delta") or 0.0)
        mech = str(get("mechanism") or "").lower()
        sens = float(get("sensitivity")) if get("sensitivity") is not None else math.nan
        scale = float(get("noise_scale")) if get("noise_scale") is not None else math.nan
        recorded = get("rho") if (isinstance(r, dict) and "rho" in r) or hasattr(r, "rho") else None
        recorded = float(recorded) if recorded is not None and recorded == recorded else None  # NaN: none
        if math.isinf(eps):
            return None, False
        if recorded is not None and math.isfinite(recorded):
            # the row's own ρ: OpenDP's map of the sampler that drew it (rounding included)
            rho += recorded
            gaussian_only = gaussian_only and "gaussian" in mech
        elif "gaussian" in mech and math.isfinite(sens) and math.isfinite(scale) and scale > 0 and sens >= 0:
            rho += rho_of_gaussian(scale, sens)
        elif dlt == 0.0:
            rho += rho_of_pure(eps)
            gaussian_only = False
        else:
            return None, False
    return rho, gaussian_only


#: Points of a batch with a larger ρ (ε ≳ 10 at δ = 1e-6) are added to its PLD basically: their
#: privacy-loss distributions are wide enough to make the accountant slow, and PLD gains little there.
PLD_MAX_RHO = 2.0


def _pld_batch(multipliers: tuple[float, ...], delta: float) -> float:
    return _pld_batch_cached(tuple(round(z, 9) for z in sorted(multipliers)), float(delta))


#: Discretisation of the batch PLD (coarser than :data:`PLD_DISCRETIZATION`: the odometer needs an
#: upper bound fast, and the PLD's pessimistic discretisation only over-states ε).
BATCH_PLD_DISCRETIZATION = 1e-2


@functools.lru_cache(maxsize=256)
def _pld_batch_cached(multipliers: tuple[float, ...], delta: float) -> float:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=BATCH_PLD_DISCRETIZATION)
    acc.compose(dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(z) for z in multipliers]))
    return float(acc.get_epsilon(delta))


def batch_pld_epsilon(rhos: Sequence[float], delta: float) -> float:
    """ε at ``delta`` of a *non-adaptive* batch of Gaussian-only releases of the given ρ's (each
    exactly μ-GDP with μ² = 2ρ, i.e. one Gaussian of multiplier z = 1/√(2ρ)), by the PLD accountant.
    Cached (one PLD per batch and δ: ~1 s)."""
    zs = tuple(1.0 / math.sqrt(2.0 * r) for r in rhos if r > 0)
    if not zs:
        return 0.0
    if any(math.isinf(r) for r in rhos):
        return math.inf
    return _pld_batch(zs, delta)


class ReleaseCharge:
    """One entry of an entity's account: a single release, or a non-adaptive batch (the points of
    one sweep, planned before any ran).

    epsilon, delta : its (ε, δ) for basic composition (a batch: the better of the summed (Σε, Σδ)
        and its PLD ε at the basic half of the cap's δ).
    rho : its ρ-zCDP, or None when it cannot be derived (composes basically only).
    """

    __slots__ = ("epsilon", "delta", "rho", "gaussian", "batch")

    def __init__(self, epsilon: float, delta: float, rho: float | None = None, gaussian: bool = False,
                 batch: str | None = None) -> None:
        self.epsilon, self.delta = float(epsilon), float(delta)
        self.rho = None if rho is None else float(rho)
        self.gaussian = bool(gaussian)
        self.batch = batch

    def __repr__(self) -> str:
        return f"ReleaseCharge(ε={self.epsilon:g}, δ={self.delta:g}, ρ={self.rho}, batch={self.batch})"


class Composition:
    """What an entity has spent, by both accountants (see :func:`compose_releases`)."""

    __slots__ = ("epsilon", "delta", "basic_epsilon", "basic_delta", "tight_epsilon", "rho", "accountant",
                 "n_entries")

    def __init__(self, epsilon, delta, basic_epsilon, basic_delta, tight_epsilon, rho, accountant, n_entries):
        self.epsilon, self.delta = epsilon, delta
        self.basic_epsilon, self.basic_delta = basic_epsilon, basic_delta
        self.tight_epsilon, self.rho = tight_epsilon, rho
        self.accountant, self.n_entries = accountant, n_entries

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


def basic_delta_within(basic_delta: float, delta: float) -> bool:
    """Basic composition's filter holds at the cap's ``delta``: its Σδ is within ``delta``/2 (the half
    of δ_cap it has; a relative slack for the floating-point sum). The one test every statement of a
    basic ε reads."""
    return basic_delta <= float(delta) / 2.0 * (1 + 1e-9) + 1e-300


def basic_delta_exceeded(comp: Composition, delta: float) -> bool:
    """True when ``comp`` (composed at the cap's ``delta``) has a basic Σδ above ``delta``/2: its
    ``basic_epsilon`` (Σε) is then no guarantee at that δ, and only zCDP can state one."""
    return comp.n_entries > 0 and not basic_delta_within(comp.basic_delta, delta)


#: The accountant as stated in `budget show`, result documents and the report.
ACCOUNTANT = ("per entity, the smaller of basic composition (Σε, Σδ ≤ δ/2; a sweep's points as one "
              "non-adaptive batch by PLD) and zCDP (Σρ, valid under fully adaptive choice; ε at δ/2), "
              "δ = the cap's δ")


def compose_releases(entries: Sequence[ReleaseCharge], delta: float = REFERENCE_DELTA) -> Composition:
    """An entity's spend over its releases at the cap's ``delta`` (δ_cap), valid when every release's
    ε (and the decision to make it at all) was chosen after seeing the results of the earlier ones.

    Two *privacy filters*, each valid under fully adaptive composition on its own, each given half
    of δ_cap:

    * **basic**: (Σ ε_i, Σ δ_i) with Σ δ_i ≤ δ_cap/2 (Rogers, Roth, Ullman & Vadhan 2016: basic
      composition is a valid filter). A non-adaptive batch (one sweep's points, all fixed before any
      ran) counts as *one* release; its ε is the smaller of Σ ε_i and — when every point is a pure
      Gaussian release — the PLD accountant's ε of the batch at the δ left of δ_cap/2 once every other
      release's δ is counted (shared among such batches; then its δ is that share).
      PLD is used for batches only: it composes mechanisms fixed in advance.
    * **zCDP**: ρ = Σ ρ_i, ε = :func:`zcdp_epsilon_of_rho` (ρ, δ_cap/2) — the tightest conversion of the
      pinned libraries, below the classic ρ + 2√(ρ ln(2/δ_cap)) of Bun & Steinke 2016. zCDP composes under
      fully adaptive parameter choice with a fixed budget (Whitehouse, Ramdas, Rogers & Wu 2023,
      "Fully-adaptive composition in differential privacy": zCDP filters are free) — "is Σρ within
      the ρ the cap allows" is such a filter. Every release must have a ρ: a Gaussian one from σ/Δ,
      a pure ε-DP one ε²/2; a release without one (an approximate-DP selection) makes this
      accountant ∞ for the entity (it then composes basically only) — conservative.

    The odometer lets a release through when *either* filter stays within the cap. The union of the
    two is (ε_cap, δ_cap)-DP: for any event S of transcripts, split S by which filter held at the
    end (each is a function of the transcript, and both accountants only grow): on the part where
    filter k held, the run coincides with filter k's own run, which is (ε_cap, δ_cap/2)-DP; the two
    δ/2 add up to δ_cap. Hence the stated charge is min(basic, zCDP) at δ_cap.
    """
    delta = float(delta)
    half = delta / 2.0
    # group batches
    singles: list[ReleaseCharge] = []
    batches: dict[str, list[ReleaseCharge]] = {}
    for e in entries:
        if e.batch:
            batches.setdefault(e.batch, []).append(e)
        else:
            singles.append(e)
    basic_e, basic_d = 0.0, 0.0
    rho, rho_ok = 0.0, True
    for e in singles:
        basic_e += e.epsilon
        basic_d += e.delta
        if e.rho is None:
            rho_ok = False
        else:
            rho += e.rho
    pld_used = False

    def pld_points(members: list[ReleaseCharge]) -> list[ReleaseCharge]:
        return [m for m in members if m.gaussian and m.rho is not None and m.rho <= PLD_MAX_RHO]

    # The basic filter's δ/2 is shared: every release composed basically keeps its own δ, and what is
    # left is split among the batches a PLD composes — a batch given the whole δ/2 would leave none to
    # any other release, and one more release with δ > 0 would make the filter's ε infinite.
    eligible = [b for b in batches.values() if len(pld_points(b)) > 1]
    fixed = sum(e.delta for e in singles) + sum(m.delta for b in batches.values() if len(pld_points(b)) <= 1
                                               for m in b)
    room = (half - fixed) / len(eligible) if eligible else 0.0
    for members in batches.values():
        se = sum(m.epsilon for m in members)
        sd = sum(m.delta for m in members)
        if all(m.rho is not None for m in members):
            rho += sum(m.rho for m in members)
        else:
            rho_ok = False
        gauss = pld_points(members)
        if len(gauss) > 1 and room > 0:
            # PLD over the batch's moderate Gaussian points, the rest (e.g. ε = 1000) added basically
            rest = [m for m in members if m not in gauss]
            d_rest = sum(m.delta for m in rest)
            if d_rest < room:
                pe = batch_pld_epsilon([m.rho for m in gauss], room - d_rest) + sum(m.epsilon for m in rest)
                if pe < se:
                    se, sd = pe, room
                    pld_used = True
        basic_e += se
        basic_d += sd
    n = len(singles) + len(batches)
    basic_valid = basic_delta_within(basic_d, delta)
    tight = zcdp_epsilon_of_rho(rho, half) if rho_ok else math.inf
    basic_for_min = basic_e if basic_valid else math.inf
    if n == 0:
        return Composition(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "none", 0)
    if tight < basic_for_min:
        acct = "zCDP"
        eps = tight
    else:
        acct = "basic" + (" + PLD batch" if pld_used else "")
        eps = basic_for_min
    return Composition(eps, delta if math.isfinite(eps) else delta, basic_e, basic_d, tight,
                       rho if rho_ok else None, acct, n)
