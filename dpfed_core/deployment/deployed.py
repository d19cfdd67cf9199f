"""A run on a real local Flower deployment, with the same result document as :func:`run_method`.

:func:`run_deployed` splits the data exactly as an in-process run with the same seed, writes one
shard per entity, starts a :class:`~dpfed_core.deployment.LocalFederation` (one SuperLink,
one SuperNode process per entity, the ServerApp), runs the method there and stops every process.
The document's ``messages`` are the messages Flower actually carried, with their serialised sizes;
``entities``/``overall`` are pooled from the sums each node computed on its own test entries and
wrote to its own disk — read here from the nodes' local reports (deploy-local's operator holds every
shard), never sent to the server.
"""
from __future__ import annotations

import inspect
import math
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import (declare_public_inputs, learned_nothing_warnings, make_split,
                                              privacy_summary, result_document)
from dpfed_core.evaluation.catalogue_run import (EMPTY_CATALOGUE_OWN_NOTE, EMPTY_CATALOGUE_ZERO_NOTE, OWN_ITEMS_NOTE,
                                                coalition_with_catalogue, keeps_own_items, needs_dp_catalogue,
                                                secure_catalogue_note, uses_federation_catalogue)
from dpfed_core.evaluation.partial import combine_statistics
from dpfed_core.deployment.launcher import DeploymentError, Guard, LocalFederation
from dpfed_core.deployment.shards import write_item_features, write_shards
from dpfed_core.deployment.simulation_engine import DEFAULT_BACKEND as SIM_DEFAULT_BACKEND, SimulatedFederation
from dpfed_core.deployment.wire import run_json
from dpfed_core.federation.prototypes import PROTOTYPE_METHODS
from dpfed_core.federation.summable import SUMMABLE_METHODS
from dpfed_core.methods import MethodResult, get_method
from dpfed_core.privacy.ledger import PrivacyLedger


#: The engines of ``deploy-local --engine``.
ENGINES = ("deployment", "simulation")


def deployable_methods() -> list[str]:
    """Methods that run as a deployment: every prototype method and every summable method."""
    return sorted([*PROTOTYPE_METHODS, *SUMMABLE_METHODS])


