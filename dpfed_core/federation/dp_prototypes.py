"""``dp-prototypes``: differentially private prototypes of one entity (SPEC §2; paper Alg. 1, 3, 4, 6;
Balcan et al. 2017).

Pipeline for one entity with budget (ε, δ), every stage spending through the entity's ledger view:

0. *size*       n̂ = n + Lap(1/ε_n), only when something is derived from n: the projection
                dimension p, and/or (``cluster_size``) the number of clusters
                k_eff = clip(⌊n̂ / cluster_size⌋, 1, k). Both are functions of the released n̂ only
                (post-processing); the later stages are planned adaptively on n̂, which basic
                sequential composition allows. With k_eff = 1 the clustering stages are skipped and
                their shares go to the recovery.
1. *project*    (free) clip entries to [value_min, value_max]; scale rows (``row_scaling``): "clip"
                scales a row down to ℓ2 ≤ Λ (``row_norm``), "normalise" scales every non-empty row
                to ℓ2 = Λ exactly (each user's new row depends on that user's row only, so one user
                still adds one vector of norm ≤ Λ: L2 sensitivity Λ, count sensitivity 1);
                Y = X Gᵀ/√p with G ~ N(0,1)^{p×m} (data independent); clip rows of Y to ℓ2 ≤ Λ.
2. *candidates* private partition of the Λ-cube, on one unshifted and ``n_grids − 1`` randomly
                shifted grids; per level a non-empty cube with c users is kept with probability f(c)
                (:func:`~dpfed_core.privacy.mechanisms.partition_keep_probability`). Each grid level costs ε'
                (one count changes by 1) and δ₁ = f(1) (a cube that only the added user creates);
                γ is set so that Σ_tests f(1) = δ_cand exactly. Cells are found by integer cell
                codes and :func:`numpy.unique`; the 2^p children are never enumerated.
3. *search*     private local search (Alg. 6): start from k candidates; each of T steps picks one
                swap (centre a → candidate c, or no swap) with the exponential mechanism on the
                clipped loss L(Z) = Σ_i min(min_z ‖y_i − z‖², 4Λ²); all k·|C| swaps of a step are
                scored at once from the n × |C| distance matrix; then one of Z⁽⁰⁾..Z⁽ᵀ⁾ is chosen by
                the exponential mechanism. Adding a user raises every L by a value in [0, 4Λ²]: the
                utilities are *monotone*, so sampling ∝ exp(−ε·L/(4Λ²)) is ε-DP (no factor 2).
4. *assign*     (free) each user to its nearest chosen centre in the projected space.
5. *recover*    per cluster j: ñ_j = n_j + Lap(1/ε_cnt); ``variant="paper"``: support = one-shot
                Gumbel top-s of the cluster **sums** (per-coordinate sensitivity Λ∞, monotone for
                non-negative data), Laplace(s·Λ∞/ε_sum) on the s selected sums;
                ``variant="gaussian"``: sums of the scaled rows (norm ≤ Λ) + N(0, σ²I) on *all* m
                coordinates, σ from the analytic Gaussian mechanism at L2 sensitivity Λ; then (free
                post-processing with public quantities only) noisy sums with |·| < τσ set to 0
                (``threshold`` τ) and, if s < m, top-s of the noisy means. Prototype = clip(noisy sum / max(ñ_j, 1), value_min, value_max),
                zero off the support. Noise never depends on a true count. Clusters are disjoint,
                so the k recoveries compose in parallel.
2–3'. *lsh*    (``candidates="lsh"``) instead of stages 2–3: a private LSH prefix-tree
                coreset (tree counts: stage "candidates", Laplace per level; leaf sums: stage
                "coreset sums", Gaussian) and non-private k-means on the weighted coreset
                (post-processing), in the space of the scaled rows; the k-means centres are the
                prototypes, or with R > 0 DP-Lloyd steps the start of R recoveries (R =
                ``refine_steps``, or by default the rule :func:`default_refine_steps` of the public
                parameters and the tree's released root count).
                With the Gaussian recovery the leaf sums and the R Lloyd sums share one zCDP
                budget (:func:`lsh_lloyd_split`; accounting in ``DPPrototypes._release_lsh``).
                Privacy map beside the code: :mod:`dpfed_core.federation.coresets`.
6. *optional*   ``refine_steps`` DP-Lloyd steps (re-assign in the original space to the current
                prototypes, recover again; every recovery is charged); ``trials`` independent runs
                of stages 2–5 and an exponential-mechanism choice between them on the clipped loss.

The mechanisms of stages 2, 3 and 5, each with its sensitivity and privacy map, are in
:mod:`dpfed_core.federation.prototype_mechanisms`; this module plans the budget over the stages,
checks the public parameters and composes the stages.

Privacy: by basic sequential composition the entity's release is (Σ ε_stage, Σ δ_stage)-DP with
respect to adding or removing one of its users; the ledger holds one row per stage and refuses any
overspend. ``epsilon = inf`` runs the non-private limit of the same pipeline (no noise, argmax
choices, cubes kept iff they hold ≥ n/(4k) users) and records ε = inf rows.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import scipy.sparse as sp

from dpfed_core.federation import coresets
from dpfed_core.privacy import mechanisms as mech
from dpfed_core.config import Param
from dpfed_core.privacy.budget_split import BudgetSplit
from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import EntityLedger
from dpfed_core.federation.prototype_mechanisms import (clip_rows, clipped_loss, cluster_indicator, nearest_centre,
                                                        partition_plan, private_local_search, private_partition,
                                                        recover_gaussian, recover_paper, row_normalise_sparse,
                                                        row_scale_sparse, search_plan, sq_dists)
from dpfed_core.federation.prototypes import (UNKNOWN_CATALOGUE_SIZE, PrototypeMethod, PrototypeRelease,
                                             register_prototype_method)

#: Default shares of ε per stage (normalised over the stages that run; see ``DPPrototypes.split``).
#: Chosen by measurement: the search needs enough ε to beat its own noise (bench/results/dp_kmeans.md:
#: moving share from search to sums made the loss worse); "counts" is small because a count only
#: scales a prototype, so ε buys more on the sums (bench/results/dp_prototypes_defaults.md).
DEFAULT_SPLIT: dict[str, float] = {
    "size": 0.02,
    "candidates": 0.18,
    "search": 0.30,
    "counts": 0.02,
    "support": 0.15,
    "sums": 0.25,
    "choice": 0.05,
}
#: Share of δ for the candidate stage in the Gaussian variant (the rest goes to the Gaussian sums).
DEFAULT_DELTA_CANDIDATES = 0.5

#: The ledger's stage name of each key of :meth:`DPPrototypes.budget_plan`: the names the stages'
#: mechanisms record, which a plan shown before a run must use so that it reads against the ledger.
STAGE_NAMES: dict[str, str] = {
    "size": "size",
    "candidates": "candidates",
    "search": "local search",
    "counts": "recovery: counts",
    "support": "recovery: support",
    "sums": "recovery: sums",
    "choice": "trial choice",
}
#: With the LSH coreset's candidates (k > 1) the "search" share pays the coreset's leaf sums.
LSH_STAGE_NAMES: dict[str, str] = {**STAGE_NAMES, "search": "coreset sums"}


# ------------------------------------------------------------------------ configuration
def default_projection_dim(n_hat: float) -> int:
    """p = round(0.5·ln n̂) clipped to [3, 10] (see ``DPPrototypes.projection_dim``)."""
    return int(np.clip(round(0.5 * math.log(max(n_hat, 2.0))), 3, 10))


#: The most DP-Lloyd steps :func:`default_refine_steps` runs.
MAX_REFINE_STEPS = 5
#: The noise :func:`default_refine_steps` allows one step: √m·σ_R / (n̂/k) — the norm of the noise a
#: step adds to a centre of n̂/k users — at most this fraction of the row bound Λ.
STEP_NOISE_RATIO = 0.03


def default_refine_steps(epsilon: float, delta: float, k: int, m: int, row_norm: float,
                         n_hat: float | None = None, step_sigma: Callable[[int], float] | None = None) -> int:
    """R, the DP-Lloyd steps after the LSH coreset when ``refine_steps=None``.

    0 for ε < 1. From ε = 1 on (and in the non-private limit): the most steps R ≤
    :data:`MAX_REFINE_STEPS` whose per-step noise on a centre of average size stays small,
    √m·σ_R·k / (n̂·Λ) ≤ :data:`STEP_NOISE_RATIO`, and at least 1 — σ_R the σ of each step's sums
    when R steps share the Lloyd budget (``step_sigma(R)``, a function of the parameters), n̂ the
    LSH tree's released root count. Without n̂ (before the tree is grown) the floor: 0 or 1.
    Inputs: public parameters and one released count, never the data.

    Why (development draws only — Google's recipe, the held-out family and a wide isotropic mixture
    at generator seeds ≥ 7000, 2 noise seeds; bench/results/dp_kmeans_rule.md): a step re-averages
    the clusters with fresh Gaussian noise; it pays while the clusters are still moving (the wide
    mixtures gain with every step up to 5 from ε = 1 on) and costs once the noise it adds to a
    centre is no longer small against the data's scale (the k = 64 sets of a few hundred users a
    cluster: held-out family, ε = 3, 0.46 with one step, 0.52 with two). Measured by the noise a
    step adds to a centre of n̂/k users: on the wide mixtures five steps were best wherever each cost
    less than about 3 % of Λ; on the tight-cluster sets one step was best everywhere, and where
    further steps cost that little they lost little (Google's recipe, k = 10, ε = 1: 0.0174 with
    five against 0.0158 with one, the grid's largest loss of the rule from ε = 1) while dearer ones
    lost much (held-out family, k = 64, ε = 3: five steps 0.73). 0.03 was read off that grid; a
    rule of ε alone (0 / 1 / 2 steps for ε < 1 / < 3 / ≥ 3) loses up to 14.7 % on it from ε = 1
    (the rule of noise: 10.2 %). At ε < 1 a step made every k = 64 set worse (Google's recipe
    0.38 → 0.53).
    """
    if epsilon < 1.0:
        return 0
    if n_hat is None or step_sigma is None:
        return 1
    size = max(float(n_hat), 1.0) / max(int(k), 1)
    best = 1
    for steps in range(2, MAX_REFINE_STEPS + 1):
        if math.sqrt(m) * step_sigma(steps) / (size * float(row_norm)) <= STEP_NOISE_RATIO:
            best = steps
    return best


def lsh_lloyd_split(steps: int, lloyd_share: float) -> BudgetSplit:
    """The zCDP split of the Gaussian releases of ``candidates="lsh"`` with R = ``steps`` DP-Lloyd
    steps: the leaf sums ("coreset sums") get 1 − w of ρ (w = ``lloyd_share``), each step
    ("lloyd sums r", r = 1..R) w/R. Every stage's row states (ε_s, δ/(R+1)) with ε_s the conversion
    of its ρ; the ledger composes the rows by ρ (:mod:`dpfed_core.privacy.budget_split`)."""
    R, w = int(steps), float(lloyd_share)
    return BudgetSplit((("coreset sums", 1.0 - w, 1),)
                       + tuple((f"lloyd sums {r + 1}", w, R) for r in range(R)))


# --------------------------------------------------------------------------- the method
def _no_rows(n_items: int | None) -> sp.csr_matrix:
    """A catalogue of ``n_items`` columns without a row, for what reads a release's shape only (its public
    bounds, its parameter checks); None: the size is not known yet, so a bound that grows with it is taken
    at its largest (:data:`~dpfed_core.federation.prototypes.UNKNOWN_CATALOGUE_SIZE`)."""
    return sp.csr_matrix((0, UNKNOWN_CATALOGUE_SIZE if n_items is None else max(int(n_items), 1)))


@register_prototype_method("dp-prototypes")
class DPPrototypes(PrototypeMethod):
    """Differentially private prototypes (SPEC §2): user-level (ε, δ)-DP, unbounded neighbours.

    Defaults, and why (the measurements that chose them are on bench/results/dp_ml.md, made by
    bench/bench_dp_ml.py, and bench/results/dp_kmeans.md):

    * ``variant="paper"`` is the default, as SPEC §2 asks: the paper's Gumbel top-s support and
      Laplace sums. Its L1 sensitivity s·Λ∞ buries sums of tens of users, so it is no better than a
      random V on the data measured; the ``gaussian`` variant is registered as its own method,
      ``dp-gaussian`` (:class:`DPGaussianPrototypes`), which the dashboard and the sweep use.
    * ``support=None``: every coordinate in the Gaussian variant — items outside every prototype's
      support would get zero V rows and tie in the ranking.
    * ``row_scaling="normalise"``: every user spends the full sensitivity Λ, heavy and light users
      count alike; the scale is absorbed by round 2.
    * ``threshold=0``: zeroing noisy sums below τσ removes real mid-popularity items along with the
      noise; negative noisy means are still clipped to 0.
    * ``cluster_size=1000``: k_eff = clip(⌊n̂/1000⌋, 1, k). A cluster's sum must clearly exceed the
      noise energy σ²·m before splitting pays, so small entities are best served by one cluster.
    * Clustering stages (k_eff > 1) keep ``n_grids=3, depth=5`` and no DP-Lloyd step; as a DP k-means
      on large entities ``candidates="lsh"`` (a private LSH-tree coreset) is the better choice, and
      with it ``refine_steps=None`` adds 0 to 5 DP-Lloyd steps by the public rule
      :func:`default_refine_steps` (none below ε = 1, then as many, up to 5, as keep each step's
      noise on a centre small).

    Parameters
    ----------
    k : int, default 50
        Prototypes per entity (the maximum, when ``cluster_size`` is set).
    value_max : float, default 1.0
        Λ∞, public upper bound of one value (entries are clipped to it). Never read off the data.
    value_min : float, default 0.0
        Public lower bound of one value (must be ≤ 0, since absent interactions are zeros).
    epsilon : float, default 1.0
        This entity's ε for the whole release. ``inf`` = non-private limit (labelled so).
    delta : float, default 1e-6
        This entity's δ (> 0 is required by the candidate stage and the Gaussian sums unless ε = inf).
    row_norm : float or None, default None
        Λ, public ℓ2 bound of a row (rows are scaled to it before projection and clustering; the
        Gaussian variant's sensitivity). ``None`` → value_max·√min(m, 64) (or value_max·√support
        when ``support`` is given).
    row_scaling : {"normalise", "clip"}, default "normalise"
        "normalise": every non-empty row scaled to ℓ2 = Λ; "clip": rows scaled down to ℓ2 ≤ Λ (use
        it when the rows' norms carry information, e.g. points inside a ball). Sensitivity Λ either way.
    support : int or None, default None
        s, non-zeros kept per prototype. ``None`` → all m items (Gaussian) or min(m, 64) (paper).
        If s ≥ m the support is all items and costs nothing.
    threshold : float, default 0.0
        τ (Gaussian variant): noisy sums with magnitude below τ·σ are set to 0 (post-processing).
    cluster_size : float or None, default 1000
        Target users per cluster for the automatic k (see above); needs the size stage.
    projection_dim : int or None, default None
        p. ``None`` → p = clip(round(0.5·ln n̂), 3, 10) from a noisy size n̂ (the authors' reference
        code's ⌊0.5 log n⌋, measured best: bench/results/dp_kmeans.md); n̂ costs the "size" share.
        Giving p (and ``cluster_size=None``) skips the size stage.
    split : dict or None
        Shares of ε per stage, keys ``size``, ``candidates``, ``search``, ``counts``, ``support``,
        ``sums``, ``choice`` (missing keys take :data:`DEFAULT_SPLIT`); renormalised over the
        stages that actually run (e.g. ``support`` is dropped for the Gaussian variant or s ≥ m,
        ``choice`` when trials = 1, ``size`` when nothing uses n̂; with an automatic k = 1 the
        size stage keeps the share it has in the plan for k and the rest goes to the recovery).
        ``delta_candidates`` (Gaussian variant only) is the share of δ for the candidate stage,
        default 0.5 (not used with ``candidates="lsh"``: its tree counts need no δ, and its Gaussian
        releases share one zCDP budget converted at the whole δ).
    variant : {"paper", "gaussian"}, default "paper"
        Recovery mechanism: ℓ2-scaled Gaussian sums, or the paper's Gumbel top-s + Laplace sums.
    search_steps : int or None, default None
        T steps of the local search. ``None`` → k.
    final_choice : bool, default True
        Choose among the T local-search solutions with the exponential mechanism (paper Alg. 6,
        line 8; costs 1/(T+1) of the search share) instead of keeping the last one.
    refine_steps : int or None, default None
        DP-Lloyd steps after the first recovery; each recovery gets an equal part of the
        counts/support/sums shares (with ``candidates="lsh"`` and the Gaussian recovery an equal
        part of the Lloyd share of one zCDP budget, :func:`lsh_lloyd_split`). ``None``: 0 with
        ``candidates="partition"``; with ``"lsh"`` and the Gaussian recovery the public rule
        :func:`default_refine_steps` (0 for ε < 1, else 1 to 5 by the noise a step adds), else 0.
    (With k = 1 — given or automatic — every user is in the one cluster: the candidate, search
    and choice stages are skipped, trials and refine_steps are ignored, and the budget goes to the
    recovery — the best setting for small entities, see bench/results/dp_ml.md.)
    trials : int, default 1
        Independent runs of stages 2–5 (each with 1/trials of their shares), one chosen by the
        exponential mechanism on the clipped loss (share ``choice``).
    n_grids : int, default 3
        Grids of the private partition (1 unshifted + n_grids − 1 shifted).
    depth : int, default 5
        Levels tested per grid.
    max_candidates : int, default 1000
        Cap on |C| for the local search (finest cubes kept first; post-processing).
    candidates : {"partition", "lsh"}, default "partition"
        Stages 2–3: the paper's private partition + private local search, or a private LSH-tree
        coreset + k-means on it (:mod:`~dpfed_core.federation.coresets`; Google's DP clustering
        approach). "lsh" reaches a clearly lower normalised loss than "partition" on Google's recipe
        (bench/results/dp_kmeans.md). With "lsh" the shares
        ``candidates`` (tree counts) and ``search`` (leaf sums) default to 0.25 / 0.75 of the
        clustering budget (:data:`~dpfed_core.federation.coresets.LSH_SPLIT`); ``trials`` must be
        1; ``refine_steps`` = R > 0 adds R DP-Lloyd recoveries after the coreset's k-means.
    lsh_depth : int or None, default None
        Hash bits (tree levels below the root) for ``candidates="lsh"``; ``None``: the public rule
        :func:`~dpfed_core.federation.coresets.default_depth` (10 for ε < 1, else 15).
    lsh_node_factor : float, default 3
        A tree node is kept if its noisy count ≥ lsh_node_factor·√m·σ/Λ (σ the leaf-sum noise),
        or ≥ the cap below if that is smaller.
    lsh_node_cap : float or None, default 2
        Caps the keep threshold at n̂/(lsh_node_cap·k), n̂ the tree root's noisy count (branching at
        :data:`~dpfed_core.federation.coresets.BRANCH_FACTOR` times it), so that at small ε the
        tree still reaches clusters of the size n/k — lowered further, down to
        n̂/(1.5·lsh_node_cap·k), while it stays above the scale of one tree count's noise
        (:func:`~dpfed_core.federation.coresets.capped_thresholds`); ``None``: no cap.

    Attributes (after ``release``)
    ----------
    p_ : projection dimension used. n_hat_ : noisy size (or None). k_ : number of clusters used.
    candidates_ : (M, p) candidates.
    centres_ : (k, p) chosen centres in the projected space. labels_ : final cluster of each user.
    counts_ : noisy counts released. spend_ : list of (stage, ε, δ) spent by this call.
    """

    private = True
    parameters = (
        Param("variant", "choice", "paper", "recovery: the paper's Gumbel top-s + Laplace sums, or ℓ2-scaled "
              "Gaussian sums", choices=("paper", "gaussian")),
        Param("row_norm", "float", None, "Λ, public ℓ2 bound of a row (Gaussian sensitivity); none = "
              "Λ∞·√min(m, 64)", low=0, low_open=True, optional=True),
        Param("row_scaling", "choice", "normalise", "normalise: every non-empty row scaled to ℓ2 = Λ; clip: "
              "rows scaled down to ℓ2 ≤ Λ", choices=("normalise", "clip")),
        Param("value_min", "float", 0.0, "public lower bound of one value (≤ 0: absent interactions are zeros)",
              high=0),
        Param("support", "int", None, "s, non-zeros kept per prototype; none = all items (Gaussian) or "
              "min(m, 64) (paper)", low=1, optional=True),
        Param("threshold", "float", 0.0, "τ: noisy sums below τ·σ set to 0 (Gaussian variant; post-processing)",
              low=0),
        Param("cluster_size", "float", 1000.0, "target users per cluster for the automatic k = clip(⌊n̂/size⌋, "
              "1, k); none = k exactly", low=1, optional=True),
        Param("projection_dim", "int", None, "p, projection dimension of the clustering; none = "
              "clip(round(0.5·ln n̂), 3, 10)", low=1, high=24, optional=True),
        Param("candidates", "choice", "partition", "clustering stages 2–3: the paper's private partition + "
              "local search, or the private LSH-tree coreset", choices=("partition", "lsh")),
        Param("split", "mapping", None, "shares of ε per stage (missing stages take the defaults; "
              "renormalised over the stages that run)", choices=("size", "candidates", "search", "counts",
                                                                 "support", "sums", "choice", "delta_candidates"),
              optional=True),
        Param("search_steps", "int", None, "T steps of the private local search; none = k", low=1,
              high=10_000, optional=True),
        Param("final_choice", "bool", True, "choose among the T local-search solutions by the exponential "
              "mechanism (paper Alg. 6 line 8)"),
        Param("refine_steps", "int", None, "DP-Lloyd steps after the first recovery; none = 0, or with the "
              "LSH coreset and the Gaussian recovery 0 for ε < 1, else 1–5 by the noise a step adds to a centre", low=0, high=50,
              optional=True),
        Param("trials", "int", 1, "independent runs of stages 2–5, one chosen by the exponential mechanism",
              low=1, high=50),
        Param("n_grids", "int", 3, "grids of the private partition (1 unshifted + n − 1 shifted)", low=1, high=20),
        Param("depth", "int", 5, "levels tested per grid of the private partition", low=1, high=20),
        Param("max_candidates", "int", 1000, "cap on the candidate set of the local search", low=1,
              high=1_000_000),
        Param("lsh_depth", "int", None, "hash bits (tree levels) of the LSH coreset; none = 10 for ε < 1, "
              "else 15", low=1, high=40, optional=True),
        Param("lsh_node_factor", "float", coresets.DEFAULT_NODE_FACTOR, "an LSH tree node is kept if its noisy "
              "count ≥ factor·√m·σ/Λ", low=0, low_open=True),
        Param("lsh_node_cap", "float", coresets.DEFAULT_NODE_CAP, "the LSH keep threshold is at most "
              "n̂/(cap·k), n̂ the tree root's noisy count (down to n̂/(1.5·cap·k) while above a count's "
              "noise scale); none = no cap", low=0, low_open=True, optional=True),
    )

    def __init__(self, k: int = 50, value_max: float = 1.0, *, value_min: float = 0.0,
                 epsilon: float = 1.0, delta: float = 1e-6, row_norm: float | None = None,
                 support: int | None = None, projection_dim: int | None = None,
                 split: dict | None = None, variant: str = "paper", search_steps: int | None = None,
                 final_choice: bool = True, refine_steps: int | None = None, trials: int = 1,
                 n_grids: int = 3, depth: int = 5, max_candidates: int = 1000,
                 row_scaling: str = "normalise", threshold: float = 0.0,
                 cluster_size: float | None = 1000.0, candidates: str = "partition",
                 lsh_depth: int | None = None,
                 lsh_node_factor: float = coresets.DEFAULT_NODE_FACTOR,
                 lsh_node_cap: float | None = coresets.DEFAULT_NODE_CAP) -> None:
        super().__init__(k, value_max)
        self.lsh_node_cap = lsh_node_cap
        self.candidates = candidates
        self.lsh_depth = lsh_depth
        self.lsh_node_factor = lsh_node_factor
        self.row_scaling = row_scaling
        self.threshold = threshold
        self.cluster_size = cluster_size
        self.value_min = value_min
        self.epsilon = epsilon
        self.delta = delta
        self.row_norm = row_norm
        self.support = support
        self.projection_dim = projection_dim
        self.split = split
        self.variant = variant
        self.search_steps = search_steps
        self.final_choice = final_choice
        self.refine_steps = refine_steps
        self.trials = trials
        self.n_grids = n_grids
        self.depth = depth
        self.max_candidates = max_candidates

    # ------------------------------------------------------------------ configuration
    def _bounds(self, X: sp.csr_matrix) -> tuple[float, float, float, int]:
        """The public bounds (value_min, value_max, Λ, s). Never computed from X's values — only its
        public shape (m) is used."""
        m = X.shape[1]
        s_ref = min(m, 64)
        if self.support is not None:
            s = int(self.support)
        else:  # Gaussian: top-s is free post-processing, keep every coordinate by default
            s = m if self.variant == "gaussian" else s_ref
        vmax = float(self.value_max)
        if self.row_norm is not None:
            lam = float(self.row_norm)
        else:
            lam = vmax * math.sqrt(s_ref if self.support is None else min(s, m))
        return float(self.value_min), vmax, lam, s

    def public_bounds(self, n_items: int | None = None) -> dict[str, float]:
        """``value_min`` and the row bound Λ (``row_norm``) the release clips and scales rows with, from
        :meth:`_bounds` on a catalogue of ``n_items`` columns (no row: the bounds read its shape only);
        None takes Λ's default Λ∞·√min(m, 64) at its largest."""
        value_min, _vmax, row_norm, _support = self._bounds(_no_rows(n_items))
        return {"value_min": float(value_min), "row_norm": float(row_norm)}

    def check_parameters(self, n_items: int | None = None) -> None:
        """:meth:`_validate` on a catalogue of ``n_items`` columns without a row (it reads the shape only):
        the checks :meth:`release` makes before it draws, the ones its parameters' combination needs
        (e.g. ``trials`` > 1 with ``candidates='lsh'``) included."""
        self._validate(_no_rows(n_items), "")

    def _scale_rows(self, Xc: sp.csr_matrix, lam: float) -> sp.csr_matrix:
        """Rows for the Gaussian sums and the clustering: ``row_scaling="clip"`` scales rows down to
        ℓ2 ≤ Λ, ``"normalise"`` scales every non-empty row to exactly Λ. Either way a user's row is
        a function of that user's data only and has norm ≤ Λ: L2 sensitivity of any cluster sum Λ."""
        if self.row_scaling == "normalise":
            return row_normalise_sparse(Xc, lam)
        return row_scale_sparse(Xc, lam)

    def _preprocess(self, X: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """(Xc, Xs): entries clipped to the public [value_min, value_max] before any aggregate
        (per-coordinate sensitivity Λ∞ of a sum), and those rows scaled to ℓ2 ≤ Λ (L2 sensitivity Λ).
        The neighbour audits run this very function."""
        vmin, vmax, lam, _ = self._bounds(X)
        Xc = X.copy()
        np.clip(Xc.data, vmin, vmax, out=Xc.data)
        return Xc, self._scale_rows(Xc, lam)

    def _validate(self, X: sp.csr_matrix, entity: str) -> None:
        # k is public and is never compared with the private n: an entity with fewer users than k
        # simply gets clusters whose noisy counts are near 0 (comparing would leak n).
        if not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ConfigError(f"k (prototypes per entity) must be a positive integer, got {self.k!r}")
        # No check on the number of users: an error for n = 0 but not n = 1 would itself reveal a
        # true count. An empty entity releases noise like any other.
        mech_eps = float(self.epsilon)
        if math.isnan(mech_eps) or mech_eps <= 0:
            raise ConfigError(f"{self.name}: ε must be positive (or inf for the non-private limit), got {self.epsilon}")
        if not (0 <= float(self.delta) < 1):
            raise ConfigError(f"{self.name}: δ must be in [0, 1), got {self.delta}")
        if math.isfinite(mech_eps) and float(self.delta) <= 0:
            raise ConfigError(
                f"{self.name} needs δ > 0: the private partition keeps a cube created by one user "
                "with a small probability that is charged to δ; use e.g. δ = 1e-6 (or 1/(10·n))", param="delta")
        if self.variant not in ("paper", "gaussian"):
            raise ConfigError(f"{self.name}: variant must be 'paper' or 'gaussian', got {self.variant!r}",
                              param="prototype_params")
        if self.row_scaling not in ("clip", "normalise"):
            raise ConfigError(f"{self.name}: row_scaling must be 'clip' or 'normalise', got {self.row_scaling!r}",
                              param="prototype_params")
        if not (isinstance(self.threshold, (int, float)) and math.isfinite(self.threshold) and self.threshold >= 0):
            raise ConfigError(f"{self.name}: threshold must be a finite number ≥ 0, got {self.threshold!r}",
                              param="prototype_params")
        if self.cluster_size is not None and not (isinstance(self.cluster_size, (int, float))
                                                  and math.isfinite(self.cluster_size) and self.cluster_size > 0):
            raise ConfigError(f"{self.name}: cluster_size must be a positive number or None, got {self.cluster_size!r}",
                              param="prototype_params")
        vmin, vmax, lam, s = self._bounds(X)
        if not (math.isfinite(vmax) and vmax > 0):
            raise ConfigError(f"value_max must be a positive finite public bound, got {self.value_max}")
        if not (math.isfinite(vmin) and vmin <= 0):
            raise ConfigError(f"value_min must be ≤ 0 (absent interactions are zeros), got {self.value_min}",
                              param="prototype_params")
        if not (math.isfinite(lam) and lam > 0):
            raise ConfigError(f"row_norm Λ must be a positive finite public bound, got {self.row_norm}",
                              param="prototype_params")
        if not 1 <= s:
            raise ConfigError(f"support s must be a positive integer, got {self.support}", param="prototype_params")
        for name, lo, hi in (("n_grids", 1, 50), ("depth", 1, 40), ("trials", 1, 100),
                             ("max_candidates", 1, 10**6)):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
                raise ConfigError(f"{self.name}: {name} must be an integer in [{lo}, {hi}], got {v!r}",
                                  param="prototype_params")
        if self.candidates not in ("partition", "lsh"):
            raise ConfigError(f"{self.name}: candidates must be 'partition' or 'lsh', got {self.candidates!r}",
                              param="prototype_params")
        if self.candidates == "lsh":
            if self.lsh_depth is not None and (not isinstance(self.lsh_depth, (int, np.integer))
                                               or not 1 <= self.lsh_depth <= 60):
                raise ConfigError(f"{self.name}: lsh_depth must be an integer in [1, 60], got {self.lsh_depth!r}",
                                  param="prototype_params")
            if not (isinstance(self.lsh_node_factor, (int, float)) and math.isfinite(self.lsh_node_factor)
                    and self.lsh_node_factor > 0):
                raise ConfigError(f"{self.name}: lsh_node_factor must be a positive number, got {self.lsh_node_factor!r}",
                                  param="prototype_params")
            cap = self.lsh_node_cap
            if cap is not None and not (isinstance(cap, (int, float)) and not isinstance(cap, bool)
                                        and math.isfinite(cap) and cap > 0):
                raise ConfigError(f"{self.name}: lsh_node_cap must be a positive number or None, got {cap!r}",
                                  param="prototype_params")
            if self.trials != 1:
                raise ConfigError(f"{self.name}: trials > 1 is not supported with candidates='lsh' (set trials=1)",
                                  param="prototype_params")
        if self.refine_steps is not None and (not isinstance(self.refine_steps, (int, np.integer))
                                              or self.refine_steps < 0):
            raise ConfigError(f"{self.name}: refine_steps must be an integer ≥ 0 or None, got {self.refine_steps!r}",
                              param="prototype_params")
        if self.search_steps is not None and (not isinstance(self.search_steps, (int, np.integer))
                                              or self.search_steps < 0):
            raise ConfigError(f"{self.name}: search_steps must be an integer ≥ 0, got {self.search_steps!r}",
                              param="prototype_params")
        if self.projection_dim is not None and (not isinstance(self.projection_dim, (int, np.integer))
                                                or not 1 <= self.projection_dim <= 24):
            raise ConfigError(f"{self.name}: projection_dim must be an integer in [1, 24], got {self.projection_dim!r}",
                              param="prototype_params")
        if self.split is not None:
            bad = set(self.split) - set(DEFAULT_SPLIT) - {"delta_candidates"}
            if bad:
                raise ConfigError(f"{self.name}: unknown budget stage(s) {sorted(bad)}; "
                                  f"use {sorted(DEFAULT_SPLIT)} and 'delta_candidates'", param="prototype_params")
            if any((not isinstance(v, (int, float))) or v < 0 or not math.isfinite(v) for v in self.split.values()):
                raise ConfigError(f"{self.name}: budget shares must be finite non-negative numbers",
                                  param="prototype_params")
            dc = self.split.get("delta_candidates", DEFAULT_DELTA_CANDIDATES)
            if not 0 < dc <= 1:
                raise ConfigError(f"{self.name}: delta_candidates must be in (0, 1], got {dc}",
                                  param="prototype_params")
        # every k the release may use (k itself and, with the automatic k, 1): refused before any draw,
        # whatever the noisy size turns out to be
        for k in sorted({int(self.k), 1} if self.cluster_size is not None else {int(self.k)}):
            self._stage_shares(X.shape[1], k)

    def _stage_shares(self, m: int, k: int) -> dict[str, float]:
        """Un-normalised ε shares of the stages that run for an entity with m items and k clusters."""
        _, _, _, s = self._bounds(sp.csr_matrix((1, m)))
        lsh = self.candidates == "lsh" and k > 1
        shares = dict(coresets.LSH_SPLIT if lsh else DEFAULT_SPLIT)
        if self.split:
            shares.update({key: float(v) for key, v in self.split.items() if key in DEFAULT_SPLIT})
        if not self._size_stage_runs():
            shares["size"] = 0.0
        if k == 1:  # one cluster = every user: no clustering stage is needed or charged
            shares["candidates"] = shares["search"] = 0.0
        if self.variant == "gaussian" or s >= m:
            shares["support"] = 0.0
        if self.trials == 1 or k == 1:
            shares["choice"] = 0.0
        needs = ["counts", "sums"] if k == 1 else ["candidates", "search", "counts", "sums"]
        if lsh and self.refine_steps_for(m, k) == 0:  # the coreset's k-means centres are the prototypes
            shares["counts"] = shares["support"] = shares["sums"] = 0.0
            needs = ["candidates", "search"]
        elif self.variant == "paper" and s < m:
            needs.append("support")
        if self._size_stage_runs():
            needs.append("size")
        if self.trials > 1 and k > 1 and not lsh:
            needs.append("choice")
        # a stage that runs on a zero share would draw at ε = 0: refused by the split it came from
        for need in needs:
            if shares[need] <= 0:
                raise ConfigError(f"{self.name} parameter split: the '{need}' stage runs and needs a positive "
                                  f"share of ε, got {shares[need]:g} — give it one (e.g. {need}:"
                                  f"{(coresets.LSH_SPLIT if lsh else DEFAULT_SPLIT)[need]:g}) or leave "
                                  "it out to take its default", param="split")
        return shares

    def lsh_depth_for(self) -> int:
        """D, the LSH tree's levels below the root: ``lsh_depth`` if given, else the public rule
        :func:`~dpfed_core.federation.coresets.default_depth` of ε."""
        if self.lsh_depth is not None:
            return int(self.lsh_depth)
        return coresets.default_depth(float(self.epsilon))

    def lloyd_step_sigma(self, m: int, k: int, steps: int) -> float:
        """σ of one DP-Lloyd step's sums when ``steps`` steps share the Lloyd part of the Gaussian
        zCDP budget (:func:`lsh_lloyd_split`) of a release with m columns and k clusters (0 when
        non-private). Public: a function of the parameters only."""
        if not math.isfinite(float(self.epsilon)):
            return 0.0
        _, _, lam, _ = self._bounds(sp.csr_matrix((1, m)))
        gplan = self._lsh_gaussian_plan(self.budget_plan(m, k), int(steps))
        return gplan.sigma(gplan.split.stages[1], lam)

    def _lsh_gaussian_plan(self, plan: dict[str, float], steps: int):
        """The zCDP plan of the leaf sums and ``steps`` Lloyd sums of ``candidates="lsh"`` with the
        Gaussian recovery (:func:`lsh_lloyd_split`), from the release's ε shares ``plan``."""
        e_g = plan["search"] + plan["sums"]
        return lsh_lloyd_split(int(steps), plan["sums"] / e_g).plan(e_g, float(self.delta) * (1 - 1e-12))

    def refine_steps_for(self, m: int, k: int) -> int:
        """R, the DP-Lloyd steps of a release with m columns and k clusters before its tree is
        grown: ``refine_steps`` if given; otherwise :func:`default_refine_steps` of the public
        (ε, δ, k, m, Λ) with ``candidates="lsh"`` and the Gaussian recovery — 0, or its floor 1,
        which the release raises once the tree's root count n̂ is out (``refine_steps_``) —, else 0."""
        if self.refine_steps is not None:
            return int(self.refine_steps)
        if self.candidates != "lsh" or self.variant != "gaussian" or k <= 1:
            return 0
        _, _, lam, _ = self._bounds(sp.csr_matrix((1, m)))
        return default_refine_steps(float(self.epsilon), float(self.delta), int(k), int(m), lam)

    def _size_stage_runs(self) -> bool:
        """The noisy size n̂ is released iff something uses it: p derived from n̂, or k from n̂."""
        if self.candidates == "lsh":  # no projection: n̂ is only needed for an automatic k
            return self.k > 1 and self.cluster_size is not None
        return self.k > 1 and (self.projection_dim is None or self.cluster_size is not None)

    def effective_k(self, n_hat: float | None) -> int:
        """k used for the release: ``k`` itself, or with ``cluster_size`` set,
        clip(⌊n̂ / cluster_size⌋, 1, k) — a function of the released noisy size only
        (post-processing), never of the true n."""
        if self.cluster_size is None or self.k == 1:
            return int(self.k)
        return int(np.clip(math.floor(max(n_hat, 0.0) / float(self.cluster_size)), 1, self.k))

    def budget_plan(self, m: int, k: int | None = None) -> dict[str, float]:
        """ε of each stage (summed over trials and recoveries) for an entity with m items, when k
        clusters are used (default: ``self.k``); the values sum to ``epsilon`` (up to rounding, never
        above). The size stage (if it runs) takes its share of the plan for ``self.k``; the rest of
        ε is split over the stages that run for k (so with an automatic k = 1 the clustering shares
        go to the recovery)."""
        k = int(self.k) if k is None else int(k)
        eps = float(self.epsilon)
        full = self._stage_shares(m, int(self.k))
        f_size = full["size"] / sum(full.values())
        shares = self._stage_shares(m, k)
        shares.pop("size")
        total = sum(shares.values())
        # (1 − 1e-12) keeps the floating-point sum of the spends at or below the request
        plan = {key: eps * (1 - f_size) * v / total * (1 - 1e-12) for key, v in shares.items()}
        plan["size"] = eps * f_size * (1 - 1e-12)
        return plan

    def stage_names(self, k: int | None = None) -> dict[str, str]:
        """The ledger's stage name of each key of :meth:`budget_plan` when k clusters are used (default
        ``self.k``): the LSH coreset's candidates record the search share as its leaf sums."""
        k = int(self.k) if k is None else int(k)
        return LSH_STAGE_NAMES if self.candidates == "lsh" and k > 1 else STAGE_NAMES

    @staticmethod
    def _rows_since(ledger: EntityLedger, start: int) -> list:
        """The rows this entity's mechanisms recorded since ``start`` (the call's own spend)."""
        return [r for r in ledger.ledger.rows[start:] if r.entity == ledger.entity]

    # ------------------------------------------------------------------ recovery
    def _recover(self, Xc: sp.csr_matrix, Xs: sp.csr_matrix, labels: np.ndarray, eps_cnt: float,
                 eps_sup: float, eps_sum: float, delta_sum: float, rng: np.random.Generator,
                 ledger: EntityLedger, tag: str, k: int | None = None,
                 sigma: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Sparse recovery (paper Alg. 1, on sums) of the k clusters given by ``labels``.

        Xc : (n, m) rows with entries clipped to [value_min, value_max] (paper variant).
        Xs : (n, m) the same rows scaled to ℓ2 ≤ Λ (Gaussian variant).
        Returns (prototypes (k, m), noisy counts (k,)). Clusters are disjoint, so each of the three
        mechanisms is applied to the k clusters in parallel: one ledger row each. ``sigma`` (Gaussian
        variant): the sums' σ when the caller planned it jointly with other Gaussian releases in zCDP.
        """
        k = int(self.k) if k is None else int(k)
        m = Xc.shape[1]
        vmin, vmax, lam, s = self._bounds(Xc)
        s = min(s, m)
        bound = max(abs(vmin), abs(vmax))  # Λ∞: the most one user moves one coordinate's sum
        A = cluster_indicator(labels, k)
        # every mechanism writes its ledger row *before* its noise is drawn: a refused spend releases nothing
        true_n = np.asarray(A.sum(1)).ravel()
        noisy_n, _ = mech.count_mechanism(true_n, 1, eps_cnt, rng, ledger=ledger, stage="recovery: counts",
                                          note=f"{tag}noisy size of each of the k={k} disjoint clusters "
                                               "(parallel composition)")
        noisy_n = noisy_n.astype(np.float64)
        denom = np.maximum(noisy_n, 1.0)[:, None]  # a noisy count, never the true one
        if self.variant == "paper":
            P = recover_paper(np.asarray((A @ Xc).todense()), denom, s, bound, vmin, vmax, eps_sup, eps_sum,
                              rng, ledger, tag)
        else:
            how = "normalised to ℓ2 = Λ" if self.row_scaling == "normalise" else "clipped to ℓ2 ≤ Λ"
            P = recover_gaussian(np.asarray((A @ Xs).todense()), denom, s, lam, vmin, vmax, eps_sum, delta_sum,
                                 self.threshold, rng, ledger, f"{tag}all {m} sums per cluster of rows {how}",
                                 sigma=sigma)
        return P, noisy_n

    # ------------------------------------------------------------------ LSH coreset
    def _release_lsh(self, Xc: sp.csr_matrix, Xs: sp.csr_matrix, k: int, plan: dict[str, float],
                     delta: float, rng: np.random.Generator, ledger: EntityLedger) -> PrototypeRelease:
        """Stages 2–3 by a private LSH-tree coreset (privacy map: :mod:`.coresets`), then the
        coreset's weighted k-means centres as prototypes, or R DP-Lloyd recoveries started from
        them (R = :meth:`refine_steps_for`). Rows are the scaled rows Xs (ℓ2 ≤ Λ).

        Privacy accounting with R > 0 and the Gaussian recovery (:func:`lsh_lloyd_split`): the tree
        counts (ε_tree = the "candidates" share) and the R count releases (the "counts" share, ε/R
        each) are pure ε-DP Laplace releases composed by basic composition; the leaf sums and the R
        Lloyd sums are Gaussian and share one zCDP budget ρ = ρ*(ε_g, δ), ε_g = the "search" +
        "sums" shares: the leaf sums get (1 − w)ρ, each Lloyd step wρ/R, w = sums / (search + sums).
        Every row records its ρ; the ledger composes the Gaussian rows by ρ (each may depend on the
        earlier releases: adaptive zCDP composition) and adds the Laplace rows' ε, so the release is
        (ε_tree + ε_counts + ε_g, δ)-DP = (ε, δ)-DP."""
        n, m = Xs.shape
        vmin, vmax, lam, _ = self._bounds(Xs)
        private = math.isfinite(float(self.epsilon))
        R = self.refine_steps_for(m, k)
        D = self.lsh_depth_for()
        joint = private and R > 0 and self.variant == "gaussian"
        by_rule = self.refine_steps is None and R > 0

        def planned(R: int):
            """(e_leaf, d_leaf, d_sum, e_steps, sigma_leaf, sigma_steps) with R steps."""
            if joint:  # the Gaussian releases planned together in zCDP (docstring)
                gplan = self._lsh_gaussian_plan(plan, R)
                return (gplan.stage_epsilon("coreset sums"), gplan.stage_delta, gplan.stage_delta,
                        [gplan.stage_epsilon(step) for step in gplan.split.stages[1:]],
                        gplan.sigma("coreset sums", lam),
                        [gplan.sigma(step, lam) for step in gplan.split.stages[1:]])
            # basic composition (R = 0, the paper variant's Laplace recoveries, or the non-private
            # limit): δ goes to the leaf sums, the only release here that needs one
            return (plan["search"] if private else math.inf, delta * (1 - 1e-12), 0.0,
                    [plan["sums"] / R if (private and R > 0) else math.inf] * max(R, 1),
                    None, [None] * max(R, 1))

        # the leaf sums' σ does not depend on R (they get 1 − w of ρ whatever the steps' number)
        e_leaf, d_leaf, d_sum, e_steps, sigma_leaf, sigma_steps = planned(R)
        e_tree = plan["candidates"] if private else math.inf
        # public threshold from a public σ (parameters only)
        if not private:
            sigma_pub = 0.0
        elif sigma_leaf is not None:
            sigma_pub = sigma_leaf
        else:
            sigma_pub = mech.gaussian_sigma_analytic(e_leaf, d_leaf, lam)
        min_node = coresets.leaf_threshold(m, sigma_pub, lam, float(self.lsh_node_factor))
        min_branch = coresets.BRANCH_FACTOR * min_node
        # each mechanism records its ledger row before its noise is drawn (a refused spend releases nothing)
        cap = None if self.lsh_node_cap is None else float(self.lsh_node_cap) * k
        tree = coresets.build_lsh_tree(Xs, D, e_tree, min_node, min_branch, rng, ledger, cap_divisor=cap)
        if by_rule:  # the number of steps from the root's released count and public inputs
            R = default_refine_steps(float(self.epsilon), float(self.delta), int(k), int(m), lam,
                                     n_hat=tree.n_root,
                                     step_sigma=(lambda r: self._lsh_gaussian_plan(plan, r).sigma("lloyd sums 1", lam))
                                     if joint else (lambda r: 0.0))
            e_leaf, d_leaf, d_sum, e_steps, sigma_leaf, sigma_steps = planned(R)
        points, _ = coresets.noisy_leaf_averages(Xs, tree, lam, e_leaf, d_leaf, rng, ledger, sigma=sigma_leaf)
        core = coresets.LshCoreset(points, np.maximum(tree.counts, 0.0), tree.levels, tree.n_root,
                                   tree.leaf_of, tree.tree_counts)
        centres, weights = coresets.weighted_kmeans(core.points, core.weights, k, rng)
        labels = nearest_centre(Xs, centres)
        self.refine_steps_ = R
        if R == 0:
            P = np.clip(centres, vmin, vmax)
            counts = weights
        else:
            e_cnt, e_sup = (plan[x] / R if private else math.inf for x in ("counts", "support"))
            for r in range(R):
                P, counts = self._recover(Xc, Xs, labels, e_cnt, e_sup, e_steps[r], d_sum, rng, ledger,
                                          f"refinement {r + 1}/{R}: ", k=k, sigma=sigma_steps[r])
                if r < R - 1:
                    labels = nearest_centre(Xc if self.variant == "paper" else Xs, P)
        self.p_, self.candidates_, self.centres_, self.labels_ = None, core.points, centres, labels
        self.coreset_ = core
        self.counts_ = np.maximum(counts, 0.0)
        return PrototypeRelease(P, self.counts_.copy())

    # ------------------------------------------------------------------ the release
    def release(self, X, rng: np.random.Generator, ledger: EntityLedger) -> PrototypeRelease:
        X = sp.csr_matrix(X, dtype=np.float64)
        self._validate(X, ledger.entity)
        start = len(ledger.ledger.rows)
        try:
            return self._release(X, rng, ledger)
        finally:
            self.spend_ = self._rows_since(ledger, start)

    def _release(self, X: sp.csr_matrix, rng: np.random.Generator, ledger: EntityLedger) -> PrototypeRelease:
        n, m = X.shape
        vmin, vmax, lam, s = self._bounds(X)
        eps = float(self.epsilon)
        private = math.isfinite(eps)
        delta = float(self.delta) if private else 0.0

        Xc, Xs = self._preprocess(X)

        # 0. size → p and (with cluster_size) k; everything after is adaptive on n̂ only
        self.n_hat_ = None
        if self._size_stage_runs():
            if private:
                e_size = self.budget_plan(m)["size"]
                uses = " and ".join(x for x, on in (("the projection dimension p", self.projection_dim is None),
                                                    ("the number of clusters k", self.cluster_size is not None)) if on)
                self.n_hat_ = float(mech.count_mechanism(n, 1, e_size, rng, ledger=ledger, stage="size",
                                                         note=f"noisy user count n̂, used only to choose {uses}")[0])
            else:
                self.n_hat_ = float(n)
        k = self.effective_k(self.n_hat_)
        self.k_ = k
        plan = self.budget_plan(m, k)
        if k == 1:  # every user is in the one cluster: recovery only (the rest of the budget)
            labels = np.zeros(n, dtype=np.int64)
            P, noisy_n = self._recover(Xc, Xs, labels, *(plan[x] if private else math.inf
                                                          for x in ("counts", "support", "sums")),
                                       delta * (1 - 1e-12) if self.variant == "gaussian" else 0.0,
                                       rng, ledger, "", k=1)
            self.p_, self.candidates_, self.centres_, self.labels_ = None, None, None, labels
            self.counts_ = np.maximum(noisy_n, 0.0)
            return PrototypeRelease(P, self.counts_.copy())
        if self.candidates == "lsh":
            return self._release_lsh(Xc, Xs, k, plan, delta, rng, ledger)
        if self.projection_dim is None:
            p = default_projection_dim(self.n_hat_)
        else:
            p = int(self.projection_dim)
        self.p_ = p

        T_r = int(self.trials)
        R = self.refine_steps_for(m, k)
        steps = k if self.search_steps is None else int(self.search_steps)
        # δ: all of it to the candidates (paper) or split between candidates and Gaussian sums
        dc = ((self.split or {}).get("delta_candidates", DEFAULT_DELTA_CANDIDATES)
              if self.variant == "gaussian" else 1.0)
        # (1 − 1e-12): the floating-point sum of the δ spends stays at or below the request
        d_cand = delta * dc / T_r * (1 - 1e-12)
        d_sum = delta * (1 - dc) / T_r / (R + 1) * (1 - 1e-12)
        e_cand = plan["candidates"] / T_r
        e_search = plan["search"] / T_r
        e_cnt, e_sup, e_sum = (plan[x] / T_r / (R + 1) if private else math.inf
                               for x in ("counts", "support", "sums"))
        if private:
            eps_level, gamma = partition_plan(e_cand, d_cand, self.depth, self.n_grids)
            eps_step, eps_final = search_plan(e_search, steps, self.final_choice)
        else:  # non-private limit: exact thresholds and argmax choices
            eps_level, gamma = math.inf, max(1.0, n / (4.0 * k))
            eps_step, eps_final = math.inf, (math.inf if self.final_choice else 0.0)
        cap = 4.0 * lam * lam

        results = []
        for t in range(T_r):
            tag = f"trial {t + 1}/{T_r}: " if T_r > 1 else ""
            # 1. projection (data independent) and clipping in the projected space
            G = rng.standard_normal((p, m))
            Y = clip_rows(np.asarray(Xs @ G.T) / math.sqrt(p), lam)

            # 2. candidates (at most depth + (n_grids − 1)(depth + 1) level tests, each recording its row)
            C, lev = private_partition(Y, lam, self.depth, self.n_grids, eps_level, gamma, rng, ledger, tag)
            # finest cubes first (they sit in dense regions), ties in random order — post-processing
            C = C[np.lexsort((rng.random(C.shape[0]), -lev))[: self.max_candidates]]
            if C.shape[0] < k:  # pad with data-independent random points of the Λ-ball
                extra = clip_rows(rng.standard_normal((k - C.shape[0], p)) * lam / math.sqrt(p), lam)
                C = np.vstack([C, extra])

            # 3. local search (each exponential mechanism records its own row)
            Zi, _ = private_local_search(Y, C, np.arange(C.shape[0]), k, steps, eps_step, eps_final, lam, rng,
                                         ledger, tag)
            centres = C[Zi]

            # 4. assign, 5. recover, 6. refine
            labels = np.argmin(sq_dists(Y, centres), axis=1)
            for r in range(R + 1):
                rtag = tag + (f"refinement {r}/{R}: " if r else "")
                P, noisy_n = self._recover(Xc, Xs, labels, e_cnt, e_sup, e_sum, d_sum, rng, ledger, rtag, k=k)
                if r < R:  # DP Lloyd: re-assign in the original space to the released prototypes
                    labels = nearest_centre(Xc if self.variant == "paper" else Xs, P)
            results.append((P, noisy_n, labels, centres))

        # trials: choose one by the exponential mechanism on the clipped loss (original space)
        if T_r > 1:
            e_choice = plan["choice"] if private else math.inf
            Xl = Xc if self.variant == "paper" else Xs
            losses = [clipped_loss(Xl, P, cap) for P, *_ in results]
            pick = mech.exponential_mechanism(-np.asarray(losses), cap, e_choice, rng, monotone=True, ledger=ledger,
                                              stage="trial choice",
                                              note=f"one of {T_r} trials on the loss clipped at 4Λ²")
        else:
            pick = 0
        P, noisy_n, labels, centres = results[pick]
        self.candidates_ = C
        self.centres_ = centres
        self.labels_ = labels
        self.counts_ = np.maximum(noisy_n, 0.0)
        return PrototypeRelease(P, self.counts_.copy())


def _with_variant_default(init, variant: str):
    """A copy of ``init`` whose keyword default ``variant`` differs (signature included, so
    ``get_params`` and the dashboard read the right default)."""
    import types

    f = types.FunctionType(init.__code__, init.__globals__, init.__name__, init.__defaults__, init.__closure__)
    f.__kwdefaults__ = {**(init.__kwdefaults__ or {}), "variant": variant}
    f.__doc__, f.__qualname__ = init.__doc__, init.__qualname__
    return f


@register_prototype_method("dp-gaussian")
class DPGaussianPrototypes(DPPrototypes):
    """Differentially private prototypes, Gaussian recovery (recommended): the ``dp-prototypes``
    pipeline with ``variant="gaussian"`` — rows scaled to ℓ2 norm Λ, analytic Gaussian noise on all
    cluster sums, automatic k from the noisy size. Same privacy proof, same ledger; measured far
    better than the paper's Laplace recovery (bench/results/dp_ml.md)."""


DPGaussianPrototypes.__init__ = _with_variant_default(DPPrototypes.__init__, "gaussian")
DPGaussianPrototypes.parameters = tuple(
    Param(p.name, p.kind, "gaussian", p.doc, choices=p.choices) if p.name == "variant" else p
    for p in DPPrototypes.parameters)
