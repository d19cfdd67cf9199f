"""The method registry: every comparison method fits factors U (n_users × r), V (n_items × r) on a
split's training matrix, so all are evaluated by the same code on the same split.

Each method states its privacy model, shown next to its numbers everywhere:

* ``user-level DP (federated)`` — our guarantee: one user of one entity, proven by the ledger;
* ``non-private`` — raw data or exact statistics leave the entities (reference points);
* ``no sharing`` — nothing leaves an entity (``individual``);
* other systems state their own (e.g. the central curator of Friedman et al.).

Register more with :func:`register_method`. The registry itself imports no method: the package
``dpfed_core.methods`` imports the built-in methods and the comparison systems, which register here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..config import RunConfig
from ..data.dataset import FederatedDataset
from ..errors import ConfigError
from ..federation.messages import Message
from ..federation.protocol import FederatedRecommender
from ..federation.prototypes import PROTOTYPE_METHODS
from ..privacy.ledger import PrivacyLedger


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
        simulation=config.simulation,
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