def run_deployed(
    dataset: FederatedDataset,
    config: RunConfig,
    *,
    workdir: str | Path | None = None,
    keep_workdir: bool = False,
    progress: Callable[[dict], None] | None = None,
    round_timeout: float = 600.0,
    timeout: float = 3600.0,
    dump_dir: str | Path | None = None,
    federation: LocalFederation | None = None,
    return_model: bool | str = False,
    insecure: bool = False,
    port_range: tuple[int, int] | None = None,
    engine: str = "deployment",
    split=None,
    sim_backend: str = SIM_DEFAULT_BACKEND,
    site_policy: str | Path | None = None,
    on_policy: Callable[[str], None] | None = None,
):
    """Run ``config.method`` on a local Flower deployment and return the result document.

    ``federation``: an already started federation whose SuperNodes serve this dataset's shards
    (for several runs on one deployment); otherwise one is started and stopped here.
    ``return_model``: return ``(doc, V)`` (the item factors the server broadcast) instead of ``doc``;
    ``"result"``: ``(doc, MethodResult)`` (V and the run's ledger; no U leaves a node).
    ``insecure``: plain HTTP, no node authentication (said in the document). ``port_range``: ports
    for the SuperLink and the SuperNodes (``--port-range``). ``engine``: ``"deployment"`` (one
    SuperLink and one SuperNode process per entity) or ``"simulation"`` (the same ServerApp and
    ClientApp under Flower's Simulation Engine, :mod:`.simulation_engine`, with ``sim_backend``
    ``"inprocess"`` or ``"ray"``, ``--sim-backend``). ``split``: the run's
    train/test split (default: :func:`make_split` of ``config``, as an in-process run makes it).
    ``site_policy``: the policy file every site is given (``--site-policy``); without it a policy
    matching this run's request (never simulation) is written for the sites, in the run's private
    folder, and ``on_policy`` is told so. A simulation run needs a given policy that allows it.
    """
    config, spec = check_deployable(dataset, config, engine, sim_backend)
    if not (math.isfinite(round_timeout) and round_timeout > 0):
        # checked before anything starts: a server that waited nan or −5 s would never give up, or give
        # up before any node answered, after the whole deployment had been started for nothing
        raise ConfigError(f"round_timeout must be a number of seconds > 0, got {round_timeout!r}",
                          param="round_timeout")
    if federation is None:
        check_site_policy(config, site_policy, dataset)
    t0 = time.perf_counter()
    split = make_split(dataset, config) if split is None else split
    t_split = time.perf_counter() - t0

    owned = federation is None
    guard = None
    catalogue = "secure" if needs_dp_catalogue(dataset, spec.privacy_model.user_level, config) else "declared"
    # the run's public JSON, as every message repeats it (a declared catalogue's size is public)
    # the size is written for a declared catalogue only: its own, never the data's items outside it
    run = run_json(config, catalogue, dataset.n_items if dataset.shared_columns is None else dataset.n_declared)
    if owned:
        t0 = time.perf_counter()
        if workdir is None:
            # Shard copies are private data: a 0700 folder that the launcher, or its watchdog if the
            # launcher is killed, removes on every exit path.
            guard = Guard()
            base = guard.path
        else:
            from dpfed_core.deployment.launcher import private_run_dir

            base = private_run_dir(workdir)  # kept, as asked; an existing folder keeps its mode
        shards = write_shards(dataset, split, base / "shards")
        os.chmod(base / "shards", 0o700)
        if site_policy is None:
            from dpfed_core.deployment.site_policy import policy_matching, write_policy

            site_policy = write_policy(base / "site_policy.toml",
                                       **policy_matching(config, base / "site_stores" / "{site}.sqlite3"))
            if on_policy is not None:
                on_policy(f"no --site-policy given: every site got a policy matching this run ({site_policy}: "
                          f"method {config.method}, at most ε = {config.epsilon:g} per run and in total, no "
                          "simulation); its stores go with the run's private folder")
        t_shards = time.perf_counter() - t0
        # the public item features: one file every node is pointed at (not in any shard)
        features = (write_item_features(dataset.item_features, dataset.item_feature_names, base / "item_features.npz")
                    if getattr(dataset, "item_features", None) is not None else None)
        kind = LocalFederation if engine == "deployment" else SimulatedFederation
        federation = kind(shards, None if guard is not None else base / "flower", dataset.entity_names,
                          keep=keep_workdir, insecure=insecure, port_range=port_range, guard=guard,
                          item_features=features, warm_run=(run, dataset.n_entities, dataset.value_max), site_policy=site_policy,
                          **({"backend": sim_backend} if engine == "simulation" else {}))
    else:
        t_shards = 0.0
    check_item_features(dataset, federation)
    try:
        t0 = time.perf_counter()
        if owned:
            federation.start()
        t_start = time.perf_counter() - t0
        res = federation.run(run, dataset.n_entities, round_timeout=round_timeout,
                             timeout=timeout, dump_dir=str(dump_dir) if dump_dir else None, progress=progress)
        reports = read_local_reports(federation, res.get("run_id"), skip=res.get("dropped") or ())
    finally:
        if owned:
            federation.close()
            if guard is not None:
                guard.close()
    doc, result = _document(dataset, config, spec, res, reports, federation,
                            {"split": t_split, "write_shards": t_shards, "deployment_start": t_start})
    if return_model == "result":
        return doc, result
    return (doc, result.V) if return_model else doc


#: The run's flag (or control) that meets each rule of a site policy, for a refusal known before any
#: node starts; the policy key itself is the other fix.
RULE_FIXES = {"methods": "--method", "max_epsilon": "--epsilon", "max_delta": "--delta",
              "max_coalition_epsilon": "--epsilon", "max_dropouts": "--max-dropouts",
              "value_bounds": "--value-max or the method's bound parameters", "allow_non_private": "--method",
              "allow_simulation": "--simulation", "run_parameters": "--param (the method's parameters)"}


