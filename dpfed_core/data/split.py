"""Train/test split per entity (SPEC §4, paper §5.2).

In each entity, ``test_fraction`` of its users (rounded) become test users, chosen uniformly among
the users with at least ``n_hidden + 1`` non-zero entries; for each test user ``n_hidden`` of their
non-zero entries, chosen uniformly, are hidden. Train = everything else (test users keep their other
entries, so round 2 can fit their factors).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from dpfed_core.errors import ConfigError


class TrainRows:
    """A split's training matrix held as the data set's matrix and the positions of its hidden entries:
    any block of rows is X's rows without them, built when it is read. A run that reads its training
    data a site's block at a time (the federation, round 2, the evaluation) then holds the data set's
    matrix once, not it and a copy of nearly all of it beside (at 10^7 users each is 2.9 GiB).

    ``X`` : canonical CSR (sorted indices, no duplicates, no stored zeros), never written.
    ``hidden`` : sorted CSR positions (into ``X.data``) of the entries that are not training data.
    Read with ``rows[a:b]`` (a contiguous block, CSR), ``rows[i]`` (one row), ``rows[array]``
    (those rows, in that order) or :meth:`tocsr` (the whole matrix, built at each call)."""

    def __init__(self, X: sp.csr_matrix, hidden: np.ndarray) -> None:
        self.X = X
        self.hidden = np.asarray(hidden, dtype=np.int64)
        self.shape = X.shape
        self.nnz = int(X.nnz - self.hidden.size)

    def block(self, start: int, stop: int, drop: np.ndarray | None = None) -> sp.csr_matrix:
        """Rows ``start:stop`` without their hidden entries (shares nothing with X: a new CSR); with
        ``drop`` (sorted CSR positions in that block of training rows), without those entries too —
        the same matrix as dropping them from the block, built in one pass."""
        a, b = int(self.X.indptr[start]), int(self.X.indptr[stop])
        view = row_block(self.X, slice(start, stop))
        lo, hi = np.searchsorted(self.hidden, [a, b])
        gone = self.hidden[lo:hi] - a  # positions in X's block
        drop = np.zeros(0, dtype=np.int64) if drop is None else np.asarray(drop, dtype=np.int64)
        if gone.size == 0 and drop.size == 0:
            return view.copy()
        keep = np.ones(b - a, dtype=bool)
        if drop.size:
            # training position p is X position p + (hidden positions before it): with gone sorted,
            # gone[j] - j is the training position the j-th hidden entry would have had
            keep[drop + np.searchsorted(gone - np.arange(gone.size), drop, side="right")] = False
        keep[gone] = False
        return keep_entries(view, keep)

    def tocsr(self) -> sp.csr_matrix:
        return self.block(0, self.shape[0])

    def __getitem__(self, key) -> sp.csr_matrix:
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            if step == 1:
                return self.block(start, max(start, stop))
            key = np.arange(start, stop, step)
        if isinstance(key, (int, np.integer)):
            if not -self.shape[0] <= int(key) < self.shape[0]:
                raise IndexError(f"row {key} of a matrix of {self.shape[0]} rows")
            i = int(key) % self.shape[0]
            return self.block(i, i + 1)
        rows = np.asarray(key)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        else:
            rows = rows.astype(np.int64)
            if rows.size and not (-self.shape[0] <= rows.min() and rows.max() < self.shape[0]):
                raise IndexError(f"rows {rows.min()}…{rows.max()} of a matrix of {self.shape[0]} rows")
            rows = rows % max(self.shape[0], 1)
        # only the rows asked for: X's rows (canonical, in the order asked), less the entries at hidden positions
        picked = self.X[rows]
        if rows.size == 0 or self.hidden.size == 0:
            return picked
        starts, lens = self.X.indptr[rows].astype(np.int64), np.diff(picked.indptr)
        pos = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + np.arange(picked.nnz)
        at = np.searchsorted(self.hidden, pos)
        hidden = (at < self.hidden.size) & (self.hidden[np.minimum(at, self.hidden.size - 1)] == pos)
        return keep_entries(picked, ~hidden) if hidden.any() else picked

    def __repr__(self) -> str:
        return f"<TrainRows {self.shape[0]}×{self.shape[1]}, {self.nnz} entries (X less {self.hidden.size} hidden)>"


@dataclass(frozen=True)
class Split:
    """rows : the training data (:class:`TrainRows`, read a block of rows at a time);
    test : csr_matrix (n_users × n_items), disjoint from the training data; train + test = X.
    test_users : sorted row indices of the users with hidden entries.
    ``train`` is the whole training matrix, built on first read and kept: a method that reads its
    data per site reads ``rows`` instead and the matrix is never built."""

    rows: TrainRows
    test: sp.csr_matrix
    test_users: np.ndarray

    @cached_property
    def train(self) -> sp.csr_matrix:
        return self.rows.tocsr()

    @property
    def train_rows(self) -> "sp.csr_matrix | TrainRows":
        """The training data for a reader of blocks of rows: the whole matrix when a reader has built
        it already (no block built again), else :attr:`rows`."""
        return self.__dict__.get("train", self.rows)

    @classmethod
    def of(cls, train: sp.spmatrix, test: sp.spmatrix, test_users: np.ndarray) -> "Split":
        """A split given as its training and test matrices (the training matrix, nothing hidden)."""
        train = sp.csr_matrix(train, dtype=np.float64, copy=True)  # made canonical: not the caller's
        train.sum_duplicates()
        return cls(TrainRows(train, np.zeros(0, dtype=np.int64)), sp.csr_matrix(test), np.asarray(test_users))


def n_test_users(X: sp.csr_matrix | np.ndarray, entity_of_user: np.ndarray, test_fraction: float,
                 n_hidden: int) -> int:
    """How many test users :func:`split_users` draws, whatever its seed: in each entity, ``test_fraction``
    of its users, from those holding more than ``n_hidden`` entries. ``X`` as a dataset holds it (csr,
    duplicates summed and zeros removed), so a row's stored entries are its entries; or, for a caller
    that has them already, the (n_users,) array of each row's entries."""
    if np.size(entity_of_user) == 0:
        return 0
    eligible, quota = entity_test_quota(X, entity_of_user, test_fraction, n_hidden)
    return int(np.minimum(eligible, quota).sum())


