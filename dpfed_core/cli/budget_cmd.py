"""``python -m dpfed_core budget {show,set-cap,releases}``: the privacy budget odometer of a dataset,
and the helpers ``run``/``sweep``/``audit`` use to charge it before computing."""
from __future__ import annotations

import argparse
import json
import math
import sys

from dpfed_core.cli.args import (COMMAND_HELP, add_data_args, add_store_args, finite_float, load_dataset,
                                parse_float, positive_whole_number)
from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds  # caps and what is left: down; spent: up

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

  # raising a cap (more budget, or removing it) must be confirmed; lowering is free; both are logged
  python -m dpfed_core budget set-cap --data sample:clinic --epsilon 20 --confirm-raise

  # what a run would charge, without computing or charging anything
  python -m dpfed_core run --data sample:clinic --method dp-cooccurrence --epsilon 1 --dry-run

The budget follows the people: the same data loaded again — from any file name or row order — has
the same budget, and a re-export of the same users (new pseudonyms, rows added or removed, entity
values relabelled, values changed, read with other options, a subsample mixed with other people)
is matched to it by a keyed fingerprint of which items each user has (also read from how many
users hold each item, so another item column of the same file is the same people, and from user
ids that are record numbers) and charged to the same account. The fingerprint key lives beside
the store (<store>.fpkey, mode 0600): keep both together
and protect them like the data. Releases compose per entity by the smaller of basic composition and
zCDP at the cap's δ (a sweep's points as one batch by PLD); `budget show` says which. Simulation
runs are not charged, and without --store / $DPFED_STORE they do not open the store at all.
"""


def register_cli(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("budget", help=COMMAND_HELP["budget"],
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
            # read as every number flag is: Python's float() would take '1_0e-6' for 1e-5, or full-width digits
            s.add_argument("--delta", type=finite_float, default=1e-5, help="cap on δ per entity (default 1e-5)")
            s.add_argument("--confirm-raise", action="store_true",
                           help="confirm a cap that gives more budget than the current one (a larger ε or δ, "
                                "or inf); lowering needs no confirmation. Every change is logged")
        if name == "releases":
            s.add_argument("--limit", type=positive_whole_number, help="only the newest N releases (N ≥ 1)")
        s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ls = sub.add_parser("list", help="every dataset in the store with its cap and largest spend (no data needed)")
    add_store_args(ls, charging=False)
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def _no_store(args, what: dict) -> bool:
    """Answer a read of a store that does not exist, without making it; False when it exists.

    A read never creates the store (nor its folder): a mistyped path answered from a new, empty store
    would read as a fresh budget, and the file would be left behind."""
    from dpfed_core.privacy.store import own_key_left, resolve_store_path

    path = resolve_store_path(getattr(args, "store", None))
    if path.exists() or path.is_symlink() or own_key_left(path) is not None:
        return False  # a store deleted beside its key is refused by the store itself
    if args.json:
        print(json.dumps({"store": str(path), "exists": False, **what}, indent=2))
    else:
        print(f"store: {path} does not exist: nothing has been charged there (a run, a sweep or "
              "`budget set-cap` makes it). Check the path (--store, $DPFED_STORE).")
    return True


def cmd_list(args) -> int:
    from dpfed_core.evaluation.experiments import json_safe

    if _no_store(args, {"datasets": []}):
        return 0
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
        cap, spent = epsilon_left(r['cap_epsilon']), epsilon_that_holds(r['max_spent_epsilon'])
        # a re-export of stored people is charged to its account: its figures are that account's, not more
        alias = f" — same people as {r['alias_of']}: its account's figures" if r.get("alias_of") else ""
        # the spent ε counts DP releases only: an entity a non-private release reached has no guarantee at all
        void = r["entities_without_guarantee"]
        void = (f"; no overall guarantee for {void} entit{'y' if void == 1 else 'ies'} (non-private release): the "
                "spent ε is of the DP releases alone" if void else "")
        print(f"{r['key']:43s} {cap:>7s} {spent:>11s} {r['n_releases']:>8d}  "
              f"{r['name']} ({len(r['entities'])} entities){alias}{void}")
    return 0


def open_odometer(args):
    from dpfed_core.privacy.odometer import BudgetOdometer

    return BudgetOdometer(getattr(args, "store", None))


def open_store(args, dataset, plans=None):
    """(odometer, history, dataset key) of the ``--store`` file — or
    (None, None, None) when every planned release is a simulation and no store was named (``--store``,
    ``$DPFED_STORE``): a simulation makes no privacy claim and never opens the home directory's store."""
    from dpfed_core.evaluation.budget import skip_store
    from dpfed_core.evaluation.history import RunHistory

    if plans is not None and skip_store(getattr(args, "store", None), plans):
        return None, None, None
    odometer = open_odometer(args)
    note_site_store(odometer, dataset)
    # registered by the charge itself, in its transaction: a refused release leaves no row (no name, no
    # match, no entity map of a probe)
    return odometer, RunHistory(odometer.store), odometer.account_key(dataset)


