"""The paper's real-data experiments (§5.4, Fig. 2; supplementary Figs. 8–9).

Datasets (never copied into the repository; read from ``../shared/data``):

* eICU demo, medication counts per unit stay, entity = hospital (k = 10, as the paper);
* eICU demo, entity = region (k = 10);
* MovieLens 100K, entity = first digit of the ZIP code (k = 50, as the paper does on 1M).

Methods on one split per seed (SPEC §4): ``central`` (pooled NMF), ``individual`` (one NMF per
entity), the DP federation (``dp-gaussian`` (the Gaussian-recovery DP prototypes; the paper's Laplace variant ``dp-prototypes`` is compared in dp_ml.md)) at ε = 0.1 (the paper's) and at the crossing ε — the
smallest ε of a grid from which the DP federation's mean MAR beats ``individual`` at that ε and
every larger one (``experiments.crossing_epsilon``, from a sweep at ℓ = 10). All in zero mode (the
paper's NMF; absent interactions are zeros), λ = 0.1, δ = 1e-6, ranks ℓ = 10 … 50, seeds 0–2.

Usage::

    .venv/bin/python bench/bench_paper_real.py [--quick] [--only eicu-hospital,eicu-region,movielens]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

DATASETS = {
    "eicu-hospital": ("eICU demo, entity = hospital", lambda: C.eicu("hospitalid"), 10),
    "eicu-region": ("eICU demo, entity = region", lambda: C.eicu("region"), 10),
    "movielens": ("MovieLens 100K, entity = ZIP first digit", C.movielens, 50),
}
EPS_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, math.inf)
METRICS = ("train_rmse", "test_rmse", "mar")


def agg(vals):
    v = np.asarray([x for x in vals if x is not None and x == x], float)
    return (float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0) if len(v) else (float("nan"), 0.0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(DATASETS))
    args = ap.parse_args(argv)
    out = C.outputs("paper_real", args.quick)
    C.ensure_methods()
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import crossing_epsilon, make_split, run_method, sweep, sweep_table

    q = args.quick
    seeds = (0,) if q else (0, 1, 2)
    ranks = (10, 30) if q else (10, 20, 30, 40, 50)
    eps_grid = (0.1, 1.0, 10.0, math.inf) if q else EPS_GRID
    t_all = time.perf_counter()
    results = {}
    for key in args.only.split(","):
        title, loader, k = DATASETS[key]
        try:
            ds = loader()
        except Exception as exc:  # noqa: BLE001
            print(f"[paper_real] {key}: cannot load ({exc})")
            results[key] = {"title": title, "error": str(exc)}
            continue
        base = RunConfig(method="dp-gaussian", k=k, rank=10, epsilon=0.1, delta=1e-6, mode="zero", simulation=True)
        seeds_d, ranks_d = seeds, ranks
        if key == "eicu-hospital" and not q:
            # `individual` fits 133 tiny NMFs with a Python loop per latent column: ~1 min at ℓ = 10 and
            # ~3 min at ℓ = 30 per seed on this machine (see the report), so a reduced grid here.
            seeds_d, ranks_d = (0,), (10, 30, 50)
        t0 = time.perf_counter()
        sw = sweep(ds, base, eps_grid, seeds_d, references=("individual", "central"))
        table = sweep_table(sw, "mar")
        cross = crossing_epsilon(sw, "mar", "individual")
        print(f"[paper_real] {key}: sweep done in {time.perf_counter() - t0:.0f}s; crossing ε (MAR) = {cross}", flush=True)
        sweep_rows = [{"epsilon": r["epsilon"], "method": r["method"], "mar": r["mean"], "mar_sd": r["sd"]} for r in table]
        # random-v: V drawn without looking at any data — the floor a "DP generalises better" verdict
        # must clear to say anything about the DP prototypes
        variants = [("central", math.inf), ("individual", math.inf), ("random-v", math.inf), ("dp-gaussian", 0.1)]
        if cross is not None and cross != 0.1 and math.isfinite(cross):
            variants.append(("dp-gaussian", cross))
        rows = []
        for rank in ranks_d:
            for method, eps in variants:
                per = {m: [] for m in METRICS}
                secs = []
                for seed in seeds_d:
                    cfg = base.replace(method=method, epsilon=eps if method == "dp-gaussian" else math.inf,
                                       rank=rank, seed=seed)
                    split = make_split(ds, cfg)
                    t1 = time.perf_counter()
                    doc, _ = run_method(ds, cfg, split)
                    secs.append(time.perf_counter() - t1)
                    for m in METRICS:
                        per[m].append(doc["overall"][m])
                row = {"rank": rank, "method": method, "epsilon": eps, "seconds": float(np.mean(secs))}
                for m in METRICS:
                    row[m], row[m + "_sd"] = agg(per[m])
                    row[m + "_values"] = per[m]  # per seed, same splits for every method: paired effects
                rows.append(row)
            print(f"[paper_real] {key} ℓ={rank}: " + "; ".join(
                f"{r['method']}{'' if r['method'] != 'dp-gaussian' else ' ε=' + format(r['epsilon'], 'g')} "
                f"train {r['train_rmse']:.3f} test {r['test_rmse']:.3f} MAR {r['mar']:.3f}" for r in rows[-len(variants):]),
                flush=True)
        results[key] = {"title": title, "k": k, "n_users": ds.n_users, "n_items": ds.n_items,
                        "n_entities": ds.n_entities, "nnz": int(ds.X.nnz), "notes": ds.notes,
                        "crossing_epsilon_mar": cross, "seeds": list(seeds_d), "sweep": sweep_rows, "rows": rows}
    doc = {"benchmark": "paper_real", "quick": q, "machine": C.machine(), "seeds": list(seeds),
           "eps_grid": list(eps_grid), "seconds": time.perf_counter() - t_all, "results": results}
    write_report(doc, out)
    C.write_doc(out["json"], doc)
    print(f"wrote {out['json']} and {out['md']} in {doc['seconds'] / 60:.1f} min")


def _name(r):
    if r["method"] == "dp-gaussian":
        return f"DP federation ε={r['epsilon']:g}"
    return {"central": "central MF", "individual": "individual MF", "random-v": "random V"}[r["method"]]


def paired(a: list, b: list) -> tuple[float, float, str]:
    """Paired effect a − b over seeds (the methods share each seed's split): (mean, sd, sign) with
    sign "<" / ">" when every seed agrees and |mean| > sd, "~" inside the noise, "?" with one seed
    (no spread: a sign, not a verdict on noise)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    mean = float(d.mean())
    if d.size < 2:
        return mean, float("nan"), "?"
    sd = float(d.std(ddof=1))
    if np.all(d < 0) and abs(mean) > sd:
        return mean, sd, "<"
    if np.all(d > 0) and abs(mean) > sd:
        return mean, sd, ">"
    return mean, sd, "~"


def verdicts(res: dict) -> list[str]:
    """Each claim "a < b" judged rank by rank on paired per-seed differences (mean ± sd over seeds;
    *inconclusive* inside the noise); the effect at the first and last rank is printed."""
    rows = res["rows"]
    ranks = sorted({r["rank"] for r in rows})
    seeds = len(res.get("seeds", [])) or 1

    def get(rank, name):
        return next(r for r in rows if r["rank"] == rank and _name(r) == name)

    def claim(text: str, a: str, b: str, metric: str, scale: float = 1.0) -> str:
        fx = [paired(get(l, a).get(metric + "_values", [get(l, a)[metric]]),
                     [scale * v for v in get(l, b).get(metric + "_values", [get(l, b)[metric]])]) for l in ranks]
        show = "; ".join(f"ℓ={l}: {m:+.3f}" + (f" ± {sd:.3f}" if sd == sd else "") for l, (m, sd, _) in
                         zip(ranks, fx) if l in (ranks[0], ranks[-1]))
        what = f"{metric} of {a} − {'1.10 × ' if scale != 1.0 else ''}{b}"
        signs = [x[2] for x in fx]
        verdict = C.count_verdict(signs, "<", " ranks")
        if signs and all(x == "?" for x in signs):  # one seed: the direction only, said as such
            verdict = (C.count_verdict(["<" if x[0] < 0 else ">" for x in fx], "<", " ranks")
                       + " — by sign only: one seed, no spread")
        return (f"- Claim ({text} → **{verdict}** ({what}: {show}; {seeds} "
                f"seed{'s' if seeds > 1 else ''}).")

    dp = "DP federation ε=0.1"
    L = [claim("train RMSE): individual models fit the training data better than the joint model",
               "individual MF", "central MF", "train_rmse"),
         claim("train RMSE): the DP federation (ε = 0.1) is comparable to individual models (within 10 %)",
               dp, "individual MF", "train_rmse", scale=1.10),
         claim("test RMSE): the DP federation generalises better than individual models", dp, "individual MF",
               "test_rmse")]
    if any(_name(r) == "random V" for r in rows):
        L.append(claim("test RMSE, control): a random V (no data at all) also generalises better than individual "
                       "models — where it does, the claim above says nothing about the DP prototypes",
                       "random V", "individual MF", "test_rmse"))
        L.append(claim("test RMSE, beyond the control): the DP federation generalises better than the data-free "
                       "random V", dp, "random V", "test_rmse"))
    L.append(claim("MAR): the DP federation ranks better than individual models", dp, "individual MF", "mar"))
    L.append(claim("eICU Fig. 2c): the DP federation has the best ranking of the three, also beating central MF",
                   dp, "central MF", "mar"))
    cross = res["crossing_epsilon_mar"]
    L.append(f"- Crossing ε (smallest ε from which the DP federation's MAR beats individual at ℓ = 10, mean over seeds): "
             f"**{'none in the grid' if cross is None else format(cross, 'g')}**.")
    return L


def write_report(doc: dict, out: dict) -> None:
    res = {k: v for k, v in doc["results"].items() if "error" not in v}
    m = doc["machine"]
    L = [f"# Paper §5.4 on real data: eICU demo and MovieLens 100K{' (quick)' if doc['quick'] else ''}", "",
         "Seeds per data set (mean ± sd over them; one split per seed): "
         + "; ".join(f"{r['title']}: {r['seeds']}" for r in res.values())
         + ". Zero mode, λ = 0.1, δ = 1e-6. Total "
         f"{doc['seconds'] / 60:.1f} min on {m['cpus']} cores. The paper used the full eICU database (~190k stays, "
         "205 hospitals, labs + medications) and MovieLens **1M**; the repository's data are the eICU **demo** "
         "(medications only, ~1.8k stays, hospitals with 10+ stays) and MovieLens **100K**, so absolute values differ; "
         "we test the claims' direction.", "",
         "**Other settings that differ from the paper:** the DP method is `dp-gaussian` (Gaussian recovery; the paper's "
         "Laplace recovery is in dp_ml.md) with the library's automatic k = clip(⌊n̂/1000⌋, 1, k): every entity here has "
         "fewer than 2,000 users, so each sends **one** prototype, not the paper's k (k is shown per data set); noise in "
         "simulation mode (reproducible, no privacy claim). `random V` is a control: V drawn without any data.", ""]
    for key, r in doc["results"].items():
        if "error" in r:
            L += [f"## {r['title']}", "", f"Not run: {r['error']}", ""]
    if res:
        png = out["png"]("rank")
        f, ax = C.fig(3, len(res), w=2.9, h=2.3)
        for i, (key, r) in enumerate(res.items()):
            for j, met in enumerate(METRICS):
                a = ax[i][j]
                for name in dict.fromkeys(_name(x) for x in r["rows"]):
                    pts = sorted((x["rank"], x[met], x[met + "_sd"]) for x in r["rows"] if _name(x) == name)
                    a.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts], fmt="-o",
                               capsize=2, label=name, lw=1)
                a.set_title(f"{key}: {met.replace('_', ' ')}", fontsize=8)
                a.set_xlabel("rank ℓ")
                if i == 0 and j == 0:
                    a.legend(fontsize=6)
        C.save_fig(f, png)
        png2 = out["png"]("sweep")
        f, ax = C.fig(len(res), 1, w=3.0, h=2.5)
        for a, (key, r) in zip(ax[0], res.items()):
            dp = sorted((s["epsilon"], s["mar"], s["mar_sd"]) for s in r["sweep"] if s["method"] == "dp-gaussian")
            fin = [p for p in dp if math.isfinite(p[0])]
            a.errorbar([p[0] for p in fin], [p[1] for p in fin], yerr=[p[2] for p in fin], fmt="-o", capsize=2,
                       label="DP federation")
            inf = [p for p in dp if not math.isfinite(p[0])]
            if inf:
                a.axhline(inf[0][1], color="tab:blue", ls=":", label="same, ε = ∞")
            for s in r["sweep"]:
                if s["method"] in ("individual", "central"):
                    a.axhline(s["mar"], color="tab:red" if s["method"] == "individual" else "k", lw=0.8, label=s["method"])
            if r["crossing_epsilon_mar"] is not None:
                a.axvline(r["crossing_epsilon_mar"], color="gray", ls="--", label="crossing ε")
            a.set_xscale("log")
            a.set_xlabel("ε")
            a.set_ylabel("MAR (lower is better)")
            a.set_title(f"{key}, ℓ = 10", fontsize=8)
            a.legend(fontsize=6)
        C.save_fig(f, png2)
        L += [f"![rank]({png.name})", "", f"![sweep]({png2.name})", ""]
    for key, r in res.items():
        L += [f"## {r['title']} (k = {r['k']})", "",
              f"{r['n_users']:,} users × {r['n_items']:,} items, {r['n_entities']} entities, {r['nnz']:,} non-zeros; "
              f"seeds {r.get('seeds')}.", ""]
        L += verdicts(r)
        L += ["", C.md_table(
            [{**x, "method": _name(x), **{mm: f"{x[mm]:.4f} ± {x[mm + '_sd']:.4f}" for mm in METRICS}} for x in r["rows"]],
            ["rank", "method", "train_rmse", "test_rmse", "mar", "seconds"], {"seconds": "{:.2f}"}),
              "Privacy–utility sweep at ℓ = 10 (MAR mean ± sd over seeds):", "",
              C.md_table(r["sweep"], ["method", "epsilon", "mar", "mar_sd"], {"mar": "{:.4f}", "mar_sd": "{:.4f}"})]
    L += ["## Paper's claims (Fig. 2 on eICU, Figs. 8–9 on MovieLens 1M)", "",
          "- Fig. 2a: individual models have lower training RMSE than the joint model (H times more parameters); the "
          "federated model's training RMSE is comparable to the individual models'.",
          "- Fig. 2b: individual models' test RMSE is comparable to the joint model's (they overfit); the federated model "
          "generalises well.",
          "- Fig. 2c: the federated model obtains the best ranking of the three.",
          "- Figs. 8–9 (MovieLens): the global non-private MF has lower RMSE than the distributed approaches, but the "
          "prototype models rank better than the individual models (privacy costs something, collaboration helps).",
          "", "Where a claim does not hold here, the likely reasons are stated in the verdict lines and in the README "
          "(much smaller data: the demo's hospitals have 10–40 stays, so k = 10 prototypes per hospital at ε = 0.1 "
          "are almost pure noise; the paper's hospitals are ~100× larger)."]
    out["md"].write_text("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
