"""The one run service: validate → plan → charge → split → run → record, for every front end.

The CLI (``python -m dpfed_core run`` / ``sweep``) only parses flags and prints; the dashboard only
lays out widgets; both call :func:`execute_run` or :func:`execute_sweep` with a
:class:`~dpfed_core.config.RunConfig`, a dataset and a budget store, and get the same document,
charged the same way.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable

from dpfed_core.config import RunConfig, check_params
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.methods import MethodResult, check_methods, get_method
from dpfed_core.privacy.store import Store


#: Step 5 of :func:`execute_run` done elsewhere: ``(dataset, config, split) -> (doc, MethodResult)``.
Runner = Callable[[FederatedDataset, RunConfig, object], "tuple[dict, MethodResult]"]


@dataclass
class RunOutcome:
    """What :func:`execute_run` produced: the result document (with ``comparison`` when methods were
    compared), the fitted :class:`MethodResult` of the run's method, the comparison documents, the
    history id of the stored document (None when nothing was stored), and the odometer's record."""

    doc: dict
    result: MethodResult
    comparison: dict[str, dict] = field(default_factory=dict)
    history_id: int | None = None
    odometer: dict = field(default_factory=dict)


def check_run(dataset: FederatedDataset, config: RunConfig, compare: Iterable[str] = (),
              compare_param: str = "compare") -> None:
    """Every check a run needs before anything is charged or computed, at one boundary: every method
    name, each method's declared parameters against the data's public shape (a federated method is
    built by the one factory and checks its bounds), and — for a DP run — a declared federation
    (:func:`~dpfed_core.evaluation.experiments.check_declared_federation`). The configuration's own
    values were checked when it was made (:class:`~dpfed_core.config.RunConfig` cannot exist invalid),
    so no later step re-checks them."""
    from dpfed_core.evaluation.experiments import check_declared_federation

    compare = check_methods(compare, compare_param)
    from dpfed_core.evaluation.budget import check_gaussian_delta

    from dpfed_core.evaluation.defaults import compared_config

    # each compared method's own configuration (its ε, its trust model), made once for every check below
    compared = {m: compared_config(dataset, config, m) for m in dict.fromkeys(compare) if m != config.method}
    budgets: dict[tuple[float, float], list[str]] = {}
    for c in [config, *(compared.get(m, config) for m in compare)]:
        budgets.setdefault((c.epsilon, c.delta), []).append(c.method)
    for (epsilon, delta), methods in budgets.items():
        check_gaussian_delta(methods, epsilon, delta)
    for c in [config, *compared.values()]:  # a compared method runs with the settings it inherits
        _check_method(dataset, c)
    for m in dict.fromkeys([config.method, *compare]):
        check_declared_federation(dataset, compared.get(m, config))


def _check_method(dataset: FederatedDataset, config: RunConfig) -> None:
    """``config``'s method against its own settings and the data's public shape: its declared parameters,
    and a federated method built by the one factory (its bounds, counts and public-shape rule)."""
    import scipy.sparse as sp

    from dpfed_core.errors import ConfigError, DpfedError
    from dpfed_core.evaluation.experiments import has_secure_sum
    from dpfed_core.federation.protocol import FederatedRecommender, build_method, check_counts, is_summable
    from dpfed_core.methods.comparison.specs import check_parameters_used

    spec = get_method(config.method)
    if config.max_dropouts and not has_secure_sum(config):
        # dropouts are what a secure sum tolerates; a run without one has nothing to tolerate them
        from dpfed_core.federation.summable import SUMMABLE_METHODS

        raise ConfigError(f"max_dropouts = {config.max_dropouts} applies to the secure aggregation of a summable "
                          f"method ({', '.join(sorted(SUMMABLE_METHODS))}); {config.method} with aggregation "
                          f"'{config.aggregation}' has no secure sum to tolerate dropouts: drop max_dropouts"
                          + (", or use aggregation=secure" if is_summable(config.method) else ""),
                          param="max_dropouts")
    if not spec.federated:
        check_params(spec.parameters, config.params, config.method)
        if spec.check is not None:
            spec.check(config)
        if spec.check_data is not None:
            spec.check_data(dataset, config)
    else:
        try:
            FederatedRecommender.from_config(config)._validate()
            method = build_method(config, dataset.value_max)
            check_counts(method, config.server_weighting)
            check = getattr(method, "_validate", None)
            if check is not None:
                check(sp.csr_matrix((1, dataset.n_items)), "every entity")
            federation_check = getattr(method, "check", None)  # a summable method's public-shape rule
            if federation_check is not None:
                federation_check(dataset.n_entities)
            check_parameters_used(config)
        except DpfedError:
            raise
        except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
            given = ", ".join(f"{k}={v}" for k, v in config.params.items()) or "none given"
            raise ConfigError(f"parameters of {config.method} ({given}): an unusable value ({exc})",
                              param="prototype_params") from None


