"""``python -m dpfed_core site …``: what this site released and what budget it has left, read from the
site's own store (its odometer and release log, :mod:`dpfed_core.deployment.site_policy`) on the
site's machine — for its compliance officer, without the coordinator; and the site's own withdrawal
from a run it accepted and drew nothing in."""
from __future__ import annotations

import argparse
import math
import sys

EPILOG = """\
examples:
  # every decision and release of this site, then its remaining budget
  python -m dpfed_core site releases --policy /etc/dpfed/site_policy.toml
  # the same from the store file itself, as JSON
  python -m dpfed_core site releases --store /var/lib/dpfed/site.sqlite3 --json
  # the remaining budget only
  python -m dpfed_core site budget --policy /etc/dpfed/site_policy.toml
  # give back the charge of run 4213 (accepted, then never asked for a share): only if this site drew
  # nothing in it; every later release of the run is refused. Exit status 1 when a site keeps the charge
  # (it drew its noise in the run), 0 when every charge was given back or already was
  python -m dpfed_core site withdraw --run 4213 --policy /etc/dpfed/site_policy.toml
"""


def register_cli(subparsers) -> None:
    p = subparsers.add_parser("site", help="a deployment site's own release log and remaining budget",
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("what", choices=["releases", "budget", "withdraw"],
                   help="releases: every decision and release with the remaining budget; budget: the budget only; "
                        "withdraw: give back the charge of an accepted run (--run) in which this site drew nothing "
                        "(exit status 1 when a charge is kept)")
    p.add_argument("--run", metavar="ID", help="with withdraw: the run (its id as `site releases` lists it)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--policy", metavar="FILE", help="the site's policy file (its store key names the store)")
    src.add_argument("--store", metavar="FILE", help="the site's store file")
    p.add_argument("--site", metavar="NAME",
                   help="this site's name (the entity it serves): with --policy whose store names {site}, its "
                        "store; in a store several sites share, its rows and balance only")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_site)


def _store(args):
    """(the site store's path, the site policy read from --policy or None): the policy is read once."""
    from pathlib import Path

    from dpfed_core.deployment.site_policy import load_policy
    from dpfed_core.errors import ConfigError

    policy = load_policy(args.policy, control="--policy") if args.policy is not None else None
    if args.store:
        path = Path(args.store)
    else:
        if "{site}" in str(policy.store) and not args.site:
            raise ConfigError(f"the store of {args.policy} ({policy.store}) names {{site}}; give --site NAME")
        path = policy.store_for(args.site or "")
    if not path.exists():  # reading never creates a store: a wrong path must not look like an empty log
        raise ConfigError(f"no site store at {path}; check --store / --policy (and --site)")
    return path, policy


def _check_site_named(site: str, path, held_rows: list[dict]) -> None:
    """A ``--site`` the store holds nothing of (no account, no decision), in a store that holds others', is
    a wrong name (its balance would read as "accepted no run yet"): one error naming the sites the store
    holds. An empty store holds no site yet and answers that it accepted no run."""
    from dpfed_core.errors import ConfigError

    held = sorted({r["entity"] for r in held_rows})
    if held and site not in held:
        import difflib

        near = difflib.get_close_matches(site, held, 1)
        raise ConfigError(f"--site {site!r}: the store {path} holds no account of that site; it holds "
                          f"{', '.join(repr(h) for h in held)}" + (f" (did you mean {near[0]!r}?)" if near else ""))


def _fmt(x) -> str:
    if x is None:
        return "—"
    x = float(x)
    return "∞" if math.isinf(x) else f"{x:.4g}"


_WITHDRAWN = {"withdrawn": "charge given back (this site drew nothing in the run); every later release of it is "
                            "refused",
              "already": "already withdrawn; nothing more to give back"}


