"""The in-process protocol's pieces that the deployment calls, each behind one small function.

The summable-method protocol (the stage loop, round-2 assembly) is being unified in
``dpfed_core/federation/`` and :class:`~dpfed_core.federation.protocol.FederatedRecommender` is
gaining ``method=``; the ServerApp and ClientApp call only these functions, so swapping them for
the shared ones later touches this file alone.
"""
from __future__ import annotations

import numpy as np

from dpfed_core.federation.protocol import FederatedRecommender, _release_one
from dpfed_core.federation.summable import make_summable_method, summable_params


def prototype_method(config, value_max: float):
    """The entity-side prototype method of ``config`` (validated), as the in-process protocol builds it."""
    model = FederatedRecommender(
        prototypes=config.method, k=config.k, rank=config.rank, lam=config.lam, mode=config.mode,
        epsilon=config.epsilon, delta=config.delta, prototype_params=config.prototype_params,
        server_weighting=config.server_weighting, max_iter=config.max_iter)
    model._validate()
    return model._method(value_max)


def prototype_method_is_private(config) -> bool:
    """Whether ``config``'s prototype method is a DP method (decides the server's noise stream)."""
    model = FederatedRecommender(prototypes=config.method, k=config.k, prototype_params=config.prototype_params)
    return bool(getattr(model._method(1.0), "private", False))


def release_prototypes(method, X, rng: np.random.Generator, entity: str, epsilon: float, delta: float):
    """One entity's round-1 release: ``(PrototypeRelease, ledger rows)``."""
    return _release_one(method, X, rng, entity, epsilon, delta)


def summable_method(config, value_max: float | None = None, n_entities: int | None = None):
    """The summable method of ``config``: an entity's (with ``value_max``) or the server's (checked
    against ``n_entities``)."""
    kwargs = {"value_max": value_max} if value_max is not None else {}
    method = make_summable_method(config.method, epsilon=config.epsilon, delta=config.delta,
                                  **kwargs, **summable_params(config))
    if n_entities is not None:
        method.check(n_entities)
    return method


def stage_share(method, X, rng, ledger_view, n_entities: int, stage: str, public: dict):
    """An entity's share of one stage of a summable method (before SecAgg+ masks it)."""
    return method.share(X, rng, ledger_view, n_entities, stage=stage, public=public)


def combine_stage(method, stage: str, total: np.ndarray, public: dict, rng, contributors: int) -> dict:
    """The server's post-processing of one stage's secure sum (returns the new public dict)."""
    return method.combine(stage, total, public, rng, contributors)


def stage_public_keys(method) -> tuple:
    """The public quantities a later stage's shares read (broadcast between two secure sums)."""
    return tuple(method.public_keys)


def fit_local(method, X, V: np.ndarray, lam: float, mode: str, rng):
    """Round 2 at an entity: ``(U_h, local columns or None, their U or None)``."""
    return method.fit_local(X, {"V": V}, lam, mode, rng)
