"""Comparison methods (SPEC §4): every method fits factors U (n_users × r), V (n_items × r) on a
split's training matrix, so all are evaluated by the same code on the same split.

Each method states its privacy model, shown next to its numbers everywhere:

* ``user-level DP (federated)`` — our guarantee: one user of one entity, proven by the ledger;
* ``non-private`` — raw data or exact statistics leave the entities (reference points);
* ``no sharing`` — nothing leaves an entity (``individual``);
* other systems state their own (e.g. the central curator of Friedman et al.).

Register more with :func:`register_method`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from .config import RunConfig
from .dataset import FederatedDataset
from .factorization import fit_nmf, fit_rows_given
from .errors import ConfigError
from .ledger import PrivacyLedger
from .protocol import SERVER, FederatedRecommender, Message, array_message
from .prototypes import PROTOTYPE_METHODS


@dataclass
class MethodResult:
    """Fitted factors plus what the run released and cost."""

    U: np.ndarray
    V: np.ndarray
    ledger: PrivacyLedger
    messages: list[Message] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    model: object | None = None
    extra: dict = field(default_factory=dict)


FitFn = Callable[[FederatedDataset, sp.csr_matrix, RunConfig, np.random.Generator, Callable], MethodResult]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    fit: FitFn
    label: str
    privacy: str
    description: str
    uses_epsilon: bool = False
    uses_k: bool = False


METHODS: dict[str, MethodSpec] = {}


def register_method(spec: MethodSpec) -> MethodSpec:
    METHODS[spec.name] = spec
    return spec


def get_method(name: str) -> MethodSpec:
    _register_prototype_methods()
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; choose one of {', '.join(sorted(METHODS))}")
    return METHODS[name]


def available_methods() -> list[str]:
    _register_prototype_methods()
    return sorted(METHODS)


def _noop(*_a, **_k):
    return None


def _sparse_bytes(X: sp.csr_matrix) -> int:
    return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


# ---------------------------------------------------------------------------- federated (ours)
def _fit_federated(dataset, train, config, rng, progress):
    model = FederatedRecommender(
        prototypes=config.method,
        k=config.k,
        rank=config.rank,
        lam=config.lam,
        mode=config.mode,
        epsilon=config.epsilon,
        delta=config.delta,
        prototype_params=config.prototype_params,
        server_weighting=config.server_weighting,
        max_iter=config.max_iter,
        n_jobs=config.n_jobs,
        random_state=rng,
    ).fit(dataset, train, progress=progress)
    return MethodResult(model.U_, model.V_, model.ledger_, model.messages_, dict(model.timings_), model,
                        {"releases": model.releases_, "notes": model.notes_})


def _register_prototype_methods() -> None:
    """Every registered prototype method is also a comparison method of the same name."""
    for name, cls in PROTOTYPE_METHODS.items():
        if name in METHODS:
            continue
        private = bool(getattr(cls, "private", False))
        register_method(MethodSpec(
            name=name,
            fit=_fit_federated,
            label=f"Federated MF + {name}",
            privacy="user-level DP (federated)" if private else "non-private (raw prototypes leave entities)",
            description=(cls.__doc__ or "").strip().split("\n")[0],
            uses_epsilon=private,
            uses_k=True,
        ))


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
    U = np.zeros((dataset.n_users, config.rank))
    Vs = []
    for h, (name, sl) in enumerate(zip(dataset.entity_names, dataset.entity_slices())):
        progress("individual_entity", entity=name, index=h, total=dataset.n_entities)
        U_h, V_h, _ = fit_nmf(train[sl], config.rank, config.lam, config.mode, max_iter=config.max_iter, rng=rng)
        U[sl] = U_h
        Vs.append(V_h)
    # Each entity predicts with its own V_h; a block-diagonal embedding gives one U, V pair that
    # reproduces exactly U_h V_hᵀ for the entity's rows, so the shared evaluation code applies.
    r = config.rank
    H = dataset.n_entities
    U_big = np.zeros((dataset.n_users, r * H))
    for h, sl in enumerate(dataset.entity_slices()):
        U_big[sl, h * r:(h + 1) * r] = U[sl]
    V_big = np.hstack(Vs)
    return MethodResult(U_big, V_big, PrivacyLedger(math.inf, 0.0), [],
                        {"individual_fit": time.perf_counter() - t0}, extra={"item_factors": Vs})


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


register_method(MethodSpec("central", _fit_central, "Central MF (pooled)",
                           "non-private (all raw data pooled at the server)",
                           "One NMF on every entity's training data pooled: the upper reference."))
register_method(MethodSpec("individual", _fit_individual, "Individual MF (per entity)",
                           "no sharing (nothing leaves an entity)",
                           "An independent NMF per entity, no collaboration."))
register_method(MethodSpec("random-v", _fit_random_v, "Random V + local fit",
                           "no data shared (V drawn at random)",
                           "Item factors drawn without looking at data; only local fitting: the floor."))
register_method(MethodSpec("popularity", _fit_popularity, "Popularity",
                           "non-private (exact item totals pooled)",
                           "Every user gets the pooled item mean (zero mode) or mean rating (observed)."))

# Registers the other papers' systems (SPEC §6) and the DP prototypes; imported last so that they
# can use this module's registry.
from . import comparison, dp_prototypes  # noqa: E402,F401