def no_test_users_warning(dataset: FederatedDataset, config: RunConfig) -> str | None:
    """Said before a run is charged when its split gives no entity a test user: the run still fits and
    recommends, but every metric it reports will be undefined (None when some entity has one)."""
    import numpy as np

    from dpfed_core.data.split import n_test_users

    if not dataset.n_users:
        return None
    lengths = np.diff(dataset.X.tocsr().indptr)
    if n_test_users(lengths, dataset.entity_of_user, config.test_fraction, config.n_hidden):
        return None
    most = int(lengths.max())
    # when no user holds more than n_hidden entries, no test_fraction can draw one: only n_hidden helps
    fix = ("lower n_hidden, or raise test_fraction" if most > config.n_hidden else
           f"lower n_hidden to at most {most - 1} (the most entries any user holds is {most})" if most > 1 else
           "these data hold one entry per user, so none can be hidden for a test")
    return (f"no entity will have a test user: a test user needs more than n_hidden = {config.n_hidden} entries, and "
            f"test_fraction = {config.test_fraction:g} of an entity's users are drawn from those. The run fits and "
            f"recommends, but every metric it reports will be undefined: {fix}")


#: The odometer record of a release that opened no store (nothing released, or a simulation).
NO_STORE_RECORD = {"store": None, "note": "nothing released, or a simulation: no budget store opened"}


def _open_account(dataset: FederatedDataset, store, create: bool = True):
    """(store, odometer, dataset key) of the budget ``store`` (a path, None for the default, or a
    :class:`Store`). The dataset is registered (or matched to the stored dataset of the same people)
    by the charge itself, in its transaction: a refused run leaves no row in the store. ``create=False``: a
    read, which never gives the store its secret (:meth:`~dpfed_core.privacy.odometer.BudgetOdometer.account_key`)."""
    from dpfed_core.privacy.odometer import BudgetOdometer
    from dpfed_core.privacy.store import resolve_store_path

    store = store if isinstance(store, Store) else Store(resolve_store_path(store))
    odometer = BudgetOdometer(store)
    return store, odometer, odometer.account_key(dataset, create=create)


def _draws_since() -> Callable[[], int]:
    """How many ledger rows this process records from now on: a run computed here that fails with
    none drew no noise (every mechanism records its row before drawing), so its reservation is given
    back. A run computed elsewhere (a deployment's nodes) cannot be seen from here: no such proof."""
    from dpfed_core.privacy.ledger import rows_recorded

    start = rows_recorded()
    return lambda: rows_recorded() - start


def _draws_seen_here(config: RunConfig) -> bool:
    """Whether every draw of ``config``'s run is counted by this process's ledger rows: not with
    ``n_jobs`` ≠ 1, where a prototype method's entities release in worker processes whose rows reach
    this process only when they return — a run stopped meanwhile would look as if nothing was drawn."""
    return config.n_jobs == 1


def _charge_record(store: Store, dataset: FederatedDataset, key: str, reservation, doc: dict) -> dict:
    """The odometer's record of a settled charge, and the accountant across releases noted in the
    document's privacy section; a charge that gave back a killed sweep's never-started points says so."""
    from dpfed_core.evaluation.budget import accountant_record

    doc.setdefault("privacy", {}).setdefault("accountant", {}).update(accountant_record(store, dataset, key))
    if reservation.recovered:
        n = len(reservation.recovered)
        doc.setdefault("notes", []).append(
            f"the budget store gave back {n} release{'s' if n > 1 else ''} that a killed sweep had reserved and "
            "never started (its process ran no more; `budget releases` lists them as withdrawn)")
    record = {"store": str(store.path), "dataset_key": key, "operation": reservation.operation,
              "releases": reservation.release_ids}
    if reservation.plans and all(p.simulation for p in reservation.plans):
        # a simulation on generated data: its releases are recorded in the store, none of them charged
        record["simulation_not_charged"] = True
    return record


