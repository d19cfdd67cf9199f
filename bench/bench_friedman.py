"""Reproduction of Friedman, Berkovsky & Kaafar (2016) on MovieLens 100K with **their** protocol:
random folds over ratings (k-fold cross-validation), RMSE on the held-out fold, predictions clamped
to [1, 5], every private method's RMSE against the *total* ε.

Checks:

* the non-private baselines of their Table 3 (GA 1.1256, IA 1.0278, GE 0.9571, clean MF 0.9198)
  within ±0.02;
* the crossing ε of their Table 4 for 100K (bounded): the smallest ε from which a private method's
  mean RMSE stays below the IA (resp. GE) RMSE — PGE 0.5 (IA); ISGD 2 / 5; PSGD 2 / 20; PALS 2 / 19 —
  within a factor of 2. With ``--unbounded`` also Table 5 (PGE 1.4; ISGD 4.8 / 12.5; PSGD 5.5 / 60;
  PALS 5.7 / 20), reported but not checked.

The crossing is reported on the grid (smallest grid ε from which the curve stays below) and
log-linearly interpolated between the last grid point above and the first below.

Usage::

    .venv/bin/python bench/bench_friedman.py [--folds 10] [--runs 1] [--quick] [--unbounded]
        [--data ../shared/data/ml-100k]

Writes bench/results/friedman.json and bench/results/friedman.md.
"""
from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpfed_core.methods.comparison.friedman import (  # noqa: E402
    FriedmanMF, Ratings, exact_global_effects, global_average, item_average)
from _common import write_results  # noqa: E402
from dpfed_core.data.movielens import load_movielens  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"

#: Table 3 (100K column) and Tables 4/5 (100K column) of the paper.
PAPER_BASELINES = {"GA": 1.1256, "IA": 1.0278, "GE": 0.9571, "MF": 0.9198}
PAPER_BOUNDED = {"ge": (0.5, None), "isgd": (2, 5), "psgd": (2, 20), "pals": (2, 19)}
PAPER_UNBOUNDED = {"ge": (1.4, None), "isgd": (4.8, 12.5), "psgd": (5.5, 60), "pals": (5.7, 20)}
#: Table 3 hyper-parameters for 100K: d = 3, λ = 0.06, 10 ALS iterations.
D, LAM = 3, 0.06
GRID = [0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0]
QUICK_GRID = [0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
LABELS = {"ge": "Private global effects", "isgd": "Input perturbation (ISGD)",
          "psgd": "Stochastic gradient perturbation (PSGD)", "pals": "ALS with output perturbation (PALS)"}


def rmse(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.clip(pred, 1.0, 5.0) - truth) ** 2)))