def charge(odometer, dataset, plans, allow_non_private: bool, key):
    """The odometer's ``charge`` context manager, or one yielding None when no store is used."""
    import contextlib

    if odometer is None:
        return contextlib.nullcontext(None)
    return odometer.charge(dataset, plans, allow_non_private=allow_non_private, key=key)


def dry_run(args, dataset, plans, what: str) -> int:
    """``--dry-run``: print what ``plans`` would charge per entity and whether it fits, then exit 0
    without computing or charging (the store is read; a missing store file is not created)."""
    import os
    import tempfile

    from dpfed_core.evaluation.budget import planned_charge, skip_store, spend_reason
    from dpfed_core.privacy.accounting import ACCOUNTANT
    from dpfed_core.privacy.store import resolve_store_path

    n = len(plans)
    print(f"dry run: {what} — {n} release{'s' if n != 1 else ''} planned; nothing computed, nothing charged")
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.errors import render_message

    for note in getattr(dataset, "notes", ()):  # what the loader inferred, merged or accepted, as a run states it
        print(f"note: {render_message(note, CLI_NAMES)}")
    if skip_store(getattr(args, "store", None), plans):
        print("simulation: noise reproducible, no privacy claim — nothing would be charged and no store is opened")
        return 0
    path = resolve_store_path(getattr(args, "store", None))
    with tempfile.TemporaryDirectory() as tmp:
        store = path if path.exists() else os.path.join(tmp, "empty.sqlite3")
        p = planned_charge(store, dataset, plans)
    print(f"planned charge: {spend_reason(p, plans, identity=False)}")
    if p.get("identity"):
        print(f"identity: {p['identity']}")
    if math.isfinite(p["cap_epsilon"]) and p.get("refused_unless_allowed"):
        allowed = bool(getattr(args, "allow_non_private", False))
        print(f"after it: no overall guarantee for the people of the entities it touches (non-private releases, "
              f"ε = ∞; the most-spent entity's DP releases at ε = {epsilon_that_holds(p['dp_after'])} of the cap "
              f"ε = {epsilon_left(p['cap_epsilon'])}) ("
              + ("allowed by --allow-non-private" if allowed and p["dp_fits"] else
                 "would be REFUSED" + ("" if allowed else ": add --allow-non-private to allow them")) + ")")
    elif math.isfinite(p["cap_epsilon"]):
        # a spend rounded up and a cap rounded down, as `budget show` states them
        print(f"after it: the most-spent entity would be at ε = {epsilon_that_holds(p['after'])} of the cap "
              f"ε = {epsilon_left(p['cap_epsilon'])}"
              f" ({'fits' if p['fits'] else 'would be REFUSED'})")
    print(f"accountant: {ACCOUNTANT}")
    print(f"store: {path}" + ("" if path.exists() else " (does not exist yet)"))
    note_store(args, dataset)
    return 0


