"""Evaluation metrics (SPEC §4, paper §5.2) for any model that scores by ``U @ V.T`` or by each
entity's own factors (:class:`~dpfed_core.models.entity_factors.EntityFactors`).

Formulas, for a test user u with training row T_u (the items u has in train), hidden entries
H_u = {(i, x_ui)} and candidate items C_u = all items not in T_u (hidden items are candidates):

* **train RMSE**: sqrt(Σ_{Ω_train} (x − û)² / |Ω_train|), Ω_train = every cell of the training
  matrix in ``zero`` mode, its stored entries in ``observed`` mode (the cells the objective fits).
* **test RMSE**: sqrt(Σ_{H} (x − û)² / |H|) over the hidden entries.
* **MAR** (mean average rank, paper Eq. 3): Σ_H x_ui·rank_ui / Σ_H x_ui, where rank_ui is the
  percentile of item i among C_u: (#{j ∈ C_u: s_j > s_i} + ½·#{j ∈ C_u, j ≠ i: s_j = s_i}) /
  (|C_u| − 1). 0 = top, 1 = bottom; ties count half, so a constant scorer gets exactly 0.5.
* **precision@N** = |top-N(C_u) ∩ H_u| / N; **recall@N** = |top-N(C_u) ∩ H_u| / |H_u|;
  **NDCG@N** with binary relevance = Σ_{r ≤ N, item_r ∈ H_u} 1/log2(r + 1) / Σ_{r ≤ min(N,|H_u|)} 1/log2(r + 1).
  Top-N breaks score ties by the lower item index. Averaged over test users with |H_u| > 0
  (users with nothing hidden are not test users and are skipped).

Clinical set metrics (event data such as eICU stays; :func:`set_metrics`), as medication-
recommendation benchmarks report them, for the recommended set R_u = top-N(C_u) against the hidden
set H_u (items with a hidden non-zero entry):

* **Jaccard** = |R_u ∩ H_u| / |R_u ∪ H_u|;
* **F1** = 2·P·R / (P + R) with P = |R_u ∩ H_u| / |R_u|, R = |R_u ∩ H_u| / |H_u| (0 when both are 0);
* **PR-AUC** = average precision of the full ranking of C_u against H_u:
  (1/|H_u|) Σ_{r: item_r ∈ H_u} precision@r — the area under the step precision–recall curve
  (scikit-learn's ``average_precision_score`` with ties broken by the lower item index).

Per-entity values aggregate that entity's rows; ``overall`` aggregates all rows the same way
(pooled sums, not a mean of entity means).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dpfed_core.data.split import TrainRows
from dpfed_core.models.entity_factors import as_entity_factors

METRIC_KEYS = ("train_rmse", "test_rmse", "mar", "precision", "recall", "ndcg")

#: Most score cells (test users × items) evaluated at once: 4 MB of scores; with the batch's copies
#: (the partial sort, the hidden-entry comparisons, each bounded alike) ~20 MB — the evaluation was
#: the peak of a 1M-row run at 2^21; smaller batches cost only a little loop overhead.
EVAL_BATCH_CELLS = 2**19
#: Rows of a split's training data (:class:`~dpfed_core.data.split.TrainRows`) built at a time by
#: :func:`evaluate` (~6.5 million entries at 25 items per user).
EVAL_TRAIN_ROWS = 2**18


def ranking_metrics(
    scores: np.ndarray,
    train_rows: sp.csr_matrix,
    test_rows: sp.csr_matrix,
    n: int = 10,
    copy: bool = True,
) -> dict[str, np.ndarray]:
    """Per-user ranking quantities for a batch of users.

    Parameters
    ----------
    scores : (b, m) predicted scores.
    train_rows, test_rows : (b, m) sparse rows of the training and hidden entries of those users.
    n : cut-off N of the top-N metrics.
    copy : False when ``scores`` is the caller's scratch array (it is then overwritten: one batch
        copy less).

    Returns
    -------
    dict of (b,) arrays: ``mar_num`` (Σ x·rank), ``mar_den`` (Σ x), ``precision``, ``recall``,
    ``ndcg``, ``has_test`` (bool). Rows without hidden entries get zeros and ``has_test`` False.
    """
    S = np.array(scores, dtype=np.float64, copy=True) if copy else np.asarray(scores, dtype=np.float64)
    b, m = S.shape
    tr = sp.csr_matrix(train_rows)
    te = sp.csr_matrix(test_rows)
    tr_rows = np.repeat(np.arange(b), np.diff(tr.indptr))
    S[tr_rows, tr.indices] = -np.inf
    n_cand = m - np.diff(tr.indptr)

    te_rows = np.repeat(np.arange(b), np.diff(te.indptr))
    te_cols, te_vals = te.indices, te.data
    s_hidden = S[te_rows, te_cols]
    # Compare each hidden score with its user's whole row, a bounded number of hidden entries at a
    # time: all at once is (hidden entries × m) — 5 per user, 5× the batch's own scores.
    greater = np.empty(te_rows.size, dtype=np.int64)
    equal = np.empty(te_rows.size, dtype=np.int64)
    step = max(1, EVAL_BATCH_CELLS // max(m, 1))
    for a in range(0, te_rows.size, step):
        rowS = S[te_rows[a:a + step]]
        sh = s_hidden[a:a + step, None]
        greater[a:a + step] = np.sum(rowS > sh, axis=1)
        equal[a:a + step] = np.sum(rowS == sh, axis=1) - 1
    denom = np.maximum(n_cand[te_rows] - 1, 1)
    rank = (greater + 0.5 * equal) / denom
    mar_num = np.bincount(te_rows, weights=te_vals * rank, minlength=b)
    mar_den = np.bincount(te_rows, weights=te_vals, minlength=b)

    n_eff = min(n, m)
    # The N best items, ties to the lower item index (what a stable sort on −score gives).
    top = top_n_stable(S, n_eff)
    hidden = np.zeros((b, m), dtype=bool)
    hidden[te_rows, te_cols] = True
    hits = np.take_along_axis(hidden, top, axis=1)
    # A slot holding a training item (−inf) can never be a hit; with fewer than N candidates the
    # tail slots are simply misses.
    n_hidden = np.diff(te.indptr)
    discounts = 1.0 / np.log2(np.arange(2, n_eff + 2))
    dcg = hits @ discounts
    ideal_cum = np.concatenate([[0.0], np.cumsum(discounts)])
    idcg = ideal_cum[np.minimum(n_hidden, n_eff)]
    n_hits = hits.sum(axis=1)
    has = n_hidden > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(has, n_hits / n, 0.0)
        recall = np.where(has, n_hits / np.maximum(n_hidden, 1), 0.0)
        ndcg = np.where(has, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
    return {"mar_num": mar_num, "mar_den": mar_den, "precision": precision, "recall": recall,
            "ndcg": ndcg, "has_test": has}


def top_n_stable(S: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n largest entries of each row of S (b × m), in decreasing order, ties to the
    lower column — exactly ``np.argsort(-S, axis=1, kind="stable")[:, :n]`` — by a partial sort
   : O(b·m) selection plus a sort of the n chosen, instead of sorting all m."""
    b, m = S.shape
    if n >= m:
        return np.argsort(-S, axis=1, kind="stable")
    kth = np.partition(S, m - n, axis=1)[:, m - n]  # the n-th largest value of each row (one copy of S)
    above = S > kth[:, None]
    tied = S == kth[:, None]
    need = n - above.sum(1)
    # among entries equal to the n-th value, the lowest columns fill the remaining slots
    chosen = above | (tied & (np.cumsum(tied, axis=1, dtype=np.int32) <= need[:, None]))
    cols = np.nonzero(chosen)[1].reshape(b, n)  # row-major: columns ascending within a row
    order = np.argsort(-np.take_along_axis(S, cols, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def _row_train_sse(train: sp.csr_matrix, U: np.ndarray, V: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-row squared error on the training cells and the number of cells, never densifying X."""
    n, m = train.shape
    if mode == "zero":
        XV = np.asarray(train @ V)
        xx = np.asarray(train.multiply(train).sum(axis=1)).ravel()
        quad = np.einsum("ij,jk,ik->i", U, V.T @ V, U)
        sse = np.maximum(xx - 2 * np.einsum("ij,ij->i", U, XV) + quad, 0.0)
        return sse, np.full(n, float(m))
    rows = np.repeat(np.arange(n), np.diff(train.indptr))
    resid = train.data - np.einsum("ij,ij->i", U[rows], V[train.indices])
    return np.bincount(rows, weights=resid**2, minlength=n), np.diff(train.indptr).astype(float)


def evaluate(
    U,
    V: np.ndarray | None,
    train: sp.csr_matrix | TrainRows,
    test: sp.csr_matrix,
    test_users: np.ndarray,
    entity_of_user: np.ndarray,
    entity_names: list[str],
    mode: str = "zero",
    n: int = 10,
    batch_size: int = 512,
) -> dict:
    """All SPEC §4 metrics per entity and overall for predictions ``U @ V.T`` — or, with ``U`` an
    :class:`~dpfed_core.models.entity_factors.EntityFactors` and ``V=None``, each entity's users
    scored by that entity's own factors (one entity's factors at a time: nothing
    O(items × entities × rank) or users × items is formed).

    Returns ``{"entities": [per-entity dicts], "overall": dict}`` with keys ``name``, ``n_users``,
    ``n_test_users``, ``train_rmse``, ``test_rmse``, ``mar``, ``precision_at_{n}``,
    ``recall_at_{n}``, ``ndcg_at_{n}``. A metric with no data (an entity without test users) is NaN.
    """
    factors = as_entity_factors(U, None if V is None else np.asarray(V, dtype=np.float64))
    # a split's rows (TrainRows) are read a block at a time (each entity's rows built when read)
    train = train if isinstance(train, TrainRows) else sp.csr_matrix(train)
    test = sp.csr_matrix(test)
    n_users, m = train.shape
    H = len(entity_names)
    if factors.shape != (n_users, m):
        raise ValueError(f"factors score {factors.shape[0]} users × {factors.shape[1]} items, "
                         f"the training matrix is {n_users} × {m}")

    tr_sse, tr_cnt = np.zeros(n_users), np.zeros(n_users)
    te_sse = np.zeros(n_users)
    te_cnt = np.diff(test.indptr).astype(float)
    per_user = {k: np.zeros(n_users) for k in ("mar_num", "mar_den", "precision", "recall", "ndcg")}
    has_test = np.zeros(n_users, dtype=bool)
    users = np.sort(np.asarray(test_users, dtype=np.int64))
    # A batch holds dense (users × items) scores and a (hidden entries × items) comparison: bounded in
    # cells, not users, so memory does not grow with the catalogue (512 users × 100,000
    # items took ~3 GB here).
    batch_size = max(1, min(batch_size, EVAL_BATCH_CELLS // max(m, 1)))
    streamed = isinstance(train, TrainRows)
    for sl, U_b, V_b in factors.blocks():
        if not (np.isfinite(U_b).all() and np.isfinite(V_b).all()):
            # NaN orders as no score does: the ranks, the top N and every metric would be wrong or fail
            # far from their cause
            bad = "users' factors" if not np.isfinite(U_b).all() else "item factors"
            raise ValueError(f"the model's {bad} for users {sl.start}–{sl.stop - 1} hold non-finite values "
                             "(NaN or ∞): its scores rank nothing; the method that fitted them has a bug")
        whole = sl.start == 0 and sl.stop == n_users
        te_b = test if whole else test[sl]
        if streamed:
            # a split's rows, EVAL_TRAIN_ROWS at a time (every quantity here is per row: the same
            # numbers as from the whole block), so a block as large as the data set never builds
            # its training rows at once
            tr_b = None
            for a in range(sl.start, sl.stop, EVAL_TRAIN_ROWS):
                b = min(a + EVAL_TRAIN_ROWS, sl.stop)
                tr_sse[a:b], tr_cnt[a:b] = _row_train_sse(train[a:b], U_b[a - sl.start:b - sl.start], V_b, mode)
        else:
            tr_b = train if whole else train[sl]
            tr_sse[sl], tr_cnt[sl] = _row_train_sse(tr_b, U_b, V_b, mode)
        rows = np.repeat(np.arange(sl.stop - sl.start), np.diff(te_b.indptr))
        res_b = te_b.data - np.einsum("ij,ij->i", U_b[rows], V_b[te_b.indices])
        te_sse[sl] = np.bincount(rows, weights=res_b**2, minlength=sl.stop - sl.start)
        mine = users[(users >= sl.start) & (users < sl.stop)] - sl.start
        for start in range(0, len(mine), batch_size):
            idx = mine[start:start + batch_size]
            seen = train[idx + sl.start] if streamed else tr_b[idx]
            res = ranking_metrics(U_b[idx] @ V_b.T, seen, te_b[idx], n, copy=False)
            for k in per_user:
                per_user[k][idx + sl.start] = res[k]
            has_test[idx + sl.start] = res["has_test"]

    def summarise(mask: np.ndarray, name: str) -> dict:
        t = mask & has_test
        nt = int(t.sum())

        def ratio(a, b):
            b = float(b)
            return float(a) / b if b > 0 else float("nan")

        return {
            "name": name,
            "n_users": int(mask.sum()),
            "n_test_users": nt,
            "train_rmse": float(np.sqrt(ratio(tr_sse[mask].sum(), tr_cnt[mask].sum()))),
            "test_rmse": float(np.sqrt(ratio(te_sse[mask].sum(), te_cnt[mask].sum()))),
            "mar": ratio(per_user["mar_num"][t].sum(), per_user["mar_den"][t].sum()),
            f"precision_at_{n}": ratio(per_user["precision"][t].sum(), nt),
            f"recall_at_{n}": ratio(per_user["recall"][t].sum(), nt),
            f"ndcg_at_{n}": ratio(per_user["ndcg"][t].sum(), nt),
        }

    entities = [summarise(entity_of_user == h, entity_names[h]) for h in range(H)]
    overall = summarise(np.ones(n_users, dtype=bool), "overall")
    return {"entities": entities, "overall": overall}


def set_metrics(scores: np.ndarray, train_rows: sp.csr_matrix, test_rows: sp.csr_matrix,
                n: int = 10) -> dict[str, np.ndarray]:
    """Per-user Jaccard, F1 and PR-AUC of the top-``n`` recommendations (formulas in the module
    docstring) for a batch of users.

    scores : (b, m) predicted scores; train_rows, test_rows : (b, m) CSR rows of the same users.
    Returns arrays of length b: ``jaccard``, ``f1``, ``pr_auc``, ``hits``, ``n_hidden``; users with
    nothing hidden get NaN (they are not test users). Items in the training row are never
    recommended or ranked (the candidates C_u).
    """
    S = np.array(scores, dtype=np.float64, copy=True)
    b, m = S.shape
    train = sp.csr_matrix(train_rows)
    test = sp.csr_matrix(test_rows)
    test = test.multiply(test > 0).tocsr()  # hidden *events*: non-zero entries
    rows_t = np.repeat(np.arange(b), np.diff(train.indptr))
    S[rows_t, train.indices] = -np.inf
    # stable order: higher score first, ties by lower item index
    order = np.lexsort((np.broadcast_to(np.arange(m), (b, m)), -S), axis=-1) if b else np.zeros((0, m), int)
    hidden = np.zeros((b, m), dtype=bool)
    rows_h = np.repeat(np.arange(b), np.diff(test.indptr))
    hidden[rows_h, test.indices] = True
    hidden[rows_t, train.indices] = False
    n_cand = m - np.diff(train.indptr)
    rel = np.take_along_axis(hidden, order, axis=1)  # relevance in ranked order
    # only candidates count: the last (m − |C_u|) positions hold the training items (score −inf)
    pos = np.arange(m)[None, :]
    rel &= pos < n_cand[:, None]
    n_hidden = rel.sum(axis=1)
    top = min(int(n), m)
    topn = np.minimum(top, n_cand)
    hits = (rel & (pos < topn[:, None])).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        jac = hits / (topn + n_hidden - hits)
        prec = hits / topn
        rec = hits / n_hidden
        f1 = np.where(hits > 0, 2 * prec * rec / (prec + rec), 0.0)
        cum = np.cumsum(rel, axis=1)
        prec_at = cum / (pos + 1)
        ap = (prec_at * rel).sum(axis=1) / n_hidden
    none = n_hidden == 0
    out = {"jaccard": jac, "f1": f1, "pr_auc": ap, "hits": hits.astype(float), "n_hidden": n_hidden.astype(float)}
    for k in ("jaccard", "f1", "pr_auc"):
        out[k] = np.where(none, np.nan, out[k]).astype(float)
    return out
