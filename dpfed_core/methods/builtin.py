"""Built-in reference methods (SPEC §4): ``central``, ``individual``, ``local``, ``random-v``,
``popularity``. The federated methods (prototype and summable) register through
:func:`~dpfed_core.methods.registry._register_federated_methods`.
"""
from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp

from ..federation.messages import SERVER, Message, array_message
from ..federation.summable import SummableMethod
from ..models.entity_factors import EntityFactors, LocalColumns
from ..models.factorization import fit_nmf, fit_rows_given
from ..privacy.ledger import PrivacyLedger
from ..privacy.model import PrivacyModel
from .registry import MethodResult, MethodSpec, register_method


from dpfed_core.config import no_progress as _noop  # noqa: E402  (one definition)


def _sparse_bytes(X: sp.csr_matrix) -> int:
    return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


# ---------------------------------------------------------------------------- baselines
def _fit_central(dataset, train, config, rng, progress):
    t0 = time.perf_counter()
    progress("central_start")
    messages = [
        Message(1, name, SERVER, "raw training rows", (sl.stop - sl.start, dataset.n_items),
                _sparse_bytes(train[sl]))
        for name, sl in zip(dataset.entity_names, dataset.entity_slices())
    ]
    U, V, hist = fit_nmf(train, config.rank, config.lam, config.mode, max_iter=config.max_iter, rng=rng)
    progress("central_done")
    ledger = PrivacyLedger(math.inf, 0.0)
    for name in dataset.entity_names:
        ledger.spend(name, "raw data", "raw training rows (non-private)", math.inf)
    return MethodResult(U, V, ledger, messages,
                        {"central_fit": time.perf_counter() - t0}, extra={"history": hist})


def _fit_individual(dataset, train, config, rng, progress):
    t0 = time.perf_counter()
    local = []
    for h, (name, sl) in enumerate(zip(dataset.entity_names, dataset.entity_slices())):
        progress("individual_entity", entity=name, index=h, total=dataset.n_entities)
        U_h, V_h, _ = fit_nmf(train[sl], config.rank, config.lam, config.mode, max_iter=config.max_iter, rng=rng)
        local.append(LocalColumns.from_dense(U_h, V_h))
    # Each entity predicts with its own V_h only: no shared columns (r = 0), every column the
    # entity's own (kept apart, not a block-diagonal O(items × entities × rank) embedding).
    factors = EntityFactors(np.zeros((dataset.n_users, 0)), np.zeros((dataset.n_items, 0)),
                            dataset.entity_slices(), local)
    return MethodResult(factors.U, factors.V, PrivacyLedger(math.inf, 0.0), [],
                        {"individual_fit": time.perf_counter() - t0}, factors=factors)


def _fit_local(dataset, train, config, rng, progress):
    """Going alone done properly: each entity's model is fitted by the very routine of a federation's
    round 2 (:func:`~dpfed_core.models.blend.fit_site_model`) without the federation's parts — its own
    NMF blended with its own popularity (and public item features, when the data declares them),
    weights chosen on a local hold-out with the same one-standard-error rule against the same kind of
    default. Nothing leaves the entity."""
    from ..models.blend import blend_columns, fit_site_model

    t0 = time.perf_counter()
    local, weights = [], {}
    features = getattr(dataset, "item_features", None)
    labels = {"own": "own model", "own content": "users' own feature profiles", "own popularity": "own popularity",
              "own feature profile": "public item features"}
    for h, (name, sl) in enumerate(zip(dataset.entity_names, dataset.entity_slices())):
        progress("individual_entity", entity=name, index=h, total=dataset.n_entities)
        matrix_names, item_names, info = fit_site_model(
            train[sl], rank=config.rank, lam=config.lam, mode=config.mode, max_iter=config.max_iter,
            rng=None, evidence=LOCAL_EVIDENCE, features=features)  # the site's own stream, as round 2's
        local.append(LocalColumns.from_dense(*blend_columns(info)))  # sparse in items at once
        weights[name] = {**{labels[n]: w for n, w in zip(matrix_names, info["matrix_weights"])},
                         **{labels[n]: w for n, w in zip(item_names, info["item_weights"])}}
    factors = EntityFactors(np.zeros((dataset.n_users, 0)), np.zeros((dataset.n_items, 0)),
                            dataset.entity_slices(), local)
    notes = ["local: each entity blends its own NMF with its own popularity"
             + (" and public item features" if features is not None else "")
             + ", weights chosen on a local hold-out by the routine of a federation's round 2 (one-standard-error "
               "rule against its own popularity); nothing leaves the entity"]
    return MethodResult(factors.U, factors.V, PrivacyLedger(math.inf, 0.0), [],
                        {"local_fit": time.perf_counter() - t0},
                        extra={"notes": notes, "blend_weights": weights}, factors=factors)


