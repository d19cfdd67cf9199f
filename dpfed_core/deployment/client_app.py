"""The Flower ClientApp of one entity (one SuperNode per entity, see docs/DEPLOYMENT.md).

The node loads only its own shard (``--node-config "data-path='…'"``) and answers these
messages from the ServerApp:

* ``query.policy`` — first in every run: the run's request checked against this site's own policy
  (``--node-config "policy-path='…'"``, :mod:`.site_policy`), its charge made in the site's own
  odometer; the reply is the decision (accepted, or refused naming the rule). Every handler below that
  draws or releases anything first requires this run's acceptance of exactly the request its message
  carries, and releases each stage at most once.
* ``query.withdraw`` — a run another site refused ended before any share was asked for: the site
  gives its charge back if its own record of the run holds no released stage (kept otherwise) and
  refuses every later release of the run.
* ``query.round1`` — prototype methods: compute the entity's prototypes (SPEC §2), spend through a
  local ledger, reply with the prototypes (and released cluster sizes if asked) plus the ledger rows.
* ``train`` — summable methods: Flower's ``secaggplus_mod`` wraps this handler; the handler returns
  the entity's share of the stage named in the instructions (rounded to the public grid) and the
  mod masks it, so only the masked vector leaves the node and the server can unmask nothing but the
  sum (SecAgg+). One SecAgg+ round per stage of a multi-stage method (``dp-cooccurrence``).
* ``train`` with stage ``catalogue`` — data without a declared item catalogue (run JSON
  ``item_catalogue="secure"``): before the method, the entity's share of the federation-wide DP
  catalogue (:func:`dpfed_core.privacy.catalogue.secure_catalogue_share`, the in-process code): its
  users' bounded counts over the public hash buckets of its own columns' names plus its Gaussian
  share, masked by SecAgg+ like any share. The server thresholds the sum and broadcasts the released
  keys; the method then runs on the entity's columns merged into those keys, and round 2 puts the
  factors back on the entity's item axis.
* between two stages, the public result of the previous sum that the next share reads (the released
  catalogue keys; the items chosen from the DP popularity sum) arrives inside the next sum's share
  instructions (FitIns config ``public-after`` / ``public``) and is stored in the node's run state;
  ``query.public`` carries one on its own when no secure sum follows (an empty catalogue).
* ``query.round2`` — receive V, fit U_h ≥ 0 locally (the method's ``fit_local``: U_h and any
  entity-only columns never leave), evaluate the entity's held-out entries with the evaluator
  installed on this node (:func:`dpfed_core.evaluation.partial.entity_statistics`; nothing the
  server names is imported) and write the report to this node's disk (``--node-config
  "report-path='…'"``, default next to the shard). The reply carries the entity's identity and,
  for a summable method, the public ledger rows of its shares — no count, no metric sum, no timing
  (against the server only DP releases and the protocol's public fields).

Randomness: the entity's stream is spawned exactly as the in-process protocol spawns it
(``method_generator(seed, …).spawn(H + 1)[h]``): operating-system entropy for a DP method unless the
run is a labelled simulation, in which case it reproduces the in-process run. Flower runs every
message in a fresh ClientApp process, so in simulation the stream's state is kept in the node's run
state between messages (it never leaves the node); production streams (OS entropy) are drawn afresh.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, RecordDict
from flwr.client.mod import secaggplus_mod
from flwr.clientapp import ClientApp

from dpfed_core.errors import DpfedError
from dpfed_core.deployment.plugins import load_plugins
from dpfed_core.evaluation.partial import entity_statistics
from dpfed_core.deployment.shards import load_item_features, load_shard
from dpfed_core.deployment.wire import (PUBLIC_AFTER_FIELD, PUBLIC_FIELD, SUM_OF_STAGES, catalogue_from_json,
                                        catalogue_size_from_json, config_from_json, dumps, ledger_rows_to_json, loads, message_bytes,
                                        unpack_arrays)
from dpfed_core.deployment import site_policy
from dpfed_core.deployment.hooks import (fit_local, node_method, release_prototypes, stage_public_keys,
                                         stage_share)
from dpfed_core.federation.summable import GRID, SUMMABLE_METHODS, fused_inputs, fused_stages, secagg_ranges
from dpfed_core.models.factorization import fit_rows_given
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.privacy.noise import SecureGenerator, method_generator
from dpfed_core.privacy.statement import epsilon_that_holds
from dpfed_core.privacy.store import StoreError

# The operator's plug-in methods (DPFED_PLUGINS, set by deploy-local --plugin or by the site):
# imported from this node's own configuration, never from anything a message names.
load_plugins()

app = ClientApp()

#: Where a node keeps what it must remember between messages of one run (its ledger rows).
STATE_KEY = "dpfed"
#: The public result of the previous secure sum (multi-stage summable methods).
PUBLIC_KEY = "dpfed-public"
#: The simulation stream's state between messages (never sent).
RNG_KEY = "dpfed-rng"
#: The released catalogue keys (public: the server's threshold of the catalogue's secure sum).
CATALOGUE_KEY = "dpfed-catalogue"
#: The stage name of the federation-wide catalogue's secure sum.
CATALOGUE_STAGE = "catalogue"


#: This run's acceptance (the request's JSON, H, the odometer operation) and the stages released.
ACCEPTED_KEY = "dpfed-accepted"
RELEASED_KEY = "dpfed-released"
#: Simulation engine only: each simulated node's policy file (as SIM_SHARDS_ENV, set by the operator).
SIM_POLICIES_ENV = "DPFED_SIM_POLICIES"
#: Simulation engine only: each simulated node's public item features file (as a SuperNode's item-features).
SIM_FEATURES_ENV = "DPFED_SIM_FEATURES"


def _error_reply(msg: Message, exc: Exception, where: str) -> Message:
    return Message(RecordDict({"error": ConfigRecord({"message": f"{where}: {_public(exc, where)}"})}),
                   reply_to=msg)


def _public(exc: Exception, where: str) -> Exception:
    """What the coordinator may be told of a failure: every error text that leaves the node (an error
    reply, or a ClientApp exception whose text Flower sends to the server) must be a function of public
    inputs only. This module's own errors state what the coordinator sent in public terms; a failure of
    anything else — a library's message on arrays shaped by the site's own items, a fault of its policy
    file or store naming its paths — is told in the site's own log, and the coordinator hears only
    where it happened."""
    if isinstance(exc, (site_policy.PolicyError, StoreError)):
        _site_log(f"{where}: {exc}")
        return DpfedError("this site's policy file or store cannot be used; the reason is in the site's own log")
    if isinstance(exc, site_policy.PolicyRefused):
        _site_log(f"{where}: {exc.for_site()}")
    if isinstance(exc, DpfedError):
        return exc
    _site_log(f"{where}: {type(exc).__name__}: {exc}")
    return DpfedError("this node failed; the reason is in the site's own log")


def _entity_rngs(config, private: bool, n_entities: int):
    return method_generator(config.seed, private=private, simulation=config.simulation).spawn(n_entities + 1)


#: Simulation engine only (:mod:`.simulation_engine`): the shard files and report paths of the
#: simulated nodes, in partition order, as a JSON list (a path may hold ``os.pathsep``: a joined list
#: would hand a node a piece of another's path) — set in the environment of the process that runs the
#: nodes by the operator who holds every shard (never from a message).
SIM_SHARDS_ENV = "DPFED_SIM_SHARDS"
SIM_REPORTS_ENV = "DPFED_SIM_REPORTS"


def _simulated(context: Context, env: str) -> str | None:
    """The simulated node's entry of ``env`` (by Flower's ``partition-id``), else None."""
    listed = os.environ.get(env)
    pid = context.node_config.get("partition-id")
    if not listed or pid is None:
        return None
    entries = json.loads(listed)
    return entries[int(pid)] if 0 <= int(pid) < len(entries) else None


def _data_path(context: Context) -> str | None:
    return context.node_config.get("data-path") or _simulated(context, SIM_SHARDS_ENV)


def _load(context: Context, n_entities: int):
    path = _data_path(context)
    if not path:
        raise DpfedError("this SuperNode has no data path; start it with --node-config \"data-path='…'\"")
    try:
        shard = load_shard(str(path))
    except DpfedError as exc:  # names the site's own file: told in its log only
        _site_log(str(exc))
        raise DpfedError("this SuperNode cannot read its shard; the reason is in the site's own log") from None
    if shard.n_entities != n_entities:
        # the federation's size is public; the shard's path is the site's own (its log has it)
        _site_log(f"shard {path} belongs to a federation of {shard.n_entities} entities, the run declares "
                  f"{n_entities}")
        raise DpfedError(f"this site's shard belongs to a federation of {shard.n_entities} entities, the run "
                         f"declares {n_entities}")
    return shard


def _item_features(context: Context, shard) -> np.ndarray | None:
    """The public item features of this node's columns, from the file its own configuration names
    (``item-features``), or None."""
    path = context.node_config.get("item-features") or _simulated(context, SIM_FEATURES_ENV)
    if not path:
        return None
    try:
        return load_item_features(str(path), shard.train.shape[1])[0]
    except DpfedError as exc:  # names the site's file and its column count: told in its log only
        _site_log(f"{shard.entity}: {exc}")
        raise DpfedError(f"{shard.entity}: this SuperNode cannot read its item features; the reason is in the "
                         "site's own log") from None


def _own_items_padded(V: np.ndarray, shard) -> np.ndarray:
    """V on a declared catalogue (this node's first columns: public names, every one known), a zero row
    for each of the node's own items after them."""
    return np.vstack([V, np.zeros((shard.train.shape[1] - V.shape[0], V.shape[1]))])


def _policy(context: Context) -> site_policy.SitePolicy:
    """This site's policy, from its own configuration only (never from a message)."""
    path = context.node_config.get("policy-path") or _simulated(context, SIM_POLICIES_ENV)
    if not path:
        raise site_policy.PolicyRefused("accepted_request", "this SuperNode has no site policy; start it with "
                                        "--node-config \"policy-path='…'\" (a TOML file, docs/DEPLOYMENT.md)")
    return site_policy.load_policy(str(path))


def _coordinator(context: Context) -> str:
    """Who asks, as this site knows it from its own configuration (the SuperLink it was pointed at)."""
    return str(context.node_config.get("coordinator") or "the SuperLink this node connects to")


def _site_log(msg: str) -> None:
    import sys

    print(f"dpfed site policy: {msg}", file=sys.stderr, flush=True)  # the SuperNode's log


def _require_accepted(context: Context, rec, stage: str | tuple[str, ...] | list[str] | None = None,
                      shard=None, claim: bool = True, withdrawn_ok: bool = False) -> None:
    """Refuse (before anything is drawn) a message whose request this site did not accept in this run,
    and a second release of a stage already released in it. ``stage``: the stage a message releases,
    or every stage one secure sum carries (each is claimed on its own, whatever name the sum has);
    claimed with ``shard`` (the node's own) in the site's store too, where a withdrawal by the site's
    operator (`site withdraw`) refuses it. ``claim=False``: the refusals only (a message is checked whole
    before its stages are claimed). ``withdrawn_ok``: an acceptance already withdrawn from passes (a
    withdrawal asked again is answered from the site's store as the first was)."""
    kept = context.state.config_records.get(ACCEPTED_KEY)
    if kept is None:
        raise site_policy.PolicyRefused("accepted_request", "the coordinator asked for a release before this site "
                                        "accepted the run's request (query.policy); nothing was drawn")
    if str(kept["config"]) != str(rec["config"]) or int(kept["n-entities"]) != int(rec["n-entities"]):
        raise site_policy.PolicyRefused("accepted_request", "the request differs from the one this site accepted "
                                        "for this run; nothing was drawn")
    if int(kept.get("withdrawn", 0)) and not withdrawn_ok:
        # the charge itself was given back only if the site's store marked no draw: not said here
        raise site_policy.PolicyRefused("accepted_request", "this site withdrew from this run when the coordinator "
                                        "said the run had ended; nothing was drawn for this request")
    if stage is None:
        return
    done = _released_stages(context)
    # a fused sum ("a+b") releases a and b again: the record is per stage, not per label
    claimed = [stage] if isinstance(stage, str) else list(stage)
    again = [stage for stage in claimed if stage in done]
    if again:
        raise site_policy.PolicyRefused("one_request_per_run", f"stage {again[0]!r} was already released in this "
                                        "run; a site releases each stage once per accepted run")
    if not claim:
        return
    if shard is None:
        raise TypeError("a stage is claimed in the site's store: pass the node's shard")
    policy = _policy(context)
    site_policy.claim_draw(policy, shard.entity, claimed, run=str(context.run_id), coordinator=_coordinator(context),
                           store=_run_store(context, policy, shard.entity))
    context.state.config_records[RELEASED_KEY] = ConfigRecord({"stages": dumps([*done, *claimed])})


def _run_store(context: Context, policy: site_policy.SitePolicy, entity: str) -> Path:
    """The store this run was charged in, as the decision recorded it: every later draw of the run is marked,
    and logged, there — a store key edited mid-run would mark the draws in another file, and the charged
    store, seeing none, would give the charge of a run that drew back."""
    kept = context.state.config_records.get(ACCEPTED_KEY)
    if kept is not None and "store" in kept:
        return Path(str(kept["store"]))
    return policy.store_for(entity)


def _released_stages(context: Context) -> list[str]:
    """The stages this node marked released in this run (each marked before its draw)."""
    rec = context.state.config_records.get(RELEASED_KEY)
    return [] if rec is None else loads(str(rec["stages"]))


def _log_release(context: Context, shard, config, stage: str, rows, shapes, n_bytes: int,
                 coalition: tuple[float, float, str] | None = None) -> None:
    """One row of the site's release log per release (its ledger rows give ε, δ and ρ; ``coalition``:
    the (ε, δ, composition) its own noise alone gives against the server colluding with every other
    site, :func:`_run_coalition`)."""
    policy = _policy(context)
    eps = sum(float(r.epsilon) for r in rows) if rows else 0.0
    dlt = sum(float(r.delta) for r in rows if r.delta == r.delta) if rows else 0.0
    rhos = [r.rho for r in rows if getattr(r, "rho", None) is not None]
    rho = sum(rhos) if rhos and len(rhos) == len(rows) else None
    if rho is not None and len(rows) > 1 and 0 < dlt < 1:
        # the stages of one release compose by zCDP (ρ adds up): their ε summed would state more than the
        # site released — a fused sum of a run at ε = 1 would read as a release above its max_epsilon
        from dpfed_core.privacy.accounting import zcdp_epsilon_of_rho

        eps = min(eps, zcdp_epsilon_of_rho(float(rho), dlt))
    if config.simulation:
        # the coordinator's seed reproduces the noise: against it (and anyone it tells) nothing is protected
        note = SIMULATION_RELEASE_NOTE
    elif coalition is None or not math.isfinite(coalition[0]):
        note = ""
    else:
        note = (f"against the server with every other site: ε = {epsilon_that_holds(coalition[0])}, "
                f"δ = {coalition[1]:.3g} (the run "
                f"as planned: its stages so far, and its later stages at their planned ρ; {coalition[2]})")
    site_policy.SiteLog(_run_store(context, policy, shard.entity)).add(
        run=str(context.run_id), coordinator=_coordinator(context), entity=shard.entity, method=config.method,
        stage=stage, decision="released", epsilon=eps, delta=dlt,
        rho=rho, simulation=config.simulation, shapes=shapes, n_bytes=n_bytes, note=note)


#: A simulation release's row in the site's log: its ε column is the mechanism's calibration, not a guarantee.
SIMULATION_RELEASE_NOTE = ("simulation: the coordinator can reproduce this noise from its seed — no guarantee against "
                           "it (ε = ∞; charged as a non-private release); ε here is the noise's calibration only")


@app.query("policy")
def decide(msg: Message, context: Context) -> Message:
    """The site's decision on the run's request: checked against its own policy and charged to its own
    odometer before the coordinator asks for any share (nothing is drawn here)."""
    rec = msg.content["config"]
    entity = {"entity": "?", "index": -1}
    try:
        try:
            config, H, shard = _instructions(context, rec)
        except UnreadableInstructions as exc:
            # the coordinator's request, not the node's failure: refused like a parameter the method cannot take
            entity = _identity(_load(context, int(rec["n-entities"])))
            raise site_policy.PolicyRefused("run_parameters", f"the run's instructions cannot be read: {exc}") from None
        entity = _identity(shard)
        kept = context.state.config_records.get(ACCEPTED_KEY)
        if kept is not None:
            _require_accepted(context, rec)  # the same request again in this run: already decided
            meta = {**_identity(shard), "decision": "accepted", "rule": "", "message": "already accepted"}
            return Message(RecordDict({"meta": ConfigRecord(meta)}), reply_to=msg)
        policy = _policy(context)
        summable_secure = _secure_catalogue(rec) and config.method in SUMMABLE_METHODS
        if not summable_secure:
            _declared_size(rec, shard)  # a catalogue the shard cannot hold is refused before any charge
        # A default bound that grows with the catalogue (a prototype release reads the declared size's columns
        # whatever the catalogue field says) is checked at the run JSON's public size, at its largest when it
        # states none: a refusal names the bound to the coordinator, and the shard's own width is the site's.
        n_items = None if summable_secure else catalogue_size_from_json(str(rec["config"]))
        req = site_policy.request_of(config, H, shard.value_max, catalogue_from_json(str(rec["config"])), n_items)
        record = site_policy.accept(policy, req, shard, run=str(context.run_id), coordinator=_coordinator(context))
        context.state.config_records[ACCEPTED_KEY] = ConfigRecord({
            "config": str(rec["config"]), "n-entities": H, "operation": record["operation"],
            "release-ids": dumps(record["release_ids"]), "dataset-key": record["dataset_key"], "withdrawn": 0,
            "store": record["store"]})
        _site_log(f"{shard.entity}: accepted run {context.run_id} ({config.method}, ε = {req.epsilon:g}, "
                  f"simulation = {req.simulation}); charged to {record['store']}")
        meta = {**_identity(shard), "decision": "accepted", "rule": "", "message": ""}
    except site_policy.PolicyRefused as exc:
        _site_log(f"{entity['entity']}: run {context.run_id}: {exc.for_site()}")
        meta = {**entity, "decision": "refused", "rule": exc.rule, "message": str(exc)}
    except site_policy.PolicyError as exc:  # a policy the site cannot read decides nothing: refused
        _site_log(f"{entity['entity']}: run {context.run_id}: refused: {exc}")
        # the reason names the site's own files: its operator reads it in the SuperNode's log
        meta = {**entity, "decision": "refused", "rule": "policy_file",
                "message": "this site's policy file cannot be used; the reason is in the site's own log"}
    except Exception as exc:  # e.g. the node's shard: a failure of the node, not a decision
        return _error_reply(msg, exc, "site policy")
    return Message(RecordDict({"meta": ConfigRecord(meta)}), reply_to=msg)


@app.query("withdraw")
def withdraw(msg: Message, context: Context) -> Message:
    """The coordinator's word that the run ended — another site refused it, or it failed before it finished:
    this site gives its charge back when its own record of the run holds no drawn stage, keeps it
    otherwise, and refuses every release of this run from then on."""
    rec = msg.content["config"]
    entity = {"entity": "?", "index": -1}
    try:
        config, H, shard = _instructions(context, rec)
        entity = _identity(shard)
        _require_accepted(context, rec, withdrawn_ok=True)
        kept = context.state.config_records[ACCEPTED_KEY]
        # refuse later releases first: a withdrawn acceptance must never be drawn on
        context.state.config_records[ACCEPTED_KEY] = ConfigRecord({**dict(kept.items()), "withdrawn": 1})
        record = {"operation": kept["operation"], "release_ids": loads(str(kept["release-ids"])),
                  "dataset_key": kept["dataset-key"], "store": str(kept["store"]) if "store" in kept else None}
        given = site_policy.withdraw(_policy(context), shard, record, run=str(context.run_id),
                                     coordinator=_coordinator(context))
        _site_log(f"{shard.entity}: run {context.run_id} ended, the coordinator says: charge "
                  + ("given back (nothing drawn)" if given else "kept (stages drawn)"))
        meta = {**entity, "decision": "withdrawn" if given else "kept", "rule": "", "message": ""}
    except site_policy.PolicyRefused as exc:
        meta = {**entity, "decision": "kept", "rule": exc.rule, "message": str(exc)}
    except (site_policy.PolicyError, ValueError) as exc:  # the charge stays: never refunded on doubt
        _site_log(f"{entity['entity']}: run {context.run_id}: charge kept: {exc}")
        # the reason may name the site's own files: its operator reads it in the SuperNode's log
        meta = {**entity, "decision": "kept", "rule": "policy_file",
                "message": "this site keeps its charge; the reason is in the site's own log"}
    except Exception as exc:
        return _error_reply(msg, exc, "site withdrawal")
    return Message(RecordDict({"meta": ConfigRecord(meta)}), reply_to=msg)


class UnreadableInstructions(DpfedError):
    """Run instructions this node cannot read (a field it does not know, a value of the wrong kind): the
    coordinator's request, not a failure of the node."""


def _instructions(context: Context, rec) -> tuple:
    """``(RunConfig, H, shard)`` from a message's public run instructions (``config``,
    ``n-entities``) and this node's own shard: the first step of every handler."""
    try:
        config = config_from_json(str(rec["config"]))
    except (TypeError, ValueError) as exc:
        raise UnreadableInstructions(" ".join(str(exc).split())) from None
    H = int(rec["n-entities"])
    return config, H, _load(context, H)


def _secure_catalogue(rec) -> bool:
    """Whether the run selects its catalogue federation-wide (the run JSON's public field)."""
    return catalogue_from_json(str(rec["config"])) == "secure"


def _method(config, shard, context: Context, secure_catalogue: bool, n_entities: int | None = None):
    """The run's summable method on this node: with a federation-wide catalogue, built on the rest
    of the budget (:func:`~dpfed_core.evaluation.catalogue_run.secure_catalogue_budget`, the in-process
    split); given the public item features of this node's own items when it was pointed at them (round
    2 works on the node's own item axis whatever the catalogue, as in process). ``n_entities``: checked
    against the federation's size, as the decision checked it (a share checks it again when it draws)."""
    method = node_method(config, shard.value_max, secure_catalogue, n_entities)  # as the decision built it
    features = _item_features(context, shard)
    if features is not None:
        method.set_public_inputs(item_features=features)
    return method


def _item_keys(shard, context: Context) -> np.ndarray:
    """Position among the released catalogue keys of each of this node's columns (−1: not
    released), from its own column names' public hash buckets: post-processing of the broadcast."""
    from dpfed_core.privacy import catalogue as cat

    if CATALOGUE_KEY not in context.state.array_records:
        raise DpfedError(f"{shard.entity}: the method reached this node before the released catalogue keys")
    keys = context.state.array_records[CATALOGUE_KEY]["keys"].numpy()
    return cat.item_keys(cat.item_bucket_levels(_item_names(shard), cat.SECURE_CATALOGUE_BUCKETS), keys,
                         cat.SECURE_CATALOGUE_BUCKETS)


def _item_names(shard) -> np.ndarray:
    if shard.item_names is None:
        raise DpfedError(f"{shard.entity}: this shard has no item names, which a run without a declared item "
                         "catalogue hashes to its public buckets; rewrite it with `python -m dpfed_core write-shards`")
    return shard.item_names


def _declared_size(rec, shard) -> int:
    """How many of this node's first columns are the run's declared catalogue (the run JSON's public
    size; the shard's whole width when it states none). The columns after them are the node's own
    items outside the catalogue: scored in its round 2, never in a message. A shard that states its
    own declared size (the site's export) bounds it: a run that leaves the size out gets the shard's,
    one that names more is refused (fewer: a part of the public list) — else the coordinator would
    decide which of the site's own items its shares read, and their count would be the shares' length."""
    size = catalogue_size_from_json(str(rec["config"]))
    width = int(shard.train.shape[1])
    own = getattr(shard, "n_declared", None)
    if size is None:
        return width if own is None else int(own)
    # the declared size is public (the run's items file); the width counts the site's own items too, so
    # it is named in the site's log only, and the declared size is checked first
    if own is not None and size > own:
        raise site_policy.PolicyRefused(
            "item_catalogue", f"the run declares a catalogue of {size} items, this site's shard declares {own}; "
                              "nothing was drawn", detail=f"its shard has {width} columns")
    if size > width:
        raise site_policy.PolicyRefused(
            "item_catalogue", f"the run declares a catalogue of {size} items, more than this site's shard holds; "
                              "rewrite the shard with the run's items file (write-shards --items); nothing was "
                              "drawn", detail=f"its shard has {width} columns")
    return int(size)


def _on_keys(shard, context: Context, secure_catalogue: bool, declared: int | None = None):
    """This node's training rows as the method's shares see them (without the entries its round 2
    validates on): its declared catalogue's columns (``declared``: their count, the first columns), or
    (federation-wide catalogue) merged into the released keys, values summed and clipped to the public
    bound (as in process)."""
    from dpfed_core.data.dataset import merge_key_columns
    from dpfed_core.models.blend import released_rows
    from dpfed_core.privacy import catalogue as cat

    rows = released_rows(shard.train)  # without the entries its round 2 validates on, as in process
    if not secure_catalogue:
        # the items outside a declared catalogue are the node's own: no share reads them
        return rows if declared is None or declared >= rows.shape[1] else rows[:, :declared].tocsr()
    item_key = _item_keys(shard, context)
    n_keys = int(context.state.array_records[CATALOGUE_KEY]["keys"].numpy().size)
    return merge_key_columns(rows, cat.key_matrix(item_key, n_keys), shard.value_max)


def _catalogue_share(config, H: int, shard):
    """This entity's share of the federation-wide catalogue: ``(values, ledger rows, coalition ε)``,
    by the in-process code on its own stream."""
    from dpfed_core.evaluation.catalogue_run import catalogue_streams, secure_catalogue_budget, secure_catalogue_divisor
    from dpfed_core.models.blend import released_rows
    from dpfed_core.privacy import catalogue as cat

    rho, row_delta, _cfg = secure_catalogue_budget(config)
    ledger = PrivacyLedger(config.epsilon, config.delta)
    bucket = cat.item_bucket_levels(_item_names(shard), cat.SECURE_CATALOGUE_BUCKETS)
    values, coalition = cat.secure_catalogue_share(
        released_rows(shard.train), bucket, rho, row_delta, catalogue_streams(config, H)[shard.index],
        ledger.for_entity(shard.entity), divisor=secure_catalogue_divisor(H, config), grid=GRID)
    return values, ledger.rows, coalition


def _identity(shard) -> dict:
    return {"entity": shard.entity, "index": shard.index}


#: This node's own timings between messages of one run (kept in the node's run state, never sent).
SECONDS_KEY = "dpfed-seconds"


def _remember_seconds(context: Context, key: str, seconds: float, add: bool = False) -> None:
    kept = context.state.config_records.get(SECONDS_KEY)
    before = float(kept[key]) if (add and kept is not None and key in kept) else 0.0
    context.state.config_records[SECONDS_KEY] = ConfigRecord({key: before + seconds})


def _seconds(context: Context) -> dict:
    kept = context.state.config_records.get(SECONDS_KEY)
    return {k: float(v) for k, v in kept.items()} if kept is not None else {}


def report_path(context: Context) -> Path:
    """Where this node writes its evaluation report: ``--node-config "report-path='…'"``, else
    ``<shard>.report.json`` next to its shard (both on the node's own disk)."""
    given = context.node_config.get("report-path") or _simulated(context, SIM_REPORTS_ENV)
    if given:
        return Path(str(given))
    shard = Path(str(_data_path(context)))
    return shard.with_name(shard.stem + ".report.json")


def _write_report(context: Context, shard, body: dict) -> None:
    """The node's local evaluation report (JSON, written to a temporary name and renamed)."""
    path = report_path(context)
    doc = {"run_id": int(context.run_id), "entity": shard.entity, "index": shard.index,
           "evaluator": "dpfed_core.evaluation.partial.entity_statistics", **body}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".json.tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(dumps(doc))
        os.replace(tmp, path)
    except OSError as exc:  # names the site's own path: told in its log only
        _site_log(f"{shard.entity}: cannot write the local evaluation report {path} ({exc}); fix the SuperNode's "
                  "--node-config \"report-path='…'\"")
        raise DpfedError(f"{shard.entity}: this node cannot write its local evaluation report; the reason is in "
                         "the site's own log") from None


def _prototype_rows(shard, declared: int):
    """The rows a prototype release reads: the node's training rows, or, on a declared catalogue that
    leaves its own items out, the catalogue's columns (its first ``declared``) without the entries its
    round 2 validates on, as in process — so that the release is shaped by the public catalogue, never
    by the node's own items."""
    if declared == shard.train.shape[1]:
        return shard.train
    from dpfed_core.models.blend import released_rows

    return released_rows(shard.train)[:, :declared].tocsr()


@app.query("round1")
def round1(msg: Message, context: Context) -> Message:
    """Round 1 of a prototype method: this entity's prototypes."""
    try:
        config, H, shard = _instructions(context, msg.content["config"])
        _require_accepted(context, msg.content["config"])
        t0 = time.perf_counter()
        # what the coordinator asked for is checked before the stage is claimed: a request that draws
        # nothing marks nothing drawn (the run's charge can still be given back)
        method = node_method(config, shard.value_max)  # as the decision built it
        X1 = _prototype_rows(shard, _declared_size(msg.content["config"], shard))
        _require_accepted(context, msg.content["config"], "round1", shard)
        private = bool(getattr(method, "private", False))
        rng = _entity_rngs(config, private, H)[shard.index]
        eps, dlt = (config.epsilon, config.delta) if private else (math.inf, 0.0)
        release, rows = release_prototypes(method, X1, rng, shard.entity, eps, dlt)
        arrays = {"prototypes": Array(np.ascontiguousarray(release.prototypes, dtype=np.float64))}
        if config.server_weighting == "counts":
            if release.counts is None:
                raise DpfedError(f"prototype method {config.method!r} releases no cluster sizes; "
                                 "use --server-weighting none")
            arrays["counts"] = Array(np.ascontiguousarray(release.counts, dtype=np.float64))
        _remember_seconds(context, "release_seconds", time.perf_counter() - t0)
        meta = {**_identity(shard), "ledger": ledger_rows_to_json(rows), "note": release.note}
        reply = Message(RecordDict({"release": ArrayRecord(arrays), "meta": ConfigRecord(meta)}), reply_to=msg)
        _log_release(context, shard, config, "round 1 (prototypes)", rows, [a.shape for a in arrays.values()],
                     message_bytes(reply))
        return reply
    except Exception as exc:
        return _error_reply(msg, exc, "round 1")


def _summable_rng(config, H: int, index: int, context: Context) -> np.random.Generator:
    """The entity's stream of a summable run, continued across messages (see the module doc)."""
    rng = _entity_rngs(config, True, H)[index]
    if isinstance(rng, SecureGenerator):
        return rng  # OS entropy: nothing to continue, nothing kept
    kept = context.state.config_records.get(RNG_KEY)
    if kept is not None:
        rng.bit_generator.state = loads(str(kept["state"]))
    return rng


def _keep_rng(rng: np.random.Generator, context: Context) -> None:
    if not isinstance(rng, SecureGenerator):
        context.state.config_records[RNG_KEY] = ConfigRecord({"state": dumps(rng.bit_generator.state)})


def site_policy_mod(msg: Message, context: Context, call_next) -> Message:
    """Before SecAgg+ handles a message: every stage needs this run's acceptance, the setup's
    parameters (participants, share count, threshold) must fit the site's ``max_dropouts``, and the
    unmasking must not ask for both key shares of one node (:func:`site_policy.check_unmask`)."""
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key, Stage

    if msg.metadata.message_type == "train" and RECORD_KEY_CONFIGS in msg.content.config_records:
        kept = context.state.config_records.get(ACCEPTED_KEY)
        try:
            if kept is None:
                raise site_policy.PolicyRefused("accepted_request", "the coordinator started a secure sum before this "
                                                "site accepted the run's request; nothing was drawn")
            configs = msg.content.config_records[RECORD_KEY_CONFIGS]
            if configs.get(Key.STAGE) == Stage.SETUP:
                site_policy.check_secagg(_policy(context), int(kept["n-entities"]), int(configs[Key.SAMPLE_NUMBER]),
                                         int(configs[Key.SHARE_NUMBER]), int(configs[Key.THRESHOLD]),
                                         config_from_json(str(kept["config"])).max_dropouts)
            elif configs.get(Key.STAGE) == Stage.UNMASK:
                site_policy.check_unmask(_policy(context), msg.metadata.dst_node_id,
                                         list(configs[Key.ACTIVE_NODE_ID_LIST]), list(configs[Key.DEAD_NODE_ID_LIST]),
                                         config_from_json(str(kept["config"])).max_dropouts)
        except site_policy.PolicyRefused as exc:
            _site_log(f"run {context.run_id}: {exc}")
            raise
    return call_next(msg, context)


@app.train(mods=[site_policy_mod, secaggplus_mod])
def secure_share(msg: Message, context: Context) -> Message:
    """Round 1 of a summable method: this entity's share of one stage, handed to SecAgg+ for masking.

    A failure here is a ClientApp exception (SecAgg+ has no error reply) whose text Flower sends to the
    server: stated in public terms (:func:`_public`). The ServerApp reports its reason when the secure
    sum ends short of this node."""
    try:
        return _secure_share(msg, context)
    except Exception as exc:
        raise _public(exc, f"run {context.run_id}: secure sum") from None


def _secure_share(msg: Message, context: Context) -> Message:
    from flwr.common import Code, FitRes, Status, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    fitins = compat.recorddict_to_fitins(msg.content, keep_input=True)
    config, H, shard = _instructions(context, fitins.config)
    _require_accepted(context, fitins.config)
    if PUBLIC_FIELD in fitins.config:  # the previous stage's public result, carried by these instructions
        _store_public(context, str(fitins.config.get(PUBLIC_AFTER_FIELD, "")),
                      unpack_arrays(fitins.config[PUBLIC_FIELD]))
    t0 = time.perf_counter()
    secure_catalogue = _secure_catalogue(fitins.config)
    method = _method(config, shard, context, secure_catalogue, H)
    stage = str(fitins.config.get("stage", method.stages[0]))
    group = stage.split(SUM_OF_STAGES)  # one secure sum may carry consecutive stages (fused_stages)
    first = CATALOGUE_STAGE if secure_catalogue else method.stages[0]
    _require_accepted(context, fitins.config, group, claim=False)  # a stage released before is that refusal
    # Every check of what the coordinator asked for (the stages, their public inputs, the catalogue's
    # size) comes before the stages are claimed in the site's store: a request refused here draws
    # nothing, so it marks nothing drawn and the run's charge can still be given back.
    X = None
    if stage == CATALOGUE_STAGE:
        if not secure_catalogue:
            raise DpfedError("the server asked for a catalogue share in a run with a declared item catalogue")
        _item_names(shard)
    else:
        unknown = [s for s in group if s not in method.stages]
        if unknown:
            raise DpfedError(f"{config.method} has stages {', '.join(method.stages)}; the server asked for {stage!r}")
        public = {}
        if PUBLIC_KEY in context.state.array_records:
            public = {k: a.numpy() for k, a in context.state.array_records[PUBLIC_KEY].items()}
        missing = [k for k in stage_public_keys(method) if group[0] != method.stages[0] and k not in public]
        if missing:
            raise DpfedError(f"stage {group[0]!r} reached this node before the public {', '.join(missing)} of the "
                             "previous stage")
        X = _on_keys(shard, context, secure_catalogue,
                     None if secure_catalogue else _declared_size(fitins.config, shard))
        if len(group) > 1 and tuple(group) not in fused_stages(method, X.shape[1]):
            # the server fused stages this node's catalogue (public: its declared size or the released
            # keys) does not let it fix ahead
            raise DpfedError(f"{shard.entity}: the server asked for the stages {stage!r} in one secure sum, but with "
                             f"the run's {X.shape[1]} items their inputs are not known ahead")
    # claimed by the stages the share draws (a missing stage field is the first stage; a fused label
    # names each of its stages), before anything is drawn; from here on a stage stays marked drawn
    _require_accepted(context, fitins.config, group, shard)
    if X is None:
        values, rows_now, coalition = _catalogue_share(config, H, shard)
        note = ""
    else:
        rng = _summable_rng(config, H, shard.index, context)
        ledger = PrivacyLedger(config.epsilon, config.delta if math.isfinite(config.epsilon) else 0.0)
        parts, coalition, note = [], math.inf, ""
        for s_, inputs in fused_inputs(method, group, X.shape[1], public):
            share = stage_share(method, X, rng, ledger.for_entity(shard.entity), H, s_, inputs)
            parts.append(share.values)
            coalition, note = share.coalition_epsilon, share.note
        values = parts[0] if len(parts) == 1 else np.concatenate(parts)
        rows_now = ledger.rows
        _keep_rng(rng, context)  # the method's stream only: the catalogue's is its own
    _target, _modulus, clip = secagg_ranges(H)
    if not np.all(np.isfinite(values)):
        # SecAgg+ would quantise a NaN or ±∞ to some integer and the sum every site is sent would be
        # wrong without a word (a NaN also passes the range check below)
        raise DpfedError(f"{shard.entity}: the {config.method} {stage} share has entries that are not finite "
                         "numbers; the secure sum cannot carry it (fix the method's share, or choose another "
                         "method)")
    peak = float(np.max(np.abs(values))) if values.size else 0.0
    if peak > clip:
        # SecAgg+ would clip this entry silently and the sum would be wrong: refuse instead. The error
        # reaches the server, so it names the range, never the entry: one site's share carries only
        # σ/√H of the noise and is meant to be seen inside the sum only.
        _site_log(f"{shard.entity}: run {context.run_id}: a {stage} share entry of {peak:.4g} is beyond ±{clip:.4g}")
        raise DpfedError(f"{shard.entity}: a {stage} share entry is beyond SecAgg+'s range ±{clip:.4g} for {H} "
                         f"entities (2³² modulus, grid {GRID:g}); the secure sum cannot carry it")
    kept = context.state.config_records.get(STATE_KEY)
    rows = (loads(str(kept["ledger"])) if kept is not None and group[0] != first else [])
    rows += loads(ledger_rows_to_json(rows_now))
    run_coalition = _run_coalition(config, H, method, secure_catalogue, stage, rows, coalition)
    policy = _policy(context)
    if math.isfinite(policy.max_coalition_epsilon):
        try:
            site_policy.check_coalition(policy, run_coalition[0], stage)
        except site_policy.PolicyRefused as exc:
            site_policy.SiteLog(_run_store(context, policy, shard.entity)).add(
                run=str(context.run_id), coordinator=_coordinator(context), entity=shard.entity, method=config.method,
                stage=f"secure sum [{stage}]", decision="refused", epsilon=0.0, delta=0.0, rule=exc.rule, note=str(exc))
            # the share never left and the refusal reads public parameters only: its stages are not
            # drawn as far as a withdrawal is concerned (the run's charge can be given back)
            site_policy.unclaim_draw(policy, shard.entity, group, run=str(context.run_id),
                                     coordinator=_coordinator(context), store=_run_store(context, policy, shard.entity))
            raise
    context.state.config_records[STATE_KEY] = ConfigRecord({
        "ledger": dumps(rows), "note": note, "coalition_epsilon": dumps(coalition)})
    _remember_seconds(context, "release_seconds", time.perf_counter() - t0, add=group[0] != first)
    fitres = FitRes(Status(Code.OK, ""), ndarrays_to_parameters([values]), 1, {})
    reply = Message(compat.fitres_to_recorddict(fitres, keep_input=False), reply_to=msg)
    _log_release(context, shard, config, f"secure sum [{stage}]", rows_now, [values.shape], message_bytes(reply),
                 coalition=run_coalition)
    return reply


def _run_coalition(config, H: int, method, secure_catalogue: bool, stage: str, rows: list[dict],
                   coalition: float) -> tuple[float, float, str]:
    """``(ε, δ, composition)`` of this site's people against the server colluding with every other site,
    for the run as planned: the shares so far and the method's stages still to come at their planned ρ
    (the catalogue's share counts them too), so a ``max_coalition_epsilon`` stops the run's first share.
    ``rows``: the site's ledger rows of the run with this share's; ``coalition``: the method's own
    statement of its shares. After a federation-wide catalogue's share the figure is the coordinator's
    (:func:`~dpfed_core.evaluation.catalogue_run.entity_coalition`: zCDP, ρ of every share adds up and is
    converted once at the run's δ; basic composition only where a share has no ρ), never the two
    ε summed."""
    from dpfed_core.evaluation.catalogue_run import entity_coalition
    from dpfed_core.privacy.ledger import ZCDP

    split = method.budget_split()
    if not secure_catalogue:  # the method's statement: its stages composed by its plan's zCDP
        how = ("one share, no composition" if split is None else ZCDP if getattr(method, "zcdp_budget", False)
               else "the method's own composition of its shares")
        return float(coalition), float(method.delta), how
    rhos = [r.get("rho") for r in rows]
    # the method's stages drawn so far; a one-stage method's row is named by its release, not its stage
    drawn = set() if stage == CATALOGUE_STAGE else {r["stage"] for r in rows} | {method.stages[0]}
    planned = _planned_rhos(method, drawn)
    if stage == CATALOGUE_STAGE:
        if planned is None:  # a method whose shares have no planned ρ: its ε is known at its first share
            eps, dlt, how = entity_coalition(config, H, None, rhos)
            return eps, dlt, f"{how}; the selection's share only, the method's shares are counted at its first"
        # the method's shares still to come at their planned ρ: a cap that its first share would break
        # stops this share instead, before the catalogue's noise is spent on a run the site will refuse
        return entity_coalition(config, H, None, rhos + planned)
    return entity_coalition(config, H, float(coalition), rhos + (planned or []))


def _planned_rhos(method, drawn: set[str]) -> list[float] | None:
    """The ρ of the method's stages not in ``drawn`` (the stages this site drew in this run), each at its
    planned share of the method's budget — an upper bound of what its row will record
    (a one-stage release at the whole ρ(ε, δ) of :func:`~dpfed_core.privacy.mechanisms.gaussian_sigma`);
    None for a method that does not plan its shares' ρ (``zcdp_budget`` unset)."""
    from dpfed_core.privacy.noise import zcdp_rho_for_epsilon

    if not getattr(method, "zcdp_budget", False):
        return None
    if not math.isfinite(float(method.epsilon)):
        return []
    split = method.budget_split()
    rho = ({method.stages[0]: zcdp_rho_for_epsilon(float(method.epsilon), float(method.delta))} if split is None
           else split.plan(float(method.epsilon), float(method.delta)).rho)
    return [r for s, r in rho.items() if s not in drawn]


def _check_catalogue_keys(keys) -> None:
    """The released catalogue keys the coordinator broadcast: distinct whole bucket numbers within the
    public bucket count. A negative key would wrap onto the last buckets (NumPy indexing) and mark
    this site's items there released though no threshold released them; a repeated one would give
    two of V's rows one bucket."""
    from dpfed_core.privacy import catalogue as cat

    k = np.asarray(keys) if keys is not None else None
    n = cat.SECURE_CATALOGUE_BUCKETS
    if (k is None or k.ndim != 1 or not (np.issubdtype(k.dtype, np.integer) or k.size == 0)
            or np.any(k < 0) or np.any(k >= n) or np.unique(k).size != k.size):
        raise DpfedError(f"the broadcast catalogue keys are not distinct bucket numbers 0…{n - 1}; nothing of "
                         "them was used (the coordinator's catalogue step is faulty)")


def _store_public(context: Context, after: str, arrays: dict) -> None:
    """Keep the public result of stage ``after`` that a later step reads. The catalogue's released
    keys are kept apart: a later stage's public result replaces PUBLIC_KEY."""
    if after == CATALOGUE_STAGE:
        _check_catalogue_keys(arrays.get("keys"))
    context.state.array_records[CATALOGUE_KEY if after == CATALOGUE_STAGE else PUBLIC_KEY] = ArrayRecord(
        {k: Array(np.ascontiguousarray(a)) for k, a in arrays.items()})


@app.query("public")
def public_result(msg: Message, context: Context) -> Message:
    """A public result sent on its own (when no secure sum follows to carry it): keep it."""
    try:
        after = str(msg.content["config"]["after-stage"]) if "config" in msg.content.keys() else ""
        _store_public(context, after, {k: a.numpy() for k, a in msg.content["public"].items()})
        return Message(RecordDict({"ack": ConfigRecord({"stored": sorted(msg.content["public"].keys())})}),
                       reply_to=msg)
    except Exception as exc:
        return _error_reply(msg, exc, "public result")


def _own_items_round2(context: Context, config, shard, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Round 2 of a prototype method on a declared catalogue that leaves this node's own items out: V
    on its declared columns (public names, every one known), a zero row for each of its own items, and
    the node's site model by the routine of ``local`` (its own NMF, popularity and public features
    beside the federation's factors, weights on its local hold-out), as in process. The columns are
    this node's own, never sent."""
    from dpfed_core.models.blend import blend_columns, fit_site_model

    _, _, info = fit_site_model(shard.train, rank=config.rank, lam=config.lam, mode=config.mode,
                                max_iter=config.max_iter, rng=None, features=_item_features(context, shard),
                                V_fed=_own_items_padded(V, shard), known_only=False)
    return blend_columns(info)


def _broadcast_V(V: np.ndarray, rec, shard, context: Context) -> np.ndarray:
    """The broadcast V, checked against the run's public catalogue before anything reads it: one row per
    released key (a federation-wide catalogue) or per declared item, finite. A V of another shape would
    fail inside the fit with a message that counts this node's own items; the coordinator is told what is
    wrong in public terms instead."""
    if _secure_catalogue(rec):
        if CATALOGUE_KEY not in context.state.array_records:
            raise DpfedError(f"{shard.entity}: round 2 reached this node before the released catalogue keys")
        rows, of = int(context.state.array_records[CATALOGUE_KEY]["keys"].numpy().size), "released catalogue keys"
    else:
        rows, of = _declared_size(rec, shard), "items in its declared catalogue"
    V = np.asarray(V)
    if V.ndim != 2 or V.shape[0] != rows or V.shape[1] < 1:
        raise DpfedError(f"the broadcast V has shape {V.shape}; the run has {rows} {of}, one row each")
    if not np.issubdtype(V.dtype, np.number) or not np.all(np.isfinite(V)):
        raise DpfedError("the broadcast V has entries that are not finite numbers")
    return V.astype(np.float64, copy=False)


@app.query("round2")
def round2(msg: Message, context: Context) -> Message:
    """Round 2: fit U_h on V locally, reply with evaluation sums only."""
    try:
        config, H, shard = _instructions(context, msg.content["config"])
        _require_accepted(context, msg.content["config"])
        V = _broadcast_V(msg.content["model"]["V"].numpy(), msg.content["config"], shard, context)
        t0 = time.perf_counter()
        if config.method in SUMMABLE_METHODS:
            secure_catalogue = _secure_catalogue(msg.content["config"])
            method = _method(config, shard, context, secure_catalogue)
            rng = _summable_rng(config, H, shard.index, context)
            if secure_catalogue and V.shape[0] == 0:
                # no bucket passed the catalogue's threshold: the federation shares nothing, the node keeps
                # its own model (or, without own parts, every score is 0) — as in process
                from dpfed_core.federation.summable import own_round2

                own = own_round2(method, shard.train, config.lam, config.mode, rng)
                width = max(int(config.rank), 1)
                U, V = own if own is not None else (np.zeros((shard.train.shape[0], width)),
                                                     np.zeros((shard.train.shape[1], width)))
            else:
                if secure_catalogue:
                    # the broadcast V (one row per released key) on this node's own items: round 2 scores
                    # every item the node has rows for, not only the shared ones
                    from dpfed_core.models.shared_items import known_items
                    from dpfed_core.privacy.catalogue import on_item_axis

                    V = on_item_axis(V, _item_keys(shard, context))
                    V[~known_items(shard.train)] = 0.0  # only the item names this node knows
                elif V.shape[0] < shard.train.shape[1]:  # a declared catalogue leaving its own items out
                    V = _own_items_padded(V, shard)
                # the one round-2 assembly: columns from this entity's own data only are used here, never sent
                U, V = fit_local(method, shard.train, V, config.lam, config.mode, rng, known_only=secure_catalogue)
        elif V.shape[0] < shard.train.shape[1]:
            U, V = _own_items_round2(context, config, shard, V)
        else:
            U = fit_rows_given(shard.train, V, config.lam, config.mode)
        fit_seconds = time.perf_counter() - t0
        # This node's own evaluator (installed here), on this node's held-out entries; the result
        # goes to this node's disk only.
        stats = entity_statistics(U, V, shard.train, shard.test, shard.test_users, config.mode, config.top_n)
        seconds = _seconds(context)
        _write_report(context, shard, {"stats": stats, "release_seconds": seconds.get("release_seconds", 0.0),
                                       "round2_fit_seconds": fit_seconds})
        meta = _identity(shard)
        if config.method in SUMMABLE_METHODS:
            kept = context.state.config_records.get(STATE_KEY)
            if kept is None:
                raise DpfedError("round 2 of a summable method reached a node that sent no share")
            meta.update({"ledger": str(kept["ledger"]), "note": str(kept["note"]),
                         "coalition_epsilon": str(kept["coalition_epsilon"])})
        return Message(RecordDict({"meta": ConfigRecord(meta)}), reply_to=msg)
    except Exception as exc:
        return _error_reply(msg, exc, "round 2")


