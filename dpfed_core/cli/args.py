"""Argument parsing shared by every sub-command (data source, model, lists of numbers).

Neutral ground: the commands import these helpers; nothing in the engine imports the CLI.
"""
from __future__ import annotations

import argparse
import math

from dpfed_core.config import RunConfig
from dpfed_core.errors import DpfedError


def parse_float(text: str) -> float:
    t = text.strip().lower()
    if t in ("inf", "∞", "infinity", "none"):
        return math.inf
    try:
        return float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'inf', got {text!r}") from None


def float_list(text: str) -> list[float]:
    return [parse_float(t) for t in text.split(",") if t.strip()]


def int_list(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None


def name_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def add_data_args(p: argparse.ArgumentParser) -> None:
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


def add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--method", default="kmeans", help="see `python -m dpfed_core methods` (default: kmeans)")
    g.add_argument("--epsilon", type=parse_float, default=1.0, help="ε per entity for DP methods (default 1; inf = non-private)")
    g.add_argument("--delta", type=float, default=1e-6, help="δ per entity for DP methods (default 1e-6)")
    g.add_argument("--k", type=int, default=50, help="prototypes per entity (default 50)")
    g.add_argument("--rank", type=int, default=10, help="latent factors ℓ (default 10)")
    g.add_argument("--lam", type=float, default=0.1, help="ridge penalty λ (default 0.1)")
    g.add_argument("--mode", choices=["zero", "observed"], help="observation mode: zero (absent = 0; default for counts/implicit) or observed "
                        "(only observed entries; default for ratings)")
    g.add_argument("--seed", type=int, default=0,
                   help="seed of the split and of every non-private step (default 0); DP noise comes from "
                        "the operating system's entropy unless --simulation is given")
    g.add_argument("--simulation", action="store_true",
                   help="reproducible DP noise from --seed, for tests and benchmarks: the output is labelled "
                        "'simulation: noise reproducible, no privacy claim'")
    g.add_argument("--top-n", type=int, default=10, help="N of precision/recall/NDCG@N (default 10)")
    g.add_argument("--server-weighting", choices=["none", "counts"], default="none",
                   help="weight prototypes by released cluster sizes at the server (default none)")
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="extra prototype-method parameter, repeatable (e.g. --param support=20)")


def parse_params(items: list[str]) -> dict:
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
                    val = parse_float(vl)
                except argparse.ArgumentTypeError:
                    val = vl
        out[k.strip().replace("-", "_")] = val
    return out


def load_dataset(args):
    from dpfed_core.data.loaders import load_data

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


def run_config(args, dataset) -> RunConfig:
    return RunConfig(
        method=args.method, epsilon=args.epsilon, delta=args.delta, k=args.k, rank=args.rank,
        lam=args.lam, mode=args.mode or default_mode(dataset), seed=args.seed, simulation=args.simulation, top_n=args.top_n,
        server_weighting=args.server_weighting, prototype_params=parse_params(args.param),
    ).validate()




def add_store_args(p: argparse.ArgumentParser, charging: bool = True) -> None:
    """``--store`` (the odometer + history file) and, for commands that release, ``--allow-non-private``."""
    g = p.add_argument_group("privacy budget store")
    g.add_argument("--store", metavar="FILE",
                   help="SQLite store of the privacy budget odometer and run history (default: $DPFED_STORE, "
                        "else $XDG_DATA_HOME/dpfed/dpfed.sqlite3, i.e. ~/.local/share/dpfed/dpfed.sqlite3)")
    if charging:
        g.add_argument("--allow-non-private", action="store_true",
                       help="on a dataset with a budget cap, allow releases without a DP guarantee (ε = inf, "
                            "central/kmeans/popularity references, audits); they are recorded as non-private")
