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
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from dpfed_core import __version__
from dpfed_core.config import RunConfig
from dpfed_core.privacy.ledger import delta_warning
from dpfed_core.privacy.noise import SIMULATION_LABEL, method_generator, noise_provenance
from dpfed_core.privacy.statement import GUARANTEE_NAME, assumptions, statement
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.methods import MethodResult, get_method
from dpfed_core.evaluation.metrics import evaluate
from dpfed_core.data.split import Split, split_users

ProgressFn = Callable[..., None]

#: Metrics where lower is better (the others: higher is better).
LOWER_IS_BETTER = {"train_rmse", "test_rmse", "mar"}


def _noop(*_a, **_k):
    return None


def make_split(dataset: FederatedDataset, config: RunConfig) -> Split:
    """The split of a run: seeded by ``config.seed`` on its own stream, so every method run with
    the same seed sees the same split."""
    rng = np.random.default_rng([config.seed, 0x5EED])
    return split_users(dataset.X, dataset.entity_of_user, rng, config.test_fraction, config.n_hidden)


def privacy_summary(result: MethodResult, config: RunConfig, uses_epsilon: bool,
                    privacy_model: str = "user-level DP (federated)") -> dict:
    eps, dlt = result.ledger.guarantee()
    private = math.isfinite(eps)
    if not private:
        label = "non-private (ε = ∞): raw data or exact statistics leave the entities"
    elif eps == 0:
        label = "nothing derived from private data leaves an entity (ε = 0)"
    elif privacy_model.startswith("user-level"):
        label = f"({eps:.4g}, {dlt:.3g})-DP per user of each entity (user-level, parallel over entities)"
    else:
        # Another system's guarantee (e.g. rating-level DP at a trusted curator): say what it is.
        label = f"ε = {eps:.4g}, δ = {dlt:.3g} — {privacy_model}"
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
        **_guarantee_terms(result, eps, dlt, private, simulation),
    }


def _guarantee_terms(result: MethodResult, eps: float, dlt: float, private: bool, simulation: bool) -> dict:
    """How the guarantee is stated (:mod:`dpfed_core.privacy.statement`): its name, assumptions, the
    samplers that drew the noise, and a warning when δ exceeds 1/n̂ of the smallest entity (n̂ = the
    sum of an entity's *released noisy* cluster sizes, so the warning reveals nothing new)."""
    samplers = sorted({r.sampler for r in result.ledger.rows if r.sampler})
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
        "notes": list(dataset.notes),
    }


