"""Command line: ``python -m dpfed_core {run,sweep,methods,audit,report,budget} …``.

Every bad input ends with a one-line ``error: …`` on stderr and exit status 2 (never a traceback).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Callable, Sequence

from dpfed_core.cli import args as cli_args
from dpfed_core.cli.args import (CLI_NAMES, COMMAND_HELP, add_data_args, add_model_args, add_store_args, check_outputs,
                                 float_list, load_dataset, name_list, preflight, run_config, seed_list)
from dpfed_core.config import DEFAULT_SWEEP_EPSILONS, RunConfig
from dpfed_core.errors import ConfigError, DeploymentError, DpfedError, render_message


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``error: …`` line (exit 2) like every other error."""

    def error(self, message: str):  # type: ignore[override]
        import re

        bare = re.fullmatch(r"argument (--[\w-]+)(?:/-\w)?: expected one argument", message)
        if bare:
            # the value may be there but start with '-' (a column named '--user-col', a name '-A'): argparse
            # takes such a token for a flag, and only the attached form reads it as the value
            message += (f": give its value after it; a value that starts with '-' is written attached, "
                        f"{bare.group(1)}=VALUE")
        raise ConfigError(f"{message} (see `{self.prog} --help`)")

#: The sweep's references: the one list (evaluation.experiments).
from dpfed_core.evaluation.experiments import DEFAULT_REFERENCES  # noqa: E402

EPILOG_RUN = """\
examples:
  # one federation on the bundled synthetic sample (non-private k-means prototypes)
  python -m dpfed_core run --data sample:synthetic --method kmeans --k 10 --out r.json

  # the clinic sample, DP co-occurrence (the measured-best DP method) with secure aggregation at ε = 1,
  # next to the DP popularity list and the entities on their own
  python -m dpfed_core run --data sample:clinic --method dp-cooccurrence --aggregation secure \
      --epsilon 1 --compare individual,dp-popularity,popularity --out r.json

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


class _Sink:
    """Stands in for the parser of a command that is not being run: every call is accepted and
    ignored, so ``python -m dpfed_core methods`` does not pay for argparse building every flag of
    every other command."""

    def __getattr__(self, name):
        return lambda *a, **k: self


class _OnlyWanted:
    """The sub-command registry, building in full only the command being run (``wanted``; None =
    all, e.g. for ``--help``); the others keep their one-line help in the command list."""

    def __init__(self, sub, wanted: str | None) -> None:
        self.sub, self.wanted = sub, wanted

    def add_parser(self, name: str, **kwargs):
        if self.wanted is None or name == self.wanted:
            return self.sub.add_parser(name, **kwargs)
        self.sub.add_parser(name, help=kwargs.get("help"))
        return _Sink()


COMMANDS = ("run", "sweep", "methods", "audit", "report", "deploy-local", "write-shards", "budget", "site")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; ``command`` (the first word of the command line, if it names one)
    builds only that command's flags in full."""
    parser = _Parser(
        prog="python -m dpfed_core",
        description="Federated recommendation with differentially private prototypes (Ribero et al. 2020).",
    )
    sub = _OnlyWanted(parser.add_subparsers(dest="command", required=True),
                      command if command in COMMANDS else None)

    run = sub.add_parser("run", help="one federation run, evaluated on a held-out split",
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG_RUN)
    add_data_args(run)
    add_model_args(run)
    run.add_argument("--compare", type=name_list, default=[],
                     help="also run these methods on the same split, e.g. central,individual,random-v,popularity")
    run.add_argument("--out", help="write the JSON result document here")
    run.add_argument("--dry-run", action="store_true",
                     help="print what this would charge to the privacy budget (per entity, against the cap) and "
                          "exit without computing or charging anything")
    add_store_args(run)

    sw = sub.add_parser("sweep", help="privacy–utility sweep over an ε grid and several seeds",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog="example:\n  python -m dpfed_core sweep --data sample:clinic --method dp-cooccurrence "
                               "--aggregation secure --epsilons 0.1,1,10,inf --seeds 0,1,2 --out sweep.json\n")
    add_data_args(sw)
    add_model_args(sw)
    sw.add_argument("--epsilons", type=float_list, default=None,
                    help="comma-separated ε grid, inf allowed (default 0.1,0.3,1,3,10,inf)")
    sw.add_argument("--seeds", type=seed_list, default=[0, 1, 2],
                    help="comma-separated seeds, each from 0 to 2^63 − 1 (default 0,1,2)")
    sw.add_argument("--references", type=name_list, default=list(DEFAULT_REFERENCES),
                    help="reference methods (default " + ",".join(DEFAULT_REFERENCES) + "); DP references "
                         "(dp-popularity) run at every ε of the grid with the same trust model")
    sw.add_argument("--metric", default="mar",
                    help="metric for the crossing ε (default mar): mar, test_rmse, train_rmse, precision_at_N, "
                         "recall_at_N, ndcg_at_N (N = --top-n); RMSE crossings are reported in observed mode only")
    sw.add_argument("--out", help="write the JSON sweep document here; while the sweep runs it holds the finished "
                                  "points (\"complete\": false), rewritten atomically after each")
    sw.add_argument("--resume", metavar="FILE",
                    help="continue a killed sweep from its partial --out file: finished points are kept, the rest "
                         "computed (same flags required); writes to --out, or back to FILE without --out")
    sw.add_argument("--dry-run", action="store_true",
                    help="print what the sweep would charge to the privacy budget (all points, composed) and exit "
                         "without computing or charging anything")
    add_store_args(sw)

    mp = sub.add_parser("methods", help="list the available methods and their privacy models")
    mp.add_argument("--params", action="store_true",
                    help="also list each method's declared parameters (set them with --param NAME=VALUE)")
    for module, names in _COMMAND_MODULES.items():
        if sub.wanted is None or sub.wanted in names:
            _command_module(module).register_cli(sub)
        else:  # listed with its one-line help; its module (and what it imports) is not loaded
            for name in names:
                sub.add_parser(name, help=COMMAND_HELP[name])
    return parser


