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

*Observed mode* (a run with ``mode="observed"``: the loss is on the observed entries only, as the
paper's DPALS is). Each ALS step releases the item sufficient statistics *per item* j ∈ S:
G_j = Σ_{u: j∈Ω_u} a_u u uᵀ (packed as (diag, √2·offdiag)) and b_j = Σ_{u: j∈Ω_u} a_u x̂_uj u, with
x̂_uj = min(max(x_uj, 0), Λ∞)/Λ∞ ∈ [0, 1] the user's observed entries on S, u the user's factors on
V_{t−1} solved on its observed entries alone (u = (Σ_{j∈Ω_u} v_j v_jᵀ + λI)⁻¹ Σ_{j∈Ω_u} x̂_uj v_j,
projected on u ≥ 0 and scaled to ℓ2 = 1), and the per-user weight a_u = 1/√c_u, c_u = |Ω_u ∩ S|
(0 for a user without items on S). Sensitivity: one user adds, on each of its c_u items, a_u·u uᵀ
(Frobenius a_u‖u‖² ≤ a_u) and a_u·x̂_uj·u (ℓ2 ≤ a_u): Σ over its items ≤ c_u·2·a_u² = 2, so
Δ₂ = √2 on the concatenation — the same as the zero-mode release, so the same split and σ; u and a_u
depend on the user's own row and the public V and S only. Server: per item, Ĝ_j projected on the PSD
cone, v_j = max((Ĝ_j + λ_t I)⁻¹ b̂_j, 0) with the same λ_t (each Ĝ_j carries the same symmetric
Gaussian noise as the zero-mode Gram). A step is |S|·(r(r + 1)/2 + r) numbers instead of
r(r + 1)/2 + r·|S|: 65·|S| at rank 10. The weighting is a weighted least-squares item solve (a user
of many items weighs 1/√c_u on each); the zero-mode statistics are unweighted.

Measured (MovieLens 100K by ZIP, ``--mode observed``, secure, simulation noise, seeds 0–2; the shared
factors alone, ``local_blend=false``; the per-item statistics against zero-mode statistics in the
same observed-mode runs, paired mean ± sd): test RMSE −0.08 ± 0.05 at ε = 3 (inconclusive at
ε = 1: −0.004 ± 0.079), −0.84 without noise; MAR −0.017 ± 0.002 at ε = 3 and −0.019 ± 0.003 at ε = 1,
but +0.050 without noise (the observed loss does not learn which items a user rates, which MAR
rewards). With round 2's blend (the default) the sites keep their own parts: the two statistics give
runs within 0.0005 MAR of each other on seeds 0–4 by ZIP and by occupation.

Round 2: V = [V_T on the item axis (0 off S) | unit DP popularity]; each site blends its factors on
V with its own model (:func:`~dpfed_core.federation.summable.blended_round2`), in the run's mode.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import Param
from dpfed_core.errors import ConfigError
from dpfed_core.federation.summable import (SECURE_SHARE, SummableMethod, SummableShare, _on_items,
                                            _packed_weights, _unit_rows, register_summable_method, to_grid,
                                            unpack_symmetric)
from dpfed_core.models.ridge import ridge_inverse, ridge_solve
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
    A = ridge_inverse(V.T @ V + lam * np.eye(r))
    U = np.maximum(np.asarray(sp.csr_matrix(X) @ V) @ A, 0.0)
    norms = np.linalg.norm(U, axis=1)
    return U * np.where(norms > 1e-12, 1.0 / np.maximum(norms, 1e-300), 0.0)[:, None]


#: Users solved at a time by :func:`_observed_statistics` (each holds an r × r system: ~33 MB at rank 10).
OBSERVED_CHUNK_CELLS = 2 ** 22


def _observed_statistics(Xs: sp.csr_matrix, V: np.ndarray, lam: float, value_max: float) -> tuple[np.ndarray, np.ndarray]:
    """One site's observed-mode statistics on the selected items (module doc): ``(G, B)`` with G
    (|S| × r(r + 1)/2) the per-item weighted Grams packed as (diag, √2·offdiag) and B (|S| × r) the
    per-item weighted right-hand sides. Users are solved a chunk at a time, each on its own observed
    entries and the public V only."""
    Xs = sp.csr_matrix(Xs, dtype=np.float64)
    M, r = V.shape
    iu, w = _packed_weights(r)
    VV = (V[:, :, None] * V[:, None, :]).reshape(M, r * r)  # v_j v_jᵀ of every item, flattened
    G = np.zeros((M, iu[0].size))
    B = np.zeros((M, r))
    step = max(1, OBSERVED_CHUNK_CELLS // (r * r))
    for a in range(0, Xs.shape[0], step):
        block = Xs[a:a + step]
        x = sp.csr_matrix((np.clip(block.data, 0.0, value_max) / value_max, block.indices, block.indptr),
                          shape=block.shape)
        pattern = sp.csr_matrix((np.ones_like(block.data), block.indices, block.indptr), shape=block.shape)
        count = np.diff(block.indptr).astype(np.float64)
        A = np.asarray(pattern @ VV).reshape(-1, r, r) + lam * np.eye(r)
        U = np.maximum(ridge_solve(A, np.asarray(x @ V)[:, :, None])[:, :, 0], 0.0)
        norms = np.linalg.norm(U, axis=1)
        U *= np.where(norms > 1e-12, 1.0 / np.maximum(norms, 1e-300), 0.0)[:, None]  # ‖u‖ = 1 (or u = 0)
        weight = np.where(count > 0, 1.0 / np.sqrt(np.maximum(count, 1.0)), 0.0)  # a_u = 1/√c_u
        G += np.asarray(pattern.T @ (weight[:, None] * U[:, iu[0]] * U[:, iu[1]]))
        B += np.asarray(x.T @ (weight[:, None] * U))
    return G * w, B


def _item_solve(G: np.ndarray, B: np.ndarray, ridge: float) -> np.ndarray:
    """max((Ĝ₊ + ridge·I)⁻¹ B, 0) with Ĝ₊ the noisy Gram ``G`` (r × r, or a stack of them) projected on
    the PSD cone: the server's item solve (post-processing of the sums)."""
    w, Q = np.linalg.eigh(G)
    G = (Q * np.maximum(w, 0.0)[..., None, :]) @ np.swapaxes(Q, -1, -2)
    return np.maximum(ridge_solve(G + ridge * np.eye(G.shape[-1]), B), 0.0)


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

    noise_drawn_for_the_sum = True  # exact values + one Gaussian draw, ÷ public weights, to_grid

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
                 local_blend: bool = True, holdout_evidence: float = 1.0, round2_default: str = "shrunk",
                 mode: str = "zero") -> None:
        super().__init__(value_max, epsilon, delta, max_dropouts, aggregation)
        self.round2_default = round2_default
        self.mode = mode
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
        if self.mode not in ("zero", "observed"):
            raise ConfigError(f"dp-als: mode must be 'zero' or 'observed', got {self.mode!r}", param="mode")
        if not (isinstance(self.pop_share, (int, float)) and 0 < self.pop_share < 1):
            raise ConfigError(f"dp-als: pop_share must be strictly between 0 and 1, got {self.pop_share!r}",
                              param="prototype_params")

    def budget_split(self) -> BudgetSplit:
        return als_split(float(self.pop_share), int(self.steps))

    def noise_spread(self, stage: str) -> float:
        # an ALS step's packed Gram is divided by (1, √2·offdiag) after its noise: σ/√2 off the diagonal
        return 1.0 / math.sqrt(2.0) if stage.startswith("als-") else 1.0

    def budget(self, n_entities: int) -> dict:
        self.check(n_entities)
        return dict(_als_plan(float(self.epsilon), float(self.delta), float(self.pop_share), int(self.steps),
                              self.share_divisor(n_entities)))

    def share_length(self, stage, n_items, public):
        if stage == "popularity":
            return int(n_items)
        if "items" in public:
            r, M = int(self.rank), int(np.size(public["items"]))
            return (r * (r + 1) // 2 + r) * M if self.mode == "observed" else r * (r + 1) // 2 + r * M
        return None

    # -------------------------------------------------------------- round 1, site side
    def share(self, X, rng, ledger, n_entities, stage="popularity", public=None):
        self.check(n_entities)
        if stage not in self.stages:
            raise ConfigError(f"dp-als has stages {self.stages}, got {stage!r}")
        plan = self.budget(n_entities)
        if stage == "popularity":
            values = np.asarray(_unit_rows(X, self.value_max).sum(axis=0)).ravel()
            weight = np.ones_like(values)
        else:
            items = np.asarray(public["items"], dtype=np.int64)
            V = np.asarray(public["V_als"], dtype=np.float64)
            iu, w = _packed_weights(int(self.rank))
            if self.mode == "observed":  # the site's own values on the items, not its unit rows
                G, B = _observed_statistics(_on_items(sp.csr_matrix(X), items), V, float(self.lam),
                                            float(self.value_max))
                values = np.concatenate([G.ravel(), B.ravel()])
                weight = np.concatenate([np.tile(w, G.shape[0]), np.ones(B.size)])
            else:
                Xs = _on_items(_unit_rows(X, self.value_max), items)
                U = _user_factors(Xs, V, float(self.lam))
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
            name = SECURE_SHARE
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
            # public: σ of the sum of the shares that took part
            sigma_sum = plan["sigma"][stage] / plan["divisor"] * math.sqrt(n_participants)
            ridge = float(self.lam) + 2.0 * math.sqrt(r) * sigma_sum
            if self.mode == "observed":  # a Gram and a right-hand side per item: M solves of one column
                G, B = unpack_symmetric(total[:M * k].reshape(M, k), r), total[M * k:].reshape(M, r, 1)
                out["V_als"] = _item_solve(G, B, ridge)[:, :, 0]
            else:  # one Gram for every item: one solve of M columns
                out["V_als"] = _item_solve(unpack_symmetric(total[:k], r), total[k:].reshape(r, M), ridge).T
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
        return [f"dp-als: {int(self.steps)} ALS step(s) on {int(np.size(public['items']))} shared columns (items, or "
                "the public hash keys of item names where no catalogue was declared); the last item solve "
                f"used ridge {public['ridge']:.3g} (λ plus the Gram noise's spectral edge); "
                + ("observed-mode statistics (a Gram per item, users weighted 1/√(their items))"
                   if self.mode == "observed" else "zero-mode statistics")]

    # -------------------------------------------------------------- round 2
    def broadcast_parts(self, n_columns):
        return slice(0, n_columns - 1), n_columns - 1
