"""The method catalogue as the dashboard shows it: which methods, their labels and privacy models,
their declared parameters and the ε each DP method plans per stage (split out of
``ui/engine.py`` by job)."""
from __future__ import annotations

import importlib
import sys

import pandas as pd

from dpfed_core.config import Param, RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.federation.dp_prototypes import STAGE_NAMES
from dpfed_core.federation.prototypes import PROTOTYPE_METHODS
from dpfed_core.methods import METHODS, available_methods

#: The headline DP method of the app: the one that measures best (bench/results/utility.md):
#: summable DP co-occurrence. "dp-gaussian" / "dp-prototypes" are the paper's prototypes.
DP_METHOD = "dp-cooccurrence"


#: Methods shown beside the federated model on the Evaluate page: local first (each entity's
#: own model + own popularity, the reference of every verdict) and individual beside it;
#: dp-popularity is the one-line DP baseline every DP method must beat.
from dpfed_core.evaluation.experiments import DEFAULT_REFERENCES as BASE_REFERENCES  # noqa: E402  (the one list)


#: Plain explanation of the secure-aggregation toggle (Federate page).
AGGREGATION_HELP = (
    "Secure aggregation: the entities' releases are added up by a cryptographic protocol, so the server "
    "sees only the total, never one hospital's numbers. Each entity then adds only its share of the noise "
    "(σ/√H), and the total carries the full noise once instead of H times: far better recommendations at "
    "the same ε. The price is trust: the guarantee against the server holds if the entities follow the "
    "protocol; if the server and all other entities collude, only an entity's own share protects it, "
    "and the ledger states that weaker ε too. Applies to summable methods (dp-cooccurrence, "
    "dp-popularity). In this app the sum is formed in-process; the real protocol runs in the Flower "
    "deployment.")


def ensure_methods_registered() -> None:
    """Import the optional method modules so that their registries are filled.

    The DP method registers itself on import; the engine may not import it yet, so the dashboard
    does, without failing if a helper's module is still missing or broken.
    """
    for mod in ("dpfed_core.federation.dp_prototypes",):
        if mod not in sys.modules:
            try:
                importlib.import_module(mod)
            except Exception:  # a module under construction must not take the app down
                pass


def method_catalogue() -> pd.DataFrame:
    """One row per registered method: name, label, privacy model, whether it uses ε / k."""
    ensure_methods_registered()
    rows = []
    for name in available_methods():
        s = METHODS[name]
        rows.append({"method": name, "label": s.label, "privacy": s.privacy,
                     "uses_epsilon": s.uses_epsilon, "uses_k": s.uses_k, "description": s.description})
    return pd.DataFrame(rows)


from dpfed_core.federation.protocol import is_summable  # noqa: E402,F401  (the one rule, re-exported for the pages)


def federated_methods() -> list[str]:
    """Methods that run the federation protocol (prototype and summable methods), DP method first."""
    ensure_methods_registered()
    names = [m for m in available_methods() if METHODS[m].uses_k or is_summable(m)]
    return sorted(names, key=lambda m: (m != DP_METHOD, not METHODS[m].uses_epsilon, m))


def default_method() -> str:
    names = federated_methods()
    return names[0] if names else "kmeans"


def privacy_of(method: str) -> str:
    ensure_methods_registered()
    return METHODS[method].privacy if method in METHODS else "?"


def label_of(method: str) -> str:
    ensure_methods_registered()
    return METHODS[method].label if method in METHODS else method


def method_parameters(method: str) -> list:
    """The Advanced panel's parameters of a method: its declared
    :class:`~dpfed_core.config.Param` list (budget splits have their own control), read as data —
    the same declaration ``--param`` checking and ``python -m dpfed_core methods`` read."""
    ensure_methods_registered()
    spec = METHODS.get(method)
    if spec is None:
        return []
    return [p for p in spec.parameters if p.advanced and p.kind != "mapping"]


def parameter_value(param: "Param", text_or_value: object) -> object:
    """A control's value as the parameter's type, or a :class:`ConfigError` naming the control."""
    return param.coerce(text_or_value)


def budget_split_defaults(method: str) -> dict[str, float]:
    """The DP method's default ε shares per stage (its module's ``DEFAULT_SPLIT``), or {}."""
    ensure_methods_registered()
    cls = PROTOTYPE_METHODS.get(method)
    if cls is None or not getattr(cls, "private", False):
        return {}
    mod = sys.modules.get(cls.__module__)
    return dict(getattr(mod, "DEFAULT_SPLIT", {}) or {})


#: Budget-plan keys of the DP prototype methods → the stage names their ledger rows use (without the
#: LSH coreset's candidates; :meth:`~dpfed_core.federation.dp_prototypes.DPPrototypes.stage_names`).
PLAN_TO_LEDGER = STAGE_NAMES


def ledger_stage_name(plan_key: str) -> str:
    return PLAN_TO_LEDGER.get(plan_key, plan_key)