def check_site_policy(config: RunConfig, site_policy, dataset: FederatedDataset | None = None) -> None:
    """Before anything is charged or started: a given policy file must read, and a simulation run
    (noise reproducible from the coordinator's seed) needs a given policy that allows it. With the
    ``dataset``, the run is checked against the policy as every local site will check it (the pure
    rules: methods, ε, δ, the coalition ε, dropouts, bounds; each site's budget is its own store's):
    a run a site would refuse is one error naming the rule and the flag, before Flower starts.
    ``site_policy``: one file for every site, or a list of one per site in the dataset's entity order."""
    if site_policy is None:
        if config.simulation:
            raise ConfigError("--simulation needs a site policy that allows it: every site would be handed noise "
                              "the coordinator can reproduce. Give --site-policy FILE (TOML) with "
                              "allow_simulation = true, or drop --simulation")
        return
    from dpfed_core.deployment.site_policy import (PolicyError, PolicyRefused, PolicyWouldRefuse, check, load_policy,
                                                   request_of)

    shared = not isinstance(site_policy, (list, tuple))
    paths = [site_policy] if shared else list(site_policy)
    if dataset is not None and not shared and len(paths) != dataset.n_entities:
        raise ConfigError(f"{len(paths)} site policies for {dataset.n_entities} entities: give one policy file for "
                          "every site, or one per site in the data's entity order")
    who = (lambda _: "every site") if shared else (lambda e: f"site {e!r}")
    policies = []
    for path in paths:
        policy = load_policy(path, control="--site-policy")  # the coordinator's copy of what the site reads
        if config.simulation and not policy.allow_simulation:
            raise ConfigError(f"--simulation: the site policy {path} does not allow simulation "
                              f"(allow_simulation = false); {'every site' if shared else 'its site'} would refuse. "
                              "Set allow_simulation = true in the policy, or drop --simulation")
        policies.append(policy)
    if dataset is None:
        return
    # each site's (file, policy): the one shared pair for every site, or the site's own
    sites = list(zip(paths, policies)) * (dataset.n_entities if shared else 1)
    for entity, (path, policy) in zip(dataset.entity_names, sites):
        try:  # each local site opens its own store under the policy's key
            store = policy.check_store_folder(entity)
        except PolicyError as exc:
            raise ConfigError(f"--site-policy {path}: {exc}; {who(entity)} would refuse the run (nothing was charged "
                              "or started)") from None
        damaged = _not_a_database(store)
        if damaged:
            raise ConfigError(f"--site-policy {path}: the store {store} (its store key) is no budget store: {damaged}; "
                              f"{who(entity)} would refuse the run (nothing was charged or started). Fix the store "
                              "key, or restore the site's store from its backup")
        if policy.site and policy.site != entity:
            raise ConfigError(f"--site-policy {path} is written for site {policy.site!r} (its site key), and is given "
                              f"to {entity!r}{', as to every local site' if shared else ''}: it would refuse every run. "
                              + ("Drop the site key from a policy every local site is given (on real machines each "
                                 "SuperNode names its own file in its policy-path)" if shared else
                                 "Give each site the policy written for it, in the data's entity order"))
    # the catalogue's size, as the run's JSON gives it to the sites: a prototype method's default row bound
    # grows with it
    request = request_of(config, dataset.n_entities, float(dataset.value_max),
                         n_items=dataset.n_items if dataset.shared_columns is None else dataset.n_declared)
    for entity, (path, policy) in list(zip(dataset.entity_names, sites))[:1 if shared else None]:
        try:  # a shared policy answers every site alike: checked once
            check(policy, request)
        except PolicyRefused as exc:
            fix = RULE_FIXES.get(exc.rule, "the run")
            if exc.rule == "allow_non_private" and not math.isfinite(float(config.epsilon)):
                # ε = ∞ makes even a DP method's release exact: a finite --epsilon meets the rule as well
                fix = "--epsilon (a finite ε) or --method"
            raise PolicyWouldRefuse(f"{who(entity)} would refuse this run under rule {exc.rule!r} of --site-policy "
                                    f"{path}: {exc.reason}{exc.limit}. Change {fix}, or {exc.rule} in the policy "
                                    "(nothing was charged or started)") from None


def _not_a_database(store: Path) -> str:
    """Why an existing store file cannot be a site's store (not an SQLite database: damaged, or another
    file), or "" — read only, so the check never writes into the file it looks at. A missing or empty file
    is a new store, which the site creates."""
    import sqlite3

    if not store.is_file() or store.stat().st_size == 0:
        return ""
    try:
        con = sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True)
        try:
            con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return ""


def check_item_features(dataset: FederatedDataset, federation) -> None:
    """Public item features the run uses must have reached the nodes: a federation started without
    them (``LocalFederation(item_features=…)``, ``--node-config "item-features='…'"``) would fit
    without them and differ from the in-process run."""
    if getattr(dataset, "item_features", None) is not None and getattr(federation, "item_features", None) is None:
        raise ConfigError("the data has public item features (--item-features) but the SuperNodes were started "
                          "without them; start the federation with the features file (--node-config "
                          "\"item-features='…'\"), or drop --item-features")


