"""What a DP catalogue selection will share, said before the run.

On data without a declared item catalogue a DP run first selects, by a charged DP release, which
items the federation shares. Users must not learn after the fact that most of their items were not
shared; so before the run the CLI and the dashboard state:

* from public parameters only (ε, δ, the number of entities, the trust model, the selection's
  constants): how many users across the federation must hold an item for it to be shared — the
  threshold T and the noise σ of the summed count, in users who each hold at least the selection's
  c items (an item held by T such users is shared with probability ½, by T + 1.64σ with
  probability 0.95; users holding fewer items weigh more, so fewer of them suffice);
* on the loaded data, for the data owner's planning only (computed locally, released nowhere, never
  charged): the expected number of items shared — Σ over items of P(its noisy count clears T).

Either way each entity keeps every item it has rows for (its own model); the selection decides only
what the federation shares.
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtr

from dpfed_core.config import RunConfig


@dataclass(frozen=True)
class CatalogueForecast:
    """``kind``: "federation" (one summed bucket histogram) or "per-entity" (each entity's own
    threshold); ``threshold``: users needed (federation-wide, or per entity); ``sigma``: σ of the
    count compared with it; ``expected_items``: planning estimate on the loaded data (None without
    data); ``n_items``: the data's items."""

    kind: str
    threshold: float
    sigma: float
    epsilon: float
    expected_items: float | None
    n_items: int
    secure: bool

    def text(self) -> str:
        """One sentence for the CLI and the pages."""
        if self.kind == "federation":
            who = (f"an item is shared when about {self.threshold:.0f} users across the federation hold it "
                   f"(noise σ {self.sigma:.3g} on the summed count: 95 % sure from "
                   f"{self.threshold + 1.645 * self.sigma:.0f} users; fewer when they hold few items)")
        else:
            who = (f"an item is shared when about {self.threshold:.0f} users of one entity hold it (each entity's "
                   f"own noisy count, scale {self.sigma:.3g})")
        exp = ("" if self.expected_items is None else
               f"; on the loaded data about {self.expected_items:.0f} of {self.n_items} items are expected to be "
               "shared (a local planning estimate: nothing is released)")
        why = " (a shared key is a hash of names, not a name)" if self.kind == "federation" else ""
        return (f"no declared item catalogue: at ε = {self.epsilon:g} {who}{exp}. Each entity still recommends "
                "every item it has rows for, but an item none of its users holds reaches it only through a declared "
                f"catalogue{why}; declare the catalogue (items=FILE) to share every item")


_ROWS_MEMO: dict[tuple, tuple[weakref.ref, sp.csr_matrix]] = {}


def _selection_matrix(dataset, config: RunConfig) -> sp.csr_matrix:
    """The rows the run's selection will read — each site's training rows without its held-out entries
    and, for a federated method, its round-2 validation entries — as one matrix. Memoised per dataset
    object, split and method: a page asks for the forecast and the time hint on every rerun, and the
    split and each site's rows cost ~0.1 s on the eICU demo."""
    from dpfed_core.evaluation.catalogue_run import selection_rows
    from dpfed_core.evaluation.experiments import make_split

    key = (id(dataset), config.seed, config.test_fraction, config.n_hidden, config.method)
    hit = _ROWS_MEMO.get(key)
    if hit is not None and hit[0]() is dataset:
        return hit[1]
    rows = selection_rows(dataset, make_split(dataset, config).train_rows, config)
    X = rows if sp.issparse(rows) else sp.vstack([sp.csr_matrix(rows[sl]) for sl in dataset.entity_slices()])
    for k in [k for k, (ref, _) in _ROWS_MEMO.items() if ref() is None]:
        del _ROWS_MEMO[k]
    _ROWS_MEMO[key] = (weakref.ref(dataset), sp.csr_matrix(X))
    return _ROWS_MEMO[key][1]


