"""Which of a site's items the federation shares: the catalogue as a map, not as the site's world.

A run without a declared public item list selects its catalogue by a charged DP release (a set of
item columns, or of public hash-bucket keys); a declared list that leaves out some of the data's items
is public and shared as it is. That catalogue fixes the shape of every message — what is *shared*. It does not fix what a site may recommend: each site keeps every item it has rows for.
:class:`SharedItems` is the public map between the two axes:

* ``project`` — a site's rows on the shared keys (what its shares are computed from);
* ``lift`` — the broadcast item factors (one row per key) back on the site's item axis: an item takes
  its key's row, an item outside the catalogue a zero row (the federation knows nothing of it; the
  site's own parts and public item features still score it). Without a declared catalogue a site
  knows the names of the items it holds rows for, and maps the released keys back onto those only;
  a declared catalogue's names are public, known to every site.

Both are public post-processing: the map is a function of the released keys and the item names.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpfed_core.data.dataset import merge_key_columns


@dataclass(frozen=True)
class SharedItems:
    """Item j of the site's axis is shared as key ``item_key[j]`` of ``n_keys`` (−1: not shared).

    ``value_max``: the public value bound; a site's values on the items of one key are summed and
    clipped to it (:func:`~dpfed_core.data.dataset.merge_key_columns`)."""

    item_key: np.ndarray
    n_keys: int
    value_max: float
    #: every shared item's name is public (a declared catalogue), so every site knows each of them: the
    #: broadcast reaches every shared item of every site, not only the names the site holds rows for
    public: bool = False

    @classmethod
    def from_columns(cls, columns: np.ndarray, n_items: int, value_max: float,
                     public: bool = False) -> "SharedItems":
        """The catalogue of a set of item columns: column ``columns[k]`` is key k."""
        columns = np.asarray(columns, dtype=np.int64)
        key = np.full(int(n_items), -1, dtype=np.int64)
        key[columns] = np.arange(columns.size)
        return cls(key, int(columns.size), float(value_max), bool(public))

    def site_lift(self, F: np.ndarray, X_site: sp.spmatrix) -> np.ndarray:
        """Key rows ``F`` on one site's item axis: every shared item when the catalogue is public,
        else only the names the site holds rows for (:func:`known_items`)."""
        return self.lift(F, None if self.public else known_items(X_site))

    @property
    def n_items(self) -> int:
        return int(self.item_key.size)

    @property
    def columns(self) -> np.ndarray:
        """The site's items that are shared (some key)."""
        return np.flatnonzero(self.item_key >= 0)

    def key_matrix(self) -> sp.csr_matrix:
        """(items × keys) 0/1: item j → key ``item_key[j]``."""
        rows = self.columns
        return sp.csr_matrix((np.ones(rows.size), (rows, self.item_key[rows])), shape=(self.n_items, self.n_keys))

    def project(self, X: sp.spmatrix) -> sp.csr_matrix:
        """A site's rows (n × items) on the shared keys (n × keys)."""
        return merge_key_columns(X, self.key_matrix(), self.value_max)

    def lift(self, F: np.ndarray, known: np.ndarray | None = None) -> np.ndarray:
        """Key rows ``F`` (keys × w) on the item axis (items × w): item j takes row ``item_key[j]``, a
        zero row where it is not shared. ``known`` (bool, items): the items the site knows by name —
        a released key is a public hash bucket, and a site can map it back only onto the names it
        holds, so the other rows stay zero (:func:`known_items`)."""
        F = np.asarray(F, dtype=np.float64)
        out = np.zeros((self.n_items, F.shape[1]))
        rows = self.columns
        if known is not None:
            rows = rows[np.asarray(known, dtype=bool)[rows]]
        out[rows] = F[self.item_key[rows]]
        return out


def known_items(X: sp.spmatrix) -> np.ndarray:
    """(items,) bool: the items a site holds rows for — the item names it knows when no catalogue is
    declared (a name it never saw is unknown to it, whatever bucket it would hash to)."""
    X = sp.csr_matrix(X)
    return np.bincount(X.indices, minlength=X.shape[1]) > 0