def budget_plans(method: str, dataset: FederatedDataset, config: RunConfig) -> dict[str, pd.DataFrame]:
    """The ε per stage the DP method plans, named as the ledger names them, for each k it may use:
    ``{"k = 1": table, "k = K": table}`` when the automatic k depends on the noisy size, else one
    table, the DP catalogue selection first when the run selects one per entity. Stages with ε = 0 are
    left out (they do not run and the ledger has no row for them)."""
    from dpfed_core.evaluation.catalogue_run import (entity_catalogue_budget, needs_dp_catalogue,
                                                     uses_federation_catalogue)

    cls = PROTOTYPE_METHODS.get(method)
    if cls is None or not getattr(cls, "private", False) or not hasattr(cls, "budget_plan"):
        return {}
    # without a declared catalogue the run first selects it per entity with a share of (ε, δ), and the
    # method's stages split the rest (evaluation.catalogue_run.fit_on_dp_catalogue)
    selection = needs_dp_catalogue(dataset, True, config) and not uses_federation_catalogue(dataset, config)
    eps_sel, _, method_cfg = entity_catalogue_budget(config) if selection else (0.0, 0.0, config)
    params = dict(config.prototype_params)
    params.setdefault("epsilon", method_cfg.epsilon)
    params.setdefault("delta", method_cfg.delta)
    obj = cls(k=config.k, value_max=dataset.value_max, **params)
    ks = [int(config.k)]
    if getattr(obj, "cluster_size", None) is not None and int(config.k) > 1:
        ks = [1, int(config.k)]
    out = {}
    for k in ks:
        plan = obj.budget_plan(dataset.n_items, k)
        if k == 1:  # with one cluster every user is in it: the clustering stages do not run
            plan = {s: e for s, e in plan.items() if s not in ("candidates", "search", "choice")}
        # the size stage runs only when something uses n̂ (the method says which)
        runs_size = getattr(obj, "_size_stage_runs", lambda: True)()
        if not runs_size:
            plan.pop("size", None)
        out[f"k = {k}"] = pd.DataFrame(([{"stage": "catalogue", "epsilon": eps_sel}] if eps_sel > 0 else [])
                                       + [{"stage": obj.stage_names(k).get(s, s), "epsilon": e}
                                          for s, e in plan.items() if e > 0])
    return out


#: Why a run may spend less than its plan on a stage: both stop decisions read only an earlier DP
#: release, so spending less is post-processing and the plan is what the budget store reserves.
EARLY_STOP_NOTE = ("the candidate stage stops at the first level where no cell's noisy count passes its "
                   "threshold, and the search spends nothing when it has no more candidates than k, so a run "
                   "may spend less on those two stages")
#: Why the LSH coreset's ledger rows are not this split: its releases are planned jointly (zCDP).
LSH_PLAN_NOTE = ("with candidates = lsh the coreset's releases are planned jointly in zCDP: the ledger's ε per "
                 "stage differs from this split, while the run stays within the ε asked")


def _method_object(method: str, config: RunConfig):
    """The prototype method as configured, or None (:func:`~dpfed_core.evaluation.defaults.prototype_method`)."""
    from dpfed_core.evaluation.defaults import prototype_method

    return prototype_method(config.replace(method=method))


def plan_captions(method: str, config: RunConfig, plans: dict[str, pd.DataFrame]) -> list[str]:
    """One line per table of :func:`budget_plans`: the ε each stage may spend (an upper bound: what the
    budget store reserves), and why a stage can spend less where one that can stop early is planned;
    with the LSH coreset's candidates, what the split is instead (its stages are no bounds one by one)."""
    from dpfed_core.evaluation.verdicts import format_epsilon

    lsh = getattr(_method_object(method, config), "candidates", None) == "lsh"
    lines = []
    for label, plan in plans.items():
        if plan.empty:
            continue
        clustered = bool({"candidates", "local search", "coreset sums"} & set(plan["stage"]))
        bound = "" if lsh and clustered else ", at most"
        pre = (f"Planned ε per stage and entity if an entity uses {label}{bound}: " if len(plans) > 1
               else f"Planned ε per stage and entity{bound}: ")
        why = f"; {LSH_PLAN_NOTE if lsh else EARLY_STOP_NOTE}" if clustered else ""
        lines.append(pre + ", ".join(f"{r.stage} {format_epsilon(r.epsilon)}" for r in plan.itertuples())
                     + f" (the ledger's stage names{why}; the ledger after the run shows what was spent).")
    return lines


def k_note(method: str, config: RunConfig) -> str:
    """Where k is set: what k means for this method (a maximum with the automatic k)."""
    from dpfed_core.evaluation.defaults import automatic_k_size

    obj = _method_object(method, config)
    if obj is None:
        return ""
    cs = automatic_k_size(config.replace(method=method))
    if cs is not None:
        return (f"k = {config.k} is a **maximum**: each entity uses k_eff = clip(⌊n̂ / {cs:g}⌋, 1, {config.k}) "
                f"from its noisy user count n̂ (the *size* ledger row), so an entity with fewer than about "
                f"{2 * int(cs)} users sends **one** prototype. Post-processing of a DP release (no extra "
                "cost, never the true count); under DP one large cluster measured better than several "
                "noisy small ones. Set *cluster_size* (Advanced) to change it.")
    if not getattr(obj, "private", False):
        return f"k = {config.k} prototypes per entity (capped by the entity's number of training users)."
    return f"k = {config.k} prototypes per entity."
