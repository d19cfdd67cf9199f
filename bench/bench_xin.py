"""Xin & Jaakkola (2014) on MovieLens 100K: test RMSE when the item model is
learned from the heaviest x% of users only ("public users") and every other user fits locally with
Eq. 4, against the full model learned from every user ("Full EM"). Their Fig. 1 (MovieLens 10M):
with 1% public users the unweighted trace-norm model reaches test RMSE 0.876, "already close to the
optimal prediction error".

Protocol (their §5, on 100K): 10 random test ratings per user (every 100K user has ≥ 20); τ chosen
per configuration on a validation set of 5 further ratings per user, then refit on train and scored
on test; predictions clipped to [1, 5] (unstated in the paper).

Usage::

    .venv/bin/python bench/bench_xin.py [--fractions 0.01,0.05,0.2] [--data ../shared/data/ml-100k]

Writes bench/results/xin.json and bench/results/xin.md.
"""
from __future__ import annotations

import os

# Two-core machines shared with other jobs: BLAS thread oversubscription makes the 943 × 1682
# Gram/eigen steps 5–20× slower; one thread is fastest here.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpfed_core.methods.comparison.xin import XinJaakkola  # noqa: E402
from _common import write_results  # noqa: E402
from dpfed_core.data.movielens import load_movielens  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"
TAUS = (1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0)


def hold_out(X: sp.csr_matrix, k: int, rng: np.random.Generator):
    """(train, (rows, cols, values) of k random ratings per user with ≥ 2k ratings)."""
    X = sp.csr_matrix(X)
    keep = np.ones(X.nnz, dtype=bool)
    for u in range(X.shape[0]):
        lo, hi = X.indptr[u], X.indptr[u + 1]
        if hi - lo >= 2 * k:
            keep[lo + rng.choice(hi - lo, k, replace=False)] = False
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    held = (rows[~keep], X.indices[~keep], X.data[~keep])
    train = sp.csr_matrix((X.data[keep], (rows[keep], X.indices[keep])), shape=X.shape)
    return train, held


def rmse(model, held) -> float:
    r, c, v = held
    return float(np.sqrt(np.mean((np.clip(model.predict(r, c), 1, 5) - v) ** 2)))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--fractions", default="0.01,0.05,0.2")
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--out", default=str(RESULTS / "xin"))
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    data = load_movielens(args.data)
    rng = np.random.default_rng(2014)
    train_all, test = hold_out(data.X, 10, rng)
    train_fit, valid = hold_out(train_all, 5, rng)

    configs = [("public", float(f)) for f in args.fractions.split(",")] + [("full", 1.0)]
    rows = []
    for kind, frac in configs:
        mech = "full" if kind == "full" else "none"
        val = {}
        for tau in TAUS:
            m = XinJaakkola(public_fraction=frac, tau=tau, mechanism=mech, max_iter=args.max_iter).fit(train_fit)
            val[tau] = rmse(m, valid)
        tau = min(val, key=val.get)
        t0 = time.perf_counter()
        m = XinJaakkola(public_fraction=frac, tau=tau, mechanism=mech, max_iter=args.max_iter).fit(train_all)
        rows.append({"kind": kind, "fraction": frac, "n_public": int(len(m.public_)), "tau": tau,
                     "validation": {str(k): v for k, v in val.items()}, "rank": int(m.V_.shape[1]),
                     "em_iterations": int(m.em_iterations_), "test_rmse": rmse(m, test),
                     "public_ratings": int(train_all[m.public_].nnz), "seconds": time.perf_counter() - t0})
        print(rows[-1], flush=True)
    full = next(r for r in rows if r["kind"] == "full")["test_rmse"]
    for r in rows:
        r["gap_to_full"] = r["test_rmse"] - full
    item_mean = XinJaakkola(public_fraction=0.01, tau=1e9, max_iter=1).fit(train_all)  # μ only, V = 0
    doc = {"dataset": {"name": "MovieLens 100K", "users": data.n_users, "items": data.n_items,
                       "ratings": int(data.X.nnz)},
           "protocol": {"test_per_user": 10, "validation_per_user": 5, "tau_grid": TAUS,
                        "selection": "heaviest users", "clip": [1, 5]},
           "rows": rows, "public_item_means_only_rmse_1pct": rmse(item_mean, test),
           "paper": {"ml10m_1pct_public_rmse": 0.876},
           "total_s": time.perf_counter() - t_start, "machine": platform.platform()}
    write_results(args.out, doc, markdown(doc))
    return doc


def markdown(doc: dict) -> str:
    L = ["# Xin & Jaakkola (2014): public users only vs the full model — MovieLens 100K", "",
         "Public users = the heaviest users; private users predict locally with Eq. 4 from the public "
         "users' item model (μ, V). 10 test ratings per user; τ chosen per row on 5 validation ratings "
         "per user; predictions clipped to [1, 5]. Generated by `bench/bench_xin.py`.", "",
         "| model | public users | their ratings | τ | rank | test RMSE | gap to full |",
         "|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        name = "Full EM (all users, non-private)" if r["kind"] == "full" else f"public-only, {r['fraction']:.0%}"
        L.append(f"| {name} | {r['n_public']} | {r['public_ratings']:,} | {r['tau']:g} | {r['rank']} | "
                 f"{r['test_rmse']:.4f} | {r['gap_to_full']:+.4f} |")
    L += ["", f"For scale: the public users' item means alone (V = 0, 1% public) give "
          f"{doc['public_item_means_only_rmse_1pct']:.4f}. Paper (MovieLens 10M, 1% public = ~700 users): "
          f"{doc['paper']['ml10m_1pct_public_rmse']}.", "",
          f"Total time {doc['total_s']:.0f} s on {doc['machine']}."]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    main()
