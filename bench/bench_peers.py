"""Peers side by side, same data, same machine, one run. Ratios, not lone times.

A. **NMF solvers.** Our HALS NMF (``dpfed_core.models.factorization.fit_nmf``, zero mode) against
   scikit-learn's ``NMF`` (solvers ``cd`` and ``mu``) on the *same objective*: scikit-learn minimises
   ½‖X − WH‖² + ½·α_W·n_features·‖W‖² + ½·α_H·n_samples·‖H‖² (with ``l1_ratio = 0``), so
   α_W = λ/m and α_H = λ/n give exactly ½·F(U, V) of SPEC §1. Both objectives are evaluated by
   ``factorization.objective``. Each solver runs to its own default stopping rule (max 200
   iterations), and again for a fixed 50 iterations without early stopping (cost per iteration).
B. **implicit's ALS** (Hu et al. 2008; a *different* objective: confidence-weighted squared loss,
   not non-negative), in its own venv ``bench/.venv-implicit``: fit time and ranking quality (MAR,
   precision@10, NDCG@10) on the same split as our central NMF.
C. **DP k-means.** Our ``dp-prototypes`` against IBM diffprivlib's ``KMeans`` (0.6.6, DP-Lloyd, pure
   ε-DP; its own venv ``bench/.venv-diffprivlib`` with scikit-learn < 1.8) at equal ε, and against
   non-private k-means++ (scikit-learn): k-means loss of the released centres on all points / n and
   seconds.

Usage::

    .venv/bin/python bench/bench_peers.py [--quick] [--only nmf,implicit,dpkmeans]

The peer venvs (gitignored) are created by ``make bench`` from the pinned
``bench/requirements-peer-implicit.txt`` and ``bench/requirements-peer-diffprivlib.txt``; by hand::

    python3.11 -m venv bench/.venv-implicit && bench/.venv-implicit/bin/pip install -r bench/requirements-peer-implicit.txt
    python3.11 -m venv bench/.venv-diffprivlib && \\
        bench/.venv-diffprivlib/bin/pip install -r bench/requirements-peer-diffprivlib.txt
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

VENV_IMPLICIT = C.BENCH / ".venv-implicit" / "bin" / "python"
VENV_DPL = C.BENCH / ".venv-diffprivlib" / "bin" / "python"
CHILD = C.BENCH / "_peer_child.py"
LAM = 0.1


def _child(python: Path, kind: str, task: dict, tmp: Path, timeout: float = 3600) -> dict:
    tp = tmp / f"task_{kind}.json"
    tp.write_text(json.dumps(task))
    p = subprocess.run([str(python), str(CHILD), kind, str(tp)], capture_output=True, text=True, timeout=timeout)
    for line in p.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    raise RuntimeError(f"{kind} worker failed: {(p.stderr or '').strip()[-800:]}")


# ======================================================================================= A. NMF
def problems(quick: bool) -> list[tuple[str, object]]:
    out = []
    syn = C.synthetic(5_000 if quick else 20_000, 500, 10, seed=0)
    out.append((f"synthetic {syn.n_users:,}×{syn.n_items} (5 % dense)", syn.X))
    try:
        ml = C.movielens()
        out.append((f"MovieLens 100K {ml.n_users}×{ml.n_items} ratings", ml.X))
    except Exception as exc:  # noqa: BLE001
        print("MovieLens unavailable:", exc)
    if not quick:
        try:
            ei = C.eicu("hospitalid")
            out.append((f"eICU demo {ei.n_users}×{ei.n_items} medication counts", ei.X))
        except Exception as exc:  # noqa: BLE001
            print("eICU unavailable:", exc)
    return out


def bench_nmf(quick: bool) -> dict:
    from sklearn.decomposition import NMF

    from dpfed_core.models.factorization import fit_nmf, objective

    ranks = (10,) if quick else (10, 50)
    seeds = (0,) if quick else (0, 1, 2)
    rows = []
    for pname, X in problems(quick):
        X = sp.csr_matrix(X, dtype=np.float64)
        n, m = X.shape
        for rank in ranks:
            for regime, max_iter, early in (("own stopping rule", 200, True), ("50 iterations", 50, False)):
                rec = {"problem": pname, "rank": rank, "regime": regime}
                per = {}
                for solver in ("ours (HALS)", "sklearn cd", "sklearn mu"):
                    objs, times, iters = [], [], []
                    for seed in seeds:
                        t0 = time.perf_counter()
                        if solver.startswith("ours"):
                            U, V, hist = fit_nmf(X, rank, LAM, "zero", max_iter=max_iter,
                                                 tol=1e-5 if early else 0.0, rng=np.random.default_rng(seed))
                            it = len(hist) - 1
                        else:
                            model = NMF(n_components=rank, solver=solver.split()[1], init=None,
                                        alpha_W=LAM / m, alpha_H=LAM / n, l1_ratio=0.0,
                                        max_iter=max_iter, tol=1e-4 if early else 0.0, random_state=seed)
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                U = model.fit_transform(X)
                            V = model.components_.T
                            it = int(model.n_iter_)
                        times.append(time.perf_counter() - t0)
                        objs.append(objective(X, U, V, LAM, "zero"))
                        iters.append(it)
                    per[solver] = {"objective": float(np.median(objs)), "seconds": float(np.median(times)),
                                   "iterations": float(np.median(iters))}
                ours = per["ours (HALS)"]
                for solver, v in per.items():
                    rows.append({**rec, "solver": solver, **v,
                                 "objective_ratio": v["objective"] / ours["objective"],
                                 "time_ratio": v["seconds"] / ours["seconds"]})
                print(f"[peers/nmf] {pname} r={rank} {regime}: " + "; ".join(
                    f"{s}: F×{r['objective_ratio']:.4f} t×{r['time_ratio']:.2f} ({r['seconds']:.2f}s, {r['iterations']:.0f} it)"
                    for s, r in zip(per, rows[-3:])), flush=True)
    return {"rows": rows, "lam": LAM, "seeds": list(seeds)}


# ================================================================================== B. implicit
def bench_implicit(quick: bool, tmp: Path) -> dict:
    if not VENV_IMPLICIT.exists():
        return {"skipped": "bench/.venv-implicit is missing (see the module docstring to create it)"}
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method

    sets = [("MovieLens 100K (ZIP)", C.movielens)]
    if not quick:
        sets.append(("eICU demo (hospital)", lambda: C.eicu("hospitalid")))
    rows, curves = [], []
    version = None
    for dname, loader in sets:
        ds = loader()
        for rank in ((10,) if quick else (10, 50)):
            cfg = RunConfig(method="central", rank=rank, k=10, seed=0)
            split = make_split(ds, cfg)
            t0 = time.perf_counter()
            doc, _ = run_method(ds, cfg, split)
            t_ours = doc["timings"]["central_fit"]
            base = {"data": dname, "rank": rank}
            rows.append({**base, "model": "ours: central NMF (HALS)", "threads": "numpy default",
                         "seconds": t_ours, **{k: doc["overall"][k] for k in ("mar", "precision_at_10", "ndcg_at_10", "test_rmse")}})
            sp.save_npz(tmp / "train.npz", split.train)
            for iters in (15, 50):
                res, ev = _implicit_fit(tmp, rank, iters, [1, 0], split, ds)
                version = res["version"]
                for run in res["runs"]:
                    rows.append({**base, "model": f"implicit ALS, {iters} it", "threads": run["threads"] or "all",
                                 "seconds": run["seconds"], "time_ratio": run["seconds"] / t_ours,
                                 **{k: ev[k] for k in ("mar", "precision_at_10", "ndcg_at_10", "test_rmse")}})
            print(f"[peers/implicit] {dname} r={rank}: " + "; ".join(
                f"{r['model']} ({r['threads']}) {r['seconds']:.2f}s MAR {r['mar']:.3f}" for r in rows[-5:]), flush=True)
            curves.append(_mar_curves(dname, rank, split, cfg, ds, tmp, quick))
    return {"rows": rows, "version": version, "curves": curves,
            "note": "implicit's ALS minimises Σ c_ui (p_ui − u·v)² + λ(‖U‖² + ‖V‖²) over all cells with "
                    "confidence c_ui = 1 + α·x_ui (α = 1) and p_ui = [x_ui > 0]; factors are not "
                    "non-negative. Objectives differ, so only time and ranking quality are comparable."}


def _scores(U: np.ndarray, V: np.ndarray, split, ds) -> dict:
    """The overall ranking metrics of factors U, V on the split (top 10, zero mode)."""
    from dpfed_core.evaluation.metrics import evaluate

    return evaluate(U, V, split.train, split.test, split.test_users, ds.entity_of_user, ds.entity_names,
                    "zero", 10)["overall"]


def _implicit_fit(tmp: Path, rank: int, iterations: int, threads: list[int], split, ds) -> tuple[dict, dict]:
    """implicit's ALS on ``tmp/train.npz`` in its own venv, once per entry of ``threads`` (0: all cores):
    the worker's result (version, seconds per run) and the scores of its factors on the split."""
    task = {"train": str(tmp / "train.npz"), "rank": rank, "lam": LAM, "iterations": iterations, "seed": 0,
            "threads": threads, "out_U": str(tmp / "U.npy"), "out_V": str(tmp / "V.npy")}
    res = _child(VENV_IMPLICIT, "implicit", task, tmp)
    return res, _scores(np.load(tmp / "U.npy"), np.load(tmp / "V.npy"), split, ds)