def entity_test_quota(X: sp.csr_matrix | np.ndarray, entity_of_user: np.ndarray, test_fraction: float,
                      n_hidden: int, n_entities: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per entity (at least ``n_entities`` of them): how many users hold more than ``n_hidden``
    entries (those a test user is drawn from) and how many ``test_fraction`` of its users asks for
    (``np.rint``: half to even) — :func:`split_users` draws the smaller. ``X`` as for
    :func:`n_test_users`."""
    ent = np.asarray(entity_of_user, dtype=np.int64)
    lengths = np.diff(X.indptr) if sp.issparse(X) else np.asarray(X)
    sizes = np.bincount(ent, minlength=n_entities)
    eligible = np.bincount(ent, weights=lengths >= n_hidden + 1, minlength=sizes.size)
    return eligible, np.rint(test_fraction * sizes)


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
    if not (X.has_canonical_format and X.data.all()):
        # made canonical on a copy: sp.csr_matrix shares a float64 CSR input's arrays, which are the caller's
        # (a canonical input, the loaders' and the split's usual one, is read as it is: no second matrix)
        X = X.copy()
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

    # Hide n_hidden random non-zeros of each test user: lowest random keys within the row. Only the
    # test users' entries are ranked (a test row is selected whole, so each entry's rank in its row is
    # the same as in a sort of every entry): the sort is over ~test_fraction of the entries, not all.
    rows = np.repeat(np.arange(n), nnz_row)
    ekey = rng.random(X.nnz)
    sel = np.flatnonzero(is_test[rows])
    sel_rows = rows[sel]
    order_e = np.lexsort((ekey[sel], sel_rows))
    sel_counts = nnz_row[test_users]
    sel_start = np.concatenate([[0], np.cumsum(sel_counts)[:-1]]) if test_users.size else np.zeros(0, np.int64)
    pos_in_row = np.empty(sel.size, dtype=np.int64)
    pos_in_row[order_e] = np.arange(sel.size) - np.repeat(sel_start, sel_counts)
    hide = np.zeros(X.nnz, dtype=bool)
    hide[sel[pos_in_row < n_hidden]] = True
    del rows, ekey, sel, sel_rows, order_e, pos_in_row
    # X is canonical (sorted, no duplicates), so each part is X's entries in X's order: built as CSR
    # directly, without a COO round trip (a sort of every entry again). The training part stays X and
    # the hidden positions (4 % of the entries here, 8 bytes each) until a reader builds its rows.
    return Split(rows=TrainRows(X, np.flatnonzero(hide)), test=keep_entries(X, hide), test_users=test_users)


def row_block(X: sp.csr_matrix, sl: slice) -> sp.csr_matrix:
    """Rows ``sl`` (contiguous) of a CSR matrix sharing X's data and index arrays (only the row
    pointers are new): an entity's rows without a copy. Read-only by contract: writing to it writes X."""
    a, b = int(X.indptr[sl.start]), int(X.indptr[sl.stop])
    return sp.csr_matrix((X.data[a:b], X.indices[a:b], X.indptr[sl.start:sl.stop + 1] - a),
                         shape=(sl.stop - sl.start, X.shape[1]), copy=False)


def keep_entries(X: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """The CSR matrix of a canonical X's entries where ``keep`` (bool, one per stored entry, in X's
    entry order), same shape, without a COO round trip."""
    # row pointers from the rows of the smaller of the kept and the dropped entries: O(rows + that
    # set), not a running count over every entry (8 bytes per entry: 2 GiB beside a 10^7-user split's
    # 250 million entries)
    keep = np.asarray(keep, dtype=bool)
    n_kept = int(np.count_nonzero(keep))
    few_kept = n_kept <= X.nnz - n_kept
    which = np.flatnonzero(keep if few_kept else ~keep)
    per_row = np.bincount(np.searchsorted(X.indptr, which, side="right") - 1, minlength=X.shape[0])
    if few_kept:
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(per_row, out=indptr[1:])
    else:
        indptr = X.indptr.astype(np.int64)
        indptr[1:] -= np.cumsum(per_row)
    out = sp.csr_matrix((X.data[keep], X.indices[keep], indptr), shape=X.shape)
    out.has_sorted_indices = True
    return out
