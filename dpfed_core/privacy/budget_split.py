"""A multi-stage release's budget, declared once: how its (ε, δ) is shared across its stages.

A method that releases several Gaussian sums one after the other (``stages``) must not let each stage
spend the whole (ε, δ): the ledger would refuse the second. Like OpenDP's ``split_evenly_over`` or a
declared list of fractions, the method states its split once (:func:`split_evenly_over`,
:func:`split_by`, or their sum ``+``), and each stage then calibrates and charges its share
(:meth:`SplitPlan.sigma`, :meth:`SplitPlan.stage_epsilon`, :attr:`SplitPlan.stage_delta`).

Privacy meaning (zCDP, the accounting the ledger applies to Gaussian rows): the method's budget is
ρ = ρ*(ε, δ), the largest ρ whose OpenDP conversion is (ε, δ)
(:func:`~dpfed_core.privacy.noise.zcdp_rho_for_epsilon`); stage s gets the fraction w_s of it, and its
σ is the smallest whose OpenDP map is ≤ w_s·ρ for a vector of any size. The ledger composes the
stages' Gaussian rows by adding their ρ — valid when each stage depends on what earlier stages
released (Bun & Steinke 2016, Lemma 2.3) — so with Σ w_s ≤ 1 the stages together are ρ-zCDP, hence
(ε, δ)-DP. Each row also states its own (ε_s, δ_s): δ_s = δ / (number of stages), ε_s the conversion
of w_s·ρ at δ_s; those add up (basic composition) to more than ε, so the split is for stages that
release by the Gaussian mechanism only: a stage releasing by a mechanism without a ρ (Laplace,
exponential) composes by basic composition and needs its own (ε_s, δ_s) split by hand.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Mapping

from dpfed_core.errors import ConfigError

#: Relative slack on the sum of the fractions (0.1 + 0.2 + 0.7 is not exactly 1 in floating point).
_SUM_TOL = 1e-9


@dataclass(frozen=True)
class BudgetSplit:
    """Fractions of a method's zCDP budget ρ(ε, δ), one per stage, in stage order.

    ``parts``: ``(stage, share, count)`` — the stage gets ``share · ρ / count`` (a group of ``count``
    stages splitting ``share`` evenly; ``count`` is kept apart from ``share`` so that the product is
    computed in that order, the same float whichever way the split was written)."""

    parts: tuple[tuple[str, float, int], ...]

    def __post_init__(self) -> None:
        stages = [p[0] for p in self.parts]
        if len(set(stages)) != len(stages):
            raise ConfigError(f"a budget split names a stage twice: {stages}")
        for stage, share, count in self.parts:
            if not (isinstance(share, (int, float)) and 0 < share <= 1 and count >= 1):
                raise ConfigError(f"stage {stage!r}: a budget share must be in (0, 1], got {share!r}")
        total = sum(self.fractions().values())
        if total > 1 + _SUM_TOL:
            raise ConfigError(f"a budget split's shares add up to {total:.6g} > 1: {dict(self.fractions())}")

    def __add__(self, other: "BudgetSplit") -> "BudgetSplit":
        return BudgetSplit(self.parts + other.parts)

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(p[0] for p in self.parts)

    def fractions(self) -> dict[str, float]:
        """Each stage's fraction w_s of ρ."""
        return {stage: share / count for stage, share, count in self.parts}

    def check_stages(self, stages: Iterable[str]) -> None:
        """A :class:`ConfigError` unless the split names exactly ``stages`` (a method's ``stages``)."""
        stages = tuple(stages)
        if set(stages) != set(self.stages):
            raise ConfigError(f"the budget split covers stages {self.stages}, the method has {stages}")

    def plan(self, epsilon: float, delta: float) -> "SplitPlan":
        """Each stage's ρ, (ε_s, δ_s) and σ at the method's (ε, δ) (cached: every entity and the server
        compute the same plan)."""
        return _plan(self, float(epsilon), float(delta))


def split_evenly_over(stages: Iterable[str], share: float = 1.0) -> BudgetSplit:
    """``share`` of the budget split evenly over ``stages`` (OpenDP's ``split_evenly_over``)."""
    stages = tuple(stages)
    if not stages:
        raise ConfigError("a budget split needs at least one stage")
    return BudgetSplit(tuple((s, float(share), len(stages)) for s in stages))


def split_by(fractions: Mapping[str, float]) -> BudgetSplit:
    """Declared fractions of the budget per stage, e.g. ``{"popularity": 0.3, "pairs": 0.7}``."""
    return BudgetSplit(tuple((s, float(w), 1) for s, w in fractions.items()))


@dataclass(frozen=True)
class SplitPlan:
    """A split evaluated at one (ε, δ): what each stage calibrates and charges (module doc)."""

    split: BudgetSplit
    epsilon: float
    delta: float
    rho_total: float
    rho: dict[str, float]
    stage_delta: float

    def _rho_of(self, stage: str) -> float:
        if stage not in self.rho:
            raise ConfigError(f"stage {stage!r} has no share of the budget; the split covers {self.split.stages}")
        return self.rho[stage]

    def sigma(self, stage: str, sensitivity: float) -> float:
        """The smallest σ whose OpenDP float-Gaussian map at L2 ``sensitivity`` is ≤ the stage's ρ, on
        a vector of any size (0 when non-private)."""
        from dpfed_core.privacy.noise import gaussian_float_sigma_for_rho

        return gaussian_float_sigma_for_rho(self._rho_of(stage), float(sensitivity))

    def stage_epsilon(self, stage: str) -> float:
        """The stage's own ε at :attr:`stage_delta`: the conversion of its ρ (what its row states)."""
        from dpfed_core.privacy.noise import zcdp_epsilon

        rho = self._rho_of(stage)
        return math.inf if math.isinf(rho) else zcdp_epsilon(rho, self.stage_delta)

    def total_epsilon(self) -> float:
        """ε of all the stages together: the conversion of the whole ρ at δ."""
        from dpfed_core.privacy.noise import zcdp_epsilon

        return math.inf if math.isinf(self.rho_total) else zcdp_epsilon(self.rho_total, self.delta)

    def coalition_epsilon(self, divisor: float) -> float:
        """ε of all the stages against the server with every other entity under secure aggregation:
        only the entity's own shares σ/divisor protect it, ρ·divisor²."""
        from dpfed_core.privacy.noise import zcdp_epsilon

        if math.isinf(self.rho_total):
            return math.inf
        if divisor > 1:
            return zcdp_epsilon(self.rho_total * divisor * divisor, self.delta)
        return zcdp_epsilon(self.rho_total, self.delta)


@functools.lru_cache(maxsize=256)
def _plan(split: BudgetSplit, epsilon: float, delta: float) -> SplitPlan:
    from dpfed_core.privacy.noise import zcdp_rho_for_epsilon

    if math.isinf(epsilon):
        return SplitPlan(split, epsilon, delta, math.inf, {s: math.inf for s in split.stages}, 0.0)
    rho = zcdp_rho_for_epsilon(epsilon, delta)
    return SplitPlan(split, epsilon, delta, rho, {s: share * rho / count for s, share, count in split.parts},
                     delta / len(split.parts))
