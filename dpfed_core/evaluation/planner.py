"""The ε planner (issue 23, issue 21): what ε a target utility needs, and how many users per entity
make the federation beat the entities on their own (``local``) at an ε — computed on synthetic data
built from public parameters only (the federation's shape, the public catalogue's size, the value
bound, and the assumptions the analyst types), never on the private rows: a planner that looked at
them would be an uncharged release.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Iterable

import numpy as np

from dpfed_core.config import RunConfig
from dpfed_core.evaluation.experiments import LOWER_IS_BETTER, run_method, sweep_table

def epsilon_for_utility(sweep_doc: dict, metric: str, tolerance: float, reference: str = "central") -> dict:
    """The ε planner: the smallest ε of the sweep whose mean ``metric`` is within ``tolerance``
    (a fraction, e.g. 0.05) of the reference's mean (``central``, or the swept method at ε = ∞ when
    central was not run). Returns ``{"epsilon": float | None, "reference", "target", "values"}``."""
    import pandas as pd

    table = pd.DataFrame(sweep_table(sweep_doc, metric))
    method = sweep_doc["config"]["method"]
    ref_rows = table[table["method"] == reference]
    ref_name = reference
    if ref_rows.empty:
        ref_rows = table[(table["method"] == method) & np.isinf(table["epsilon"])]
        ref_name = f"{method} at ε = ∞"
    if ref_rows.empty:
        return {"epsilon": None, "reference": None, "target": None, "values": []}
    ref = float(ref_rows["mean"].iloc[0])
    lower = metric in LOWER_IS_BETTER
    target = ref * (1 + tolerance) if lower else ref * (1 - tolerance)
    pts = table[(table["method"] == method)].sort_values("epsilon")
    ok = pts[(pts["mean"] <= target) if lower else (pts["mean"] >= target)]
    eps = None
    # smallest ε from which the target holds at that ε and every larger one (one lucky point does not count)
    good = ((pts["mean"] <= target) if lower else (pts["mean"] >= target)).to_numpy()
    for i in range(len(good) - 1, -1, -1):
        if not good[i]:
            break
        eps = float(pts["epsilon"].iloc[i])
    return {"epsilon": eps, "reference": ref_name, "reference_value": ref, "target": target,
            "values": pts[["epsilon", "mean", "sd"]].to_dict("records"), "any": not ok.empty}


def users_needed(config: RunConfig, *, n_entities: int, n_items: int, value_max: float,
                 interactions_per_user: float = 20.0, users_grid: Iterable[int] = (50, 100, 200, 400, 800),
                 seeds: Iterable[int] = (0, 1), metric: str = "mar",
                 progress: Callable[..., None] | None = None) -> dict:
    """How many users per entity make ``config.method`` at ``config.epsilon`` beat ``local``.

    Synthetic federations (:func:`~dpfed_core.data.synthetic.make_poisson`, generated: no one's
    records, so its simulation runs charge nothing) with the public shape — ``n_entities``,
    ``n_items``, ``value_max`` — and the analyst's assumption of ``interactions_per_user``, at each
    size of ``users_grid``; per seed the method (simulation noise) and ``local`` on the same split.
    Returns ``{"points": [{"users", "advantage", "sd"}], "estimate": users_to_pay(…), "mode",
    "assumptions"}``; advantage > 0 = the federation better (lower MAR)."""
    from dpfed_core.data.synthetic import make_poisson

    progress = progress or (lambda *a, **k: None)
    seeds = list(seeds)
    grid = [int(u) for u in users_grid]
    density = min(0.9, max(1e-4, float(interactions_per_user) / max(int(n_items), 1)))
    points, done, total = [], 0, len(grid) * len(seeds) * 2
    for users in grid:
        adv = []
        for sd in seeds:
            ds = make_poisson(n_users=users * int(n_entities), n_items=int(n_items), n_entities=int(n_entities),
                              density=density, value_max=float(value_max), sizes="uniform", rng=int(sd),
                              name=f"planner: {users} users × {n_entities} entities")
            # the generator's item list is public by construction (no DP catalogue selection needed)
            ds = dataclasses.replace(ds, item_source="declared")
            vals = {}
            for method in (config.method, "local"):
                cfg = config.replace(method=method, seed=int(sd), simulation=True,
                                     epsilon=config.epsilon if method == config.method else math.inf)
                vals[method] = run_method(ds, cfg)[0]["overall"][metric]
                done += 1
                progress("planner_step", done=done, total=total)
            d = vals["local"] - vals[config.method]
            adv.append(d if metric in LOWER_IS_BETTER else -d)
        points.append({"users": float(users), "advantage": float(np.mean(adv)),
                       "sd": float(np.std(adv, ddof=1)) if len(adv) > 1 else 0.0})
    return {"points": points, "estimate": users_to_pay(points, metric), "mode": config.mode,
            "assumptions": {"entities": int(n_entities), "items": int(n_items), "value bound": float(value_max),
                            "interactions per user": float(interactions_per_user),
                            "model": "paper §5.1 Poisson factors, equal entity sizes"}}


def users_to_pay(points: list[dict], metric: str = "mar") -> dict:
    """From (users per entity, federated − ``local`` advantage) measured on synthetic federations, where the
    advantage crosses zero: interpolated inside the measured range, or extrapolated on a log scale of
    users (labelled as such), or None when the trend does not point to a crossing.

    ``points``: ``{"users": median users per entity, "advantage": mean over seeds (> 0 = federation
    better), "sd": ...}``.
    """
    pts = sorted((p for p in points if math.isfinite(p["advantage"])), key=lambda p: p["users"])
    if len(pts) < 2:
        return {"users": None, "how": "too few subsample points"}
    x = np.log(np.array([p["users"] for p in pts], float))
    y = np.array([p["advantage"] for p in pts], float)
    if y[-1] > 0 and y[0] > 0:
        return {"users": float(pts[0]["users"]), "how": "already pays at the smallest size measured"}
    for i in range(len(pts) - 1):
        if y[i] <= 0 < y[i + 1]:
            t = -y[i] / (y[i + 1] - y[i])
            return {"users": float(np.exp(x[i] + t * (x[i + 1] - x[i]))), "how": "interpolated"}
    slope, icpt = np.polyfit(x, y, 1)
    if slope <= 0:
        return {"users": None, "how": "the advantage does not grow with more users on these data"}
    u = float(np.exp(-icpt / slope))
    return {"users": u, "how": "extrapolated (log-linear fit beyond the data)"}