def crossing(eps: list[float], curve: list[float], ref: float) -> tuple[float | None, float | None]:
    """(grid crossing, log-interpolated crossing): smallest ε from which the curve stays < ref."""
    below = [c < ref for c in curve]
    grid = None
    for k in range(len(eps) - 1, -1, -1):
        if not below[k]:
            break
        grid = eps[k]
    if grid is None:
        return None, None
    k = eps.index(grid)
    if k == 0:
        return grid, grid
    # Interpolate log ε linearly in RMSE between the last point above and the first below.
    e0, e1, c0, c1 = math.log(eps[k - 1]), math.log(eps[k]), curve[k - 1], curve[k]
    t = (c0 - ref) / (c0 - c1) if c0 != c1 else 1.0
    return grid, float(math.exp(e0 + t * (e1 - e0)))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--folds", type=int, default=10, help="k of the k-fold split over ratings")
    ap.add_argument("--use-folds", type=int, default=None, help="evaluate only the first N folds")
    ap.add_argument("--runs", type=int, default=1, help="repetitions with different noise seeds")
    ap.add_argument("--quick", action="store_true", help="coarse ε grid, 3 folds")
    ap.add_argument("--unbounded", action="store_true", help="also run the unbounded (existence) variants")
    ap.add_argument("--unbounded-folds", type=int, default=2)
    ap.add_argument("--beta", type=float, default=15.0, help="β_m = β_u (not given in the paper)")
    ap.add_argument("--out", default=str(RESULTS / "friedman"))
    args = ap.parse_args(argv)
    grid = QUICK_GRID if args.quick else GRID
    use = args.use_folds or (3 if args.quick else args.folds)

    t_start = time.perf_counter()
    data = load_movielens(args.data)
    R = Ratings.from_matrix(data.X)
    fold_of = np.random.default_rng(2016).permutation(R.n) % args.folds

    def subset(mask):
        return Ratings(R.users[mask], R.items[mask], R.values[mask], R.n_users, R.n_items)

    base = {k: [] for k in PAPER_BASELINES}
    curves: dict[str, dict[str, dict[float, list[float]]]] = {"bounded": {}, "unbounded": {}}
    timing: dict[str, float] = {}
    for f in range(use):
        tr, te = subset(fold_of != f), subset(fold_of == f)
        base["GA"].append(rmse(np.full(te.n, global_average(tr)), te.values))
        base["IA"].append(rmse(item_average(tr)[te.items], te.values))
        ge = exact_global_effects(tr)
        base["GE"].append(rmse(ge.item_avg[te.items] + ge.user_avg[te.users], te.values))
        mf = FriedmanMF("als", math.inf, factors=D, lam=LAM, iterations=10, random_state=f).fit(tr)
        base["MF"].append(rmse(mf.predict(te.users, te.items), te.values))
        variants = ["bounded"] + (["unbounded"] if args.unbounded and f < args.unbounded_folds else [])
        for variant in variants:
            for algo in ("ge", "isgd", "psgd", "pals"):
                t0 = time.perf_counter()
                for eps in grid:
                    for run in range(args.runs):
                        m = FriedmanMF(algo, eps, variant=variant, factors=D, lam=LAM, beta_m=args.beta,
                                       beta_u=args.beta, random_state=[f, run, int(eps * 1000)]).fit(tr)
                        curves[variant].setdefault(algo, {}).setdefault(eps, []).append(
                            rmse(m.predict(te.users, te.items), te.values))
                timing[f"{variant}/{algo}"] = timing.get(f"{variant}/{algo}", 0.0) + time.perf_counter() - t0
        print(f"fold {f + 1}/{use} done ({time.perf_counter() - t_start:.0f} s)", flush=True)

    base_mean = {k: float(np.mean(v)) for k, v in base.items()}
    base_sd = {k: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0 for k, v in base.items()}
    rows = []
    for variant, paper in (("bounded", PAPER_BOUNDED), ("unbounded", PAPER_UNBOUNDED)):
        for algo, by_eps in curves[variant].items():
            eps_list = sorted(by_eps)
            curve = [float(np.mean(by_eps[e])) for e in eps_list]
            for which, ref_key, paper_val in (("IA", "IA", paper[algo][0]), ("GE", "GE", paper[algo][1])):
                if paper_val is None and algo == "ge":
                    continue
                g, interp = crossing(eps_list, curve, base_mean[ref_key])
                # Diagnostic: where our curve crosses the paper's own baseline RMSE (Table 3), which
                # separates "our private curve differs" from "our baseline differs".
                _, interp_paper_ref = crossing(eps_list, curve, PAPER_BASELINES[ref_key])
                ratio = (interp / paper_val) if (interp is not None and paper_val) else None
                rows.append({"variant": variant, "method": algo, "baseline": which, "paper": paper_val,
                             "ours_grid": g, "ours_interp": interp, "ratio": ratio,
                             "within_factor_2": (ratio is not None and 0.5 <= ratio <= 2.0),
                             "ours_interp_vs_paper_baseline": interp_paper_ref})
    doc = {
        "dataset": {"name": "MovieLens 100K", "ratings": R.n, "users": R.n_users, "items": R.n_items},
        "protocol": {"folds": args.folds, "folds_used": use, "runs": args.runs, "grid": grid,
                     "d": D, "lambda": LAM, "beta_m": args.beta, "beta_u": args.beta,
                     "unbounded_folds": args.unbounded_folds if args.unbounded else 0,
                     "clamp_predictions": [1, 5]},
        "baselines": {"ours_mean": base_mean, "ours_sd": base_sd, "paper": PAPER_BASELINES,
                      "within_0.02": {k: abs(base_mean[k] - PAPER_BASELINES[k]) <= 0.02 for k in base_mean},
                      # the MF gain over global effects, per fold, next to the paper's
                      "mf_gain": {"ours_mean": float(np.mean(np.subtract(base["GE"], base["MF"]))),
                                  "ours_sd": float(np.std(np.subtract(base["GE"], base["MF"]), ddof=1))
                                  if len(base["MF"]) > 1 else 0.0,
                                  "paper": PAPER_BASELINES["GE"] - PAPER_BASELINES["MF"]}},
        "curves": {v: {a: {str(e): float(np.mean(x)) for e, x in sorted(c.items())} for a, c in cs.items()}
                   for v, cs in curves.items()},
        "crossings": rows,
        "timings_s": timing,
        "total_s": time.perf_counter() - t_start,
        "machine": platform.platform(),
    }
    write_results(args.out, doc, markdown(doc))
    return doc


