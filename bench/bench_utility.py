"""A DP federation that pays (issue 15): every DP method, with and without secure aggregation, against
``dp-popularity`` and ``individual`` on four federations.

Federations: ``sample:clinic`` (30 hospitals), the eICU demo by hospital and by region (medication
counts), MovieLens 100K by the first ZIP digit. ε ∈ {0.1, 0.3, 1, 3, 10, ∞}, δ = 1e-6, three seeds
(split and noise seeded: simulation mode, "noise reproducible, no privacy claim"), MAR (lower is
better, 0.5 = random), same split for every method of a seed.

DP methods × trust model:

* ``dp-cooccurrence`` (summable: popularity + Analyze-Gauss co-occurrence) — ``secure`` and ``none``;
* ``dp-popularity`` (summable: the noisy sum of unit-norm rows) — ``secure`` and ``none``;
* ``dp-gaussian`` (the paper's prototypes with Gaussian recovery; k-means prototypes are per-entity
  sets that do not add up, so secure aggregation does not apply to them: run once, ``none``).

References: ``individual`` (no sharing), ``popularity`` (non-private, exact totals pooled),
``central`` (non-private, pooled MF).

Targets (issue 15): (1) the best DP method beats ``dp-popularity`` at the same ε and the same trust
model for every ε ≥ 0.3 on all four; (2) crossing ε against ``individual`` ≤ 1 (secure) / ≤ 3 (none)
on the clinic sample and eICU by hospital and by region, ≤ 3 / ≤ 10 on MovieLens; (3) at ε = ∞ the
federated model beats non-private ``popularity`` on all four.

    /work/venv/bin/python bench/bench_utility.py [--quick] [--jobs 2] [--seeds 3] [--data clinic,...]

Writes bench/results/utility.json, utility.md and utility.png (``utility_quick.*`` with --quick).
Real data is read from ../shared/data and never written anywhere.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    from _common import machine, md_table, outputs, write_results  # noqa: E402
except ImportError:  # the plotting child (--plot-from) runs in a venv with matplotlib only
    pass

EPS = [0.1, 0.3, 1.0, 3.0, 10.0, math.inf]
DATASETS = ["clinic", "eicu-hospital", "eicu-region", "ml100k"]
LABEL = {"clinic": "sample:clinic (30 hospitals)", "eicu-hospital": "eICU demo by hospital",
         "eicu-region": "eICU demo by region", "ml100k": "MovieLens 100K by ZIP"}
#: (name in the tables, method, aggregation)
DP_CONFIGS = [
    ("dp-cooccurrence secure", "dp-cooccurrence", "secure"),
    ("dp-cooccurrence", "dp-cooccurrence", "none"),
    ("dp-popularity secure", "dp-popularity", "secure"),
    ("dp-popularity", "dp-popularity", "none"),
    ("dp-gaussian", "dp-gaussian", "none"),
]
REFS = ["individual", "popularity", "central"]
#: prototypes per entity for dp-gaussian (its maximum; as in bench_dp_ml.py)
K = {"ml100k": 10, "eicu-region": 10, "eicu-hospital": 2, "clinic": 5}
#: eICU items come from the data (no declared catalogue), so every DP run would first select its
#: catalogue by per-entity DP partition selection (20 % of ε), which keeps no item for hospitals of
#: ~15 stays (MAR 0.5 at every finite ε, see utility_dp_catalogue.md). The benchmark declares the
#: demo's drug vocabulary as the formulary instead (``--catalogue dp`` measures the other case).
DECLARE_EICU_FORMULARY = True
#: crossing-ε targets against individual: (secure, none)
CROSS_TARGET = {"clinic": (1, 3), "eicu-hospital": (1, 3), "eicu-region": (1, 3), "ml100k": (3, 10)}


def load(name: str):
    from _common import eicu, movielens

    from dpfed_core.data.loaders import load_data

    if name == "ml100k":
        return movielens()
    if name in ("eicu-region", "eicu-hospital"):
        # With the formulary declared (default): the demo's drug vocabulary stands in for a public
        # hospital formulary (bench/_common.EICU_CATALOGUE_NOTE); a deployment declares a real one.
        return eicu("region" if name == "eicu-region" else "hospitalid",
                    declared_catalogue=DECLARE_EICU_FORMULARY)
    return load_data(f"sample:{name}")


def run_unit(name: str, seed: int, epsilons: list[float]) -> list[dict]:
    """All methods of one (federation, seed) on that seed's split."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method

    ds = load(name)
    base = RunConfig(seed=seed, delta=1e-6, k=K[name], simulation=True)
    split = make_split(ds, base)
    rows = []
    for ref in REFS:
        t = time.perf_counter()
        d, _ = run_method(ds, base.replace(method=ref), split)
        rows.append({"data": name, "seed": seed, "method": ref, "epsilon": math.inf,
                     "mar": d["overall"]["mar"], "seconds": time.perf_counter() - t})
    for label, meth, agg in DP_CONFIGS:
        for e in epsilons:
            cfg = base.replace(method=meth, epsilon=e, aggregation=agg)
            if meth == "dp-gaussian":
                cfg = cfg.replace(server_weighting="counts")
            t = time.perf_counter()
            d, res = run_method(ds, cfg, split)
            eps_proven = d["privacy"]["epsilon"]
            assert eps_proven <= e * (1 + 1e-9), (label, e, eps_proven)
            trust = d["privacy"].get("trust", {})
            pub = res.extra.get("public", {}) if isinstance(res.extra, dict) else {}
            rows.append({
                "data": name, "seed": seed, "method": label, "epsilon": e, "mar": d["overall"]["mar"],
                "epsilon_proven": eps_proven,
                "epsilon_coalition": trust.get("against_server_and_other_entities", {}).get("epsilon"),
                "kept_directions": pub.get("kept_directions"), "seconds": time.perf_counter() - t,
            })
        print(f"{name} seed {seed} {label} done", flush=True)
    return rows


