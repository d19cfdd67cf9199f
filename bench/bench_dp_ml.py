"""Privacy–utility of ``dp-prototypes`` on MovieLens 100K (ZIP-first-digit entities) and the eICU
demo (issue 3, item 5): MAR (lower is better, 0.5 = random) vs ε for DP variants, with
``individual``, ``central``, ``kmeans`` and ``random-v`` as references, and the crossing ε (smallest
ε at which the DP method beats ``individual``). Also times the prototypes of all ML100K entities.

Real data is read from ../shared/data (or $DPFED_SHARED_DATA) and never written anywhere.

    .venv/bin/python bench/bench_dp_ml.py [--seeds 2] [--data ml100k,eicu-region,eicu-hospital]

Writes bench/results/dp_ml.json and bench/results/dp_ml.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.dp_prototypes import DPPrototypes  # noqa: E402
from dpfed_core.experiments import make_split, run_method  # noqa: E402
from dpfed_core.ledger import PrivacyLedger  # noqa: E402
from dpfed_core.loaders import load_eicu, load_movielens  # noqa: E402

DATA = Path(os.environ.get("DPFED_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
RESULTS = Path(__file__).resolve().parent / "results"

VARIANTS = {
    "paper": dict(server_weighting="none", prototype_params={}),
    "paper+counts": dict(server_weighting="counts", prototype_params={}),
    "gaussian+counts": dict(server_weighting="counts", prototype_params={"variant": "gaussian"}),
}


def load(name: str):
    if name == "ml100k":
        return load_movielens(DATA / "ml-100k", federation="zip")
    if name == "eicu-region":
        return load_eicu(DATA / "eicu-demo", entity="region")
    if name == "eicu-hospital":
        return load_eicu(DATA / "eicu-demo", entity="hospital")
    raise SystemExit(f"unknown data {name}")


def time_all_entities(ds, k: int, eps: float = 1.0) -> float:
    t0 = time.perf_counter()
    ledger = PrivacyLedger(eps, 1e-6)
    for h, sl in enumerate(ds.entity_slices()):
        DPPrototypes(k=k, value_max=ds.value_max, epsilon=eps, delta=1e-6).release(
            ds.X[sl], np.random.default_rng(h), ledger.for_entity(ds.entity_names[h]))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--data", default="ml100k")
    ap.add_argument("--eps", default="0.1,0.5,1,2,5,10,inf")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    eps_grid = [float(e) for e in args.eps.split(",")]
    doc = {"k": args.k, "seeds": args.seeds, "epsilons": eps_grid, "datasets": {}}
    md = ["# dp-prototypes: privacy–utility on real data", "",
          f"k = {args.k}, rank 10, λ = 0.1, mode zero, δ = 1e-6, {args.seeds} seeds; metric MAR "
          "(overall, lower is better). Crossing ε = smallest ε whose mean MAR beats `individual`.", ""]
    for name in args.data.split(","):
        ds = load(name)
        entry = {"entities": ds.n_entities, "users": ds.n_users, "items": ds.n_items,
                 "time_all_entities_s": time_all_entities(ds, args.k), "refs": {}, "dp": {}}
        res: dict[tuple[str, float], list[float]] = {}
        for seed in range(args.seeds):
            base = RunConfig(k=args.k, seed=seed, delta=1e-6)
            split = make_split(ds, base)
            for ref in ("individual", "central", "kmeans", "random-v"):
                d, _ = run_method(ds, base.replace(method=ref), split)
                res.setdefault((ref, math.inf), []).append(d["overall"]["mar"])
            for v in args.variants.split(","):
                for e in eps_grid:
                    cfg = base.replace(method="dp-prototypes", epsilon=e, **VARIANTS[v])
                    d, _ = run_method(ds, cfg, split)
                    res.setdefault((v, e), []).append(d["overall"]["mar"])
                    print(name, seed, v, e, round(d["overall"]["mar"], 4), flush=True)
        for (meth, e), vals in res.items():
            target = entry["refs"] if meth in ("individual", "central", "kmeans", "random-v") else entry["dp"].setdefault(meth, {})
            key = meth if target is entry["refs"] else str(e)
            target[key] = {"mean": float(np.mean(vals)), "sd": float(np.std(vals)), "values": vals}
        ind = entry["refs"]["individual"]["mean"]
        entry["crossing_epsilon"] = {v: next((e for e in eps_grid if entry["dp"][v][str(e)]["mean"] < ind), None)
                                     for v in entry["dp"]}
        doc["datasets"][name] = entry
        md += [f"## {name}: {ds.n_entities} entities, {ds.n_users} users × {ds.n_items} items", "",
               f"Prototypes of all entities together (k={args.k}, ε=1): {entry['time_all_entities_s']:.2f} s", "",
               "| reference | MAR |", "|---|---|"]
        md += [f"| {r} | {v['mean']:.4f} ± {v['sd']:.4f} |" for r, v in entry["refs"].items()]
        md += ["", "| variant | " + " | ".join(f"ε={e:g}" for e in eps_grid) + " | crossing ε |",
               "|---|" + "---|" * (len(eps_grid) + 1)]
        for v, byeps in entry["dp"].items():
            md.append(f"| {v} | " + " | ".join(f"{byeps[str(e)]['mean']:.4f}" for e in eps_grid)
                      + f" | {entry['crossing_epsilon'][v]} |")
        md.append("")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dp_ml.json").write_text(json.dumps(doc, indent=1))
    (RESULTS / "dp_ml.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
