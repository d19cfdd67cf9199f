"""Summable-release methods (``dp-popularity``, …) run in one process: the reference the Flower
deployment must reproduce (same shares, same sum, same V; see
:mod:`dpfed_core.federation.summable` for the mechanism and :mod:`dpfed_core.federation.deployment`
for the secure sum on the wire).

In this process the sum is formed in memory, so nothing hides one entity's share from the code
that adds them up: the ledger's guarantee against the server assumes the secure aggregation that
``python -m dpfed_core deploy-local`` (or a real Flower deployment) provides. The run's notes say so.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..federation.messages import SERVER, array_message
from ..federation.summable import SUMMABLE_METHODS, make_summable_method, summable_params
from ..models.factorization import fit_rows_given
from ..privacy.ledger import PrivacyLedger
from .registry import METHODS, MethodResult, MethodSpec, register_method

IN_PROCESS_NOTE = ("in-process run: the sum of the entities' shares is formed in this process; the "
                   "guarantee against the server assumes secure aggregation (deploy-local / Flower SecAgg+)")


def summable_method_from_config(name: str, config, value_max: float):
    """The summable method of a run configuration (parameters from ``config.method_params``)."""
    params = summable_params(config)
    return make_summable_method(name, value_max=value_max, epsilon=config.epsilon, delta=config.delta,
                                **params)


def _fit_summable(dataset, train, config, rng, progress):
    method = summable_method_from_config(config.method, config, dataset.value_max)
    H = dataset.n_entities
    method.check(H)
    private = math.isfinite(config.epsilon)
    ledger = PrivacyLedger(config.epsilon if private else math.inf, config.delta if private else 0.0)
    # One stream per entity plus one for the server, spawned exactly as the prototype protocol does,
    # so a deployment node reproduces its entity's stream from the seed in simulation mode.
    entity_rngs = rng.spawn(H + 1)
    t0 = time.perf_counter()
    messages, shares, notes = [], [], [IN_PROCESS_NOTE]
    for h, (name, sl) in enumerate(zip(dataset.entity_names, dataset.entity_slices())):
        progress("round1_start", entity=name, index=h, total=H)
        share = method.share(train[sl], entity_rngs[h], ledger.for_entity(name), H)
        shares.append(share.values)
        messages.append(array_message(1, name, SERVER, "share of the secure sum (item totals + noise share)",
                                      share.values))
        progress("round1_done", entity=name, index=h, total=H)  # a share, not prototypes: no shape line
    total = np.sum(shares, axis=0)
    V = method.finish(total)
    t1 = time.perf_counter()
    U = np.zeros((dataset.n_users, V.shape[1]))
    for h, (name, sl) in enumerate(zip(dataset.entity_names, dataset.entity_slices())):
        messages.append(array_message(2, SERVER, name, "item factors V (DP popularity)", V))
        U[sl] = fit_rows_given(train[sl], V, config.lam, config.mode)
        progress("round2_done", entity=name, index=h, total=H)
    timings = {"round1_shares": t1 - t0, "round2_local_fit": time.perf_counter() - t1}
    if V.shape[1] != config.rank:
        notes.append(f"{config.method} learns {V.shape[1]} latent factor(s); rank={config.rank} is not used")
    return MethodResult(U, V, ledger, messages, timings, extra={"notes": notes, "secure_sum": total})


def register_summable_methods() -> None:
    for name, cls in SUMMABLE_METHODS.items():
        if name in METHODS:
            continue
        register_method(MethodSpec(
            name=name, fit=_fit_summable, label=f"{name} (secure sum)",
            privacy="user-level DP (federated, secure sum)",
            description=(cls.__doc__ or "").strip().split("\n")[0],
            uses_epsilon=True, uses_k=False,
        ))


register_summable_methods()
