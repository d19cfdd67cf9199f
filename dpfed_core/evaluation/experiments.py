"""Runs, comparisons and privacy–utility sweeps, and the JSON result document of SPEC §7.

Result document of one run::

    {"config": {...}, "dataset": {...}, "method": {...},
     "entities": [{"name", "n_users", "n_test_users", "train_rmse", "test_rmse", "mar",
                   "precision_at_10", "recall_at_10", "ndcg_at_10"}, ...],
     "overall": {...same keys...},
     "privacy": {"epsilon", "delta", "private", "label", "requested_epsilon", "requested_delta",
                 "ledger": [rows], "per_stage": [rows]},
     "messages": [{"round", "sender", "receiver", "content", "shape", "bytes"}],
     "timings": {stage: seconds}}

``inf`` is written as the string ``"inf"`` and NaN as ``null`` so the file is strict JSON.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from dpfed_core import __version__
from dpfed_core.config import RunConfig
from dpfed_core.privacy.ledger import delta_warning
from dpfed_core.privacy.model import PrivacyModel
from dpfed_core.privacy.noise import SIMULATION_LABEL, method_generator, noise_provenance
from dpfed_core.privacy.statement import (UNSTATED_SAMPLER, GUARANTEE_NAME, assumptions, entity_assumptions,
                                          statement)
from dpfed_core.data.dataset import FederatedDataset, merge_key_columns
from dpfed_core.models.shared_items import SharedItems
from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import validate_budget
from dpfed_core.data.atomic import atomic_write
from dpfed_core.methods import MethodResult, get_method
from dpfed_core.evaluation.metrics import evaluate
from dpfed_core.data.split import Split, split_users

ProgressFn = Callable[..., None]

#: Metrics where lower is better (the others: higher is better).
LOWER_IS_BETTER = {"train_rmse", "test_rmse", "mar"}


from dpfed_core.config import no_progress as _noop  # noqa: E402  (one definition)


def make_split(dataset: FederatedDataset, config: RunConfig) -> Split:
    """The split of a run: seeded by ``config.seed`` on its own stream, so every method run with
    the same seed sees the same split."""
    rng = np.random.default_rng([config.seed, 0x5EED])
    return split_users(dataset.X, dataset.entity_of_user, rng, config.test_fraction, config.n_hidden)


def privacy_summary(result: MethodResult, config: RunConfig, uses_epsilon: bool,
                    privacy_model: PrivacyModel = PrivacyModel.FEDERATED_USER_DP, label: str = "") -> dict:
    eps, dlt = result.ledger.guarantee()
    private = math.isfinite(eps)
    if not private:
        label = "non-private (ε = ∞): raw data or exact statistics leave the entities"
    elif eps == 0 and dlt == 0 and not any(r.epsilon > 0 or r.delta > 0 for r in result.ledger.rows):
        # only when nothing was spent: a tiny ε (1e-7) rounded to 0 by an accountant still sent noisy
        # releases and spent δ
        label = "nothing derived from private data leaves an entity (ε = 0)"
    elif eps == 0:
        label = (f"(ε ≈ 0, {dlt:.3g})-DP per user of each entity: noisy releases were sent (ε below the "
                 "accountant's resolution)")
    elif privacy_model.user_level:
        label = f"({eps:.4g}, {dlt:.3g})-DP per user of each entity (user-level, parallel over entities)"
    else:
        # Another system's guarantee (e.g. rating-level DP at a trusted curator): say what it is.
        label = f"ε = {eps:.4g}, δ = {dlt:.3g} — {label or privacy_model.label}"
    simulation = bool(config.simulation) and uses_epsilon
    if simulation:
        label = f"{SIMULATION_LABEL} — as configured: {label}"
    return {
        "epsilon": eps,
        "delta": dlt,
        "private": private,
        "simulation": simulation,
        "noise": noise_provenance(uses_epsilon and private, simulation),
        "label": label,
        "requested_epsilon": config.epsilon if uses_epsilon else math.inf,
        "requested_delta": config.delta if uses_epsilon else 0.0,
        "ledger": result.ledger.to_records(),
        "per_stage": result.ledger.per_stage(),
        # each entity's spend as the ledger composed it (basic, or zCDP for Gaussian releases)
        "per_entity": result.ledger.per_entity(),
        # how this run's rows compose per entity; a charged run adds how releases compose across runs
        "accountant": {"within_run": result.ledger.accountant()},
        **_guarantee_terms(result, eps, dlt, private, simulation),
        # Summable methods: the trust model and both guarantees (against the server; against the
        # server with all other entities), see dpfed_core.federation.summable_protocol.
        **({"trust": result.extra["trust"]} if "trust" in result.extra else {}),
    }


def _guarantee_terms(result: MethodResult, eps: float, dlt: float, private: bool, simulation: bool) -> dict:
    """How the guarantee is stated (:mod:`dpfed_core.privacy.statement`): its name, assumptions, the
    samplers that drew the noise, and a warning when δ exceeds 1/n̂ of the smallest entity (n̂ = the
    sum of an entity's *released noisy* cluster sizes, so the warning reveals nothing new)."""
    samplers = sorted({r.sampler or UNSTATED_SAMPLER for r in result.ledger.rows
                       if math.isfinite(r.epsilon) and r.epsilon > 0})
    out = {"guarantee_name": GUARANTEE_NAME, "statement": statement(eps, dlt, simulation),
           "samplers": samplers,
           "assumptions": assumptions(samplers, simulation) if private else [],
           "warnings": []}
    releases = getattr(getattr(result, "model", None), "releases_", None) or []
    n_hats = [float(np.sum(r.counts)) for r in releases if getattr(r, "counts", None) is not None]
    if private and n_hats:
        w = delta_warning(dlt, min(n_hats))
        if w:
            out["warnings"].append(w)
    return out


def dataset_summary(dataset: FederatedDataset) -> dict:
    return {
        "name": dataset.name,
        "n_users": dataset.n_users,
        "n_items": dataset.n_items,
        "n_entities": dataset.n_entities,
        "n_interactions": int(dataset.X.nnz),
        "value_kind": dataset.value_kind,
        "value_max": dataset.value_max,
        "entity_source": getattr(dataset, "entity_source", "declared"),
        "notes": list(dataset.notes),
    }


def result_document(dataset: FederatedDataset, config: RunConfig, spec, metrics: dict, privacy: dict,
                    messages: list[dict], timings: dict, notes: list[str]) -> dict:
    """The result document of one run (SPEC §7), whether the run was in-process or deployed."""
    return {
        "config": config.to_dict(),
        "dataset": dataset_summary(dataset),
        "entity_summary": dataset.summary(),
        "method": {"name": spec.name, "label": spec.label, "privacy_model": spec.privacy,
                   "privacy_model_type": spec.privacy_model.name,
                   "description": spec.description},
        "entities": metrics["entities"],
        "overall": metrics["overall"],
        "privacy": privacy,
        "messages": messages,
        "timings": timings,
        "notes": notes,
        "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def run_method(
    dataset: FederatedDataset,
    config: RunConfig,
    split: Split | None = None,
    progress: ProgressFn | None = None,
) -> tuple[dict, MethodResult]:
    """Fit ``config.method`` on the split's training data and evaluate it. Returns the result
    document and the fitted :class:`MethodResult` (for the dashboard's views)."""
    spec = get_method(config.method)
    check_declared_federation(dataset, config)
    if not spec.uses_epsilon and math.isfinite(config.epsilon):
        # A non-private method has no budget: record ε = inf rather than a number it ignored.
        config = config.replace(epsilon=math.inf)
    progress = progress or _noop
    t0 = time.perf_counter()
    split = make_split(dataset, config) if split is None else split
    t_split = time.perf_counter() - t0
    rng = method_generator(config.seed, private=spec.uses_epsilon, simulation=config.simulation)
    t0 = time.perf_counter()
    # user-level federated DP only: a trusted-curator method (Friedman et al.) sees the pooled data by
    # design and states its own, different guarantee
    if needs_dp_catalogue(dataset, spec.privacy_model.user_level, config):
        result = _fit_on_dp_catalogue(dataset, split, config, spec, rng, progress)
    else:
        result = spec.fit(dataset, split.train, config, rng, progress)
    t_fit = time.perf_counter() - t0
    progress("evaluate_start", method=config.method)
    t0 = time.perf_counter()
    metrics = evaluate(result.entity_factors(), None, split.train, split.test, split.test_users,
                       dataset.entity_of_user, dataset.entity_names, config.mode, config.top_n)
    t_eval = time.perf_counter() - t0
    timings = {"split": t_split, **result.timings, "fit_total": t_fit, "evaluate": t_eval}
    declare_public_inputs(dataset, spec, result)
    privacy = privacy_summary(result, config, spec.uses_epsilon, spec.privacy_model, spec.privacy)
    if getattr(dataset, "entity_source", "declared") == "data" and privacy.get("assumptions"):
        privacy["assumptions"] = entity_assumptions(privacy["assumptions"])
    warnings = learned_nothing_warnings(dataset, config, spec, metrics, result)
    doc = result_document(dataset, config, spec, metrics, privacy,
                          [m.to_dict() for m in result.messages], timings,
                          [*dataset.notes, *result.extra.get("notes", [])])
    doc["warnings"] = warnings
    progress("evaluate_done", method=config.method)
    return doc, result


def declare_public_inputs(dataset: FederatedDataset, spec, result: MethodResult) -> None:
    """Public item features used by a federated DP run are declared on every entity's ledger as a
    public input at no privacy cost: a row of ε = 0, δ = 0 naming them, so the ledger says
    everything the run used besides its DP releases."""
    F = getattr(dataset, "item_features", None)
    if F is None or not (spec.uses_epsilon and spec.federated) or not math.isfinite(result.ledger.epsilon):
        return
    names = list(getattr(dataset, "item_feature_names", []))
    shown = ", ".join(names[:6]) + (f", … ({len(names)} in all)" if len(names) > 6 else "")
    for entity in dataset.entity_names:
        result.ledger.spend(entity, "public input", "none (public item features)", 0.0, 0.0,
                            note=f"public item features ({shown}): no privacy cost")


#: A ranking whose mean rank of the held-out items is within this of ½ (random order) learned nothing.
CHANCE_MAR_MARGIN = 0.02


def learned_nothing_warnings(dataset: FederatedDataset, config: RunConfig, spec, metrics: dict,
                             result: MethodResult) -> list[dict]:
    """Why a run learned nothing, and which control fixes it: an empty DP catalogue, a
    ranking no better than chance, entities without test users. Each warning is ``{"code", "text",
    "param"}``; the CLI prints them, the dashboard shows a banner — never a plain success."""
    out = []
    cat_cols = result.extra.get("catalogue")
    if cat_cols is not None and len(cat_cols) == 0:
        own = any(w > 0 for w in result.entity_factors().local_widths)
        out.append({"code": "empty-catalogue", "param": "items",
                    "text": "no item passed the DP catalogue selection, so the federation shared nothing"
                            + (" (each entity recommends from its own model alone)" if own else
                               " and nothing was learned")
                            + ": declare the item catalogue (items=FILE, a formulary), raise epsilon, or use "
                              "secure aggregation"})
    mar = metrics["overall"].get("mar")
    if mar is not None and math.isfinite(mar) and mar >= 0.5 - CHANCE_MAR_MARGIN and not out:
        out.append({"code": "chance-ranking", "param": "epsilon" if spec.uses_epsilon else None,
                    "text": f"the ranking is no better than chance (MAR {mar:.3f}; 0.5 = random order): "
                            + ("raise epsilon, use secure aggregation, or declare the item catalogue "
                               "(items=FILE)" if spec.uses_epsilon else "check the data and the method")})
    empty = [e["name"] for e in metrics["entities"] if not e.get("n_test_users")]
    if empty:
        shown = ", ".join(map(str, empty[:5])) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
        out.append({"code": "no-test-users", "param": "test_fraction",
                    "text": f"{len(empty)} entit{'y has' if len(empty) == 1 else 'ies have'} no test users, so "
                            f"their metrics are undefined (not a win): {shown}"})
    return out


def check_declared_federation(dataset: FederatedDataset, config: RunConfig) -> None:
    """Refuse a DP run whose entity list was read from the private rows without the user's consent
   : which entities exist, and that one has users, is then a function of the data — a
    single-patient hospital's release disappears with its patient (ε = ∞ for that patient)."""
    if getattr(dataset, "entity_source", "declared") != "data" or getattr(dataset, "entities_accepted", True):
        return
    spec = get_method(config.method)
    if spec.uses_epsilon and math.isfinite(config.epsilon) and not config.simulation:
        raise ConfigError(
            f"{dataset.name}: the entity list is read from the private data, so a DP run ({config.method} at "
            f"ε = {config.epsilon:g}) would leak which entities have users. Declare the federation: entities=FILE "
            "(one entity per line; dashboard: “Declared entity list”), or accept reading it from the data with "
            "entities_from_data (dashboard: “Read the entity list from the data”) — membership of an entity is "
            "then not protected", param="entities")


def needs_dp_catalogue(dataset: FederatedDataset, uses_epsilon: bool, config: RunConfig) -> bool:
    """A DP run on data without a declared public catalogue selects its items by DP partition
    selection: the catalogue decides every message's shape, so it must not come from
    the pooled raw data."""
    return bool(uses_epsilon and math.isfinite(config.epsilon) and dataset.item_source != "declared")


def uses_secure_catalogue(dataset: FederatedDataset, config: RunConfig) -> bool:
    """A summable method under secure aggregation selects its catalogue federation-wide by one secure
    sum of bounded user counts over public hash buckets (the only catalogue a deployment selects)."""
    return config.aggregation == "secure" and uses_federation_catalogue(dataset, config)


def uses_federation_catalogue(dataset: FederatedDataset, config: RunConfig) -> bool:
    """A summable method selects its catalogue federation-wide under either trust model: under secure
    aggregation the entities' bucket counts are one secure sum (each adds σ/√(H − d)); without it each
    entity releases its own noisy bucket histogram (full σ) and the server sums them — the summed
    noise grows like √H while the counts grow like H, where per-entity thresholds on a site's own
    few users keep nothing. Prototype methods keep per-entity selection."""
    from dpfed_core.federation.protocol import is_summable

    if not is_summable(config.method):
        return False
    if config.aggregation == "secure":
        return dataset.n_entities - int(config.max_dropouts) >= 2
    return dataset.n_entities >= 1


def _catalogue_generator(config: RunConfig) -> np.random.Generator:
    # its own stream: OpenDP from OS entropy in production, a seeded stream apart from the method's
    # in simulation (so adding the selection does not shift the method's simulated noise)
    return (method_generator(config.seed, private=True, simulation=False) if not config.simulation
            else np.random.default_rng([config.seed, 0xCA7A]))


def catalogue_streams(config: RunConfig, n_entities: int) -> list[np.random.Generator]:
    """Each entity's stream for the federation-wide catalogue share (entity order), the same in
    process and on a deployment node: spawned from the catalogue's own generator, so an entity's
    draws do not depend on another's (a node computes its share alone)."""
    return _catalogue_generator(config).spawn(int(n_entities))


def secure_catalogue_budget(config: RunConfig) -> tuple[float, float, RunConfig]:
    """``(ρ of the catalogue, δ recorded on its rows, the method's configuration)`` of a run that
    selects its catalogue federation-wide (see :func:`_fit_on_secure_catalogue`); public: a function
    of the run's configuration only, computed alike by the in-process run, the ServerApp and every
    node."""
    from dpfed_core.federation.protocol import method_class
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.noise import zcdp_epsilon, zcdp_rho_for_epsilon

    rho_total = zcdp_rho_for_epsilon(config.epsilon, config.delta)
    rho_sel = rho_total * cat.SECURE_CATALOGUE_RHO_SHARE
    row_delta = config.delta * cat.CATALOGUE_DELTA_SHARE
    if getattr(method_class(config.method), "zcdp_budget", False):
        # 1e-9 below the exact rest: the inversion is accurate to 1e-9 relative, rounded down
        cfg = config.replace(epsilon=zcdp_epsilon((rho_total - rho_sel) * (1 - 1e-9), config.delta))
    else:
        cfg = config.replace(epsilon=config.epsilon - zcdp_epsilon(rho_sel, row_delta),
                             delta=config.delta - row_delta)
    return rho_sel, row_delta, cfg


def secure_catalogue_divisor(n_entities: int, config: RunConfig) -> float:
    """√(H − d) under secure aggregation: the catalogue's share divisor, like the method's secure sums;
    1 without it (each entity's histogram carries the full σ)."""
    if config.aggregation != "secure":
        return 1.0
    return math.sqrt(int(n_entities) - int(config.max_dropouts))


def secure_catalogue_note(n_keys: int, threshold: float, sigma_sum: float, n_cols: int, n_items: int,
                          secure: bool = True) -> str:
    """The run note of a federation-wide DP catalogue (public quantities only)."""
    from dpfed_core.privacy import catalogue as cat

    how = ("under secure aggregation" if secure else
           "without secure aggregation (each entity released its own noisy bucket histogram, the server summed them)")
    return (f"no declared item catalogue: federation-wide DP selection {how} kept {n_keys} of "
            f"{cat.SECURE_CATALOGUE_BUCKETS} public hash buckets (noisy sum of user weights ≥ {threshold:.2f}, each "
            f"user's weights of L2 norm 1 over ≤ {cat.SECURE_CATALOGUE_MAX_ITEMS_PER_USER} buckets, σ of the sum "
            f"{sigma_sum:.3g}, {cat.SECURE_CATALOGUE_RHO_SHARE:.0%} of the zCDP budget); {n_cols} of the data's {n_items} "
            "items fall in a kept bucket, their own or a coarser level's of a name written a|b|c (items sharing a bucket "
            "share one key); each entity maps the keys back onto "
            "the item names it holds rows for (a name it never saw is unknown to it). Declare the catalogue "
            "(items=FILE) to share every item and keep the whole budget for the method")


def _fit_on_secure_catalogue(dataset, split, config, spec, rng, progress) -> MethodResult:
    """The federation-wide DP catalogue (:func:`dpfed_core.privacy.catalogue.select_catalogue_secure`)
    then the method on the released keys, its factors mapped back to the items of released keys.

    Budget: the run's (ε, δ) is a zCDP budget ρ (OpenDP's conversion); the catalogue takes
    ``SECURE_CATALOGUE_RHO_SHARE`` of it. A method whose every release is a Gaussian calibrated from
    ρ(ε, δ) and recording its ρ (``zcdp_budget``) gets the ε whose conversion is the rest of ρ, so
    that the ledger's zCDP composition of all rows is exactly (ε, δ); any other method gets the rest
    of (ε, δ) by basic composition (:func:`secure_catalogue_budget`). Each share is rounded to the
    secure sum's public grid, as SecAgg+ carries it in a deployment."""
    from dpfed_core.federation.messages import SERVER, Message
    from dpfed_core.federation.summable import GRID
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import PrivacyLedger

    rho_sel, row_delta, cfg = secure_catalogue_budget(config)
    ledger = PrivacyLedger(config.epsilon, config.delta)
    divisor = secure_catalogue_divisor(dataset.n_entities, config)
    progress("catalogue_start", entities=dataset.n_entities)
    release = cat.select_catalogue_secure(split.train, dataset.entity_slices(), dataset.entity_names,
                                          dataset.item_names, rho_sel, row_delta,
                                          catalogue_streams(config, dataset.n_entities), ledger,
                                          divisor=divisor, grid=GRID)
    K, B = int(release.keys.size), release.n_buckets
    what = ("catalogue: bounded user counts per public hash bucket (secure-sum share)" if config.aggregation == "secure"
            else "catalogue: noisy bounded user counts per public hash bucket (own release, full noise)")
    messages = [Message(1, name, SERVER, what, (B,), 8 * B) for name in dataset.entity_names]
    messages += [Message(1, SERVER, name, "catalogue (released bucket keys)", (K,), 8 * K)
                 for name in dataset.entity_names]
    cols = release.columns
    note = secure_catalogue_note(K, release.threshold, release.sigma_sum, len(cols), dataset.n_items,
                                 secure=config.aggregation == "secure")
    if K == 0:
        return _nothing_learned(dataset, split, config, spec, rng, ledger, messages,
                                note + "; no bucket passed the threshold")
    if spec.federated:  # shares on the released keys, each entity's round 2 on all of its own items
        shared = SharedItems(release.item_key, K, dataset.value_max)
        result = spec.fit(dataset, split.train, cfg, rng, progress, shared=shared)
        factors = result.entity_factors()
    else:
        M = release.key_matrix()
        names = np.array([f"bucket {k}" for k in release.keys], dtype=object)
        sub = dataset.merge_items(M, names, item_source="dp-selected")
        result = spec.fit(sub, merge_key_columns(split.train, M, dataset.value_max), cfg, rng, progress)
        factors = result.entity_factors().on_keys(release.item_key, dataset.n_items)
    return _on_catalogue(result, factors, config, ledger, messages, note, cols, catalogue_keys=K,
                         own_items_kept=bool(spec.federated))


def _fit_on_dp_catalogue(dataset, split, config, spec, rng, progress) -> MethodResult:
    """Select the catalogue with :func:`dpfed_core.privacy.catalogue.select_catalogue` (a share of
    ε and δ, charged per entity), fit the method on those columns with the rest of the budget, and
    put the factors back on the full item axis (items outside the catalogue get zero factors: the
    server knows nothing of them, so they are never recommended above a catalogue item)."""
    from dpfed_core.federation.messages import SERVER, Message
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import PrivacyLedger

    if spec.federated and uses_federation_catalogue(dataset, config):
        return _fit_on_secure_catalogue(dataset, split, config, spec, rng, progress)
    eps_sel = config.epsilon * cat.CATALOGUE_EPSILON_SHARE
    dlt_sel = config.delta * cat.CATALOGUE_DELTA_SHARE
    ledger = PrivacyLedger(config.epsilon, config.delta)
    sel_rng = _catalogue_generator(config)
    progress("catalogue_start", entities=dataset.n_entities)
    release = cat.select_catalogue(split.train, dataset.entity_slices(), dataset.entity_names, eps_sel, dlt_sel,
                                   sel_rng, ledger)
    cols = release.columns
    messages = [Message(1, name, SERVER, "DP-selected item ids", (len(ids),), int(np.asarray(ids).nbytes))
                for name, ids in release.per_entity.items()]
    messages += [Message(1, SERVER, name, "catalogue (union of released item ids)", (len(cols),),
                         int(cols.nbytes)) for name in dataset.entity_names]
    note = (f"no declared item catalogue: {len(cols)} of the data's {dataset.n_items} items selected by DP "
            f"partition selection (ε = {eps_sel:.3g}, δ = {dlt_sel:.3g} per entity, an item needs a noisy user "
            f"count ≥ {release.threshold:.0f}); declare the catalogue (items=FILE) to keep every item and "
            "the whole budget for the method")
    if len(cols) == 0:
        return _nothing_learned(dataset, split, config, spec, rng, ledger, messages,
                                note + "; no item passed the threshold")
    cfg = config.replace(epsilon=config.epsilon - eps_sel, delta=config.delta - dlt_sel)
    if spec.federated:  # shares on the selected items, each entity's round 2 on all of its own items
        shared = SharedItems.from_columns(cols, dataset.n_items, dataset.value_max)
        result = spec.fit(dataset, split.train, cfg, rng, progress, shared=shared)
        factors = result.entity_factors()
    else:
        sub = dataset.select_items(cols, item_source="dp-selected")
        result = spec.fit(sub, split.train[:, cols].tocsr(), cfg, rng, progress)
        factors = result.entity_factors().on_items(cols, dataset.n_items)
    return _on_catalogue(result, factors, config, ledger, messages, note, cols, own_items_kept=bool(spec.federated))


#: What a run on a DP-selected catalogue says when each entity keeps its own items (in process and
#: deployed alike).
OWN_ITEMS_NOTE = ("the catalogue decides only what is shared: each entity still scores every item it has rows for "
                  "with its own model")
#: ... and when the catalogue came out empty.
EMPTY_CATALOGUE_OWN_NOTE = ", so the federation shares nothing: each entity recommends from its own model alone"
EMPTY_CATALOGUE_ZERO_NOTE = ", so nothing was learned (every score is 0)"


def _keeps_own_items(spec, config: RunConfig) -> bool:
    """Does the method's round 2 keep each site's own parts (a summable method with its local blend)?"""
    from dpfed_core.federation.protocol import build_method, is_summable

    if not (spec.federated and is_summable(config.method)):
        return False
    return bool(getattr(build_method(config, 1.0), "local_blend", False))


def _nothing_learned(dataset, split, config, spec, rng, ledger, messages, note: str) -> MethodResult:
    """The result of a run whose DP catalogue is empty: the federation shares nothing, so a summable
    method whose round 2 keeps each site's own parts leaves every site with them
    (:func:`~dpfed_core.federation.summable.own_round2`, the routine of round 2 and of ``local``); any
    other method scores 0 everywhere. The selection's ledger and messages, and the note saying so."""
    from dpfed_core.federation.protocol import as_generator, build_method, is_summable
    from dpfed_core.federation.summable import own_round2
    from dpfed_core.models.entity_factors import EntityFactors, LocalColumns

    ledger.simulation = bool(config.simulation)
    empty = {"catalogue": np.zeros(0, dtype=np.int64)}
    if spec.federated and is_summable(config.method):
        method = build_method(config, dataset.value_max)
        method.set_public_inputs(item_features=getattr(dataset, "item_features", None))
        rngs = as_generator(rng).spawn(dataset.n_entities + 1)  # each entity's stream, as the estimator's
        local = []
        for h, sl in enumerate(dataset.entity_slices()):
            own = own_round2(method, split.train[sl], config.lam, config.mode, rngs[h])
            local.append(None if own is None else LocalColumns.from_dense(*own))
        if any(loc is not None for loc in local):
            factors = EntityFactors(np.zeros((dataset.n_users, 0)), np.zeros((dataset.n_items, 0)),
                                    dataset.entity_slices(), local)
            return MethodResult(factors.U, factors.V, ledger, messages, {"catalogue": 0.0}, factors=factors,
                                extra={"notes": [note + EMPTY_CATALOGUE_OWN_NOTE], **empty})
    width = max(int(config.rank), 1)
    return MethodResult(np.zeros((dataset.n_users, width)), np.zeros((dataset.n_items, width)), ledger, messages,
                        {"catalogue": 0.0}, extra={"notes": [note + EMPTY_CATALOGUE_ZERO_NOTE], **empty})


def _on_catalogue(result: MethodResult, factors, config, ledger, messages, note: str, cols: np.ndarray,
                  **extra) -> MethodResult:
    """The method's result on the selected catalogue, put back on the data's item axis (``factors``):
    the selection's ledger rows first, then the method's (every field, the sampler label included), the
    selection's messages first, its note first."""
    for r in result.ledger.rows:
        ledger.spend(**asdict(r))
    ledger.simulation = bool(getattr(result.ledger, "simulation", False) or config.simulation)
    trust = result.extra.get("trust")
    if trust:  # the guarantee against the server is the whole run's (the selection's rows included)
        eps, dlt = ledger.guarantee()
        trust = {**trust, "against_server": {"epsilon": eps, "delta": dlt}}
        if trust.get("aggregation") != "secure":
            trust["against_server_and_other_entities"] = {"epsilon": eps, "delta": dlt}
        result.extra = {**result.extra, "trust": trust}
    result.factors = factors
    result.U, result.V = factors.U, factors.V
    result.ledger = ledger
    result.messages = messages + list(result.messages)
    if extra.get("own_items_kept") and _keeps_own_items(get_method(config.method), config):
        note += "; " + OWN_ITEMS_NOTE
    result.extra = {**result.extra, "notes": [note, *result.extra.get("notes", [])], "catalogue": cols, **extra}
    return result



def run_comparison(
    dataset: FederatedDataset,
    config: RunConfig,
    methods: Iterable[str] = ("central", "individual", "dp-popularity", "random-v", "popularity"),
    progress: ProgressFn | None = None,
) -> dict[str, dict]:
    """Run ``config.method`` and each of ``methods`` on the same split. Returns {method: document}."""
    split = make_split(dataset, config)
    out = {}
    for name in dict.fromkeys([config.method, *methods]):
        out[name] = run_method(dataset, config.replace(method=name), split, progress)[0]
    return out


def _is_dp_reference(method: str) -> bool:
    """A reference that spends ε (``dp-popularity``): it runs at every ε of the grid."""
    return get_method(method).uses_epsilon


def _job_key(method: str, epsilon: float, seed: int, swept: str) -> tuple:
    """Identity of one sweep point: the swept method and DP references by (ε, seed), a non-private
    reference by seed only (its ε is whatever its ledger guarantees, 0 or inf)."""
    by_eps = method == swept or _is_dp_reference(method)
    return (method, float(epsilon) if by_eps else None, int(seed))


def sweep_jobs(method: str, epsilons: Iterable[float], references: Iterable[str]) -> list[tuple]:
    """(method, ε) points of one seed, in the order :func:`sweep` runs them: the swept method over
    the grid (only ε = inf for a method without budget), DP references over the grid (same trust
    model), other references once. The one job list of the sweep and of its charge plan
    (:func:`~dpfed_core.evaluation.budget.plan_sweep`)."""
    epsilons = [float(e) for e in epsilons]
    eps_run = epsilons if get_method(method).uses_epsilon else [math.inf]
    jobs = [(method, e) for e in eps_run]
    for r in dict.fromkeys(references):
        if r == method:
            continue
        jobs += [(r, e) for e in epsilons] if _is_dp_reference(r) else [(r, math.inf)]
    return jobs


def check_sweep_grid(config: RunConfig, epsilons: Iterable[float], seeds: Iterable[int]) -> tuple[list, list]:
    """The one check of a sweep's grid (the sweep, its charge plan, the CLI and the dashboard): no
    repeated value (a repeated seed or ε would count one configuration twice and report a wrong sd),
    at least one ε and one seed, every ε positive (or inf) with a usable (ε, δ). Returns the grid."""
    epsilons = check_grid([float(e) for e in epsilons], "epsilons")
    seeds = check_grid([int(s) for s in seeds], "seeds")
    if not epsilons:
        raise ConfigError("the ε grid is empty; give at least one ε (inf for non-private)", param="epsilons")
    for e in epsilons:
        if math.isnan(e) or e <= 0:
            raise ConfigError(f"every ε of the grid must be positive (or inf), got {e}", param="epsilons")
        if math.isfinite(e):
            validate_budget(e, config.delta)
    if not seeds:
        raise ConfigError("give at least one seed", param="seeds")
    return epsilons, seeds


def check_grid(values: Iterable, flag: str) -> list:
    """Refuse a grid with repeated values: a repeated seed or ε would count one configuration twice
    and report a wrong sd."""
    vals = list(values)
    seen, dup = set(), []
    for v in vals:
        if v in seen and v not in dup:
            dup.append(v)
        seen.add(v)
    if dup:
        shown = ", ".join("inf" if isinstance(d, float) and math.isinf(d) else f"{d:g}" if isinstance(d, float)
                          else str(d) for d in dup)
        raise ConfigError(f"{flag} repeats {shown}; give each value once (a repeat would be counted twice "
                          "in the mean ± sd)", param=flag.lstrip("-"))
    return vals


#: The sweep's references: ``local`` — each entity alone, done properly — is what every
#: "federation pays" verdict and crossing ε is stated against; ``individual`` beside it.
DEFAULT_REFERENCES = ("local", "individual", "dp-popularity", "central", "random-v", "popularity")


def sweep(
    dataset: FederatedDataset,
    config: RunConfig,
    epsilons: Iterable[float],
    seeds: Iterable[int],
    references: Iterable[str] = None,
    progress: ProgressFn | None = None,
    checkpoint: Callable[[dict], None] | None = None,
    resume: dict | None = None,
) -> dict:
    """Privacy–utility sweep (SPEC §4): ``config.method`` over ``epsilons`` × ``seeds`` and each
    reference method once per seed, all methods of a seed on that seed's split. A DP reference
    (``dp-popularity``) runs at every ε of the grid, with the run's trust model (``aggregation``),
    so the swept method is compared with it at the same ε.

    Returns ``{"config", "epsilons", "seeds", "runs": [summaries], "complete": True, ...}`` where each
    run summary has ``method``, ``epsilon``, ``seed``, ``overall``, ``entities``, ``privacy``. A
    reference's ``epsilon`` is its ledger's guarantee — 0 for methods that release nothing
    (``individual``, ``random-v``), inf for non-private ones — exactly as ``run`` reports it.

    checkpoint : called with the partial document (``"complete": False``) after every finished
        point, so a killed sweep can continue (the CLI writes it atomically to ``--out``).
    resume : a partial (or complete) document of the same sweep; its finished points are kept and
        not recomputed. Its configuration and dataset must match this sweep's.
    """
    epsilons, seeds = check_sweep_grid(config, epsilons, seeds)
    references = DEFAULT_REFERENCES if references is None else references
    spec = get_method(config.method)
    if not spec.uses_epsilon:
        epsilons_run = [math.inf]
    else:
        epsilons_run = epsilons
    references = [r for r in dict.fromkeys(references) if r != config.method]
    for r in references:
        get_method(r)
    doc = {
        "config": config.to_dict(),
        "dataset": dataset_summary(dataset),
        "epsilons": epsilons_run,
        "grid": epsilons,
        "seeds": seeds,
        "references": references,
        "runs": [],
        "complete": False,
        "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    done_keys: set = set()
    if resume is not None:
        doc["runs"] = _resumable_runs(resume, doc, config.method)
        done_keys = {_job_key(r["method"], r["epsilon"], r["seed"], config.method) for r in doc["runs"]}
    total = len(seeds) * len(sweep_jobs(config.method, epsilons, references))
    done = len(doc["runs"])
    progress = progress or _noop
    for seed in seeds:
        cfg_seed = config.replace(seed=seed)
        jobs = sweep_jobs(config.method, epsilons, references)
        jobs = [(m, e) for m, e in jobs if _job_key(m, e, seed, config.method) not in done_keys]
        if not jobs:
            continue
        split = make_split(dataset, cfg_seed)
        for method, eps in jobs:
            cfg = cfg_seed.replace(method=method, epsilon=eps)
            run_doc, _ = run_method(dataset, cfg, split)
            doc["runs"].append({
                "method": method,
                "epsilon": (eps if method == config.method or _is_dp_reference(method)
                            else run_doc["privacy"]["epsilon"]),
                "seed": seed,
                "overall": run_doc["overall"], "entities": run_doc["entities"],
                "privacy": {k: run_doc["privacy"][k] for k in ("epsilon", "delta", "private", "label")},
                "timings": run_doc["timings"],
            })
            done += 1
            progress("sweep_step", done=done, total=total, method=method, epsilon=eps, seed=seed)
            if checkpoint is not None and done < total:
                checkpoint(doc)
    # keep the grid order (seed, then ε, then references) whatever order points were finished in
    order = {(m, e, s): i for i, (m, e, s) in enumerate(
        _job_key(m, e, s, config.method) for s in seeds
        for m, e in sweep_jobs(config.method, epsilons, references))}
    doc["runs"].sort(key=lambda r: order.get(_job_key(r["method"], r["epsilon"], r["seed"], config.method), 0))
    doc["complete"] = True
    return doc


def _resumable_runs(previous: dict, doc: dict, swept: str) -> list[dict]:
    """The finished points of ``previous`` that belong to the sweep ``doc`` describes."""
    if not isinstance(previous, dict) or not isinstance(previous.get("runs"), list):
        raise ConfigError("the sweep document to resume is not a sweep document (no 'runs' list)", param="resume")
    old_cfg = {k: v for k, v in (previous.get("config") or {}).items() if k != "seed"}
    new_cfg = {k: v for k, v in json_safe(doc["config"]).items() if k != "seed"}
    diff = sorted(k for k in set(old_cfg) | set(new_cfg) if old_cfg.get(k) != new_cfg.get(k))
    if diff:
        raise ConfigError("the sweep document to resume was written by a sweep with other settings "
                          f"({', '.join(diff)} differ); resume with the same settings or start a new sweep",
                          param="resume")
    keep = ("name", "n_users", "n_items", "n_entities", "n_interactions", "value_kind", "value_max")
    old_ds = {k: (previous.get("dataset") or {}).get(k) for k in keep}
    new_ds = {k: json_safe(doc["dataset"]).get(k) for k in keep}
    if old_ds != new_ds:
        raise ConfigError("the sweep document to resume was written for other data "
                          f"({old_ds.get('name')!r}, {old_ds.get('n_users')} users); load the same data (data=…)",
                          param="resume")
    wanted = {_job_key(m, e, s, swept) for s in doc["seeds"]
              for m, e in sweep_jobs(swept, doc["grid"], doc["references"])}
    runs, seen = [], set()
    for r in previous["runs"]:
        try:
            key = _job_key(str(r["method"]), float(r["epsilon"]), int(r["seed"]), swept)
            _ = r["overall"]
        except (KeyError, TypeError, ValueError):
            raise ConfigError("the sweep document to resume has a malformed run entry; start a new sweep",
                              param="resume") from None
        if key in wanted and key not in seen:
            seen.add(key)
            runs.append({**r, "epsilon": float(r["epsilon"]),
                         "overall": {k: (math.nan if v is None else v) for k, v in r["overall"].items()}})
    return runs


def sweep_table(sweep_doc: dict, metric: str = "mar") -> list[dict]:
    """Mean ± sd over seeds of ``metric`` (overall) per (method, ε)."""
    groups: dict[tuple[str, float], list[float]] = {}
    for r in sweep_doc["runs"]:
        groups.setdefault((r["method"], float(r["epsilon"])), []).append(r["overall"][metric])
    rows = []
    for (method, eps), vals in groups.items():
        v = np.asarray(vals, dtype=float)
        rows.append({"method": method, "epsilon": eps, "metric": metric, "mean": float(np.nanmean(v)),
                     "sd": float(np.nanstd(v, ddof=1)) if len(v) > 1 else 0.0, "n": int(len(v))})
    return rows


#: Metrics whose crossing is meaningful only in ``observed`` mode: in ``zero`` mode every absent cell
#: is a 0 target, so RMSE on the hidden (non-zero) entries rewards inflated predictions, not a useful
#: model (SPEC §1: ranking quality is the headline metric there).
RMSE_METRICS = {"train_rmse", "test_rmse"}

#: A ranking no better than chance has MAR 0.5. A crossing is reported only where the swept method's
#: mean MAR plus one sd stays below this at every ε from the crossing on, so that "beats individual"
#: is never claimed for a method whose ranking is random.
RANDOM_MAR = 0.5


def default_baseline(sweep_doc: dict) -> str:
    """What a crossing is stated against: ``local`` when the sweep ran it, else
    ``individual``."""
    methods = {r["method"] for r in sweep_doc.get("runs", [])} | set(sweep_doc.get("references", []))
    return "local" if "local" in methods else "individual"


MODE_WORDS = {"zero": "zero mode: every unobserved user–item pair is a 0 target",
              "observed": "observed mode: only observed entries are fitted and tested"}


def crossing_report(sweep_doc: dict, metric: str = "mar", baseline: str | None = None) -> dict:
    """The crossing ε and what it means, as data and as one sentence.

    A crossing ε is the smallest ε of the grid from which the swept method's mean ``metric`` beats
    ``baseline``'s mean at that ε *and every larger one*, and is reported only if the metric is
    meaningful: RMSE metrics only in ``observed`` mode (see :data:`RMSE_METRICS`), and the swept
    method's ranking must be better than chance (mean + sd of MAR < :data:`RANDOM_MAR`) at every ε
    from the crossing on.

    Returns ``{"metric", "epsilon" (float, inf or None), "meaningful" (bool), "text"}``; ``epsilon``
    is inf when only the non-private point (ε = ∞) beats the baseline ("none at finite ε").
    """
    method = sweep_doc["config"]["method"]
    mode = sweep_doc["config"].get("mode", "zero")
    baseline = baseline or default_baseline(sweep_doc)
    out = {"metric": metric, "epsilon": None, "meaningful": True, "baseline": baseline, "mode": mode}
    if metric in RMSE_METRICS and mode == "zero":
        out["meaningful"] = False
        out["text"] = (f"not reported: {metric} is not meaningful in zero mode (absent entries are 0 targets); "
                       "use mar or a top-N metric, or mode=observed for ratings")
        return out
    table = sweep_table(sweep_doc, metric)
    base = {r["epsilon"]: r["mean"] for r in table if r["method"] == baseline}
    if not base:
        raise ConfigError(f"the sweep has no {baseline!r} runs to compare with; add it to references=…",
                          param="references")
    # A non-private baseline has one value; a DP one (dp-popularity) is compared at the same ε.
    single = next(iter(base.values())) if len(base) == 1 else None
    rows = sorted((r for r in table if r["method"] == method), key=lambda r: r["epsilon"])
    mar = {r["epsilon"]: (r["mean"], r["sd"]) for r in sweep_table(sweep_doc, "mar") if r["method"] == method} \
        if sweep_doc.get("runs") and "mar" in sweep_doc["runs"][0]["overall"] else {}

    def ok(r) -> bool:
        m = r["mean"]
        ref = single if single is not None else base.get(r["epsilon"], math.nan)
        better = (m < ref) if metric in LOWER_IS_BETTER else (m > ref)
        if not better or not np.isfinite(m):
            return False
        mm, sd = mar.get(r["epsilon"], (0.0, 0.0))
        return bool(mm + sd < RANDOM_MAR)

    crossing = None
    for r in reversed(rows):
        if not ok(r):
            break
        crossing = r["epsilon"]
    out["epsilon"] = crossing
    out.update(_crossing_text(method, baseline, metric, crossing))
    out["text"] += f" [{MODE_WORDS.get(mode, mode + ' mode')}]"
    return out


def _crossing_text(method: str, baseline: str, metric: str, crossing: float | None) -> dict:
    out: dict = {}
    if crossing is None:
        out["text"] = f"none in the grid: {method} never beats {baseline} on {metric} at the largest ε"
    elif math.isinf(crossing):
        out["text"] = (f"none at finite ε: only the non-private point (ε = ∞) beats {baseline} on {metric}")
    else:
        out["text"] = (f"ε = {crossing:g}: from here on every grid point of {method} beats {baseline} on {metric} "
                       f"(mean over seeds), with a better-than-chance ranking (MAR + sd < {RANDOM_MAR})")
    return out


def crossing_epsilon(sweep_doc: dict, metric: str = "mar", baseline: str | None = None) -> float | None:
    """The crossing ε of :func:`crossing_report` (inf: only the non-private point beats the baseline;
    None: never, or the metric is not meaningful for this sweep)."""
    return crossing_report(sweep_doc, metric, baseline)["epsilon"]


def versus_dp_popularity(sweep_doc: dict, metric: str = "mar", method: str | None = None) -> list[dict]:
    """Per ε: the method's and ``dp-popularity``'s mean ± sd, the difference, and a verdict
    "beats dp-popularity" / "LOSES to dp-popularity" / "inconclusive" (the difference is within the
    larger of the two standard deviations over seeds). Empty if the sweep has no dp-popularity runs."""
    method = method or sweep_doc["config"]["method"]
    rows = {(r["method"], r["epsilon"]): r for r in sweep_table(sweep_doc, metric)}
    out = []
    for (meth, e), r in sorted(rows.items(), key=lambda kv: kv[0][1]):
        ref = rows.get(("dp-popularity", e))
        if meth != method or ref is None:
            continue
        diff = r["mean"] - ref["mean"]
        if metric not in LOWER_IS_BETTER:
            diff = -diff
        noise = max(r["sd"], ref["sd"])
        verdict = ("inconclusive" if abs(diff) <= noise
                   else "beats dp-popularity" if diff < 0 else "LOSES to dp-popularity")
        out.append({"epsilon": e, "mean": r["mean"], "sd": r["sd"], "dp_popularity_mean": ref["mean"],
                    "dp_popularity_sd": ref["sd"], "difference": r["mean"] - ref["mean"], "verdict": verdict})
    return out


# ---------------------------------------------------------------------------- JSON
def json_safe(obj):
    """Recursively replace inf by "inf", NaN by None and numpy scalars/arrays by Python values."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    return obj


def write_json(doc: dict, path: str | Path, flag: str = "--out") -> Path:
    """Write a result document as strict JSON, atomically (complete file or the old one)."""
    return atomic_write(path, json.dumps(json_safe(doc), indent=2, allow_nan=False), flag)
