"""Runs, comparisons and privacy–utility sweeps, and the JSON result document of SPEC §7.

Result document of one run::

    {"config": {...}, "dataset": {...}, "method": {...},
     "entities": [{"name", "n_users", "n_test_users", "train_rmse", "test_rmse", "mar",
                   "precision_at_10", "recall_at_10", "ndcg_at_10"}, ...],
     "overall": {...same keys...},
     "privacy": {"epsilon", "delta", "private", "label", "requested_epsilon", "requested_delta",
                 "ledger": [rows], "per_stage": [rows]},
     "messages": [{"round", "sender", "receiver", "content", "shape", "bytes", "copies"}],
     "timings": {stage: seconds}}

``inf`` is written as the string ``"inf"`` and NaN as ``null`` so the file is strict JSON.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from dpfed_core import __version__
from dpfed_core.config import RunConfig
from dpfed_core.privacy.ledger import delta_warning
from dpfed_core.privacy.model import PrivacyModel
from dpfed_core.privacy.noise import SIMULATION_LABEL, method_generator, noise_provenance
from dpfed_core.privacy.statement import (UNSTATED_SAMPLER, GUARANTEE_NAME, assumptions, entity_assumptions,
                                          epsilon_that_holds, statement)
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import validate_budget
from dpfed_core.data.atomic import atomic_write
from dpfed_core.methods import MethodResult, get_method
from dpfed_core.evaluation.metrics import evaluate
from dpfed_core.data.split import Split, entity_test_quota, split_users
from dpfed_core.evaluation.catalogue_run import (fit_on_declared_catalogue, fit_on_dp_catalogue, needs_dp_catalogue,
                                                 shares_part_of_declared)

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
        label = f"({epsilon_that_holds(eps)}, {dlt:.3g})-DP per user of each entity (user-level, parallel over entities)"
    else:
        # Another system's guarantee (e.g. rating-level DP at a trusted curator): say what it is.
        label = f"ε = {epsilon_that_holds(eps)}, δ = {dlt:.3g} — {label or privacy_model.label}"
    simulation = bool(config.simulation) and uses_epsilon
    if simulation:
        label = f"{SIMULATION_LABEL} — as configured: {label}"
    summary = {
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
    if "trust" in summary:
        from dpfed_core.federation.summable_protocol import rounding_warning

        w = rounding_warning(summary["trust"])
        if w:
            summary["warnings"].append(w)
    return summary


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
        "item_source": getattr(dataset, "item_source", "data"),
        **({"n_declared": int(dataset.n_declared)} if dataset.shared_columns is not None else {}),
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


def has_secure_sum(config: RunConfig) -> bool:
    """Whether the run's releases are summed securely (a summable method under secure aggregation): the
    only runs ``max_dropouts`` applies to."""
    from dpfed_core.federation.protocol import is_summable

    return is_summable(config.method) and config.aggregation == "secure"


def unused_settings_dropped(config: RunConfig) -> RunConfig:
    """``config`` as its method runs and records it: a setting the method has no use for (inherited from
    the run it is compared with) at its neutral value — no weighting for a method that sends no
    prototypes, no dropouts for a method without a secure sum."""
    if not get_method(config.method).uses_k and config.server_weighting != "none":
        config = config.replace(server_weighting="none")
    if config.max_dropouts and not has_secure_sum(config):
        config = config.replace(max_dropouts=0)
    return config


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
    config = unused_settings_dropped(config)
    progress = progress or _noop
    t0 = time.perf_counter()
    split = make_split(dataset, config) if split is None else split
    t_split = time.perf_counter() - t0
    rng = method_generator(config.seed, private=spec.uses_epsilon, simulation=config.simulation)
    t0 = time.perf_counter()
    # user-level federated DP only: a trusted-curator method (Friedman et al.) sees the pooled data by
    # design and states its own, different guarantee
    if needs_dp_catalogue(dataset, spec.privacy_model.user_level, config):
        result = fit_on_dp_catalogue(dataset, split, config, spec, rng, progress)
    elif shares_part_of_declared(dataset, spec):
        result = fit_on_declared_catalogue(dataset, split, config, spec, rng, progress)
    else:
        # a method that reads its training data a site's block at a time gets the split's rows, so
        # the run holds the data set's matrix once (not it and a whole training copy beside it)
        result = spec.fit(dataset, split.train_rows if spec.site_rows else split.train, config, rng, progress)
    t_fit = time.perf_counter() - t0
    progress("evaluate_start", method=config.method)
    t0 = time.perf_counter()
    metrics = evaluate(result.entity_factors(), None, split.train_rows, split.test, split.test_users,
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
    "param"}``; the CLI prints them, the dashboard shows a banner — never a plain success. In observed
    mode a chance ranking is ``observed-ranking``: said, but not a run that learned nothing (the model
    was not trained to rank the items a user chose)."""
    from dpfed_core.evaluation.catalogue_run import keeps_own_items

    out = []
    cat_cols = result.extra.get("catalogue")
    if cat_cols is not None and len(cat_cols) == 0:
        # the method's rule (as the run's note states it), the same in process and deployed: whether
        # its round 2 keeps each entity's own parts — not whether the result has columns, which a
        # method that keeps none still has (all zero) for items outside the shared keys
        own = keeps_own_items(spec, config)
        out.append({"code": "empty-catalogue", "param": "items",
                    "text": "no item passed the DP catalogue selection, so the federation shared nothing"
                            + (" (each entity recommends from its own model alone)" if own else
                               " and nothing was learned")
                            + ": " + _either(["declare the item catalogue (items=FILE, a formulary)",
                                              *_chance_hints(config, spec, False)])})
    mar = metrics["overall"].get("mar")
    chance = mar is not None and math.isfinite(mar) and mar >= 0.5 - CHANCE_MAR_MARGIN and not out
    if chance and config.mode == "observed":
        # an observed-mode model fits the values of the entries it observed, not which items a user chose:
        # its MAR ranks what it was not trained to rank, so a chance MAR is no sign that it learned nothing
        out.append({"code": "observed-ranking", "param": "mode",
                    "text": f"the ranking is no better than chance (MAR {mar:.3f}; 0.5 = random order), which in "
                            "observed mode does not show that nothing was learned: the model fits the values of "
                            "the entries it observed, not which items a user chose. Judge it by its test RMSE, or "
                            "compare rankings in zero mode (mode=zero)"})
    elif chance:
        hints = _chance_hints(config, spec, cat_cols is not None)
        out.append({"code": "chance-ranking", "param": "epsilon" if hints and hints[0] == RAISE_EPSILON else None,
                    "text": f"the ranking is no better than chance (MAR {mar:.3f}; 0.5 = random order): "
                            + (_either(hints) if hints else
                               ("no noise was added (ε = ∞), so " if spec.uses_epsilon else "")
                               + "check the data and the method")})
    # a declared entity without users has nothing to hold out: no n_hidden or test_fraction gives it a test user
    userless = [e["name"] for e in metrics["entities"] if e.get("n_users") == 0]
    if userless:
        out.append({"code": "no-users", "param": None,
                    "text": f"{len(userless)} declared entit{'y has' if len(userless) == 1 else 'ies have'} no users "
                            f"in the data, so there is nothing to evaluate there (not a win): {_first_five(userless)}"})
    empty = [e["name"] for e in metrics["entities"] if e.get("n_users") != 0 and not e.get("n_test_users")]
    if empty:
        shown = _first_five(empty)
        fix, param = _test_user_fix(dataset, config, empty)
        out.append({"code": "no-test-users", "param": param,
                    "text": f"{len(empty)} entit{'y has' if len(empty) == 1 else 'ies have'} no test users, so "
                            f"their metrics are undefined (not a win): {shown}. A test user needs more than "
                            f"n_hidden = {config.n_hidden} entries, and test_fraction = {config.test_fraction:g} of "
                            f"an entity's users are drawn from those: {fix}"})
    return out


