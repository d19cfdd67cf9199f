"""``python -m dpfed_core budget {show,set-cap,releases}``: the privacy budget odometer of a dataset,
and the helpers ``run``/``sweep``/``audit`` use to charge it before computing."""
from __future__ import annotations

import argparse
import json
import math

from dpfed_core.cli.args import add_data_args, add_store_args, load_dataset, parse_float

EPILOG = """\
examples:
  # spent / remaining ε and δ per entity, and the latest releases
  python -m dpfed_core budget show --data sample:clinic

  # the data owner caps every entity of this dataset at ε = 10, δ = 1e-5 (inf removes the cap)
  python -m dpfed_core budget set-cap --data sample:clinic --epsilon 10 --delta 1e-5

  # every release of the dataset (run, comparison, sweep point, audit), newest first
  python -m dpfed_core budget releases --data sample:clinic --store /path/owner.sqlite3

  # every dataset the store knows, without loading any data
  python -m dpfed_core budget list --store /path/owner.sqlite3

The dataset is identified by its content (user ids, item ids, values, entities), so the same data
loaded again — from any file name — has the same budget. Releases compose per entity by basic
composition (ε and δ add up); simulation runs are listed but not charged.
"""


def register_cli(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("budget", help="privacy budget odometer: show / set-cap / releases / list",
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    sub = p.add_subparsers(dest="budget_command", required=True)
    for name, hlp in (("show", "spent / remaining per entity and the latest releases"),
                      ("set-cap", "set the per-entity cap of this dataset (data owner)"),
                      ("releases", "list every release of this dataset")):
        s = sub.add_parser(name, help=hlp, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
        add_data_args(s)
        add_store_args(s, charging=False)
        if name == "set-cap":
            s.add_argument("--epsilon", type=parse_float, required=True,
                           help="cap on ε per entity over all releases (inf removes the cap)")
            s.add_argument("--delta", type=float, default=1e-5, help="cap on δ per entity (default 1e-5)")
        if name == "releases":
            s.add_argument("--limit", type=int, help="only the newest N releases")
        s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ls = sub.add_parser("list", help="every dataset in the store with its cap and largest spend (no data needed)")
    add_store_args(ls, charging=False)
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def cmd_list(args) -> int:
    from dpfed_core.evaluation.experiments import json_safe

    odo = open_odometer(args)
    rows = []
    for d in odo.datasets():
        bal = odo.balance(d["key"])
        top = max(bal, key=lambda b: b.spent_epsilon) if bal else None
        rows.append({**d, "max_spent_epsilon": top.spent_epsilon if top else 0.0,
                     "n_releases": len(odo.releases(d["key"])),
                     "entities_without_guarantee": sum(b.void for b in bal)})
    if args.json:
        print(json.dumps(json_safe(rows), indent=2))
        return 0
    print(f"store: {odo.path}")
    if not rows:
        print("no datasets yet")
        return 0
    print(f"{'key':43s} {'cap ε':>7s} {'max spent ε':>11s} {'releases':>8s}  name")
    for r in rows:
        print(f"{r['key']:43s} {_f(r['cap_epsilon']):>7s} {_f(r['max_spent_epsilon']):>11s} {r['n_releases']:>8d}  "
              f"{r['name']} ({len(r['entities'])} entities)")
    return 0


def open_odometer(args):
    from dpfed_core.privacy.odometer import BudgetOdometer

    return BudgetOdometer(getattr(args, "store", None))


def open_store(args, dataset):
    """(odometer, history, dataset key) of the ``--store`` file, the dataset registered."""
    from dpfed_core.evaluation.history import RunHistory
    from dpfed_core.privacy.odometer import dataset_key

    odometer = open_odometer(args)
    key = odometer.register(dataset, dataset_key(dataset))
    return odometer, RunHistory(odometer.store), key


def _f(x: float, spec: str = ".4g") -> str:
    return "∞" if math.isinf(x) else format(x, spec)


def print_balance(odometer, dataset, key: str) -> None:
    cap_e, cap_d = odometer.cap(key)
    print(f"store: {odometer.path}")
    print(f"dataset: {dataset.name} (key {key}, {dataset.n_entities} entities)")
    if math.isinf(cap_e):
        print("cap: none set — releases are charged but never refused; the data owner sets one with "
              "`python -m dpfed_core budget set-cap --data … --epsilon E`")
    else:
        print(f"cap: ε = {_f(cap_e)}, δ = {cap_d:.3g} per entity (basic composition over releases)")
    bal = odometer.balance(key)
    w = max([len("entity"), *(len(b.entity) for b in bal)])
    w = min(w, 32)
    print(f"{'entity':{w}s} {'spent ε':>9s} {'spent δ':>9s} {'left ε':>9s} {'left δ':>9s} {'releases':>8s}  note")
    for b in bal:
        note = f"{b.n_non_private} non-private release(s): no overall guarantee" if b.void else ""
        print(f"{b.entity[:w]:{w}s} {_f(b.spent_epsilon):>9s} {b.spent_delta:>9.3g} {_f(b.remaining_epsilon):>9s} "
              f"{_f(b.remaining_delta, '.3g'):>9s} {b.n_releases:>8d}  {note}")


def print_releases(rows: list[dict]) -> None:
    print(f"{'id':>5s} {'created (UTC)':25s} {'kind':12s} {'method':16s} {'ε':>7s} {'δ':>8s} {'seed':>5s} "
          f"{'charged ε (max)':>15s}  status")
    for r in rows:
        charged = ("simulation: not charged" if r["simulation"] else
                   ("non-private" if r["non_private"] else _f(r["max_charge_epsilon"])))
        seed = "" if r["seed"] is None else str(r["seed"])
        print(f"{r['id']:>5d} {r['created']:25s} {r['kind'][:12]:12s} {r['method'][:16]:16s} {_f(r['epsilon']):>7s} "
              f"{r['delta']:>8.2g} {seed:>5s} {charged:>15s}  {r['status']}")


def cmd_budget(args) -> int:
    from dpfed_core.evaluation.experiments import json_safe
    from dpfed_core.privacy.odometer import dataset_key

    if args.budget_command == "list":
        return cmd_list(args)
    dataset = load_dataset(args)
    odo = open_odometer(args)
    key = odo.register(dataset, dataset_key(dataset))
    if args.budget_command == "set-cap":
        odo.set_cap(key, args.epsilon, args.delta)
        if math.isinf(args.epsilon):
            print(f"cap removed for {dataset.name} ({key})")
        else:
            print(f"cap set for {dataset.name} ({key}): ε = {args.epsilon:g}, δ = {args.delta:g} per entity")
    if args.budget_command in ("show", "set-cap"):
        if args.json:
            cap_e, cap_d = odo.cap(key)
            print(json.dumps(json_safe({"store": str(odo.path), "dataset": dataset.name, "key": key,
                                        "cap_epsilon": cap_e, "cap_delta": cap_d,
                                        "entities": [b.to_dict() for b in odo.balance(key)],
                                        "releases": odo.releases(key, limit=10)}), indent=2))
            return 0
        print_balance(odo, dataset, key)
        rows = odo.releases(key, limit=10)
        if rows:
            print("latest releases:")
            print_releases(rows)
        return 0
    rows = odo.releases(key, limit=args.limit)
    if args.json:
        print(json.dumps(json_safe(rows), indent=2))
    elif not rows:
        print(f"no releases of {dataset.name} ({key}) in {odo.path}")
    else:
        print_releases(rows)
    return 0


def record_release(kind: str, doc: dict, odometer, history, key: str, reservation) -> None:
    """After a charged release: note the odometer rows in the document, keep the document in the run
    history, and print the budget line."""
    doc["odometer"] = {"store": str(odometer.path), "dataset_key": key, "operation": reservation.operation,
                       "releases": reservation.release_ids}
    history.add(kind, doc, dataset_key=key, operation=reservation.operation)
    print(budget_summary_line(odometer, key))


def budget_summary_line(odometer, key: str) -> str:
    """One line for after a run: the most-spent entity against the cap."""
    bal = odometer.balance(key)
    if not bal:
        return "budget: nothing charged yet"
    top = max(bal, key=lambda b: b.spent_epsilon)
    cap = "no cap" if math.isinf(top.cap_epsilon) else f"cap ε = {_f(top.cap_epsilon)}"
    void = sum(b.void for b in bal)
    extra = f"; {void} entities had non-private releases" if void else ""
    return (f"budget ({odometer.path}): most-spent entity {top.entity!r} has spent ε = {_f(top.spent_epsilon)}, "
            f"δ = {top.spent_delta:.3g} ({cap}){extra} — `python -m dpfed_core budget show` for all")