def execute_run(dataset: FederatedDataset, config: RunConfig, *, compare: Iterable[str] = (),
                store: Store | str | os.PathLike | None = None, allow_non_private: bool = False,
                split=None, progress: Callable[..., None] | None = None, save: bool = True,
                runner: Runner | None = None, comparison: bool = False) -> RunOutcome:
    """Run ``config`` (and each method of ``compare`` on the same split) with the odometer in front.

    1. validate (:func:`check_run`); 2. plan the releases (:func:`~dpfed_core.evaluation.budget.plan_run`);
    3. charge the dataset's budget in ``store`` — or refuse with
    :class:`~dpfed_core.privacy.odometer.BudgetRefused` before anything is computed; 4. split;
    5. run every method; 6. settle the charge to the ledgers, note the odometer and the accountant in
    the document and keep it in the run history. Nothing releases and no store is opened for a run
    that releases nothing or a simulation without a named store.

    ``runner``: step 5 for a run executed elsewhere — ``runner(dataset, config, split)`` returns
    ``(doc, MethodResult)``; the Flower deployment's coordinator passes its deployment here so that it
    is validated, planned, charged and recorded by these same steps (no ``compare``). ``comparison``: the
    run is a comparison of another (the dashboard's Evaluate page runs each alone): its release is
    recorded as a comparison, as ``compare`` records one."""
    from dpfed_core.evaluation.budget import plan_run, settle_run, skip_store
    from dpfed_core.evaluation.defaults import compared_config, compared_epsilon_note
    from dpfed_core.evaluation.experiments import make_split, run_method
    from dpfed_core.evaluation.history import RunHistory

    compare = [m for m in dict.fromkeys(compare) if m != config.method]
    check_run(dataset, config, compare)
    plans = plan_run(dataset, config, compare, comparison=comparison)

    if runner is not None and compare:
        from dpfed_core.errors import ConfigError

        raise ConfigError("a run executed by a runner (e.g. a Flower deployment) compares no methods",
                          param="compare")

    def compute():
        sp_ = make_split(dataset, config) if split is None else split
        if runner is not None:
            doc, result = runner(dataset, config, sp_)
            return doc, result, {}
        doc, result = run_method(dataset, config, sp_, progress)
        comparison = {m: run_method(dataset, compared_config(dataset, config, m), sp_, progress)[0]
                      for m in compare}
        return doc, result, comparison

    history_id = None
    if skip_store(store, plans):
        doc, result, comparison = compute()
        record = dict(NO_STORE_RECORD)
    else:
        store, odometer, key = _open_account(dataset, store)
        with odometer.charge(dataset, plans, allow_non_private=allow_non_private, key=key,
                             drawn=None if runner is not None or not _draws_seen_here(config) else _draws_since()
                             ) as res:
            doc, result, comparison = compute()
            settle_run(res, [doc, *comparison.values()])
        record = _charge_record(store, dataset, key, res, doc)
    if comparison:
        doc["comparison"] = {m: {k: d[k] for k in ("method", "overall", "entities", "privacy", "timings")}
                             for m, d in comparison.items()}
        said = compared_epsilon_note(dataset, config, list(comparison))
        if said:
            doc.setdefault("notes", []).append(said)
        if config.params:
            given = ", ".join(f"{k}={v}" for k, v in config.params.items())
            doc.setdefault("notes", []).append(
                f"parameters {given} are {config.method}'s; {', '.join(comparison)} ran with their own defaults")
    doc["odometer"] = record
    if record.get("store") and save:
        history_id = RunHistory(store).add("run", doc, dataset_key=record["dataset_key"],
                                           operation=record["operation"])
    return RunOutcome(doc, result, comparison, history_id, record)


def charged_run(store: Store | str | os.PathLike | None, dataset: FederatedDataset, config: RunConfig, split=None,
                progress=None, allow_non_private: bool = False, save: bool = True, comparison: bool = False):
    """:func:`execute_run` for one method, in the shape the dashboard uses: refuses
    (:class:`~dpfed_core.privacy.odometer.BudgetRefused`) before computing, settles the charge to the
    run's ledger, keeps the document in the history. Returns (doc, MethodResult, history id)."""
    out = execute_run(dataset, config, store=store, allow_non_private=allow_non_private, split=split,
                      progress=progress, save=save, comparison=comparison)
    return out.doc, out.result, out.history_id


@dataclass
class SweepOutcome:
    """What :func:`execute_sweep` produced: the sweep document (with its ``tables`` and crossing
    reports), the history id of the stored document (None when nothing was stored), the odometer's
    record."""

    doc: dict
    history_id: int | None = None
    odometer: dict = field(default_factory=dict)