#: Iteration counts of implicit's time-to-MAR curve (its default is 15).
IMPLICIT_CURVE_ITERS = tuple(range(1, 16))


def _first_at(curve: list[dict], target: float) -> dict | None:
    """The first point of a curve (in iterations) whose MAR is at most ``target``."""
    return next((p for p in curve if p["mar"] <= target + 1e-12), None)


def _mar_curves(dname: str, rank: int, split, cfg, ds, tmp: Path, quick: bool) -> dict:
    """Time to the same MAR, both models on one thread: each point is a fresh fit capped at i iterations
    (the same start, so its first i iterations are the full fit's), best of 3 wall seconds, and its MAR
    on the split. Ours: i = 1 … 20, then every 5 up to where its stopping rule ends the fit; implicit:
    i = 1 … 15. The common MAR is the higher of the two models' final MARs (ours at its stopping rule,
    implicit at 15 iterations), which both reach."""
    from dpfed_core.models.factorization import fit_nmf
    from dpfed_core.privacy.noise import method_generator

    def ours(max_iter: int) -> tuple[float, float, int]:
        best = math.inf
        for _ in range(1 if quick else 3):
            t0 = time.perf_counter()
            U, V, hist = fit_nmf(split.train, rank, cfg.lam, cfg.mode, max_iter=max_iter,
                                 rng=method_generator(cfg.seed, private=False, simulation=False))
            best = min(best, time.perf_counter() - t0)
        return best, float(_scores(U, V, split, ds)["mar"]), len(hist) - 1

    full_s, full_mar, n_iter = ours(cfg.max_iter)
    grid = [i for i in (*range(1, 21), *range(25, n_iter + 1, 5)) if i < n_iter] + [n_iter]
    our_curve = []
    for i in grid:
        sec, m, _ = (full_s, full_mar, n_iter) if i == n_iter else ours(i)
        our_curve.append({"iterations": i, "seconds": sec, "mar": m})
    imp_curve = []
    for iters in (IMPLICIT_CURVE_ITERS[:3] if quick else IMPLICIT_CURVE_ITERS):
        res, ev = _implicit_fit(tmp, rank, iters, [1] * (1 if quick else 3), split, ds)
        imp_curve.append({"iterations": iters, "seconds": min(r["seconds"] for r in res["runs"]),
                          "mar": float(ev["mar"])})
    common = max(full_mar, imp_curve[-1]["mar"])
    o, i = _first_at(our_curve, common), _first_at(imp_curve, common)
    i_ours_final = _first_at(imp_curve, full_mar)
    row = {"data": dname, "rank": rank, "ours_iterations": n_iter, "ours_s": full_s, "ours_mar": full_mar,
           "implicit_mar": imp_curve[-1]["mar"], "common_mar": common,
           "ours_s_to_common": o["seconds"], "ours_it_to_common": o["iterations"],
           "implicit_s_to_common": i["seconds"], "implicit_it_to_common": i["iterations"],
           "ratio_to_common": o["seconds"] / i["seconds"],
           "implicit_s_to_ours_final": i_ours_final["seconds"] if i_ours_final else math.nan,
           "ratio_as_run": full_s / i_ours_final["seconds"] if i_ours_final else math.nan,
           "ours_best_mar": min(p["mar"] for p in our_curve),
           "ours_best_it": min(our_curve, key=lambda p: p["mar"])["iterations"]}
    print(f"[peers/implicit] {dname} r={rank}: common MAR {common:.4f}: ours {o['seconds']:.3f}s "
          f"({o['iterations']} it), implicit {i['seconds']:.3f}s ({i['iterations']} it); as run "
          f"{row['ratio_as_run']:.2f}x", flush=True)
    return {"summary": row, "ours": our_curve, "implicit": imp_curve}