def cmd_site(args) -> int:
    from dpfed_core.deployment.site_policy import SiteLog, remaining_budget, withdraw_by_site
    from dpfed_core.errors import ConfigError
    from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds

    if (args.what == "withdraw") != bool(args.run):
        raise ConfigError("give --run ID with `site withdraw` (and only there): the run whose charge to give back"
                          if args.what == "withdraw" else f"--run is for `site withdraw`, not `site {args.what}`")
    path, policy = _store(args)
    # a store named by --store is fixed there, not in a policy this command was not given
    log = SiteLog(path, fix="give --store the site's store file (its policy's store key names it)" if args.store
                  else "fix the store key of the site's policy", create=False)
    if not log.has_log() and (held := remaining_budget(path)):
        # accounts with no site decision behind them: a coordinator's store, whose balances would read as the site's
        names = ", ".join(repr(n) for n in dict.fromkeys(b["dataset"] for b in held))
        raise ConfigError(f"the store {path} is no deployment site's store: it holds no site's release log, only the "
                          f"accounts {names} of a coordinator's runs (`budget list --store {path}` reads them); give "
                          + ("--store the site's store file (its policy's store key names it)" if args.store
                             else "the site's store in the store key of its policy"))
    if args.site:  # before anything is withdrawn: a wrong name gives nothing back and says so
        _check_site_named(args.site, path, remaining_budget(path) + log.rows())
    outcomes: list[dict] = []
    if args.what == "withdraw":
        outcomes = withdraw_by_site(path, args.run, args.site)
        for o in [] if args.json else outcomes:
            print(f"run {args.run} of site {o['entity']!r} (coordinator {o['coordinator']}): "
                  + _WITHDRAWN.get(o["decision"], f"charge kept: this site drew its noise in the run (stage {', '.join(o['stages'])}), "
                                                   "so its charge stays"))
    rows = log.rows() if args.what == "releases" else []
    budget = remaining_budget(path)
    if args.site:  # a store several sites share: this site's rows and balance only
        rows = [r for r in rows if r["entity"] == args.site]
        # its people may be charged to an account opened under another name (recognised as the same people)
        budget = [b for b in budget if b["entity"] == args.site or args.site in b.get("alias_entities", ())]
    if args.json:
        from dpfed_core.deployment.wire import dumps

        doc = {"store": str(path), "log": rows, "budget": budget}
        print(dumps(doc if args.what != "withdraw" else {**doc, "withdrawals": outcomes}))  # ∞ as "inf"
        return _withdraw_status(args, outcomes)
    if args.what == "releases":
        print(f"site store {path}: {len(rows)} decision(s) and release(s)")
        head = ("id", "created", "run", "coordinator", "entity", "method", "stage", "decision", "rule", "ε", "δ",
                "ρ", "shapes", "bytes", "note", "simulation")
        table = [head] + [(str(r["id"]), r["created"], r["run"], r["coordinator"], r["entity"], r["method"],
                           r["stage"], r["decision"], r["rule"] or "—", _fmt(r["epsilon"]), _fmt(r["delta"]), _fmt(r["rho"]),
                           r["shapes"], str(r["bytes"]), r["note"] or "—", "yes" if r["simulation"] else "no")
                          for r in rows]
        widths = [max(len(str(row[i])) for row in table) for i in range(len(head))]
        for row in table:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    if not budget:
        print("budget: this site has accepted no run yet")
    for b in budget:
        print(budget_line(b), file=sys.stdout)
        if args.site and b["entity"] != args.site:
            print(f"note: the people of site {args.site!r} were recognised in this store as those of {b['dataset']!r}: "
                  "its runs are charged to that account, and its decisions read the balance above")
    from dpfed_core.cli.budget_cmd import cap_change_lines

    shown = set()
    for b in budget:  # one list per account: its entities share it
        if b["dataset_key"] not in shown:
            shown.add(b["dataset_key"])
            for line in cap_change_lines(b.get("cap_changes", []), f"cap changes of {b['dataset']!r}"):
                print(line)
    if policy is not None and budget:
        if any((b["cap_epsilon"], b["cap_delta"]) != (policy.budget_epsilon, policy.budget_delta) for b in budget):
            # reading never writes: the odometer takes the policy's budget when it next decides a run
            print(f"note: {args.policy} now states budget_epsilon = {policy.budget_epsilon:g}, budget_delta = "
                  f"{policy.budget_delta:g}; the cap above is the one the site last decided a run under, and the "
                  "policy's applies from its next decision")
    return _withdraw_status(args, outcomes)


def _withdraw_status(args, outcomes: list[dict]) -> int:
    """1 when a withdrawal kept a site's charge (it drew in the run: what was asked was not done), else 0."""
    return 1 if any(o["decision"] == "kept" for o in outcomes) else 0


def budget_line(b: dict) -> str:
    """One account of the site's budget (:func:`~dpfed_core.deployment.site_policy.remaining_budget`). After a
    non-private release (an accepted simulation run included) its people have no overall guarantee: the
    spent and remaining ε are then those of its DP releases under the cap, and the line says so first."""
    from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds

    head = f"budget of {b['dataset']!r} (entity {b['entity']}): cap ε = {epsilon_left(b['cap_epsilon'])}, " \
           f"δ = {_fmt(b['cap_delta'])}; "
    # the spent ε holds at the guarantee's δ (the accountant's: zCDP converts at it), not at the releases' Σδ
    n = b.get("n_non_private", 1) if b["void"] else 0
    # the spent ε composes the DP releases only: a non-private release is counted apart
    dp_runs = b["n_releases"] - n
    at = f" at δ = {_fmt(b['guarantee_delta'])} ({b['accountant']})" if dp_runs else ""
    spent = (f"spent ε = {epsilon_that_holds(b['spent_epsilon'])}{at} over {dp_runs} run(s), whose δ add up "
             f"to {_fmt(b['spent_delta'])}; remaining ε = {epsilon_left(b['remaining_epsilon'])}, "
             f"δ = {_fmt(b['remaining_delta'])}")
    if b["void"]:
        spent = (f"no overall guarantee: {n} non-private release(s) (a simulation run or exact statistics) gave its "
                 f"people ε = ∞; its DP releases alone: {spent} under the cap")
    named = b.get("alias_entities") or []
    also = (f" (also charged: {len(b['aliases'])} re-export(s) of the same people"
            + (f", decided for {', '.join(repr(e) for e in named)}" if named else "") + ")") if b.get("aliases") else ""
    return head + spent + also