def snr_diagnostic(name: str, epsilons: list[float]) -> list[dict]:
    """Non-private diagnostic (computed by the benchmark, never by the mechanism): the eigenvalues of
    the exact co-occurrence sum Σ_h X̃_hᵀX̃_h on the items the method would keep, against the noise
    edge √(2M)·σ_sum the server thresholds at, per ε and trust model: how many directions can
    survive the noise at best."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.federation.summable import DPCooccurrence, _unit_rows

    ds = load(name)
    split = make_split(ds, RunConfig(seed=0))
    m = DPCooccurrence()
    Xn = _unit_rows(split.train, ds.value_max)
    pop = np.asarray(Xn.sum(0)).ravel()
    items = np.sort(np.argsort(-pop, kind="stable")[: m.max_items])
    Xs = _unit_rows(Xn[:, items], 1.0)
    w = np.linalg.eigvalsh((Xs.T @ Xs).toarray())[::-1]
    H, M = ds.n_entities, items.size
    out = []
    for e in epsilons:
        if not math.isfinite(e):
            continue
        row = {"data": name, "epsilon": e, "top eigenvalues": ", ".join(f"{x:.0f}" for x in w[:3]),
               "10th eigenvalue": float(w[min(9, M - 1)])}
        for agg in ("secure", "none"):
            plan = DPCooccurrence(epsilon=e, delta=1e-6, aggregation=agg).budget(H)
            sigma_sum = plan["sigma"]["co-occurrence"] / plan["divisor"] * math.sqrt(H)
            edge = math.sqrt(2 * M) * sigma_sum
            row[f"edge ({agg})"] = edge
            row[f"directions above edge ({agg})"] = int((w > edge).sum())
        out.append(row)
    return out


def _unit_child(args_tuple):
    return run_unit(*args_tuple)


# ------------------------------------------------------------------------------------ analysis
def table(rows: list[dict]) -> dict:
    """{(data, method, ε): (mean, sd, n)} over seeds."""
    g: dict = {}
    for r in rows:
        g.setdefault((r["data"], r["method"], float(r["epsilon"])), []).append(r["mar"])
    return {k: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, len(v)) for k, v in g.items()}


def crossing(tab: dict, data: str, method: str, baseline: str, epsilons: list[float]) -> float | None:
    """Smallest ε from which ``method``'s mean beats ``baseline``'s (same ε if the baseline is DP)
    at that ε and every larger one."""
    pts = []
    for e in epsilons:
        if (data, method, e) not in tab:
            continue
        ref = tab.get((data, baseline, e)) or tab.get((data, baseline, math.inf))
        pts.append((e, tab[(data, method, e)][0] < ref[0]))
    c = None
    for e, ok in reversed(pts):
        if not ok:
            break
        c = e
    return c


def fe(e) -> str:
    if e is None:
        return "never"
    return "∞" if math.isinf(e) else f"{e:g}"


def analyse(rows: list[dict], epsilons: list[float], datasets: list[str]) -> tuple[str, dict]:
    tab = table(rows)
    md, verdicts = [], {}
    dp_names = [c[0] for c in DP_CONFIGS]
    md.append("## MAR, mean ± sd over seeds (lower is better; 0.5 = random)\n")
    for data in datasets:
        md.append(f"### {LABEL[data]}\n")
        ref_line = ", ".join(f"`{r}` {tab[(data, r, math.inf)][0]:.4f} ± {tab[(data, r, math.inf)][1]:.4f}"
                             for r in REFS if (data, r, math.inf) in tab)
        md.append(f"References (non-private or no sharing): {ref_line}.\n")
        trs = []
        for name in dp_names:
            row = {"method": name}
            for e in epsilons:
                v = tab.get((data, name, e))
                row[f"ε={fe(e)}"] = f"{v[0]:.4f} ± {v[1]:.4f}" if v else "—"
            trs.append(row)
        md.append(md_table(trs))
        # crossing ε per method vs individual and vs dp-popularity (same trust model)
        cr = []
        for name in dp_names:
            pop = "dp-popularity secure" if name.endswith("secure") else "dp-popularity"
            cr.append({"method": name, "crossing ε vs individual": fe(crossing(tab, data, name, "individual", epsilons)),
                       "crossing ε vs dp-popularity (same trust model)":
                           "—" if name.startswith("dp-popularity") else fe(crossing(tab, data, name, pop, epsilons))})
        md.append(md_table(cr))
        # loses-to-dp-popularity statements
        losers = []
        for name in dp_names:
            if name.startswith("dp-popularity"):
                continue
            pop = "dp-popularity secure" if name.endswith("secure") else "dp-popularity"
            for e in epsilons:
                a, b = tab.get((data, name, e)), tab.get((data, pop, e))
                if a and b and a[0] >= b[0]:
                    losers.append(f"{name} at ε = {fe(e)} ({a[0]:.4f} vs {b[0]:.4f})")
        if losers:
            md.append("**Loses to `dp-popularity` (same ε, same trust model):** " + "; ".join(losers) + ".\n")
        kept = [r for r in rows if r["data"] == data and r.get("kept_directions") is not None]
        if kept:
            kk = []
            for name in ("dp-cooccurrence secure", "dp-cooccurrence"):
                row = {"kept eigen-directions": name}
                for e in epsilons:
                    v = [r["kept_directions"] for r in kept if r["method"] == name and r["epsilon"] == e]
                    row[f"ε={fe(e)}"] = f"{np.mean(v):.1f}" if v else "—"
                kk.append(row)
            md.append(md_table(kk))
    # ---------------------------------------------------------------- targets
    md.append("## Targets\n")
    t1 = []
    ok1 = True
    for data in datasets:
        for trust, suffix in (("secure", " secure"), ("none", "")):
            pop = f"dp-popularity{suffix}"
            cands = [n for n in dp_names if not n.startswith("dp-popularity")
                     and (n.endswith("secure") if trust == "secure" else not n.endswith("secure"))]
            for e in epsilons:
                if e < 0.3:
                    continue
                best = min(cands, key=lambda n: tab.get((data, n, e), (math.inf,))[0])
                a, b = tab[(data, best, e)], tab[(data, pop, e)]
                met = a[0] < b[0]
                ok1 &= met
                t1.append({"federation": data, "trust": trust, "ε": fe(e), "best DP method": best,
                           "its MAR": f"{a[0]:.4f} ± {a[1]:.4f}", "dp-popularity": f"{b[0]:.4f} ± {b[1]:.4f}",
                           "met": "yes" if met else "**no**"})
    md.append(f"**Target 1 — the best DP method beats `dp-popularity` at every ε ≥ 0.3 (same trust model): "
              f"{'MET' if ok1 else 'MISSED'}.**\n")
    md.append(md_table(t1))
    t2 = []
    ok2 = True
    for data in datasets:
        for trust, name, target in (("secure", "dp-cooccurrence secure", CROSS_TARGET[data][0]),
                                    ("none", "dp-cooccurrence", CROSS_TARGET[data][1])):
            c = crossing(tab, data, name, "individual", epsilons)
            met = c is not None and c <= target
            ok2 &= met
            t2.append({"federation": data, "trust": trust, "method": name, "crossing ε vs individual": fe(c),
                       "target": f"≤ {target}", "met": "yes" if met else "**no**"})
    md.append(f"**Target 2 — crossing ε against `individual`: {'MET' if ok2 else 'MISSED'}.**\n")
    md.append(md_table(t2))
    t3 = []
    ok3 = True
    for data in datasets:
        a, b = tab[(data, "dp-cooccurrence", math.inf)], tab[(data, "popularity", math.inf)]
        met = a[0] < b[0]
        ok3 &= met
        t3.append({"federation": data, "dp-cooccurrence at ε = ∞": f"{a[0]:.4f} ± {a[1]:.4f}",
                   "popularity (non-private)": f"{b[0]:.4f} ± {b[1]:.4f}",
                   "central MF": f"{tab[(data, 'central', math.inf)][0]:.4f}", "met": "yes" if met else "**no**"})
    md.append(f"**Target 3 — at ε = ∞ the federated model beats non-private popularity: {'MET' if ok3 else 'MISSED'}.**\n")
    md.append(md_table(t3))
    verdicts = {"target1_best_dp_beats_dp_popularity": ok1, "target2_crossing_vs_individual": ok2,
                "target3_beats_popularity_at_inf": ok3}
    return "\n".join(md), verdicts


def plot(rows: list[dict], epsilons: list[float], datasets: list[str], path: Path) -> str:
    """PNG: MAR vs ε per federation. matplotlib comes from requirements-bench.txt; if this
    interpreter lacks it, $DPFED_PLOT_PYTHON (a venv with it) draws from the JSON."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        py = os.environ.get("DPFED_PLOT_PYTHON")
        if not py:
            return "matplotlib is not installed (requirements-bench.txt): no PNG"
        import json
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"rows": [{**r, "epsilon": str(r["epsilon"])} for r in rows],
                       "epsilons": [str(e) for e in epsilons], "datasets": datasets, "out": str(path)}, f)
        subprocess.run([py, __file__, "--plot-from", f.name], check=True)
        os.unlink(f.name)
        return ""
    _plot(rows, epsilons, datasets, path)
    return ""