# ================================================================================== C. DP k-means
def _loss(X: np.ndarray, P: np.ndarray) -> float:
    total, pp = 0.0, (P * P).sum(1)
    for s in range(0, X.shape[0], 20_000):
        B = X[s:s + 20_000]
        d = (B * B).sum(1)[:, None] - 2 * B @ P.T + pp[None, :]
        total += float(np.maximum(d.min(1), 0).sum())
    return total / X.shape[0]


def bench_dpkmeans(quick: bool, tmp: Path) -> dict:
    from sklearn.cluster import KMeans

    from dpfed_core.federation.dp_prototypes import DPPrototypes
    from dpfed_core.privacy.ledger import PrivacyLedger
    from dpfed_core.privacy.noise import method_generator

    eps_grid = (0.1, 1.0, 10.0)
    seeds = (0, 1) if quick else (0, 1, 2)
    import _dpkmeans_setting as KS

    syn = C.synthetic(10_000, 500, 10, seed=1)
    # the mixtures use the one documented setting of dp_kmeans.md (rows clipped, k fixed); the count
    # data use the library's defaults except k, which is fixed too (cluster_size=None)
    settings = [
        ("Google's recipe, d = 100, k = 64", KS.google_recipe(20_000 if quick else 100_000), 64, (-1.0, 1.0),
         dict(KS.DP_SETTING)),
        ("held-out mixture, d = 100, k = 64", KS.heldout_mixture(2_000 if quick else 10_000), 64, (-1.0, 1.0),
         dict(KS.DP_SETTING)),
        (f"synthetic Poisson entity {syn.n_users:,}×{syn.n_items}, k = 50", syn.X.toarray(), 50,
         (0.0, syn.value_max), dict(value_max=syn.value_max, cluster_size=None)),
    ]
    if not quick:
        ml = C.movielens()
        settings.append((f"MovieLens 100K all users {ml.n_users}×{ml.n_items}, k = 10", ml.X.toarray(), 10,
                         (0.0, 5.0), dict(value_max=5.0, cluster_size=None)))
    rows = []
    dpl_version = None
    for sname, X, k, bounds, params in settings:
        n = X.shape[0]
        t0 = time.perf_counter()
        km = KMeans(n_clusters=k, init="k-means++", n_init=1, random_state=0).fit(X)
        t_km = time.perf_counter() - t0
        l_km = _loss(X, km.cluster_centers_)
        rows.append({"setting": sname, "method": "k-means++ (non-private)", "epsilon": math.inf,
                     "loss": l_km, "loss_sd": 0.0, "ratio_to_kmeanspp": 1.0, "seconds": t_km})
        # ours
        Xs = sp.csr_matrix(X)
        for variant, eps in [(v, e) for v in ("paper", "gaussian", "gaussian+lsh") for e in eps_grid]:
            ls, ts = [], []
            for seed in seeds:
                led = PrivacyLedger(eps, 1e-6)
                meth = DPPrototypes(k=k, epsilon=eps, delta=1e-6, variant=variant.split("+")[0],
                                    candidates="lsh" if variant.endswith("+lsh") else "partition", **params)
                t0 = time.perf_counter()
                rel = meth.release(Xs, method_generator(seed, private=True, simulation=True), led.for_entity("e"))
                ts.append(time.perf_counter() - t0)
                assert led.guarantee()[0] <= eps * (1 + 1e-9)
                ls.append(_loss(X, rel.prototypes))
            rows.append({"setting": sname, "method": f"dpfed dp-prototypes {variant} (ε, δ=1e-6)", "epsilon": eps,
                         "loss": float(np.mean(ls)), "loss_sd": float(np.std(ls)),
                         "ratio_to_kmeanspp": float(np.mean(ls)) / l_km, "seconds": float(np.mean(ts))})
        # diffprivlib
        if VENV_DPL.exists():
            np.save(tmp / "X.npy", X)
            task = {"X": str(tmp / "X.npy"), "k": k, "bounds": list(bounds), "epsilons": list(eps_grid),
                    "seeds": list(seeds), "out": str(tmp / "dpl")}
            res = _child(VENV_DPL, "diffprivlib", task, tmp)
            dpl_version = f"diffprivlib {res['version']} (scikit-learn {res['sklearn']})"
            for eps in eps_grid:
                runs = [r for r in res["runs"] if r["epsilon"] == eps]
                ls = [_loss(X, np.load(r["centres"])) for r in runs]
                rows.append({"setting": sname, "method": "diffprivlib KMeans (ε, δ=0)", "epsilon": eps,
                             "loss": float(np.mean(ls)), "loss_sd": float(np.std(ls)),
                             "ratio_to_kmeanspp": float(np.mean(ls)) / l_km,
                             "seconds": float(np.mean([r["seconds"] for r in runs]))})
        print(f"[peers/dpkmeans] {sname}: " + "; ".join(
            f"{r['method'].split()[0]} ε={r['epsilon']:g} ×{r['ratio_to_kmeanspp']:.2f} {r['seconds']:.2f}s"
            for r in rows if r["setting"] == sname), flush=True)
    return {"rows": rows, "diffprivlib": dpl_version, "seeds": list(seeds),
            "note": "loss = Σ_i min_j ‖x_i − c_j‖² / n on all points (unclipped). dp-prototypes: the default `paper` "
                    "recovery (Laplace on sums), the `gaussian` recovery variant, and `gaussian+lsh` (the LSH-tree coreset), default budget split; "
                    "k fixed everywhere (automatic k disabled, cluster_size=None); mixtures: the one setting of dp_kmeans.md "
                    "(entries in [−1, 1], Λ = 1, rows clipped to ℓ2 ≤ 1, s = d); count/rating data: value_max, default Λ, s and "
                    "row normalisation. Noise in simulation mode. diffprivlib: bounds = [lo, hi] per feature."}