#: The commands whose flags and code live in their own module, loaded only when run (or for --help).
_COMMAND_MODULES = {"audit_cmd": ("audit",), "report_cmd": ("report",),
                    "deploy_cmd": ("deploy-local", "write-shards"), "budget_cmd": ("budget",), "site_cmd": ("site",)}


def _command_module(name: str):
    import importlib

    return importlib.import_module(f"dpfed_core.cli.{name}")


class _Bar:
    """The run's progress on stderr: a bar over the predicted work (the cost model of
    :mod:`dpfed_core.evaluation.cost`), the stage being worked on and the time left."""

    def __init__(self, clock, desc: str) -> None:
        from tqdm import tqdm  # deferred: `methods` and `--help` need no progress bar

        from dpfed_core.evaluation.cost import estimate_with_load, speed_note

        self.clock, self.t0 = clock, time.perf_counter()
        # the prediction is an output line (stdout, before any work); the live bar is drawn on stderr
        scaled = speed_note() if clock.total is not None else ""
        print(f"{desc}: {estimate_with_load(clock.total)}; predicted for {len(clock.plan)} run"
              f"{'s' if len(clock.plan) != 1 else ''} on these data (measured cost model"
              f"{'; ' + scaled if scaled else ''})", flush=True)
        self.bar = tqdm(total=1000, desc=desc, file=sys.stderr, leave=False, disable=None,
                        bar_format="{percentage:3.0f}%|{bar}| {desc}")
        # stderr that is no terminal (a log, CI, a pipe) gets no bar: a plain line every few seconds instead
        self.plain = cli_args.PlainProgress(desc) if self.bar.disable else None

    def __call__(self, event: str, **info) -> None:
        self.clock.event(event, **info)
        frac = self.clock.fraction()
        if frac is not None:
            self.bar.n = int(frac * 1000)
        text = self.clock.text(time.perf_counter() - self.t0)
        if self.plain is not None:
            self.plain.say(("" if frac is None else f"{100 * frac:.0f}% — ") + text)
            return
        self.bar.set_description_str(text, refresh=True)

    def close(self) -> None:
        self.bar.close()