def summarise_sweep(doc: dict, metrics: Iterable[str] = ("mar", "test_rmse")) -> dict:
    """The sweep's analysis, the same for every front end: per metric the table of mean ± sd, the
    crossing against ``local`` (or ``individual`` when local did not run) and, beside it, against
    ``individual`` and ``dp-popularity`` (:func:`~dpfed_core.evaluation.experiments.crossing_report`,
    each stating the observation mode)."""
    from dpfed_core.evaluation.experiments import crossing_report, sweep_table, versus_dp_popularity
    from dpfed_core.evaluation.verdicts import unproved_epsilons

    refs = set(doc.get("references", []))
    doc["unproved_epsilons"] = unproved_epsilons(doc)
    for metric in dict.fromkeys(metrics):
        doc.setdefault("tables", {})[metric] = sweep_table(doc, metric)
        if {"local", "individual"} & refs:
            rep = crossing_report(doc, metric)
            doc.setdefault("crossing_epsilon", {})[metric] = rep["epsilon"]
            doc.setdefault("crossing", {})[metric] = rep
        if {"local", "individual"} <= refs:
            doc.setdefault("crossing_vs_individual", {})[metric] = crossing_report(doc, metric, "individual")
        if "dp-popularity" in refs:
            doc.setdefault("crossing_vs_dp_popularity", {})[metric] = crossing_report(doc, metric, "dp-popularity")
            doc.setdefault("versus_dp_popularity", {})[metric] = versus_dp_popularity(doc, metric)
    return doc


def sweep_data_key(dataset: FederatedDataset, config: RunConfig, epsilons: Iterable[float], seeds: Iterable[int],
                   references: Iterable[str] | None = None,
                   store: Store | str | os.PathLike | None = None) -> str | None:
    """The data's name that a sweep's document keeps (``data_key``): its account's name in the store the
    sweep is charged to (:meth:`~dpfed_core.privacy.odometer.BudgetOdometer.account_key`). None when the
    sweep opens no store (:func:`~dpfed_core.evaluation.budget.skip_store`): no secret names the data then,
    and a document never carries the data's unkeyed content key. ``""`` when the store does not exist yet: no
    document was charged to it, so none names the data as it will (it is not created to say so)."""
    from dpfed_core.evaluation.budget import plan_sweep, skip_store
    from dpfed_core.evaluation.experiments import DEFAULT_REFERENCES
    from dpfed_core.privacy.store import resolve_store_path

    references = list(DEFAULT_REFERENCES if references is None else references)
    if skip_store(store, plan_sweep(dataset, config, list(epsilons), list(seeds), references)):
        return None
    if not isinstance(store, Store) and not resolve_store_path(store).exists():
        return ""
    return _open_account(dataset, store, create=False)[2]


def resumed_points(resume: dict | None, dataset: FederatedDataset, config: RunConfig, epsilons: Iterable[float],
                   seeds: Iterable[int], references: Iterable[str] | None = None,
                   store: Store | str | os.PathLike | None = None) -> set:
    """The points (job keys) a sweep document to resume holds for this sweep — exactly those the
    sweep keeps and does not compute again, so they are not charged again. The document is checked
    by the sweep's own rule first (same settings, same data — named in ``store``, :func:`sweep_data_key`:
    else one error naming ``resume``)."""
    from dpfed_core.evaluation.experiments import (DEFAULT_REFERENCES, job_key, _resumable_runs, check_sweep_grid,
                                                   sweep_identity)

    if resume is None:
        return set()
    epsilons, seeds = check_sweep_grid(config, epsilons, seeds)
    references = DEFAULT_REFERENCES if references is None else references
    skeleton = sweep_identity(dataset, config, epsilons, seeds, references,
                              sweep_data_key(dataset, config, epsilons, seeds, references, store))
    return {job_key(r["method"], r["epsilon"], r["seed"], config.method)
            for r in _resumable_runs(resume, skeleton, config.method)}