def print_balance(odometer, dataset, key: str) -> None:
    from dpfed_core.privacy.accounting import ACCOUNTANT, REFERENCE_DELTA

    cap_e, cap_d = odometer.cap(key)
    ident = odometer.identity(key)
    print(f"store: {odometer.path}")
    print(f"dataset: {dataset.name} (key {key}, {dataset.n_entities} entities)")
    if ident.alias_of:
        print(f"identity: {ident.describe()}")
    if math.isinf(cap_e):
        print("cap: none set — releases are charged but never refused; the data owner sets one with "
              "`python -m dpfed_core budget set-cap --data … --epsilon E`")
    else:
        print(f"cap: ε = {epsilon_left(cap_e)}, δ = {cap_d:.3g} per entity")
    print(f"accountant: {ACCOUNTANT}" + ("" if math.isfinite(cap_e) else f" (no cap: δ = {REFERENCE_DELTA:g})"))
    print(f"people fingerprints keyed by {odometer.secret_path} (protect it with the store, like the data)"
          + (" — the store is read-only here: nothing was written" if odometer.store.readonly else ""))
    old = odometer.unkeyed_fingerprints()
    if old:
        print(f"warning: {old} dataset(s) still have an unkeyed fingerprint from an older dpfed (it answers "
              "'is this person in the data?' to anyone holding the store); each is rekeyed when its data is next charged "
              "or capped (a run, a sweep, an audit or budget set-cap)")
    bal = odometer.balance(key)
    if not bal:
        # no cap and no release: an empty table would read as a store that lost this dataset's rows
        print("entities: nothing charged to these data yet — every entity has its whole budget")
        return
    w = max([len("entity"), *(len(b.entity) for b in bal)])
    w = min(w, 32)
    print(f"{'entity':{w}s} {'spent ε':>9s} {'basic ε':>9s} {'zCDP ε':>9s} {'left ε':>9s} {'releases':>8s}  "
          "accountant / note")
    for b in bal:
        note = b.accountant if b.n_releases else ""
        if b.void:
            note += f"; {b.n_non_private} non-private release(s): no overall guarantee"
        spent, basic, tight = (epsilon_that_holds(e) for e in (b.spent_epsilon, b.stated_basic_epsilon, b.tight_epsilon))
        print(f"{b.entity[:w]:{w}s} {spent:>9s} {basic:>9s} {tight:>9s} {epsilon_left(b.remaining_epsilon):>9s} "
              f"{b.n_releases:>8d}  {note}")
    from dpfed_core.evaluation.budget import basic_epsilon_note

    why = basic_epsilon_note([b.to_dict() for b in bal])
    if why:
        print(f"note: {why}")
    from dpfed_core.evaluation.budget import runs_left_text

    left = runs_left_text(odometer.runs_left(key))
    if left is not None:
        print(f"runs left: {left}")


def print_cap_changes(odometer, key: str) -> None:
    for line in cap_change_lines(odometer.cap_changes(key)):
        print(line)


def _given_store(args):
    """The store path a command is given (``--store``, else ``$DPFED_STORE``), or None for the home
    directory's default."""
    import os

    from dpfed_core.privacy.store import resolve_store_path

    given = getattr(args, "store", None) or os.environ.get("DPFED_STORE", "").strip() or None
    return None if given is None else resolve_store_path(given)


def check_store_path(args) -> None:
    """Refuse a store path that cannot be a store (a directory, a table given by mistake) before
    anything is loaded or said: the store's own check would come only after the run's planning lines,
    as a second message."""
    from dpfed_core.privacy.store import refuse_non_store_file

    path = _given_store(args)
    if path is not None:
        refuse_non_store_file(path)


def note_store(args, dataset) -> None:
    """:func:`note_site_store` for the store a command is given (``--store`` or ``$DPFED_STORE``), when it
    exists (a new store holds no site's accounts). The home directory's default store is not opened for
    it: a simulation never opens that store, and no site keeps its budget there."""
    path = _given_store(args)
    if path is None:
        return
    if path.exists():
        from dpfed_core.privacy.odometer import BudgetOdometer

        note_site_store(BudgetOdometer(path), dataset)


def note_site_store(odometer, dataset) -> None:
    """A coordinator's run, sweep or audit pointed at a deployment site's store is charged there beside the
    site's own accounts (its people are matched to them as anywhere): said on stderr, since a site's
    store is usually read by the site's officer (`site budget`), not by the coordinator."""
    from dpfed_core.deployment.site_policy import site_dataset_name

    if str(dataset.name).startswith(site_dataset_name("")):
        return
    sites = _site_names(odometer.datasets())
    if sites:
        print(f"note: {odometer.path} is a deployment site's store ({_accounts_text(sites)}); this charge is "
              "recorded in it beside them — a coordinator usually keeps its own store (--store)", file=sys.stderr)


def _site_names(stored: list[dict]) -> list[str]:
    """The names of the site accounts among a store's datasets (a site registers its data as
    ``site <entity>``, :func:`~dpfed_core.deployment.site_policy.site_dataset_name`)."""
    from dpfed_core.deployment.site_policy import site_dataset_name

    prefix = site_dataset_name("")
    return [d["name"] for d in stored if str(d["name"]).startswith(prefix)]


def _accounts_text(sites: list[str], shown: int = 5) -> str:
    return f"accounts {', '.join(repr(n) for n in sites[:shown])}" + (" …" if len(sites) > shown else "")


def _site_accounts(odometer, key: str) -> list[str]:
    """The site accounts of a deployment site's store when the dataset ``key`` is none of the store's
    accounts: ``budget show`` of a site store is then pointed at ``site budget``, which reads a site's
    account without its data."""
    stored = odometer.datasets()
    if any(key in (d["key"], d.get("alias_of")) for d in stored) or odometer.identity(key).alias_of:
        return []
    return _site_names(stored)


