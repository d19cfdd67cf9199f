"""The dashboard's engine facade: the pages call ``dash.<name>`` and find it here.

Split by job: verdicts and crossings live in :mod:`dpfed_core.evaluation.verdicts`
(the CLI and the HTML report say the same thing), upload parsing in :mod:`dpfed_core.data.upload`,
and the dashboard's own helpers in :mod:`~dpfed_core.ui.catalogue` (methods), :mod:`~dpfed_core.ui.inputs`
(ε, δ, grids, error messages), :mod:`~dpfed_core.ui.datasets` (the loaded data and cache keys),
:mod:`~dpfed_core.ui.tables` (results as tables) and :mod:`~dpfed_core.ui.defaults` (defaults and advice
from the measured benchmark). This module re-exports them and keeps the views of a fitted model's
factors. Nothing here computes a model: runs go through :func:`dpfed_core.evaluation.experiments.run_method`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.data.upload import (ATTRIBUTE_TYPES, ENTITY_LIST_TYPES, LONG_TABLE_TYPES,  # noqa: F401
                                    known_format)
from dpfed_core.data.upload import (attribute_column_name, bound_rule_text, guess_attribute_user,  # noqa: F401
                                    guess_column, guess_mapping, headerless, join_user_attributes,
                                    mapping_problems, source_column_name, upload_columns,
                                    wide_item_columns)
from dpfed_core.ui.upload import mappable_columns, read_upload  # noqa: F401  (the file's own header names)
from dpfed_core.evaluation.planner import epsilon_for_utility, users_to_pay, users_to_pay_sentence  # noqa: F401
from dpfed_core.evaluation.verdicts import (BASELINE_NAMES, METRIC_SHORT, REFERENCE, TIE_FRACTION,  # noqa: F401
                                            VERDICT_BASELINES, better_word, compare_one, crossing,
                                            crossing_epsilon, crossing_lines, entity_verdict, format_epsilon, is_defined, pays_from_sentence, sweep_entity_verdict,
                                            sweep_verdict_sentence, unproved_sweep_text, verdict_sentence,
                                            verdict_word)
from dpfed_core.federation.protocol import check_list_length, user_row
from dpfed_core.methods import MethodResult
from dpfed_core.privacy.noise import SIMULATION_LABEL  # noqa: F401
from dpfed_core.ui.catalogue import (AGGREGATION_HELP, BASE_REFERENCES, DP_METHOD, PLAN_TO_LEDGER,  # noqa: F401
                                     budget_plans, budget_split_defaults, default_method,
                                     ensure_methods_registered, federated_methods, is_summable, k_note,
                                     label_of, ledger_stage_name, method_catalogue, method_parameters,
                                     parameter_value, plan_captions, privacy_of)
from dpfed_core.ui.datasets import (DEFAULT_SAMPLE, SAMPLES, SMALL_ENTITY_USERS, config_key,  # noqa: F401
                                    dataset_fingerprint, dataset_overview, entity_table, generic_key,
                                    is_event_data, run_key, small_entity_warning, split_for, sweep_key)
from dpfed_core.ui.defaults import (advice_text, default_config, measured_defaults,  # noqa: F401
                                    param_widget, settings_line, settings_not_loaded, widget_state,
                                    CONTROL_RANGES)
from dpfed_core.evaluation.defaults import cli_command, observed_ranking_note, sweep_command, sweep_mode, trust_model_note, with_method  # noqa: F401
from dpfed_core.data.long_table import DUPLICATE_WORDS, fixed_duplicate_rule  # noqa: F401


from dpfed_core.evaluation.cost import sweep_configs  # noqa: F401,E402
from dpfed_core.evaluation.service import no_test_users_warning  # noqa: F401,E402


def clock_for(dataset: FederatedDataset, configs: list):
    """The cost model's clock of these runs on the loaded data (stage and time left while they run)."""
    from dpfed_core.evaluation.cost import clock_for_runs, run_shapes

    return clock_for_runs(run_shapes(dataset, list(configs)), list(configs))


