"""A small federated long table for CLI and intake tests (written under a test's tmp_path only), and an
exactly tied user × item design for the people fingerprint's tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp


def toy_csv(path: Path, n_entities: int = 3, users: int = 30, items: int = 25, seed: int = 0,
            value_col: str = "count") -> Path:
    """``patient, drug, <value_col>, hospital``: ``users`` patients per hospital, 7–14 drugs each,
    counts 1–3."""
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n_entities):
        for u in range(users):
            its = rng.choice(items, size=rng.integers(7, 15), replace=False)
            rows += [(f"h{h}u{u}", f"item {i}", int(rng.integers(1, 4)), f"hospital {h}") for i in its]
    pd.DataFrame(rows, columns=["patient", "drug", value_col, "hospital"]).to_csv(path, index=False)
    return path


def tied_design(n: int, shifts, shuffle_seed: int | None = None) -> sp.csr_matrix:
    """n users × n items, every user len(shifts) items and every item held by len(shifts) users: round r
    gives user u item (u + shifts[r]) mod n (distinct shifts: no item twice for a user). With
    ``shuffle_seed`` the columns are shuffled, so that no user's items are another's moved by a few
    columns (the cyclic design is)."""
    rows = np.tile(np.arange(n), len(shifts))
    cols = (rows + np.repeat(np.asarray(shifts), n)) % n
    if shuffle_seed is not None:
        cols = np.random.default_rng(shuffle_seed).permutation(n)[cols]
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