#: --aggregation none on a deployment: the trust record's sum, and the run's note in place of the
#: in-process one (which says the server saw each release).
NONE_ON_SECAGG = ("no secure aggregation assumed: each entity's share carries the full noise, so the guarantee holds "
                  "against a server that sees each share; on this deployment the shares still travel through "
                  "Flower's SecAgg+, and the server received their sum only")


def check_deployable(dataset: FederatedDataset, config: RunConfig, engine: str = "deployment",
                     sim_backend: str = SIM_DEFAULT_BACKEND):
    """What a deployment needs beyond a valid run, checked before anything is charged or started:
    a known engine, a federated protocol method, a catalogue a DP run can fix (declared, or selected
    federation-wide by a summable method), and ≥ 2 entities.
    Returns ``(config, spec)`` (ε dropped for a method that takes none)."""
    if engine not in ENGINES:
        raise ConfigError(f"--engine {engine!r}: choose {' or '.join(ENGINES)}")
    spec = get_method(config.method)
    if config.method not in deployable_methods():
        raise ConfigError(f"method {config.method!r} does not run as a deployment; deploy-local runs the "
                          f"federated protocol methods: {', '.join(deployable_methods())} (--method)")
    if config.max_dropouts and config.method not in SUMMABLE_METHODS:
        raise ConfigError(f"--max-dropouts applies to summable methods ({', '.join(sorted(SUMMABLE_METHODS))}), "
                          f"not to {config.method}")
    if not spec.uses_epsilon and math.isfinite(config.epsilon):
        config = config.replace(epsilon=math.inf)
    if needs_dp_catalogue(dataset, spec.privacy_model.user_level, config) and not uses_federation_catalogue(
            dataset, config):
        # The catalogue fixes every message's shape. A summable method selects it federation-wide as a
        # round of the deployment (each site's share carries σ/√(H − d) under secure aggregation, the
        # full σ without it); the per-entity DP selection of a prototype method is not a deployment round.
        raise ConfigError("a DP run on a deployment without a declared public item catalogue selects it "
                          f"federation-wide, which needs a summable method ({', '.join(sorted(SUMMABLE_METHODS))}; "
                          "under --aggregation secure at least 2 entities beyond --max-dropouts); per-entity DP "
                          "catalogue selection (prototype methods) does not run as a deployment round. Declare the "
                          "catalogue (--items FILE, or the Data page's item-catalogue upload) or use a summable "
                          "--method")
    if dataset.n_entities < 2:
        raise ConfigError(f"a deployment needs at least 2 entities, the data has {dataset.n_entities}")
    if engine == "simulation":
        from dpfed_core.deployment.simulation_engine import available

        ok, why = available(sim_backend)
        if not ok:
            raise ConfigError(f"--engine simulation: {why}; or use --engine deployment")
    return config, spec


def deployment_runner(**options) -> Callable:
    """Step 5 of the run service (:func:`~dpfed_core.evaluation.service.execute_run`'s ``runner``):
    the run on a local Flower deployment with ``options`` (those of :func:`run_deployed`), returning
    ``(doc, MethodResult)`` so that the service validates, plans, charges and records it like ``run``."""
    def runner(dataset: FederatedDataset, config: RunConfig, split) -> tuple[dict, MethodResult]:
        return run_deployed(dataset, config, split=split, return_model="result", **options)
    return runner


#: How the result document labels the evaluation of a deployment.
EVALUATION_SOURCE = ("read from the nodes' local reports (one operator holds every shard in deploy-local); "
                     "not sent to the server")


def read_local_reports(federation: LocalFederation, run_id, skip=()) -> list[dict]:
    """Each node's local evaluation report of run ``run_id`` (files on the nodes' disks, readable
    here because deploy-local's operator runs every node). A missing or foreign report is a
    :class:`DeploymentError` naming the entity. ``skip``: entities that dropped out of the run (no model,
    no report)."""
    from dpfed_core.deployment.wire import loads

    out = []
    for h, name in enumerate(federation.entity_names):
        if name in skip:
            continue
        path = federation.report_path(h)
        try:
            rep = loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DeploymentError(f"entity {name!r}: no local evaluation report at {path} ({exc})") from None
        if run_id is not None and int(rep.get("run_id", -1)) != int(run_id):
            raise DeploymentError(f"entity {name!r}: the local report {path} is from run {rep.get('run_id')}, "
                                  f"not run {run_id}")
        out.append(rep)
    return out