def predicted_seconds(dataset: FederatedDataset, configs: list) -> float | None:
    """Predicted seconds of these runs one after the other on the loaded data (None: not measured)."""
    from dpfed_core.evaluation.cost import predict_runs, run_shapes

    return predict_runs(run_shapes(dataset, list(configs)), list(configs))


def estimate_line(dataset: FederatedDataset, configs: list) -> str:
    """"about 12 s (predicted for 4 runs on these 2,394 users × 143 items in 30 entities)"."""
    from dpfed_core.evaluation.cost import estimate_with_load, speed_note

    n = len(list(configs))
    t = predicted_seconds(dataset, configs)
    if t is None:
        return "duration not predicted: a method here was not measured (bench/bench_cost_model.py)"
    scaled = speed_note()
    return (f"{estimate_with_load(t)}; predicted for {n} run{'s' if n != 1 else ''} on these {dataset.n_users:,} "
            f"users × {dataset.n_items:,} items in {dataset.n_entities} entities, from measured runs"
            f"{', ' + scaled if scaled else ''}")


def check_user(dataset: FederatedDataset, entity: str, user: str) -> None:
    """A typed user id that is not one of ``entity``'s: one error naming the control that fixes it — the
    entity that holds it (“Entity”), else the list of this entity's users."""
    h = dataset.entity_index(entity)
    sl = dataset.entity_slices()[h]
    ids = np.asarray(dataset.user_ids, dtype=str)
    if (ids[sl] == str(user)).any():
        return
    hits = np.flatnonzero(ids == str(user))
    if hits.size:
        other = dataset.entity_names[int(dataset.entity_of_user[hits[0]])]
        raise ConfigError(f"the user with id {user!r} is in entity {other!r}, not in {entity!r}: choose {other!r} "
                          "in “Entity”")
    # "user" names the row's role, not what it is (a patient, a stay): the id is what the reader typed
    raise ConfigError(f"no user with id {user!r} in entity {entity!r} (nor in any other): choose one from the "
                      "list or type an id of this entity")


def audit_estimate_line(dataset: FederatedDataset, entity: str, *, methods: list[str], epsilons: list[float],
                        targets: list[str], runs: int, k: int, attacks: list[str], with_v: bool, rank: int, lam: float,
                        delta: float, prototype_params: dict | None, aggregation: str, max_dropouts: int) -> str:
    """"Expected time: about 2 min (…)" of an audit before it runs, timed on synthetic data of the
    entity's shape (:func:`dpfed_core.audit.cost.estimate_audit_seconds`)."""
    from dpfed_core.audit.cost import estimate_for_entity, estimate_phrase

    est = estimate_for_entity(dataset, entity, methods=methods, epsilons=epsilons, n_targets=len(targets), runs=runs,
                              k=k, attacks=attacks, with_v=with_v, rank=rank, lam=lam, delta=delta,
                              prototype_params=prototype_params, aggregation=aggregation, max_dropouts=max_dropouts,
                              target=targets[0] if targets else "typical")
    return f"Expected time: {estimate_phrase(est, runs)}"


def epsilon_below_request(doc: dict) -> str:
    """Why a run's ε (its ledger's guarantee) is below the ε requested, in a few words: its stages
    compose by zCDP to less than their sum, and/or a stage that did not run spent nothing (its notes)."""
    p = doc["privacy"]
    asked = format_epsilon(float(p.get("requested_epsilon", math.inf)))
    zcdp = "zCDP" in str((p.get("accountant") or {}).get("within_run", ""))
    if zcdp:
        return (f"of ε = {asked} requested: its stages compose by zCDP to less than their sum"
                + ("; the run's notes say what else did not spend" if doc.get("notes") else ""))
    return f"of ε = {asked} requested; the rest was not spent (the run's notes say why)"


def any_release(methods: list[str]) -> bool:
    """Does any of ``methods`` release something computed from the data (and so spend budget)?"""
    from dpfed_core.methods import get_method

    return any(get_method(m).privacy_model.releases for m in methods)


def has_server_weighting(method: str) -> bool:
    """The method sends prototypes whose released cluster sizes the server can weight by."""
    from dpfed_core.federation.prototypes import PROTOTYPE_METHODS

    return method in PROTOTYPE_METHODS