def forecast_catalogue(dataset, config: RunConfig, train: sp.csr_matrix | None = None) -> CatalogueForecast | None:
    """The forecast of a run's DP catalogue (None when the run needs none). ``train``: the rows the
    selection will read (default: those of the run's own split, as the selection reads them), for the
    planning estimate."""
    from dpfed_core.evaluation.catalogue_run import (entity_catalogue_budget, needs_dp_catalogue,
                                                     secure_catalogue_budget, secure_catalogue_divisor,
                                                     uses_federation_catalogue)
    from dpfed_core.methods import get_method
    from dpfed_core.privacy import catalogue as cat

    spec = get_method(config.method)
    if not needs_dp_catalogue(dataset, spec.uses_epsilon, config):
        return None
    # the rows the selection will read, not every row (which would forecast ~10 % high on the eICU demo)
    X = _selection_matrix(dataset, config) if train is None else sp.csr_matrix(train)
    H = dataset.n_entities
    if spec.federated and uses_federation_catalogue(dataset, config):
        rho, _, _ = secure_catalogue_budget(config)
        B, c = cat.SECURE_CATALOGUE_BUCKETS, cat.SECURE_CATALOGUE_MAX_ITEMS_PER_USER
        # every entity's share, each sized for the allowed dropouts: the sum the in-process selection
        # forms, and a deployment's when nobody drops
        _, sigma_sum, T = cat.secure_catalogue_threshold(rho, H, divisor=secure_catalogue_divisor(H, config),
                                                         n_buckets=B)
        levels = cat.item_bucket_levels(dataset.item_names, B)
        # each user's weight per bucket: kept with probability min(1, c/k), then 1/√min(k, c)
        Xb = cat._bucket_rows(X, levels, B)
        per_user = np.maximum(np.diff(Xb.indptr), 1)
        weight = np.minimum(1.0, c / per_user) / np.sqrt(np.minimum(per_user, c))
        totals = np.asarray(Xb.T @ weight).ravel()
        p = ndtr((totals - T) / sigma_sum)  # P(total + N(0, σ²) ≥ T)
        # an item is shared when any of its keys (full name or a coarse level) passes
        p_key = np.where(levels >= 0, p[np.maximum(levels, 0)], 0.0)
        expected = float((1.0 - np.prod(1.0 - p_key, axis=1)).sum())
        # in users: a user holding c or more buckets adds 1/√c, so T·√c such users clear T (fewer
        # users suffice when they hold fewer items)
        return CatalogueForecast("federation", float(T * math.sqrt(c)), float(sigma_sum * math.sqrt(c)),
                                 float(config.epsilon), expected, dataset.n_items, config.aggregation == "secure")
    eps, dlt, _ = entity_catalogue_budget(config)
    b, k = cat.selection_threshold(eps, dlt, cat.CATALOGUE_MAX_ITEMS_PER_USER)
    c = cat.CATALOGUE_MAX_ITEMS_PER_USER
    miss = np.ones(X.shape[1])
    for sl in dataset.entity_slices():
        Xh = sp.csr_matrix(X[sl])
        Xh.data[:] = 1.0
        per_user = np.diff(Xh.indptr)
        n = np.asarray(Xh.T @ np.minimum(1.0, c / np.maximum(per_user, 1))).ravel()
        t = (1 + k) - np.round(n)  # the noise must reach t
        # discrete Laplace: P(Z ≥ t) = e^{−t/b}/(1 + e^{−1/b}) for t ≥ 1, 1 − P(Z ≥ 1 − t) otherwise
        tail = np.exp(-np.abs(np.where(t >= 1, t, 1 - t)) / b) / (1 + math.exp(-1 / b))
        p = np.where(t >= 1, tail, 1 - tail)
        p[n == 0] = 0.0  # only items the entity holds are enumerated
        miss *= 1 - p
    return CatalogueForecast("per-entity", float(1 + k), float(b), float(config.epsilon), float((1 - miss).sum()),
                             dataset.n_items, False)
