"""How a DP run on data without a declared item catalogue fixes what the federation shares.

The catalogue shapes every later message, so it must be public or a charged DP release. A summable
method selects it federation-wide (one secure sum of unit-norm user weights over public hash buckets,
or the entities' full-noise histograms summed without secure aggregation); a prototype method selects
per entity (:mod:`dpfed_core.privacy.catalogue` holds both mechanisms and their proofs). This module
runs that selection inside a run — on the training rows, charged to the run's ledger — and then the
method on the released keys: each entity still scores every item it holds
(:mod:`dpfed_core.models.shared_items`), the run's notes say what was kept. A declared catalogue that
leaves out some of the data's items is shared the same way, public and uncharged
(:func:`fit_on_declared_catalogue`).
"""
from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np

from dpfed_core.config import RunConfig, no_progress
from dpfed_core.data.dataset import FederatedDataset, merge_key_columns
from dpfed_core.methods import MethodResult, get_method
from dpfed_core.models.shared_items import SharedItems
from dpfed_core.privacy.noise import method_generator
from dpfed_core.privacy.statement import epsilon_that_holds


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


def entity_catalogue_budget(config: RunConfig) -> tuple[float, float, RunConfig]:
    """``(ε, δ of the per-entity selection, the method's configuration)`` of a run that selects its
    catalogue per entity (:func:`fit_on_dp_catalogue`): the selection takes ``CATALOGUE_EPSILON_SHARE``
    of ε and ``CATALOGUE_DELTA_SHARE`` of δ, the method the rest (basic composition). Public: a function
    of the configuration only, so the pages plan each stage's ε and the forecast reads the selection's
    threshold from it alone."""
    from dpfed_core.privacy import catalogue as cat

    eps_sel = config.epsilon * cat.CATALOGUE_EPSILON_SHARE
    dlt_sel = config.delta * cat.CATALOGUE_DELTA_SHARE
    return eps_sel, dlt_sel, config.replace(epsilon=config.epsilon - eps_sel, delta=config.delta - dlt_sel)


def secure_catalogue_divisor(n_entities: int, config: RunConfig) -> float:
    """√(H − d) under secure aggregation: the catalogue's share divisor, like the method's secure sums;
    1 without it (each entity's histogram carries the full σ)."""
    if config.aggregation != "secure":
        return 1.0
    return math.sqrt(int(n_entities) - int(config.max_dropouts))


def coalition_with_catalogue(config: RunConfig, n_entities: int, method_coalition: float, ledger) -> float:
    """ε against the server colluding with every other entity of a secure run whose catalogue was selected
    federation-wide: the selection's share and the method's shares together, not the method's alone —
    the largest of the entities' (:func:`entity_coalition`, each on its own rows' ρ). Public: a function of
    the configuration, the ledger's ρ and the method's own coalition ε."""
    rhos = {e: [r.rho for r in ledger.rows if r.entity == e] for e in ledger.entities()}
    return max((entity_coalition(config, n_entities, method_coalition, rs)[0] for rs in rhos.values()),
               default=entity_coalition(config, n_entities, method_coalition, None)[0])


