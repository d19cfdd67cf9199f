"""Worker run by bench_peers.py inside a peer's own virtual environment (no dpfed_core import).

    bench/.venv-implicit/bin/python bench/_peer_child.py implicit TASK.json
    bench/.venv-diffprivlib/bin/python bench/_peer_child.py diffprivlib TASK.json

TASK.json names input .npz/.npy files in a temporary directory and the parameters; the worker writes
its factors/centres next to them and prints one JSON line ``{"seconds": ..., "version": ...}``.
"""
from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np


def run_implicit(task: dict) -> dict:
    import implicit
    import scipy.sparse as sp
    from implicit.cpu.als import AlternatingLeastSquares

    X = sp.load_npz(task["train"]).tocsr().astype(np.float32)
    out = {"version": implicit.__version__, "runs": []}
    for threads in task.get("threads", [1]):
        model = AlternatingLeastSquares(factors=task["rank"], regularization=task["lam"],
                                        iterations=task["iterations"], alpha=task.get("alpha", 1.0),
                                        num_threads=threads, random_state=task["seed"],
                                        calculate_training_loss=False)
        t0 = time.perf_counter()
        model.fit(X, show_progress=False)
        dt = time.perf_counter() - t0
        out["runs"].append({"threads": threads, "seconds": dt})
    np.save(task["out_U"], np.asarray(model.user_factors, dtype=np.float64))
    np.save(task["out_V"], np.asarray(model.item_factors, dtype=np.float64))
    return out


def run_diffprivlib(task: dict) -> dict:
    import diffprivlib
    import sklearn
    from diffprivlib.models import KMeans

    X = np.load(task["X"])
    lo, hi = task["bounds"]
    d = X.shape[1]
    bounds = (np.full(d, float(lo)), np.full(d, float(hi)))
    res = {"version": diffprivlib.__version__, "sklearn": sklearn.__version__, "runs": []}
    for eps in task["epsilons"]:
        for seed in task["seeds"]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                km = KMeans(n_clusters=task["k"], epsilon=eps, bounds=bounds, random_state=seed).fit(X)
                dt = time.perf_counter() - t0
            path = f"{task['out']}_eps{eps:g}_s{seed}.npy"
            np.save(path, np.asarray(km.cluster_centers_, dtype=np.float64))
            res["runs"].append({"epsilon": eps, "seed": seed, "seconds": dt, "centres": path})
    return res


if __name__ == "__main__":
    kind, path = sys.argv[1], sys.argv[2]
    task = json.loads(open(path).read())
    result = {"implicit": run_implicit, "diffprivlib": run_diffprivlib}[kind](task)
    print("@@RESULT@@" + json.dumps(result))
