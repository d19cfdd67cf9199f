"""A small federated long table for CLI and intake tests (written under a test's tmp_path only)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


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