def _plot(rows, epsilons, datasets, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 8, "axes.titlesize": 9, "legend.fontsize": 7, "lines.markersize": 4})
    tab = table(rows)
    f, ax = plt.subplots(1, len(datasets), figsize=(3.6 * len(datasets), 3.0), squeeze=False)
    finite = [e for e in epsilons if math.isfinite(e)]
    xinf = max(finite) * 3
    xs = [e if math.isfinite(e) else xinf for e in epsilons]
    styles = {"dp-cooccurrence secure": ("C0", "-"), "dp-cooccurrence": ("C0", "--"),
              "dp-popularity secure": ("C1", "-"), "dp-popularity": ("C1", "--"), "dp-gaussian": ("C2", "--")}
    for i, data in enumerate(datasets):
        a = ax[0][i]
        for name, (c, ls) in styles.items():
            m = [tab.get((data, name, e), (np.nan, 0))[0] for e in epsilons]
            s = [tab.get((data, name, e), (np.nan, 0))[1] for e in epsilons]
            a.errorbar(xs, m, yerr=s, color=c, ls=ls, marker="o", label=name, capsize=2)
        for ref, c in (("individual", "k"), ("popularity", "0.5"), ("central", "C3")):
            if (data, ref, math.inf) in tab:
                a.axhline(tab[(data, ref, math.inf)][0], color=c, ls=":", lw=1, label=ref)
        a.set_xscale("log")
        a.set_xticks(xs)
        a.set_xticklabels([fe(e) for e in epsilons])
        a.set_title(LABEL[data])
        a.set_xlabel("ε per entity (δ = 1e-6)")
        a.set_ylabel("MAR (lower is better)")
        a.set_ylim(0, 0.55)
    ax[0][0].legend(loc="upper right")
    f.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    f.savefig(tmp, dpi=72)
    plt.close(f)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 seed, ε ∈ {0.3, 1, 10, ∞}")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes over (federation, seed)")
    ap.add_argument("--data", default=",".join(DATASETS))
    ap.add_argument("--plot-from", help=argparse.SUPPRESS)
    ap.add_argument("--catalogue", choices=["declared", "dp"], default="declared",
                    help="eICU: declare the demo's drug vocabulary as the formulary (default) or let every DP "
                         "run select its catalogue by DP partition selection (writes utility_dp_catalogue.*)")
    ap.add_argument("--report-only", action="store_true",
                    help="write the report from the rows log of an earlier (possibly unfinished) run")
    args = ap.parse_args()
    if args.plot_from:
        import json
        d = json.loads(Path(args.plot_from).read_text())
        rows = [{**r, "epsilon": float(r["epsilon"])} for r in d["rows"]]
        _plot(rows, [float(e) for e in d["epsilons"]], d["datasets"], Path(d["out"]))
        return
    epsilons = [0.3, 1.0, 10.0, math.inf] if args.quick else EPS
    seeds = list(range(1 if args.quick else args.seeds))
    datasets = args.data.split(",")
    global DECLARE_EICU_FORMULARY
    DECLARE_EICU_FORMULARY = args.catalogue == "declared"
    out = outputs("utility" if DECLARE_EICU_FORMULARY else "utility_dp_catalogue", args.quick)
    env = machine()
    t0 = time.perf_counter()
    # Largest units first so the pool's tail is short.
    order = {"ml100k": 0, "eicu-hospital": 1, "clinic": 2, "eicu-region": 3}
    units = sorted(((d, s, epsilons) for d in datasets for s in seeds), key=lambda u: order.get(u[0], 9))
    rows: list[dict] = []
    # Every finished (federation, seed) is appended to a JSON-lines log, so a long run that is cut
    # short can still be reported (--report-only) from the units it finished.
    log = out["json"].with_suffix(".rows.jsonl")
    if args.report_only:
        import json
        rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        for r in rows:
            for k in ("epsilon", "epsilon_proven", "epsilon_coalition"):
                if isinstance(r.get(k), str):  # json_safe wrote inf as "inf"
                    r[k] = float(r[k])
        done = {(r["data"], r["seed"]) for r in rows}
        datasets = [d for d in datasets if any(k[0] == d for k in done)]
        seeds = sorted({k[1] for k in done})
    else:
        import json

        from dpfed_core.evaluation.experiments import json_safe
        log.write_text("")

        def keep(part):
            rows.extend(part)
            with log.open("a") as fh:
                for r in part:
                    fh.write(json.dumps(json_safe(r)) + "\n")

        if args.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor, as_completed
            with ProcessPoolExecutor(args.jobs) as ex:
                for fut in as_completed([ex.submit(run_unit, *u) for u in units]):
                    keep(fut.result())
        else:
            for u in units:
                keep(run_unit(*u))
    seconds = time.perf_counter() - t0
    analysis, verdicts = analyse(rows, epsilons, datasets)
    png = out["png"]()
    plot_note = plot(rows, epsilons, datasets, png)
    env["loadavg_1m_at_end"] = os.getloadavg()[0]
    md = [f"# A DP federation that pays (issue 15){' — quick' if args.quick else ''}\n",
          f"Seeds {seeds}, ε grid {[fe(e) for e in epsilons]}, δ = 1e-6, MAR on the held-out entries "
          "(SPEC §4 split, same split for every method of a seed). **Simulation mode: noise reproducible "
          "from the seed, no privacy claim** (the production noise is drawn from OS entropy). Every DP run's "
          "ledger-proven ε is asserted ≤ the requested ε. Settings that differ from the paper: the summable "
          "methods are not the paper's protocol (issue 15); `dp-gaussian` uses k as in `bench_dp_ml.py` "
          f"({K}) with server weighting by noisy counts; rank ℓ = 10, λ = 0.1, zero mode everywhere.\n",
          "`secure` = secure aggregation (each entity adds σ/√H of the noise, the server learns only the "
          "sum; in-process the sum is formed directly — the cryptographic protocol is the Flower deployment's). "
          "Without it each entity adds the full σ. `dp-gaussian`'s prototypes are per-entity sets that do "
          "not add up, so secure aggregation does not apply to it.\n",
          ("**Catalogue.** sample:clinic and MovieLens declare their items (public metadata). The eICU demo's "
           "items come from the data; here its drug vocabulary is *declared as the formulary* (a stand-in for a "
           "public hospital formulary; a deployment must declare a real one). Without a declared catalogue every "
           "DP run first selects items by per-entity DP partition selection (20 % of ε), which on the eICU demo "
           "keeps no item at any finite ε ≤ 10 by hospital and few by region: "
           "[utility_dp_catalogue.md](utility_dp_catalogue.md).\n" if DECLARE_EICU_FORMULARY else
           "**Catalogue: DP partition selection** on the two eICU federations (no declared formulary; the "
           "other federations declare their items, so they are on utility.md only): every DP "
           "method first spends 20 % of ε and half of δ per entity selecting items; an item must reach a "
           "noisy per-entity user count above the threshold. The default report (formulary declared) is "
           "[utility.md](utility.md).\n"),
          f"![MAR vs ε]({png.name})\n" if not plot_note else f"({plot_note})\n",
          analysis,
          "\n## Guarantee against a coalition (secure aggregation)\n",
          "Against the server alone the guarantee is the requested (ε, δ). Against the server together "
          "with all other entities, only the entity's own noise share σ/√H protects its users "
          "(PLD accountant, δ = 1e-6):\n"]
    coal = []
    for data in datasets:
        row = {"federation": data}
        for e in epsilons:
            v = [r["epsilon_coalition"] for r in rows if r["data"] == data and r["method"] == "dp-cooccurrence secure"
                 and r["epsilon"] == e and r.get("epsilon_coalition") is not None]
            row[f"ε={fe(e)}"] = f"{v[0]:.3g}" if v else "—"
        coal.append(row)
    md.append(md_table(coal))
    md.append("\n## What limits the co-occurrence signal (non-private diagnostic)\n")
    md.append("Eigenvalues of the exact co-occurrence sum (seed 0's training rows, the items the method "
              "keeps) against the noise edge √(2M)·σ_sum the server keeps directions above "
              "(σ_sum = σ with secure aggregation, σ·√H without). A direction below the edge cannot be "
              "told from noise; the server's V then has fewer useful factors than `individual`'s local "
              "MF, which fits ℓ = 10 factors on the entity's own rows.\n")
    snr = []
    for data in datasets:
        snr += snr_diagnostic(data, epsilons)
    md.append(md_table(snr, fmt={"10th eigenvalue": "{:.1f}", "edge (secure)": "{:.1f}", "edge (none)": "{:.1f}"}))
    if args.report_only:
        md.append("\nReport written with `--report-only` from the rows log of an earlier run (its run time "
                  "is in that run's report).\n")
    md.append(f"\nRun time {seconds / 60:.1f} min with {args.jobs} worker(s); machine: {env['cpus']} cores, "
              f"load average {env['loadavg_1m_at_start']:.1f} at start, {env['loadavg_1m_at_end']:.1f} at end "
              f"(shared machine), git {env['git_commit']}.\n")
    doc = {"seeds": seeds, "epsilons": epsilons, "datasets": datasets, "rows": rows, "verdicts": verdicts,
           "machine": env, "seconds": seconds}
    write_results(out["json"], doc, "\n".join(md))
    if (DECLARE_EICU_FORMULARY and not args.quick and not args.report_only
            and args.data == ",".join(DATASETS)):
        # The comparison page the catalogue paragraph links: the same grid on the two eICU federations
        # (the others declare their items either way) with per-entity DP catalogue selection — part of
        # every full run, so `make bench` produces both pages.
        subprocess.run([sys.executable, __file__, "--catalogue", "dp", "--data", "eicu-hospital,eicu-region",
                        "--seeds", str(args.seeds), "--jobs", str(args.jobs)], check=True)


if __name__ == "__main__":
    main()