def cap_change_lines(rows: list[dict], title: str = "cap changes", limit: int = 10) -> list[str]:
    """The newest ``limit`` cap changes of an account (:meth:`BudgetOdometer.cap_changes` rows, newest
    first) as printed lines under ``title``; none when the cap never changed."""
    if not rows:
        return []
    lines = [f"{title} (newest first):"]
    for r in rows[:limit]:
        # a cap is budget: rounded down, never shown above what was set
        old = "none" if r["old_epsilon"] is None else f"ε = {epsilon_left(r['old_epsilon'])}, δ = {r['old_delta']:.3g}"
        lines.append(f"  {r['changed_at']}  {old} → ε = {epsilon_left(r['new_epsilon'])}, δ = {r['new_delta']:.3g}"
                     + ("  (raised, confirmed)" if r["raised"] else "")
                     + (f"  by {r['actor']}" if r.get("actor") else "") + (f"  {r['note']}" if r["note"] else ""))
    if len(rows) > limit:
        lines.append(f"  … {len(rows) - limit} older change(s)")
    return lines


def print_releases(rows: list[dict]) -> None:
    print(f"{'id':>5s} {'created (UTC)':25s} {'kind':12s} {'method':16s} {'ε':>7s} {'δ':>8s} {'seed':>5s} "
          f"{'charged ε (max)':>15s}  {'status':9s}  by")
    from dpfed_core.evaluation.budget import release_cells

    for r in rows:
        eps, charged = release_cells(r)
        who = r.get("actor") or "(not recorded)"
        if r.get("settled_by") and r.get("settled_by") != r.get("actor"):
            who += f", {r['status']} by {r['settled_by']}"
        seed = "" if r["seed"] is None else str(r["seed"])
        print(f"{r['id']:>5d} {r['created']:25s} {r['kind'][:12]:12s} {r['method'][:16]:16s} {eps:>7s} "
              f"{r['delta']:>8.2g} {seed:>5s} {charged:>15s}  {r['status']:9s}  {who}")


def cmd_budget(args) -> int:
    from dpfed_core.evaluation.experiments import json_safe

    if args.budget_command == "list":
        return cmd_list(args)
    check_store_path(args)
    dataset = load_dataset(args)
    if args.budget_command != "set-cap" and _no_store(args, {"dataset": dataset.name, "releases": []}):
        return 0
    odo = open_odometer(args)
    if args.budget_command == "set-cap":
        key = odo.register(dataset)
        # a cap below what is already spent is refused (spent budget is never refunded), as on the dashboard
        odo.set_cap(key, args.epsilon, args.delta, confirm_raise=args.confirm_raise, refuse_below_spent=True)
        if math.isinf(args.epsilon):
            print(f"cap removed for {dataset.name} ({key})")
        else:
            print(f"cap set for {dataset.name} ({key}): ε = {epsilon_left(args.epsilon)}, δ = {args.delta:g} per entity")
    else:
        # reads only: a store that cannot be written (read-only, full disk) still answers
        key = odo.key_of(dataset)
        sites = _site_accounts(odo, key)
        if sites and not args.json:
            print(f"note: {dataset.name} is not in {odo.path}, a deployment site's store "
                  f"({_accounts_text(sites, len(sites))}); a site's budget is read with `python -m dpfed_core site "
                  f"budget --store {odo.path}`")
    if args.budget_command in ("show", "set-cap"):
        if args.json:
            cap_e, cap_d = odo.cap(key)
            from dpfed_core.privacy.accounting import ACCOUNTANT

            ident = odo.identity(key)
            print(json.dumps(json_safe({"store": str(odo.path), "dataset": dataset.name, "key": key,
                                        "account": ident.account, "same_people_as": ident.alias_of,
                                        "cap_epsilon": cap_e, "cap_delta": cap_d, "accountant": ACCOUNTANT,
                                        "entities": [b.to_dict() for b in odo.balance(key)],
                                        "runs_left": odo.runs_left(key),
                                        "cap_changes": odo.cap_changes(key),
                                        "releases": odo.releases(key, limit=10)}), indent=2))
            return 0
        print_balance(odo, dataset, key)
        print_cap_changes(odo, key)
        rows = odo.releases(key, limit=10)
        if rows:
            print("latest releases:")
            print_releases(rows)
        return 0
    rows = odo.releases(key, limit=args.limit)
    if args.json:
        print(json.dumps(json_safe({"releases": rows, "cap_changes": odo.cap_changes(key)}), indent=2))
    elif not rows:
        print(f"no releases of {dataset.name} ({key}) in {odo.path}")
        print_cap_changes(odo, key)
    else:
        print_releases(rows)
        print_cap_changes(odo, key)
    return 0