def _f(x, nd=3):
    return "–" if x is None else (f"{x:.{nd}g}" if isinstance(x, float) else str(x))


def markdown(doc: dict) -> str:
    p = doc["protocol"]
    b = doc["baselines"]
    L = ["# Friedman, Berkovsky & Kaafar (2016) on MovieLens 100K — ours vs theirs", "",
         f"Protocol: {p['folds']}-fold CV over ratings ({p['folds_used']} folds evaluated, {p['runs']} noise "
         f"run(s) per fold), RMSE on the held-out fold, predictions clamped to [1, 5]; d = {p['d']}, "
         f"λ = {p['lambda']}, β_m = β_u = {p['beta_m']} (β not given in the paper); budget split "
         "0.01/0.14/0.01/0.14/0.70 (MF) and 0.01/0.54/0.01/0.44 (private GE). Generated by "
         "`bench/bench_friedman.py`.", "",
         "## Non-private baselines (their Table 3)", "",
         "| baseline | ours (mean ± sd over folds) | paper | |Δ| ≤ 0.02 |", "|---|---|---|---|"]
    names = {"GA": "Global average", "IA": "Item average", "GE": "Global effects", "MF": "Clean MF (ALS-WR, d=3)"}
    for k in ("GA", "IA", "GE", "MF"):
        L.append(f"| {names[k]} | {b['ours_mean'][k]:.4f} ± {b['ours_sd'][k]:.4f} | {b['paper'][k]:.4f} | "
                 f"{'yes' if b['within_0.02'][k] else 'NO'} |")
    g = b.get("mf_gain")
    if g:
        L += ["", f"**What the ±0.02 check does not cover:** the gain of clean MF over global effects (GE − MF, per "
              f"fold) is **{g['ours_mean']:.3f} ± {g['ours_sd']:.3f}** here against **{g['paper']:.3f}** in the paper "
              f"({100 * g['ours_mean'] / g['paper']:.0f} % of it): every baseline is within ±0.02 of the paper, but the "
              "improvement MF brings — the quantity the private MF methods compete for — is much smaller, so the "
              "crossing ε of the MF methods against GE are not comparable with Table 4's."]
    for variant, title in (("bounded", "Table 4 (bounded, \"value\" DP)"),
                           ("unbounded", "Table 5 (unbounded, \"existence\" DP)")):
        rows = [r for r in doc["crossings"] if r["variant"] == variant]
        if not rows:
            continue
        L += ["", f"## Crossing ε, their {title}", "",
              "Smallest total ε from which the private method's mean RMSE stays below the non-private "
              "baseline's (ours: on our ε grid / log-interpolated). Last column: where our curve crosses "
              "the paper's Table 3 baseline RMSE instead of ours (a diagnostic, not the check).", "",
              "| method | crosses | paper ε | ours ε (grid) | ours ε (interp.) | ours/paper | within ×2 "
              "| ours ε vs the paper's baseline RMSE |",
              "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            L.append(f"| {LABELS[r['method']]} | {r['baseline']} | {_f(r['paper'])} | {_f(r['ours_grid'])} | "
                     f"{_f(r['ours_interp'])} | {_f(r['ratio'], 2)} | "
                     f"{'yes' if r['within_factor_2'] else 'NO'} | {_f(r['ours_interp_vs_paper_baseline'])} |")
    L += ["", "## Mean RMSE per ε", ""]
    for variant, cs in doc["curves"].items():
        if not cs:
            continue
        eps = list(next(iter(cs.values())).keys())
        L += [f"**{variant}**", "", "| method | " + " | ".join(eps) + " |", "|---|" + "---|" * len(eps)]
        for a, c in cs.items():
            L.append(f"| {a} | " + " | ".join(f"{c[e]:.4f}" for e in eps) + " |")
        L.append("")
    L.append(f"Total time {doc['total_s']:.0f} s on {doc['machine']}.")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    main()
