"""The dashboard's defaults, measured: which DP setting wins on the bundled sample.

dp-cooccurrence with and without secure aggregation over a small grid of rank and ε, against ``local``
(each hospital's own model + own popularity: the strongest thing a hospital can do alone) and
``individual`` (its own model only), on ``sample:clinic`` (30 hospitals, 4 regions), zero mode, MAR
(lower is better, 0.5 = random order), δ = 1e-6, three seeds (split and noise seeded: simulation
mode, "noise reproducible, no privacy claim"); every method of a seed sees the same split.

Per setting it records the mean ± sd MAR over seeds, the per-hospital verdict over seeds against
local and individual (:func:`dpfed_core.evaluation.verdicts.sweep_entity_verdict`, the function the
dashboard's Trade-off page and the CLI use), the one-run verdict of every seed (what the Evaluate page
shows after one run) and the CPU seconds of a run (the dashboard's time hints).

The default is chosen by one rule (:func:`choose`), written into the results file with its reason: among
the settings that beat local beyond the noise — no hospital worse over seeds, every seed's single run
"better", and local's mean MAR minus the setting's larger than the setting's sd over seeds (a dashboard
run draws fresh noise, so a win inside the seed-to-seed spread would not survive it) — the smallest ε,
then the best mean MAR; if none qualifies, the setting with the best mean MAR, flagged
``beats_local: false`` so the dashboard says so instead of claiming it.
The dashboard reads its method, aggregation, rank and ε from this file
(:mod:`dpfed_core.ui.defaults`), and its Federate advice is generated from the same verdicts.

    .venv/bin/python bench/bench_dashboard_defaults.py [--seeds 3] [--quick]
    .venv/bin/python bench/bench_dashboard_defaults.py --rechoose   # the rule again on the stored measurements

Writes bench/results/dashboard_defaults.json and .md.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, machine, md_table, write_results  # noqa: E402

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.data.loaders import load_data  # noqa: E402
from dpfed_core.evaluation.experiments import make_split, run_method  # noqa: E402
from dpfed_core.evaluation.verdicts import (entity_verdict, format_epsilon, sweep_entity_verdict,  # noqa: E402
                                            sweep_verdict_sentence)

DATA = "sample:clinic"
METHOD = "dp-cooccurrence"
AGGREGATIONS = ("secure", "none")
RANKS = (3, 5, 8)
EPS = (0.3, 1.0, 3.0, 10.0)
REFS = ("local", "individual")
DELTA = 1e-6
MODE = "zero"


def config(method: str, seed: int, rank: int, eps: float = math.inf, aggregation: str = "none") -> RunConfig:
    # k is unused by the summable method and by the references; the dashboard's own default is kept
    return RunConfig(method=method, epsilon=eps, delta=DELTA, k=5, rank=rank, lam=0.1, mode=MODE, seed=seed,
                     simulation=True, aggregation=aggregation, max_iter=100)


def slim(doc: dict) -> dict:
    """What a verdict needs of a result document (per-entity MAR, the ε it guarantees)."""
    return {"entities": [{"name": e["name"], "mar": e.get("mar"), "n_test_users": e.get("n_test_users")}
                         for e in doc["entities"]],
            "overall": {"mar": doc["overall"]["mar"]}, "privacy": {"epsilon": doc["privacy"]["epsilon"]},
            "config": {"mode": MODE}}


def qualifies(s: dict) -> bool:
    """Beats local beyond the noise (see the module docstring)."""
    return (s["verdict"]["local"]["worse"] == 0 and s["verdict"]["local"]["better"] > 0
            and all(w == "better" for w in s["single_run_words"]["local"])
            and s["local_mar_mean"] - s["mar_mean"] > s["mar_sd"])


def choose(settings: list[dict]) -> tuple[dict, list[dict], str]:
    """(the default setting, the qualifying settings, the rule in words)."""
    good = [s for s in settings if qualifies(s)]
    if good:
        best = min(good, key=lambda s: (s["epsilon"], s["mar_mean"], s["aggregation"] != "secure"))
        return best, good, ("the smallest measured ε that beats local beyond the noise (no hospital worse over "
                            "seeds, every seed's single run better, mean MAR below local's by more than its sd "
                            "over seeds); then the best mean MAR")
    return (min(settings, key=lambda s: s["mar_mean"]), [],
            "no measured DP setting beats local beyond the noise; the setting with the best mean MAR")


def timed_run(ds, cfg, split) -> tuple[dict, float]:
    t0 = time.process_time()
    doc, _ = run_method(ds, cfg, split)
    return slim(doc), time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one rank, two ε (a smoke test; not committed)")
    ap.add_argument("--rechoose", action="store_true",
                    help="apply the choice rule again to the stored measurements (no new runs)")
    args = ap.parse_args()
    if args.rechoose:
        import json

        out = RESULTS / "dashboard_defaults"
        write(json.loads(out.with_suffix(".json").read_text()), out)
        return
    ranks, eps_grid = (RANKS[1:2], EPS[1:3]) if args.quick else (RANKS, EPS)
    seeds = list(range(args.seeds))
    ds = load_data(DATA)
    runs: list[dict] = []  # sweep-document runs: method, aggregation, rank, epsilon, seed, entities, overall
    cpu: dict[str, list[float]] = {}
    for seed in seeds:
        split = make_split(ds, config("local", seed, RANKS[0]))
        for rank in ranks:
            for ref in REFS:
                doc, t = timed_run(ds, config(ref, seed, rank), split)
                cpu.setdefault(ref, []).append(t)
                runs.append({"method": ref, "aggregation": "none", "rank": rank, "epsilon": math.inf, "seed": seed,
                             **doc})
            for agg in AGGREGATIONS:
                for eps in eps_grid:
                    doc, t = timed_run(ds, config(METHOD, seed, rank, eps, agg), split)
                    cpu.setdefault(METHOD, []).append(t)
                    runs.append({"method": METHOD, "aggregation": agg, "rank": rank, "epsilon": eps, "seed": seed,
                                 **doc})
            print(f"seed {seed} rank {rank} done", flush=True)

    settings = []
    for agg in AGGREGATIONS:
        for rank in ranks:
            sweep_doc = {"config": {"method": METHOD, "mode": MODE},
                         "runs": [r for r in runs if r["rank"] == rank and (r["method"] in REFS or r["aggregation"] == agg)]}
            local = np.array([r["overall"]["mar"] for r in sweep_doc["runs"] if r["method"] == "local"])
            indiv = np.array([r["overall"]["mar"] for r in sweep_doc["runs"] if r["method"] == "individual"])
            for eps in eps_grid:
                mine = [r for r in sweep_doc["runs"] if r["method"] == METHOD and r["epsilon"] == eps]
                mar = np.array([r["overall"]["mar"] for r in mine])
                v = sweep_entity_verdict(sweep_doc, eps, "mar")
                singles = []
                for s in seeds:
                    docs = {METHOD: next(r for r in mine if r["seed"] == s)}
                    docs.update({ref: next(r for r in sweep_doc["runs"] if r["method"] == ref and r["seed"] == s)
                                 for ref in REFS})
                    singles.append(entity_verdict(docs, METHOD, "mar"))
                settings.append({
                    "method": METHOD, "aggregation": agg, "rank": rank, "epsilon": eps,
                    "mar_mean": float(mar.mean()), "mar_sd": float(mar.std(ddof=1)) if len(mar) > 1 else 0.0,
                    "local_mar_mean": float(local.mean()), "individual_mar_mean": float(indiv.mean()),
                    "verdict": {b: {k: r[k] for k in ("better", "worse", "tie", "word")} for b, r in v["baselines"].items()},
                    "H": v["H"], "seeds": len(seeds), "mode": MODE, "metric": "mar",
                    "single_run_words": {b: [sv["baselines"][b]["word"] for sv in singles] for b in REFS},
                    "sentence": sweep_verdict_sentence(v, len(seeds)),
                })

    doc = {"benchmark": "dashboard_defaults", "data": DATA, "entities": ds.n_entities, "users": ds.n_users,
           "items": ds.n_items, "interactions": int(ds.X.nnz), "mode": MODE, "metric": "mar", "delta": DELTA,
           "seeds": seeds, "simulation": True, "grid": {"aggregation": list(AGGREGATIONS), "rank": list(ranks),
                                                         "epsilon": list(eps_grid)},
           "settings": settings, "cpu_seconds_per_run": {m: {"median": float(np.median(v)), "max": float(np.max(v)),
                                                              "n": len(v)} for m, v in cpu.items()},
           "machine": machine()}
    write(doc, RESULTS / ("dashboard_defaults_quick" if args.quick else "dashboard_defaults"))


def write(doc: dict, out: Path) -> None:
    """Apply :func:`choose` to the measured settings and write the JSON and the markdown table."""
    settings = doc["settings"]
    for s in settings:
        s["epsilon"] = float(s["epsilon"])
    best, good, reason = choose(settings)
    defaults = {k: best[k] for k in ("method", "aggregation", "rank", "epsilon")}
    defaults.update({"delta": DELTA, "beats_local": bool(good), "reason": reason})
    doc["defaults"] = defaults
    secs = doc["cpu_seconds_per_run"]
    rows = [{"aggregation": s["aggregation"], "rank": s["rank"], "ε": format_epsilon(s["epsilon"]),
             "MAR": f"{s['mar_mean']:.4f} ± {s['mar_sd']:.4f}", "local": f"{s['local_mar_mean']:.4f}",
             "individual": f"{s['individual_mar_mean']:.4f}",
             "vs local b/w/i": "{better}/{worse}/{tie}".format(**s["verdict"]["local"]),
             "vs individual b/w/i": "{better}/{worse}/{tie}".format(**s["verdict"]["individual"]),
             "single runs vs local": ", ".join(s["single_run_words"]["local"]),
             "qualifies": "yes" if qualifies(s) else ""} for s in settings]
    md = (f"# Dashboard defaults on the bundled sample\n\n"
          f"{doc['data']}: {doc['entities']} hospitals, {doc['users']} stays, {doc['items']} items; {doc['mode']} mode, "
          f"MAR (lower is better, 0.5 = random), δ = {DELTA:g}, seeds {doc['seeds']} (simulation mode: noise "
          "reproducible, no privacy claim). b/w/i = hospitals better / worse / inconclusive over seeds (mean "
          "difference beyond its 95 % t interval), the verdict function the dashboard and the CLI use; single runs: "
          "each seed's one-run word (better or worse only for a majority beyond chance by the sign test, else even). "
          f"{METHOD} with its defaults: the popularity release gets 0.5 of the precision with secure "
          "aggregation, 0.85 without (`pop_share`).\n\n"
          + (f"Runs finished {doc['machine'].get('date')} on commit {doc['machine'].get('git_commit')}, "
             f"{doc['machine'].get('cpus')} cores, load average at start {doc['machine'].get('loadavg_1m_at_start'):.1f}.\n\n"
             if doc.get("machine") else "")
          + md_table(rows) +
          f"\n**Default:** {METHOD}, aggregation {defaults['aggregation']}, rank {defaults['rank']}, "
          f"ε = {format_epsilon(defaults['epsilon'])} ({'beats' if good else 'does NOT beat'} local). Rule: {reason}.\n\n"
          f"{best['sentence']}\n\n"
          "CPU seconds per run (median / max): "
          + "; ".join(f"{m} {v['median']:.2f} / {v['max']:.2f}" for m, v in secs.items()) + ".\n")
    write_results(out, doc, md)


if __name__ == "__main__":
    main()
