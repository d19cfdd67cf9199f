"""Command line: ``python -m dpfed_core {run,sweep,methods,audit,report} …``.

Every bad input ends with a one-line ``error: …`` on stderr and exit status 2 (never a traceback).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Sequence

from tqdm import tqdm

from .config import RunConfig
from .errors import DpfedError

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


def _float(text: str) -> float:
    t = text.strip().lower()
    if t in ("inf", "∞", "infinity", "none"):
        return math.inf
    try:
        return float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'inf', got {text!r}") from None


def _float_list(text: str) -> list[float]:
    return [_float(t) for t in text.split(",") if t.strip()]


def _int_list(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _add_data_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data")
    g.add_argument("--data", required=True, help="sample:synthetic | sample:clinic | MovieLens dir | eICU dir | CSV/Parquet file")
    g.add_argument("--user-col", help="long table: user id column")
    g.add_argument("--item-col", help="long table: item column")
    g.add_argument("--value-col", help="long table: value column (omit for implicit 1s)")
    g.add_argument("--entity-col", help="long table: column holding the entity (federation key)")
    g.add_argument("--entity-from", help="long table: derive the entity from this column …")
    g.add_argument("--entity-transform", help="… with this transform: first_char | first_digit | prefix:N")
    g.add_argument("--item-name-col", help="long table: readable item names")
    g.add_argument("--value-kind", choices=["ratings", "counts", "implicit"], help="what values mean")
    g.add_argument("--value-max", type=float, help="declared public upper bound of one value (e.g. 5 for ratings)")
    g.add_argument("--federation", help="MovieLens: zip (default) | eICU: hospitalid (default) or region")
    g.add_argument("--events", help="eICU: event table(s), e.g. medication (default), lab, treatment, diagnosis")
    g.add_argument("--min-entity-users", type=int, help="drop entities with fewer users (reported)")


def _add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--method", default="kmeans", help="see `python -m dpfed_core methods` (default: kmeans)")
    g.add_argument("--epsilon", type=_float, default=1.0, help="ε per entity for DP methods (default 1; inf = non-private)")
    g.add_argument("--delta", type=float, default=1e-6, help="δ per entity for DP methods (default 1e-6)")
    g.add_argument("--k", type=int, default=50, help="prototypes per entity (default 50)")
    g.add_argument("--rank", type=int, default=10, help="latent factors ℓ (default 10)")
    g.add_argument("--lam", type=float, default=0.1, help="ridge penalty λ (default 0.1)")
    g.add_argument("--mode", choices=["zero", "observed"], help="observation mode: zero (absent = 0; default for counts/implicit) or observed "
                        "(only observed entries; default for ratings)")
    g.add_argument("--seed", type=int, default=0, help="random seed of split and method (default 0)")
    g.add_argument("--top-n", type=int, default=10, help="N of precision/recall/NDCG@N (default 10)")
    g.add_argument("--server-weighting", choices=["none", "counts"], default="none",
                   help="weight prototypes by released cluster sizes at the server (default none)")
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="extra prototype-method parameter, repeatable (e.g. --param support=20)")


def _parse_params(items: list[str]) -> dict:
    out = {}
    for it in items:
        if "=" not in it:
            raise DpfedError(f"--param expects KEY=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        vl = v.strip()
        val: object
        if vl.lower() in ("true", "false"):
            val = vl.lower() == "true"
        else:
            try:
                val = int(vl)
            except ValueError:
                try:
                    val = _float(vl)
                except argparse.ArgumentTypeError:
                    val = vl
        out[k.strip().replace("-", "_")] = val
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dpfed_core",
        description="Federated recommendation with differentially private prototypes (Ribero et al. 2020).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="one federation run, evaluated on a held-out split",
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG_RUN)
    _add_data_args(run)
    _add_model_args(run)
    run.add_argument("--compare", type=_names, default=[],
                     help="also run these methods on the same split, e.g. central,individual,random-v,popularity")
    run.add_argument("--out", help="write the JSON result document here")

    sw = sub.add_parser("sweep", help="privacy–utility sweep over an ε grid and several seeds",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog="example:\n  python -m dpfed_core sweep --data sample:clinic --method dp-gaussian "
                               "--k 10 --epsilons 0.1,1,10,inf --seeds 0,1,2 --out sweep.json\n")
    _add_data_args(sw)
    _add_model_args(sw)
    sw.set_defaults(method="dp-gaussian")
    sw.add_argument("--epsilons", type=_float_list, default=[0.1, 0.3, 1, 3, 10, math.inf],
                    help="comma-separated ε grid, inf allowed (default 0.1,0.3,1,3,10,inf)")
    sw.add_argument("--seeds", type=_int_list, default=[0, 1, 2], help="comma-separated seeds (default 0,1,2)")
    sw.add_argument("--references", type=_names, default=["individual", "central", "random-v", "popularity"],
                    help="reference methods (default individual,central,random-v,popularity)")
    sw.add_argument("--metric", default="mar", help="metric for the crossing ε (default mar)")
    sw.add_argument("--out", help="write the JSON sweep document here")

    sub.add_parser("methods", help="list the available methods and their privacy models")
    from . import audit, report

    audit.register_cli(sub)
    report.register_cli(sub)
    return parser


def _load(args):
    from .loaders import load_data

    opts = {
        "user_col": args.user_col, "item_col": args.item_col, "value_col": args.value_col,
        "entity_col": args.entity_col, "entity_from": args.entity_from,
        "entity_transform": args.entity_transform, "item_name_col": args.item_name_col,
        "value_kind": args.value_kind, "value_max": args.value_max, "federation": args.federation,
        "events": args.events, "min_entity_users": args.min_entity_users,
    }
    return load_data(args.data, **{k: v for k, v in opts.items() if v is not None})


def default_mode(dataset) -> str:
    """SPEC §1: ``zero`` for counts and implicit data, ``observed`` for explicit ratings."""
    return "observed" if dataset.value_kind == "ratings" else "zero"


def _config(args, dataset) -> RunConfig:
    return RunConfig(
        method=args.method, epsilon=args.epsilon, delta=args.delta, k=args.k, rank=args.rank,
        lam=args.lam, mode=args.mode or default_mode(dataset), seed=args.seed, top_n=args.top_n,
        server_weighting=args.server_weighting, prototype_params=_parse_params(args.param),
    ).validate()


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
    from .experiments import make_split, run_method, write_json

    t0 = time.perf_counter()
    dataset = _load(args)
    config = _config(args, dataset)
    split = make_split(dataset, config)
    bar = _Bar(2 * dataset.n_entities + 2 + len(args.compare) + 1, f"run {config.method}")
    try:
        doc, _ = run_method(dataset, config, split, progress=bar)
        comparison = {}
        for m in args.compare:
            if m != config.method:
                comparison[m] = run_method(dataset, config.replace(method=m), split, progress=bar)[0]
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
    if args.out:
        write_json(doc, args.out)
        print(f"wrote {args.out} ({time.perf_counter() - t0:.1f} s)")
    return 0


def cmd_sweep(args) -> int:
    from .experiments import crossing_epsilon, sweep, sweep_table, write_json

    dataset = _load(args)
    config = _config(args, dataset)
    n_jobs = len(args.seeds) * (len(args.epsilons) + len(args.references))
    bar = _Bar(n_jobs, f"sweep {config.method}")
    try:
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
    if args.out:
        write_json(doc, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_methods(_args) -> int:
    from .methods import METHODS, available_methods

    for name in available_methods():
        spec = METHODS[name]
        print(f"{name:16s} {spec.privacy:50s} {spec.description}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        from . import audit, report

        commands = {"run": cmd_run, "sweep": cmd_sweep, "methods": cmd_methods,
                    "audit": audit.cmd_audit, "report": report.cmd_report}
        return commands[args.command](args)
    except DpfedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
