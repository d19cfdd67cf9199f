"""An entity's own blend of score components, chosen on a local hold-out (nothing leaves the entity).

Round 2 of a federation and the ``local`` reference both score an entity's users with a weighted sum
of parts, each normalised so that weights are comparable:

* *matrix parts* — a factor model fitted on the entity's rows (its own NMF, or user factors on the
  broadcast item factors V); each user's score row is scaled to unit ℓ2 norm;
* *item parts* — one score per item for every user (the entity's own popularity, the federation's
  DP popularity, a score from public item features), scaled to unit ℓ2 norm.

The weights are chosen by coordinate search on a hold-out of one training item per user (users with
at least two items), by the mean rank of the held-out item (:func:`holdout_mar`, 0 = top); then every
part is refitted on all of the entity's rows. The search starts from the first matrix part alone, so
adding parts can only match or improve the hold-out score of that part.
"""
from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core.models.factorization import fit_nmf, single_threaded_blas

MatrixPart = Callable[[sp.csr_matrix], tuple[np.ndarray, np.ndarray]]  # rows → (U (n × r), V (m × r))
ItemPart = Callable[[sp.csr_matrix], np.ndarray]                       # rows → (m,) item scores

#: Weights tried for each part (coordinate search, two passes).
MATRIX_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
ITEM_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def holdout_mar(S: np.ndarray, train: sp.csr_matrix, hidden: np.ndarray, has: np.ndarray) -> float:
    """Mean rank (0 = top, ½ = random) of one hidden item per user among the items not in the
    user's (reduced) training row. S: (n × m) scores; hidden: (n,) item per user; has: (n,) bool."""
    if not has.any():
        return 0.5
    S = np.array(S[has], dtype=np.float64, copy=True)
    tr = train[has]
    rows = np.repeat(np.arange(S.shape[0]), np.diff(tr.indptr))
    S[rows, tr.indices] = -np.inf
    s_h = S[np.arange(S.shape[0]), hidden[has]]
    greater = (S > s_h[:, None]).sum(1)
    ties = (S == s_h[:, None]).sum(1) - 1
    n_cand = S.shape[1] - np.diff(tr.indptr)
    return float(np.mean((greater + 0.5 * ties) / np.maximum(n_cand - 1, 1)))


def holdout_split(X: sp.csr_matrix, rng: np.random.Generator) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """(reduced rows, hidden item per user, which users have one): one training item per user with
    at least two items is held out, chosen at random."""
    X = sp.csr_matrix(X, dtype=np.float64)
    n = X.shape[0]
    _, has, pos = _holdout_positions(X, rng)
    hidden = np.zeros(n, dtype=np.int64)
    hidden[has] = X.indices[pos[has]]
    return drop_entries(X, pos[has]), hidden, has


