"""The cost model's measurements: seconds per stage of one run, per (method, mode), on data of
different shapes (users, items, entities, interactions), and the noise coordinates a DP run draws.

Each method runs once (simulation mode, the dashboard's configuration otherwise) on the bundled clinic
sample by hospital and by region, the synthetic sample, the eICU demo by hospital and by region, and
MovieLens 100K by ZIP digit and by occupation in zero mode; in observed mode (what the CLI and the
pages choose for ratings) on MovieLens by ZIP, occupation and gender, the clinic sample by hospital and
by region, the synthetic sample, the eICU demo by region, and MovieLens as an uploaded long table
without ``u.item`` by occupation and by gender (no declared catalogue: the run selects one by DP).
Every method first runs once on the smallest data set, untimed (its one-off costs in a process are not a
cost of the first data set's shape); each is timed again right after a dp-cooccurrence run on the same split,
whose sites' own fits it may read, as the runs of a comparison or a sweep do. Each run's stage timings (round 1, server, round 2, other fitting, evaluation) come from its result
document; its process CPU seconds and wall seconds are kept beside them. The runs
use simulation noise (NumPy); a production run adds, per noise coordinate its entities send (counted
from its message log), the µs of OpenDP's sampler measured by bench/bench_samplers.py — checked
against production runs in the result page's last table.
:mod:`dpfed_core.evaluation.cost` fits, per (method, mode, stage), non-negative coefficients of the
stage's cost terms to these points and predicts runs, comparisons and sweeps on the loaded data; the
result file lists each point's prediction against the measurement (leave-one-out), so the "within 2×"
claim is checked on data the fit did not see.

    .venv/bin/python bench/bench_cost_model.py [--methods a,b] [--quick]

Writes bench/results/cost_model.json and .md. Needs /work/shared/data-style copies of MovieLens 100K
and the eICU demo ($DPFED_ML100K, $DPFED_EICU, else ../shared/data/…); missing ones are skipped.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, engine_fingerprint, machine, md_table, sample_reference, write_results  # noqa: E402

from dpfed_core.data.loaders import load_data  # noqa: E402
from dpfed_core.evaluation import cost  # noqa: E402
from dpfed_core.evaluation.defaults import default_config  # noqa: E402
from dpfed_core.evaluation.experiments import make_split, run_method  # noqa: E402
from dpfed_core.models.blend import SITE_FITS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ML = os.environ.get("DPFED_ML100K") or str(REPO.parent / "shared" / "data" / "ml-100k")
EICU = os.environ.get("DPFED_EICU") or str(REPO.parent / "shared" / "data" / "eicu-demo")
DP_METHODS = ("dp-cooccurrence", "dp-popularity", "dp-als", "dp-prototypes", "dp-gaussian")
METHODS = ("dp-cooccurrence", "dp-popularity", "dp-als", "local", "individual", "central", "popularity", "random-v",
           "kmeans", "dp-prototypes", "dp-gaussian")
#: Data where the DP methods also run with production noise (OpenDP's samplers), to measure what that
#: adds: the small shapes (a production dp-cooccurrence on eICU by hospital or MovieLens by ZIP takes
#: a minute or more; those are checked against the fit, not fitted).
PRODUCTION = {("clinic by hospital", "zero"), ("clinic by region", "zero"), ("synthetic", "zero"),
              ("eICU by region", "zero"), ("MovieLens by gender", "observed"),
              ("clinic by region", "observed"), ("MovieLens long table by gender", "observed")}
#: An uploaded table as a user brings it: ratings (observed mode, the CLI's and the pages' choice for
#: ratings) and no declared catalogue (the run selects one by DP).
ML_LONG = "movielens-long:"
DATA = [  # (label, spec, loader options, mode)
    ("clinic by hospital", "sample:clinic", {}, "zero"),
    ("clinic by region", "sample:clinic", {"federation": "region"}, "zero"),
    ("synthetic", "sample:synthetic", {}, "zero"),
    ("eICU by hospital", EICU, {}, "zero"),
    ("eICU by region", EICU, {"federation": "region"}, "zero"),
    ("MovieLens by ZIP", ML, {"federation": "zip"}, "zero"),
    ("MovieLens by occupation", ML, {"federation": "occupation"}, "zero"),
    ("MovieLens by ZIP", ML, {"federation": "zip"}, "observed"),
    ("MovieLens by occupation", ML, {"federation": "occupation"}, "observed"),
    ("MovieLens by gender", ML, {"federation": "gender"}, "observed"),
    ("clinic by hospital", "sample:clinic", {}, "observed"),
    ("clinic by region", "sample:clinic", {"federation": "region"}, "observed"),
    ("synthetic", "sample:synthetic", {}, "observed"),
    ("eICU by region", EICU, {"federation": "region"}, "observed"),
    ("MovieLens long table by occupation", ML_LONG + "occupation", {}, "observed"),
    ("MovieLens long table by gender", ML_LONG + "gender", {}, "observed"),
]


def _load(spec: str, opts: dict):
    if spec.startswith(ML_LONG):
        from bench_utility import movielens_long

        return movielens_long(spec[len(ML_LONG):])
    return load_data(spec, **opts)


def warm_up(methods) -> None:
    """One discarded run of each method (and of each DP method with production noise) on the smallest
    data set: a method's first run in a process also pays its one-off costs (lazy imports, OpenDP's and
    the accountant's set-up), which would otherwise be timed as the first data set's cost of that method
    — the dashboard's default run among them — and read by every later prediction on that shape."""
    ds = load_data("sample:clinic", federation="region")
    for method in methods:
        cfg = default_config(ds, method).replace(simulation=True)
        split = make_split(ds, cfg)
        for c in ([cfg, cfg.replace(simulation=False)] if method in DP_METHODS else [cfg]):
            SITE_FITS.clear()
            run_method(ds, c, split)
    SITE_FITS.clear()