def _test_user_fix(dataset: FederatedDataset, config: RunConfig, names: list) -> tuple[str, str]:
    """The setting that gives these entities test users, and its parameter: ``n_hidden`` where no user
    of an entity holds more entries than it (no fraction can draw one), ``test_fraction`` where the
    fraction of an entity's users rounds to none; both named when entities of each kind are among
    them, the generic pair when the data does not say (the split's rule: :func:`split.n_test_users`)."""
    index = {str(n): i for i, n in enumerate(dataset.entity_names)}
    rows = [index.get(str(n)) for n in names]
    if any(r is None for r in rows) or not dataset.n_users:
        return "lower n_hidden when their users hold fewer, or raise test_fraction", "test_fraction"
    ent = np.asarray(dataset.entity_of_user, dtype=np.int64)
    lengths = np.diff(dataset.X.tocsr().indptr)
    eligible, _ = entity_test_quota(lengths, ent, config.test_fraction, config.n_hidden, len(dataset.entity_names))
    sizes = np.bincount(ent, minlength=eligible.size)
    longest = np.zeros(eligible.size, dtype=np.int64)
    np.maximum.at(longest, ent, lengths)
    few_entries = [r for r in rows if eligible[r] == 0]
    few_users = [r for r in rows if eligible[r] > 0]
    fixes, param = [], "test_fraction"
    if few_entries:
        most = int(longest[few_entries].max())
        which = "" if not few_users else (f" for the {len(few_entries)} whose users all hold {config.n_hidden} "
                                          "entries or fewer")
        fixes.append(f"lower n_hidden to at most {most - 1}{which}" if most > 1 else
                     f"no user holds more than one entry{which}, so none can be hidden for a test")
        param = "n_hidden" if not few_users else param
    if few_users:
        # np.rint rounds half to even: a fraction f draws a user from s users when f·s > 0.5
        need = 0.5 / int(sizes[few_users].min())
        which = "" if not few_entries else f" for the {len(few_users)} whose users are too few for the fraction"
        fixes.append(f"raise test_fraction above {need:.2g}{which}")
    return " and ".join(fixes), param