# ====================================================================================== report
#: Target: central MF at most this many times implicit's ALS time to the same MAR (ranks 10 and 50).
TARGET_TIME_TO_MAR = 1.5


def _mar_curve_report(curves: list[dict]) -> list[str]:
    """Section B's time to the same MAR: a table per data set and rank, the two readings and their
    verdicts against :data:`TARGET_TIME_TO_MAR`, and the curves."""
    rows = [c["summary"] for c in curves]
    shown = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]
    L = ["### Time to the same MAR (one thread each)", "",
         "Each point of a curve is a fresh fit capped at i iterations (the same start, so its first i iterations are "
         "the full fit's), best of 3 wall seconds on one thread, scored on the split above. Ours: i = 1 … 20, then every "
         "5, up to where its stopping rule ends the fit; implicit: i = 1 … 15 (its default). *common MAR* = the higher "
         "of the two final MARs (ours at its stopping rule, implicit at 15 iterations), which both reach; "
         "*ratio_to_common* = our seconds to first reach it / implicit's. *ratio_as_run* = our whole fit, to its "
         "stopping rule as the product runs it, / implicit's seconds to first reach our final MAR (empty: implicit "
         "never reaches it within 15 iterations). *ours_best_mar* = the lowest MAR on our curve, at *ours_best_it* "
         "iterations.", ""]
    L.append(C.md_table(shown, ["data", "rank", "ours_iterations", "ours_s", "ours_mar", "implicit_mar", "common_mar",
                               "ours_it_to_common", "ours_s_to_common", "implicit_it_to_common",
                               "implicit_s_to_common", "ratio_to_common", "implicit_s_to_ours_final", "ratio_as_run",
                               "ours_best_mar", "ours_best_it"],
                        {**{k: "{:.3g}" for k in ("ours_s", "ours_s_to_common", "implicit_s_to_common",
                                                  "implicit_s_to_ours_final", "ratio_to_common", "ratio_as_run")},
                         **{k: "{:.4f}" for k in ("ours_mar", "implicit_mar", "common_mar", "ours_best_mar")}}))
    L += ["", f"Target: central MF ≤ {TARGET_TIME_TO_MAR}× implicit's ALS to the same MAR at rank 10 and 50.", ""]
    for r in rows:
        to_common = "met" if r["ratio_to_common"] <= TARGET_TIME_TO_MAR else "missed"
        if r["ratio_as_run"] is None or math.isnan(r["ratio_as_run"]):  # None: read back from the JSON
            as_run = "implicit never reaches our final MAR within 15 iterations"
        else:
            as_run = (f"{r['ratio_as_run']:.2f}× ({'met' if r['ratio_as_run'] <= TARGET_TIME_TO_MAR else 'missed'})")
        L.append(f"- {r['data']}, rank {r['rank']}: to the common MAR {r['common_mar']:.4f}: "
                 f"**{r['ratio_to_common']:.2f}×** ({to_common}); as run, to its stopping rule: {as_run}.")
    L += ["", "| data | rank | model | MAR by iterations (seconds) |", "|---|---|---|---|"]
    for c in curves:
        for name in ("ours", "implicit"):
            pts = ", ".join(f"{p['iterations']}: {p['mar']:.4f} ({p['seconds']:.3g})" for p in c[name])
            L.append(f"| {c['summary']['data']} | {c['summary']['rank']} | {name} | {pts} |")
    L.append("")
    return L