def _holdout_positions(X: sp.csr_matrix, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(entries per row, which rows have a held-out entry, the CSR position of each row's draw): the
    one draw :func:`holdout_split` and :func:`released_drop` share."""
    cnt = np.diff(X.indptr)
    has = cnt >= 2
    pos = X.indptr[:-1] + np.floor(rng.random(X.shape[0]) * np.maximum(cnt, 1)).astype(np.int64)
    return cnt, has, pos


def _inverse_row_norms(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    """1/‖U_u Vᵀ‖ for every row u (0 for an all-zero row), from the r × r Gram matrix of V: the
    score matrix U Vᵀ is never formed."""
    G = V.T @ V
    sq = np.maximum(np.einsum("ij,jk,ik->i", U, G, U), 0.0)
    norms = np.sqrt(sq)
    return np.where(norms > 1e-12, 1.0 / np.maximum(norms, 1e-300), 0.0)


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-300 else v


#: Cells (users × items) scored at once: memory stays two blocks of 2^20 doubles (16 MB) whatever
#: the hold-out size, never O(users × items) — a 100,000-item catalogue costs what the factors cost
#:.
BLOCK_CELLS = 2 ** 20


class _HoldoutScores:
    """Scores weight vectors on one hold-out: what does not depend on the weights — the candidate
    items' and hidden items' factor rows, which cells are no candidates, each user's
    number of candidates — is prepared once per search (~20–40 weight vectors), and each weight
    vector is scored in row blocks of :data:`BLOCK_CELLS` cells into two buffers kept across calls
    (a fresh block per part and call cost more in page faults and copies than the products).

    ``cols`` None: every item is a candidate and the hidden item's score is read from its own cell
    (exactly :func:`holdout_mar`); else the hidden item is ranked among ``cols`` outside the user's
    training row (its own cell, if sampled, not counted) and its score is computed on its own. The
    arithmetic is the direct scoring's — item + (w_0·U_0) V_0ᵀ + (w_1·U_1) V_1ᵀ + … in that order,
    block by block — so the search chooses exactly the weights the direct scoring chose."""

    def __init__(self, matrices: Sequence[tuple[np.ndarray, np.ndarray]], train: sp.csr_matrix,
                 hidden: np.ndarray, has: np.ndarray, cols: np.ndarray | None) -> None:
        n, m = train.shape
        self.exact = cols is None
        cols = np.arange(m) if cols is None else np.asarray(cols, dtype=np.int64)
        users = np.flatnonzero(has)
        k = cols.size
        pos = np.full(m, -1, dtype=np.int64)
        pos[cols] = np.arange(k)
        self.cols, self.hidden, self.n_users = cols, hidden[users], users.size
        self.U = [U[users] for U, _ in matrices]
        self.V = [V if self.exact else V[cols] for _, V in matrices]  # candidate rows, as the scoring reads them
        self.V_hidden = None if self.exact else [V[self.hidden] for _, V in matrices]  # users × rank
        tr = train[users]
        rows = np.repeat(np.arange(users.size), np.diff(tr.indptr))
        p = pos[tr.indices]
        inside = p >= 0
        ph = pos[self.hidden]
        self.hidden_cell = ph  # exact: every hidden item is a candidate (its own cell holds its score)
        own = ph >= 0
        # cells that are no candidates (the user's training items, its hidden item itself) by user
        ex_rows = np.concatenate([rows[inside], np.flatnonzero(own)])
        ex_cols = np.concatenate([p[inside], ph[own]])
        order = np.argsort(ex_rows, kind="stable")
        self.ex_rows, self.ex_cols = ex_rows[order], ex_cols[order]
        self.n_cand = k - np.bincount(rows[inside], minlength=users.size) - own
        self.step = max(1, BLOCK_CELLS // max(k, 1))
        self._buf: tuple[np.ndarray, np.ndarray] | None = None

    def mar(self, wm: Sequence[float], item: np.ndarray) -> float:
        """The hold-out MAR of the scores item + Σ_k (wm_k·U_k) V_kᵀ (item: (m,) over every item)."""
        if self.n_users == 0:
            return 0.5
        total = 0.0
        for _, block in self._block_ranks(wm, item):
            total += float(np.sum(block))
        return total / self.n_users

    def ranks(self, wm: Sequence[float], item: np.ndarray) -> np.ndarray:
        """(n_users,) every hold-out user's percentile rank of its hidden item (0 = top) under the
        scores of :meth:`mar` (whose value is their mean): what a paired comparison of two weight
        vectors needs."""
        out = np.empty(self.n_users)
        for start, block in self._block_ranks(wm, item):
            out[start: start + block.size] = block
        return out

    def _block_ranks(self, wm: Sequence[float], item: np.ndarray):
        """Yields (first user, (block,) percentile ranks) per row block of :data:`BLOCK_CELLS` cells."""
        if self._buf is None:
            shape = (min(self.step, self.n_users), self.cols.size)
            self._buf = (np.empty(shape), np.empty(shape))
        S_all, tmp_all = self._buf
        item_c = item[self.cols]
        for start in range(0, self.n_users, self.step):
            stop = min(self.n_users, start + self.step)
            S, tmp = S_all[: stop - start], tmp_all[: stop - start]
            S[:] = item_c
            for w, U, V in zip(wm, self.U, self.V):
                if w:
                    np.matmul(w * U[start:stop], V.T, out=tmp)
                    S += tmp
            if self.exact:
                s_h = S[np.arange(stop - start), self.hidden_cell[start:stop]]
            else:
                s_h = item[self.hidden[start:stop]]
                for w, U, Vh in zip(wm, self.U, self.V_hidden):
                    if w:
                        s_h = s_h + np.einsum("ij,ij->i", w * U[start:stop], Vh[start:stop])
            a, b = np.searchsorted(self.ex_rows, (start, stop))
            S[self.ex_rows[a:b] - start, self.ex_cols[a:b]] = -np.inf
            col = s_h[:, None]
            rank = np.count_nonzero(S > col, axis=1) + 0.5 * np.count_nonzero(S == col, axis=1)
            yield start, rank / np.maximum(self.n_cand[start:stop], 1)


def _blocked_mar(matrices: Sequence[tuple[np.ndarray, np.ndarray]], wm: Sequence[float], item: np.ndarray,
                 train: sp.csr_matrix, hidden: np.ndarray, has: np.ndarray,
                 cols: np.ndarray | None = None) -> float:
    """:func:`holdout_mar` of Σ_k w_k Û_k V_kᵀ + item (Û_k = U_k scaled to unit score rows), for one
    weight vector (a search scores many on one :class:`_HoldoutScores`). ``cols``: rank each hidden
    item among these candidate items only (a uniform sample of the catalogue, :func:`holdout_sample`)
    — the same percentile, estimated; None: among every item (exact)."""
    return _HoldoutScores(matrices, train, hidden, has, cols).mar(wm, item)


#: The hold-out scores at most this many users × candidate items per entity, whatever the entity's
#: size and the catalogue: the weight search is ~20–40 scorings, and at 100,000 items scoring every
#: user × item took 180 s for 5,000 users. Above the caps, a uniform sample of hold-out
#: users and of candidate items (the percentile rank of the hidden item among 2,000 random items has
#: a standard error ≤ 0.011 per user, ≤ 0.0004 over 1,000 users). The sample data (≤ 210 users and
#: 143 items an entity) is below both: its weights are exactly those of a full search.
HOLDOUT_USERS = 1000
HOLDOUT_ITEMS = 2000


def holdout_sample(has: np.ndarray, n_items: int, rng: np.random.Generator) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(hold-out users to score — None: all with a hidden item —, candidate items — None: all):
    uniform samples once the caps :data:`HOLDOUT_USERS`, :data:`HOLDOUT_ITEMS` are reached (the
    generator is drawn from only then)."""
    users = np.flatnonzero(has)
    pick = np.sort(rng.choice(users, HOLDOUT_USERS, replace=False)) if users.size > HOLDOUT_USERS else None
    cols = np.sort(rng.choice(n_items, HOLDOUT_ITEMS, replace=False)) if n_items > HOLDOUT_ITEMS else None
    return pick, cols


#: The hold-out's matrix parts are fitted on at most this many users' reduced rows: the search scores
#: only :data:`HOLDOUT_USERS` of them, and what the rest add is item factors already determined (a
#: rank-10 model of 500 items from 50,000 users). Fitted on every reduced row, a site of 10^6 users
#: spent as long on its hold-out fit as on its refit on all rows (round 2 at 10^7 users: 467 s against
#: 220 s with the cap). Sites up to this size (every site of the utility benchmark) fit every reduced row.
HOLDOUT_FIT_USERS = 50_000


def holdout_fit_rows(pick: np.ndarray | None, n_rows: int, rng: np.random.Generator) -> np.ndarray | None:
    """Sorted rows the hold-out's matrix parts are fitted on: None (every row) up to
    :data:`HOLDOUT_FIT_USERS` rows or when every hold-out user is scored (``pick`` None); else the
    scored users ``pick`` and a uniform sample of the others, :data:`HOLDOUT_FIT_USERS` in all (the
    generator is drawn from only then)."""
    if pick is None or n_rows <= HOLDOUT_FIT_USERS:
        return None
    others = np.setdiff1d(np.arange(n_rows), pick, assume_unique=True)
    extra = rng.choice(others, HOLDOUT_FIT_USERS - pick.size, replace=False)
    return np.union1d(pick, extra)


def choose_weights(matrices: Sequence[tuple[np.ndarray, np.ndarray]], items: Sequence[np.ndarray],
                   train: sp.csr_matrix, hidden: np.ndarray, has: np.ndarray,
                   cols: np.ndarray | None = None, evidence: float = 0.0,
                   default: tuple[Sequence[float], Sequence[float]] | None = None,
                   ) -> tuple[list[float], list[float], float]:
    """Coordinate search of the weights (matrix parts, item parts) minimising the hold-out MAR.
    matrices: factor pairs (U, V) whose score rows U_u Vᵀ have unit norm; items: unit item vectors
    (m,). Starts from the best single part. ``cols``: candidate items of the hold-out rank (None:
    every item). Returns (matrix weights, item weights, hold-out MAR).

    ``evidence`` = z > 0: the one-standard-error rule against the hold-out's own noise. The searched
    weights replace ``default`` (matrix weights, item weights: the caller's preferred blend; None:
    the first part alone, matrices before items) only when their hold-out MAR is lower by more than
    z standard errors of the paired per-user difference of ranks (sd/√n over the hold-out users, n
    ≥ 2; one user is no evidence). A hold-out of a few users cannot tell a searched blend from its
    own noise — the search itself picks the weights that fit that noise best — and keeps the
    default; the standard error shrinks like 1/√n, so a large hold-out keeps the searched blend
    whenever it is clearly better. z = 0: the plain search."""
    n, m = train.shape
    seen: dict[tuple, float] = {}
    holdout = _HoldoutScores(matrices, train, hidden, has, cols)  # what the weights do not change, once

    def item_vector(wi_) -> np.ndarray:
        return _item_vector(wi_, items, m)

    def score(wm_, wi_) -> float:
        # a weight vector already scored is not scored again: the second pass re-tries the first's
        # points wherever a weight did not move (same value, so the same search at half the cost)
        key = (tuple(wm_), tuple(wi_))
        if key not in seen:
            seen[key] = holdout.mar(wm_, item_vector(wi_))
        return seen[key]

    # start from the best single part: every part alone is in the search, so the blend is at least as
    # good on the hold-out as any one part (e.g. the entity's own model) by itself
    starts = [([1.0 if k == j else 0.0 for k in range(len(matrices))], [0.0] * len(items))
              for j in range(len(matrices))]
    starts += [([0.0] * len(matrices), [1.0 if k == j else 0.0 for k in range(len(items))])
               for j in range(len(items))]
    # the products are thin (block × rank times rank × items): a second BLAS thread only spins —
    # measured 72 vs 12 CPU-ms a weight vector on the loaded 2-core machine
    with single_threaded_blas():
        scored = [(score(a, b), a, b) for a, b in starts] or [(0.5, [], [])]
        best, wm, wi = min(scored, key=lambda t: t[0])
        wm, wi = list(wm), list(wi)
        for _ in range(2):
            for kind, weights, grid in (("m", wm, MATRIX_WEIGHTS), ("i", wi, ITEM_WEIGHTS)):
                for j in range(len(weights)):
                    for w in grid:
                        if w == weights[j]:
                            continue
                        trial = list(weights)
                        trial[j] = w
                        r = score(trial, wi) if kind == "m" else score(wm, trial)
                        if r < best - 1e-12:
                            best, weights[j] = r, w
        if evidence > 0 and starts:
            d_m, d_i = (list(default[0]), list(default[1])) if default is not None else \
                (list(starts[0][0]), list(starts[0][1]))
            # paired per-user difference of ranks, searched − default: < 0 where the search ranks
            # the hidden item higher
            diff = holdout.ranks(wm, item_vector(wi)) - holdout.ranks(d_m, item_vector(d_i))
            if not _clearly_lower(diff, evidence):
                return d_m, d_i, score(d_m, d_i)
    return wm, wi, best


#: Fewest hold-out users whose paired differences can count as evidence against the default: below
#: it the sample standard deviation is itself too noisy for a standard error (on a site of 10–18 users
#: the searched weights passed z = 1 against the default and then lost on the test rows), so a smaller
#: hold-out keeps the default.
MIN_EVIDENCE_USERS = 20


def _item_vector(weights: Sequence[float], items: Sequence[np.ndarray], m: int) -> np.ndarray:
    """Σ w_k·item_k over the weighted item parts (m,), as every hold-out scoring adds them."""
    return sum((w * v for w, v in zip(weights, items) if w), np.zeros(m)) * (1 + 1e-12)


def _better(matrices: Sequence[tuple[np.ndarray, np.ndarray]], items: Sequence[np.ndarray],
            train: sp.csr_matrix, hidden: np.ndarray, has: np.ndarray, cols: np.ndarray | None,
            a: tuple[Sequence[float], Sequence[float]], b: tuple[Sequence[float], Sequence[float]]) -> bool:
    """Is blend ``a`` (matrix weights, item weights) strictly better than ``b`` on the hold-out?"""
    m = train.shape[1]
    holdout = _HoldoutScores(matrices, train, hidden, has, cols)

    def score(w: tuple[Sequence[float], Sequence[float]]) -> float:
        return holdout.mar(list(w[0]), _item_vector(w[1], items, m))

    with single_threaded_blas():
        return score(a) < score(b) - 1e-12


def _clearly_lower(diff: np.ndarray, z: float) -> bool:
    """Is the mean of the paired differences ``diff`` (users,) below 0 by more than z standard
    errors (sd/√n)? Fewer than :data:`MIN_EVIDENCE_USERS` users: no."""
    if diff.size < max(2, MIN_EVIDENCE_USERS):
        return False
    return float(np.mean(diff)) < -1e-12 - z * float(np.std(diff, ddof=1)) / math.sqrt(diff.size)


def _unit_factors(U: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return U * _inverse_row_norms(U, V)[:, None], V


def fit_blend(X: sp.csr_matrix, matrix_parts: Sequence[MatrixPart], item_parts: Sequence[ItemPart],
              rng: np.random.Generator, evidence: float = 0.0,
              default: tuple[Sequence[float], Sequence[float]] | None = None,
              alone: tuple[Sequence[bool], Sequence[bool]] | None = None,
              alone_default: tuple[Sequence[float], Sequence[float]] | None = None,
              own_key: bytes | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """The entity's blended model: weights chosen on a hold-out, every part refitted on all rows.
    ``evidence``, ``default``: the one-standard-error rule of :func:`choose_weights` (0: off); with
    no hold-out user at all, ``default`` (when given) is the blend.

    ``alone`` (flags of the matrix and item parts that are the entity's own) with ``alone_default``
    (their default weights, full length): nested evidence. A hold-out of fewer than
    :data:`MIN_EVIDENCE_USERS` users is no evidence for any search and keeps ``default``; a larger one
    first chooses the blend of the entity's own parts against ``alone_default`` (exactly what the
    search without the other parts chooses); the bar is the better on the hold-out of that own blend
    and ``default`` (two blends fixed before any search over the other parts), and the whole search
    replaces the bar only where it beats it by the rule. Tested against ``default`` alone, a blend
    that led with the entity's own NMF cleared the bar easily and carried in a federation part the
    search had fitted to the hold-out's noise (MovieLens by occupation, no secure aggregation,
    ε = 0.3: sites of 60–70 users then lost 0.0015 MAR on their test rows); tested against the own
    blend alone, a default that shrinks toward a federation that knows the site's items was left
    out where it was better (a synthetic Zipf federation of 20 sites, secure, ε = 3: −0.0013 MAR
    against ``local`` with the better of the two, −0.0006 with the own blend).

    ``own_key``: what determines the own blend's search (:func:`fit_site_model`); with it the search
    is kept in :data:`SITE_FITS` — the own blend of ``alone``, or the whole blend when ``alone`` is
    None (every part is the entity's own: ``local``) — and a second search of the same key reads it.

    Returns ``(U_h, V_h, info)``: the entity's scores are ``U_h @ V_h.T`` (n × m, never formed here);
    ``info`` has the chosen ``matrix_weights``, ``item_weights``, the hold-out MAR and the ``blocks``
    ``(part, U, V)`` of every part with a weight (``part`` = ("matrix" | "item", index)), in the
    column order of U_h."""
    X = sp.csr_matrix(X, dtype=np.float64)
    n, m = X.shape
    reduced, hidden, has = holdout_split(X, rng)
    if has.any():
        pick, cols = holdout_sample(has, m, rng)
        fit_rows = holdout_fit_rows(pick, n, rng)
        fit_on = reduced if fit_rows is None else reduced[fit_rows]
        mats = [_unit_factors(*part(fit_on)) for part in matrix_parts]
        del fit_on
        vecs = [_unit(part(reduced)) for part in item_parts]
        if pick is not None:  # only the sampled hold-out users are scored
            at = pick if fit_rows is None else np.searchsorted(fit_rows, pick)
            mats = [(U[at], V) for U, V in mats]
            reduced_h, hidden_h, has_h = reduced[pick], hidden[pick], np.ones(pick.size, bool)
        else:
            reduced_h, hidden_h, has_h = reduced, hidden, has
        if alone is not None and evidence > 0 and default is not None \
                and np.count_nonzero(has_h) < MIN_EVIDENCE_USERS:
            wm, wi, best = list(default[0]), list(default[1]), math.nan  # no evidence for any search
        else:
            if alone is not None:
                # first the blend of the entity's own parts against their own default, which then is the
                # default the whole search must beat by the rule
                am, ai = [j for j, a in enumerate(alone[0]) if a], [j for j, a in enumerate(alone[1]) if a]
                d_own = default if alone_default is None else alone_default
                d_alone = None if d_own is None else ([d_own[0][j] for j in am], [d_own[1][j] for j in ai])
                wm_a, wi_a, _ = _own_blend(
                    own_key, lambda: choose_weights([mats[j] for j in am], [vecs[j] for j in ai], reduced_h,
                                                    hidden_h, has_h, cols, evidence, d_alone))
                full_m, full_i = [0.0] * len(mats), [0.0] * len(vecs)
                for j, w in zip(am, wm_a):
                    full_m[j] = w
                for j, w in zip(ai, wi_a):
                    full_i[j] = w
                # the bar is the better on the hold-out of two blends fixed before any search over
                # the federation's parts: the own blend and the caller's default (round 2's
                # empirical-Bayes shrinkage, which needs no search)
                if default is not None and _better(mats, vecs, reduced_h, hidden_h, has_h, cols, default,
                                                   (full_m, full_i)):
                    full_m, full_i = list(default[0]), list(default[1])
                default = (full_m, full_i)

            def search() -> tuple[list[float], list[float], float]:
                return choose_weights(mats, vecs, reduced_h, hidden_h, has_h, cols, evidence, default)

            # without ``alone`` every part is the site's own (``local``): the whole blend is its own blend
            wm, wi, best = _own_blend(own_key, search) if alone is None else search()
    elif default is not None:  # no user with two items: nothing to search on, with or without the rule
        wm, wi, best = list(default[0]), list(default[1]), math.nan
    else:  # no user with two items: the first part alone
        wm = [1.0] + [0.0] * (len(matrix_parts) - 1) if matrix_parts else []
        wi = ([0.0] * len(item_parts)) if matrix_parts else [1.0] + [0.0] * (len(item_parts) - 1)
        best = math.nan
    # the hold-out's rows and scored parts are done with: the refit holds the site's rows once
    del reduced, hidden
    mats = vecs = reduced_h = hidden_h = None
    blocks = []  # (("matrix" | "item", index), U block, V block) of every part with a weight
    for j, (w, part) in enumerate(zip(wm, matrix_parts)):
        if w == 0:
            continue
        U, V = _unit_factors(*part(X))
        blocks.append((("matrix", j), U * w, V))
    for j, (w, part) in enumerate(zip(wi, item_parts)):
        if w == 0:
            continue
        blocks.append((("item", j), np.full((n, 1), w), _unit(part(X))[:, None]))
    if not blocks:
        blocks = [(("none", 0), np.zeros((n, 1)), np.zeros((m, 1)))]
    info = {"matrix_weights": wm, "item_weights": wi, "holdout_mar": best, "blocks": blocks}
    return (*blend_columns(info), info)


def blend_columns(info: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(U, V)`` of a fitted blend (``info`` of :func:`fit_blend` or :func:`fit_site_model`): its
    blocks side by side, so that the site's scores are U Vᵀ."""
    blocks = info["blocks"]
    return np.hstack([b[1] for b in blocks]), np.hstack([b[2] for b in blocks])


def own_nmf(X: sp.csr_matrix, rank: int, lam: float, mode: str, max_iter: int,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The entity's own NMF ``(W, V)``, fitted on the items it has rows for: V is 0 on the others
    (as a fit on every column converges to: an all-zero column's HALS update is 0), so the fit costs
    O(its items × rank) per iteration, not O(catalogue × rank) — a 100,000-item declared catalogue
    made each entity's own model 20× slower."""

    X = sp.csr_matrix(X, dtype=np.float64)
    used = np.flatnonzero(np.bincount(X.indices, minlength=X.shape[1]))
    if used.size == 0:  # no rows at all: a zero model (nothing to learn, nothing to draw)
        return np.zeros((X.shape[0], rank)), np.zeros((X.shape[1], rank))
    if used.size == X.shape[1] and X.has_canonical_format:  # every item used: X is what X[:, used] copies
        return fit_nmf(X, rank, lam, mode, max_iter=max_iter, rng=rng)[:2]
    W, V_used, _ = fit_nmf(X[:, used], rank, lam, mode, max_iter=max_iter, rng=rng)
    V = np.zeros((X.shape[1], rank))
    V[used] = V_used
    return W, V


def popularity(X: sp.csr_matrix) -> np.ndarray:
    """The entity's own item popularity (count of its users per item): exact and local."""
    X = sp.csr_matrix(X)
    return np.bincount(X.indices, minlength=X.shape[1]).astype(np.float64)


#: Round 2's default blend, kept by a site whose hold-out is too small for evidence: the site's
#: popularity shrunk toward the federation's (:func:`shrunk_popularity`). ``local`` keeps the site's
#: own popularity alone; the federation's factors enter only by the one-standard-error rule.
DEFAULT_PARTS = ("shrunk popularity",)


def _frequencies(X: sp.csr_matrix) -> tuple[np.ndarray, int]:
    """(each item's share of the site's users (m,), users with a row)."""
    X = sp.csr_matrix(X)
    n = int(np.count_nonzero(np.diff(X.indptr)))
    return popularity(X) / max(n, 1), n


def _support(g: np.ndarray, support: np.ndarray | None) -> np.ndarray:
    return np.ones(g.shape[0], bool) if support is None else np.asarray(support, bool)


def _eb_weight(p: np.ndarray, g: np.ndarray, n: int) -> float:
    """λ = V / (V + D) of frequencies p (n users) against g scaled to p's total (see
    :func:`shrinkage_weight`)."""
    if n == 0 or g.sum() <= 0:
        return 1.0 if n == 0 and g.sum() > 0 else 0.0
    if p.sum() <= 0:  # the site has none of these items: nothing of its own to keep
        return 1.0
    q = g * (p.sum() / g.sum())
    V = float(np.sum(p * (1.0 - np.minimum(p, 1.0)))) / n
    D = max(0.0, float(np.sum((p - q) ** 2)) - V)
    return V / (V + D) if V + D > 0 else 0.0


def shrinkage_weight(X: sp.csr_matrix, g: np.ndarray, support: np.ndarray | None = None) -> float:
    """λ ∈ [0, 1], how far a site's default shrinks its own popularity toward the federation's: the
    empirical-Bayes (James–Stein) weight V / (V + D) of the site's own item frequencies p̂ (n users)
    against the federation's DP popularity g (scaled to the same total), where V = Σ p̂(1 − p̂)/n is
    the sampling noise of p̂ and D = max(0, ‖p̂ − g‖² − V) how far the site really is from the
    federation (g's own DP noise is part of ‖p̂ − g‖², so a noisy g earns less weight). A site of a
    few users (V large) leans on the federation; a site whose items differ from the federation's
    beyond its own noise (its own vocabulary, another case mix) keeps its own popularity.

    ``support`` (items,) bool: the items g speaks of (a DP-selected catalogue's items the site knows);
    λ is computed on them alone — outside, g's zeros say "not shared", not "never used". None: every
    item. From the site's own rows and the broadcast g only: local, nothing released."""
    p, n = _frequencies(X)
    g = np.maximum(np.asarray(g, dtype=np.float64), 0.0)
    S = _support(g, support)
    return _eb_weight(p[S], g[S], n)


def shrunk_popularity_parts(X: sp.csr_matrix, g: np.ndarray,
                            support: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """``(own, c)`` with :func:`shrunk_popularity` = own + c·max(g, 0)·1_support: ``own`` is zero off the
    items the site has rows for (its own frequencies, scaled by 1 − λ on the support), so in round 2 it
    is a local column of the site's items only and c·g rides on the broadcast popularity column — the
    site's own columns stay bounded by its items, not the catalogue."""
    p, n = _frequencies(X)
    g = np.maximum(np.asarray(g, dtype=np.float64), 0.0)
    S = _support(g, support)
    lam = _eb_weight(p[S], g[S], n)
    # a site with no rows has λ = 1: its estimate is the federation's popularity (on one user's scale)
    if lam == 0.0 or g[S].sum() <= 0:
        return p, 0.0
    own = p.copy()
    own[S] *= 1.0 - lam
    mass = p[S].sum() if p[S].sum() > 0 else 1.0
    return own, lam * mass / float(g[S].sum())


def shrunk_popularity(X: sp.csr_matrix, g: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
    """The site's item frequencies shrunk toward the federation's DP popularity g — the
    empirical-Bayes estimate itself, on one scale: on ``support`` (None: every item)
    (1 − λ)·p̂ + λ·q with q = g scaled to p̂'s total there and λ = :func:`shrinkage_weight`; elsewhere p̂.

    Mixing the two as unit vectors instead (what the default did before) gave g far more than its λ
    wherever g covers a few items: its unit vector is concentrated, so a λ of 0.002–0.005 still lifted
    a DP catalogue's 14–22 items above every item the site had seen as often (MovieLens by
    occupation, no secure aggregation, ε = 0.3: sites of 7–28 users lost 0.0001–0.0005 MAR).

    Measured and not kept: the site's counts with g only breaking their ties (c·max g half a count
    step, so nothing counted is reordered). It gives up a third of what the shrinkage gains where the
    federation knows the site's items (eICU by hospital, formulary, secure, ε = 1: −0.0234 ± 0.0015
    against −0.0262 ± 0.0022 MAR against ``local``, 5 seeds) and moves the one cell where the
    shrinkage loses (eICU by hospital, class|ingredient|drug names, secure, ε = 0.3: +0.000016 ±
    0.000016 → +0.000002 ± 0.000011) to another (raw drug strings, no secure aggregation, ε = 0.3:
    −0.0000 → +0.000006 ± 0.000005, every seed above zero: a site's few catalogue items lifted over
    its equally counted others); centred on the support it moved hospitals of 2–3 test users by up
    to ±0.04."""
    own, c = shrunk_popularity_parts(X, g, support)
    g = np.maximum(np.asarray(g, dtype=np.float64), 0.0)
    return own + c * np.where(_support(g, support), g, 0.0) if c else own


def site_rng(X: sp.csr_matrix, digest: bytes | None = None) -> np.random.Generator:
    """A site's own stream for its local fitting (the hold-out draw, its NMF's start): a function of its
    training rows alone (BLAKE2b of the CSR arrays). ``local`` and a federation's round 2 then fit the
    same hold-out and the same own model on the same rows, so where the federation adds nothing the two
    are the same model — the comparison is paired, not two hold-out draws apart. Nothing here is a
    mechanism's noise, and nothing leaves the site. ``digest``: :func:`site_digest` of X, when the
    caller has it."""
    return np.random.default_rng(int.from_bytes(site_digest(X) if digest is None else digest, "little"))


def site_digest(X: sp.csr_matrix) -> bytes:
    """BLAKE2b of a site's rows (its CSR arrays and shape): the seed of :func:`site_rng`, and what
    stands for the rows in the keys of :data:`SITE_FITS`, so a fit reads the site's rows through the
    hash once, not once per key (~0.7 s a time for 10^6 users)."""
    h = hashlib.blake2b(digest_size=16, person=b"dpfed-site-fit1")
    _hash_csr(h, X)
    return h.digest()


def _site_streams(X: sp.csr_matrix, digest: bytes | None = None) -> tuple[np.random.Generator, np.random.Generator]:
    """(the hold-out's stream, the own model's stream) of a site's local fitting on rows X: both
    functions of X alone (:func:`site_rng`; ``digest``: :func:`site_digest` of X, when the caller has
    it), so the validation entries are known before any release."""
    rng = site_rng(X, digest)
    return rng, rng.spawn(1)[0]  # spawning leaves the parent's state where it was


def _same_rows(A, B: sp.csr_matrix) -> bool:
    """``A`` is ``B``: CSR with the same shape on the same arrays in memory (a wrapper or a view, not a
    copy) — so a digest of ``B`` is one of ``A``."""
    if not (sp.issparse(A) and A.format == "csr" and A.shape == B.shape):
        return False
    return all(a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
               and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
               for a, b in ((A.data, B.data), (A.indices, B.indices), (A.indptr, B.indptr)))


def released_rows(X: sp.csr_matrix) -> sp.csr_matrix:
    """The site's rows without its validation entries — what every DP release of the site is computed
    from (the catalogue's histogram and every stage of round 1).

    Round 2 chooses how much weight the federation's parts get by how well they rank one held-out
    training item per user (:func:`fit_blend`). Had that item been in the site's releases, the
    federation's parts would carry the very entry they are scored on — its co-occurrences with the
    user's other items, its count in the popularity — and would look better on the hold-out than on
    unseen entries (measured on a synthetic Zipf federation at ε = 3, secure: hold-out MAR 0.11–0.14 with
    the federation's parts against 0.15–0.21 alone, then worse than going alone on the test entries for
    11 of 12 sites). The validation entries are a function of the site's rows alone (:func:`site_rng`),
    the same ones :func:`fit_site_model` holds out with its default stream; a user with one item keeps it.
    Round 2 still fits every part on all of the site's rows."""
    return drop_entries(X, released_drop(X))


def released_drop(X: sp.csr_matrix) -> np.ndarray:
    """The CSR positions of the validation entries :func:`released_rows` leaves out of X (one int per
    user with two items or more): with :func:`drop_entries` the released rows are rebuilt when needed,
    so a federation keeps 8 bytes per user per site instead of a copy of every site's rows."""
    X = sp.csr_matrix(X, dtype=np.float64)
    _, has, pos = _holdout_positions(X, _site_streams(X)[0])
    return pos[has]


def drop_entries(X: sp.csr_matrix, drop: np.ndarray) -> sp.csr_matrix:
    """X without the entries at CSR positions ``drop``; with ``drop`` = :func:`released_drop` of X, the
    hold-out's reduced rows of :func:`holdout_split`. A canonical X (a split's rows) takes no COO round
    trip, whose int64 row and column arrays per entry would hold the site's rows 4–5 times over (and
    as many times again for each site fitted at once)."""
    from dpfed_core.data.split import keep_entries

    X = sp.csr_matrix(X, dtype=np.float64)
    keep = np.ones(X.nnz, dtype=bool)
    keep[drop] = False
    if not X.has_canonical_format:  # through COO: sorted, duplicates summed
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return sp.csr_matrix((X.data[keep], (rows[keep], X.indices[keep])), shape=X.shape)
    return keep_entries(X, keep)


#: Entries widened and fed to a hash at a time (:func:`_hash_csr`).
_HASH_CHUNK = 1 << 20


def _hash_csr(h, X: sp.spmatrix) -> None:
    """Feed a sparse matrix to the hash ``h``: its shape and CSR arrays at fixed widths (the caller's
    matrix is read, never reordered). Fed a chunk at a time — the same bytes, so the same digest — and
    not as whole widened copies, which would be two more copies of a site's rows per hash."""
    X = sp.csr_matrix(X)
    h.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    for a, dtype in ((X.indptr, np.int64), (X.indices, np.int64), (X.data, np.float64)):
        for i in range(0, a.size, _HASH_CHUNK):
            h.update(np.ascontiguousarray(a[i:i + _HASH_CHUNK], dtype=dtype).tobytes())


#: Bytes of site fits kept for reuse (:class:`_SiteFits`): every ML-100K site's own model twice
#: over is ~3 MB. Kept small because the dashboard's process lives long (its memory is bounded); a fit
#: pushed out, or too large for the bound, is simply refitted.
SITE_FIT_BYTES = 64 * 2 ** 20


def _digest(*parts) -> bytes:
    """BLAKE2b of arrays (sparse: their CSR arrays and shape) and plain values, in order."""
    h = hashlib.blake2b(digest_size=20, person=b"dpfed-site-memo")
    for p in parts:
        if not sp.issparse(p) and hasattr(p, "__array__"):  # a table's repr is abridged: hash its values
            p = np.asarray(p)
        if sp.issparse(p):
            _hash_csr(h, p)
        elif isinstance(p, np.ndarray):
            h.update(repr((p.shape, p.dtype.str)).encode())
            h.update(np.ascontiguousarray(p).tobytes())
        else:
            h.update(repr(p).encode())
        h.update(b"|")
    return h.digest()


class _SiteFits:
    """The site's own parts already fitted in this process, by what determines them: ``local`` and a
    federation's round 2 fit the same own NMF and content model on the same rows from the same stream
    (:func:`site_rng`), and a comparison run fits both — without this memo each site's own model would be
    fitted twice for one answer. A fit is a pure function of (its rows, its parameters, its generator's state before the
    fit), so a hit returns exactly what the fit would, and leaves the generator where the fit would
    have left it. Copies in and out: no caller can change a kept fit. Least recently used first out,
    within :data:`SITE_FIT_BYTES`."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes, self.bytes = int(max_bytes), 0
        self._fits: OrderedDict[bytes, tuple[tuple[np.ndarray, ...], dict | None, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def part(self, name: str, fit: Callable[[sp.csr_matrix], tuple[np.ndarray, ...]], params: tuple,
             rng: np.random.Generator | None = None,
             known: tuple[sp.csr_matrix, bytes] | None = None) -> Callable[[sp.csr_matrix], tuple[np.ndarray, ...]]:
        """``fit`` as a part that reuses a kept fit of the same rows, ``params`` and generator state.
        ``known``: (rows, their :func:`site_digest`) — called on those rows, the part keys them by the
        digest instead of hashing them again."""

        def remembered(Z: sp.csr_matrix) -> tuple[np.ndarray, ...]:
            rows = known[1] if known is not None and _same_rows(Z, known[0]) else Z
            key = _digest(name, params, None if rng is None else rng.bit_generator.state, rows)
            hit = self._hit(key)
            if hit is not None:
                out, state, _ = hit
                if rng is not None:
                    rng.bit_generator.state = state
                return tuple(a.copy() for a in out)
            out = tuple(fit(Z))
            self._keep(key, out, None if rng is None else rng.bit_generator.state)
            return out

        return remembered

    def remember(self, key: bytes, compute: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
        """``compute()`` (arrays, a pure function of ``key``) kept under ``key``: a second call reads it."""
        hit = self._hit(key)
        if hit is not None:
            return tuple(a.copy() for a in hit[0])
        out = tuple(compute())
        self._keep(key, out, None)
        return out

    def _hit(self, key: bytes) -> tuple[tuple[np.ndarray, ...], dict | None, int] | None:
        with self._lock:
            hit = self._fits.get(key)
            if hit is not None:
                self._fits.move_to_end(key)
                self.hits += 1
            return hit

    def _keep(self, key: bytes, out: tuple[np.ndarray, ...], state: dict | None) -> None:
        size = sum(int(a.nbytes) for a in out)
        with self._lock:
            self.misses += 1
            if size > self.max_bytes or key in self._fits:
                return
            self._fits[key] = (tuple(a.copy() for a in out), state, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (_, _, s) = self._fits.popitem(last=False)
                self.bytes -= s

    def clear(self) -> None:
        with self._lock:
            self._fits.clear()
            self.bytes = self.hits = self.misses = 0


SITE_FITS = _SiteFits(SITE_FIT_BYTES)


def _own_blend(key: bytes | None, search: Callable[[], tuple[list[float], list[float], float]]
               ) -> tuple[list[float], list[float], float]:
    """The site's own blend (matrix weights, item weights, hold-out MAR), searched once per ``key`` in
    this process (:data:`SITE_FITS`): ``local`` chooses exactly the blend round 2's nested evidence
    starts from, and a comparison run searches it once. None: searched every time."""
    if key is None:
        return search()
    wm, wi, best = SITE_FITS.remember(key, lambda: tuple(np.asarray(x, dtype=np.float64) for x in search()))
    return wm.tolist(), wi.tolist(), float(best)


def value_scale(X: sp.csr_matrix, blocks) -> float:
    """The factor a > 0 that puts a blend's scores on the scale of the site's values: the least-squares
    a of x ≈ a·s over the site's observed entries (s the blend's score of each, from ``blocks``
    ``(part, U, V)``). The blend is chosen for ranking, from unit-scaled parts, so its scores are not
    values; a positive factor leaves every ranking as it is. 1 when the scores or their agreement with
    the values are not positive (nothing to scale by). Local: the site's own rows and model only."""
    X = sp.csr_matrix(X)
    if X.nnz == 0 or not blocks:
        return 1.0
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    s = np.zeros(X.nnz)
    for _, U, V in blocks:
        s += np.einsum("ij,ij->i", U[rows], V[X.indices])
    ss, xs = float(s @ s), float(s @ X.data)
    return xs / ss if ss > 0 and xs > 0 else 1.0


def fit_site_model(X: sp.csr_matrix, *, rank: int, lam: float, mode: str, max_iter: int,
                   rng: np.random.Generator | None = None, evidence: float = 1.0, features=None,
                   V_fed: np.ndarray | None = None, g: np.ndarray | None = None,
                   own: bool = True, default_rule: str = "shrunk",
                   known_only: bool = False) -> tuple[list[str], list[str], dict]:
    """A site's model: the one fitting routine of round 2 and of ``local`` (going alone), so that
    both get the same care — the same parts, the same hold-out search, the same one-standard-error
    rule against the same kind of default (:data:`DEFAULT_PARTS`).

    X : the site's rows on its whole item axis (every item it has data for is scored).
    V_fed : the federation's item factors on that axis (zero rows where the catalogue has nothing), or
        None; g : the federation's DP popularity on that axis, or None (``local``: both None).
    own : include the site's own parts (its NMF at ``rank``, its exact popularity and, with public
        ``features`` (items × f), its feature profile and content model); False: the federation's
        parts only.
    The blend may give the federation's parts weight zero (they are searched like any other), so on
    the hold-out the federation can only add to what the site has alone.

    rng : the stream of the local fitting; None (the callers' choice): :func:`site_rng` of X, so that
        ``local`` and round 2 on the same rows share their hold-out — the entries every release of the
        site leaves out (:func:`released_rows`).
    known_only : the federation's parts reach only the items the site knows by name (a DP-selected
        catalogue: a released hash bucket maps back onto the names the site holds rows for). Each part
        is then masked by the items of the rows it is fitted on, so on the hold-out an item only the
        hidden entry named is as unknown as an unseen item is on the test entries — masked by the full
        rows instead, the hidden item stood out as one of the few the federation scores (the hold-out
        then favoured the federation's parts, and the test entries did not).
    default_rule : what a hold-out too small for evidence (< :data:`MIN_EVIDENCE_USERS` users) keeps:
        "shrunk" — :data:`DEFAULT_PARTS` (the site's popularity shrunk toward the federation's by
        empirical Bayes); "alone" — the site's own
        popularity, as ``local`` keeps. Either way a larger hold-out first chooses the site's own blend
        exactly as ``local`` does; the bar is the better on the hold-out of that blend and the
        default, and the federation's parts enter only where the whole search beats the bar by the
        rule (nested evidence, :func:`fit_blend`).

    Returns ``(matrix part names, item part names, fit_blend's info)``: a block ``(("matrix", j), U, V)``
    of ``info["blocks"]`` is the matrix part named ``matrix_names[j]``, likewise for items."""
    from dpfed_core.models.factorization import fit_rows_given
    from dpfed_core.models.shared_items import known_items
    from dpfed_core.models.side_information import content_factors, public_feature_scores, smooth_over_features

    X = sp.csr_matrix(X, dtype=np.float64)
    x_key = site_digest(X) if rng is None or own else None  # the rows hashed once for streams and keys
    rng, own_rng = _site_streams(X, x_key) if rng is None else (rng, rng.spawn(1)[0])
    m = X.shape[1]
    matrices: list[tuple[str, MatrixPart]] = []
    items: list[tuple[str, ItemPart]] = []

    def on_known(A: np.ndarray, Z: sp.csr_matrix) -> np.ndarray:
        if not known_only:
            return A
        keep = known_items(Z)
        return A * (keep[:, None] if A.ndim == 2 else keep)

    def federation_part(Z: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        V_z = on_known(V_fed, Z)
        return fit_rows_given(Z, V_z, lam, mode), V_z

    if V_fed is not None and V_fed.shape[1] > 0:
        matrices.append(("federation", federation_part))
    if own:
        own_fit = SITE_FITS.part("own nmf", lambda Z: own_nmf(Z, int(rank), lam, mode, int(max_iter), own_rng),
                                 (int(rank), float(lam), mode, int(max_iter)), own_rng, known=(X, x_key))
        matrices.append(("own", own_fit))
    def g_support(Z: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray | None]:
        # the items g speaks of: with a DP catalogue, its items the rows Z know (zero rows elsewhere)
        g_z = on_known(g, Z)
        return g_z, (g_z != 0) if known_only else None

    if g is not None:
        items.append(("dp popularity", lambda Z: on_known(g, Z)))
    if own:
        items.append(("own popularity", popularity))
    if g is not None and own:
        items.append(("shrunk popularity", lambda Z: shrunk_popularity(Z, *g_support(Z))))
    if features is not None and features.shape[0] == m:
        if g is not None:
            # the DP popularity smoothed over the public features (post-processing of the broadcast):
            # how an item outside the catalogue the site never saw can still reach it
            if known_only:  # smoothed from the popularity the rows Z know, as the other parts
                items.append(("dp popularity over features",
                              lambda Z: smooth_over_features(on_known(g, Z), features, 0.5)))
            else:
                g_smooth = smooth_over_features(g, features, 0.5)
                items.append(("dp popularity over features", lambda Z: g_smooth))
        if own:
            items.append(("own feature profile", lambda Z: public_feature_scores(Z, features)))
            content = SITE_FITS.part("own content", lambda Z: content_factors(Z, features, lam, mode),
                                     (float(lam), mode, _digest(features)), known=(X, x_key))
            matrices.append(("own content", content))
    has_fed = V_fed is not None and bool(np.any(V_fed))
    mnames, inames = [name for name, _ in matrices], [name for name, _ in items]
    # what ``local`` keeps without evidence: the site's own popularity alone
    own_default = ([0.0] * len(mnames), [1.0 if name == "own popularity" else 0.0 for name in inames])
    alone = alone_default = None
    # what determines the site's own blend (its own parts, its hold-out): ``local`` and round 2 choose
    # the same one, so a comparison run searches it once (:func:`_own_blend`)
    own_key = _digest("own blend", x_key, [n for n in mnames if n.startswith("own")],
                      [n for n in inames if n.startswith("own")], int(rank), float(lam), mode, int(max_iter),
                      float(evidence), None if features is None else _digest(features),
                      rng.bit_generator.state, own_rng.bit_generator.state) if own else None
    if not own:  # the federation's parts only: factors and DP popularity at equal weight
        default = ([1.0 if name == "federation" and has_fed else 0.0 for name in mnames],
                   [1.0 if name == "dp popularity" else 0.0 for name in inames])
    elif g is None and V_fed is None:  # ``local``: the site alone
        default = own_default
    else:  # the site with the federation's parts: nested evidence from its own blend
        alone = ([name.startswith("own") for name in mnames], [name.startswith("own") for name in inames])
        alone_default = own_default
        # without evidence only the shrunk popularity: the federation's factors, at the weight λ beside
        # it, lifted the few items a DP catalogue shares above everything a small site had seen (their
        # unit score rows are as concentrated as those items are few) — MovieLens by occupation,
        # secure, ε = 0.3: +0.00007 MAR against ``local``; left to the hold-out, −0.00006, and eICU by
        # hospital (formulary, secure, ε = 1) −0.0260 against −0.0238
        default = own_default if g is None or default_rule == "alone" else \
            ([0.0] * len(mnames), [1.0 if name == "shrunk popularity" else 0.0 for name in inames])
    _, _, info = fit_blend(X, [f for _, f in matrices], [f for _, f in items], rng, float(evidence), default,
                           alone, alone_default, own_key)
    if mode == "observed":
        info["value_scale"] = value_scale(X, info["blocks"])
        info["blocks"] = [(part, U * info["value_scale"], V) for part, U, V in info["blocks"]]
    if "shrunk popularity" in inames and info["item_weights"][inames.index("shrunk popularity")]:
        # the block scores unit(own + c·g): its two parts apart, for a caller that keeps the site's own
        # columns on its items only and puts the g part on the broadcast popularity column
        # (g_support's support is where g is non-zero, so own + c·g is the part's vector exactly)
        g_x, support = g_support(X)
        own_v, c = shrunk_popularity_parts(X, g_x, support)
        norm = float(np.linalg.norm(own_v + c * np.maximum(g_x, 0.0)))
        info["shrunk_parts"] = (own_v / norm, c / norm) if norm > 1e-300 else None
    return mnames, inames, info