def run_method(
    dataset: FederatedDataset,
    config: RunConfig,
    split: Split | None = None,
    progress: ProgressFn | None = None,
) -> tuple[dict, MethodResult]:
    """Fit ``config.method`` on the split's training data and evaluate it. Returns the result
    document and the fitted :class:`MethodResult` (for the dashboard's views)."""
    config.validate()
    spec = get_method(config.method)
    if not spec.uses_epsilon and math.isfinite(config.epsilon):
        # A non-private method has no budget: record ε = inf rather than a number it ignored.
        config = config.replace(epsilon=math.inf)
    progress = progress or _noop
    t0 = time.perf_counter()
    split = make_split(dataset, config) if split is None else split
    t_split = time.perf_counter() - t0
    rng = method_generator(config.seed, private=spec.uses_epsilon, simulation=config.simulation)
    t0 = time.perf_counter()
    result = spec.fit(dataset, split.train, config, rng, progress)
    t_fit = time.perf_counter() - t0
    progress("evaluate_start", method=config.method)
    t0 = time.perf_counter()
    metrics = evaluate(result.U, result.V, split.train, split.test, split.test_users,
                       dataset.entity_of_user, dataset.entity_names, config.mode, config.top_n)
    t_eval = time.perf_counter() - t0
    timings = {"split": t_split, **result.timings, "fit_total": t_fit, "evaluate": t_eval}
    doc = {
        "config": config.to_dict(),
        "dataset": dataset_summary(dataset),
        "entity_summary": dataset.summary(),
        "method": {"name": spec.name, "label": spec.label, "privacy_model": spec.privacy,
                   "description": spec.description},
        "entities": metrics["entities"],
        "overall": metrics["overall"],
        "privacy": privacy_summary(result, config, spec.uses_epsilon, spec.privacy),
        "messages": [m.to_dict() for m in result.messages],
        "timings": timings,
        "notes": [*dataset.notes, *result.extra.get("notes", [])],
        "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    progress("evaluate_done", method=config.method)
    return doc, result


def run_comparison(
    dataset: FederatedDataset,
    config: RunConfig,
    methods: Iterable[str] = ("central", "individual", "random-v", "popularity"),
    progress: ProgressFn | None = None,
) -> dict[str, dict]:
    """Run ``config.method`` and each of ``methods`` on the same split. Returns {method: document}."""
    split = make_split(dataset, config.validate())
    out = {}
    for name in dict.fromkeys([config.method, *methods]):
        out[name] = run_method(dataset, config.replace(method=name), split, progress)[0]
    return out


def sweep(
    dataset: FederatedDataset,
    config: RunConfig,
    epsilons: Iterable[float],
    seeds: Iterable[int],
    references: Iterable[str] = ("individual", "central", "random-v", "popularity"),
    progress: ProgressFn | None = None,
) -> dict:
    """Privacy–utility sweep (SPEC §4): ``config.method`` over ``epsilons`` × ``seeds`` and each
    reference method once per seed, all methods of a seed on that seed's split.

    Returns ``{"config", "epsilons", "seeds", "runs": [summaries], "summary": {...}}`` where each
    run summary has ``method``, ``epsilon``, ``seed``, ``overall``, ``entities``, ``privacy``.
    """
    config.validate()
    epsilons = [float(e) for e in epsilons]
    seeds = [int(s) for s in seeds]
    if not epsilons:
        raise ConfigError("the ε grid is empty; give at least one ε (inf for non-private)")
    for e in epsilons:
        if math.isnan(e) or e <= 0:
            raise ConfigError(f"every ε of the grid must be positive (or inf), got {e}")
    if not seeds:
        raise ConfigError("give at least one seed")
    spec = get_method(config.method)
    if not spec.uses_epsilon:
        epsilons_run = [math.inf]
    else:
        epsilons_run = epsilons
    references = [r for r in dict.fromkeys(references) if r != config.method]
    for r in references:
        get_method(r)
    total = len(seeds) * (len(epsilons_run) + len(references))
    done = 0
    progress = progress or _noop
    runs = []
    for seed in seeds:
        cfg_seed = config.replace(seed=seed)
        split = make_split(dataset, cfg_seed)
        jobs = [(config.method, e) for e in epsilons_run] + [(r, math.inf) for r in references]
        for method, eps in jobs:
            cfg = cfg_seed.replace(method=method, epsilon=eps)
            doc, _ = run_method(dataset, cfg, split)
            runs.append({
                "method": method, "epsilon": eps, "seed": seed,
                "overall": doc["overall"], "entities": doc["entities"],
                "privacy": {k: doc["privacy"][k] for k in ("epsilon", "delta", "private", "label")},
                "timings": doc["timings"],
            })
            done += 1
            progress("sweep_step", done=done, total=total, method=method, epsilon=eps, seed=seed)
    return {
        "config": config.to_dict(),
        "dataset": dataset_summary(dataset),
        "epsilons": epsilons_run,
        "seeds": seeds,
        "references": references,
        "runs": runs,
        "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


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


def crossing_epsilon(sweep_doc: dict, metric: str = "mar", baseline: str = "individual") -> float | None:
    """The smallest ε of the grid from which the swept method's mean ``metric`` beats ``baseline``'s
    mean at that ε *and every larger one* (so one lucky point does not count). None if never."""
    method = sweep_doc["config"]["method"]
    table = sweep_table(sweep_doc, metric)
    base = [r["mean"] for r in table if r["method"] == baseline]
    if not base:
        raise ConfigError(f"the sweep has no {baseline!r} runs to compare with")
    ref = base[0]
    pts = sorted((r["epsilon"], r["mean"]) for r in table if r["method"] == method)
    better = [(m < ref) if metric in LOWER_IS_BETTER else (m > ref) for _, m in pts]
    crossing = None
    for i in range(len(pts) - 1, -1, -1):
        if not better[i]:
            break
        crossing = pts[i][0]
    return crossing


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


def write_json(doc: dict, path: str | Path) -> Path:
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json_safe(doc), indent=2, allow_nan=False))
    return path