def write_report(doc: dict, out: dict) -> None:
    L = [f"# Peers side by side{' (quick)' if doc['quick'] else ''}", "",
         f"Machine: {doc['machine']['cpus']} cores ({doc['machine']['cpu']}), numpy {doc['machine']['numpy']}, "
         f"scikit-learn {doc['machine']['scikit-learn']}; load average at start {doc['machine']['loadavg_1m_at_start']:.1f}. "
         "Ratios are peer / ours (objective ratio > 1: the peer stopped at a worse objective; time ratio > 1: "
         "the peer is slower).", ""]
    # a run of every section measured them all at once: the machine line above says when
    if len({(m["git_commit"], m["date"]) for m in doc.get("measured", {}).values()}) > 1:
        names = {"nmf": "A", "implicit": "B", "dpkmeans": "C"}
        L += ["Sections measured by separate runs of this script: " + "; ".join(
            f"{names[p]} at {m['git_commit']} on {m['date']} (load average at start {m['loadavg_1m_at_start']:.1f})"
            for p, m in doc["measured"].items()) + ".", ""]
    nmf = doc.get("nmf")
    if nmf:
        L += ["## A. NMF with ridge: ours (HALS) vs scikit-learn `NMF`", "",
              f"Same objective F = ‖X − UVᵀ‖²_F + λ(‖U‖² + ‖V‖²), λ = {nmf['lam']}, all cells observed (zero mode); "
              "scikit-learn with `alpha_W = λ/m`, `alpha_H = λ/n`, `l1_ratio = 0`, its default init (NNDSVDa). "
              f"Median over seeds {nmf['seeds']}.", ""]
        L.append(C.md_table(nmf["rows"], ["problem", "rank", "regime", "solver", "objective", "objective_ratio",
                                          "seconds", "time_ratio", "iterations"],
                            {"objective": "{:.6g}", "objective_ratio": "{:.4f}", "seconds": "{:.3g}",
                             "time_ratio": "{:.2f}", "iterations": "{:.0f}"}))
        png = out["png"]("nmf")
        f, ax = C.fig(1, 1, w=6.0, h=3.0)
        labels, ys, cs = [], [], []
        for r in nmf["rows"]:
            if r["regime"] != "own stopping rule" or r["solver"].startswith("ours"):
                continue
            labels.append(f"{r['problem'].split(' ')[0]} r{r['rank']}\n{r['solver'].split()[1]}")
            ys.append(r["time_ratio"])
            cs.append(r["objective_ratio"])
        a = ax[0][0]
        a.bar(range(len(ys)), ys, color=["tab:blue" if "cd" in lb else "tab:orange" for lb in labels])
        for i, (y, c) in enumerate(zip(ys, cs)):
            a.text(i, y, f"F×{c:.3f}", ha="center", va="bottom", fontsize=6)
        a.axhline(1, color="k", lw=0.8)
        a.set_xticks(range(len(ys)), labels, fontsize=6)
        a.set_ylabel("time(sklearn) / time(ours)")
        a.set_yscale("log")
        a.set_title("scikit-learn NMF vs ours, to each one's stopping rule (labels: objective ratio)")
        C.save_fig(f, png)
        L += [f"![nmf]({png.name})", ""]
    imp = doc.get("implicit")
    if imp:
        L += ["## B. implicit's ALS vs our central NMF (same split)", ""]
        if "skipped" in imp:
            L.append(f"Skipped: {imp['skipped']}\n")
        else:
            L += [f"`implicit` {imp['version']} in `bench/.venv-implicit` (installed from PyPI: a manylinux wheel). "
                  + imp["note"] + " Lower MAR is better.", ""]
            L.append(C.md_table(imp["rows"], ["data", "rank", "model", "threads", "seconds", "time_ratio", "mar",
                                              "precision_at_10", "ndcg_at_10"],
                                {"seconds": "{:.3g}", "time_ratio": "{:.3f}", "mar": "{:.4f}",
                                 "precision_at_10": "{:.4f}", "ndcg_at_10": "{:.4f}"}))
            if imp.get("curves"):
                L += _mar_curve_report(imp["curves"])
    dk = doc.get("dpkmeans")
    if dk:
        L += ["## C. DP k-means: dp-prototypes vs diffprivlib `KMeans` vs k-means++", "",
              f"{dk.get('diffprivlib') or 'diffprivlib not available'}; seeds {dk['seeds']}. {dk['note']}", ""]
        L.append(C.md_table(dk["rows"], ["setting", "method", "epsilon", "loss", "loss_sd", "ratio_to_kmeanspp", "seconds"],
                            {"loss": "{:.4g}", "loss_sd": "{:.2g}", "ratio_to_kmeanspp": "{:.2f}", "seconds": "{:.3g}"}))
        png = out["png"]("dpkmeans")
        settings = list(dict.fromkeys(r["setting"] for r in dk["rows"]))
        f, ax = C.fig(len(settings), 1, w=3.4, h=2.8)
        for a, s in zip(ax[0], settings):
            rs = [r for r in dk["rows"] if r["setting"] == s]
            for meth, mk in (("dpfed dp-prototypes paper", "o-"), ("dpfed dp-prototypes gaussian", "^-"),
                             ("diffprivlib", "s-")):
                pts = sorted((r["epsilon"], r["ratio_to_kmeanspp"], r["loss_sd"] / max(r["loss"], 1e-300) * r["ratio_to_kmeanspp"])
                             for r in rs if r["method"].startswith(meth))
                if pts:
                    a.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts], fmt=mk,
                               label=meth.replace("dpfed dp-prototypes ", "ours, "), capsize=2)
            a.axhline(1, color="k", lw=0.8, label="k-means++")
            a.set_xscale("log")
            a.set_yscale("log")
            a.set_xlabel("ε")
            a.set_ylabel("loss / k-means++ loss")
            a.set_title(s, fontsize=7)
            a.legend()
        C.save_fig(f, png)
        L += [f"![dpkmeans]({png.name})", ""]
    out["md"].write_text("\n".join(L) + "\n")


