"""``dp-als``: federated user-level DP alternating least squares (Chien, Jain, Krichene, Rendle, Song,
Thakurta, Zhang, ICML 2021, "Private Alternating Least Squares"), as a summable method.

The item factors are the only thing the server learns; each site solves its own users' factors
exactly and locally, and releases per ALS step the sufficient statistics of the item solve, summed
across sites (securely, or each with full noise without secure aggregation):

1. *popularity* (stage ``popularity``): p_h = Σ_u x̃_u + Gaussian share, x̃_u the user's row clipped to
   [0, Λ∞] and scaled to ℓ2 = 1 (L2 sensitivity 1). Server: the ``max_items`` items of largest p̂ (a
   DP choice, post-processing) and the starting item factors V₀ on them — the unit DP popularity
   column followed by public pseudo-random columns (a fixed public seed: no data).
2. *ALS steps* ``als-1 … als-T``: each site fits its users on the broadcast V_{t−1}
   (the ridge solve of ‖x̃_S − V u‖² + λ‖u‖² projected on u ≥ 0 — the zero-mode objective on the
   selected items S), scales
   each non-zero u to ℓ2 = 1 (per-user clipping at its strictest: one user weighs one) and sends G_h = Σ_u u uᵀ (packed as (diag, √2·offdiag)) and B_h = Σ_u u x̃_Sᵀ, plus
   its Gaussian share. Sensitivity: one user adds u uᵀ (Frobenius ‖u‖² ≤ 1) and u x̃ᵀ (Frobenius
   ‖u‖·‖x̃‖ ≤ 1): Δ₂ = √2 on the concatenation. Server: Ĝ projected on the PSD cone,
   V_t = max((Ĝ + λ_t I)⁻¹ B̂, 0)ᵀ with λ_t = λ + 2√r·σ_sum (the spectral edge of the Gram's noise:
   the ridge absorbs what the noise adds); post-processing.

Privacy map: OpenDP's map of its float Gaussian (zCDP). ρ(ε, δ) — the largest total whose optimal
conversion is (ε, δ) — is split (:func:`als_split`): ``pop_share`` · ρ for the popularity release,
the rest evenly over the T ALS releases; each σ is the smallest whose map is ≤ its ρ. The ledger
composes the rows by adding ρ (valid adaptively: each step depends on the server's view of the
previous). Against the server with every other site only a site's own shares σ/√(H − d) protect it:
ρ·(H − d).

Round 2: V = [V_T on the item axis (0 off S) | unit DP popularity]; each site blends its factors on
V with its own model (:func:`~dpfed_core.federation.summable.blended_round2`). The statistics are
zero-mode (every cell observed) whatever the run's mode: the observed-mode item solve needs a Gram
matrix per item, m·r² numbers a step, which this method does not release.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import Param
from dpfed_core.errors import ConfigError
from dpfed_core.federation.summable import (SummableMethod, SummableShare, _on_items, _packed_weights,
                                            _unit_rows, register_summable_method, to_grid, unpack_symmetric)
from dpfed_core.privacy import mechanisms as mech
from dpfed_core.privacy.budget_split import BudgetSplit, split_by, split_evenly_over

#: The public seed of V₀'s pseudo-random columns (no data enters them).
INIT_SEED = 0xA15


def als_split(pop_share: float, steps: int) -> BudgetSplit:
    """dp-als's declared split: ``pop_share`` of ρ to the popularity release, the rest evenly over the
    ALS steps (:mod:`dpfed_core.privacy.budget_split`: zCDP, the rows' ρ add up to at most ρ(ε, δ))."""
    return split_by({"popularity": pop_share}) + split_evenly_over([f"als-{t + 1}" for t in range(steps)],
                                                                   share=1.0 - pop_share)


@functools.lru_cache(maxsize=256)
def _als_plan(epsilon: float, delta: float, pop_share: float, steps: int, divisor: float) -> dict:
    """σ and ρ of every release (a pure function of public parameters; module doc)."""
    names = ["popularity", *(f"als-{t + 1}" for t in range(steps))]
    sens = {n: (1.0 if n == "popularity" else math.sqrt(2.0)) for n in names}
    if math.isinf(epsilon):
        return {"sigma": {n: 0.0 for n in names}, "rho": {n: math.inf for n in names}, "sensitivity": sens,
                "epsilon": math.inf, "coalition_epsilon": math.inf, "divisor": divisor,
                "stage_epsilon": {n: math.inf for n in names}, "stage_delta": 0.0}
    plan = als_split(pop_share, steps).plan(epsilon, delta)
    return {"sigma": {n: plan.sigma(n, sens[n]) for n in names}, "rho": dict(plan.rho),
            "sensitivity": sens, "epsilon": plan.total_epsilon(), "divisor": divisor,
            "coalition_epsilon": plan.coalition_epsilon(divisor),
            # each release on its own at its share of δ: the rows' own (ε, δ), which basic composition adds up
            "stage_epsilon": {n: plan.stage_epsilon(n) for n in names}, "stage_delta": plan.stage_delta}


def _initial_factors(g: np.ndarray, rank: int) -> np.ndarray:
    """V₀ (M × rank): the unit DP popularity, then public pseudo-random non-negative columns."""
    M = g.size
    V = np.random.default_rng(INIT_SEED).uniform(0.0, 1.0, size=(M, rank)) / math.sqrt(max(M, 1))
    n = float(np.linalg.norm(g))
    if n > 1e-300:
        V[:, 0] = g / n
    return V


def _user_factors(X: sp.csr_matrix, V: np.ndarray, lam: float) -> np.ndarray:
    """The site's users on V — the ridge solve u = (VᵀV + λI)⁻¹ Vᵀ x̃ projected on u ≥ 0 — each non-zero
    row scaled to ℓ2 = 1: a user's direction, as its row x̃ is (every user weighs the same in the item
    solve, and one user moves the statistics by exactly the sensitivity the noise is calibrated for).
    Row by row in closed form: a user's factors depend on its own row and the public V only, never on
    how many other users there are (an iterative solve with a global stopping rule would let one user
    nudge everyone else's)."""
    r = V.shape[1]
    A = np.linalg.inv(V.T @ V + lam * np.eye(r))
    U = np.maximum(np.asarray(sp.csr_matrix(X) @ V) @ A, 0.0)
    norms = np.linalg.norm(U, axis=1)
    return U * np.where(norms > 1e-12, 1.0 / np.maximum(norms, 1e-300), 0.0)[:, None]


@register_summable_method("dp-als")
class DPALS(SummableMethod):
    """DP alternating least squares (Chien et al. 2021): item sufficient statistics summed across
    sites with per-user clipping, user factors solved at each site; see the module doc for the
    mechanism, its sensitivity and privacy map.

    Parameters
    ----------
    steps : int
        ALS steps T (one secure sum each). Default 3 (the budget is split evenly over them).
    pop_share : float
        Share of ρ for the popularity release. Default 0.3.
    max_items : int
        Items the item factors are learned on (the largest DP popularity). Default 600.
    rank, lam : int, float
        Latent factors and ridge penalty (from the run's configuration).
    local_blend, holdout_evidence : round 2's blend with the site's own model (as every summable method).
    """

    zcdp_budget = True
    public_keys = ("items", "V_als")
    public_key_labels = {"items": "selected items", "V_als": "item factors of the previous ALS step"}
    parameters = (
        Param("steps", "int", 3, "ALS steps (one secure sum each; the budget is split evenly)", low=1, high=20),
        Param("pop_share", "float", 0.3, "share of the zCDP budget for the popularity release", low=0, high=1,
              low_open=True, high_open=True),
        Param("max_items", "int", 600, "items the factors are learned on (largest DP popularity)", low=2, high=5000),
        Param("local_blend", "bool", True, "round 2 keeps what the entity knows (its own NMF and popularity "
              "blended with the federation's parts)"),
        Param("holdout_evidence", "float", 1.0, "z of round 2's one-standard-error rule", low=0, high=10),
        Param("round2_default", "choice", "shrunk", "what an entity too small for evidence keeps: 'shrunk' "
              "or 'alone' (see dp-cooccurrence)", choices=("shrunk", "alone")),
    )

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0, aggregation: str = "secure", steps: int = 3, pop_share: float = 0.3,
                 max_items: int = 600, rank: int = 10, lam: float = 0.1, max_iter: int = 200,
                 local_blend: bool = True, holdout_evidence: float = 1.0, round2_default: str = "shrunk") -> None:
        super().__init__(value_max, epsilon, delta, max_dropouts, aggregation)
        self.round2_default = round2_default
        self.steps = steps
        self.pop_share = pop_share
        self.max_items = max_items
        self.rank = rank
        self.lam = lam
        self.max_iter = max_iter
        self.local_blend = local_blend
        self.holdout_evidence = holdout_evidence

    @property
    def stages(self) -> tuple[str, ...]:
        return ("popularity", *(f"als-{t + 1}" for t in range(int(self.steps))))

    def check(self, n_entities: int) -> None:
        super().check(n_entities)
        for name, low in (("steps", 1), ("max_items", 2), ("rank", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ConfigError(f"dp-als: {name} must be a whole number ≥ {low}, got {v!r}", param="prototype_params")
        if not (isinstance(self.pop_share, (int, float)) and 0 < self.pop_share < 1):
            raise ConfigError(f"dp-als: pop_share must be strictly between 0 and 1, got {self.pop_share!r}",
                              param="prototype_params")

    def budget_split(self) -> BudgetSplit:
        return als_split(float(self.pop_share), int(self.steps))

    def budget(self, n_entities: int) -> dict:
        self.check(n_entities)
        return dict(_als_plan(float(self.epsilon), float(self.delta), float(self.pop_share), int(self.steps),
                              self.share_divisor(n_entities)))

    def share_length(self, stage, n_items, public):
        if stage == "popularity":
            return int(n_items)
        if "items" in public:
            r = int(self.rank)
            return r * (r + 1) // 2 + r * int(np.size(public["items"]))
        return None

    # -------------------------------------------------------------- round 1, site side
    def share(self, X, rng, ledger, n_entities, stage="popularity", public=None):
        self.check(n_entities)
        if stage not in self.stages:
            raise ConfigError(f"dp-als has stages {self.stages}, got {stage!r}")
        plan = self.budget(n_entities)
        Xn = _unit_rows(X, self.value_max)
        if stage == "popularity":
            values = np.asarray(Xn.sum(axis=0)).ravel()
            weight = np.ones_like(values)
        else:
            items = np.asarray(public["items"], dtype=np.int64)
            V = np.asarray(public["V_als"], dtype=np.float64)
            Xs = _on_items(Xn, items)
            U = _user_factors(Xs, V, float(self.lam))
            iu, w = _packed_weights(int(self.rank))
            G = (U.T @ U)[iu] * w                       # (diag, √2·offdiag): L2 norm = Frobenius
            B = np.asarray(sp.csr_matrix(Xs).T @ U).T.ravel()  # r × M, row-major
            values = np.concatenate([G, B])
            weight = np.concatenate([w, np.ones(B.size)])
        sigma = plan["sigma"][stage]
        sens = plan["sensitivity"][stage]
        if not math.isfinite(float(self.epsilon)):
            mech.gaussian_mechanism(values, sens, math.inf, 0.0, rng, ledger=ledger, stage=stage,
                                    mechanism="exact sums")
            return SummableShare(to_grid(values / weight), 0.0, math.inf, "non-private: exact sums")
        if self.aggregation == "secure":
            note = (f"noise share σ/√{plan['divisor'] ** 2:.0f} of a secure sum (σ={sigma:.4g}, ρ={plan['rho'][stage]:.4g}); "
                    f"the {len(self.stages)} releases compose (zCDP) to ε={plan['epsilon']:.4g} against the server; "
                    f"against the server with all other entities: ε={plan['coalition_epsilon']:.4g}, δ={self.delta:.3g}")
            name = "Gaussian share of a secure sum"
        else:
            note = (f"no secure aggregation: full σ={sigma:.4g} (ρ={plan['rho'][stage]:.4g}) on the entity's own release; "
                    f"the {len(self.stages)} releases compose (zCDP) to ε={plan['epsilon']:.4g}")
            name = "Gaussian (own release)"
        noisy, _ = mech.gaussian_mechanism(values, sens, plan["stage_epsilon"][stage], plan["stage_delta"], rng,
                                           ledger=ledger, stage=stage, note=note, sigma=sigma,
                                           divisor=plan["divisor"], mechanism=name)
        return SummableShare(to_grid(noisy / weight), sigma / plan["divisor"], plan["coalition_epsilon"], note)

    # -------------------------------------------------------------- server side
    def combine(self, stage, total, public, rng, n_participants):
        out = dict(public or {})
        total = np.asarray(total, dtype=np.float64)
        r = int(self.rank)
        if stage == "popularity":
            m = total.size
            items = (np.sort(np.argsort(-total, kind="stable")[: int(self.max_items)]) if m > self.max_items
                     else np.arange(m))
            out["popularity"] = total
            out["items"] = items
            out["V_als"] = _initial_factors(np.maximum(total[items], 0.0), r)
        else:
            H = int(out.get("n_entities", n_participants))
            self.check_participants(n_participants, H)
            plan = self.budget(H)
            items = np.asarray(out["items"])
            M = items.size
            k = r * (r + 1) // 2
            G = unpack_symmetric(total[:k], r)
            B = total[k:].reshape(r, M)
            # public: σ of the sum of the shares that took part
            sigma_sum = plan["sigma"][stage] / plan["divisor"] * math.sqrt(n_participants)
            w, Q = np.linalg.eigh(G)
            G = (Q * np.maximum(w, 0.0)) @ Q.T
            ridge = float(self.lam) + 2.0 * math.sqrt(r) * sigma_sum
            out["V_als"] = np.maximum(np.linalg.solve(G + ridge * np.eye(r), B), 0.0).T
            out["ridge"] = ridge
        if stage == self.stages[-1]:
            m = out["popularity"].size
            V = np.zeros((m, r))
            V[np.asarray(out["items"])] = out["V_als"]
            g = np.maximum(out["popularity"], 0.0)
            g = g / max(float(np.linalg.norm(g)), 1e-300)
            out["V"] = np.hstack([V, g[:, None]])
        return out

    def notes(self, public: dict) -> list[str]:
        if "ridge" not in public:
            return []
        return [f"dp-als: {int(self.steps)} ALS step(s) on {int(np.size(public['items']))} items; the last item solve "
                f"used ridge {public['ridge']:.3g} (λ plus the Gram noise's spectral edge); zero-mode statistics"]

    # -------------------------------------------------------------- round 2
    def broadcast_parts(self, n_columns):
        return slice(0, n_columns - 1), n_columns - 1