def _clock(dataset, configs):
    from dpfed_core.evaluation.cost import clock_for_runs, run_shapes

    return clock_for_runs(run_shapes(dataset, configs), configs)


#: The ε grid of ``sweep`` without ``--epsilons``: the dashboard's Trade-off default too.
SWEEP_EPSILONS = DEFAULT_SWEEP_EPSILONS


def _print_table(docs: dict[str, dict], n: int) -> None:
    keys = ["mar", "test_rmse", "train_rmse", f"precision_at_{n}", f"recall_at_{n}", f"ndcg_at_{n}"]
    print(f"{'method':16s} {'ε':>8s} " + " ".join(f"{k:>15s}" for k in keys))
    from dpfed_core.evaluation.verdicts import format_epsilon

    for name, doc in docs.items():
        eps = doc["privacy"]["epsilon"]
        # rounded up as every other ε the product states: a figure below what holds would overstate privacy
        print(f"{name:16s} {format_epsilon(eps):>8s} " + " ".join(_metric_cell(doc["overall"][k]) for k in keys))


def _metric_cell(value: float | None) -> str:
    """A metric in the run's table: four decimals, or — when undefined (no test user measured it), as the
    sweep's table and the report say it."""
    defined = isinstance(value, (int, float)) and math.isfinite(value)
    return f"{value:>15.4f}" if defined else f"{'—':>15s}"


def _print_trust_note(method: str, aggregation: str, methods) -> None:
    from dpfed_core.evaluation.defaults import trust_model_note
    from dpfed_core.federation.protocol import is_summable

    note = trust_model_note(method, aggregation, methods)
    if note:
        print(f"note: {note}" + (" (--aggregation)" if is_summable(method) else ""))


def _known_metrics(top_n: int) -> list[str]:
    return ["mar", "test_rmse", "train_rmse", f"precision_at_{top_n}", f"recall_at_{top_n}", f"ndcg_at_{top_n}"]


def _k_note(config) -> str | None:
    """A method with an automatic k treats --k as a maximum: say so (the Federate page's rule)."""
    from dpfed_core.evaluation.defaults import automatic_k_size

    cs = automatic_k_size(config)
    if cs is None:
        return None
    return (f"{config.method} treats --k {config.k} as a maximum: each entity uses k = clip(⌊n̂ / {cs:g}⌋, 1, "
            f"{config.k}) from its released noisy size n̂ (automatic k); --param cluster_size=none uses k exactly")


