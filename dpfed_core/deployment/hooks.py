"""The federation's shared pieces that the deployment's ServerApp and ClientApp call, each named for
its role on the wire. They are the very functions the in-process estimator uses — the one factory
(:func:`~dpfed_core.federation.protocol.build_method`), the one prototype release
(:func:`~dpfed_core.federation.protocol.release_entity`) and the one summable protocol
(:mod:`dpfed_core.federation.summable_protocol`: shares, the server's combine, the declared public
keys, the one round-2 assembly) — so a deployment computes exactly what an in-process run computes.
"""
from __future__ import annotations

import math

import numpy as np

from dpfed_core.errors import ConfigError
from dpfed_core.federation.protocol import build_method, check_counts, is_summable, method_class, release_entity
from dpfed_core.federation.summable_protocol import broadcast_between_stages, fit_entity, run_notes


def prototype_method(config, value_max: float):
    """The entity-side prototype method of ``config`` (parameters checked, cluster sizes declared when the
    run weights by them), as the estimator builds it."""
    from dpfed_core.federation.protocol import FederatedRecommender

    FederatedRecommender.from_config(config)._validate()
    method = build_method(config, value_max)
    check_counts(method, config.server_weighting)
    return method


def node_method(config, value_max: float, secure_catalogue: bool = False, n_entities: int | None = None):
    """The method a site's node releases with, built from the run's request as every handler of the node
    builds it: a prototype method with the run's settings and the checks its release makes before it
    draws (:func:`prototype_method`, its ``check_parameters``); a summable method on the run's budget,
    after a federation-wide catalogue's share when ``secure_catalogue`` (:func:`method_config`), checked
    against the federation's ``n_entities`` as its shares check it. A request whose parameters the method
    cannot take raises the :class:`~dpfed_core.errors.ConfigError` naming the parameter — the site's
    decision builds it too, and refuses such a request before any charge."""
    if is_summable(config.method):
        return summable_method(method_config(config, secure_catalogue), value_max=value_max, n_entities=n_entities)
    method = prototype_method(config, value_max)
    check = getattr(method, "check_parameters", None)
    if callable(check):  # a plug-in's own class may have none
        check()
    return method


def public_bounds(config, value_max: float, n_items: int | None = None, secure_catalogue: bool = False,
                  n_entities: int | None = None) -> dict[str, float]:
    """The public bounds ``config``'s method clips and scales a site's rows with (``row_norm``,
    ``value_min``), as the method itself derives them (its :meth:`public_bounds`): the run's own values,
    or the method's defaults from public inputs only — the value bound Λ∞ and the size ``n_items`` of
    the catalogue its release reads (None: not known yet; a default that grows with it is taken at its
    largest, :data:`~dpfed_core.federation.prototypes.UNKNOWN_CATALOGUE_SIZE`). A bound the method does
    not use is absent; a method without the public method (a plug-in's own class) states none. The
    method is built as the node's handlers build it (:func:`node_method`): a request whose parameters it
    cannot take raises the :class:`~dpfed_core.errors.ConfigError` naming the parameter."""
    method = node_method(config, value_max, secure_catalogue, n_entities)
    bounds = getattr(method, "public_bounds", None)
    return {} if not callable(bounds) else {k: float(v) for k, v in bounds(n_items).items()}


def prototype_method_is_private(config) -> bool:
    """Whether ``config``'s prototype method is a DP method (decides the server's noise stream)."""
    return bool(getattr(method_class(config.method), "private", False))


def release_prototypes(method, X, rng: np.random.Generator, entity: str, epsilon: float, delta: float):
    """One entity's round-1 release: ``(PrototypeRelease, ledger rows)``."""
    return release_entity(method, X, rng, entity, epsilon, delta)


def summable_method(config, value_max: float | None = None, n_entities: int | None = None):
    """The summable method of ``config``: an entity's (with ``value_max``) or the server's (checked
    against ``n_entities``; the server's steps never read the value bound)."""
    method = build_method(config, 1.0 if value_max is None else value_max)
    if n_entities is not None:
        method.check(n_entities)
    return method