def _document(dataset, config, spec, res: dict, reports: list[dict], federation, timings: dict) -> dict:
    insecure = bool(federation.insecure)
    simulated = getattr(federation, "engine", "deployment") == "simulation"
    private = spec.uses_epsilon and math.isfinite(config.epsilon)
    ledger = PrivacyLedger(config.epsilon if private else math.inf, config.delta if private else 0.0)
    entities = sorted(res["entities"], key=lambda e: e["index"])
    dropped = list(res.get("dropped") or [])
    present = [e for e in dataset.entity_names if e not in dropped]
    if [e["entity"] for e in entities] != present:
        raise ConfigError("the deployment's entities do not match the dataset's: "
                          f"{[e['entity'] for e in entities]} vs {present}")
    if [r["entity"] for r in reports] != present:
        raise DeploymentError("the nodes' local reports do not match the dataset's entities: "
                              f"{[r['entity'] for r in reports]} vs {present}")
    notes = []
    # Re-spent on the run's ledger, which re-checks every row against the budget, in the order the
    # in-process run spends them: a summable method stage by stage (the i-th row of every entity, then
    # the next), a prototype method entity by entity.
    rows_of = [e["ledger"] for e in entities]
    if spec.name in SUMMABLE_METHODS:
        order = [rows[i] for i in range(max(map(len, rows_of), default=0)) for rows in rows_of if i < len(rows)]
    else:
        order = [row for rows in rows_of for row in rows]
    for row in order:
        ledger.spend(**{k: (math.nan if v is None else v) for k, v in row.items()})  # NaN travels as null
    for e in entities:
        if e["note"] and e["note"] not in notes and not e["note"].startswith("noise share"):
            notes.append(e["note"])
    V = np.asarray(res["V"])
    extra: dict = {}
    catalogue = res.get("catalogue")
    if catalogue is not None:
        # the broadcast V is on the released keys: put it on the data's item axis as every node did
        # with its own column names (and as the in-process run does)
        from dpfed_core.privacy import catalogue as cat

        keys = np.asarray(catalogue["keys"], dtype=np.int64)
        item_key = cat.item_keys(cat.item_bucket_levels(dataset.item_names, catalogue["n_buckets"]), keys,
                                 catalogue["n_buckets"])
        V = cat.on_item_axis(V, item_key)
        cols = np.flatnonzero(item_key >= 0)
        extra = {"catalogue": cols, "catalogue_keys": int(keys.size)}
        keeps_own = keeps_own_items(spec, config)
        tail = ("; no bucket passed the threshold" + (EMPTY_CATALOGUE_OWN_NOTE if keeps_own else EMPTY_CATALOGUE_ZERO_NOTE)
                if keys.size == 0 else ("; " + OWN_ITEMS_NOTE if keeps_own else ""))
        notes.insert(0, secure_catalogue_note(int(keys.size), catalogue["threshold"], catalogue["sigma_sum"],
                                              len(cols), dataset.n_items, secure=config.aggregation == "secure",
                                              secagg_carrier=True)
                     + tail)
    elif dataset.shared_columns is not None:
        # V has one row per declared item: on the data's item axis, a zero row for each item outside
        # it (every node scored its own with its own model)
        from dpfed_core.evaluation.catalogue_run import declared_catalogue_note
        from dpfed_core.models.shared_items import SharedItems

        shared = SharedItems.from_columns(dataset.shared_columns, dataset.n_items, dataset.value_max, public=True)
        V = shared.lift(V)
        extra = {"catalogue_item_key": shared.item_key, "catalogue_declared": True}
        notes.insert(0, declared_catalogue_note(shared.n_keys, dataset.n_items, keeps_own_items(spec, config)))
    result = MethodResult(np.zeros((0, V.shape[1])), V, ledger, [], {}, extra=extra)
    declare_public_inputs(dataset, spec, result)  # the nodes were given them (check_item_features)
    metrics = combine_statistics([(r["entity"], r["stats"]) for r in reports], config.top_n)
    secure = res.get("secure_aggregation")
    privacy = privacy_summary(result, config, spec.uses_epsilon, spec.privacy_model, spec.privacy)
    wire = sum(int(m["bytes"]) for m in res["messages"])
    if simulated:
        transport = federation.transport  # names the backend that carried the messages
    elif insecure:
        transport = "INSECURE: plain HTTP and no node authentication (--insecure)"
    else:
        transport = ("TLS on every connection (a CA and certificate made for this run) and Flower's node "
                     "authentication (the SuperLink accepts only the registered SuperNode keys)")
    deployment = {
        "engine": "flower-simulation" if simulated else "flower", "flwr_version": _flwr_version(),
        "simulation_backend": federation.backend if simulated else None,
        "run_id": res.get("run_id"), "superlink": None if simulated else "127.0.0.1", "transport": transport, "insecure": bool(insecure), "supernodes": len(entities),
        "bytes_on_wire": wire, "n_messages": len(res["messages"]), "wall_seconds": res.get("wall_seconds"),
        "secure_aggregation": secure,
        "site_decisions": res.get("site_decisions"),
        "evaluation_source": EVALUATION_SOURCE,
        "node_seconds": {r["entity"]: {"release": r.get("release_seconds"), "round2_fit": r.get("round2_fit_seconds")}
                         for r in reports},
        "node_seconds_source": EVALUATION_SOURCE,
    }
    if spec.name in SUMMABLE_METHODS and secure:
        # the notes and the trust record of the one summable protocol (federation.summable_protocol), as
        # the in-process run writes them, with the deployment's own carrier (Flower's SecAgg+)
        from dpfed_core.deployment.hooks import method_config, summable_method
        from dpfed_core.federation.summable_protocol import trust_record

        notes.extend(n for n in secure.get("notes", []) if n not in notes)
        method = summable_method(method_config(config, catalogue is not None), n_entities=dataset.n_entities)
        result.extra["trust"] = trust_record(method, ledger, [float(e.get("coalition_epsilon", math.inf))
                                                              for e in entities], in_process=False)
        if catalogue is not None:  # the selection's share protects against the coalition too
            coal = result.extra["trust"]["against_server_and_other_entities"]
            coal["epsilon"] = coalition_with_catalogue(config, dataset.n_entities, coal["epsilon"], ledger)
        if config.aggregation != "secure":
            # the noise is sized for a server that sees each share, but the deployment's only carrier of
            # a summable share is SecAgg+: say what crossed the wire, not the in-process picture
            from dpfed_core.federation.summable_protocol import NO_SECAGG_NOTE

            result.extra["trust"]["sum"] = NONE_ON_SECAGG
            notes[:] = [NONE_ON_SECAGG if n == NO_SECAGG_NOTE else n for n in notes]
        privacy["trust"] = result.extra["trust"]
    if (spec.name in SUMMABLE_METHODS and V.shape[1] != config.rank
            and "rank" not in inspect.signature(SUMMABLE_METHODS[spec.name].__init__).parameters):
        notes.append(f"{spec.name} learns {V.shape[1]} latent factor(s); rank={config.rank} is not used")
    if insecure:
        notes.append("deployment ran with --insecure: plain HTTP and no node authentication")
    if dropped:
        deployment["dropped"] = dropped
        at = deployment["dropped_at"] = {e: (res.get("dropped_at") or {}).get(e, "secure sum") for e in dropped}
        in_sum = [e for e in dropped if at[e].startswith("secure sum")]
        after = [e for e in dropped if e not in in_sum]
        if in_sum:
            notes.append(f"{', '.join(in_sum)} dropped out during a secure sum (within --max-dropouts "
                         f"{config.max_dropouts}): the sum is the other entities' (its noise sized for them), the "
                         "dropped entities took no further part and have no model or metrics from this run")
        if after:
            notes.append(f"{', '.join(f'{e} ({at[e]})' for e in after)} stopped answering after every secure sum "
                         f"was complete (within --max-dropouts {config.max_dropouts}): the released sums include "
                         + ("its shares; it has" if len(after) == 1 else "their shares; they have")
                         + " no model or metrics from this run")
    doc = result_document(
        dataset, config, spec, metrics, privacy, res["messages"],
        {**timings, **res.get("timings", {}), "wall_total": res.get("wall_seconds")},
        [*dataset.notes, *notes,
         ("deployment: Flower's Simulation Engine, one simulated SuperNode per entity (the same ServerApp and "
          "ClientApp); messages and bytes as Flower carried them" if simulated else
          "deployment: one Flower SuperNode process per entity; messages and bytes as Flower carried them"),
         f"evaluation: {EVALUATION_SOURCE}; the nodes sent the server only DP releases (or, for a "
         "non-private method, its labelled release) and the protocol's public fields"])
    doc["deployment"] = deployment
    doc["warnings"] = learned_nothing_warnings(dataset, config, spec, metrics, result)  # as in process
    return doc, result


def _flwr_version() -> str:
    from importlib.metadata import version

    return version("flwr")