def cmd_run(args) -> int:
    """``run``: parse, call the run service (:func:`~dpfed_core.evaluation.service.execute_run`), print."""
    from dpfed_core.cli import budget_cmd
    from dpfed_core.data.atomic import check_suffix, check_writable
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.evaluation.experiments import write_json
    from dpfed_core.evaluation.service import execute_run

    t0 = time.perf_counter()
    if args.out is not None:
        check_writable(args.out, suffix=".json")
        check_outputs(args, ("--out", args.out))
        check_suffix(args.out, ".json")
    budget_cmd.check_store_path(args)
    dataset = load_dataset(args)
    config = run_config(args, dataset)
    if config.method in args.compare:
        # the run service runs a method once: the time hint and the dry run count it once too
        args.compare = [m for m in args.compare if m != config.method]
        print(f"note: --compare names the --method {config.method} itself: it runs once", file=sys.stderr)
    preflight(dataset, config, args.compare)
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue

    forecast = forecast_catalogue(dataset, config)
    if forecast is not None:  # said before anything is computed or charged
        print(f"catalogue: {render_message(forecast.text(), CLI_NAMES)}", file=sys.stderr)
    from dpfed_core.evaluation.service import no_test_users_warning

    untested = no_test_users_warning(dataset, config)
    if untested:
        print(f"warning: {render_message(untested, CLI_NAMES)}", file=sys.stderr)
    if args.dry_run:
        return budget_cmd.dry_run(args, dataset, plan_run(dataset, config, args.compare),
                                  f"run of {config.method}"
                                  + (f" compared with {', '.join(args.compare)}" if args.compare else ""))
    budget_cmd.note_store(args, dataset)
    bar = _Bar(_clock(dataset, [config] + [config.replace(method=m) for m in args.compare]), f"run {config.method}")
    try:
        outcome = execute_run(dataset, config, compare=args.compare, store=getattr(args, "store", None),
                              allow_non_private=args.allow_non_private, progress=bar)
    finally:
        bar.close()
    doc = outcome.doc
    note = _k_note(config)
    if note:
        doc.setdefault("notes", []).append(note)
    print(f"{dataset.name}: {dataset.n_users} users × {dataset.items_phrase()} in {dataset.n_entities} entities"
          f" — values: {dataset.value_kind} (bound {dataset.value_max:g}), mode {config.mode}"
          f" — {doc['privacy']['label']}")
    print_run_statement(doc)
    _print_table({config.method: doc, **outcome.comparison}, config.top_n)
    from dpfed_core.evaluation.defaults import observed_ranking_note

    ranking = observed_ranking_note({config.method: doc, **outcome.comparison}, config.mode, "--mode zero")
    if ranking:
        print(f"note: {ranking}")
    _print_trust_note(config.method, config.aggregation, [config.method, *outcome.comparison])
    from dpfed_core.evaluation.verdicts import VERDICT_BASELINES, entity_verdict, verdict_sentence

    if any(b in outcome.comparison for b in VERDICT_BASELINES) and config.method not in VERDICT_BASELINES:
        # the sentence the dashboard's Evaluate page and the report show (evaluation/verdicts.py)
        print("verdict: " + verdict_sentence(entity_verdict({config.method: doc, **outcome.comparison},
                                                            config.method, "mar")))
    if outcome.odometer.get("store"):
        print(budget_cmd.budget_summary_line(budget_cmd.open_odometer(args), outcome.odometer["dataset_key"],
                                             budget_cmd.budget_show_command(args), run_delta=config.delta))
    else:
        print("budget: nothing released, or a simulation (no privacy claim) — not charged, no store opened")
    if args.out is not None:
        write_json(doc, args.out)
        print(f"wrote {args.out} ({time.perf_counter() - t0:.1f} s)")
    return 0


def check_sweep_args(args: argparse.Namespace) -> None:
    """``sweep``'s own flags, checked before the data is read: ``--epsilons`` (the default grid when left
    out), ``--seeds`` and ``--metric``."""
    from dpfed_core.evaluation.experiments import check_grid

    # a grid given to a method that spends no ε is refused by name (check_unused_flags), never ignored
    args.epsilons_given = args.epsilons is not None
    if args.epsilons is None:
        args.epsilons = list(SWEEP_EPSILONS)
    check_grid(args.epsilons, "--epsilons")
    check_grid(args.seeds, "--seeds")
    top_n = args.top_n if args.top_n is not None else RunConfig().top_n  # --top-n left out: the default N
    if args.metric not in _known_metrics(top_n):
        raise ConfigError(f"--metric {args.metric!r} is not a metric; choose one of "
                          f"{', '.join(_known_metrics(top_n))}", param="metric")


def sweep_config(args: argparse.Namespace, dataset) -> RunConfig:
    """The run settings every point of the sweep starts from (each point sets its own ε and seed):
    the flags, a flag left out taking the dashboard's default, and without ``--mode`` the mode a sweep
    on ``--metric`` runs in (:func:`~dpfed_core.evaluation.defaults.sweep_mode`)."""
    from dpfed_core.evaluation.defaults import sweep_mode

    args.mode = sweep_mode(args.mode, args.metric)  # stated in every crossing line
    return run_config(args, dataset)


