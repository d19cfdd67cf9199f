"""``python -m dpfed_core audit``: the membership-inference audit from the command line."""
from __future__ import annotations

import argparse
import sys

from dpfed_core.audit.defaults import (ATTACK_LABELS, DEFAULT_ATTACKS, DEFAULT_EPSILONS, DEFAULT_METHODS,
                                      DEFAULT_TARGETS)
from dpfed_core.cli import args as cli_args
from dpfed_core.cli import budget_cmd
from dpfed_core.cli.args import (COMMAND_HELP, add_data_args, add_store_args, finite_float, float_list, list_params,
                                 load_dataset, name_list, parse_params, positive_whole_number, seed_int, shrink_factor,
                                 whole_number)


EPILOG = """\
examples:
  # the DP method over an ε grid against the non-private k-means and k-random prototypes
  python -m dpfed_core audit --data sample:clinic --entity 0 --k 10 --runs 200 \\
      --methods dp-prototypes,kmeans,krandom --epsilons 0.5,1,2,4,8 --out audit.json

  # the summable releases, each under the trust model of the run (the attacker sees the entity's
  # own shares with --aggregation none, only the sums over all entities with --aggregation secure)
  python -m dpfed_core audit --data sample:clinic --entity 0 --runs 100 \
      --methods dp-cooccurrence,dp-popularity --epsilons 1,4 --aggregation secure

  # one MovieLens 100K entity, the farthest real user only, with the V-residual attack
  python -m dpfed_core audit --data ../shared/data/ml-100k --entity "ZIP 0" --targets outlier \\
      --with-v --out audit.json

The ε lower bound is certified with Clopper–Pearson bounds at --confidence on evaluation runs the
threshold was not chosen on; with N evaluation runs per class it cannot exceed
ln((1-a)/a), a = 1-((1-c)/2)^(1/N) (printed as 'max').
"""


def register_cli(subparsers) -> argparse.ArgumentParser:
    """Add the ``audit`` sub-command to ``python -m dpfed_core``'s sub-parsers."""

    p = subparsers.add_parser("audit", help=COMMAND_HELP["audit"],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    add_data_args(p)
    g = p.add_argument_group("audit")
    g.add_argument("--entity", default="0", help="entity name or index (default 0: the first)")
    g.add_argument("--methods", type=name_list, default=list(DEFAULT_METHODS),
                   help="prototype methods and/or summable releases (dp-cooccurrence, dp-popularity); "
                        "default " + ",".join(DEFAULT_METHODS))
    g.add_argument("--aggregation", choices=["none", "secure"], default="none",
                   help="trust model of summable methods: none = the attacker sees the entity's own noisy "
                        "release (default, as a run's --aggregation); secure = only the sum over all entities")
    g.add_argument("--max-dropouts", type=whole_number, default=0,
                   help="with --aggregation secure: tolerated missing entities (as the run's; default 0)")
    g.add_argument("--power-check", type=shrink_factor, default=None, metavar="FACTOR",
                   help="summable methods: also run the audit with the noise shrunk by FACTOR (e.g. 50) against the "
                        "real claim; it must report a violation, or a 'consistent' verdict reads 'inconclusive'")
    g.add_argument("--others", choices=["data", "zeros"], default="zeros",
                   help="summable methods: the other entities of the simulated federation hold nothing (zeros, "
                        "default: their shares are noise only; the audit reads only the audited entity's rows) "
                        "or their own rows (data: every entity's rows are read, and charged)")
    g.add_argument("--epsilons", type=float_list, default=list(DEFAULT_EPSILONS),
                   help="ε grid for private methods, inf allowed (default 0.5,1,2,4,8)")
    g.add_argument("--delta", type=finite_float, default=1e-6, help="δ per entity (default 1e-6)")
    g.add_argument("--k", type=whole_number, default=10, help="prototypes per entity (default 10)")
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the audited methods, repeatable (e.g. --param support=20): it applies "
                        "to the methods that declare it; a key none declares is an error")
    g.add_argument("--targets", type=name_list, default=list(DEFAULT_TARGETS),
                   help="synthetic,outlier,typical and/or user:<id> (default synthetic,outlier,typical)")
    g.add_argument("--runs", type=whole_number, default=200, help="releases per class (with / without target; default 200)")
    g.add_argument("--attacks", type=name_list, default=list(DEFAULT_ATTACKS),
                   help=f"{','.join(ATTACK_LABELS)}; a summable method's audit also takes projection,items "
                        f"(default {','.join(DEFAULT_ATTACKS)})")
    g.add_argument("--with-v", action="store_true", help="also attack the server's V (one NMF per run: slower)")
    g.add_argument("--rank", type=positive_whole_number, default=10,
                   help="latent factors of the V attack, ≥ 1 (default 10)")
    g.add_argument("--confidence", type=finite_float, default=0.95, help="Clopper–Pearson confidence (default 0.95)")
    g.add_argument("--seed", type=seed_int, default=0, help="seed, 0 to 2^63 − 1 (default 0)")
    g.add_argument("--out", help="write the JSON audit document here")
    g.add_argument("--dry-run", action="store_true",
                   help="print what the audit would charge to the privacy budget and exit without running it")
    add_store_args(p)
    p.set_defaults(func=cmd_audit)
    return p


