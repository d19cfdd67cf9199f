"""A declared catalogue that leaves out some of the data's items: what the federation adds when only the
declared items are shared and each site keeps the others as its own.

`--items` decides what is shared (`evaluation/catalogue_run.py: fit_on_declared_catalogue`): every
message is shaped by the declared items, each site's round 2 fits all of its own items. For each
table the same rows are loaded twice through the product's loader — every item declared, and a
public part of them declared (the rule is in the table: a prefix of a public id list, or the first
names in alphabetical order) — and each federated method is paired with `local` on the same split.

Zero mode, MAR (lower is better), secure aggregation, ε = 1, rank 8, δ = 1e-6, simulation noise,
seeds 0–4. "beats" / "loses" = the paired mean beyond its sd over seeds, else "inconclusive".
Declaring a part changes the column order (declared items first), so the split's held-out entries,
and `local`'s MAR, differ between the two catalogues of a table unless the part is a prefix.

    .venv/bin/python bench/bench_declared_part.py [--seeds 5] [--quick]

Writes bench/results/declared_part.json and declared_part.md. Real data is read from ../shared/data
and never written anywhere.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import EICU, ML100K, machine, md_table, outputs, write_results  # noqa: E402

METHODS = ("dp-cooccurrence", "dp-als")
EPSILON = 1.0
RANK = 8


def _movielens(declared: int | None):
    """MovieLens 100K as an uploaded long table (u.data + u.user by occupation) with the first
    ``declared`` of u.item's ids declared (None: all 1,682)."""
    import pandas as pd

    from dpfed_core.data.long_table import load_long_table

    r = pd.read_csv(ML100K / "u.data", sep="\t", names=["u", "i", "v", "t"])
    users = pd.read_csv(ML100K / "u.user", sep="|", names=["u", "age", "gender", "occupation", "zip"],
                        encoding="latin-1")
    df = r.merge(users[["u", "occupation"]], on="u")[["u", "i", "v", "occupation"]]
    ids = [str(j) for j in range(1, 1683)]  # u.item's ids, a public list
    return load_long_table(df, user_col="u", item_col="i", value_col="v", entity_col="occupation",
                           value_kind="ratings", value_max=5.0, entities=sorted(users["occupation"].unique()),
                           items=ids if declared is None else ids[:declared], name="ml-100k long table by occupation")


def _clinic(share: float | None):
    """The bundled clinic sample by region with the first ``share`` of its item names (alphabetical)
    declared (None: all)."""
    import pandas as pd

    from dpfed_core.data.long_table import load_long_table

    df = pd.read_csv(Path(__file__).resolve().parents[1] / "sample_data" / "clinic.csv.gz")
    names = sorted(df["item"].astype(str).unique())
    items = names if share is None else names[: int(round(share * len(names)))]
    return load_long_table(df, user_col="patient_id", item_col="item", value_col="count", entity_col="region",
                           value_kind="counts", value_max=5, entities=sorted(df["region"].unique()), items=items,
                           name="clinic sample by region")


def _eicu(share: float | None):
    """eICU medication by hospital with the first ``share`` of the demo's drug names (alphabetical)
    declared as the formulary (None: all)."""
    from dpfed_core.data.eicu import load_eicu

    names = sorted(str(n) for n in load_eicu(EICU, entity="hospitalid").item_names)
    items = names if share is None else names[: int(round(share * len(names)))]
    return load_eicu(EICU, entity="hospitalid", items=items)


TABLES = {
    "MovieLens long table by occupation": (_movielens, [(None, "all 1,682 ids declared"),
                                                        (1000, "the first 1,000 ids declared")]),
    "clinic sample by region": (_clinic, [(None, "all names declared"), (0.5, "the first half of the names declared")]),
    "eICU medication by hospital": (_eicu, [(None, "all drug names declared"),
                                            (0.5, "the first half of the drug names declared")]),
}


def run(seeds: list[int], quick: bool) -> tuple[list[dict], list[dict]]:
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method

    rows, datasets = [], []
    for table, (make, variants) in TABLES.items():
        if quick and table != "clinic sample by region":
            continue
        for arg, label in variants:
            ds = make(arg)
            n_decl = ds.n_items if ds.n_declared is None else ds.n_declared
            datasets.append({"table": table, "catalogue": label, "items": ds.n_items, "declared": n_decl,
                             "own rows": int(ds.X[:, n_decl:].nnz), "rows": int(ds.X.nnz),
                             "entities": ds.n_entities})
            for seed in seeds:
                base = RunConfig(method="local", epsilon=float("inf"), aggregation="secure", simulation=True,
                                 seed=seed, rank=RANK)
                split = make_split(ds, base)
                local = run_method(ds, base, split=split)[0]["overall"]["mar"]
                for method in METHODS:
                    t0 = time.process_time()
                    doc = run_method(ds, base.replace(method=method, epsilon=EPSILON), split=split)[0]
                    rows.append({"table": table, "catalogue": label, "method": method, "seed": seed,
                                 "mar": doc["overall"]["mar"], "local": local,
                                 "first_share": int(doc["messages"][0]["shape"][0]),
                                 "cpu_s": time.process_time() - t0})
                print(f"{table} · {label} · seed {seed}: local {local:.4f} "
                      + " ".join(f"{r['method']} {r['mar']:.4f}" for r in rows[-len(METHODS):]), flush=True)
    return rows, datasets


def summarise(rows: list[dict]) -> list[dict]:
    out = []
    for table, variants in ((t, v) for t, (_, v) in TABLES.items()):
        for _, label in variants:
            for method in METHODS:
                rs = [r for r in rows if r["table"] == table and r["catalogue"] == label and r["method"] == method]
                if not rs:
                    continue
                d = np.array([r["mar"] - r["local"] for r in rs])
                sd = float(d.std(ddof=1)) if d.size > 1 else float("nan")
                mean = float(d.mean())
                verdict = ("beats" if d.size > 1 and mean < -sd else "loses" if d.size > 1 and mean > sd
                           else "inconclusive")
                out.append({"table": table, "catalogue": label, "method": method,
                            "MAR": f"{np.mean([r['mar'] for r in rs]):.4f}",
                            "local": f"{np.mean([r['local'] for r in rs]):.4f}",
                            "− local": f"{mean:+.4f} ± {sd:.4f}", "verdict": verdict, "seeds": int(d.size),
                            "first share's length": max(r["first_share"] for r in rs)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="the clinic sample only")
    args = ap.parse_args()
    out = outputs("declared_part", args.quick)
    seeds = list(range(args.seeds))
    rows, datasets = run(seeds, args.quick)
    table = summarise(rows)
    doc = {"machine": machine(), "seeds": seeds, "epsilon": EPSILON, "rank": RANK, "datasets": datasets,
           "rows": rows, "summary": table}
    md = (f"# A declared catalogue that leaves items out\n\n{__doc__.split(chr(10) + chr(10))[1]}\n\n"
          f"Measured at commit {doc['machine']['git_commit']} (engine {doc['machine']['engine_fingerprint']}), "
          f"seeds {seeds}, ε = {EPSILON:g}, rank {RANK}, secure aggregation, zero mode, simulation noise.\n\n"
          "## The tables\n\n" + md_table(datasets) + "\n## The federation against `local`\n\n"
          "`− local` is the paired mean of MAR − `local`'s MAR over seeds ± its sd. The first share's length "
          "(each entity's popularity release, round 1) is the declared catalogue's size: what shapes the "
          "messages.\n\n" + md_table(table))
    write_results(out["json"].with_suffix(""), doc, md)


if __name__ == "__main__":
    main()
