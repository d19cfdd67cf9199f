"""``python -m dpfed_core deploy-local`` (a real local Flower deployment) and ``write-shards``."""
from __future__ import annotations

import argparse
import sys
import time

from dpfed_core.cli import budget_cmd
from dpfed_core.cli.args import (COMMAND_HELP, add_data_args, add_model_args, add_store_args, load_dataset, name_list,
                                 positive_seconds, preflight, run_config, seed_int)

EPILOG = """\
examples:
  # 3 hospitals, each its own Flower SuperNode process; DP popularity through SecAgg+
  python -m dpfed_core deploy-local --data sample:clinic --method dp-popularity --epsilon 1 --out f.json

  # the same federation as `run`, prototypes on the wire (compare with `run --simulation`); every site's
  # policy must allow the labelled simulation mode (allow_simulation = true, docs/DEPLOYMENT.md)
  python -m dpfed_core deploy-local --data sample:synthetic --method kmeans --k 10 --simulation \
      --site-policy lab_sites.toml --out f.json

  # shard files for real sites (one per entity; each site keeps only its own)
  python -m dpfed_core write-shards --data sample:clinic --out-dir shards/

Starts one flower-superlink on 127.0.0.1, one flower-supernode per entity and the ServerApp, runs,
stops every process it started and writes the same result document as `run` (see docs/DEPLOYMENT.md).
Needs Flower: pip install -r requirements-deploy.txt
"""


