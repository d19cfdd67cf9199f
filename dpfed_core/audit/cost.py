"""How long an audit will take, said before it runs.

An audit's time is, per (method, ε, target), a fixed part (the targets, the attack fits, the bounds)
plus a part proportional to its runs per class (each run is one release with and one without the
target). Both parts are measured, not modelled: :func:`estimate_audit_seconds` runs the audit's own
code (:func:`~dpfed_core.audit.membership.run_audit`) on **public synthetic data of the audited
entity's shape** (its users, items and non-zero entries; values up to the public bound) at two small
run counts, one target and one ε (a release costs the same at every ε), and extrapolates linearly to
the requested runs, ε grid and targets. Nothing of the entity's rows is read, so the estimate costs
no budget; it takes a few seconds, once per setting in a process.
"""
from __future__ import annotations

import json
import time
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core.audit.defaults import TARGET_LABELS
from dpfed_core.data.dataset import FederatedDataset

#: The two run counts per class the calibration audits are timed at.
CALIBRATION_RUNS = (4, 12)
#: The ε the private methods are calibrated at (a release costs the same at every ε).
CALIBRATION_EPSILON = 1.0


def synthetic_like(n_users: int, n_items: int, nnz: int, value_max: float, n_entities: int) -> FederatedDataset:
    """Public synthetic data of one entity's shape: ``n_users`` × ``n_items`` with ``nnz`` non-zero
    entries (values 1 … ``value_max``, fixed seed) as entity 0, and ``n_entities − 1`` one-user
    entities (an audit simulates the others as empty; their number sets a secure sum's noise split)."""
    rng = np.random.default_rng(0)
    n_users, n_items = max(int(n_users), 2), max(int(n_items), 2)
    density = min(max(int(nnz), n_users) / (n_users * n_items), 1.0)
    X = sp.random(n_users, n_items, density=density, format="csr", random_state=rng,
                  data_rvs=lambda n: rng.integers(1, max(int(value_max), 1) + 1, n).astype(np.float64))
    # every user has at least one entry, as in a loaded dataset
    empty = np.flatnonzero(np.diff(X.indptr) == 0)
    if empty.size:
        X = X + sp.csr_matrix((np.ones(empty.size), (empty, rng.integers(0, n_items, empty.size))),
                              shape=X.shape)
    others = max(int(n_entities) - 1, 0)
    if others:
        X = sp.vstack([X, sp.csr_matrix((np.ones(others), (np.arange(others), np.zeros(others, int))),
                                        shape=(others, n_items))], format="csr")
    entities = np.array(["a"] * n_users + [f"o{i}" for i in range(others)], dtype=object)
    return FederatedDataset.from_parts(X, entities, value_kind="counts", value_max=float(value_max),
                                       name="synthetic calibration")


#: Calibrations of this process, by their settings (each takes about a second; a page reruns often).
_CALIBRATIONS: dict[tuple, tuple[dict, float]] = {}


def _calibrate(shape: tuple[int, int, int], value_max: float, n_entities: int, methods: tuple[str, ...], k: int,
               attacks: tuple[str, ...], with_v: bool, rank: int, lam: float, delta: float, params_json: str,
               aggregation: str, max_dropouts: int, target: str
               ) -> tuple[dict[str, tuple[float, float] | None], float]:
    """Per method (fixed seconds, seconds per run) of one (method, ε, target) on synthetic data of
    ``shape`` (None: no release of it was timed), and the seconds the calibration took."""
    from dpfed_core.audit.membership import run_audit

    ds = synthetic_like(*shape, value_max, n_entities)
    t_start = time.perf_counter()
    timed: dict[str, list[float]] = {m: [] for m in methods}
    # the first audit of a process pays its imports and warm-up: timed at the smaller count twice, the
    # first discarded, so that they do not read as a cost per audit
    for i, r in enumerate((CALIBRATION_RUNS[0], *CALIBRATION_RUNS)):
        doc = run_audit(ds, 0, methods=list(methods), epsilons=[CALIBRATION_EPSILON], delta=delta, k=k,
                        prototype_params=json.loads(params_json) or None, targets=[target], runs=r,
                        attacks=list(attacks), with_v=with_v, rank=rank, lam=lam, seed=0, aggregation=aggregation,
                        max_dropouts=max_dropouts)
        if i == 0:
            continue
        seen = set()
        for row in doc["results"]:  # one row per attack: each (method, ε, target) once
            key = (row["method"], row["requested_epsilon"], row["target"])
            if key not in seen:
                seen.add(key)
                timed[row["method"]].append(float(row["seconds"]))
    r0, r1 = CALIBRATION_RUNS
    out = {}
    for m, times in timed.items():
        if len(times) != 2:  # the audit timed no release of this method: nothing to extrapolate
            out[m] = None
            continue
        t0, t1 = times
        slope = (t1 - t0) / (r1 - r0)
        if slope <= 0:  # timing noise above a small audit's cost per run: proportional to the larger one
            out[m] = (0.0, t1 / r1)
        else:
            out[m] = (max(t0 - slope * r0, 0.0), slope)
    return out, time.perf_counter() - t_start