def _first_five(names: list) -> str:
    """'a, b, c, d, e and 2 more': the first five names of a list, and how many it leaves out."""
    return ", ".join(map(str, names[:5])) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _either(options: list[str]) -> str:
    """'a', 'a or b', 'a, b, or c'."""
    if len(options) <= 1:
        return "".join(options)
    return ", ".join(options[:-1]) + (", or " if len(options) > 2 else " or ") + options[-1]


#: The first remedy of a DP run's chance ranking. Each remedy names its setting as ``name=VALUE`` (a
#: placeholder in capitals where the user picks the value): the CLI renders it as its flag, the dashboard
#: as its control, so the message names each fix once, in the front end's own words.
RAISE_EPSILON = "raise ε (epsilon=EPSILON)"


def _chance_hints(config: RunConfig, spec, dp_catalogue: bool) -> list[str]:
    """The controls that can lift a DP run's ranking above chance, in the order worth trying: more ε
    (while ε is finite), secure aggregation (a summable method run without it), a declared catalogue
    (when the run selected one by DP). None for a non-private method or at ε = ∞: no noise to blame."""
    from dpfed_core.federation.protocol import is_summable

    if not spec.uses_epsilon or not math.isfinite(config.epsilon):
        return []
    hints = [RAISE_EPSILON]
    if is_summable(config.method) and config.aggregation != "secure":
        hints.append("use secure aggregation (aggregation=secure)")
    if dp_catalogue:
        hints.append("declare the item catalogue (items=FILE)")
    return hints


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
            "(one entity per line), or accept reading it from the data with entities_from_data — membership of "
            "an entity is then not protected", param="entities")


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


