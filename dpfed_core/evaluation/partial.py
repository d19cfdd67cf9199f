"""Metrics from per-entity sufficient statistics, for runs where each entity evaluates itself.

In a deployment (:mod:`dpfed_core.deployment`) U_h never leaves entity h, so the entity
computes the pooled sums behind every SPEC §4 metric on its own test users
(:func:`entity_statistics`) and the coordinator adds them up (:func:`combine_statistics`). The sums
are exactly those :func:`dpfed_core.evaluation.metrics.evaluate` pools, so the metrics agree with an
in-process evaluation up to floating-point summation order.

These statistics are exact (not DP): they describe held-out test entries and are sent only so the
result document can report metrics, as the in-process run does. They are not part of the protocol.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .metrics import _row_train_sse, ranking_metrics

#: The sums one entity reports (all floats).
STAT_KEYS = ("n_users", "n_test_users", "train_sse", "train_cnt", "test_sse", "test_cnt",
             "mar_num", "mar_den", "precision", "recall", "ndcg")


def entity_statistics(U: np.ndarray, V: np.ndarray, train: sp.csr_matrix, test: sp.csr_matrix,
                      test_users: np.ndarray, mode: str = "zero", n: int = 10,
                      batch_size: int = 512) -> dict[str, float]:
    """Sufficient statistics of one entity (rows of ``train``/``test`` are its users; ``test_users``
    indexes them)."""
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    train = sp.csr_matrix(train)
    test = sp.csr_matrix(test)
    n_users = train.shape[0]
    tr_sse, tr_cnt = _row_train_sse(train, U, V, mode)
    te_rows = np.repeat(np.arange(n_users), np.diff(test.indptr))
    te_res = test.data - np.einsum("ij,ij->i", U[te_rows], V[test.indices])
    sums = {k: 0.0 for k in ("mar_num", "mar_den", "precision", "recall", "ndcg")}
    n_test = 0
    users = np.asarray(test_users, dtype=np.int64)
    for start in range(0, len(users), batch_size):
        idx = users[start:start + batch_size]
        res = ranking_metrics(U[idx] @ V.T, train[idx], test[idx], n)
        has = res["has_test"]
        n_test += int(has.sum())
        for k in sums:
            sums[k] += float(res[k][has].sum())
    return {"n_users": float(n_users), "n_test_users": float(n_test),
            "train_sse": float(tr_sse.sum()), "train_cnt": float(tr_cnt.sum()),
            "test_sse": float((te_res ** 2).sum()), "test_cnt": float(len(te_res)), **sums}


def metrics_from_statistics(stats: dict[str, float], name: str, n: int = 10) -> dict:
    """The metric dict of :func:`~dpfed_core.evaluation.metrics.evaluate` from pooled sums."""
    def ratio(a, b):
        return float(a) / float(b) if b > 0 else float("nan")

    nt = stats["n_test_users"]
    return {
        "name": name,
        "n_users": int(stats["n_users"]),
        "n_test_users": int(nt),
        "train_rmse": float(np.sqrt(ratio(stats["train_sse"], stats["train_cnt"]))),
        "test_rmse": float(np.sqrt(ratio(stats["test_sse"], stats["test_cnt"]))),
        "mar": ratio(stats["mar_num"], stats["mar_den"]),
        f"precision_at_{n}": ratio(stats["precision"], nt),
        f"recall_at_{n}": ratio(stats["recall"], nt),
        f"ndcg_at_{n}": ratio(stats["ndcg"], nt),
    }


def combine_statistics(per_entity: list[tuple[str, dict]], n: int = 10) -> dict:
    """``{"entities": [...], "overall": {...}}`` from ``[(name, statistics), …]``."""
    entities = [metrics_from_statistics(s, name, n) for name, s in per_entity]
    pooled = {k: float(sum(s[k] for _, s in per_entity)) for k in STAT_KEYS}
    return {"entities": entities, "overall": metrics_from_statistics(pooled, "overall", n)}
