"""What a site cannot name: the recommended method on tables without a declared catalogue, against the
same run had every site known every item name, and against the table with its names declared.

Without a declared catalogue the federation shares public hash buckets of the item names
(`privacy/catalogue.py`); a released bucket is a number, not a name, so each site maps the broadcast
factors back onto the names it holds rows for (`models/shared_items.py`: ``lift``, ``known_items``).
An item none of a site's users has can then reach that site from the federation only if the
catalogue is declared. This benchmark measures what that costs:

* **as run** — ``dp-cooccurrence``, secure aggregation, the product's code;
* **every name known** — the same run with each site's known names replaced by all of the table's
  (``known_items`` patched by this script): a non-private counterfactual — no release of the run
  gives a site those names — that bounds what a DP release of names could add;
* **declared** — the same table with its item names declared as the catalogue (``--items``): no
  selection, the whole budget for the method.

Zero mode, MAR (lower is better), rank 10, δ = 1e-6, simulation noise, every variant of a seed on
the same split; ε ∈ {1, 3}.

    .venv/bin/python bench/bench_site_names.py [--seeds 5] [--data eicu-hospital-nofml,...]

Writes bench/results/site_names.json and site_names.md. Real data is read from ../shared/data and
never written anywhere.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, md_table, outputs, write_results  # noqa: E402
from bench_utility import LABEL, load, paired  # noqa: E402

DATA = ["eicu-hospital-nofml", "eicu-region-nofml", "eicu-unit-paths", "ml-occupation-long", "zipf-paths-tiny"]
EPS = [1.0, 3.0]
METHOD = "dp-cooccurrence"
VARIANTS = ("as run", "every name known", "declared")


@contextmanager
def every_name_known():
    """Each site 'knows' every item name of the table (the counterfactual; never the product's)."""
    import scipy.sparse as sp

    def all_names(X):
        return np.ones(sp.csr_matrix(X).shape[1], dtype=bool)

    with mock.patch("dpfed_core.models.shared_items.known_items", all_names), \
            mock.patch("dpfed_core.federation.summable_protocol.known_items", all_names):
        yield


def run_seed(name: str, seed: int) -> list[dict]:
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method

    ds = load(name)
    declared = dataclasses.replace(ds, item_source="declared")
    base = RunConfig(seed=seed, delta=1e-6, rank=10, mode="zero", simulation=True)
    split = make_split(ds, base)
    rows = []

    def one(variant: str, cfg: RunConfig, data) -> None:
        d, res = run_method(data, cfg, split)
        cat = res.extra.get("catalogue") if isinstance(res.extra, dict) else None
        rows.append({"data": name, "seed": seed, "method": variant, "epsilon": cfg.epsilon,
                     "mar": d["overall"]["mar"], "items_kept": None if cat is None else int(len(cat))})

    one("local", base.replace(method="local"), ds)
    for e in EPS:
        cfg = base.replace(method=METHOD, epsilon=e, aggregation="secure")
        one("as run", cfg, ds)
        with every_name_known():
            one("every name known", cfg, ds)
        one("declared", cfg, declared)
    print(f"{name} seed {seed} done", flush=True)
    return rows


def table(rows: list[dict], name: str) -> list[dict]:
    out = []
    for e in EPS:
        row = {"ε": f"{e:g}"}
        loc = [r["mar"] for r in rows if r["data"] == name and r["method"] == "local"]
        row["local"] = f"{np.mean(loc):.4f}"
        for v in VARIANTS:
            m = [r["mar"] for r in rows if r["data"] == name and r["method"] == v and r["epsilon"] == e]
            p = paired(rows, name, (v, e), ("local", None))
            row[v] = "—" if not m else f"{np.mean(m):.4f} ({p['diff']:+.4f} ± {p['sd']:.4f})"
        kept = [r["items_kept"] for r in rows if r["data"] == name and r["method"] == "as run" and r["epsilon"] == e]
        row["items shared (as run)"] = f"{min(kept)}–{max(kept)}" if kept else "—"
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--data", default=",".join(DATA))
    args = ap.parse_args()
    datasets = [d for d in args.data.split(",") if d]
    unknown = sorted(set(datasets) - set(LABEL))
    if unknown:
        ap.error(f"--data: unknown federation(s) {unknown}")
    env = machine()
    t0 = time.perf_counter()
    rows = [r for s in range(args.seeds) for d in datasets for r in run_seed(d, s)]
    minutes = (time.perf_counter() - t0) / 60
    lines = ["# What a site cannot name", "",
             f"Generated by `bench/bench_site_names.py` in {minutes:.1f} min, commit {env.get('git_commit') or 'unknown'}, "
             f"{args.seeds} seeds.", "",
             __doc__.split("\n\n", 1)[1].split("    .venv")[0].strip(), "",
             "Each cell: MAR mean over seeds (paired difference against `local`, mean ± sd over seeds).", ""]
    for d in datasets:
        lines += [f"## {LABEL[d]}", "", md_table(table(rows, d)), ""]
    write_results(outputs("site_names", False)["json"].with_suffix(""),
                  {"machine": env, "rows": rows, "datasets": datasets}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