def job_key(method: str, epsilon: float, seed: int, swept: str) -> tuple:
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
    data_key: str | None = None,
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
    data_key : the name of the data's account in the budget store the sweep is charged to
        (``BudgetOdometer.account_key``), kept in the document so a resume is checked against the data's
        content; None (no store) keeps none, and a resume is checked by the data's name and size.
    """
    epsilons, seeds = check_sweep_grid(config, epsilons, seeds)
    references = DEFAULT_REFERENCES if references is None else references
    spec = get_method(config.method)
    if not spec.uses_epsilon:
        epsilons_run = [math.inf]
    else:
        epsilons_run = epsilons
    identity = sweep_identity(dataset, config, epsilons, seeds, references, data_key)
    references = identity["references"]  # each once, the swept method left out: the one rule
    for r in references:
        get_method(r)
    doc = {
        **identity,
        "epsilons": epsilons_run,
        "runs": [],
        "complete": False,
        "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    done_keys: set = set()
    if resume is not None:
        doc["runs"] = _resumable_runs(resume, doc, config.method)
        done_keys = {job_key(r["method"], r["epsilon"], r["seed"], config.method) for r in doc["runs"]}
    total = len(seeds) * len(sweep_jobs(config.method, epsilons, references))
    done = len(doc["runs"])
    progress = progress or _noop
    for seed in seeds:
        cfg_seed = config.replace(seed=seed)
        jobs = sweep_jobs(config.method, epsilons, references)
        jobs = [(m, e) for m, e in jobs if job_key(m, e, seed, config.method) not in done_keys]
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
                "privacy": {**{k: run_doc["privacy"][k] for k in ("epsilon", "delta", "private", "label")},
                            # shares rounded before a secure sum: whether this point's ε is proved; where
                            # each sum's noise was drawn once, how, and what a deployment would round
                            **{k: v for k, v in run_doc["privacy"].get("trust", {}).items()
                               if k in ("rounding", "rounding_as_deployed", "noise")}},
                "timings": run_doc["timings"],
            })
            done += 1
            progress("sweep_step", done=done, total=total, method=method, epsilon=eps, seed=seed)
            if checkpoint is not None and done < total:
                checkpoint(doc)
    # keep the grid order (seed, then ε, then references) whatever order points were finished in
    order = {(m, e, s): i for i, (m, e, s) in enumerate(
        job_key(m, e, s, config.method) for s in seeds
        for m, e in sweep_jobs(config.method, epsilons, references))}
    doc["runs"].sort(key=lambda r: order.get(job_key(r["method"], r["epsilon"], r["seed"], config.method), 0))
    doc["complete"] = True
    return doc


def sweep_identity(dataset: FederatedDataset, config: RunConfig, grid: list, seeds: list, references: list,
                   data_key: str | None = None) -> dict:
    """What a sweep document to resume must share with the sweep (:func:`_resumable_runs`): its settings,
    its points and its data — by the name of the data's account in the budget store (its content key under
    the store's secret, never the content key itself, which would tell whoever holds the document and the
    other rows who is in the data), so a resumed sweep continues on the same data whatever its file is
    called, and never on other data of the same name and size."""
    out = {"config": config.to_dict(), "dataset": dataset_summary(dataset), "grid": grid, "seeds": seeds,
           "references": [r for r in dict.fromkeys(references) if r != config.method]}
    if data_key is not None:
        out["data_key"] = data_key
    return out


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
    old_key, new_key = previous.get("data_key"), doc.get("data_key")
    if isinstance(old_key, str) and old_key.startswith("dk-") and new_key is not None:
        # by content, named in the store: a copy under another name is the same data, other values are not
        if old_key != new_key:
            raise ConfigError("the sweep document to resume was written for other data: "
                              f"{old_ds.get('name')!r} there, {new_ds.get('name')!r} here, and their contents "
                              "differ (users, items, entities or values) — or it was charged to another budget "
                              "store, which names the same data otherwise; load the data it was written for "
                              "(data=…), use its store (store=…), or start a new sweep", param="resume")
    elif old_ds != new_ds:  # a document written before sweeps kept their data's content key
        raise ConfigError("the sweep document to resume was written for other data "
                          f"({old_ds.get('name')!r}, {old_ds.get('n_users')} users); load the same data (data=…)",
                          param="resume")
    # the points a resumed sweep keeps are its own: another grid, seed list or reference list would
    # drop finished (and charged) points without a word, or keep none of them
    what = {"grid": ("ε grid", "epsilons", float), "seeds": ("seeds", "seeds", int),
            "references": ("references", "references", str)}
    differ = []
    for field, (words, flag, cast) in what.items():
        if field not in previous:
            continue
        try:
            old_v = sorted({cast(x) for x in previous[field]})
        except (TypeError, ValueError):
            raise ConfigError(f"the sweep document to resume has a malformed {words} list; start a new sweep",
                              param="resume") from None
        new_v = sorted({cast(x) for x in doc[field]})
        if old_v != new_v:
            differ.append(f"{words} {json_safe(old_v)} there, {json_safe(new_v)} here ({flag})")
    if differ:
        raise ConfigError("the sweep document to resume was written by a sweep of other points: "
                          + "; ".join(differ) + "; resume with the same flags, or start a new sweep", param="resume")
    wanted = {job_key(m, e, s, swept) for s in doc["seeds"]
              for m, e in sweep_jobs(swept, doc["grid"], doc["references"])}
    runs, seen = [], set()
    for r in previous["runs"]:
        try:
            key = job_key(str(r["method"]), float(r["epsilon"]), int(r["seed"]), swept)
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
    """Mean ± sd over seeds of ``metric`` (overall) per (method, ε), and ``n`` the seeds it is over: those
    with a defined value (a seed whose split gave no test user has none). The sd of fewer than two finite
    values is NaN: one seed has no spread, and 0 would read as "no noise"."""
    groups: dict[tuple[str, float], list[float]] = {}
    for r in sweep_doc["runs"]:
        groups.setdefault((r["method"], float(r["epsilon"])), []).append(r["overall"][metric])
    rows = []
    for (method, eps), vals in groups.items():
        v = np.asarray([math.nan if x is None else x for x in vals], dtype=float)
        v = v[np.isfinite(v)]
        rows.append({"method": method, "epsilon": eps, "metric": metric,
                     "mean": float(v.mean()) if v.size else math.nan,
                     "sd": float(v.std(ddof=1)) if v.size > 1 else math.nan, "n": int(v.size)})
    return rows


#: Metrics whose crossing is meaningful only in ``observed`` mode: in ``zero`` mode every absent cell
#: is a 0 target, so RMSE on the hidden (non-zero) entries rewards inflated predictions, not a useful
#: model (SPEC §1: ranking quality is the headline metric there).
RMSE_METRICS = {"train_rmse", "test_rmse"}

#: A ranking no better than chance has MAR 0.5. A crossing is reported only where the swept method's
#: mean MAR plus one sd stays below this at every ε from the crossing on, so that "beats individual"
#: is never claimed for a method whose ranking is random (a ranking model's check: see crossing_report
#: for observed mode).
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
    from the crossing on — an RMSE crossing too (shrinkage alone beats an entity's own factors on RMSE).
    In ``observed`` mode the models fit observed values, not which items a user chose: a ranking crossing
    that the check would move is not reported (``meaningful`` False, the text says why and what to
    compare instead).

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
    seeds = {r.get("seed") for r in sweep_doc.get("runs", []) if r["method"] == method}
    if len(seeds) < 2:
        out["meaningful"] = False
        out["text"] = (f"not reported: {len(seeds)} seed{'' if len(seeds) == 1 else 's'} of {method} — one seed has "
                       "no spread over seeds, so a crossing could not be told from noise; run two or more seeds")
        return out
    if not any(r["method"] == baseline for r in sweep_doc.get("runs", [])):
        raise ConfigError(f"the sweep has no {baseline!r} runs to compare with; add it to references=…",
                          param="references")
    effects = paired_effects(sweep_doc, method, baseline, metric)
    if not effects:
        out["meaningful"] = False
        out["text"] = (f"not reported: no seed has a defined {metric} for both {method} and {baseline} "
                       "(e.g. no test users), so there is nothing to compare")
        return out
    mar = {r["epsilon"]: (r["mean"], r["sd"]) for r in sweep_table(sweep_doc, "mar") if r["method"] == method} \
        if sweep_doc.get("runs") and "mar" in sweep_doc["runs"][0]["overall"] else {}

    def ok(e) -> bool:
        # an RMSE gain is held to the ranking too: a model that ranks at random can still beat an entity's
        # own factors on RMSE by shrinkage alone (a random V does), which says nothing about what was released
        mm, sd = mar.get(e["epsilon"], (0.0, 0.0))
        return e["state"] == "beats" and bool(mm + (sd if np.isfinite(sd) else 0.0) < RANDOM_MAR)

    crossing = None
    for e in reversed(effects):
        if not ok(e):
            break
        crossing = e["epsilon"]
    out["epsilon"] = crossing
    out["effects"] = effects
    at = next((e for e in effects if e["epsilon"] == crossing), None) if crossing is not None else \
        next((e for e in reversed(effects) if math.isfinite(e["epsilon"])), effects[-1])
    out["effect"] = at
    if mode == "observed" and metric not in RMSE_METRICS and _chance_decides(effects, crossing):
        # in observed mode a chance ranking is no sign that nothing was learned, so the crossing it moved
        # is neither stated nor denied
        out["epsilon"] = None
        out["meaningful"] = False
        where = max(e["epsilon"] for e in effects if e["state"] == "beats" and not ok(e))
        out["text"] = (f"cannot be stated: at ε = {where:g} {method} beats {baseline} on {metric} but ranks no better "
                       f"than chance (MAR + sd ≥ {RANDOM_MAR}), and in observed mode that does not show that nothing was "
                       "learned — the models fit the values of the entries they observed, not which items a user "
                       "chose. Compare rankings in zero mode (mode=zero); an RMSE crossing is held to the same "
                       "check")
    else:
        out.update(_crossing_text(method, baseline, metric, crossing, at,
                                  chance=at is not None and at["state"] == "beats" and not ok(at),
                                  secure=sweep_doc["config"].get("aggregation") == "secure",
                                  noiseless=math.isinf(effects[-1]["epsilon"])))
    out["text"] += f" [{MODE_WORDS.get(mode, mode + ' mode')}]"
    return out


def _chance_decides(effects: list[dict], crossing: float | None) -> bool:
    """Whether the chance check moved the crossing: the ε from which every grid point beats the baseline,
    counted without it, is not ``crossing``."""
    beaten = None
    for e in reversed(effects):
        if e["state"] != "beats":
            break
        beaten = e["epsilon"]
    return beaten != crossing


def paired_effects(sweep_doc: dict, method: str, baseline: str, metric: str) -> list[dict]:
    """Per ε of ``method`` (ascending): its gain over ``baseline`` paired by seed (the baseline at the
    same ε when it was swept too, else its one run per seed), as ``{"epsilon", "mean", "sd", "n",
    "state"}`` — gain > 0 means ``method`` is better (lower for RMSE, higher for the ranking metrics
    other than MAR, lower MAR); ``sd`` over the seeds' paired gains; ``state`` "beats" when the mean is
    beyond its sd, "worse" when it is beyond it the other way, else "inconclusive" (one seed included:
    no spread, nothing can be told)."""
    runs = sweep_doc.get("runs", [])
    base: dict[tuple, float] = {}
    for r in runs:
        if r["method"] == baseline:
            base[(float(r["epsilon"]), r.get("seed"))] = r["overall"].get(metric, math.nan)
    if not base:
        return []
    swept_base = len({e for e, _ in base}) > 1
    lower = metric in LOWER_IS_BETTER
    gains: dict[float, list[float]] = {}
    for r in runs:
        if r["method"] != method:
            continue
        e = float(r["epsilon"])
        key = (e, r.get("seed")) if swept_base else next(((b, s) for b, s in base if s == r.get("seed")), None)
        b = base.get(key) if key is not None else None
        m = r["overall"].get(metric, math.nan)
        if b is None or not (np.isfinite(m) and np.isfinite(b)):
            continue
        gains.setdefault(e, []).append(float(b - m) if lower else float(m - b))
    out = []
    for e in sorted(gains):
        g = np.asarray(gains[e], dtype=float)
        mean = float(g.mean())
        sd = float(g.std(ddof=1)) if g.size > 1 else math.nan
        state = ("inconclusive" if not (g.size > 1 and abs(mean) > sd)
                 else "beats" if mean > 0 else "worse")
        out.append({"epsilon": e, "mean": mean, "sd": sd, "n": int(g.size), "state": state})
    return out


def effect_phrase(effect: dict, metric: str, label: str | None = None) -> str:
    """"MAR lower by 0.0012 ± 0.0004 over 3 seeds" — a paired gain and its spread, in the metric's words
    (``label``: the metric's name to print, ``metric`` its key)."""
    lower = metric in LOWER_IS_BETTER
    better = "lower" if lower else "higher"
    worse = "higher" if lower else "lower"
    g = effect["mean"]
    sd = "no spread (one seed)" if not np.isfinite(effect["sd"]) else f"± {effect['sd']:.2g}"
    word = better if g >= 0 else worse
    return f"{label or metric} {word} by {abs(g):.2g} {sd} over {effect['n']} seed{'s' if effect['n'] != 1 else ''}"


def _crossing_text(method: str, baseline: str, metric: str, crossing: float | None, effect: dict | None,
                   chance: bool = False, secure: bool = True, noiseless: bool = False) -> dict:
    """``secure``: the sweep ran with secure aggregation (so it is no remedy to name); ``noiseless``: the
    grid's non-private point (ε = ∞) was swept and does not cross (so more ε is no remedy)."""
    out: dict = {}
    at = "" if effect is None else f" (at ε = {effect['epsilon']:g}: {effect_phrase(effect, metric)}, paired by seed)"
    if crossing is None:
        if effect is not None and chance:
            from dpfed_core.federation.protocol import is_summable

            # less noise is the remedy, unless the noiseless point does not cross either
            fixes = [] if noiseless else ["sweep larger ε (epsilons=EPSILONS)"] + (
                ["use secure aggregation (aggregation=secure)"] if is_summable(method) and not secure else [])
            out["text"] = (f"none in the grid: at ε = {effect['epsilon']:g} {method} beats {baseline} on {metric} "
                           f"({effect_phrase(effect, metric)}, paired by seed), but its ranking is no better than "
                           f"chance there, MAR + sd ≥ {RANDOM_MAR}"
                           + (" — and the non-private point (ε = ∞) does not cross either, so more ε cannot help"
                              if noiseless else "")
                           + (f": {_either(fixes)}" if fixes else "; check the data and the method"))
        elif effect is not None and effect["state"] == "inconclusive":
            out["text"] = (f"inconclusive in the grid: at the largest ε the difference between {method} and "
                           f"{baseline} on {metric} is inside its spread over seeds{at}")
        else:
            out["text"] = f"none in the grid: {method} does not beat {baseline} on {metric} at the largest ε{at}"
    elif math.isinf(crossing):
        out["text"] = (f"none at finite ε: only the non-private point (ε = ∞) beats {baseline} on {metric}{at}")
    else:
        out["text"] = (f"ε = {crossing:g}: from here on every grid point of {method} beats {baseline} on {metric} "
                       f"(the paired difference over seeds beyond its sd), with a better-than-chance ranking "
                       f"(MAR + sd < {RANDOM_MAR}){at}")
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
        noise = max(r["sd"], ref["sd"])  # NaN (one seed): no spread to judge by
        verdict = ("inconclusive" if not abs(diff) > noise
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
