"""Small result documents (run + comparison, sweep, audit) shared by the report tests."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from dpfed_core.audit.membership import run_audit
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.experiments import make_split, run_method, sweep


def small_dataset() -> FederatedDataset:
    """Two entities of Poisson counts with a shared low-rank item structure (fixed seed)."""
    rng = np.random.default_rng(7)
    n, m, r = 120, 30, 3
    U = rng.gamma(1.0, 1.0, size=(n, r))
    V = rng.gamma(1.0, 1.0, size=(m, r))
    X = sp.csr_matrix(np.minimum(rng.poisson(0.5 * U @ V.T), 10).astype(float))
    ent = np.repeat(["clinic A", "clinic B"], [70, 50])
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=10, name="tiny clinics")


def make_docs(with_sweep: bool = True, with_audit: bool = True) -> dict:
    ds = small_dataset()
    cfg = RunConfig(method="dp-prototypes", epsilon=1.0, delta=1e-6, k=5, rank=3, seed=0, max_iter=50)
    split = make_split(ds, cfg)
    run, _ = run_method(ds, cfg, split)
    run["comparison"] = {m: run_method(ds, cfg.replace(method=m, epsilon=math.inf), split)[0]
                         for m in ("central", "individual", "kmeans")}
    out = {"dataset": ds, "run": run}
    if with_sweep:
        out["sweep"] = sweep(ds, cfg, [1.0, math.inf], [0], references=("individual", "central"))
    if with_audit:
        out["audit"] = run_audit(ds, "clinic B", methods=("dp-prototypes", "kmeans", "krandom"),
                                 epsilons=(1.0,), k=5, targets=("synthetic", "outlier"), runs=24, seed=0)
    return out