#: The run whose sites' own fits a method is timed after (the Federate page's and the CLI's default method).
FIRST = "dp-cooccurrence"


def after_shared_fits(ds, cfg, split) -> dict:
    """The run of ``cfg`` timed again right after a run of :data:`FIRST` on the same split and own-model
    settings (at another ε, so the federation's part differs, as in a sweep or a comparison): the sites'
    own fits that run made are kept in the process (``SITE_FITS``), and ``local`` after it, or the next point
    of a sweep, reads them. ``shared_stages``/``shared_wall`` of the point."""
    first = default_config(ds, FIRST).replace(mode=cfg.mode, simulation=True, seed=cfg.seed, rank=cfg.rank,
                                             lam=cfg.lam, max_iter=cfg.max_iter, test_fraction=cfg.test_fraction,
                                             n_hidden=cfg.n_hidden)
    SITE_FITS.clear()
    run_method(ds, first.replace(epsilon=2 * first.epsilon), split)
    w0 = time.perf_counter()
    doc, _ = run_method(ds, cfg, split)
    wall = time.perf_counter() - w0
    SITE_FITS.clear()
    return {"shared_stages": cost.stage_seconds(doc["timings"], wall), "shared_wall": wall}


def measure(methods, data) -> list[dict]:
    warm_up(methods)
    points = []
    for label, spec, opts, mode in data:
        if spec.startswith(ML_LONG) and not Path(ML).is_dir() or \
                not spec.startswith(("sample:", ML_LONG)) and not Path(spec).is_dir():
            print(f"skip {label}: {spec} not found", file=sys.stderr)
            continue
        sample_reference()  # the machine's speed through the benchmark (machine() records the median)
        ds = _load(spec, opts)
        for method in methods:
            cfg = default_config(ds, method).replace(mode=mode, simulation=True)
            shape = cost.shape_of(ds, cfg)
            split = make_split(ds, cfg)
            # each run from cold: a site's own fits kept by an earlier method of this loop (local reads
            # those the federated method's site models fitted) would time `local` at a tenth of what a
            # command that runs it alone takes
            SITE_FITS.clear()
            c0, w0 = time.process_time(), time.perf_counter()
            doc, _ = run_method(ds, cfg, split)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            stages = cost.stage_seconds(doc["timings"], wall)
            points.append({"data": label, "mode": mode, "method": method, "shape": shape, "rank": cfg.rank,
                           "k": cfg.k, "max_iter": cfg.max_iter, "params": dict(cfg.params or {}), "stages": stages, "cpu": cpu, "wall": wall,
                           "noise_coordinates": cost.noise_coordinates(doc["messages"])
                           if cfg.method in DP_METHODS else 0})
            print(f"{label:26s} {mode:8s} {method:16s} wall {wall:7.2f} s cpu {cpu:7.2f} s "
                  + " ".join(f"{k} {v:.2f}" for k, v in stages.items()), flush=True)
            points[-1].update(after_shared_fits(ds, cfg, split))
            if method in DP_METHODS and (label, mode) in PRODUCTION:
                SITE_FITS.clear()
                w0 = time.perf_counter()
                prod, _ = run_method(ds, cfg.replace(simulation=False), split)
                pwall = time.perf_counter() - w0
                points[-1]["production_wall"] = pwall
                points[-1]["production_stages"] = cost.stage_seconds(prod["timings"], pwall)
                print(f"{'':26s} {'':8s} {'  production':16s} wall {pwall:7.2f} s", flush=True)
    return points


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--quick", action="store_true", help="two datasets, for a smoke test")
    ap.add_argument("--refit", action="store_true", help="fit again on the stored measurements (no runs)")
    ap.add_argument("--merge", metavar="JSON", help="also take the points of an earlier result file, keeping the "
                                                   "faster measurement of each run (other work only slows a run)")
    args = ap.parse_args()
    if args.refit:
        old = json.loads((RESULTS / "cost_model.json").read_text())
        # the points' own machine record: a refit measures nothing, so the code they were measured with stays theirs
        return summarise(old["points"], old["seconds"], len({(p["data"], p["mode"]) for p in old["points"]}),
                         old.get("machine"))

    methods = [m for m in args.methods.split(",") if m]
    data = DATA[:2] if args.quick else DATA
    t0 = time.perf_counter()
    points = measure(methods, data)
    if args.merge:
        earlier = json.loads(Path(args.merge).read_text())
        theirs = (earlier.get("machine") or {}).get("engine_fingerprint")
        if theirs != engine_fingerprint():
            ap.error(f"--merge: {args.merge} was measured with other engine code ({theirs}, this code is "
                     f"{engine_fingerprint()}): its runs say nothing of this code's")
        ratio = cost.machine_factor(earlier)
        if not (earlier.get("machine") or {}).get("reference_s") or ratio != 1.0:
            ap.error(f"--merge: {args.merge} was measured on a machine whose reference work took "
                     f"{'an unrecorded time' if ratio == 1.0 else f'{1 / ratio:.2g}× the time it takes here'}: "
                     f"keeping the faster of two machines' runs would time neither")
        points = merge_faster(points, earlier["points"])
    return summarise(points, time.perf_counter() - t0, len(data))