def cmd_sweep(args) -> int:
    """``sweep``: parse, call the run service (:func:`~dpfed_core.evaluation.service.execute_sweep`), print."""
    from dpfed_core.cli import budget_cmd
    from dpfed_core.data.atomic import check_suffix, check_writable
    from dpfed_core.evaluation.budget import plan_sweep
    from dpfed_core.evaluation.experiments import RMSE_METRICS, write_json
    from dpfed_core.evaluation.service import execute_sweep

    out = args.out or args.resume
    if out:
        check_writable(out, "--out" if args.out else "--resume", suffix=".json")
        # a sweep document is a checkpoint: --resume FILE is meant to be rewritten (with or without
        # --out naming it); every other input is protected
        check_outputs(args, ("--out" if args.out else "--resume", out), rewritable=("--resume",))
        check_suffix(out, ".json", "--out" if args.out else "--resume")
    check_sweep_args(args)
    previous = None
    if args.resume:
        from dpfed_core.data.inputs import read_json_document

        # bounded, regular files only, nesting checked: never a hang or a RecursionError
        previous = read_json_document(args.resume, what="--resume", param="resume")
        if not isinstance(previous, dict):
            raise ConfigError(f"--resume {args.resume} is not a sweep document (a JSON object written by "
                              "`sweep --out`)", param="resume")
    budget_cmd.check_store_path(args)
    dataset = load_dataset(args)
    from dpfed_core.evaluation.defaults import sweep_mode

    zero_by_default = args.mode is None and sweep_mode(None, args.metric) == "zero"
    config = sweep_config(args, dataset)
    preflight(dataset, config, args.references, "references")
    from dpfed_core.evaluation.service import resumed_points

    done = resumed_points(previous, dataset, config, args.epsilons, args.seeds, args.references,
                          getattr(args, "store", None))
    plans = plan_sweep(dataset, config, args.epsilons, args.seeds, args.references, done=done)
    from dpfed_core.evaluation.service import no_test_users_warning

    # every point of such a sweep is charged and none has a metric to compare: said before it is charged
    untested = no_test_users_warning(dataset, config)
    if untested:
        print(f"warning: {render_message(untested, CLI_NAMES)}", file=sys.stderr)
    if args.resume and not plans:
        raise ConfigError(f"--resume {args.resume} already holds every point of this sweep: nothing to compute and "
                          "nothing charged; to run it again, start a new sweep with another --out", param="resume")
    if args.dry_run:
        return budget_cmd.dry_run(args, dataset, plans, f"sweep of {config.method} over ε ∈ "
                                  f"{{{', '.join(f'{e:g}' for e in args.epsilons)}}} × seeds "
                                  f"{{{', '.join(map(str, args.seeds))}}} with {', '.join(args.references) or 'no references'}")
    from dpfed_core.evaluation.cost import sweep_configs

    budget_cmd.note_store(args, dataset)
    # the time is the points still to compute: a resumed document's are kept, not run again
    bar = _Bar(_clock(dataset, sweep_configs(config, args.epsilons, args.seeds, args.references, done)),
               f"sweep {config.method}")
    checkpoint = (lambda partial: write_json(partial, out)) if out else None
    try:
        # every point still to compute charged at its requested (ε, δ) before any is computed (the
        # points a resumed document holds were charged by the sweep that computed them)
        outcome = execute_sweep(dataset, config, args.epsilons, args.seeds, args.references,
                                store=getattr(args, "store", None), allow_non_private=args.allow_non_private,
                                progress=bar, checkpoint=checkpoint, resume=previous,
                                metrics=[args.metric, "mar", "test_rmse"])
    finally:
        bar.close()
    doc = outcome.doc
    note = _k_note(config)
    if note:
        doc.setdefault("notes", []).append(note)
    for n in doc.get("notes", []):
        print(f"note: {render_message(n, CLI_NAMES)}")
    from dpfed_core.evaluation.verdicts import unproved_sweep_text

    unproved = unproved_sweep_text(doc)
    if unproved:
        print(f"warning: {unproved}")
    # the mode decides what a metric measures: a sweep on a ranking metric runs in zero mode where `run`
    # defaults to observed on ratings, so the same method reads differently — said above the table
    print(f"{args.metric} over seeds {', '.join(map(str, args.seeds))}, {config.mode} mode"
          + (" (a ranking metric's default; `run` uses observed on ratings: --mode observed to compare)"
             if zero_by_default and dataset.value_kind == "ratings" else ""))
    print(f"{'method':16s} {'ε':>8s} {args.metric + ' mean':>14s} {'sd':>8s}")
    for r in doc["tables"][args.metric]:
        sd = f"{r['sd']:>8.4f}" if r["sd"] is not None and math.isfinite(r["sd"]) else f"{'—':>8s}"  # one seed: no sd
        print(f"{r['method']:16s} {r['epsilon']:>8.3g} {r['mean']:>14.4f} {sd}")
    if args.metric not in RMSE_METRICS:
        from dpfed_core.evaluation.defaults import observed_ranking_note

        # the worst MAR of the table names the model that ranks worst; another ranking metric names none
        ranked = {r["method"]: {"overall": {"mar": r["mean"] if args.metric == "mar" else math.nan}}
                  for r in doc["tables"][args.metric]}
        ranking = observed_ranking_note(ranked, config.mode, "--mode zero")
        if ranking:
            print(f"note: {ranking}")
    _print_trust_note(config.method, config.aggregation, [config.method, *doc["references"]])
    from dpfed_core.evaluation.verdicts import VERDICT_BASELINES, crossing_lines

    if any(b in doc["references"] for b in VERDICT_BASELINES):
        # the sentences the dashboard's Trade-off page and the report show (evaluation/verdicts.py)
        for line in crossing_lines(doc, args.metric):
            print(f"crossing: {render_message(line, CLI_NAMES)}")  # a setting named by its flag
    for row in doc.get("versus_dp_popularity", {}).get(args.metric, []):
        if row["verdict"] != "beats dp-popularity":
            # A DP method that does not beat the one-line DP popularity list must say so.
            print(f"ε = {row['epsilon']:g}: {config.method} {row['verdict']} "
                  f"({row['mean']:.4f} vs {row['dp_popularity_mean']:.4f})")
    if outcome.odometer.get("store"):
        print(budget_cmd.budget_summary_line(budget_cmd.open_odometer(args), outcome.odometer["dataset_key"],
                                             budget_cmd.budget_show_command(args), run_delta=config.delta))
    else:
        print("budget: nothing released, or a simulation (no privacy claim) — not charged, no store opened")
    if out:
        write_json(doc, out)
        print(f"wrote {out}")
    return 0