#: ``local``'s one-standard-error rule: the z of a summable method's round 2 (its ``holdout_evidence``
#: default), so that going alone and joining are fitted with the same care.
LOCAL_EVIDENCE = SummableMethod.holdout_evidence


def _fit_random_v(dataset, train, config, rng, progress):
    t0 = time.perf_counter()
    # Drawn without looking at any data: the floor that local fitting alone reaches.
    V = rng.uniform(0.0, 1.0, size=(dataset.n_items, config.rank))
    messages = [array_message(2, SERVER, name, "random item factors V", V) for name in dataset.entity_names]
    U = np.zeros((dataset.n_users, config.rank))
    for sl in dataset.entity_slices():
        U[sl] = fit_rows_given(train[sl], V, config.lam, config.mode)
    ledger = PrivacyLedger(math.inf, 0.0)  # nothing leaves an entity: no spend at all
    return MethodResult(U, V, ledger, messages, {"local_fit": time.perf_counter() - t0})


def _fit_popularity(dataset, train, config, rng, progress):
    t0 = time.perf_counter()
    col_sum = np.asarray(train.sum(axis=0)).ravel()
    if config.mode == "zero":
        scores = col_sum / max(train.shape[0], 1)
    else:
        col_cnt = np.diff(train.tocsc().indptr)
        glob = float(train.data.mean()) if train.nnz else 0.0
        scores = np.where(col_cnt > 0, col_sum / np.maximum(col_cnt, 1), glob)
    messages = [array_message(1, name, SERVER, "exact item totals", col_sum) for name in dataset.entity_names]
    ledger = PrivacyLedger(math.inf, 0.0)
    for name in dataset.entity_names:
        ledger.spend(name, "item totals", "exact sums (non-private)", math.inf)
    return MethodResult(np.ones((dataset.n_users, 1)), scores[:, None], ledger, messages,
                        {"popularity": time.perf_counter() - t0})


register_method(MethodSpec("central", _fit_central, "Central MF (pooled)", PrivacyModel.NON_PRIVATE,
                           "One NMF on every entity's training data pooled: the upper reference.",
                           detail="all raw data pooled at the server"))
register_method(MethodSpec("individual", _fit_individual, "Individual MF (per entity)", PrivacyModel.NO_RELEASE,
                           "An independent NMF per entity, no collaboration.",
                           detail="nothing leaves an entity", site_rows=True))
register_method(MethodSpec("local", _fit_local, "Local model + popularity (per entity)", PrivacyModel.NO_RELEASE,
                           "Each entity alone, done properly: its own NMF blended with its own popularity "
                           "(and public item features), weights chosen on a local hold-out.",
                           detail="nothing leaves an entity", site_rows=True))
register_method(MethodSpec("random-v", _fit_random_v, "Random V + local fit", PrivacyModel.NO_RELEASE,
                           "Item factors drawn without looking at data; only local fitting: the floor.",
                           detail="V drawn at random, no data shared"))
register_method(MethodSpec("popularity", _fit_popularity, "Popularity", PrivacyModel.NON_PRIVATE,
                           "Every user gets the pooled item mean (zero mode) or mean rating (observed).",
                           detail="exact item totals pooled"))