def cmd_audit(args) -> int:
    """``python -m dpfed_core audit …``: run :func:`run_audit` with a progress bar, print the
    summary, write ``--out``."""
    from dpfed_core.audit.membership import format_summary, run_audit
    from tqdm import tqdm

    from dpfed_core.evaluation.experiments import write_json

    if args.out is not None:  # fail before the audit's many releases, not after them
        from dpfed_core.data.atomic import check_writable

        check_writable(args.out, suffix=".json")
        from dpfed_core.cli.args import check_outputs

        check_outputs(args, ("--out", args.out))
        from dpfed_core.data.atomic import check_suffix

        check_suffix(args.out, ".json")

    budget_cmd.check_store_path(args)
    dataset = load_dataset(args)
    entity: str | int = args.entity
    if isinstance(entity, str) and entity.isdigit() and entity not in dataset.entity_names:
        entity = int(entity)
    # An audit reads the entity's exact rows: charged (or refused on a capped dataset) before it runs.
    from dpfed_core.evaluation.budget import plan_audit

    from dpfed_core.audit.membership import check_audit_options, is_summable

    # before anything is planned, charged or dry-run
    params = parse_params(args.param, list_params(args.methods))
    check_audit_options(list(dict.fromkeys(args.methods)), args.epsilons, delta=args.delta, k=args.k,
                        prototype_params=params, targets=args.targets, runs=args.runs,
                        attacks=args.attacks, confidence=args.confidence, aggregation=args.aggregation,
                        max_dropouts=args.max_dropouts, others=args.others)
    from dpfed_core.audit.targets import check_target_users

    check_target_users(dataset, entity, args.targets)

    reads_all = args.others == "data" and any(is_summable(m) for m in args.methods)
    plans = plan_audit(dataset, entity, args.methods, args.epsilons, args.delta, seed=args.seed,
                       all_entities=reads_all)
    if args.dry_run:
        code = budget_cmd.dry_run(args, dataset, plans, f"membership audit of entity {args.entity!r} "
                                  f"({', '.join(args.methods)})")
        print(_expected_time(args, dataset, entity, params))
        return code
    odometer, history, key = budget_cmd.open_store(args, dataset, plans)
    reservation_cm = budget_cmd.charge(odometer, dataset, plans, args.allow_non_private, key)
    bar = tqdm(total=None, desc="audit", unit="run", file=sys.stderr, leave=False, disable=None)

    plain = cli_args.PlainProgress("audit") if bar.disable else None  # stderr is no terminal: no bar

    def progress(_event, **info):
        if plain is not None:
            plain.say(f"{info['done']} of {info['total']} runs — {info['method']} ε={info['epsilon']:g}")
            return
        if bar.total is None:
            bar.total = info["total"]
        bar.set_postfix_str(f"{info['method']} ε={info['epsilon']:g}"[:30])
        bar.update(info["done"] - bar.n)

    try:
        with reservation_cm as reservation:
            print(_expected_time(args, dataset, entity, params), flush=True)
            doc = run_audit(dataset, entity, methods=args.methods, epsilons=args.epsilons, delta=args.delta,
                            k=args.k, prototype_params=params, targets=args.targets,
                            runs=args.runs, attacks=args.attacks, with_v=args.with_v, rank=args.rank,
                            confidence=args.confidence, seed=args.seed, aggregation=args.aggregation,
                            max_dropouts=args.max_dropouts, others=args.others,
                            power_factor=args.power_check, progress=progress)
    finally:
        bar.close()
    e = doc["entity"]
    print(f"{dataset.name}, entity {e['name']!r} ({e['n_users']} users): {args.runs} runs per class, "
          f"{args.confidence * 100:g}% Clopper–Pearson, {doc['timings']['total']:.1f} s")
    print(format_summary(doc))
    if any(r["verdict"] == "VIOLATION" for r in doc["summary"]):
        print("WARNING: an empirical ε lower bound exceeds the claimed ε — the mechanism or its "
              "accounting is broken", file=sys.stderr)
    budget_cmd.record_release("audit", doc, odometer, history, key, reservation,
                              show=budget_cmd.budget_show_command(args))
    if args.out is not None:
        write_json(doc, args.out)
        print(f"wrote {args.out}")
    return 0


def _expected_time(args, dataset, entity, params: dict) -> str:
    """"audit: expected time about 2 min (…)": timed on synthetic data of the entity's shape."""
    from dpfed_core.audit.cost import estimate_for_entity, estimate_phrase

    est = estimate_for_entity(dataset, entity, methods=args.methods, epsilons=args.epsilons,
                              n_targets=len(args.targets), runs=args.runs, k=args.k, attacks=args.attacks,
                              with_v=args.with_v, rank=args.rank, delta=args.delta,
                              prototype_params=params, aggregation=args.aggregation,
                              max_dropouts=args.max_dropouts, power_check=args.power_check is not None,
                              target=args.targets[0])
    return f"audit: expected time {estimate_phrase(est, args.runs)}"
