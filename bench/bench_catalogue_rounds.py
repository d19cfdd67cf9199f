"""Adaptive rounds for the federation-wide DP catalogue: does re-weighting after a first release keep
more of what matters?

The federation-wide selection (``dpfed_core.privacy.catalogue``) gives every user a unit of weight
(1/√k on each of its ≤ c buckets) and keeps the buckets whose noisy total clears z·σ. Modern
parallel partition selection spends part of the budget on a first release and lets users move
the weight they gave to already-released buckets onto their others in a later round
(DP-SIPS, Swanberg, Desfontaines & Haney, PETS 2023; the second round of MAD2R, Chen et al.,
ICML 2025). Each round is the production round on what is still unreleased: a user's weights
depend on its own buckets and on the previous rounds' public output only, so each round's L2
sensitivity is 1, the rounds' ρ add up (zCDP composition) and the total equals the one-round
selection's ρ. This script compares, at the production budget (``secure_catalogue_budget``: 40 %
of the run's zCDP ρ at δ = 1e-6) and both trust models:

* one round (the product's selection),
* two rounds splitting ρ 50/50 and 30/70, three rounds 20/30/50;

the phantom share (buckets passing on noise alone) is split evenly over the rounds, so every
variant expects the same number of phantom keys. Measured per federation (the no-catalogue
federations of ``bench_utility.py``, every row of the data: the selection's input, not a split),
ε ∈ {0.3, 1, 3}, 5 noise seeds: keys kept, keys holding at least one item, and the share of the
table's entries whose item's bucket is kept ("entries covered": what the federation can share).
Paired differences against one round, mean ± sd over seeds; "beats" / "loses" beyond the sd.

Simulation noise (NumPy, seeded): a measurement of the mechanism, not a release.

    .venv/bin/python bench/bench_catalogue_rounds.py [--quick]

Writes bench/results/catalogue_rounds.{json,md}.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

FEDERATIONS = ["ml-occupation-long", "eicu-hospital-raw", "eicu-region-raw", "zipf-2000"]
EPS = [0.3, 1.0, 3.0]
DELTA = 1e-6
SEEDS = 5
#: ρ shares of the rounds (they add up to 1: the same total budget as one round).
VARIANTS = {"one round (product)": (1.0,), "two rounds 50/50": (0.5, 0.5), "two rounds 30/70": (0.3, 0.7),
            "three rounds 20/30/50": (0.2, 0.3, 0.5)}
BASE = "one round (product)"


def select_in_rounds(X, slices, bucket: np.ndarray, shares, rho: float, delta: float, divisor: float,
                     rng: np.random.Generator) -> np.ndarray:
    """Released buckets after ``len(shares)`` rounds, each the product's own selection at ρ·share_r:
    every entity's :func:`~dpfed_core.privacy.catalogue.secure_catalogue_share` (its users' unit of
    weight over at most c buckets, its noise share σ/``divisor``) and the server's
    :func:`~dpfed_core.privacy.catalogue.secure_catalogue_keys` on their sum, with the phantom share
    split over the rounds. An item of a bucket an earlier round released maps to no bucket (−1, a
    public fact), so no user weighs it again. ``divisor``: √H for a secure sum, 1 for the sum of the
    entities' own releases."""
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import PrivacyLedger

    nb = cat.SECURE_CATALOGUE_BUCKETS
    released = np.zeros(nb, dtype=bool)
    for share in shares:
        open_bucket = np.where(released[bucket], -1, bucket)
        ledger = PrivacyLedger(math.inf)
        total = sum(cat.secure_catalogue_share(X[sl], open_bucket, rho * share, delta, g, ledger.for_entity(str(h)),
                                               divisor=divisor)[0]
                    for h, (sl, g) in enumerate(zip(slices, rng.spawn(len(slices)))))
        keys, *_ = cat.secure_catalogue_keys(total, rho * share, len(slices), divisor=divisor,
                                             phantom_share=cat.SECURE_CATALOGUE_PHANTOM_SHARE / len(shares))
        released[keys] = True
    return released


def measure(name: str, seeds: int, eps_grid) -> list[dict]:
    import bench_utility as U

    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.catalogue_run import secure_catalogue_budget
    from dpfed_core.privacy import catalogue as cat

    ds = U.load(name)
    nb = cat.SECURE_CATALOGUE_BUCKETS
    bucket = cat.item_buckets(ds.item_names, nb)
    slices = ds.entity_slices()
    entries = np.bincount(bucket[ds.X.indices], minlength=nb).astype(float)
    holds = entries > 0
    out = []
    for eps in eps_grid:
        rho, row_delta, _ = secure_catalogue_budget(RunConfig(method="dp-cooccurrence", epsilon=eps, delta=DELTA,
                                                              aggregation="secure"))
        for trust, divisor in (("secure", math.sqrt(ds.n_entities)), ("none", 1.0)):
            for label, shares in VARIANTS.items():
                per = []
                for seed in range(seeds):
                    kept = select_in_rounds(ds.X, slices, bucket, shares, rho, row_delta, divisor,
                                            np.random.default_rng([seed, 0xCA7]))
                    per.append({"keys": int(kept.sum()), "real_keys": int((kept & holds).sum()),
                                "covered": float(entries[kept].sum() / entries.sum())})
                out.append({"data": name, "epsilon": eps, "trust": trust, "variant": label, "rho": rho, "per_seed": per})
            base = [r for r in out if r["epsilon"] == eps and r["trust"] == trust and r["data"] == name]
            print(f"{name} ε={eps:g} {trust}: " + "; ".join(
                f"{r['variant']} {np.mean([p['covered'] for p in r['per_seed']]):.3f}" for r in base), flush=True)
    return out