def record_release(kind: str, doc: dict, odometer, history, key: str, reservation, dataset=None,
                   show: str = "python -m dpfed_core budget show --data …") -> None:
    """After a charged release: note the odometer rows and the accountant in the document, keep the
    document in the run history, and print the budget line. Without a store (a simulation): say so."""
    if odometer is None:
        doc["odometer"] = {"store": None, "note": "simulation: no budget store opened"}
        print("budget: simulation (no privacy claim) — not charged, no store opened")
        return
    doc["odometer"] = {"store": str(odometer.path), "dataset_key": key, "operation": reservation.operation,
                       "releases": reservation.release_ids}
    if dataset is not None and isinstance(doc.get("privacy"), dict):
        from dpfed_core.evaluation.budget import accountant_record

        doc["privacy"].setdefault("accountant", {}).update(accountant_record(odometer.store, dataset, key))
    history.add(kind, doc, dataset_key=key, operation=reservation.operation)
    print(budget_summary_line(odometer, key, show))


def budget_show_command(args) -> str:
    """``budget show`` for the data this command read — its data flags as given, and its ``--store`` — so
    the line after a run names a command that runs as printed."""
    import shlex

    p = argparse.ArgumentParser(add_help=False)
    add_data_args(p)
    add_store_args(p, charging=False)
    words = ["python", "-m", "dpfed_core", "budget", "show"]
    for a in p._actions:
        v = getattr(args, a.dest, None)
        if not a.option_strings or a.help == argparse.SUPPRESS or v is None or v is False or v == a.default:
            continue
        if a.nargs == 0:
            words.append(a.option_strings[0])
            continue
        if isinstance(v, (list, tuple)):  # --exclude-entities: a name holding a comma goes in double quotes
            v = ",".join(f'"{x}"' if "," in x else x for x in v)
        words += [a.option_strings[0], repr(v) if isinstance(v, float) else str(v)]
    return shlex.join(words)


def budget_summary_line(odometer, key: str, show: str = "python -m dpfed_core budget show --data …",
                        run_delta: float | None = None) -> str:
    """One line for after a run: the most-spent entity against the cap; ``show``: the command that lists
    every entity (:func:`budget_show_command` of the run's arguments). ``run_delta``: the δ the run's own
    lines state its ε at; where it is not the budget's, the line says so, or a spend below the run's ε
    (the same releases at a larger δ) would read as a contradiction."""
    from dpfed_core.evaluation.budget import most_spent

    bal = odometer.balance(key)
    top, alike = most_spent(bal)
    if top is None:
        return "budget: nothing charged yet"
    # charged to another dataset's account (the same people): its entity names would tell the reader
    # where the people of this table are
    alias = odometer.identity(key).alias_of is not None
    cap = "no cap" if math.isinf(top.cap_epsilon) else f"cap ε = {epsilon_left(top.cap_epsilon)}"
    void = [b.entity for b in bal if b.void]
    shown = ", ".join(repr(e) for e in void[:5]) + (f" and {len(void) - 5} more" if len(void) > 5 else "")
    if alias:
        shown = f"{len(void)} of the stored account's entities"
    extra = f"; no overall guarantee for {shown}: non-private release(s)" if void else ""
    spent = epsilon_that_holds(top.spent_epsilon)
    who = ("every entity" if alike else
           "the most-spent entity of the stored account" if alias else f"most-spent entity {top.entity!r}")
    if len(void) == len(bal) and top.spent_epsilon == 0:
        # nothing but non-private releases: "spent ε = 0" would read as a guarantee
        return (f"budget ({odometer.path}): no overall guarantee for any entity — only non-private release(s) "
                f"(exact data or reproducible noise: ε = ∞; {cap}); no DP release spent anything — `{show}` "
                "for every entity")
    other_delta = "" if run_delta is None or float(run_delta) == float(top.guarantee_delta) else (
        f"; every release composed at the budget's δ, while the lines above state ε at δ = {float(run_delta):.3g}")
    return (f"budget ({odometer.path}): {who} has spent ε = {spent} "
            f"at δ = {top.guarantee_delta:.3g} ({top.accountant}; {cap}{other_delta}){extra} — `{show}` for every "
            "entity")
