"""Engine speed on MovieLens 100K (the targets), end to end as a user runs it.

* one ``kmeans`` federation run (load excluded, split + round 1 + server + round 2 + evaluation):
  target < 3 s;
* all six comparison methods (central, individual, kmeans, krandom, random-v, popularity) on one
  split: target < 15 s.

Best of ``--repeats`` wall-clock runs on this machine; writes ``bench/results/engine.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.evaluation.experiments import make_split, run_method  # noqa: E402
from dpfed_core.data.movielens import load_movielens  # noqa: E402

METHODS = ["central", "individual", "kmeans", "krandom", "random-v", "popularity"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "ml-100k"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one repeat")
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats

    t0 = time.perf_counter()
    ds = load_movielens(args.data)
    t_load = time.perf_counter() - t0
    cfg = RunConfig(method="kmeans", k=50, rank=10, mode="zero", seed=0)

    single, per_method, total, mar = [], {m: [] for m in METHODS}, [], {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        doc, _ = run_method(ds, cfg)
        single.append(time.perf_counter() - t0)
        t_all = time.perf_counter()
        split = make_split(ds, cfg)
        for m in METHODS:
            t0 = time.perf_counter()
            d, _ = run_method(ds, cfg.replace(method=m), split)
            per_method[m].append(time.perf_counter() - t0)
            mar[m] = d["overall"]["mar"]
        total.append(time.perf_counter() - t_all)

    res = {
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "data": ds.name, "load_seconds": t_load, "repeats": repeats,
        "kmeans_run_seconds_best": min(single), "kmeans_run_target": 3.0,
        "six_methods_seconds_best": min(total), "six_methods_target": 15.0,
        "per_method_seconds_best": {m: min(v) for m, v in per_method.items()},
        "overall_mar": mar,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "engine.json").write_text(json.dumps(res, indent=2))
    lines = [
        "# Engine speed — MovieLens 100K, ZIP federation, zero mode, rank 10, k = 50, seed 0",
        "",
        f"Best of {repeats} runs on {res['machine']['cpus']} cores (Python {res['machine']['python']}).",
        f"Loading the data: {t_load:.2f} s (not included below).",
        "",
        "| what | seconds | target | met |",
        "|---|---|---|---|",
        f"| one `kmeans` federation run (split, round 1, server, round 2, evaluation) | {min(single):.2f} | < 3 | {'yes' if min(single) < 3 else 'NO'} |",
        f"| all six comparison methods on one split | {min(total):.2f} | < 15 | {'yes' if min(total) < 15 else 'NO'} |",
        "",
        "| method | seconds | overall MAR |",
        "|---|---|---|",
        *[f"| {m} | {min(per_method[m]):.2f} | {mar[m]:.4f} |" for m in METHODS],
        "",
    ]
    (out / "engine.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