def cmd_methods(args) -> int:
    """Every method, its privacy model and description; with ``--params`` also its declared
    parameters (``--param NAME=VALUE``: allowed values, default, one-line doc)."""
    from dpfed_core.methods import METHODS, available_methods

    for name in available_methods():
        spec = METHODS[name]
        print(f"{name:16s} [{spec.privacy_model.label}] {spec.description}")
        if getattr(args, "params", False):
            if spec.detail:
                print(f"{'':16s} privacy: {spec.privacy}")
            for p in spec.parameters:
                print(f"{'':16s} --param {p.name}=…  {p.describe()}, default {p.default}: {p.doc}")
    return 0


def print_run_statement(doc: dict) -> None:
    """A run's trust model, notes and warnings, the same lines for ``run`` and ``deploy-local``: a run
    that learned nothing never reads as a success."""
    if doc["privacy"].get("trust"):
        from dpfed_core.reporting.report_sections import trust_text

        # the report's words: a simulation states no ε, its seeded noise protects no one
        print(f"trust model: {trust_text(doc['privacy'])}")
    for note in doc.get("notes", []):
        print(f"note: {render_message(note, CLI_NAMES)}")  # the engine's parameter names as flags
    for w in doc["privacy"].get("warnings") or []:  # what the guarantee rests on, as the dashboard says it
        print(f"warning: {render_message(w, CLI_NAMES)}")
    for w in doc.get("warnings", []):
        print(f"warning: {render_error(ConfigError(w['text'], param=w.get('param')))}")
    from dpfed_core.reporting.paper import paper_differences_text

    print(f"settings: {paper_differences_text(doc['config'], doc)}")  # as the Evaluate page and the report say it

