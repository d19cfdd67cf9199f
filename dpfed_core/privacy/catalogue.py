"""DP partition selection of the item catalogue, for data without a declared public catalogue.

Issue 11 / SPEC rev. 2: the item catalogue (and so every message's shape) must come from public
inputs or from a DP release charged to the ledger. When the data owner declares no item list
(MovieLens' ``u.item``, a formulary given with ``--items``), each entity releases the set of items
that pass a noisy threshold on its own users; the catalogue is the union of the entities' released
sets (post-processing). This runs inside the run, on the training rows, charged to the run's
ledger — never in a loader, which has no budget.

Mechanism (per entity; Korolova et al. 2009, Gopi et al. 2020 "Laplace thresholding", here with
the discrete Laplace so that integer counts leave no floating-point artefact):

1. *Contribution bound.* Each user keeps at most ``c`` of their items (a uniformly random subset
   when they have more), so one user changes at most ``c`` item counts, each by at most 1.
2. *Noisy counts of non-empty items.* For every item with at least one contributing user,
   ñ_i = n_i + Z_i, Z_i discrete Laplace with scale b = c / ε (P(Z = z) ∝ exp(−|z|/b)), drawn by
   :func:`dpfed_core.privacy.mechanisms.count_mechanism` (OpenDP, OS entropy outside simulation).
3. *Threshold.* Item i is released iff ñ_i ≥ 1 + K, with the integer
   K = ⌈b · ln(c / (δ · (1 + e^(−1/b))))⌉.

Neighbouring relation: one user of the entity added or removed (unbounded, user-level).
Sensitivity: L0 = c items, L∞ = 1 per item, hence L1 = c on the vector of counts.
Privacy map: items counted in both datasets — the discrete Laplace mechanism on an
L1-sensitivity-c integer vector with scale b = c/ε: ε-DP. Items that exist only because of the
added user (count 1, at most c of them) — each is released with probability
P(Z ≥ K) = e^(−K/b) / (1 + e^(−1/b)) ≤ δ/c by the choice of K, so together they add at most δ.
Total: (ε, δ)-DP per entity; entities hold disjoint users, so the union over entities is (ε, δ)-DP
by parallel composition, and the catalogue (the union) is post-processing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.privacy import mechanisms as mech
from dpfed_core.privacy.ledger import PrivacyLedger

#: Default share of the run's ε and δ spent on the catalogue when one is needed.
CATALOGUE_EPSILON_SHARE = 0.2
CATALOGUE_DELTA_SHARE = 0.5
#: Default contribution bound c (items per user counted by the selection).
CATALOGUE_MAX_ITEMS_PER_USER = 4


def selection_threshold(epsilon: float, delta: float, max_items: int) -> tuple[float, int]:
    """(discrete Laplace scale b, integer K) of the selection at (ε, δ) with contribution bound c:
    an item is released iff its noisy count is ≥ 1 + K (see the module doc for the proof)."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ConfigError(f"catalogue selection needs a finite ε > 0, got {epsilon}", param="epsilon")
    if not 0 < delta < 1:
        raise ConfigError("the DP catalogue selection needs δ > 0 (a new item appears with probability δ); "
                          "raise delta or declare the item catalogue with items=<file>", param="delta")
    c = int(max_items)
    if c < 1:
        raise ConfigError(f"the catalogue's items per user must be ≥ 1, got {max_items}")
    b = c / epsilon
    k = math.ceil(b * math.log(c / (delta * (1.0 + math.exp(-1.0 / b)))))
    return b, max(k, 0)


def new_item_release_probability(b: float, k: int) -> float:
    """P(Z ≥ K) for discrete Laplace Z of scale b: the chance that an item held by one user only is
    released (must be ≤ δ/c)."""
    return math.exp(-k / b) / (1.0 + math.exp(-1.0 / b)) if k >= 1 else 1.0


def _bounded_rows(X: sp.csr_matrix, c: int, rng: np.random.Generator) -> sp.csr_matrix:
    """Binary rows with at most ``c`` non-zeros each (a uniform random subset of longer rows)."""
    X = sp.csr_matrix(X)
    n = X.shape[0]
    nnz_row = np.diff(X.indptr)
    rows = np.repeat(np.arange(n), nnz_row)
    key = rng.random(X.nnz)
    order = np.lexsort((key, rows))
    pos = np.empty(X.nnz, dtype=np.int64)
    pos[order] = np.arange(X.nnz) - np.repeat(X.indptr[:-1], nnz_row)
    keep = pos < c
    return sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], X.indices[keep])), shape=X.shape)


@dataclass
class CatalogueRelease:
    """What the selection released. columns : sorted item indices of the catalogue (the union).
    per_entity : {entity: released item indices}. scale, threshold : b and the smallest released
    noisy count 1 + K."""

    columns: np.ndarray
    per_entity: dict[str, np.ndarray] = field(default_factory=dict)
    scale: float = math.nan
    threshold: float = math.nan


def select_catalogue(
    X: sp.csr_matrix,
    slices: list[slice],
    entity_names: list[str],
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    max_items: int = CATALOGUE_MAX_ITEMS_PER_USER,
) -> CatalogueRelease:
    """Run the selection for every entity on its rows ``X[slices[h]]`` and charge (ε, δ) per entity
    to ``ledger`` (stage ``catalogue``). Returns the union of the released item sets."""
    b, k = selection_threshold(epsilon, delta, max_items)
    released: dict[str, np.ndarray] = {}
    for name, sl in zip(entity_names, slices):
        Xb = _bounded_rows(X[sl], int(max_items), rng)
        counts = np.asarray(Xb.sum(axis=0)).ravel()
        present = np.flatnonzero(counts > 0)  # only non-empty items are enumerated (δ covers new ones)
        keep = mech.partition_selection(counts[present], int(max_items), epsilon, delta, 1 + k, rng,
                                        ledger=ledger.for_entity(name), stage="catalogue",
                                        note=f"items with noisy user count ≥ {1 + k} (≤ {int(max_items)} "
                                             "items per user)")
        released[name] = present[keep]
    cols = np.unique(np.concatenate([v for v in released.values()] or [np.zeros(0, np.int64)])).astype(np.int64)
    return CatalogueRelease(cols, released, b, float(1 + k))
