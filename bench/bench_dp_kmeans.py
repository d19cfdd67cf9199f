"""Benchmark of the ``dp-prototypes`` mechanism as a DP k-means (issue 3, item 5; SPEC §2).

Setting of Google's private LSH clustering report: a mixture of 64 Gaussians in 100 dimensions,
n = 100,000 points inside the unit ball. We report the k-means loss of the released prototypes on
all points (the real, unclipped loss) divided by n — the *normalised loss* (mean squared distance of
a point to its nearest centre) — and its ratio to non-private k-means++ (scikit-learn, 1 init).

Also measures speed (issue 3, item 3): an entity of 10,000 users × 500 items with k = 50.

Usage::

    .venv/bin/python bench/bench_dp_kmeans.py [--quick] [--seeds 3] [--configs default,gaussian]

Writes bench/results/dp_kmeans.json and bench/results/dp_kmeans.md.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpfed_core.federation.dp_prototypes import DPPrototypes  # noqa: E402
from dpfed_core.privacy.ledger import PrivacyLedger  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def gaussian_mixture(n: int = 100_000, d: int = 100, k: int = 64, sigma: float = 0.0141,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n points from k spherical Gaussians in d dims, inside the unit ball.

    Centres: uniform directions, norms uniform in [0.2, 0.8]; per-coordinate σ = 0.0141, so a point's
    expected squared distance to its centre is d·σ² ≈ 0.02 (the non-private normalised loss reported
    in the LSH-clustering setting). Points falling outside the unit ball are scaled onto it.
    """
    rng = np.random.default_rng(seed)
    dirs = rng.standard_normal((k, d))
    centres = dirs / np.linalg.norm(dirs, axis=1, keepdims=True) * rng.uniform(0.2, 0.8, (k, 1))
    lab = rng.integers(k, size=n)
    X = centres[lab] + sigma * rng.standard_normal((n, d))
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.maximum(norms, 1.0), lab


def kmeans_loss(X: np.ndarray, P: np.ndarray) -> float:
    """Σ_i min_j ‖x_i − p_j‖² (unclipped), in chunks."""
    total = 0.0
    pp = (P * P).sum(1)
    for s in range(0, X.shape[0], 20000):
        B = X[s:s + 20000]
        d = (B * B).sum(1)[:, None] - 2 * B @ P.T + pp[None, :]
        total += float(np.maximum(d.min(1), 0).sum())
    return total


CONFIGS = {
    # the paper's recovery (Laplace on sums, L1 sensitivity s·Λ∞ with s = d = 100)
    "paper": dict(variant="paper", row_scaling="clip"),
    # points lie *inside* the unit ball: rows are clipped to Λ = 1, not normalised onto the sphere
    "gaussian": dict(variant="gaussian", row_scaling="clip"),
    # one DP-Lloyd step and a single unshifted grid of depth 4: fewer partition tests, so each test
    # gets more ε and the threshold γ drops below the cluster size (γ ≈ 200 instead of ≈ 1200 at ε = 1)
    "gaussian+refine1+grid1x4": dict(variant="gaussian", row_scaling="clip", refine_steps=1, n_grids=1, depth=4),
}


NOTE = """
## Reading (written by hand from the n = 100,000 run, 2 seeds)

* Target "beat 0.43" (the Balcan et al. reference code in the LSH-clustering report): met by both
  Gaussian configurations at every ε (0.25–0.27 at ε = 0.1, 0.08–0.12 at ε = 1, 0.04–0.07 at ε = 10).
  The paper's Laplace recovery (L1 sensitivity s·Λ∞ = 100 on 100-d sums) is far worse (0.50 at ε = 1).
* Aim "below 0.07": met at ε = 10 (0.041 with one DP-Lloyd step and a single grid of depth 4; 0.067
  with the default grids); **not** at ε = 1 (0.083) or ε = 0.1 (0.27).
* Why the tuned configuration helps: the private partition's threshold is γ = 1 + ln(1/(2δ₁))/ε' with
  ε' = ε_candidates / (number of level tests). The default 3 grids × ~5 levels = 17 tests give γ ≈ 1,200
  points at ε = 1, close to the 1,560 points of a mixture component, so few fine cubes survive; one
  grid of depth 4 (4 tests) gives γ ≈ 300. The DP-Lloyd step re-assigns in the original space and
  re-recovers, fixing projection-induced merges. At ε = 0.1 the refinement's halved recovery budget
  costs more than it gains.
* Comparability: "normalised loss" here is the mean squared distance to the nearest released centre
  on our own mixture (σ chosen so non-private k-means++ gets ≈ 0.02, as in the report); the report's
  exact data and normalisation may differ, so the 0.07 / 0.43 comparison is indicative.
* These settings are not the `DPPrototypes` defaults: the recommendation benchmarks (dp_ml.md,
  dp_synthetic.md) were run with the default grids (n_grids = 3, depth = 5, no refinement), and with the
  automatic k the clustering stages only run for entities of ≥ 2,000 users.
"""