def estimate_audit_seconds(shape: tuple[int, int, int], value_max: float, n_entities: int, *,
                           methods: Sequence[str], epsilons: Sequence[float], n_targets: int, runs: int, k: int,
                           attacks: Sequence[str], with_v: bool = False, rank: int = 10, lam: float = 0.1,
                           delta: float = 1e-6, prototype_params: dict | None = None, aggregation: str = "none",
                           max_dropouts: int = 0, power_check: bool = False, target: str = "synthetic") -> dict:
    """Predicted seconds of an audit of an entity of ``shape`` = (users, items, non-zeros) — see the
    module docstring. Returns ``{"seconds", "calibration_seconds", "jobs"}`` (``seconds``: None when a
    method's releases could not be timed; ``jobs``: the
    audit's (method, ε) pairs times its targets; ``calibration_seconds``: 0 when this process had
    calibrated these settings already). ``power_check``: every private summable (method, ε) also
    runs a power check (one more target's worth of runs). ``target``: the kind of target timed (the
    audit's first; a specific user, absent from synthetic data, is timed as ``typical``)."""
    from dpfed_core.audit.membership import auditable_methods, is_summable

    registry = auditable_methods()
    methods = tuple(dict.fromkeys(methods))
    grid = [float(e) for e in epsilons]
    key = (tuple(int(x) for x in shape), float(value_max), int(n_entities), methods, int(k), tuple(attacks),
           bool(with_v), int(rank), float(lam), float(delta), json.dumps(prototype_params or {}, sort_keys=True),
           str(aggregation), int(max_dropouts), target if target in TARGET_LABELS else "typical")
    cached = key in _CALIBRATIONS
    parts, took = _CALIBRATIONS[key] if cached else _calibrate(*key)
    if not cached and all(p is not None for p in parts.values()):
        if len(_CALIBRATIONS) >= 32:
            _CALIBRATIONS.pop(next(iter(_CALIBRATIONS)))
        _CALIBRATIONS[key] = (parts, took)
    total, jobs = 0.0, 0
    for m in methods:
        if parts[m] is None:
            total = None
        fixed, slope = parts[m] or (0.0, 0.0)
        private = bool(getattr(registry[m], "private", False))
        n_jobs = (len(grid) if private else 1) * int(n_targets)
        if power_check and private and is_summable(m):
            n_jobs += sum(1 for e in grid if np.isfinite(e))
        jobs += n_jobs
        if total is not None:
            total += n_jobs * (fixed + slope * int(runs))
    return {"seconds": total, "calibration_seconds": 0.0 if cached else took,
            "jobs": jobs}


def estimate_for_entity(dataset: FederatedDataset, entity: str | int, **settings) -> dict:
    """:func:`estimate_audit_seconds` for ``entity`` of ``dataset`` (its shape, the data's public value
    bound and number of entities), with ``n_users`` and ``n_items`` added for the sentence stating it."""
    h = dataset.entity_index(entity)
    Xh = dataset.X[dataset.entity_slices()[h]]
    est = estimate_audit_seconds((Xh.shape[0], Xh.shape[1], Xh.nnz), float(dataset.value_max), dataset.n_entities,
                                 **settings)
    return {**est, "n_users": int(Xh.shape[0]), "n_items": int(Xh.shape[1])}


def estimate_phrase(est: dict, runs: int) -> str:
    """"about 2 min for 21 audits of 200 runs per class, timed on …": :func:`estimate_for_entity`'s
    estimate as the CLI and the Privacy audit page state it."""
    from dpfed_core.evaluation.cost import estimate_with_load

    return (f"{estimate_with_load(est['seconds'])} for {est['jobs']} audit{'s' if est['jobs'] != 1 else ''} of "
            f"{runs} runs per class, timed on a short audit of synthetic data of this entity's shape "
            f"({est['n_users']:,} users × {est['n_items']:,} items)")