from dpfed_core.ui.inputs import (CONTROL_NAMES, DEFAULT_EPS_GRID, DEFAULT_SWEEP_SEEDS, MAX_DELTA,  # noqa: F401
                                  audit_user_problem,
                                  MAX_FINITE_EPSILON, MAX_K, MAX_RANK, check_budget, check_data_dir,
                                  check_k_rank, default_data_path, escape_md, friendly_message, friendly_text, load_error_text,
                                  parse_epsilon, parse_grid, parse_seeds, safe_loader_message)
from dpfed_core.ui.jobs import format_seconds  # noqa: F401
from dpfed_core.reporting.paper import paper_differences_text  # noqa: F401
from dpfed_core.models.blend import MIN_EVIDENCE_USERS  # noqa: F401
from dpfed_core.ui.tables import (LEARNED_NOTHING, broadcast_words, entity_standing_banner, entity_paired_spread, few_test_users_text, key_partners, names_known_to, entity_against_alone, METRIC_LABELS, metric_at, RMSE_NOT_HEADLINED, cannot_rank, declared_outside_items, dp_excluded_items, unshared_items_notes, headline_metrics, is_clinical, similar_evidence, unit_word, entity_metric, entity_set_metrics, entity_users,  # noqa: F401
                                  guarantee_text, has_prototypes, ledger_table, messages_table, metric_columns,
                                  metrics_frame, per_stage_table, progress_text, prototype_summary, run_outcome,
                                  document_json, shareable_document, stored_run_summary, sweep_frame, top_columns,
                                  top_items_per_factor, undefined_as_words, user_history,
                                  broadcast_column_names)


# ------------------------------------------------------------------------------ crossings (the pages' names)
def catalogue_forecast_text(ds: FederatedDataset, config) -> str | None:
    """What a DP run's catalogue selection will share at this configuration (None: the catalogue is
    declared, or the run spends no ε); see :mod:`dpfed_core.evaluation.catalogue_forecast`."""
    from dpfed_core.errors import DpfedError
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue

    try:
        f = forecast_catalogue(ds, config)
    except DpfedError:
        return None
    return None if f is None else f.text()


def sweep_crossing(sweep_doc: dict, metric: str, baseline: str = REFERENCE) -> float | None:
    """The crossing ε against ``baseline`` (local by default), None when it cannot be stated."""
    return crossing_epsilon(sweep_doc, metric, baseline)


def sweep_crossing_text(sweep_doc: dict, metric: str, baseline: str = REFERENCE) -> str:
    """The crossing ε as the CLI says it, with the observation mode, a setting it names as the control
    that sets it (:func:`friendly_text`), as inert Markdown."""
    return friendly_text(crossing(sweep_doc, metric, baseline)["text"])


def pays_from_sweep(sweep_doc: dict, metric: str = "mar") -> str:
    """The headline "federation pays from ε ≈ X" of a sweep against local and individual, one line
    each (:func:`dpfed_core.evaluation.verdicts.crossing_lines`), a setting named as its control, as
    inert Markdown."""
    return "  \n".join(friendly_text(line) for line in crossing_lines(sweep_doc, metric))


# ------------------------------------------------------------------------------ results
def user_set_metrics(ds: FederatedDataset, split, result: MethodResult, entity: str, user, n: int = 10) -> dict:
    """Jaccard, F1 and PR-AUC of this user's top-n against their hidden events (NaN if none hidden)."""
    from dpfed_core.evaluation.metrics import set_metrics

    row = user_row(ds, entity, user)
    scores = result.entity_factors().scores([row])
    out = set_metrics(scores, split.train[row:row + 1], split.test[row:row + 1], n)
    return {k: float(v[0]) for k, v in out.items()}


