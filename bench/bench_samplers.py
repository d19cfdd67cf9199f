"""Speed of the DP samplers: OpenDP's exact samplers (production, OS entropy) against the
NumPy samplers of simulation mode, on vectors of 10^3 … 10^6 coordinates, one call per vector.

Also one DP release of each recovery variant on MovieLens-sized clusters (k = 1 and k = 50 prototypes
× 1682 items), production vs simulation, and the calibration cost of the OpenDP-map Gaussian σ.

Writes ``bench/results/samplers{,_quick}.{json,md}``. ``--quick``: sizes up to 10^5, one repeat.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import machine, md_table, outputs, sample_reference, write_results  # noqa: E402
from dpfed_core.privacy import mechanisms as mech  # noqa: E402
from dpfed_core.privacy.noise import NumpySampler, OpenDPSampler, SecureGenerator  # noqa: E402


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    sizes = [10**3, 10**4, 10**5] + ([] if args.quick else [10**6])
    prod, sim = OpenDPSampler(), NumpySampler(np.random.default_rng(0))
    for s in (prod, sim):  # warm up: OpenDP's import and library load are not per-call costs
        s.discrete_laplace(np.zeros(3, dtype=np.int64), 1.0), s.laplace(np.zeros(3), 1.0)
        s.gaussian(np.zeros(3), 1.0), s.noisy_max(np.zeros(3), 1.0)
    rows = []
    for n in sizes:
        sample_reference()  # the machine's speed through the benchmark (machine() records the median)
        ints = np.zeros(n, dtype=np.int64)
        reals = np.full(n, 0.5)
        for kind, call in (
            ("discrete Laplace (counts)", lambda s: s.discrete_laplace(ints, 10.0)),
            ("float Laplace (sums)", lambda s: s.laplace(reals, 10.0)),
            ("float Gaussian (sums)", lambda s: s.gaussian(reals, 10.0)),
            ("Gumbel noisy max", lambda s: s.noisy_max(reals, 10.0)),
        ):
            if kind == "Gumbel noisy max" and n > 10**5:
                continue
            t_p = best_of(lambda: call(prod), repeats)
            t_s = best_of(lambda: call(sim), repeats)
            rows.append({"sampler": kind, "coordinates": n, "opendp_s": t_p, "numpy_s": t_s,
                         "opendp_us_per_coord": 1e6 * t_p / n, "ratio": t_p / max(t_s, 1e-9)})
            print(rows[-1], flush=True)
    # top-s on MovieLens-sized rows (paper variant: s = 64 of 1682 items per cluster)
    u = np.random.default_rng(1).random((1, 1682)) * 100
    for kind, s in (("Gumbel top-64 of 1682", prod), ("Gumbel top-64 of 1682 (NumPy)", sim)):
        t = best_of(lambda: s.noisy_top_k(u, 64, 5.0), repeats)
        rows.append({"sampler": kind, "coordinates": 1682, "opendp_s": t if s is prod else None,
                     "numpy_s": t if s is sim else None, "opendp_us_per_coord": 1e6 * t / 1682 if s is prod else None,
                     "ratio": None})
    # one recovery release of a MovieLens-sized entity, production vs simulation
    import scipy.sparse as sp

    from dpfed_core.federation.dp_prototypes import DPGaussianPrototypes, DPPrototypes
    from dpfed_core.privacy.ledger import PrivacyLedger

    X = sp.random(300, 1682, density=0.06, random_state=0, format="csr")
    X.data[:] = 1.0
    rel_rows = []
    for name, meth in (("dp-gaussian k=1", DPGaussianPrototypes(k=1, value_max=1.0)),
                       ("dp-prototypes (paper) k=1", DPPrototypes(k=1, value_max=1.0))):
        for mode, g in (("production (OpenDP)", SecureGenerator), ("simulation (NumPy)", lambda: np.random.default_rng(0))):
            t = best_of(lambda: meth.release(X, g(), PrivacyLedger(1.0, 1e-6).for_entity("e")), repeats)
            rel_rows.append({"release": name, "noise": mode, "seconds": t})
            print(rel_rows[-1], flush=True)
    mech.gaussian_sigma(1.0, 1e-6, 1.0, 1)  # warm the import
    t_cal = best_of(lambda: (mech.gaussian_sigma.__wrapped__ if hasattr(mech.gaussian_sigma, "__wrapped__")
                             else mech.gaussian_sigma)(0.731, 1e-7, 1.0, 12345), 1)

    out = outputs("samplers", args.quick)
    md = ["# DP samplers: OpenDP (production) vs NumPy (simulation)", "",
          "One call per vector; best of %d. Machine: %s." % (repeats, machine().get("cpu", "?")), "",
          md_table(rows, ["sampler", "coordinates", "opendp_s", "numpy_s", "opendp_us_per_coord", "ratio"],
                   fmt={"opendp_s": "{:.4f}", "numpy_s": "{:.5f}", "opendp_us_per_coord": "{:.2f}", "ratio": "{:.0f}"}),
          "", "## One recovery release (300 users × 1682 items, ε = 1)", "",
          md_table(rel_rows, fmt={"seconds": "{:.3f}"}), "",
          f"Calibration of an OpenDP-map Gaussian σ (uncached, bisection on OpenDP's privacy map): {t_cal:.3f} s.", ""]
    write_results(out["json"] if isinstance(out, dict) and "json" in out else out,
                  {"machine": machine(), "samplers": rows, "releases": rel_rows, "gaussian_calibration_s": t_cal},
                  "\n".join(md))


if __name__ == "__main__":
    main()
