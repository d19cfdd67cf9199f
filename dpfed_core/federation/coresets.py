"""Private coresets for the ``dp-prototypes`` pipeline: the LSH prefix tree.

``candidates="lsh"`` in :class:`~dpfed_core.federation.dp_prototypes.DPPrototypes` replaces the
paper's private partition + private local search (stages 2–3) by the private-coreset approach of
Google's differential-privacy clustering library (``learning/clustering``; Chang, Ghazi, Kumar &
Manurangsi 2021): hash the rows with SimHash (random hyperplanes), grow a prefix tree whose node
counts are released with noise, release a noisy average of the rows in every leaf, and cluster the
weighted leaf averages (the *coreset*) with ordinary k-means — pure post-processing.

Written from the published description and the library's documented behaviour, not copied; the
differences: each tree level's discrete Laplace counts compose by basic sequential composition (the
library composes them by PLD), the keep threshold is min(node_factor·√m·σ/Λ, cap) with
``node_factor = 3`` and cap = max(n̂/(3k), min(n̂/(2k), b)), b the scale of one count's noise
(the library: factor 10 and cap n̂/(2k); :func:`capped_thresholds`), and the tree has 10 levels below ε = 1
and 15 from ε = 1 (the library: 20); chosen on Google's recipe and development draws,
bench/results/dp_kmeans.md and dp_kmeans_rule.md.

Privacy unit: one user (one row, ℓ2 norm ≤ Λ after the pipeline's row scaling); unbounded DP.

* **Tree counts** (stage "candidates"). Level 0 is the root (all users); at level t ≥ 1 the nodes
  are *both* children (hash bit 0 and 1) of every node that branched at level t − 1, empty ones
  included, so the set of counted nodes is a function of earlier *released* counts and of the
  data-independent hyperplanes only (the keep and branch thresholds are public, lowered once the
  root's count is out by :func:`capped_thresholds`, a function of that released count). Within a
  level the nodes are disjoint, so one user changes one count by 1: L1 sensitivity 1, discrete
  Laplace(b = (D+1)/ε_tree) per count is ε_tree/(D+1)-DP per level,
  and the D + 1 levels (charged in full even if the tree stops early) compose sequentially (adaptive
  composition) to ε_tree. No δ: no node exists only because a user was added.
* **Leaf sums** (stage "coreset sums"). Which nodes are leaves depends on released counts only; the
  leaves are disjoint, so one user is in at most one leaf and moves the stacked leaf sums by at most
  Λ in ℓ2: the analytic Gaussian mechanism at L2 sensitivity Λ is (ε_leaf, δ)-DP.
* **Coreset and centres** (free). Coreset point = noisy leaf sum / max(noisy leaf count, 1) (never a
  true count), shrunk toward 0 by positive-part James–Stein with the public σ, clipped to the
  Λ-ball; weight = max(noisy count, 0); k-means on the weighted points.

Total: (ε_tree + ε_leaf, δ) by basic composition; every counted level and the leaf sums record their
own ledger rows (the mechanisms write them before drawing).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpfed_core.privacy import mechanisms as mech

__all__ = ["LSH_SPLIT", "LshCoreset", "LshTree", "build_lsh_tree", "capped_thresholds", "default_depth", "james_stein", "leaf_threshold",
           "lsh_tree_coreset",
           "noisy_leaf_averages", "weighted_kmeans"]

#: Levels D of the prefix tree below the root (hash bits) from ε = 1 on; the library's default is
#: 20, 15 was as good on Google's recipe (bench/results/dp_kmeans.md) and leaves more ε per level.
DEFAULT_DEPTH = 15
#: Levels below ε = 1 (:func:`default_depth`).
SMALL_EPSILON_DEPTH = 10
#: Leaf threshold factor: a node stays in the tree if its noisy count is ≥ node_factor·√m·σ/Λ, where
#: the Gaussian noise norm √m·σ is then about 1/node_factor of the leaf's signal scale Λ·count.
DEFAULT_NODE_FACTOR = 3.0
#: The keep threshold is capped at n̂/(DEFAULT_NODE_CAP·k) (:func:`capped_thresholds`).
DEFAULT_NODE_CAP: float | None = 2.0
#: A node branches if its noisy count is ≥ this multiple of the leaf threshold (the library's 3).
BRANCH_FACTOR = 3.0
#: Where the count noise allows it, the cap n̂/(c·k) is lowered further, down to n̂/(FINER_CAP·c·k)
#: (:func:`capped_thresholds`).
FINER_CAP = 1.5


@dataclass(frozen=True)
class LshCoreset:
    """A released private coreset.

    points : (L, m) leaf averages (noisy sum / max(noisy count, 1)), clipped to the Λ-ball.
    weights : (L,) max(noisy leaf count, 0).
    levels : (L,) depth of each leaf (0 = the root).
    n_root : the root's noisy count (a released statistic; may serve as n̂).
    leaf_of : (n,) the leaf of each user, −1 if the user's path was cut (NOT released; kept for
        diagnostics and tests).
    tree_counts : the noisy counts of every counted node, one array per level (the tree stage's
        whole output; the leaves are a function of it). Used by the neighbour audits.
    """

    points: np.ndarray
    weights: np.ndarray
    levels: np.ndarray
    n_root: float
    leaf_of: np.ndarray
    tree_counts: tuple = ()


def leaf_threshold(m: int, sigma: float, radius: float, node_factor: float = DEFAULT_NODE_FACTOR) -> float:
    """Smallest noisy count of a node kept in the tree: node_factor·√m·σ/Λ (at least 1).

    Public: m is the catalogue size, σ the leaf-sum noise (a function of ε, δ, Λ), Λ the public
    row bound. With σ = 0 (ε = inf) every non-empty node counts (threshold 1)."""
    return max(1.0, node_factor * math.sqrt(m) * sigma / radius)


def default_depth(epsilon: float) -> int:
    """D, the tree's levels below the root when ``lsh_depth=None``: 10 for ε < 1, else 15 — of the
    public ε only. Why: each level's counts get ε_tree/(D + 1), so below ε = 1 the count noise, not
    the depth, limits how finely the tree can split; on the development draws at ε = 0.1
    (bench/results/dp_kmeans_rule.md) 10 levels were as good as or better than 15 on all five sets
    (Google's recipe with k = 10: 0.059 → 0.038), while from ε = 1 on 10 levels lost on the
    held-out family (k = 16, ε = 1: 0.344 → 0.400)."""
    return SMALL_EPSILON_DEPTH if float(epsilon) < 1.0 else DEFAULT_DEPTH


def capped_thresholds(min_node: float, min_branch: float, n_root: float,
                      cap_divisor: float, count_scale: float | None = None) -> tuple[float, float]:
    """(keep, branch) thresholds lowered to at most the cap (and its branch multiple), at least 1.

    The cap is n̂/cap_divisor; with ``count_scale`` b (the scale of one tree count's noise) it is
    max(n̂/(:data:`FINER_CAP`·cap_divisor), min(n̂/cap_divisor, b)): lowered further, by up to a
    factor 1.5, as long as it stays above b.

    Why (Google's library caps its leaf size the same way, at n̂/(2k)): the noise-based threshold
    ``node_factor·√m·σ/Λ`` grows as 1/ε, and at small ε it exceeds the size of a cluster, so the
    tree stops above the clusters and the coreset has fewer points than k; the cap keeps about one
    node per cluster possible whatever the noise. At n̂/(2k) the branch threshold is 1.5 clusters'
    share, and on Google's recipe at ε = 0.1 the tree still ended with fewer leaves than k (47–58 of
    64; 10–20 clusters without a leaf of their own); at n̂/(3k) it grows 74–78 leaves. A lower keep
    threshold only pays while it is above the noise of one count — below it, nodes of noise alone
    are kept (held-out family, k = 16, ε = 0.1, where n̂/(3k) ≈ 208 against b ≈ 440: 0.803 with
    n̂/(2k), 0.822 with n̂/(3k)) —, hence the floor b. Chosen on development draws only (generator
    seeds ≥ 7000 of Google's recipe and the held-out family, the wide mixtures; bench/results/
    dp_kmeans.md, *Reading*). n̂ is the root's released count and b a function of the public ε, so the
    thresholds are functions of released values and public constants only."""
    if not (cap_divisor > 0):
        raise ValueError(f"cap_divisor must be positive, got {cap_divisor!r}")
    cap = float(n_root) / float(cap_divisor)
    if count_scale is not None:
        cap = max(cap / FINER_CAP, min(cap, float(count_scale)))
    cap = max(1.0, cap)
    if cap >= min_node:
        return min_node, min_branch
    return cap, max(cap, min_branch * cap / min_node)


def _hash_bits(X, hyperplanes: np.ndarray) -> np.ndarray:
    """SimHash bits (n, D): bit t = 1 iff ⟨x, h_t⟩ < 0 (the zero row hashes to all zeros)."""
    proj = X @ hyperplanes.T
    proj = np.asarray(proj.todense()) if sp.issparse(proj) else np.asarray(proj)
    return (proj < 0).astype(np.int64)


def _noisy_counts(true: np.ndarray, eps_level: float, rng: np.random.Generator, ledger, level: int,
                  depth: int) -> np.ndarray:
    """Counts of one tree level (disjoint nodes: L1 sensitivity 1) at ε_level: integer counts by
    the discrete Laplace, the level's ledger row recorded by the mechanism itself."""
    return np.asarray(mech.count_mechanism(true, 1, eps_level, rng, ledger=ledger, stage="candidates",
                                           note=f"LSH tree level {level} of {depth} (root = 0): counts of "
                                                "disjoint nodes, sensitivity 1")[0], dtype=np.float64)


@dataclass(frozen=True)
class LshTree:
    """The released tree (its noisy counts) and, not released, each user's leaf.

    counts : (L,) noisy count of each leaf. levels : (L,) depth of each leaf. n_root : the root's
    noisy count. tree_counts : noisy counts of every counted node, one array per level (the stage's
    whole output). leaf_of : (n,) each user's leaf, −1 if the user's path was cut (never released).
    """

    counts: np.ndarray
    levels: np.ndarray
    n_root: float
    tree_counts: tuple
    leaf_of: np.ndarray


def build_lsh_tree(X, depth: int, eps_tree: float, min_node: float, min_branch: float,
                   rng: np.random.Generator, ledger, cap_divisor: float | None = None) -> LshTree:
    """Stage "candidates": the SimHash prefix tree with noisy counts (privacy map: module docstring).

    X : (n, m) dense or sparse rows (ℓ2 ≤ Λ). depth : D hash bits below the root. eps_tree : ε of
    all D + 1 levels together (ε_tree/(D+1) each; ``inf`` = exact). min_node, min_branch : public
    thresholds on noisy counts (keep / branch a node). rng : the method's noise source.
    ledger : the entity's ledger view (one row per counted level, recorded before its draw).
    cap_divisor : if given (c·k for k clusters), both thresholds are lowered so that a node of
    n̂/cap_divisor noisy users is kept (n̂ the root's noisy count; :func:`capped_thresholds`),
    or down to n̂/(FINER_CAP·cap_divisor) while that stays above the scale 1/ε_level of a count's noise.
    """
    n, m = X.shape
    # data-independent hyperplanes: drawing them from the method's generator is not a release
    H = rng.standard_normal((depth, m))
    bits = _hash_bits(X, H)
    eps_level = eps_tree / (depth + 1)
    node_cnt = _noisy_counts(np.array([n]), eps_level, rng, ledger, 0, depth)  # level 0: the root, always kept
    n_root = float(node_cnt[0])
    if cap_divisor is not None:  # a function of the released root count and public constants only
        # b = 1/ε_level, the scale of one count's discrete Laplace noise (public)
        min_node, min_branch = capped_thresholds(min_node, min_branch, n_root, cap_divisor,
                                                 count_scale=1.0 / eps_level)
    node_code = np.zeros(1, dtype=np.int64)             # hash prefix of each node of the level
    alive = np.arange(n)                                 # users still on a kept path
    pt_node = np.zeros(n, dtype=np.int64)                # their node at the current level
    leaf_of = np.full(n, -1, dtype=np.int64)
    leaf_cnt, leaf_lev, tree_counts = [], [], [node_cnt.copy()]
    n_leaves = 0
    for t in range(depth + 1):
        branch = node_cnt >= min_branch if t < depth else np.zeros(node_code.size, dtype=bool)
        has_child = np.zeros(node_code.size, dtype=bool)
        if branch.any():
            bidx = np.flatnonzero(branch)
            pos = np.full(node_code.size, -1, dtype=np.int64)
            pos[bidx] = np.arange(bidx.size)
            # both children of every branching node (empty ones included: no δ), child 2j + bit
            ch_parent = np.repeat(bidx, 2)
            ch_code = 2 * np.repeat(node_code[bidx], 2) + np.tile(np.array([0, 1], dtype=np.int64), bidx.size)
            in_branch = branch[pt_node]
            child = 2 * pos[pt_node[in_branch]] + bits[alive[in_branch], t]
            noisy = _noisy_counts(np.bincount(child, minlength=ch_code.size), eps_level, rng, ledger, t + 1, depth)
            tree_counts.append(noisy.copy())
            keep = noisy >= min_node
            has_child[ch_parent[keep]] = True
        # a node with no kept child (did not branch, or all its children fell below min_node) is a leaf
        is_leaf = ~has_child
        leaf_id = np.full(node_code.size, -1, dtype=np.int64)
        leaf_id[is_leaf] = n_leaves + np.arange(int(is_leaf.sum()))
        n_leaves += int(is_leaf.sum())
        leaf_cnt.append(node_cnt[is_leaf])
        leaf_lev.append(np.full(int(is_leaf.sum()), t, dtype=np.int64))
        here = is_leaf[pt_node]
        leaf_of[alive[here]] = leaf_id[pt_node[here]]
        if not has_child.any():
            break
        # next level: users of branching nodes whose own child was kept (the others are cut)
        new_id = np.full(ch_code.size, -1, dtype=np.int64)
        new_id[keep] = np.arange(int(keep.sum()))
        child_all = np.full(alive.size, -1, dtype=np.int64)
        child_all[in_branch] = child
        nxt = np.where(child_all >= 0, new_id[np.maximum(child_all, 0)], -1)
        go = nxt >= 0
        alive, pt_node = alive[go], nxt[go]
        node_code, node_cnt = ch_code[keep], noisy[keep]
    return LshTree(np.concatenate(leaf_cnt), np.concatenate(leaf_lev), n_root, tuple(tree_counts), leaf_of)


def james_stein(averages: np.ndarray, noisy_counts: np.ndarray, sigma: float) -> np.ndarray:
    """Positive-part James–Stein shrinkage of noisy averages toward 0 (post-processing, public inputs).

    averages : (L, m) noisy sum / max(noisy count, 1). noisy_counts : (L,) the released counts.
    sigma : the public per-coordinate noise of the sums. An average's noise has variance
    v = σ² / max(count, 1)² per coordinate; it is scaled by max(0, 1 − (m − 2)·v / ‖average‖²)
    (Baranchik's positive-part estimator), which has a lower expected squared error than the raw
    average for m ≥ 3 whatever the true mean. It uses only released values and public σ, so it costs
    no privacy. Why: a leaf of c users has noise of norm √m·σ/c — at ε ≤ 1 and c ≈ 100 comparable
    to the signal — and an unshrunk noisy centre far from every point still draws no one, while
    shrinking pulls it toward the data (held-out mixture at ε = 0.1; development draws
    0.869 → 0.861 against 0.875 for one cluster, bench/results/dp_kmeans.md).
    """
    L, m = averages.shape
    if sigma <= 0 or m < 3:
        return averages
    v = (sigma / np.maximum(np.asarray(noisy_counts, dtype=np.float64), 1.0)) ** 2
    norm2 = (averages * averages).sum(1)
    factor = np.maximum(0.0, 1.0 - (m - 2) * v / np.maximum(norm2, 1e-300))
    return averages * factor[:, None]


def noisy_leaf_averages(X, tree: LshTree, radius: float, eps_leaf: float, delta_leaf: float,
                        rng: np.random.Generator, ledger, sigma: float | None = None) -> tuple[np.ndarray, float]:
    """Stage "coreset sums": Gaussian noise on all sums of every leaf (L2 sensitivity Λ, disjoint
    leaves), divided by max(noisy leaf count, 1) — never a true count —, shrunk by
    :func:`james_stein` (post-processing) and clipped to the Λ-ball.
    ``sigma``: σ calibrated by the caller for (eps_leaf, delta_leaf) — one of several Gaussian
    releases planned together in zCDP (the row records its ρ); ``None`` → σ for (eps_leaf, delta_leaf).
    Returns (points (L, m), σ)."""
    n, m = X.shape
    L = tree.counts.size
    members = tree.leaf_of >= 0
    A = sp.csr_matrix((np.ones(int(members.sum())), (tree.leaf_of[members], np.flatnonzero(members))),
                      shape=(L, n))
    sums = A @ X
    sums = np.asarray(sums.todense()) if sp.issparse(sums) else np.asarray(sums, dtype=np.float64)
    sums, sigma = mech.gaussian_mechanism(sums, radius, eps_leaf, delta_leaf, rng, ledger=ledger,
                                          stage="coreset sums", sigma=sigma,
                                          note=f"all {m} sums of each of the {L} leaves (disjoint); L2 "
                                               "sensitivity Λ; leaf average = noisy sum / max(noisy count, 1)")
    pts = sums / np.maximum(tree.counts, 1.0)[:, None]
    pts = james_stein(pts, tree.counts, sigma)
    norms = np.sqrt((pts * pts).sum(1))
    pts = pts * np.minimum(1.0, radius / np.maximum(norms, 1e-300))[:, None]
    return pts, float(sigma)


def lsh_tree_coreset(X, radius: float, depth: int, eps_tree: float, eps_leaf: float, delta_leaf: float,
                     min_node: float, min_branch: float, rng: np.random.Generator, ledger,
                     cap_divisor: float | None = None, sigma: float | None = None) -> LshCoreset:
    """Both stages in one call (tests and benchmarks), charged to ``ledger``; ``cap_divisor`` as in
    :func:`build_lsh_tree`, ``sigma`` as in :func:`noisy_leaf_averages`."""
    tree = build_lsh_tree(X, depth, eps_tree, min_node, min_branch, rng, ledger, cap_divisor=cap_divisor)
    pts, _ = noisy_leaf_averages(X, tree, radius, eps_leaf, delta_leaf, rng, ledger, sigma=sigma)
    return LshCoreset(pts, np.maximum(tree.counts, 0.0), tree.levels, tree.n_root, tree.leaf_of, tree.tree_counts)


def weighted_kmeans(points: np.ndarray, weights: np.ndarray, k: int, rng: np.random.Generator,
                    n_init: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """k-means++ with Lloyd iterations on a weighted coreset (post-processing of released data).

    Returns (centres (k, m), cluster weights (k,)). With fewer than k coreset points (or fewer
    distinct ones) the centres are the points themselves and the missing rows repeat the heaviest
    centre with weight 0, so the release always has exactly k rows (a public shape).
    """
    from sklearn.cluster import KMeans

    L, m = points.shape
    w = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    if w.sum() <= 0:
        w = np.ones(L)
    kk = min(k, L)
    if kk == L:
        C, cw = points.copy(), w.copy()
    else:
        km = KMeans(n_clusters=kk, init="k-means++", n_init=n_init,
                    random_state=int(rng.integers(2**31 - 1))).fit(points, sample_weight=np.maximum(w, 1e-12))
        C = km.cluster_centers_
        cw = np.bincount(km.labels_, weights=w, minlength=kk)
    if kk < k:
        top = int(np.argmax(cw))
        C = np.vstack([C, np.repeat(C[top:top + 1], k - kk, axis=0)])
        cw = np.concatenate([cw, np.zeros(k - kk)])
    return C, cw


#: Default ε shares with ``candidates="lsh"`` (same keys as the pipeline's ``DEFAULT_SPLIT``):
#: ``candidates`` = tree counts, ``search`` = leaf sums. Tree 0.25 / leaves 0.75 measured on Google's
#: recipe at ε = 1 (0.040 vs 0.044 with 0.15 / 0.85; bench/results/dp_kmeans.md); the recovery
#: shares are used only with ``refine_steps`` > 0.
LSH_SPLIT: dict[str, float] = {
    "size": 0.02,
    "candidates": 0.245,
    "search": 0.735,
    "counts": 0.02,
    "support": 0.15,
    "sums": 0.25,
    "choice": 0.05,
}