def paired(rows: list[dict], data: str, eps: float, trust: str, variant: str) -> dict:
    def cov(v):
        r = next(r for r in rows if (r["data"], r["epsilon"], r["trust"], r["variant"]) == (data, eps, trust, v))
        return np.array([p["covered"] for p in r["per_seed"]]), np.array([p["real_keys"] for p in r["per_seed"]])

    a, ka = cov(variant)
    b, kb = cov(BASE)
    d = a - b
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    verdict = "beats" if d.mean() > sd else "loses" if d.mean() < -sd else "inconclusive"
    return {"mean": float(d.mean()), "sd": sd, "verdict": verdict, "covered": float(a.mean()),
            "real_keys": float(ka.mean())}


def report(rows: list[dict], seconds: float, quick: bool, seeds: int) -> str:
    from dpfed_core.privacy import catalogue as cat
    import bench_utility as U

    env = C.machine()
    lines = ["# Adaptive rounds for the federation-wide DP catalogue", "",
             f"Generated by `bench/bench_catalogue_rounds.py` in {seconds / 60:.1f} min ({env.get('cpu', '')}, "
             f"commit {env.get('git_commit') or '?'}, {env['date']}). {seeds} noise seeds, simulation noise (seeded; a measurement of the "
             "mechanism, no privacy claim)." + (" **Quick run: not a result.**" if quick else ""), "",
             "Each round is the product's selection on the buckets not yet released (a user's unit of weight, "
             f"1/√k on ≤ {cat.SECURE_CATALOGUE_MAX_ITEMS_PER_USER} of them, over {cat.SECURE_CATALOGUE_BUCKETS} public "
             "buckets); the rounds split the selection's ρ (the product's share, "
             f"{cat.SECURE_CATALOGUE_RHO_SHARE:.0%} of the run's zCDP budget at δ = {DELTA:g}) and the phantom share "
             f"({cat.SECURE_CATALOGUE_PHANTOM_SHARE:.0%} of the buckets) evenly. Secure: one noisy secure sum (σ); none: "
             "the sum of the H entities' own releases (σ·√H). *Entries covered*: share of the table's entries whose "
             "item's bucket is kept (every row of the data, the selection's input). Paired difference against one "
             "round, mean ± sd over seeds; *beats* / *loses* beyond the sd.", "",
             "| federation | ε | trust | one round: entries covered (keys holding items) | "
             + " | ".join(v for v in VARIANTS if v != BASE) + " |",
             "|---|---|---|---|" + "---|" * (len(VARIANTS) - 1)]
    tally = {v: {"beats": 0, "loses": 0, "inconclusive": 0} for v in VARIANTS if v != BASE}
    where = {v: {} for v in tally}  # (ε, trust) → verdicts over the federations
    for data in dict.fromkeys(r["data"] for r in rows):
        for eps in dict.fromkeys(r["epsilon"] for r in rows if r["data"] == data):
            for trust in ("secure", "none"):
                base = paired(rows, data, eps, trust, BASE)
                cells = []
                for v in VARIANTS:
                    if v == BASE:
                        continue
                    p = paired(rows, data, eps, trust, v)
                    tally[v][p["verdict"]] += 1
                    where[v].setdefault((eps, trust), []).append(p["verdict"])
                    cells.append(f"{p['mean']:+.3f} ± {p['sd']:.3f} ({p['verdict']})")
                lines.append(f"| {U.LABEL.get(data, data)} | {eps:g} | {trust} | "
                             f"{base['covered']:.3f} ({base['real_keys']:.0f}) | " + " | ".join(cells) + " |")
    lines += ["", "## Verdict", ""]
    for v, t in tally.items():
        everywhere = [f"ε = {e:g} {tr}" for (e, tr), vs in where[v].items() if all(x == "beats" for x in vs)]
        lines.append(f"- {v} against one round: beats in {t['beats']}, loses in {t['loses']}, inconclusive in "
                     f"{t['inconclusive']} of {sum(t.values())} cells"
                     + (f"; beats on every federation at {', '.join(everywhere)}." if everywhere else "."))
    better = [v for v, t in tally.items() if t["beats"] > t["loses"]]
    lines += ["", "Reading: a later round re-weights only the users whose buckets the earlier rounds released, while "
              "every round pays for its share of ρ with a larger σ (σ grows as 1/√share of ρ). "
              + (f"More cells gained than lost with: {', '.join(better)}." if better else
                 "No variant gains in more cells than it loses: the product keeps one round.")
              + " Where a split gains on every federation, it is where one round already covers the most "
              "entries; adopting it there would add a secure sum (four SecAgg+ round trips) to every deployed "
              "run, and its effect on the recommendations is not measured by this page.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two federations, ε = 1, 2 seeds (not a result)")
    args = ap.parse_args()
    seeds = 2 if args.quick else SEEDS
    feds = FEDERATIONS[:2] if args.quick else FEDERATIONS
    eps_grid = [1.0] if args.quick else EPS
    t0 = time.time()
    rows = [r for name in feds for r in measure(name, seeds, eps_grid)]
    seconds = time.time() - t0
    out = C.outputs("catalogue_rounds", args.quick)
    doc = {"rows": rows, "seeds": seeds, "variants": {k: list(v) for k, v in VARIANTS.items()}, "delta": DELTA,
           "seconds": seconds, "machine": C.machine(), "quick": args.quick}
    md = report(rows, seconds, args.quick, seeds)
    C.write_doc(out["json"], doc)
    C.write_atomic(out["md"], md)
    print(md)


if __name__ == "__main__":
    main()
