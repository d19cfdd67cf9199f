"""Mutation runner for the DP tests (issue 11, finding 4): ``make mutants`` (also run by ``.ci/run``).

Each mutant is one deliberate privacy bug — a source edit given as (file, exact old text, new text).
For every mutant the runner copies the engine and the tests to a temporary directory (the working
tree is never touched), applies the edit, and runs only the DP tests aimed at it. A mutant is
*killed* when those tests fail (pytest exit code 1); it *survives* when they pass. The runner fails
if any mutant survives, if a mutant's text is no longer found in the source (the list went stale),
or if the unmutated copy does not pass the same tests (a baseline that fails kills nothing).

The first seven are the bugs the review found the old suite let through or had to catch; the rest
are the issue's own examples plus the finding-1 and true-count regressions.

Usage: ``python tests/mutants.py [--list] [--only NAME ...]``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

DPP = "dpfed_core/federation/dp_prototypes.py"
MECH = "dpfed_core/privacy/mechanisms.py"
PROTO = "dpfed_core/federation/protocol.py"
NB = "tests/test_dp_neighbours.py"
NOISE = "tests/test_noise.py"
MECHT = "tests/test_mechanisms.py"
REC = f"{NOISE}::test_noise_every_draw_has_the_scale_the_ledger_recorded"
CORE = "dpfed_core/federation/coresets.py"
CORET = "tests/test_coresets.py"
SUMM = "dpfed_core/federation/summable.py"
COT = "tests/test_cooccurrence.py"


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTANTS = (
    # --- the review's seven (finding 4)
    Mutant("gaussian-sigma-halved", MECH,
           "return sampler_for(rng).gaussian(values, sigma), sigma",
           "return sampler_for(rng).gaussian(values, sigma / 2), sigma",
           (f"{NB}::test_dp_gaussian_mechanism_stays_under_epsilon_delta", REC)),
    Mutant("partition-gamma-100x-delta", DPP,
           "return eps_level, mech.partition_threshold(eps_level, delta_cand / n_tests)",
           "return eps_level, mech.partition_threshold(eps_level, 100 * delta_cand / n_tests)",
           (f"{NB}::test_dp_candidate_stage_isolated_user_stays_under_delta",)),
    Mutant("search-em-4x-epsilon", DPP,
           "r = mech.exponential_mechanism(utilities, cap, eps_step, rng, monotone=True)",
           "r = mech.exponential_mechanism(utilities, cap, 4 * eps_step, rng, monotone=True)",
           (f"{NB}::test_dp_local_search_stays_under_epsilon", REC)),
    Mutant("size-stage-4x-epsilon", DPP,
           "self.n_hat_ = float(mech.count_mechanism(n, 1, e_size, rng)[0])",
           "self.n_hat_ = float(mech.count_mechanism(n, 1, 4 * e_size, rng)[0])",
           (f"{NB}::test_dp_size_stage_and_auto_k_stay_under_epsilon", REC)),
    Mutant("top-s-factor-dropped", MECH,
           "beta = s * _em_scale(sensitivity, epsilon, monotone)",
           "beta = _em_scale(sensitivity, epsilon, monotone)",
           (f"{NB}::test_dp_gumbel_top_s_stays_under_epsilon", REC)),
    Mutant("count-noise-halved", MECH,
           "return sampler_for(rng).discrete_laplace(c, scale), scale",
           "return sampler_for(rng).discrete_laplace(c, scale / 2), scale",
           (f"{NB}::test_dp_count_mechanism_stays_under_epsilon", REC)),
    Mutant("em-factor-2-dropped", MECH,
           "return (1.0 if monotone else 2.0) * sensitivity / epsilon",
           "return 1.0 * sensitivity / epsilon",
           (f"{NB}::test_dp_exponential_mechanism_stays_under_epsilon", REC)),
    # --- the examples
    Mutant("gaussian-delta-ignored", MECH,
           "    start = gaussian_sigma_analytic(epsilon, delta, sensitivity)\n",
           "    delta = 0.25\n    start = gaussian_sigma_analytic(epsilon, delta, sensitivity)\n",
           (f"{MECHT}::test_mech_gaussian_sigma_meets_delta_by_opendp_map",
            f"{NB}::test_dp_gaussian_mechanism_stays_under_epsilon_delta")),
    Mutant("sensitivity-from-data", DPP,
           "        vmax = float(self.value_max)\n",
           "        vmax = float(X.max()) if X.nnz else float(self.value_max)\n",
           (f"{NB}::test_dp_recovery_bounds_are_public_and_entries_clipped",)),
    Mutant("clipping-skipped", DPP,
           "        np.clip(Xc.data, vmin, vmax, out=Xc.data)\n        return Xc, self._scale_rows(Xc, lam)",
           "        return Xc, self._scale_rows(Xc, lam)",
           (f"{NB}::test_dp_recovery_bounds_are_public_and_entries_clipped",)),
    Mutant("noise-shared-across-entities", PROTO,
           "entity_rngs = rng.spawn(dataset.n_entities + 1)",
           "entity_rngs = [np.random.default_rng(self.random_state) for _ in range(dataset.n_entities + 1)]",
           (f"{NOISE}::test_noise_is_never_shared_across_entities",)),
    Mutant("budget-split-swapped", DPP,
           "noisy_n, _ = mech.count_mechanism(true_n, 1, eps_cnt, rng)",
           "noisy_n, _ = mech.count_mechanism(true_n, 1, eps_sum, rng)",
           (REC,)),
    # --- regressions of findings 1 and 3, and the true-count canary
    Mutant("seeded-noise-in-production", PROTO,
           "entity_rngs[:-1] = [SecureGenerator() for _ in range(dataset.n_entities)]",
           "pass",
           (f"{NOISE}::test_noise_seed_known_adversary_rebuilds_sizes_only_in_simulation",)),
    Mutant("numpy-float-noise-in-production", PROTO,
           "entity_rngs[:-1] = [SecureGenerator() for _ in range(dataset.n_entities)]",
           "entity_rngs[:-1] = [np.random.default_rng() for _ in range(dataset.n_entities)]",
           (f"{NOISE}::test_noise_protocol_run_draws_from_opendp_in_production",)),
    Mutant("true-count-denominator", DPP,
           "denom = np.maximum(noisy_n, 1.0)[:, None]",
           "denom = np.maximum(true_n, 1.0)[:, None]",
           (f"{NB}::test_dp_recovery_never_divides_by_the_true_count",)),
    # --- the LSH-tree coreset (issue 14)
    Mutant("lsh-tree-levels-not-composed", CORE,
           "eps_level = eps_tree / (depth + 1)",
           "eps_level = eps_tree",
           (f"{CORET}::test_dp_lsh_tree_counts_stay_under_epsilon_and_audit_has_power",)),
    Mutant("lsh-leaf-true-count-denominator", CORE,
           "pts = sums / np.maximum(tree.counts, 1.0)[:, None]",
           "pts = sums / np.maximum(np.bincount(tree.leaf_of[members], minlength=L), 1.0)[:, None]",
           (f"{CORET}::test_dp_lsh_leaf_average_divides_by_the_released_count_never_the_true_one",)),
    Mutant("lsh-leaf-sensitivity-understated", CORE,
           "sums, sigma = mech.gaussian_mechanism(sums, radius, eps_leaf, delta_leaf, rng)",
           "sums, sigma = mech.gaussian_mechanism(sums, radius / 10, eps_leaf, delta_leaf, rng)",
           (f"{CORET}::test_dp_lsh_end_to_end_release_stays_under_epsilon_and_audit_has_power",)),
    # --- summable releases and secure aggregation (issue 15)
    Mutant("cooccurrence-secure-share-without-secure-sum", SUMM,
           'if self.aggregation == "secure":\n            return math.sqrt(n_entities - self.max_dropouts)',
           'if True:\n            return math.sqrt(n_entities - self.max_dropouts)',
           (f"{COT}::test_neighbour_audit_stays_under_the_claim",)),
    Mutant("cooccurrence-rows-not-normalised", SUMM,
           "scale = np.where(norms > 0, 1.0 / np.maximum(norms, 1e-300), 0.0)",
           "scale = np.where(norms > 0, 1.0, 0.0)",
           (f"{COT}::test_one_user_moves_each_release_by_at_most_one",)),
    Mutant("cooccurrence-ledger-share-understated", SUMM,
           'ledger.spend(stage, mech_name, plan["epsilon"] * share_w,',
           'ledger.spend(stage, mech_name, 0.5 * plan["epsilon"] * share_w,',
           (f"{COT}::test_ledger_rows_and_both_guarantees",)),
)


def _copy_tree(dest: Path) -> None:
    for part in ("dpfed_core", "tests"):
        shutil.copytree(REPO / part, dest / part,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    for f in ("pyproject.toml",):
        if (REPO / f).exists():
            shutil.copy2(REPO / f, dest / f)


def _pytest(cwd: Path, tests: tuple[str, ...], show_failure: bool = False) -> int:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(cwd),
               DPFED_SHARED_DATA=os.environ.get("DPFED_SHARED_DATA", str(REPO.parent / "shared" / "data")))
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if show_failure and r.returncode != 0:
        print(r.stdout[-4000:], r.stderr[-2000:])
    return r.returncode


def run(mutants) -> int:
    with tempfile.TemporaryDirectory(prefix="dpfed-mutants-") as tmp:
        base = Path(tmp) / "base"
        _copy_tree(base)
        stale = [m.name for m in mutants if (base / m.path).read_text().count(m.old) != 1]
        if stale:
            print(f"STALE mutants (text not found exactly once): {', '.join(stale)}")
            return 1
        targeted = tuple(dict.fromkeys(t for m in mutants for t in m.tests))
        t0 = time.perf_counter()
        rc = _pytest(base, targeted, show_failure=True)
        print(f"baseline (unmutated, {len(targeted)} targeted tests): "
              f"{'pass' if rc == 0 else f'FAIL (exit {rc})'} [{time.perf_counter() - t0:.0f} s]")
        if rc != 0:
            return 1
        survivors = []
        for m in mutants:
            work = Path(tmp) / m.name
            _copy_tree(work)
            f = work / m.path
            f.write_text(f.read_text().replace(m.old, m.new))
            t0 = time.perf_counter()
            rc = _pytest(work, m.tests)
            verdict = "killed" if rc == 1 else ("SURVIVED" if rc == 0 else f"ERROR (exit {rc})")
            print(f"{m.name:34s} {verdict:10s} [{time.perf_counter() - t0:.0f} s]")
            if rc != 1:
                survivors.append(m.name)
            shutil.rmtree(work, ignore_errors=True)
    print(f"{len(mutants) - len(survivors)}/{len(mutants)} mutants killed"
          + (f"; not killed: {', '.join(survivors)}" if survivors else ""))
    return 1 if survivors else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:34s} {m.path}")
        return 0
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.only and len(chosen) != len(args.only):
        print(f"unknown mutant(s): {sorted(set(args.only) - {m.name for m in MUTANTS})}")
        return 2
    return run(chosen)


if __name__ == "__main__":
    sys.exit(main())