def entity_coalition(config: RunConfig, n_entities: int, method_coalition: float | None,
                     rhos: list[float | None] | None) -> tuple[float, float, str]:
    """``(ε, δ, composition)`` of one entity against the server colluding with every other entity of a
    secure run whose catalogue was selected federation-wide, from the ρ of every share it released
    (``rhos``: the selection's and the method's; None when unknown) and the method's own coalition ε
    (None: the selection's share alone, before any of the method's).

    Against that coalition only an entity's own noise shares protect it — each σ/√(H − d), so each
    Gaussian row's ρ times H − d. A method whose every release is such a share recording its ρ
    (``zcdp_budget``): zCDP composition of the entity's rows, the selection's included, ρ·(H − d) in
    all, converted at the run's δ (as its guarantee against the server is). Any other method, or a
    share without a ρ (a pure-ε mechanism): basic composition of the selection's coalition ε (at its own
    δ) and the method's (at the δ it was given; the two δ add up to the run's,
    :func:`secure_catalogue_budget`). The coordinator (the largest over the entities) and each site (its
    own, in its release log and against its ``max_coalition_epsilon``) state it by this one function."""
    from dpfed_core.federation.protocol import method_class
    from dpfed_core.privacy.ledger import BASIC, ZCDP
    from dpfed_core.privacy.noise import zcdp_epsilon

    method = 0.0 if method_coalition is None else float(method_coalition)
    if not (math.isfinite(float(config.epsilon)) and math.isfinite(method)):
        return math.inf, float(config.delta), BASIC
    d2 = secure_catalogue_divisor(n_entities, config) ** 2
    if getattr(method_class(config.method), "zcdp_budget", False) and rhos and all(
            r is not None and math.isfinite(r) for r in rhos):
        return zcdp_epsilon(d2 * sum(rhos), float(config.delta)), float(config.delta), ZCDP
    rho_sel, row_delta, _ = secure_catalogue_budget(config)
    # the selection alone is stated at its own δ; with the method's (whose δ is the rest), at the run's
    return (zcdp_epsilon(rho_sel * d2, row_delta) + method,
            row_delta if method_coalition is None else float(config.delta), BASIC)


def secure_catalogue_note(n_keys: int, threshold: float, sigma_sum: float, n_cols: int, n_items: int,
                          secure: bool = True, secagg_carrier: bool = False) -> str:
    """The run note of a federation-wide DP catalogue (public quantities only); ``secagg_carrier``: a
    deployment, whose shares travel through SecAgg+ whatever the trust model they are sized for."""
    from dpfed_core.privacy import catalogue as cat

    how = ("under secure aggregation" if secure else
           "without secure aggregation (each entity's noisy bucket histogram carries the full noise; the deployment "
           "carried them through SecAgg+, so the server received their sum only)" if secagg_carrier else
           "without secure aggregation (each entity released its own noisy bucket histogram, the server summed them)")
    return (f"no declared item catalogue: federation-wide DP selection {how} kept {n_keys} of "
            f"{cat.SECURE_CATALOGUE_BUCKETS} public hash buckets (noisy sum of user weights ≥ {threshold:.2f}, each "
            f"user's weights of L2 norm 1 over ≤ {cat.SECURE_CATALOGUE_MAX_ITEMS_PER_USER} buckets, σ of the sum "
            f"{sigma_sum:.3g}, {cat.SECURE_CATALOGUE_RHO_SHARE:.0%} of the zCDP budget); {n_cols} of the data's {n_items} "
            "items fall in a kept bucket (items sharing a bucket share one key); each entity maps the keys back onto "
            "the item names it holds rows for (a name it never saw is unknown to it). Declare the catalogue "
            "(items=FILE) to share every item and keep the whole budget for the method")


def selection_rows(dataset: FederatedDataset, train, config: RunConfig):
    """The rows the catalogue's selection reads: for a federated method (summable or prototype: both
    blend the federation's parts into each site's model on a local hold-out), each site's rows without
    the entries its round 2 validates on (:func:`~dpfed_core.models.blend.released_rows`, as every
    stage of its round 1), so no release of the site carries an entry its hold-out scores the
    federation on; any other method's rows as they are."""
    from dpfed_core.federation.protocol import is_summable

    if not (is_summable(config.method) or get_method(config.method).federated):
        return train
    return _ReleasedRows(train)


