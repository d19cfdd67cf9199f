"""Threat model of the keyed people fingerprint (docs/PRIVACY.md): what is recognised as the stored
people and how often unrelated people are taken for them.

For each dataset (sample:clinic, MovieLens 100K, the eICU demo) the users are split at random into
two disjoint halves A and B. A is stored; then compared with it:

* A with every value moved by ±1, by +1, and read as implicit (values → 1);
* A with about 10 / 30 / 50 % of each user's items dropped;
* a subsample of 75 / 50 / 25 % of A, alone and diluted with 1× and 3× as many people of B, and of
  15 % diluted 5× (below the threshold);
* B (unrelated people from the same catalogue), over several random splits.

"contained" is the larger of the shares of each side's users matched; the account decision is
``is_same_people`` (contained ≥ 0.2 and ≥ 3 users). One random secret per run (as a store has).
Writes ``bench/results/fingerprint{,_quick}.{json,md}``.
"""
from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import EICU, ML100K, machine, md_table, outputs, write_results  # noqa: E402
from dpfed_core.data.dataset import FederatedDataset  # noqa: E402
from dpfed_core.data.loaders import load_data  # noqa: E402
from dpfed_core.privacy.fingerprint import (CONTAINMENT_THRESHOLD, MIN_MATCHED_USERS, is_same_people,  # noqa: E402
                                            match_people, people_fingerprint)

KEY = secrets.token_bytes(32)


def subset(ds, rows, X=None) -> FederatedDataset:
    rows = np.asarray(rows)
    X = (ds.X.tocsr() if X is None else X)[rows]
    names = np.asarray(ds.entity_names, dtype=object)[ds.entity_of_user[rows]].astype(str)
    return FederatedDataset.from_parts(sp.csr_matrix(X), names, user_ids=np.array([f"p{i}" for i in range(len(rows))]),
                                       item_ids=ds.item_ids, value_kind=ds.value_kind, value_max=ds.value_max,
                                       name="variant")


def moved(ds, how: str, rng) -> sp.csr_matrix:
    X = ds.X.tocsr().copy()
    X.data = X.data + (rng.choice([-1.0, 1.0], X.data.size) if how == "pm1" else 1.0)
    X.data[X.data == 0] = 0.5  # a value moved onto 0 would remove the item, not change its value
    return X


def cases(label: str, ds, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    perm = rng.permutation(ds.n_users)
    A, B = np.sort(perm[: ds.n_users // 2]), np.sort(perm[ds.n_users // 2:])
    stored = people_fingerprint(subset(ds, A), KEY)
    out = []

    def rec(case, new, kind):
        t0 = time.perf_counter()
        m = match_people(people_fingerprint(new, KEY), stored)
        out.append({"data": label, "case": case, "kind": kind, "contained": m.contained, "similarity": m.similarity,
                    "matched_new": m.matched_new, "matched_stored": m.matched_stored,
                    "same_account": is_same_people(m), "seconds": time.perf_counter() - t0})

    rec("values ±1", subset(ds, A, moved(ds, "pm1", rng)), "same people")
    rec("values +1", subset(ds, A, moved(ds, "plus1", rng)), "same people")
    rec("read as implicit (values → 1)", subset(ds, A, (ds.X.tocsr() != 0).astype(float)), "same people")
    for frac in (0.1, 0.3, 0.5):
        X = ds.X.tocsr().copy()
        X.data[rng.random(X.data.size) < frac] = 0.0  # each user loses about this share of their items
        X.eliminate_zeros()
        rec(f"{int(frac * 100)} % of each user's items dropped", subset(ds, A, X), "same people")
    for f in (0.75, 0.5, 0.25, 0.15):
        s = np.sort(rng.choice(A, int(f * A.size), replace=False))
        for d in ((0, 1, 3) if f > 0.2 else (5,)):
            extra = np.sort(rng.choice(B, min(int(d * s.size), B.size), replace=False))
            rec(f"subsample {int(f * 100)} % + {d}× others", subset(ds, np.r_[s, extra]), "same people")
    return out


def unrelated(label: str, ds, splits: int) -> list[dict]:
    out = []
    for seed in range(splits):
        perm = np.random.default_rng(100 + seed).permutation(ds.n_users)
        a, b = subset(ds, np.sort(perm[: ds.n_users // 2])), subset(ds, np.sort(perm[ds.n_users // 2:]))
        for x, y in ((a, b), (b, a)):
            m = match_people(people_fingerprint(x, KEY), people_fingerprint(y, KEY))
            out.append({"data": label, "contained": m.contained, "matched": m.matched_new,
                        "same_account": is_same_people(m)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    out = outputs("fingerprint", args.quick)
    data = [("sample:clinic", load_data("sample:clinic"))]
    if not args.quick:
        if ML100K.is_dir():
            data.append(("MovieLens 100K", load_data(str(ML100K))))
        if EICU.is_dir():
            data.append(("eICU demo", load_data(str(EICU))))
    rows, pairs = [], []
    for label, ds in data:
        rows += cases(label, ds)
        pairs += unrelated(label, ds, 2 if args.quick else 10)
    summary = [{"data": label, "unrelated pairs": sum(p["data"] == label for p in pairs),
                "taken for the stored people": sum(p["same_account"] for p in pairs if p["data"] == label),
                "largest contained": max(p["contained"] for p in pairs if p["data"] == label),
                "most users matched": max(p["matched"] for p in pairs if p["data"] == label)} for label, _ in data]
    doc = {"machine": machine(), "threshold": CONTAINMENT_THRESHOLD, "min_matched_users": MIN_MATCHED_USERS,
           "cases": rows, "unrelated": pairs, "summary": summary}
    md = ["# Threat model of the people fingerprint", "",
          f"git {doc['machine']['git_commit']}, {doc['machine']['date']}. Stored: a random half of each dataset's "
          f"users; same account when contained ≥ {CONTAINMENT_THRESHOLD} and ≥ {MIN_MATCHED_USERS} users matched.",
          "", md_table(rows, ["data", "case", "contained", "similarity", "matched_new", "matched_stored",
                              "same_account"], fmt={"contained": "{:.2f}", "similarity": "{:.2f}"}), "",
          "## Unrelated people (the other half, both ways, over random splits)", "",
          md_table(summary, fmt={"largest contained": "{:.3f}"}), ""]
    write_results(out["json"].with_suffix(""), doc, "\n".join(md))


if __name__ == "__main__":
    main()
