"""The privacy-charging building blocks of ``dp-prototypes``
(:mod:`dpfed_core.federation.dp_prototypes`), each with its sensitivity and privacy map beside the
code: the private partition that proposes candidate centres (paper Alg. 4) and its (ε', γ) plan, the
private local search (Alg. 6) and its ε plan, and the two recoveries of cluster prototypes from
cluster sums (Alg. 1 on sums; the Gaussian variant). Each mechanism takes the entity's ledger view
and records its own row before its noise is drawn, so a refused spend releases nothing.

Kept apart from the estimator so that the proofs can be read, and audited by
``tests/test_dp_neighbours.py``, without the configuration and budget planning of
:class:`~dpfed_core.federation.dp_prototypes.DPPrototypes`, which composes these blocks stage by
stage (its module docstring gives the pipeline and the composition). The geometry helpers at the top
are data-independent or post-processing and charge nothing.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from dpfed_core.privacy import mechanisms as mech
from dpfed_core.privacy.ledger import EntityLedger

#: Above this many n × |C| entries the local search recomputes distances per step in chunks
#: instead of caching the matrix (about 400 MB of float32).
_CACHE_ENTRIES = 100_000_000


# ------------------------------------------------------------------------------------ geometry
def sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances, (a × d), (b × d) → (a × b), non-negative."""
    d = (A * A).sum(1)[:, None] - 2.0 * (A @ B.T) + (B * B).sum(1)[None, :]
    return np.maximum(d, 0.0)


def clip_rows(Y: np.ndarray, radius: float) -> np.ndarray:
    """Rows of Y scaled down to ℓ2 norm ≤ ``radius`` (shorter rows unchanged)."""
    norms = np.sqrt((Y * Y).sum(1))
    scale = np.minimum(1.0, radius / np.maximum(norms, 1e-300))
    return Y * scale[:, None]


def row_scale_sparse(X: sp.csr_matrix, radius: float) -> sp.csr_matrix:
    """Rows of sparse X scaled down to ℓ2 norm ≤ ``radius``: each user's row depends on that user's
    row only, so one added user adds one vector of norm ≤ Λ."""
    norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    scale = np.minimum(1.0, radius / np.maximum(norms, 1e-300))
    return sp.csr_matrix(sp.diags(scale) @ X)


def row_normalise_sparse(X: sp.csr_matrix, radius: float) -> sp.csr_matrix:
    """Every non-empty row scaled to ℓ2 norm exactly ``radius`` (empty rows stay 0). A user's new
    row depends only on that user's own row, so one added user still adds one vector of norm ≤ Λ."""
    norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    scale = np.where(norms > 0, radius / np.maximum(norms, 1e-300), 0.0)
    return sp.csr_matrix(sp.diags(scale) @ X)


def cluster_indicator(labels: np.ndarray, k: int) -> sp.csr_matrix:
    """k × n 0/1 matrix with a 1 at (label_i, i)."""
    n = labels.size
    return sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))


def nearest_centre(X: sp.csr_matrix, P: np.ndarray) -> np.ndarray:
    """Index of the nearest row of P (k × m) for each row of sparse X (n × m)."""
    d = -2.0 * np.asarray(X @ P.T) + (P * P).sum(1)[None, :]  # ‖x‖² is the same for every centre
    return np.argmin(d, axis=1)


def clipped_loss(X: sp.csr_matrix, P: np.ndarray, cap: float) -> float:
    """Σ_i min(min_j ‖x_i − p_j‖², cap): each user contributes a value in [0, cap], so adding or
    removing one user moves it by at most ``cap`` and always in the same direction (monotone)."""
    xx = np.asarray(X.multiply(X).sum(1)).ravel()
    d = np.maximum(xx[:, None] - 2.0 * np.asarray(X @ P.T) + (P * P).sum(1)[None, :], 0.0)
    return float(np.minimum(d.min(1), cap).sum())