def method_config(config, secure_catalogue: bool):
    """The configuration the run's summable method is built with, alike on the server and every
    node: with a federation-wide catalogue, the rest of the budget after the catalogue's share (the
    in-process split, :func:`~dpfed_core.evaluation.catalogue_run.secure_catalogue_budget`)."""
    if not secure_catalogue:
        return config
    from dpfed_core.evaluation.catalogue_run import secure_catalogue_budget

    if not math.isfinite(config.epsilon):
        # the coordinator selects a catalogue by DP only at a finite ε; a request that asks for one at ε = ∞
        # is malformed, and a site says so instead of failing inside the noise calibration
        raise ConfigError("a federation-wide DP catalogue selection needs a finite ε, and this run asks ε = ∞: "
                          "declare the item catalogue (--items) or give a finite ε (--epsilon)")
    return secure_catalogue_budget(config)[2]


def stage_share(method, X, rng, ledger_view, n_entities: int, stage: str, public: dict):
    """An entity's share of one stage of a summable method (before SecAgg+ masks it)."""
    return method.share(X, rng, ledger_view, n_entities, stage=stage, public=public)


def combine_stage(method, stage: str, total: np.ndarray, public: dict, rng, contributors: int) -> dict:
    """The server's post-processing of one stage's secure sum (returns the new public dict)."""
    return method.combine(stage, total, public, rng, contributors)


def stage_public_keys(method) -> tuple:
    """The public quantities a later stage's shares read (broadcast between two secure sums)."""
    return tuple(method.public_keys)


def public_broadcast(method, public: dict) -> dict[str, np.ndarray]:
    """What the server sends every node between two stages: the method's declared public keys."""
    return broadcast_between_stages(method, public)


def server_notes(method, public: dict) -> list[str]:
    """The run's notes as the in-process run writes them (:func:`~dpfed_core.federation.summable_protocol.run_notes`):
    the trust model of the deployment's secure sums, then what the method says of its server step."""
    return run_notes(method, public, in_process=False)


def fit_local(method, X, V: np.ndarray, lam: float, mode: str, rng,
              known_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Round 2 at an entity, by the one assembly (:func:`~dpfed_core.federation.summable_protocol.fit_entity`):
    ``(U_h, V_h)`` with the entity's own local columns after the broadcast V (used here, never sent).
    ``known_only``: V was mapped onto the item names this entity knows (a DP-selected catalogue)."""
    from dpfed_core.federation.summable import KNOWN_ONLY

    return fit_entity(method, X, {"V": V, KNOWN_ONLY: bool(known_only)}, lam, mode, rng)


def warm_calibration(run_json: str, n_entities: int, value_max: float | None = None) -> None:
    """Compute the noise calibration of a run once, before a local deployment forks its sites.

    ``run_json``: the run's public JSON as the ServerApp sends it to every node. A summable method's
    :meth:`budget` (ρ from (ε, δ) and the σ of each release by OpenDP's maps, ≈ 20 OpenDP
    conversions) and the federation-wide catalogue's split of it are pure, cached functions of
    public parameters; computed in the warm interpreter, every ClientApp and ServerApp task forked
    from it finds them in the cache instead of recomputing them (≈ 0.1 CPU-s a task, measured on the
    30-hospital clinic sample). A one-stage method (dp-popularity) has its release's σ computed when
    the declared catalogue's size is in the JSON (≈ 0.04 CPU-s a share); ``value_max``: the data's
    public value bound Λ∞ the nodes build the method with (their shards state it), which bounds a
    user's row when no ``row_norm`` is given."""
    from dpfed_core.deployment.wire import catalogue_from_json, catalogue_size_from_json, config_from_json
    from dpfed_core.federation.protocol import is_summable

    config = config_from_json(run_json)
    if not is_summable(config.method):
        return
    secure_catalogue = catalogue_from_json(run_json) == "secure"
    config = method_config(config, secure_catalogue)  # as the nodes build it
    summable_method(config, value_max, n_entities=int(n_entities)).calibrate(
        int(n_entities), None if secure_catalogue else catalogue_size_from_json(run_json))