def render_error(exc: BaseException) -> str:
    """One line naming CLI flags instead of Python parameter names (see :mod:`dpfed_core.errors`)."""
    if isinstance(exc, DpfedError):
        names = CLI_NAMES
        if isinstance(exc, DeploymentError):
            from dpfed_core.deployment.site_policy import policy_names_kept

            # a deployment's error carries the sites' refusals as text: their rules and policy keys are
            # written as in the policy file, never as this command's flags
            names = policy_names_kept(CLI_NAMES)
        text = exc.render(names)  # BudgetRefused fills its own fixes with the CLI's flags
        flag = CLI_NAMES.get(exc.param or "")
        if flag and flag.split()[0] not in text:
            text += f" [{flag}]"
        return text
    return " ".join(str(exc).split())


def _negative_values_attached(argv: list[str]) -> list[str]:
    """``--epsilons -1,3`` as ``--epsilons=-1,3``: argparse takes a value that starts with a minus and is
    not a plain number for another flag ("expected one argument"), so the value's own check — which names
    what is wrong with it — never ran. Only a token after a ``--flag`` that reads as numbers is attached."""
    import re

    out: list[str] = []
    for tok in argv:
        if (out and out[-1].startswith("--") and "=" not in out[-1]
                and re.fullmatch(r"-[\d.][\d.,eE+\-infa]*", tok)):
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit status: 0 success, 2 any error (one ``error: …`` line on stderr, never
    a traceback), 130 interrupted (Ctrl-C, or SIGTERM: a terminated command unwinds as an interrupted one,
    so a charged release is closed as failed, its processes stopped and no output half-written)."""
    restore = _terminate_as_interrupt()
    args = None
    try:
        argv = _negative_values_attached(list(sys.argv[1:] if argv is None else argv))
        parser = build_parser(argv[0] if argv else None)
        args = parser.parse_args(argv)
        commands = {"run": cmd_run, "sweep": cmd_sweep, "methods": cmd_methods,
                    "audit": lambda a: _command_module("audit_cmd").cmd_audit(a),
                    "report": lambda a: _command_module("report_cmd").cmd_report(a),
                    "deploy-local": lambda a: _command_module("deploy_cmd").cmd_deploy_local(a),
                    "write-shards": lambda a: _command_module("deploy_cmd").cmd_write_shards(a),
                    "budget": lambda a: _command_module("budget_cmd").cmd_budget(a),
                    "site": lambda a: _command_module("site_cmd").cmd_site(a)}
        return commands[args.command](args)
    except DpfedError as exc:
        print(f"error: {render_error(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        show = "python -m dpfed_core budget show --data …"
        if getattr(args, "data", None) is not None:
            show = _command_module("budget_cmd").budget_show_command(args)
        print("interrupted: nothing more is computed; a release already charged stays charged, marked failed "
              f"(`{show}` lists it)", file=sys.stderr)
        return 130
    except MemoryError:
        print("error: out of memory; use a smaller dataset, --rank or --k", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"error: could not read or write{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print("error: an input is nested too deeply to read (a JSON document or list); check the files given "
              "to --resume, --run, --sweep, --audit", file=sys.stderr)
        return 2
    except Exception as exc:  # the CLI boundary: whatever slipped through validation, one line
        print(f"error: internal error {type(exc).__name__}: {render_error(exc)} — a bug in dpfed, not in your "
              "input; please report it with the command line that caused it", file=sys.stderr)
        return 2
    finally:
        restore()
        _stop_workers()


def _terminate_as_interrupt() -> Callable[[], None]:
    """SIGTERM raises KeyboardInterrupt in the main thread for the command's duration (Python's default
    ends the process on the spot: a charged release left 'reserved', the deployment's processes and an
    output file to whoever finds them); returns what puts the previous handler back."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    return lambda: signal.signal(signal.SIGTERM, previous)


def _stop_workers() -> None:
    """Worker processes die with the run (--param n_jobs workers outlived the command):
    joblib's reusable process pool is shut down, killing its workers, whatever ended the command."""
    mod = sys.modules.get("joblib.externals.loky")
    if mod is None:
        return
    try:
        mod.get_reusable_executor().shutdown(wait=False, kill_workers=True)
    except Exception:  # nothing to stop, or the pool is already gone
        pass