def broadcast_factors(result: MethodResult) -> tuple[np.ndarray, int]:
    """(the item factors the server broadcast, on the data's items, the number of entity-local columns
    the entities keep beside them, all entities together): a summable method's entities keep columns of
    their own, which never left them. With a DP-selected catalogue the server's V has one row per shared
    key (a public hash bucket or a selected item): each item of a kept key takes its key's row, every
    other item a zero row (public post-processing, :meth:`~dpfed_core.models.shared_items.SharedItems.lift`)."""
    local = sum(result.entity_factors().local_widths)
    public = getattr(result.model, "public_", None)
    if public is not None and "V" in public:
        V = np.asarray(public["V"])
        item_key = result.extra.get("catalogue_item_key")
        if item_key is not None:  # one row per shared key (a DP-selected catalogue): on the items of each key
            from dpfed_core.models.shared_items import SharedItems

            return SharedItems(np.asarray(item_key), V.shape[0], 1.0).lift(V), local
        return V, local
    return np.asarray(result.V), local


def broadcast_keys(result: MethodResult) -> tuple[int, int] | None:
    """(the number of shared keys the server's V has one row each for, the number of the data's items
    in a kept key) when the catalogue was selected by DP; None: V has one row per item of the data."""
    item_key = result.extra.get("catalogue_item_key")
    if item_key is None or result.extra.get("catalogue_declared") or getattr(result.model, "public_", None) is None:
        return None
    V = result.model.public_.get("V")
    return None if V is None else (int(np.asarray(V).shape[0]), int(np.count_nonzero(np.asarray(item_key) >= 0)))


def declared_split(result: MethodResult) -> tuple[int, int] | None:
    """(the declared catalogue's items, the data's items outside it) when a declared catalogue left
    some of the data's items out — V has one row per declared item, the others are the entities' own;
    None otherwise."""
    item_key = result.extra.get("catalogue_item_key")
    if item_key is None or not result.extra.get("catalogue_declared"):
        return None
    shared = int(np.count_nonzero(np.asarray(item_key) >= 0))
    return shared, int(np.asarray(item_key).size) - shared


def server_view(result: MethodResult) -> pd.DataFrame:
    """What the server learned of a summable run, one row per quantity: the secure sums' public
    post-processing (popularity, selected items, kept eigen-directions and noise edge, V)."""
    public = dict(getattr(result.model, "public_", {}) or {})
    rows = []
    for key, value in public.items():
        arr = np.asarray(value)
        rows.append({"quantity": key, "shape": "×".join(map(str, arr.shape)) or "scalar",
                     "value": (f"{float(arr):.4g}" if arr.ndim == 0 else
                               f"min {arr.min():.3g}, max {arr.max():.3g}" if arr.size else "empty")})
    return pd.DataFrame(rows)


def recommend_table(ds: FederatedDataset, split, result: MethodResult, entity: str, user: str | int,
                    n: int = 10) -> pd.DataFrame:
    """Top-n unseen items for a user from any fitted model (U, V), with names and scores, and whether
    each one is among the user's hidden test entries (a hit). Candidates are the items the entity could
    suggest: a name it never held and no public list names (:func:`names_known_to`), on which the model
    learned nothing (score 0), is no suggestion it could make."""
    n = check_list_length(n, "“Top-N” on the Recommend page")
    row = user_row(ds, entity, user)
    scores = np.array(result.entity_factors().scores([row])[0], dtype=float)
    scores[split.train[row].indices] = -np.inf
    known = names_known_to(ds, split, result, entity)
    scores[~known & (scores == 0)] = -np.inf
    n = min(int(n), int(np.isfinite(scores).sum()))
    items = np.argsort(-scores, kind="stable")[:n]
    hidden = set(split.test[row].indices.tolist())
    # equal scores share a rank (1 + the candidates scored strictly higher): their order in the list is
    # the catalogue's, which is no advice
    higher = -np.sort(scores[np.isfinite(scores)])[::-1]
    ranks = 1 + np.searchsorted(higher, -scores[items], side="left")
    df = pd.DataFrame({
        "rank": ranks.astype(int),
        "item": ds.item_names[items],
        "score": scores[items].astype(float),
        "hidden test item": ["✔" if int(i) in hidden else "" for i in items],
    })
    df.attrs["items"] = np.asarray(items, dtype=int)  # the item indices, for the explanations
    df.attrs["zeros"] = int(np.sum(scores == 0))  # candidates the model learned nothing for
    df.attrs["known"] = known  # the names the entity knows, for the explanations
    # candidates scored as the last listed one that the cut leaves out
    df.attrs["tied_beyond"] = (int(np.sum(scores == scores[items[-1]])) - int(np.sum(scores[items] == scores[items[-1]]))
                               if len(items) else 0)
    return df