class _ReleasedRows:
    """Each site's released rows (:func:`~dpfed_core.models.blend.released_rows` of its training rows),
    built when the selection reads the site's block ``[sl]``: one site's copy at a time, never all."""

    def __init__(self, train) -> None:
        self.train, self.shape = train, train.shape

    def __getitem__(self, sl: slice):
        from dpfed_core.models.blend import released_rows

        return released_rows(self.train[sl])


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
    from dpfed_core.federation.summable import GRID, draws_noise_once
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import PrivacyLedger
    from dpfed_core.privacy.noise import is_simulation

    rho_sel, row_delta, cfg = secure_catalogue_budget(config)
    ledger = PrivacyLedger(config.epsilon, config.delta)
    divisor = secure_catalogue_divisor(dataset.n_entities, config)
    progress("catalogue_start", entities=dataset.n_entities)
    streams = catalogue_streams(config, dataset.n_entities)
    # a method whose shares draw each sum's noise once in production draws its catalogue's so too
    once = (config.aggregation == "secure" and draws_noise_once(config.method)
            and not any(is_simulation(r) for r in streams))
    release = cat.select_catalogue_secure(selection_rows(dataset, split.train_rows, config), dataset.entity_slices(),
                                          dataset.entity_names, dataset.item_names, rho_sel, row_delta,
                                          streams, ledger, divisor=divisor, grid=GRID, noise_once=once)
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
        result = spec.fit(dataset, split.train_rows, cfg, rng, progress, shared=shared)
        factors = result.entity_factors()
    else:
        M = release.key_matrix()
        names = np.array([f"bucket {k}" for k in release.keys], dtype=object)
        sub = dataset.merge_items(M, names, item_source="dp-selected")
        result = spec.fit(sub, merge_key_columns(split.train, M, dataset.value_max), cfg, rng, progress)
        factors = result.entity_factors().on_keys(release.item_key, dataset.n_items)
    return _on_catalogue(result, factors, config, ledger, messages, note, cols, catalogue_keys=K,
                         catalogue_item_key=release.item_key, own_items_kept=bool(spec.federated),
                         selected_across=dataset.n_entities)


def fit_on_dp_catalogue(dataset, split, config, spec, rng, progress) -> MethodResult:
    """Select the catalogue with :func:`dpfed_core.privacy.catalogue.select_catalogue` (a share of
    ε and δ, charged per entity), fit the method on those columns with the rest of the budget, and
    put the factors back on the full item axis. A federated method shares only the catalogue, and each
    site's round 2 still scores every item it has rows for with its own model; any other method
    gives the items outside the catalogue zero factors (nothing is known of them)."""
    from dpfed_core.federation.messages import SERVER, Message
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import PrivacyLedger

    if spec.federated and uses_federation_catalogue(dataset, config):
        return _fit_on_secure_catalogue(dataset, split, config, spec, rng, progress)
    eps_sel, dlt_sel, cfg = entity_catalogue_budget(config)
    ledger = PrivacyLedger(config.epsilon, config.delta)
    sel_rng = _catalogue_generator(config)
    progress("catalogue_start", entities=dataset.n_entities)
    release = cat.select_catalogue(selection_rows(dataset, split.train_rows, config), dataset.entity_slices(),
                                   dataset.entity_names, eps_sel, dlt_sel,
                                   sel_rng, ledger)
    cols = release.columns
    messages = [Message(1, name, SERVER, "DP-selected item ids", (len(ids),), int(np.asarray(ids).nbytes))
                for name, ids in release.per_entity.items()]
    messages += [Message(1, SERVER, name, "catalogue (union of released item ids)", (len(cols),),
                         int(cols.nbytes)) for name in dataset.entity_names]
    note = (f"no declared item catalogue: {len(cols)} of the data's {dataset.n_items} items selected by DP "
            f"partition selection (ε = {epsilon_that_holds(eps_sel)}, δ = {dlt_sel:.3g} per entity, an item needs a "
            f"noisy user "
            f"count ≥ {release.threshold:.0f}); declare the catalogue (items=FILE) to keep every item and "
            "the whole budget for the method")
    if len(cols) == 0:
        return _nothing_learned(dataset, split, config, spec, rng, ledger, messages,
                                note + "; no item passed the threshold")
    if spec.federated:  # shares on the selected items, each entity's round 2 on all of its own items
        shared = SharedItems.from_columns(cols, dataset.n_items, dataset.value_max)
        result = spec.fit(dataset, split.train_rows, cfg, rng, progress, shared=shared)
        factors = result.entity_factors()
    else:
        sub = dataset.select_items(cols, item_source="dp-selected")
        result = spec.fit(sub, split.train[:, cols].tocsr(), cfg, rng, progress)
        factors = result.entity_factors().on_items(cols, dataset.n_items)
    return _on_catalogue(result, factors, config, ledger, messages, note, cols, own_items_kept=bool(spec.federated),
                         **({"catalogue_item_key": shared.item_key} if spec.federated else {}))