def register_cli(subparsers) -> None:
    p = subparsers.add_parser("deploy-local", help=COMMAND_HELP["deploy-local"],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    add_data_args(p)
    add_model_args(p)
    g = p.add_argument_group("deployment")
    # --max-dropouts (summable methods) comes with the model arguments (add_model_args), like --aggregation.
    g.add_argument("--round-timeout", type=positive_seconds, default=600.0,
                   help="seconds the server waits for every node's reply in a round (default 600)")
    g.add_argument("--workdir", help="keep logs, shards and Flower's state here (an existing folder keeps its mode: the run gets a private dpfed-run-* folder inside it; default: a temporary directory, removed)")
    g.add_argument("--dump-dir", help="write a copy of every payload the server received here (compliance)")
    g.add_argument("--port-range", metavar="LOW-HIGH",
                   help="ports for the SuperLink and the SuperNodes (needs 1 + entities free ports; "
                        "default: any free ports)")
    g.add_argument("--insecure", action="store_true",
                   help="plain HTTP and no node authentication (default: TLS on every connection with a "
                        "certificate made for the run, and Flower's node authentication); the result says so")
    g.add_argument("--engine", choices=["deployment", "simulation"], default="deployment",
                   help="deployment: one SuperLink and one SuperNode process per entity (default); simulation: "
                        "the same ServerApp/ClientApp under Flower's Simulation Engine (see --sim-backend)")
    g.add_argument("--sim-backend", choices=["inprocess", "ray"],
                   help="with --engine simulation: the backend that runs the ClientApps — inprocess (default: "
                        "Flower's engine with the ClientApps on its worker threads, no Ray) or ray (Flower's "
                        "Ray backend: a Ray cluster and actor processes, from requirements-deploy.txt)")
    g.add_argument("--plugin", action="append", metavar="MODULE",
                   help="import this plug-in module (it registers a method) here and on every node; repeatable; "
                        "adds to $DPFED_PLUGINS (docs/EXTENDING.md)")
    g.add_argument("--site-policy", metavar="FILE",
                   help="every local site's own policy (TOML: methods, max_epsilon, max_delta, "
                        "max_coalition_epsilon, budget_epsilon, budget_delta, store, allow_simulation, "
                        "allow_non_private, max_dropouts, value_bounds, site; docs/DEPLOYMENT.md); "
                        "default: a policy matching this run, without simulation")
    p.add_argument("--out", help="write the JSON result document here")
    add_store_args(p)
    p.set_defaults(func=cmd_deploy_local)

    w = subparsers.add_parser("write-shards", help=COMMAND_HELP["write-shards"])
    add_data_args(w)
    w.add_argument("--seed", type=seed_int, default=0, help="seed of the train/test split (default 0)")
    w.add_argument("--out-dir", required=True, help="directory for entity_000.npz, …")
    w.add_argument("--declared-entities", type=name_list,
                   help="the federation's public entity list (comma-separated), for a site whose data holds "
                        "only its own entity; its shard records its position in this list")
    w.set_defaults(func=cmd_write_shards)


class _NodeProgress:
    """Per-node progress lines on stderr from the ServerApp's events."""

    def __call__(self, ev: dict) -> None:
        event = ev.get("event")
        if event in ("round1_done", "round2_done"):
            print(f"  {event.replace('_', ' ')}: {ev.get('entity')}", file=sys.stderr)
        elif event in ("nodes_connected", "server_done", "secagg_stage", "submitted"):
            extra = ev.get("stage") or ev.get("nodes") or ev.get("run_id") or ""
            print(f"  {event.replace('_', ' ')} {extra}", file=sys.stderr)


def cmd_deploy_local(args) -> int:
    """``deploy-local``: parse, then the run service (:func:`~dpfed_core.evaluation.service.execute_run`:
    validate → plan → charge → split → run → record) with the Flower deployment as its run step."""
    from dpfed_core.deployment.deployed import check_deployable, check_site_policy, deployment_runner
    from dpfed_core.deployment.launcher import free_ports, parse_port_range
    from dpfed_core.deployment.plugins import load_plugins
    from dpfed_core.deployment.simulation_engine import DEFAULT_BACKEND as SIM_DEFAULT_BACKEND
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.experiments import write_json
    from dpfed_core.evaluation.service import execute_run

    t0 = time.perf_counter()
    if args.out is not None:
        from dpfed_core.cli.args import check_outputs
        from dpfed_core.data.atomic import check_suffix, check_writable

        check_writable(args.out, suffix=".json")
        check_outputs(args, ("--out", args.out))
        check_suffix(args.out, ".json")
    # Before the method name is read: a plug-in registers its method on import (and the nodes
    # inherit the list through DPFED_PLUGINS).
    load_plugins(args.plugin or ())
    port_range = parse_port_range(args.port_range) if args.port_range else None
    if args.sim_backend and args.engine != "simulation":
        raise ConfigError(f"--sim-backend {args.sim_backend} applies to --engine simulation only "
                          f"(this is --engine {args.engine})")
    sim_backend = args.sim_backend or SIM_DEFAULT_BACKEND
    budget_cmd.check_store_path(args)
    dataset = load_dataset(args)
    config = run_config(args, dataset)
    preflight(dataset, config)
    deployable, _spec = check_deployable(dataset, config, args.engine, sim_backend)
    import importlib.util

    if importlib.util.find_spec("flwr") is None:  # before anything is charged: no node could start
        raise ConfigError("deploy-local needs Flower, which is not installed: "
                          "`pip install -r requirements-deploy.txt` (nothing was charged)")
    check_site_policy(deployable, args.site_policy, dataset)  # as the sites will see the run
    if port_range is not None and args.engine == "deployment":
        free_ports(1 + dataset.n_entities, port_range)  # before anything is charged or started
    what = (f"Flower's Simulation Engine ({sim_backend} backend)" if args.engine == "simulation"
            else f"a local Flower deployment: 1 SuperLink + {dataset.n_entities} SuperNodes")
    from dpfed_core.evaluation.cost import deployment_estimate

    print(deployment_estimate(dataset, config, args.engine), flush=True)
    print(f"starting {what}", file=sys.stderr)
    runner = deployment_runner(workdir=args.workdir, keep_workdir=bool(args.workdir), progress=_NodeProgress(),
                               round_timeout=args.round_timeout, dump_dir=args.dump_dir, insecure=args.insecure,
                               port_range=port_range, engine=args.engine, sim_backend=sim_backend,
                               site_policy=args.site_policy,
                               on_policy=lambda line: print(line, file=sys.stderr))
    # A deployment is a release: charged to the odometer (or refused) before any node starts.
    outcome = execute_run(dataset, config, store=getattr(args, "store", None),
                          allow_non_private=args.allow_non_private, runner=runner)
    doc = outcome.doc
    if outcome.odometer.get("store"):
        print(budget_cmd.budget_summary_line(budget_cmd.open_odometer(args), outcome.odometer["dataset_key"],
                                             budget_cmd.budget_show_command(args), run_delta=config.delta))
    else:
        print("budget: nothing released, or a simulation (no privacy claim) — not charged, no store opened")
    dep = doc["deployment"]
    print(f"{dataset.name}: {dataset.n_entities} SuperNodes — {doc['privacy']['label']}")
    from dpfed_core.cli.main import print_run_statement

    print_run_statement(doc)  # as ``run`` prints it
    print(f"{dep['n_messages']} Flower messages, {dep['bytes_on_wire']} bytes on the wire, "
          f"{dep['wall_seconds']:.1f} s; {dep['transport']}")
    for d in dep.get("site_decisions") or []:
        print(f"site {d['entity']!r}: {d['decision']}" + (f" (rule {d['rule']})" if d["rule"] else ""))
    print(f"evaluation: {dep['evaluation_source']}")
    o = doc["overall"]
    n = config.top_n
    print(f"mar {o['mar']:.4f}  test_rmse {o['test_rmse']:.4f}  precision@{n} {o[f'precision_at_{n}']:.4f}")
    if args.out is not None:
        write_json(doc, args.out)
        print(f"wrote {args.out} ({time.perf_counter() - t0:.1f} s)")
    return 0


def _check_out_dir(out_dir) -> None:
    """Before the data are read: --out-dir (or the nearest of its folders that exists) must be a folder —
    a file there would stop the write after the whole load, with no word of the flag."""
    from pathlib import Path

    from dpfed_core.errors import ConfigError

    p = Path(out_dir).expanduser()
    there = next((q for q in (p, *p.parents) if q.exists()), None)
    if there is not None and not there.is_dir():
        where = "" if there == p else f" (its folder {there} is a file)"
        raise ConfigError(f"--out-dir {p} is not a folder{where}; give a folder for the shard files (a new one is "
                          "created)")


def cmd_write_shards(args) -> int:
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.errors import ConfigError, DataError

    from dpfed_core.cli.args import check_outputs

    check_outputs(args, ("--out-dir", args.out_dir))  # shards never overwrite an input
    _check_out_dir(args.out_dir)
    declared = args.declared_entities
    # A site's own export names its one entity: the declared list is the federation it is read in (a
    # federation of one entity is no federation), and only the entities the export holds get a shard.
    by_list = declared is not None and args.entities is None and not args.entities_from_data
    try:
        # a site's rows left out of its own shard would be a silent loss (its name misspelt in the list): refused
        dataset = load_dataset(args, entities=declared if by_list else None,
                               undeclared_entities="error" if by_list else "drop")
    except DataError as exc:
        if by_list and exc.param == "entities":
            import re

            # the loader's advice on the layout of an --entities file; --declared-entities is a comma-separated list
            said = re.sub(r" \(one name per line[^)]*\)", "", str(exc)).rstrip(".")
            raise ConfigError(f"{said}; fix --declared-entities "
                              "(the federation's entity names, as the export's entity column writes them; "
                              "nothing was written)") from None
        raise
    split = make_split(dataset, RunConfig(seed=args.seed))
    held = None
    if by_list:
        held = [n for n, sl in zip(dataset.entity_names, dataset.entity_slices()) if sl.stop > sl.start]
    paths = write_shards(dataset, split, args.out_dir, declared=declared, only=held)
    for name, p in zip(held if held is not None else dataset.entity_names, paths):
        print(f"{name}: {p}")
    from dpfed_core.deployment.shards import other_shards

    others, foreign = other_shards(args.out_dir, paths, str(dataset.name),
                                   len(declared) if declared is not None else dataset.n_entities)
    if others:
        names = ", ".join(q.name for q in others[:4]) + (" …" if len(others) > 4 else "")
        whose = (f"; {foreign} of them from another export (other data or another number of entities): a SuperNode "
                 "given one reads that export, not this one — remove them or write into an empty --out-dir"
                 if foreign else " (this federation's other entities, as an earlier export wrote them)")
        print(f"note: --out-dir {args.out_dir} also holds {len(others)} shard file(s) this export did not write "
              f"({names}){whose}", file=sys.stderr)
    return 0
