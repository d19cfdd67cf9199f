"""Threat model of the keyed people fingerprint (docs/PRIVACY.md): what is recognised as the stored
people and how often unrelated people are taken for them.

For each dataset (sample:clinic, MovieLens 100K, the eICU demo) the users are split at random into
two disjoint halves A and B. A is stored; then compared with it:

* A with every value moved by ±1, by +1, and read as implicit (values → 1);
* A with about 10 / 30 / 50 % of each user's items dropped;
* a subsample of 75 / 50 / 25 % of A, alone and diluted with 1× and 3× as many people of B, and of
  15 % diluted 5× (below the threshold);
* A with its items renamed one to one (another id column of the same file), with 1 % of them also
  merged pairwise (two titles alike), and renamed with 10 % of the users left out;
* A under its own user ids with its items renamed and the item counts changed — 5 % of rows dropped,
  10 % of the users or the largest entity left out, 10 % others added — and B under A's user ids;
* A under record-number user ids (sparse, as eICU's) read with other items altogether (another table
  of the same people), and B under other record numbers;
* B (unrelated people from the same catalogue), over several random splits.

"contained" is the larger of the shares of each side's users matched; the account decision is
``is_same_people`` (contained ≥ 0.2 and ≥ 1 user). One random secret per run (as a store has).
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
from dpfed_core.privacy.fingerprint import (CONTAINMENT_THRESHOLD, MIN_MATCHED_USERS, ids_are_counters,  # noqa: E402
                                            is_same_people, match_people, people_fingerprint)

KEY = secrets.token_bytes(32)


def subset(ds, rows, X=None, ids=None) -> FederatedDataset:
    rows = np.asarray(rows)
    X = (ds.X.tocsr() if X is None else X)[rows]
    names = np.asarray(ds.entity_names, dtype=object)[ds.entity_of_user[rows]].astype(str)
    ids = np.array([f"p{i}" for i in range(len(rows))]) if ids is None else ids
    return FederatedDataset.from_parts(sp.csr_matrix(X), names, user_ids=ids, item_ids=ds.item_ids,
                                       value_kind=ds.value_kind, value_max=ds.value_max, name="variant")


def renamed(ds, names) -> FederatedDataset:
    return FederatedDataset.from_parts(ds.X, np.asarray(ds.entity_names, dtype=object)[ds.entity_of_user].astype(str),
                                       user_ids=ds.user_ids, item_ids=names, value_kind=ds.value_kind,
                                       value_max=ds.value_max, name="renamed")



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

    def rec(case, new, kind, against=None):
        t0 = time.perf_counter()
        m = match_people(people_fingerprint(new, KEY), stored if against is None else against)
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
    # the same people with their items named otherwise (another id column, titles for ids): only the
    # shape's bands (how many users have each item) can see them
    names = np.array([f"renamed {j}" for j in rng.permutation(ds.n_items)])
    rec("items renamed one to one", renamed(subset(ds, A), names), "same people")
    X = ds.X.tocsc()
    pairs = rng.choice(ds.n_items, (max(1, ds.n_items // 100), 2), replace=False)
    cols = [X[:, j] for j in range(ds.n_items)]
    for a, b in pairs:  # two names read as one (1 % of the items), as two titles alike would be
        cols[a], cols[b] = cols[a] + cols[b], cols[b] * 0
    merged = sp.hstack(cols).tocsr()
    merged.eliminate_zeros()
    rec("items renamed, 1 % of them merged pairwise", renamed(subset(ds, A, merged), names), "same people")
    rec("items renamed, 10 % of the users left out",
        renamed(subset(ds, np.sort(rng.choice(A, int(0.9 * A.size), replace=False))), names), "same people")
    # the same with the dataset's own user ids kept (a counter for MovieLens and the sample, record numbers for
    # eICU): items renamed *and* how many users have each item changed — only the profile's bands (each user's
    # items read as popularity-rank bins, under their id) can see them
    own = np.asarray(ds.user_ids).astype(str)
    stored_own = people_fingerprint(subset(ds, A, ids=own[A]), KEY)
    X = ds.X.tocsr().copy()
    X.data[rng.random(X.data.size) < 0.05] = 0.0
    X.eliminate_zeros()
    rec("items renamed, 5 % of rows dropped, user ids kept", renamed(subset(ds, A, X, ids=own[A]), names),
        "same people", against=stored_own)
    kept = np.sort(rng.choice(A, int(0.9 * A.size), replace=False))
    rec("items renamed, 10 % of the users left out, user ids kept", renamed(subset(ds, kept, ids=own[kept]), names),
        "same people", against=stored_own)
    big = int(np.argmax(np.bincount(ds.entity_of_user[A], minlength=ds.n_entities)))
    rest = A[ds.entity_of_user[A] != big]
    rec("items renamed, the largest entity left out, user ids kept", renamed(subset(ds, rest, ids=own[rest]), names),
        "same people", against=stored_own)
    added = np.r_[A, np.sort(rng.choice(B, A.size // 10, replace=False))]
    rec("items renamed, 10 % others added, user ids kept",
        renamed(subset(ds, added, ids=np.r_[own[A], [f"new {i}" for i in range(added.size - A.size)]]), names),
        "same people", against=stored_own)
    if ids_are_counters(own):  # record numbers name people: the same number is the same person
        rec("other people under the same counter ids (unrelated)", subset(ds, B[: A.size], ids=own[A][: B[: A.size].size]),
            "unrelated", against=stored_own)
    # record numbers (sparse ids, as eICU's patientunitstayid): the same people read with other items
    # altogether — another table of theirs — are found by their ids; a counter (1, 2, 3 …) never is
    stays = np.array([str(x) for x in rng.choice(9_000_000, ds.n_users, replace=False) + 100_000])
    stored_ids = people_fingerprint(subset(ds, A, ids=stays[A]), KEY)
    other = sp.random(A.size, 300, density=min(1.0, 8 / 300), format="csr", random_state=int(rng.integers(1 << 30)))
    other.data[:] = 1.0
    rec("record numbers, other items altogether", FederatedDataset.from_parts(
        other, np.zeros(A.size, dtype=int).astype(str), user_ids=stays[A], value_kind="counts", value_max=1.0),
        "same people", against=stored_ids)
    rec("other record numbers, other items (unrelated)", FederatedDataset.from_parts(
        other, np.zeros(A.size, dtype=int).astype(str), user_ids=stays[B][: A.size], value_kind="counts",
        value_max=1.0), "unrelated", against=stored_ids)
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