def shares_part_of_declared(dataset: FederatedDataset, spec) -> bool:
    """A federated method on a declared catalogue that leaves some of the data's items out
    (:attr:`~dpfed_core.data.dataset.FederatedDataset.shared_columns`): the declared items are shared,
    the others stay their entities' own."""
    return bool(spec.federated) and dataset.shared_columns is not None


def declared_catalogue_note(n_declared: int, n_items: int, keeps_own: bool) -> str:
    """The run note of a declared catalogue that leaves items out (in process and deployed alike)."""
    outside = n_items - n_declared
    return (f"the declared item catalogue is what is shared: every message is shaped by its {n_declared} items, "
            f"public, at no privacy cost; the data's {outside} other "
            + ("items stay their entities' own" if outside != 1 else "item stays its entities' own")
            + ", never shared — "
            + ("each entity scores the ones it has rows for with its own model" if keeps_own else
               "this method's round 2 keeps no own model, so they score 0 (its local_blend parameter keeps them)"))


def fit_on_declared_catalogue(dataset, split, config, spec, rng, progress) -> MethodResult:
    """A federated method on a declared catalogue that leaves some of the data's items out: round 1
    and the server work on the declared items only (a public map: every site knows each declared
    name, so nothing is charged), and each entity's round 2 fits all of its own items — the
    federation's V lifted onto its declared items beside its own parts, so an item outside the
    catalogue stays scored by the entity that holds it."""
    cols = dataset.shared_columns
    shared = SharedItems.from_columns(cols, dataset.n_items, dataset.value_max, public=True)
    result = spec.fit(dataset, split.train_rows, config, rng, progress, shared=shared)
    note = declared_catalogue_note(len(cols), dataset.n_items, keeps_own_items(spec, config))
    result.extra = {**result.extra, "notes": [note, *result.extra.get("notes", [])],
                    "catalogue_item_key": shared.item_key, "catalogue_declared": True}
    return result


#: What a run on a DP-selected catalogue says when each entity keeps its own items (in process and
#: deployed alike).
OWN_ITEMS_NOTE = ("the catalogue decides only what is shared: each entity still scores every item it has rows for "
                  "with its own model")
#: ... and when the catalogue came out empty.
EMPTY_CATALOGUE_OWN_NOTE = ", so the federation shares nothing: each entity recommends from its own model alone"
EMPTY_CATALOGUE_ZERO_NOTE = ", so nothing was learned (every score is 0)"


def keeps_own_items(spec, config: RunConfig) -> bool:
    """Does the method's round 2 on a catalogue that is not the whole item axis (DP-selected, or declared
    and leaving items out; in process and deployed alike) keep each site's own parts? A prototype
    method's always does (:meth:`~dpfed_core.federation.protocol.FederatedRecommender._round2_on_known_items`);
    a summable method's with its local blend."""
    from dpfed_core.federation.protocol import build_method, is_summable

    if not spec.federated:
        return False
    if not is_summable(config.method):
        return True
    return bool(getattr(build_method(config, 1.0), "local_blend", False))