SECTIONS = ("nmf", "implicit", "dpkmeans")


def _measured(m: dict) -> dict:
    return {k: m.get(k) for k in ("git_commit", "date", "loadavg_1m_at_start")}


def _kept_sections(path: Path, doc: dict, parts: list[str]) -> dict:
    """Copy into ``doc`` the saved sections this run does not measure; returns each kept section's
    commit, date and load (a saved document without them: its own machine line)."""
    if not path.exists() or set(SECTIONS) <= set(parts):
        return {}
    # JSON keeps ±inf as strings (json_safe): read them back as numbers, so the page formats them as before
    old = json.loads(path.read_text(), object_hook=lambda d: {
        k: float(v) if v in ("inf", "-inf") else v for k, v in d.items()})
    measured = {}
    for part in SECTIONS:
        if part not in parts and part in old:
            doc[part] = old[part]
            measured[part] = old.get("measured", {}).get(part) or _measured(old["machine"])
    return measured


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="nmf,implicit,dpkmeans")
    args = ap.parse_args(argv)
    parts = args.only.split(",")
    out = C.outputs("peers", args.quick)
    C.ensure_methods()
    doc = {"benchmark": "peers", "quick": args.quick, "machine": C.machine()}
    # a run of some sections keeps the saved others, each with the machine line it was measured under
    doc["measured"] = _kept_sections(out["json"], doc, parts)
    tmp = Path(tempfile.mkdtemp(prefix="dpfed_peers_"))  # outside the repository: derived data
    try:
        for part, run in (("nmf", lambda: bench_nmf(args.quick)), ("implicit", lambda: bench_implicit(args.quick, tmp)),
                          ("dpkmeans", lambda: bench_dpkmeans(args.quick, tmp))):
            if part in parts:
                doc[part] = run()
                doc["measured"][part] = _measured(doc["machine"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    C.write_doc(out["json"], doc)  # first: a failing figure must not lose the measurements
    write_report(doc, out)
    print(f"wrote {out['json']} and {out['md']}")


if __name__ == "__main__":
    main()
