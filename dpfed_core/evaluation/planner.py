"""The ε planner: what ε a target utility needs, and how many users per entity
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
    """The ε planner: the smallest finite ε of the sweep whose mean ``metric`` is within ``tolerance``
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
    good = ((pts["mean"] <= target) if lower else (pts["mean"] >= target)).to_numpy()
    finite = np.isfinite(pts["epsilon"].to_numpy())
    eps = None
    # smallest ε from which the target holds at that ε and every larger one (one lucky point does not count);
    # ε = ∞ must hold too but is never the answer: it is no privacy, not a plan of it
    for i in range(len(good) - 1, -1, -1):
        if not good[i]:
            break
        if finite[i]:
            eps = float(pts["epsilon"].iloc[i])
    return {"epsilon": eps, "reference": ref_name, "reference_value": ref, "target": target,
            "values": pts[["epsilon", "mean", "sd"]].to_dict("records"), "any": bool((good & finite).any())}


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
    if len(set(seeds)) < 2:
        # the answer is where advantage − sd crosses zero: one seed has no spread, and a spread of 0
        # would state a size the noise has not been measured against
        from dpfed_core.errors import ConfigError

        raise ConfigError(f"the users planner needs at least two different seeds (it subtracts the advantage's "
                          f"spread over seeds), got {seeds}", param="seeds")
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
    """:func:`_users_to_pay`, with the measured points it read (``"points"``: users, advantage, sd), so
    that every answer can be stated with its effect sizes."""
    out = dict(_users_to_pay(points, metric))
    out["points"] = [{"users": p["users"], "advantage": p["advantage"], "sd": p.get("sd", 0.0) or 0.0}
                     for p in sorted(points, key=lambda p: p["users"]) if math.isfinite(p["advantage"])]
    return out


def _users_to_pay(points: list[dict], metric: str = "mar") -> dict:
    """From (users per entity, federated − ``local`` advantage ± sd over seeds) measured on synthetic
    federations, the size where the federation starts — or stops — beating ``local``. "Beats" is the
    benchmark's rule: the mean advantage exceeds its sd over seeds (a point inside its own noise does
    not pay). The crossing of advantage − sd through 0 is interpolated on a log scale of users inside
    the measured range, or extrapolated beyond it (labelled as such); None when the sizes that pay
    admit no single threshold or the trend does not point to one.

    ``points``: ``{"users": users per entity, "advantage": mean over seeds (> 0 = federation
    better), "sd": its sd over seeds (0 when absent)}``. Returns ``{"users": float | None, "how":
    str, "direction": "from" | "up to" | None}`` — "from": the federation beats ``local`` at this size
    and above; "up to": at this size and below (larger entities do as well alone).
    """
    pts = sorted((p for p in points if math.isfinite(p["advantage"])), key=lambda p: p["users"])
    if len(pts) < 2:
        return {"users": None, "how": "too few subsample points", "direction": None}
    x = np.log(np.array([p["users"] for p in pts], float))
    y = np.array([p["advantage"] for p in pts], float)
    sd = np.array([p.get("sd", 0.0) or 0.0 for p in pts], float)
    z = y - np.where(np.isfinite(sd), sd, 0.0)  # > 0: beats local by more than its spread over seeds
    pays = z > 0

    def cross(i: int) -> float:  # z changes sign between points i and i + 1
        t = -z[i] / (z[i + 1] - z[i])
        return float(np.exp(x[i] + t * (x[i + 1] - x[i])))

    if pays.all():
        return {"users": float(pts[0]["users"]), "how": "pays at every size measured, from the smallest",
                "direction": "from"}
    paying = np.flatnonzero(pays)
    if pays[0] or pays[-1]:  # one range from an end: the threshold is where it ends
        if paying[-1] - paying[0] + 1 != paying.size:
            return {"users": None, "how": "the sizes that pay are not one range (" + _sizes(pts, pays) + ")",
                    "direction": None}
        if pays[-1]:
            return {"users": cross(int(paying[0]) - 1), "how": "interpolated", "direction": "from"}
        return {"users": cross(int(paying[-1])), "how": "interpolated; larger entities do as well alone",
                "direction": "up to"}
    if pays.any():
        return {"users": None, "how": "pays only at " + _sizes(pts, pays) + " users per entity", "direction": None}
    slope, icpt = np.polyfit(x, z, 1)
    # a flat trend fits a slope of rounding size (1e-19 for a constant advantage): its crossing is
    # beyond any number of users, not a size to state
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        users = float(np.exp(-icpt / slope)) if slope > 0 else math.nan
    if not math.isfinite(users):
        return {"users": None, "how": "the advantage does not grow with more users on these data "
                "(it never beats local by more than its sd over seeds here)", "direction": None}
    return {"users": users, "how": "extrapolated (log-linear fit beyond the data)", "direction": "from"}


def _sizes(pts: list[dict], pays: np.ndarray) -> str:
    return ", ".join(f"{p['users']:g}" for p, ok in zip(pts, pays) if ok)


def users_to_pay_sentence(estimate: dict, epsilon_text: str, mode: str) -> str:
    """The planner's answer in words (Markdown), with the observation mode of the synthetic runs."""
    head = f"At ε = {epsilon_text}"
    pts = estimate.get("points") or []
    measured = ("" if not pts else " Measured (advantage over local ± its sd over seeds; inside its sd: "
                "inconclusive): " + ", ".join(f"{p['users']:,.0f} users {p['advantage']:+.2g} ± {p['sd']:.2g}"
                                              for p in pts) + ".")
    if estimate.get("users") is None:
        return f"{head}: no size found — {estimate['how']}.{measured}"
    n = f"**{estimate['users']:,.0f} users per entity**"
    where = "up to about" if estimate.get("direction") == "up to" else "from about"
    return (f"{head} the federation beats local (by more than its sd over seeds) {where} {n} "
            f"({estimate['how']}; synthetic federations, observation mode {mode}).{measured}")