# ------------------------------------------------------------------------- stage 2: candidates
def private_partition(Y: np.ndarray, radius: float, depth: int, n_grids: int, eps_level: float,
                      gamma: float, rng: np.random.Generator, ledger: EntityLedger,
                      tag: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Candidate centres from the private partition (paper Alg. 4) on shifted grids.

    Parameters
    ----------
    Y : (n, p) points in the ℓ2 ball of ``radius`` Λ.
    depth : levels tested per grid (cube side 2Λ/2^a at level a = 1..depth).
    n_grids : 1 unshifted grid rooted at [−Λ, Λ]^p plus ``n_grids − 1`` grids shifted by a uniform
        offset in [0, 2Λ)^p (their root cube has side 4Λ and is never tested, so they test
        ``depth + 1`` levels: sides 2Λ … 2Λ/2^depth).
    eps_level, gamma : ε' and γ of f(c) for every test.
    ledger, tag : the entity's ledger view (each level test records its own row, stage
        ``candidates``) and a prefix for the rows' notes.

    Returns
    -------
    centres : (M, p) candidate centres (cube centres of every kept cube, plus the roots).
    levels : (M,) level of each centre (larger = finer = denser region); used only to order
        candidates (post-processing of the released structure).
    """
    n, p = Y.shape
    centres, levels = [np.zeros((1, p))], [np.zeros(1, dtype=np.int64)]
    for g in range(n_grids):
        if g == 0:
            offset, root_side, first = np.full(p, -radius), 2 * radius, 1
        else:
            offset, root_side, first = -radius - rng.uniform(0, 2 * radius, size=p), 4 * radius, 1
        n_levels = depth if g == 0 else depth + 1
        group = np.zeros(n, dtype=np.int64)  # id of each point's kept cube at the previous level
        active = np.arange(n)
        for a in range(first, first + n_levels):
            # no shortcut when no point is left: the level is tested (on no cube) all the same, so
            # the tests run — and the ledger rows — never reveal that an entity is empty
            side = root_side / 2.0 ** a
            cell = np.floor((Y[active] - offset) / side).astype(np.int64)  # (n_active, p)
            bits = cell & 1  # which half of its parent cube, per coordinate
            # child code = (parent group, p child bits); p ≤ 40 is enforced so this fits in int64
            code = group * (1 << p) + (bits << np.arange(p, dtype=np.int64)).sum(1)
            uniq, inv, counts = np.unique(code, return_inverse=True, return_counts=True)
            keep = mech.partition_keep(counts, eps_level, gamma, rng, ledger=ledger, stage="candidates",
                                       note=f"{tag}grid {g + 1}/{n_grids}, level {a}: counts + discrete "
                                            f"Laplace ≥ γ={gamma:.4g}")
            if not keep.any():
                break
            # centre of each kept cube, from any one of its points
            first_pt = np.zeros(uniq.size, dtype=np.int64)
            first_pt[inv[::-1]] = np.arange(inv.size)[::-1]
            kept_cells = cell[first_pt[keep]]
            centres.append(offset + (kept_cells + 0.5) * side)
            levels.append(np.full(int(keep.sum()), a if g == 0 else a - 1, dtype=np.int64))
            new_id = np.cumsum(keep) - 1
            still = keep[inv]
            active = active[still]
            group = new_id[inv[still]]
        if g > 0:
            centres.append((offset + root_side / 2)[None, :])
            levels.append(np.zeros(1, dtype=np.int64))
    return np.vstack(centres), np.concatenate(levels)


def partition_plan(eps_cand: float, delta_cand: float, depth: int, n_grids: int) -> tuple[float, float]:
    """(ε', γ) of the candidate stage for its (ε_cand, δ_cand): the stage runs
    n_tests = depth + (n_grids − 1)(depth + 1) level tests; each costs ε' = ε_cand / n_tests (one
    count per level changes by 1) and δ₁ = f(1) ≤ δ_cand / n_tests (a cube only the added user
    creates), so by basic composition the stage is (ε_cand, δ_cand)-DP."""
    n_tests = depth + (n_grids - 1) * (depth + 1)
    eps_level = eps_cand / n_tests
    return eps_level, mech.partition_threshold(eps_level, delta_cand / n_tests)


# ---------------------------------------------------------------------- stage 3: local search
def search_plan(eps_search: float, steps: int, final_choice: bool) -> tuple[float, float]:
    """(ε per swap step, ε of the final choice) of the local search: T steps plus the optional
    final choice, each an exponential mechanism, share ε_search equally (basic composition)."""
    n_em = steps + (1 if final_choice else 0)
    eps_step = eps_search / max(n_em, 1)
    return eps_step, (eps_step if final_choice else 0.0)


class _SwapScorer:
    """Clipped k-means losses of every single swap of a solution, all at once.

    With d1_i, d2_i the (clipped) distances of point i to its nearest and second-nearest centre,
    a_i its nearest centre, and D_ic = min(‖y_i − c‖², cap):
    L(Z − z_a + c) = Σ_i min(D_ic, d1_i) + Σ_{i: a_i = a} [min(D_ic, d2_i) − min(D_ic, d1_i)].
    Cost per step O(n·|C|); the distance matrix is cached when it fits in memory.

    The nearest-two state (a, d1, b, d2) is kept *incrementally* across steps: after a
    swap only the points whose nearest or second-nearest centre left Z are searched again over Z
    (O(affected·k)); every other point compares its two with the new centre (O(n)). Ties resolve to
    the lower position in Z, as a full recomputation (``argmin``) would.
    """

    def __init__(self, Y: np.ndarray, C: np.ndarray, cap: float, chunk: int = 8192) -> None:
        self.Y, self.C, self.cap, self.chunk = Y, C, cap, chunk
        n, M = Y.shape[0], C.shape[0]
        self.D = (np.minimum(sq_dists(Y, C), cap).astype(np.float32)
                  if n * M <= _CACHE_ENTRIES else None)
        self._Z = None

    def _blocks(self):
        n = self.Y.shape[0]
        for s in range(0, n, self.chunk):
            e = min(n, s + self.chunk)
            D = self.D[s:e] if self.D is not None else np.minimum(
                sq_dists(self.Y[s:e], self.C), self.cap).astype(np.float32)
            yield s, e, D

    def _cols(self, rows: np.ndarray | slice, cols: np.ndarray) -> np.ndarray:
        """Clipped distances of the points ``rows`` to the candidates ``cols`` (float32)."""
        if self.D is not None:
            return self.D[rows][:, cols] if isinstance(rows, np.ndarray) else self.D[rows, cols]
        Yr = self.Y[rows]
        return np.minimum(sq_dists(Yr, self.C[cols]), self.cap).astype(np.float32)

    @staticmethod
    def _two(dz: np.ndarray, cap: float):
        """(a, d1, b, d2): positions and values of the two smallest entries of each row; ties go
        to the lower position, like ``argmin``. With one column, b = −1 and d2 = cap."""
        n, k = dz.shape
        rows = np.arange(n)
        a = np.argmin(dz, axis=1)
        d1 = dz[rows, a]
        if k == 1:
            return a, d1, np.full(n, -1, dtype=np.int64), np.full(n, cap, dtype=np.float32)
        masked = dz.copy()
        masked[rows, a] = np.inf
        b = np.argmin(masked, axis=1)
        return a, d1, b, masked[rows, b]

    def _terms(self, D: np.ndarray, a: np.ndarray, d1: np.ndarray, d2: np.ndarray, k: int):
        """Contributions of a block of points to term1 (|C|,) and term2 (k, |C|)."""
        m1 = np.minimum(D, d1[:, None])
        diff = np.minimum(D, d2[:, None]) - m1
        return m1.sum(0, dtype=np.float64), np.asarray(cluster_indicator(a, k) @ diff, dtype=np.float64)

    def _reset(self, Z: np.ndarray) -> None:
        k, M = Z.size, self.C.shape[0]
        self.a = np.empty(self.Y.shape[0], dtype=np.int64)
        self.b = np.empty(self.Y.shape[0], dtype=np.int64)
        self.d1 = np.empty(self.Y.shape[0], dtype=np.float32)
        self.d2 = np.empty(self.Y.shape[0], dtype=np.float32)
        self.term1, self.term2 = np.zeros(M), np.zeros((k, M))
        for s, e, D in self._blocks():
            a, d1, b, d2 = self._two(D[:, Z], self.cap)
            self.a[s:e], self.d1[s:e], self.b[s:e], self.d2[s:e] = a, d1, b, d2
            t1, t2 = self._terms(D, a, d1, d2, k)
            self.term1 += t1
            self.term2 += t2
        self._Z = Z.copy()

    def _swap(self, pos: int, c: int) -> None:
        """Update the nearest-two state and the two score terms after Z[pos] := c: only points
        whose nearest two change contribute differently, so only their rows are recomputed."""
        Z = self._Z.copy()
        Z[pos] = c
        k = Z.size
        a, d1, b, d2 = self.a.copy(), self.d1.copy(), self.b.copy(), self.d2.copy()
        lost = (a == pos) | (b == pos)
        keep = np.flatnonzero(~lost)
        changed = [np.flatnonzero(lost)]
        if keep.size:
            dc = self._cols(keep, np.array([c]))[:, 0]
            ak, d1k, bk, d2k = a[keep], d1[keep], b[keep], d2[keep]
            # the new centre enters the two if it beats the second (ties by position)
            first = (dc < d1k) | ((dc == d1k) & (pos < ak))
            second = ~first & ((dc < d2k) | ((dc == d2k) & (pos < bk)))
            moved = first | second
            idx = keep[moved]
            f, sc = first[moved], second[moved]
            self.b[idx] = np.where(f, ak[moved], pos)
            self.d2[idx] = np.where(f, d1k[moved], dc[moved])
            self.a[idx] = np.where(f, pos, ak[moved])
            self.d1[idx] = np.where(f, dc[moved], d1k[moved])
            changed.append(idx)
        redo = changed[0]
        if redo.size:
            ra, rd1, rb, rd2 = self._two(self._cols(redo, Z), self.cap)
            self.a[redo], self.d1[redo], self.b[redo], self.d2[redo] = ra, rd1, rb, rd2
        ch = np.concatenate(changed)
        all_c = np.arange(self.C.shape[0])
        for s in range(0, ch.size, self.chunk):
            rows = ch[s:s + self.chunk]
            D = self.D[rows] if self.D is not None else self._cols(rows, all_c)
            o1, o2 = self._terms(D, a[rows], d1[rows], d2[rows], k)
            n1, n2 = self._terms(D, self.a[rows], self.d1[rows], self.d2[rows], k)
            self.term1 += n1 - o1
            self.term2 += n2 - o2
        self._Z = Z

    def _state(self, Z: np.ndarray) -> None:
        if self._Z is None or Z.size != self._Z.size:
            self._reset(Z)
            return
        diff = np.flatnonzero(Z != self._Z)
        if diff.size == 1:
            self._swap(int(diff[0]), int(Z[diff[0]]))
        elif diff.size > 1:
            self._reset(Z)

    def scores(self, Z: np.ndarray) -> tuple[np.ndarray, float]:
        """(k × |C|) losses of all swaps and the loss of Z itself."""
        self._state(np.asarray(Z))
        current = float(self.d1.sum(dtype=np.float64))
        return self.term1[None, :] + self.term2, current

    def loss(self, Z: np.ndarray) -> float:
        return float(sum(D[:, Z].min(1).sum(dtype=np.float64) for _, _, D in self._blocks()))


def private_local_search(Y: np.ndarray, C: np.ndarray, order: np.ndarray, k: int, steps: int,
                         eps_step: float, eps_final: float, radius: float,
                         rng: np.random.Generator, ledger: EntityLedger, tag: str = "") -> tuple[np.ndarray, float]:
    """Private local search (paper Alg. 6) over candidates ``C`` (M × p).

    ``order`` ranks candidates for the start (finest cubes first, ties at random — post-processing
    of the released candidate set); the start is the first k. Each step: exponential mechanism at
    ``eps_step`` over {no swap} ∪ {a → c : c ∉ Z} with utility −L (sensitivity 4Λ², monotone).
    The returned solution is chosen among Z⁽⁰⁾..Z⁽ᵀ⁾ at ``eps_final`` (or the last one if
    ``eps_final`` is 0). Returns (indices into C of the k centres, the chosen solution's loss).
    """
    cap = 4.0 * radius * radius
    M = C.shape[0]
    Z = np.array(order[:k], dtype=np.int64)
    if M <= k or steps == 0:
        return Z, math.nan
    scorer = _SwapScorer(Y, C, cap)
    history, losses = [Z.copy()], []
    for _ in range(steps):
        swaps, current = scorer.scores(Z)
        if not losses:
            losses.append(current)
        swaps[:, Z] = np.inf  # a candidate already in Z is not a swap
        utilities = -np.concatenate([[current], swaps.ravel()])
        r = mech.exponential_mechanism(utilities, cap, eps_step, rng, monotone=True, ledger=ledger,
                                       stage="local search", note=f"{tag}swap step; loss clipped at 4Λ²")
        if r > 0:
            a, c = divmod(r - 1, M)
            Z = Z.copy()
            Z[a] = c
            losses.append(float(swaps[a, c]))
        else:
            losses.append(current)
        history.append(Z.copy())
    if eps_final > 0:
        t = mech.exponential_mechanism(-np.asarray(losses), cap, eps_final, rng, monotone=True, ledger=ledger,
                                       stage="local search", note=f"{tag}final choice among the {len(losses)} "
                                                                  "solutions; loss clipped at 4Λ²")
    else:
        t = len(history) - 1
    return history[t], losses[t]


# ---------------------------------------------------------------------------- stage 5: recovery
def recover_paper(sums: np.ndarray, denom: np.ndarray, s: int, bound: float, vmin: float, vmax: float,
                  eps_sup: float, eps_sum: float, rng: np.random.Generator, ledger: EntityLedger,
                  tag: str) -> np.ndarray:
    """Recovery of the paper's variant (Alg. 1 on sums) for k disjoint clusters.

    sums : (k, m) cluster sums of rows clipped to [vmin, vmax]. denom : (k, 1) max(noisy count, 1).
    Returns the prototypes (k, m): clip(noisy sum / denom, vmin, vmax) on each cluster's support.

    Privacy map (per entity; clusters are disjoint, so the k clusters compose in parallel):
    *support* — one-shot Gumbel top-s of each sum ≡ s peeled exponential mechanisms, per-coordinate
    sensitivity Λ∞ = max(|vmin|, |vmax|), monotone when vmin = 0 (adding a user only raises sums):
    ε_sup-DP; *sums* — Laplace on the s selected sums, L1 sensitivity s·Λ∞: ε_sum-DP. Each
    mechanism writes its own ledger row before its noise is drawn.
    """
    k, m = sums.shape
    if s < m:
        support = mech.gumbel_top_s(sums, s, bound, eps_sup, rng, monotone=vmin == 0, ledger=ledger,
                                    stage="recovery: support",
                                    note=f"{tag}top-{s} coordinates of each cluster sum; per-coordinate "
                                         "sensitivity Λ∞")
    else:
        support = np.broadcast_to(np.arange(m), (k, m))
    sel = np.take_along_axis(sums, support, axis=1)
    noisy_sel, _ = mech.laplace_mechanism(sel, s * bound, eps_sum, rng, ledger=ledger, stage="recovery: sums",
                                          note=f"{tag}{s} selected sums per cluster; L1 sensitivity s·Λ∞")
    P = np.zeros((k, m))
    np.put_along_axis(P, support, np.clip(noisy_sel / denom, vmin, vmax), axis=1)
    return P


def recover_gaussian(sums: np.ndarray, denom: np.ndarray, s: int, lam: float, vmin: float, vmax: float,
                     eps_sum: float, delta_sum: float, threshold: float, rng: np.random.Generator,
                     ledger: EntityLedger, what: str, sigma: float | None = None) -> np.ndarray:
    """Recovery of the Gaussian variant for k disjoint clusters.

    sums : (k, m) cluster sums of rows scaled to ℓ2 ≤ Λ (``lam``). denom : (k, 1) max(noisy count, 1).
    Returns the prototypes (k, m): clip(noisy sum / denom, vmin, vmax), then (post-processing with
    public quantities only) entries within ``threshold``·σ of 0 zeroed and, if s < m, the s largest
    magnitudes of each prototype kept.

    Privacy map: Gaussian noise on all m sums of each cluster, L2 sensitivity Λ (one user adds one
    row of norm ≤ Λ to one cluster), σ the smallest OpenDP's privacy map accepts for (ε_sum, δ_sum)
    (:func:`~dpfed_core.privacy.mechanisms.gaussian_sigma`); clusters disjoint → parallel. The
    mechanism writes its ledger row (with its zCDP ρ) before the noise is drawn. ``sigma``: σ
    calibrated by the caller for (eps_sum, delta_sum) (one of several releases planned together in
    zCDP); ``None`` → the σ of (eps_sum, delta_sum) alone.
    """
    k, m = sums.shape
    noisy_sums, sigma = mech.gaussian_mechanism(sums, lam, eps_sum, delta_sum, rng, ledger=ledger,
                                                stage="recovery: sums", note=f"{what}; L2 sensitivity Λ",
                                                sigma=sigma)
    if threshold > 0:  # post-processing with the public σ: drop sums within τσ of 0
        noisy_sums[np.abs(noisy_sums) < threshold * sigma] = 0.0
    P = np.clip(noisy_sums / denom, vmin, vmax)
    if s < m:  # post-processing: keep the s largest magnitudes of each prototype
        drop = np.argpartition(-np.abs(P), s - 1, axis=1)[:, s:]
        np.put_along_axis(P, drop, 0.0, axis=1)
    return P