def execute_sweep(dataset: FederatedDataset, config: RunConfig, epsilons: Iterable[float], seeds: Iterable[int],
                  references: Iterable[str] | None = None, *, store: Store | str | os.PathLike | None = None,
                  allow_non_private: bool = False, progress: Callable[..., None] | None = None,
                  checkpoint: Callable[[dict], None] | None = None, resume: dict | None = None,
                  metrics: Iterable[str] = ("mar", "test_rmse"), save: bool = True) -> SweepOutcome:
    """A privacy–utility sweep with the odometer in front, by the same steps as :func:`execute_run`:
    1. validate (:func:`check_run` with every reference); 2. plan every point
    (:func:`~dpfed_core.evaluation.budget.plan_sweep`, the sweep's own job list); 3. charge them all
    before the first is computed — or refuse; 4–5. split and run each seed
    (:func:`~dpfed_core.evaluation.experiments.sweep`, checkpointed); 6. settle the charge to the
    ledgers, note the odometer and the accountant, summarise (:func:`summarise_sweep`) and keep the
    document in the history. A resumed sweep is charged only for the points it computes (those the
    ``resume`` document does not hold); resuming a complete document is refused (nothing to compute)."""
    from dpfed_core.evaluation.budget import plan_sweep, settle_sweep, skip_store
    from dpfed_core.evaluation.experiments import DEFAULT_REFERENCES, sweep
    from dpfed_core.evaluation.history import RunHistory

    references = list(DEFAULT_REFERENCES if references is None else references)
    epsilons, seeds = list(epsilons), list(seeds)
    check_run(dataset, config, [r for r in references if r != config.method])
    done = resumed_points(resume, dataset, config, epsilons, seeds, references, store)
    plans = plan_sweep(dataset, config, epsilons, seeds, references, done=done)
    if resume is not None and not plans:
        from dpfed_core.errors import ConfigError

        raise ConfigError(f"the sweep document to resume already holds every point of this sweep ({len(done)}): "
                          "nothing to compute and nothing charged; start a new sweep (another output file) to "
                          "run it again", param="resume")

    from dpfed_core.privacy.ledger import rows_recorded

    # Points run one after another in the plans' order (plan_sweep and sweep walk the same job list). After
    # the last finished point, the next one drew if a ledger row was recorded since; every later one never
    # started, so a sweep that stops gives their charges back and its resume is not charged twice for them.
    finished = {"points": 0, "rows": rows_recorded(), "aligned": True}
    charged: list = []  # the reservation, once made: it keeps the count in the store for a killed process

    def tracked(event: str, **kw) -> None:
        if event == "sweep_step":
            i = finished["points"]
            plan = plans[i] if i < len(plans) else None
            # any doubt about which plan a finished point is, and nothing is given back
            finished["aligned"] &= (plan is not None and plan.method == kw.get("method")
                                    and plan.seed == kw.get("seed")
                                    and kw.get("total", 0) - kw.get("done", 0) == len(plans) - i - 1)
            finished["points"], finished["rows"] = i + 1, rows_recorded()
            if charged:
                charged[0].note_finished(finished["points"] if finished["aligned"] else None)
        if progress is not None:
            progress(event, **kw)

    def unstarted() -> range:
        if not finished["aligned"]:
            return range(0)
        return range(finished["points"] + (rows_recorded() > finished["rows"]), len(plans))

    def compute(key: str | None = None) -> dict:
        return sweep(dataset, config, epsilons, seeds, references, progress=tracked, checkpoint=checkpoint,
                     resume=resume, data_key=key)

    history_id = None
    if skip_store(store, plans):
        doc = compute()
        record = dict(NO_STORE_RECORD)
    else:
        store, odometer, key = _open_account(dataset, store)
        seen = _draws_seen_here(config)
        with odometer.charge(dataset, plans, allow_non_private=allow_non_private, key=key,
                             drawn=_draws_since() if seen else None, unstarted=unstarted if seen else None) as res:
            charged.append(res)
            doc = compute(key)
        settle_sweep(odometer, res, dataset, doc, resumed=done)
        record = _charge_record(store, dataset, key, res, doc)
    doc["odometer"] = record
    summarise_sweep(doc, metrics)
    if record.get("store") and save:
        history_id = RunHistory(store).add("sweep", doc, dataset_key=record["dataset_key"],
                                           operation=record["operation"])
    return SweepOutcome(doc, history_id, record)


def charged_sweep(store: Store | str | os.PathLike | None, dataset: FederatedDataset, config: RunConfig, epsilons,
                  seeds, references, progress=None, allow_non_private: bool = False, save: bool = True):
    """:func:`execute_sweep` in the shape the dashboard uses. Returns (doc, history id)."""
    out = execute_sweep(dataset, config, epsilons, seeds, references, store=store,
                        allow_non_private=allow_non_private, progress=progress, save=save)
    return out.doc, out.history_id
