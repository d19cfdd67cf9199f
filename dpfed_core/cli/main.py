"""Command line: ``python -m dpfed_core {run,sweep,methods,audit,report,budget} …``.

Every bad input ends with a one-line ``error: …`` on stderr and exit status 2 (never a traceback).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Sequence

from tqdm import tqdm

from dpfed_core.cli import audit_cmd, budget_cmd, deploy_cmd, report_cmd
from dpfed_core.cli.args import (add_data_args, add_model_args, add_store_args, float_list, int_list, load_dataset, name_list,
                                 run_config)
from dpfed_core.errors import DpfedError

EPILOG_RUN = """\
examples:
  # one federation on the bundled synthetic sample (non-private k-means prototypes)
  python -m dpfed_core run --data sample:synthetic --method kmeans --k 10 --out r.json

  # MovieLens 100K federated by the first digit of the ZIP code, DP prototypes at ε = 1
  # (dp-gaussian: Gaussian recovery, measured best; dp-prototypes: the paper's Laplace recovery)
  python -m dpfed_core run --data ../shared/data/ml-100k --method dp-gaussian --epsilon 1 \\
      --k 50 --rank 10 --seed 0 --compare central,individual,random-v,popularity --out r.json

  # a CSV long table: name its columns and the federation key
  python -m dpfed_core run --data ratings.csv --user-col user --item-col item --value-col rating \\
      --entity-col hospital --value-kind counts --value-max 20 --out r.json

--data accepts: sample:synthetic, sample:clinic, a MovieLens 100K/1M directory, an eICU (demo)
directory, or a CSV/CSV.gz/Parquet long table.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dpfed_core",
        description="Federated recommendation with differentially private prototypes (Ribero et al. 2020).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="one federation run, evaluated on a held-out split",
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG_RUN)
    add_data_args(run)
    add_model_args(run)
    run.add_argument("--compare", type=name_list, default=[],
                     help="also run these methods on the same split, e.g. central,individual,random-v,popularity")
    run.add_argument("--out", help="write the JSON result document here")
    add_store_args(run)

    sw = sub.add_parser("sweep", help="privacy–utility sweep over an ε grid and several seeds",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog="example:\n  python -m dpfed_core sweep --data sample:clinic --method dp-gaussian "
                               "--k 10 --epsilons 0.1,1,10,inf --seeds 0,1,2 --out sweep.json\n")
    add_data_args(sw)
    add_model_args(sw)
    sw.set_defaults(method="dp-gaussian")
    sw.add_argument("--epsilons", type=float_list, default=[0.1, 0.3, 1, 3, 10, math.inf],
                    help="comma-separated ε grid, inf allowed (default 0.1,0.3,1,3,10,inf)")
    sw.add_argument("--seeds", type=int_list, default=[0, 1, 2], help="comma-separated seeds (default 0,1,2)")
    sw.add_argument("--references", type=name_list, default=["individual", "central", "random-v", "popularity"],
                    help="reference methods (default individual,central,random-v,popularity)")
    sw.add_argument("--metric", default="mar", help="metric for the crossing ε (default mar)")
    sw.add_argument("--out", help="write the JSON sweep document here")
    add_store_args(sw)

    sub.add_parser("methods", help="list the available methods and their privacy models")
    audit_cmd.register_cli(sub)
    report_cmd.register_cli(sub)
    deploy_cmd.register_cli(sub)
    budget_cmd.register_cli(sub)
    return parser


class _Bar:
    """Turns protocol progress events into a tqdm bar on stderr."""

    def __init__(self, total: int, desc: str) -> None:
        self.bar = tqdm(total=total, desc=desc, unit="step", file=sys.stderr, leave=False,
                        disable=None)

    def __call__(self, event: str, **info) -> None:
        if event in ("round1_done", "round2_done", "server_done", "evaluate_done", "individual_entity",
                     "central_done", "sweep_step"):
            label = info.get("entity") or info.get("method") or event
            self.bar.set_postfix_str(str(label)[:30])
            self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def _print_table(docs: dict[str, dict], n: int) -> None:
    keys = ["mar", "test_rmse", "train_rmse", f"precision_at_{n}", f"recall_at_{n}", f"ndcg_at_{n}"]
    print(f"{'method':16s} {'ε':>8s} " + " ".join(f"{k:>15s}" for k in keys))
    for name, doc in docs.items():
        eps = doc["privacy"]["epsilon"]
        print(f"{name:16s} {eps:>8.3g} " + " ".join(f"{doc['overall'][k]:>15.4f}" for k in keys))