def _nothing_learned(dataset, split, config, spec, rng, ledger, messages, note: str) -> MethodResult:
    """The result of a run whose DP catalogue is empty: the federation shares nothing, so a summable
    method whose round 2 keeps each site's own parts leaves every site with them
    (:func:`~dpfed_core.federation.summable.own_round2`, the routine of round 2 and of ``local``), a
    prototype method likewise (its round 2 on a DP catalogue blends the same own parts: with nothing
    shared, each site's model is ``local``'s); any other method scores 0 everywhere. The selection's
    ledger and messages, and the note saying so. It stands in for the method's fit, so it refuses a
    parameter the method would not read as the fit would (the registry's check)."""
    from dpfed_core.federation.protocol import as_generator, build_method, is_summable
    from dpfed_core.federation.summable import own_round2
    from dpfed_core.methods.comparison import specs
    from dpfed_core.models.entity_factors import EntityFactors, LocalColumns

    specs.check_parameters_used(config)

    ledger.simulation = bool(config.simulation)
    empty = {"catalogue": np.zeros(0, dtype=np.int64)}
    if spec.federated and is_summable(config.method):
        method = build_method(config, dataset.value_max)
        method.set_public_inputs(item_features=getattr(dataset, "item_features", None))
        rngs = as_generator(rng).spawn(dataset.n_entities + 1)  # each entity's stream, as the estimator's
        local = []
        for h, sl in enumerate(dataset.entity_slices()):
            own = own_round2(method, split.train_rows[sl], config.lam, config.mode, rngs[h])
            local.append(None if own is None else LocalColumns.from_dense(*own))
        if any(loc is not None for loc in local):
            factors = EntityFactors(np.zeros((dataset.n_users, 0)), np.zeros((dataset.n_items, 0)),
                                    dataset.entity_slices(), local)
            return MethodResult(factors.U, factors.V, ledger, messages, {"catalogue": 0.0}, factors=factors,
                                extra={"notes": [note + EMPTY_CATALOGUE_OWN_NOTE], **empty})
    elif spec.federated:  # a prototype method: each site's own model, fitted as ``local`` fits it
        own = get_method("local").fit(dataset, split.train_rows, config.replace(method="local"), rng, no_progress)
        return MethodResult(own.factors.U, own.factors.V, ledger, messages, {"catalogue": 0.0}, factors=own.factors,
                            extra={"notes": [note + EMPTY_CATALOGUE_OWN_NOTE], **empty})
    width = max(int(config.rank), 1)
    return MethodResult(np.zeros((dataset.n_users, width)), np.zeros((dataset.n_items, width)), ledger, messages,
                        {"catalogue": 0.0}, extra={"notes": [note + EMPTY_CATALOGUE_ZERO_NOTE], **empty})


def _on_catalogue(result: MethodResult, factors, config, ledger, messages, note: str, cols: np.ndarray,
                  selected_across: int | None = None, **extra) -> MethodResult:
    """The method's result on the selected catalogue, put back on the data's item axis (``factors``):
    the selection's ledger rows first, then the method's (every field, the sampler label included), the
    selection's messages first, its note first. ``selected_across``: the number of entities whose
    shares formed a federation-wide selection (None: each entity selected its own)."""
    for r in result.ledger.rows:
        ledger.spend(**asdict(r))
    ledger.simulation = bool(getattr(result.ledger, "simulation", False) or config.simulation)
    trust = result.extra.get("trust")
    if trust:  # both guarantees are the whole run's (the selection's rows included)
        eps, dlt = ledger.guarantee()
        trust = {**trust, "against_server": {"epsilon": eps, "delta": dlt}}
        coalition = trust.get("against_server_and_other_entities") or {}
        if trust.get("aggregation") != "secure":
            trust["against_server_and_other_entities"] = {"epsilon": eps, "delta": dlt}
        else:  # a secure run always selects federation-wide: per-entity selection happens only below 2
            # entities beyond the dropouts, where a summable method refuses a secure sum
            trust["against_server_and_other_entities"] = {
                "epsilon": coalition_with_catalogue(config, selected_across, coalition.get("epsilon", math.inf), ledger),
                "delta": dlt, **({"as_deployed": True} if coalition.get("as_deployed") else {})}
        if trust.get("aggregation") == "secure":
            from dpfed_core.federation.summable import share_grid_steps
            from dpfed_core.federation.summable_protocol import rounding_key, rounding_record

            # the selection's shares are rounded before their sum too: the fewest steps of either (where each
            # sum's noise was drawn once, only the noisy sum was rounded here: what a deployment would round)
            key = rounding_key(trust)
            steps = min(share_grid_steps([r for r in ledger.rows if r.stage == "catalogue"],
                                         secure_catalogue_divisor(selected_across, config)),
                        (trust.get(key) or {}).get("grid_steps", math.inf))
            if math.isfinite(steps):
                trust[key] = rounding_record(steps, len(ledger.entities()), eps, dlt)
        result.extra = {**result.extra, "trust": trust}
    result.factors = factors
    result.U, result.V = factors.U, factors.V
    result.ledger = ledger
    result.messages = messages + list(result.messages)
    if extra.get("own_items_kept") and keeps_own_items(get_method(config.method), config):
        note += "; " + OWN_ITEMS_NOTE
    result.extra = {**result.extra, "notes": [note, *result.extra.get("notes", [])], "catalogue": cols, **extra}
    return result