def explained_list(ds: FederatedDataset, split, result: MethodResult, entity: str, user: str | int, n: int,
                   model: str) -> tuple[pd.DataFrame | None, str | None]:
    """(the list with a "why" column in words, a note or None) where the model ranks this user's items;
    (None, the plain sentence why not) where it cannot (every candidate scored alike). Items the DP
    selection left out of the shared catalogue, or outside a declared one, are marked as such. Candidates
    the model scores 0 while others score above it are cut, with a note: ties at 0 would be listed in
    catalogue order, which is no advice."""
    df = recommend_table(ds, split, result, entity, user, n)
    unit = unit_word(ds, plural=False)
    why_not = cannot_rank(df["score"].to_numpy(), model, unit)
    if why_not:
        return None, why_not
    note = None
    zeros, known = int(df.attrs["zeros"]), df.attrs["known"]
    if zeros and (df["score"] == 0).any():  # one item the model learned nothing for is no advice either
        items, keep = df.attrs["items"], df["score"].to_numpy() != 0
        attrs = dict(df.attrs)
        df = df[keep].reset_index(drop=True)
        sc = df["score"].to_numpy()  # ranked among what is listed: the cut items are no rank above any
        df["rank"] = (1 + np.searchsorted(-np.sort(sc)[::-1], -sc, side="left")).astype(int)
        df.attrs.update(attrs, items=items[keep], tied_beyond=0)
        note = (f"{zeros} further candidate items score 0 for this {unit}: the {model} learned nothing for them, "
                "and their order would be the catalogue's, so they are not listed." if zeros > 1 else
                f"1 further candidate item scores 0 for this {unit}: the {model} learned nothing for it, so it is "
                "not listed.")
    ties = []
    if df["rank"].duplicated().any():
        ties.append("Items with equal scores share a rank; among them the order is the catalogue's, not advice.")
    if df.attrs.get("tied_beyond"):
        k = df.attrs["tied_beyond"]
        ties.append(f"{k} more item{'s score' if k != 1 else ' scores'} the same as the last one listed and "
                    f"{'are' if k != 1 else 'is'} not shown.")
    if ties:
        note = " ".join([note, *ties]) if note else " ".join(ties)
    items = df.attrs["items"]
    why = similar_evidence(ds, split, entity, user, items)
    for unshared, said in ((dp_excluded_items(ds, result), "; left out of the shared catalogue by the DP selection: "
                                                           "scored from this entity's own data"),
                           (declared_outside_items(ds, result), "; not in the declared item catalogue, so never "
                                                                "shared: scored from this entity's own data")):
        if unshared is not None and len(unshared):
            out = set(unshared.tolist())
            why = [w + (said if int(j) in out else "") for w, j in zip(why, items)]
    partners = key_partners(ds, result, known)
    if partners:
        # a shared key is a hash of names: what the federation learned for it may be another item's
        why = [w + (f"; its shared key also stands for {', '.join(partners[int(j)][:2])}"
                    f"{' …' if len(partners[int(j)]) > 2 else ''}: the federation's part for it is theirs together"
                    if int(j) in partners else "") for w, j in zip(why, items)]
    df.insert(2, "why", why)
    df.attrs = {}  # the indices served the explanations; a displayed table carries none
    return df, note


def sweep_noise_text(dataset: FederatedDataset, simulation: bool) -> str:
    """How a sweep's noise is drawn and what it is charged, in the words of its button's charge."""
    from dpfed_core.evaluation.budget import simulation_is_non_private

    if not simulation:
        return "**production noise**, charged to the budget"
    if simulation_is_non_private(dataset):
        return ("**simulation noise** (reproducible from the seed, no privacy claim: on these people's records "
                "each DP point is an exact release, charged as non-private, ε = ∞)")
    return "**simulation noise** (reproducible, no privacy claim, not charged)"
