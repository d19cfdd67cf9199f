"""Train/test split per entity (SPEC §4, paper §5.2).

In each entity, ``test_fraction`` of its users (rounded) become test users, chosen uniformly among
the users with at least ``n_hidden + 1`` non-zero entries; for each test user ``n_hidden`` of their
non-zero entries, chosen uniformly, are hidden. Train = everything else (test users keep their other
entries, so round 2 can fit their factors).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpfed_core.errors import ConfigError


@dataclass(frozen=True)
class Split:
    """train, test : csr_matrix (n_users × n_items) with disjoint supports; train + test = X.
    test_users : sorted row indices of the users with hidden entries."""

    train: sp.csr_matrix
    test: sp.csr_matrix
    test_users: np.ndarray


def split_users(
    X: sp.spmatrix,
    entity_of_user: np.ndarray,
    rng: np.random.Generator,
    test_fraction: float = 0.2,
    n_hidden: int = 5,
) -> Split:
    """Hide ``n_hidden`` entries of ``test_fraction`` of each entity's eligible users (see module doc)."""
    if not 0 <= test_fraction <= 1:
        raise ConfigError(f"test fraction must be between 0 and 1, got {test_fraction}")
    if n_hidden < 1:
        raise ConfigError(f"the number of hidden entries per test user must be ≥ 1, got {n_hidden}")
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.eliminate_zeros()
    n = X.shape[0]
    nnz_row = np.diff(X.indptr)
    eligible = nnz_row >= n_hidden + 1
    sizes = np.bincount(entity_of_user, minlength=int(entity_of_user.max()) + 1 if n else 0)
    # One uniform key per user; the lowest keys among an entity's eligible users are its test users.
    key = rng.random(n)
    key[~eligible] = np.inf
    order = np.lexsort((key, entity_of_user))
    start = np.searchsorted(entity_of_user[order], np.arange(len(sizes)))
    rank_in_entity = np.empty(n, dtype=np.int64)
    rank_in_entity[order] = np.arange(n) - np.repeat(start, sizes)
    quota = np.rint(test_fraction * sizes).astype(np.int64)
    is_test = eligible & (rank_in_entity < quota[entity_of_user])
    test_users = np.flatnonzero(is_test)

    # Hide n_hidden random non-zeros of each test user: lowest random keys within the row.
    rows = np.repeat(np.arange(n), nnz_row)
    sel = is_test[rows]
    ekey = rng.random(X.nnz)
    ekey[~sel] = np.inf
    order_e = np.lexsort((ekey, rows))
    pos_in_row = np.empty(X.nnz, dtype=np.int64)
    pos_in_row[order_e] = np.arange(X.nnz) - np.repeat(X.indptr[:-1], nnz_row)
    hide = sel & (pos_in_row < n_hidden)
    cols = X.indices
    test = sp.csr_matrix((X.data[hide], (rows[hide], cols[hide])), shape=X.shape)
    train = sp.csr_matrix((X.data[~hide], (rows[~hide], cols[~hide])), shape=X.shape)
    return Split(train=train, test=test, test_users=test_users)