def merge_faster(points: list[dict], earlier: list[dict]) -> list[dict]:
    """Per (data, mode, method) the faster wall time of two measurements, with any production
    measurement either has (the machine is shared: other work only slows a run down)."""
    key = lambda p: (p["data"], p["mode"], p["method"])  # noqa: E731
    best: dict = {}
    for p in [*earlier, *points]:
        k = key(p)
        prod = {f: v for f, v in p.items() if f.startswith("production")}
        if k not in best or p["wall"] < best[k]["wall"]:
            keep = {f: v for f, v in best.get(k, {}).items() if f.startswith("production")}
            best[k] = {**p, **{f: v for f, v in keep.items() if f not in p}}
        else:
            best[k].update({f: v for f, v in prod.items() if f not in best[k]})
    return [best[key(p)] for p in points]


def summarise(points: list[dict], seconds: float, n_data: int, measured_on: dict | None = None) -> None:
    """Fit, check each point with and without itself in the fit, write the results. ``measured_on``:
    the machine record of the points (default: this machine and code, now)."""
    model = cost.fit(points)
    rows = []
    for p, loo in zip(points, cost.leave_one_out(points)):
        full = sum(cost._predict(model, p["method"], p["mode"], p["shape"],
                                 {"max_iter": p["max_iter"], "k": p.get("k", 10)}).values())
        rows.append({"data": p["data"], "mode": p["mode"], "method": p["method"], "measured s": p["wall"],
                     "predicted s": full, "predicted s (fit without it)": loo,
                     "within 2×": cost.within_2x(full, p["wall"]),
                     "within 2× (fit without it)": loo is not None and cost.within_2x(loo, p["wall"])})
    within = sum(r["within 2× (fit without it)"] for r in rows)
    within_full = sum(r["within 2×"] for r in rows)
    prod_rows = []
    for p in points:
        if "production_wall" not in p:
            continue
        cfg = {"max_iter": p["max_iter"], "k": p.get("k", 10), "simulation": False, "epsilon": 3.0}
        pred = sum(cost._predict(model, p["method"], p["mode"], p["shape"], cfg).values())
        prod_rows.append({"data": p["data"], "mode": p["mode"], "method": p["method"],
                          "noise coordinates": p.get("noise_coordinates", 0),
                          "drawn in production": int(round(cost.drawn_coordinates(
                              p["method"], float(p.get("noise_coordinates", 0)), p["shape"]))),
                          "simulation s": p["wall"],
                          "production s": p["production_wall"], "predicted s": pred,
                          "within 2×": cost.within_2x(pred, p["production_wall"])})
    shared_rows = []
    for p in points:
        if "shared_wall" not in p:
            continue
        shared = cost.shares_fits(model, p["method"], p["mode"])
        reads = shared is not None
        stages = cost._predict(model, p["method"], p["mode"], p["shape"], {"max_iter": p["max_iter"],
                                                                              "k": p.get("k", 10)})
        pred = sum((cost.after_shared_fits(stages, shared) if reads else stages).values())
        shared_rows.append({"data": p["data"], "mode": p["mode"], "method": p["method"], "alone s": p["wall"],
                            f"after {FIRST} s": p["shared_wall"], "reads the fits": reads, "predicted s": pred,
                            "within 2×": cost.within_2x(pred, p["shared_wall"])})
    doc = {"benchmark": "cost_model", "machine": measured_on or machine(), "seconds": seconds,
           "features": cost.FEATURES, "points": points, "model": model, "predictions": rows,
           "within_2x": [within_full, len(rows)], "within_2x_leave_one_out": [within, len(rows)],
           "production": prod_rows, "after_shared_fits": shared_rows,
           "within_2x_after_shared_fits": [sum(r["within 2×"] for r in shared_rows), len(shared_rows)]}
    md = ("# Cost model: measured seconds per stage, and predictions\n\n"
          f"{len(points)} runs (simulation mode, the dashboard's configuration) on {n_data} data shapes, "
          f"measured on {doc['machine'].get('cpu', '?')} ({doc['machine'].get('cpus', '?')} cores; 1-minute load "
          f"average {doc['machine'].get('loadavg_1m_at_start', float('nan')):.1f} at the start) at commit "
          f"{doc['machine'].get('git_commit')}, engine code {doc['machine'].get('engine_fingerprint')} (the "
          "dashboard and the CLI read this file; the suite checks it was measured with the engine's code as it "
          "is). A prediction under "
          f"{cost.FLOOR_SECONDS:g} s is said \"under {cost.FLOOR_SECONDS:g} s\" and holds when the run took under "
          f"{2 * cost.FLOOR_SECONDS:g} s. Within 2× of the measured wall time: {within_full} of {len(rows)} with "
          f"the fitted model; {within} of {len(rows)} when each run is predicted by the model fitted without it "
          "(its shape then often lies outside the others'): the accuracy to expect on data of a new shape. "
          "On the shapes measured here (the bundled samples, the eICU demo, MovieLens 100K with the dashboard's "
          "settings) the dashboard and the CLI predict with the measurement itself. "
          + (f"This machine took {doc['machine']['reference_s'] * 1e3:.1f} ms (CPU; the median of "
             f"{doc['machine'].get('reference_samples', 1)} timings through the benchmark) for the engine's reference "
             "work (`cost.time_reference_work`: the site model's fit of a fixed 400 × 300 matrix); the dashboard and "
             "the CLI time the same work once per process and scale every prediction by the ratio when it lies beyond "
             "what one machine's own speed varies by (⅔–1.5×, `cost.SAME_MACHINE_BAND`), since the machines this "
             "ran on differed by 1.6–3× for the same code.\n\n"
             if doc["machine"].get("reference_s") else
             "This measurement records no reference work: the dashboard and the CLI predict in its machine's "
             "seconds.\n\n")
          + md_table(rows, fmt={"measured s": "{:.2f}", "predicted s": "{:.2f}",
                                "predicted s (fit without it)": "{:.2f}"})
          + "\n## Production noise\n\nThe DP methods on the small shapes again with OpenDP's samplers (the "
            "dashboard's and the CLI's default): what that adds to round 1 is fitted per coordinate drawn and "
            "per entity. *Noise coordinates*: the numbers the entities send in round 1; *drawn in production*: "
            "those a production run in this process draws noise for — one vector per sum for the methods whose "
            "shares declare it (dp-popularity, dp-cooccurrence, dp-als: `privacy.noise.SumNoise`), every share's "
            f"own otherwise. Within 2×: {sum(r['within 2×'] for r in prod_rows)} of {len(prod_rows)}.\n\n"
          + md_table(prod_rows, fmt={"simulation s": "{:.2f}", "production s": "{:.2f}", "predicted s": "{:.2f}"}))
    if shared_rows:
        readers = sorted({(r["method"], r["mode"]) for r in shared_rows if r["reads the fits"]})
        md += ("\n## After another run's fits\n\nThe runs of one command (a comparison, a sweep) share the sites' "
               "own fits, kept in the process: each run again, timed right after a "
               f"{FIRST} run on the same split and own-model settings at another ε. A method that took at most "
               f"{cost.SHARED_FIT_GAIN:g} of its time alone reads those fits (and makes them when it runs first): "
               + ", ".join(f"{m} ({mode})" for m, mode in readers)
               + ". The dashboard and the CLI predict such a run at its method's measured share of its time alone, "
               "per stage (sum of the seconds after over the sum alone, over these runs). Within 2×: "
               f"{doc['within_2x_after_shared_fits'][0]} of {len(shared_rows)}.\n\n"
               + md_table(shared_rows, fmt={"alone s": "{:.2f}", f"after {FIRST} s": "{:.2f}",
                                            "predicted s": "{:.2f}"}))
    write_results(RESULTS / "cost_model", doc, md)


if __name__ == "__main__":
    main()