def cmd_run(args) -> int:
    from dpfed_core.evaluation.budget import plan_run, settle_run
    from dpfed_core.evaluation.experiments import make_split, run_method, write_json

    t0 = time.perf_counter()
    dataset = load_dataset(args)
    config = run_config(args, dataset)
    # The odometer is charged (or refuses) before anything touches the data.
    odometer, history, key = budget_cmd.open_store(args, dataset)
    reservation_cm = odometer.charge(dataset, plan_run(dataset, config, args.compare),
                                     allow_non_private=args.allow_non_private, key=key)
    split = make_split(dataset, config)
    bar = _Bar(2 * dataset.n_entities + 2 + len(args.compare) + 1, f"run {config.method}")
    try:
        with reservation_cm as reservation:
            doc, _ = run_method(dataset, config, split, progress=bar)
            comparison = {}
            for m in args.compare:
                if m != config.method:
                    comparison[m] = run_method(dataset, config.replace(method=m), split, progress=bar)[0]
            settle_run(reservation, [doc, *comparison.values()])
    finally:
        bar.close()
    if comparison:
        doc["comparison"] = {m: {k: d[k] for k in ("method", "overall", "entities", "privacy", "timings")}
                             for m, d in comparison.items()}
    print(f"{dataset.name}: {dataset.n_users} users × {dataset.n_items} items in {dataset.n_entities} entities"
          f" — {doc['privacy']['label']}")
    for note in doc.get("notes", []):
        print(f"note: {note}")
    _print_table({config.method: doc, **comparison}, config.top_n)
    doc["odometer"] = {"store": str(odometer.path), "dataset_key": key, "operation": reservation.operation,
                       "releases": reservation.release_ids}
    history.add("run", doc, dataset_key=key, operation=reservation.operation)
    print(budget_cmd.budget_summary_line(odometer, key))
    if args.out:
        write_json(doc, args.out)
        print(f"wrote {args.out} ({time.perf_counter() - t0:.1f} s)")
    return 0


def cmd_sweep(args) -> int:
    from dpfed_core.evaluation.budget import plan_sweep
    from dpfed_core.evaluation.experiments import crossing_epsilon, sweep, sweep_table, write_json

    dataset = load_dataset(args)
    config = run_config(args, dataset)
    plans = plan_sweep(dataset, config, args.epsilons, args.seeds, args.references)
    odometer, history, key = budget_cmd.open_store(args, dataset)
    n_jobs = len(args.seeds) * (len(args.epsilons) + len(args.references))
    bar = _Bar(n_jobs, f"sweep {config.method}")
    try:
        # Every sweep point is a release, charged at its requested (ε, δ) before any is computed.
        with odometer.charge(dataset, plans, allow_non_private=args.allow_non_private, key=key) as reservation:
            doc = sweep(dataset, config, args.epsilons, args.seeds, args.references, progress=bar)
    finally:
        bar.close()
    for metric in dict.fromkeys([args.metric, "mar", "test_rmse"]):
        doc.setdefault("tables", {})[metric] = sweep_table(doc, metric)
        if "individual" in doc["references"]:
            doc.setdefault("crossing_epsilon", {})[metric] = crossing_epsilon(doc, metric)
    print(f"{'method':16s} {'ε':>8s} {args.metric + ' mean':>14s} {'sd':>8s}")
    for r in doc["tables"][args.metric]:
        print(f"{r['method']:16s} {r['epsilon']:>8.3g} {r['mean']:>14.4f} {r['sd']:>8.4f}")
    if "crossing_epsilon" in doc:
        c = doc["crossing_epsilon"][args.metric]
        print(f"crossing ε on {args.metric} (beats individual from here on): {c if c is not None else 'none in the grid'}")
    doc["odometer"] = {"store": str(odometer.path), "dataset_key": key, "operation": reservation.operation,
                       "releases": reservation.release_ids}
    history.add("sweep", doc, dataset_key=key, operation=reservation.operation)
    print(budget_cmd.budget_summary_line(odometer, key))
    if args.out:
        write_json(doc, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_methods(_args) -> int:
    from dpfed_core.methods import METHODS, available_methods

    for name in available_methods():
        spec = METHODS[name]
        print(f"{name:16s} {spec.privacy:50s} {spec.description}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        commands = {"run": cmd_run, "sweep": cmd_sweep, "methods": cmd_methods,
                    "audit": audit_cmd.cmd_audit, "report": report_cmd.cmd_report,
                    "deploy-local": deploy_cmd.cmd_deploy_local, "write-shards": deploy_cmd.cmd_write_shards,
                    "budget": budget_cmd.cmd_budget}
        return commands[args.command](args)
    except DpfedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
