"""Scores from public item side information (item features declared with ``--item-features``,
MovieLens' genres and years, eICU's name hierarchies and drug-name tokens).

Public features, combined with an entity's own rows, stay local: nothing here releases anything.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def public_feature_scores(X: sp.csr_matrix, features) -> np.ndarray:
    """An item score from public item features: the items like the entity's popular ones (the
    entity's feature profile — its users' interactions summed over each feature — projected back on
    the items). X : (n_users, n_items) the entity's rows; features : (n_items, f). Returns (n_items,)."""
    F = sp.csr_matrix(features, dtype=np.float64)
    profile = np.asarray(sp.csr_matrix(X).sum(axis=0)).ravel() @ F
    return np.asarray(F @ np.asarray(profile).ravel()).ravel()


def smooth_over_features(scores: np.ndarray, features, weight: float) -> np.ndarray:
    """Post-processing of a released item score (e.g. the DP popularity sum) over a public item
    hierarchy: each item's score is mixed with the mean score of the items sharing its features,
    ``(1 − w)·s + w·F (Fᵀ s / |f|) / |items of i's features|``-style shrinkage towards feature
    means — free (public features, released scores), and it borrows strength for rare items."""
    s = np.asarray(scores, dtype=np.float64)
    F = sp.csr_matrix(features, dtype=np.float64)
    if F.nnz == 0 or weight <= 0:
        return s.copy()
    F.data[:] = 1.0
    per_feature = np.asarray(F.sum(axis=0)).ravel()
    feature_mean = (F.T @ s) / np.maximum(per_feature, 1.0)
    n_feat = np.asarray(F.sum(axis=1)).ravel()
    item_mean = np.where(n_feat > 0, (F @ feature_mean) / np.maximum(n_feat, 1.0), s)
    return (1.0 - weight) * s + weight * item_mean


def content_factors(X: sp.csr_matrix, features, lam: float = 0.1, mode: str = "zero") -> tuple[np.ndarray, np.ndarray]:
    """A personal content-based model from public item features, as a factor pair (U, V): V = the
    features weighted by inverse feature frequency (a feature every item has says little), U ≥ 0 each
    user's ridge-NNLS weights on those columns fitted to their own row
    (:func:`~dpfed_core.models.factorization.fit_rows_given`). Scores U Vᵀ rank items by what the
    user's own items have in common. X : (n_users, n_items); features : (n_items, f).
    Returns U (n_users, f), V (n_items, f)."""
    from dpfed_core.models.factorization import fit_rows_given

    F = np.abs(np.asarray(sp.csr_matrix(features, dtype=np.float64).toarray()))
    present = (F != 0).sum(axis=0)
    V = F / np.sqrt(np.maximum(present, 1.0))
    return fit_rows_given(sp.csr_matrix(X, dtype=np.float64), V, lam, mode), V