def run_dp(X: np.ndarray, k: int, eps: float, delta: float, seed: int, **params) -> tuple[float, float, list]:
    Xs = sp.csr_matrix(X)
    ledger = PrivacyLedger(eps, delta)
    method = DPPrototypes(k=k, value_max=1.0, value_min=-1.0, row_norm=1.0, support=X.shape[1],
                          epsilon=eps, delta=delta, **params)
    t0 = time.perf_counter()
    rel = method.release(Xs, np.random.default_rng(seed), ledger.for_entity("synthetic"))
    dt = time.perf_counter() - t0
    assert ledger.guarantee()[0] <= eps * (1 + 1e-9)
    return kmeans_loss(X, rel.prototypes), dt, ledger.per_stage()


def speed(seed: int = 0) -> dict:
    """Prototypes for one entity of 10,000 users × 500 items (5% dense, ratings 1–5), k = 50."""
    rng = np.random.default_rng(seed)
    n, m = 10_000, 500
    X = sp.random(n, m, density=0.05, random_state=seed, data_rvs=lambda s: rng.integers(1, 6, s)).tocsr()
    out = {}
    for variant in ("paper", "gaussian"):
        times = []
        for r in range(3):
            ledger = PrivacyLedger(1.0, 1e-6)
            # cluster_size=None: exactly k = 50 (the automatic k would pick ⌊n̂/1000⌋ = 10)
            meth = DPPrototypes(k=50, value_max=5.0, epsilon=1.0, delta=1e-6, variant=variant, cluster_size=None)
            t0 = time.perf_counter()
            meth.release(X, np.random.default_rng(r), ledger.for_entity("e"))
            times.append(time.perf_counter() - t0)
        out[variant] = {"median_s": float(np.median(times)), "max_s": float(max(times))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="n = 20,000 instead of 100,000")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--eps", default="0.1,1,10")
    args = ap.parse_args()
    n = 20_000 if args.quick else 100_000
    k, delta = 64, 1e-6
    X, _ = gaussian_mixture(n=n)
    t0 = time.perf_counter()
    km = KMeans(n_clusters=k, init="k-means++", n_init=1, random_state=0).fit(X)
    km_loss = kmeans_loss(X, km.cluster_centers_) / n
    km_time = time.perf_counter() - t0
    rows = []
    for name in args.configs.split(","):
        for eps in [float(e) for e in args.eps.split(",")]:
            losses, times = [], []
            for seed in range(args.seeds):
                loss, dt, stages = run_dp(X, k, eps, delta, seed, **CONFIGS[name])
                losses.append(loss / n)
                times.append(dt)
            row = {"config": name, "params": CONFIGS[name], "epsilon": eps, "delta": delta,
                   "normalised_loss_mean": float(np.mean(losses)), "normalised_loss_sd": float(np.std(losses)),
                   "ratio_to_kmeanspp": float(np.mean(losses) / km_loss), "seconds_mean": float(np.mean(times)),
                   "losses": losses}
            rows.append(row)
            print(f"{name:18s} eps={eps:<5} loss/n={row['normalised_loss_mean']:.4f}±{row['normalised_loss_sd']:.4f} "
                  f"(×{row['ratio_to_kmeanspp']:.2f} of k-means++) {row['seconds_mean']:.1f}s", flush=True)
    spd = speed()
    print("speed 10k×500, k=50:", spd)
    doc = {"setting": {"n": n, "d": 100, "k": k, "mixture_components": 64, "sigma": 0.0141, "delta": delta,
                       "normalisation": "k-means loss of the released centres on all points / n",
                       "seeds": args.seeds},
           "kmeanspp": {"normalised_loss": km_loss, "seconds": km_time},
           "dp": rows, "speed_10000x500_k50": spd,
           "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpus": __import__("os").cpu_count()}}
    RESULTS.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    (RESULTS / f"dp_kmeans{suffix}.json").write_text(json.dumps(doc, indent=1))
    lines = ["# DP prototypes as DP k-means: mixture of 64 Gaussians, d = 100", "",
             f"n = {n}, k = {k}, δ = {delta}, {args.seeds} seeds. Normalised loss = k-means loss of the released "
             "centres on all points / n (mean squared distance to the nearest centre). Points in the unit ball; "
             "public bounds value ∈ [−1, 1], row_norm Λ = 1, support s = d.", "",
             f"Non-private k-means++ (scikit-learn, n_init=1): **{km_loss:.4f}** ({km_time:.1f} s)", "",
             "| config | ε | normalised loss (mean ± sd) | × k-means++ | seconds |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['config']} | {r['epsilon']:g} | {r['normalised_loss_mean']:.4f} ± {r['normalised_loss_sd']:.4f} "
                     f"| {r['ratio_to_kmeanspp']:.2f} | {r['seconds_mean']:.1f} |")
    lines += ["", "Speed, one entity of 10,000 users × 500 items (5% dense, ratings 1–5), k = 50, ε = 1 "
              "(median of 3): " + ", ".join(f"{v}: {d['median_s']:.2f} s" for v, d in spd.items())]
    lines.append(NOTE)
    (RESULTS / f"dp_kmeans{suffix}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
