"""The one protocol of summable methods (``dp-popularity``, ``dp-cooccurrence`` and any method
registered with :func:`~dpfed_core.federation.summable.register_summable_method`), shared by the
in-process estimator (:class:`~dpfed_core.federation.protocol.FederatedRecommender`), the Flower
deployment and the privacy audit. Nothing here knows a method's keys: what is broadcast between two
secure sums is the method's declared ``public_keys``, the notes are the method's own
(:meth:`~dpfed_core.federation.summable.SummableMethod.notes`), and round 2 is assembled once
(:func:`fit_entity`).

Round 1, stage by stage: every entity computes its share (:meth:`share`, spending through its
ledger view); the server learns the sum (formed in memory here; by SecAgg+ in a deployment) and
calls the method's ``combine``; the public result's declared keys are broadcast before the next
stage. Round 2: the final ``public["V"]`` is broadcast; each entity fits its own factors with
:func:`fit_entity` — nothing further leaves it.
"""
from __future__ import annotations

import math
import os
from dataclasses import asdict
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core.federation.messages import SERVER, Message, array_message
from dpfed_core.federation.summable import (GRID, KNOWN_ONLY, fused_stages, release_words, rounding_covered,
                                            share_grid_steps)
from dpfed_core.models.entity_factors import EntityFactors, LocalColumns
from dpfed_core.models.shared_items import SharedItems
from dpfed_core.privacy.ledger import EntityLedger, PrivacyLedger
from dpfed_core.privacy.noise import PooledGenerator, is_simulation, pooled_streams
from dpfed_core.privacy.statement import epsilon_that_holds

IN_PROCESS_NOTE = ("in-process run: the sum of the entities' shares is formed in this process; the "
                   "guarantee against the server assumes secure aggregation (deploy-local / Flower SecAgg+)")
NO_SECAGG_NOTE = ("no secure aggregation: every entity adds the full noise to its own "
                  "release and the server sees each release")

NOISE_ONCE_NOTE = ("each secure sum's noise drawn once in this process: OpenDP's Gaussian on the sum of the "
                   "entities' exact shares, of the variance their noise shares would add up to (≥ σ²; no share "
                   "leaves the process); a deployment draws one noise share per entity, and the ε against the "
                   "server with all other entities is what those shares give when deployed")

EventFn = Callable[..., None]


def run_stages(method, matrices: Sequence[sp.csr_matrix], rngs: Sequence[np.random.Generator],
               ledgers: Sequence[EntityLedger], server_rng: np.random.Generator, *,
               final_combine: bool = True, on_event: EventFn | None = None,
               keep_shares: bool = True, n_jobs: int = 1, noise_once: bool = False) -> tuple[dict, dict]:
    """Round 1 of a summable method: for every stage, each entity's share, their sum, and the
    server's ``combine`` → the public result broadcast before the next stage.

    matrices : per entity its training rows (n_h × m); rngs, ledgers : per entity its noise stream
    and ledger view; server_rng : the server's stream (``combine``).
    final_combine : run the server step after the last stage (False: the audit needs only the
    releases, not V). on_event(event, stage, h=, share=, public=) with events ``stage_start``,
    ``share_start``, ``share_done``, ``server_start``, ``server_done``.

    Returns ``(public, sums)``: ``sums[stage]`` the sum of the shares (the stage's vector),
    ``sums[(stage, "shares")]`` the per-entity :class:`SummableShare` list and
    ``sums[(stage, "public")]`` the public dict the entities made that stage's shares with.
    ``keep_shares=False``: the share lists are not kept (each share's values are dropped once added:
    H vectors of the catalogue's length per stage are O(items × entities)).
    ``n_jobs`` > 1 (−1: every core): a stage's shares are computed that many at a time in threads,
    each spent on a ledger of its own holding the entity's rows so far (every check the one the run's
    ledger would make), its rows then spent on the run's ledger — which checks them again — and the
    shares summed in entity order: the same ledger rows, in the same order, and the same sums as one
    at a time.
    ``noise_once``: this process forms every sum itself, so each release's exact shares are summed
    and the sum gets one Gaussian draw (:class:`~dpfed_core.privacy.noise.SumNoise`, on the entities'
    production streams: every share but the last is zeros, the last the noisy sum — rounded to the
    grid, post-processing); every entity's ledger rows are the same as without it. Only for a method
    whose ``noise_drawn_for_the_sum`` says its shares allow it.
    """
    H = len(matrices)
    ev = on_event or (lambda *a, **k: None)
    public: dict = {"n_entities": H}
    out: dict = {}
    stages = tuple(method.stages)
    for stage in stages:
        ev("stage_start", stage)
        total = None
        shares = []
        streams = sum_noise_streams(method, rngs, H) if noise_once else rngs
        for h, share in _shares(method, matrices, streams, ledgers, H, stage, public, n_jobs, ev):
            total = share.values.copy() if total is None else total + share.values
            ev("share_done", stage, h=h, share=share)
            if keep_shares:
                shares.append(share)
            del share
        if noise_once and H:
            streams[0].sum_noise.check_complete()
        out[stage] = total
        out[(stage, "shares")] = shares
        out[(stage, "public")] = public  # what the entities saw when they made this stage's shares
        if stage != stages[-1] or final_combine:
            ev("server_start", stage)
            public = method.combine(stage, total, public, server_rng, H)
            ev("server_done", stage, public=public)
    return public, out


def sum_noise_streams(method, rngs: Sequence[np.random.Generator], n_shares: int) -> list[PooledGenerator]:
    """The entities' streams for one release whose noise is drawn once for the sum of its
    ``n_shares`` shares (one :class:`~dpfed_core.privacy.noise.SumNoise` between them; each stream
    keeps its own state for every other random choice)."""
    if not getattr(method, "noise_drawn_for_the_sum", False):
        raise ValueError(f"{method.name}'s shares do not say their noise may be drawn once for the sum")
    return pooled_streams(rngs[:n_shares])


def _workers(n_jobs: int, tasks: int) -> int:
    """Threads for ``tasks`` independent entities at ``n_jobs`` (−1: every core)."""
    return min(tasks, os.cpu_count() or 1) if n_jobs == -1 else min(tasks, max(int(n_jobs), 1))


def _in_order(fn: Callable[[int], object], n: int, workers: int, started: Callable[[int], None]):
    """``(h, fn(h))`` for h = 0 … n − 1 in that order, ``workers`` of them at a time in threads (at
    most that many ahead of the one yielded: each holds an entity's result); ``started(h)`` on the
    caller's thread before each starts. One worker: a plain loop."""
    if workers <= 1:
        for h in range(n):
            started(h)
            yield h, fn(h)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {}
        for h in range(n):
            started(h)
            futures[h] = pool.submit(fn, h)
            if h >= workers:
                yield h - workers, futures.pop(h - workers).result()
        for j in sorted(futures):
            yield j, futures.pop(j).result()


def _shares(method, matrices, rngs, ledgers: Sequence[EntityLedger], H: int, stage: str, public: dict,
            n_jobs: int, ev: EventFn):
    """``(h, share)`` of every entity for one stage, in entity order (see :func:`run_stages`)."""
    workers = _workers(n_jobs, H)

    def direct(h: int):
        return method.share(matrices[h], rngs[h], ledgers[h], H, stage=stage, public=public), ()

    # in threads, a share is spent on a ledger of its own holding the entity's rows so far (read here,
    # on the caller's thread: the run's ledger is only ever read and spent on by this thread)
    before = [led.ledger.rows_of(led.entity) for led in ledgers] if workers > 1 else []

    def staged(h: int):
        own = PrivacyLedger(ledgers[h].epsilon, ledgers[h].delta)
        for row in before[h]:
            own.spend(**asdict(row))
        share = method.share(matrices[h], rngs[h], own.for_entity(ledgers[h].entity), H, stage=stage,
                             public=public)
        return share, own.rows[len(before[h]):]

    for h, (share, rows) in _in_order(direct if workers <= 1 else staged, H, workers,
                                      lambda h: ev("share_start", stage, h=h)):
        for row in rows:
            ledgers[h].ledger.spend(**asdict(row))
        yield h, share


def broadcast_between_stages(method, public: dict) -> dict[str, np.ndarray]:
    """What the server sends every entity after a non-final stage: exactly the method's declared
    ``public_keys`` present in ``public`` (public post-processing of the sums)."""
    return {k: np.asarray(public[k]) for k in method.public_keys if k in public}


def fit_entity(method, X_h: sp.csr_matrix, public: dict, lam: float, mode: str,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Round 2 on one entity, assembled once for every caller (in-process and on a node).

    Returns ``(U_h, V_h)``: the entity's scores are ``U_h @ V_h.T``, where ``V_h`` is the broadcast
    ``public["V"]`` followed by any columns the entity computed from its own data only
    (``fit_local``'s ``L_h``: never sent anywhere)."""
    U, local = fit_entity_parts(method, X_h, public, lam, mode, rng)
    V = np.asarray(public["V"], dtype=np.float64)
    if local is None:
        return U, V
    return np.hstack([U, local.U]), np.hstack([V, local.dense(V.shape[0])])


def fit_entity_parts(method, X_h: sp.csr_matrix, public: dict, lam: float, mode: str,
                     rng: np.random.Generator) -> tuple[np.ndarray, LocalColumns | None]:
    """Round 2 on one entity as ``(U_h on the broadcast V, the entity's own columns or None)``
    (see :func:`fit_entity`): the own columns kept sparse in items at once, never stacked beside a
    copy of V (O(items × rank) less per entity on a large catalogue)."""
    U, L_h, U_loc = method.fit_local(X_h, public, lam, mode, rng)
    return U, (None if L_h is None else LocalColumns.from_dense(U_loc, L_h))


def with_shared_columns(U_h: np.ndarray, V_h: np.ndarray, own: LocalColumns | None) -> LocalColumns:
    """An entity's columns on the federation's item factors as it mapped them (``V_h``, zero off the
    item names it knows) followed by its own columns, as one :class:`LocalColumns` (sparse in items)."""
    if own is None:
        return LocalColumns.from_dense(U_h, V_h)
    return LocalColumns.from_dense(np.hstack([U_h, own.U]), np.hstack([V_h, own.dense(V_h.shape[0])]))


def noise_drawn_once(method, rngs: Sequence[np.random.Generator]) -> bool:
    """Whether an in-process run draws each release's noise once for the sum
    (:func:`run_stages`' ``noise_once``): a private run under secure aggregation (only the sum is
    meant to be seen; without it each entity's release is, and carries its own full noise) with
    production noise (every entity's stream a :class:`~dpfed_core.privacy.noise.SecureGenerator`) of a
    method whose shares allow it. In simulation the shares keep their own seeded draws, so that an
    in-process sum equals a deployed one bit for bit."""
    return (method.aggregation == "secure" and math.isfinite(float(method.epsilon))
            and bool(getattr(method, "noise_drawn_for_the_sum", False))
            and len(rngs) > 0 and not any(is_simulation(r) for r in rngs))


def trust_record(method, ledger: PrivacyLedger, coalition_epsilons: Sequence[float], *,
                 in_process: bool, noise_once: bool = False) -> dict:
    """The trust model of a summable run and both guarantees: against the server (the ledger's),
    and the weaker one each entity's own noise share gives against the server colluding with every
    other entity (equal to the first without secure aggregation). ``noise_once``: the run drew each
    sum's noise once (:func:`run_stages`): the only value rounded here is the noisy sum, post-processing;
    what a deployment of the same settings would round — each entity's share — is recorded as
    ``rounding_as_deployed``, beside the coalition figure that is already stated as deployed."""
    secure = method.aggregation == "secure"
    eps, dlt = ledger.guarantee()
    private = math.isfinite(float(method.epsilon))
    coal = max(coalition_epsilons, default=math.inf) if private else math.inf
    if secure:
        how = ("formed in this process (the cryptographic secure sum runs in the Flower deployment)" if in_process
               else "formed by Flower's SecAgg+ (the server holds masked vectors and their sum only)")
    else:
        how = "no secure sum: the server sees every entity's release"
    out = {"aggregation": method.aggregation, "max_dropouts": int(method.max_dropouts) if secure else 0,
           "in_process": bool(in_process), "sum": how,
           "against_server": {"epsilon": eps, "delta": dlt},
           "against_server_and_other_entities": {"epsilon": coal if secure else eps, "delta": dlt}}
    if noise_once:
        out["noise"] = NOISE_ONCE_NOTE
        # no entity's share carried noise of its own in this process: the figure is what a deployment gives
        out["against_server_and_other_entities"]["as_deployed"] = True
    if secure and private:
        H = len(ledger.entities())
        steps = share_grid_steps(ledger.rows, method.share_divisor(H), method.noise_spread) if H else math.inf
        if math.isfinite(steps):
            out[rounding_key(out)] = rounding_record(steps, H, eps, dlt)
    return out


def rounding_key(trust: dict) -> str:
    """Where a trust record keeps its share rounding: ``rounding`` when this run rounded each share,
    ``rounding_as_deployed`` when it drew each sum's noise once (a deployment would round the shares)."""
    return "rounding_as_deployed" if trust.get("noise") else "rounding"


def rounding_record(grid_steps: float, n_entities: int, epsilon: float, delta: float) -> dict:
    """Each share is rounded before the secure sum: the fewest grid steps of noise a share carried and
    whether that covers the run's (ε, δ) against the server
    (:func:`~dpfed_core.federation.summable.rounding_covered`)."""
    return {"grid": GRID, "grid_steps": float(grid_steps),
            "covered": rounding_covered(grid_steps, n_entities, epsilon, delta)}


def rounding_warning(trust: dict) -> str | None:
    """The run's warning when its shares carried too few grid steps of noise for the argument that
    the rounded secure sum is as private as the noisy sum (:func:`~dpfed_core.federation.summable.
    rounding_covered`): the ε against the server is then not proved; the ε each entity's own share
    gives (rounding one share is post-processing of it) still is. None otherwise."""
    key = rounding_key(trust or {})
    deployed = key == "rounding_as_deployed"
    rounding = (trust or {}).get(key) or {}
    if rounding.get("covered", True):
        return None
    server = epsilon_that_holds(trust["against_server"]["epsilon"])
    own = epsilon_that_holds(trust["against_server_and_other_entities"]["epsilon"])
    steps = (f"to the grid {rounding['grid']:g}, and at this ε a share carries only {rounding['grid_steps']:.3g} "
             "grid steps of noise")
    if deployed:  # this process rounded only the noisy sum: the caveat is a deployment's
        return (f"this run drew each secure sum's noise once and rounded only the noisy sum, so ε = {server} "
                f"against the server holds here; a deployment of these settings rounds each entity's share {steps}: "
                f"there ε = {server} against the server would not be proved, ε = {own} (each entity's own "
                "share) would. Before deploying, lower ε or federate fewer entities per secure sum")
    return (f"each share of the secure sum is rounded before it is summed, {steps}: too few for the argument "
            f"that the rounded sum is as private as the noisy sum, so ε = {server} against the server is not "
            f"proved for this run; what is proved against the server is ε = {own} (each entity's own share). "
            "Lower ε, federate fewer entities per secure sum, or run without secure aggregation (each entity "
            "then adds the full noise to its own release)")


def run_notes(method, public: dict, *, in_process: bool, noise_once: bool = False) -> list[str]:
    """The run's notes: the trust model (and how its noise was drawn), then what the method says of
    its server step."""
    secure = method.aggregation == "secure"
    first = (IN_PROCESS_NOTE if in_process else "secure sums formed by Flower's SecAgg+") if secure else NO_SECAGG_NOTE
    return [first, *([NOISE_ONCE_NOTE] if noise_once else []), *method.notes(public)]


def fit_summable(method, matrices: Sequence[sp.csr_matrix], names: Sequence[str], slices: Sequence[slice],
                 n_users: int, entity_rngs: Sequence[np.random.Generator], ledger: PrivacyLedger,
                 lam: float, mode: str, progress: Callable[..., None], *,
                 site_matrices: Sequence[sp.csr_matrix] | None = None,
                 shared: SharedItems | None = None, n_jobs: int = 1) -> dict:
    """Both rounds of a summable method in this process (the in-process estimator's body).

    ``matrices`` are what the shares are computed from (each entity's rows on the shared catalogue).
    With a catalogue that is not the whole item axis (``shared``, DP-selected or declared and leaving
    items out), ``site_matrices`` are the entities' rows on their own item axis and each site maps the
    broadcast V (one row per shared key) onto it
    (:meth:`~dpfed_core.models.shared_items.SharedItems.site_lift`: every shared item when the catalogue
    is declared, else the names the site holds rows for): round 2 then scores every item the entity has
    rows for, the federation's parts merged in where the catalogue has them.

    ``n_jobs``: round 1 computes this many shares at once and round 2 fits this many sites at once
    (threads; −1: every core; see :func:`run_stages`). The result is the same for any ``n_jobs``:
    each site's share and round 2 read only its rows, its stream and the broadcast. ``n_jobs`` sites'
    round-2 working sets are held at once (their wall time and peak against one job:
    ``bench/results/scale.md``).

    Returns a dict with ``factors`` (an :class:`EntityFactors`: ``U`` on the broadcast ``V`` and each
    entity's own columns apart), ``U``, ``V`` (its shared part), ``public`` (what the
    server broadcast), ``messages`` (every message that crossed a boundary), ``notes``, ``trust``,
    ``secure_sum`` (the last stage's sum) and ``timings``."""
    import time

    H = len(matrices)
    secure = method.aggregation == "secure"
    messages: list[Message] = []
    coalition: list[float] = []
    timings: dict[str, float] = {}
    stages = tuple(method.stages)
    # the stages whose results the server broadcasts before the next sum: a stage fused with the next
    # into one secure sum (its inputs public facts fix ahead) sends nothing between them, as deployed
    n_keys = int(matrices[0].shape[1]) if H else 0
    broadcast_after = {group[-1] for group in fused_stages(method, n_keys)} if H else set(stages)
    t_stage = [0.0]
    t_server = [0.0, 0.0]  # (start of the current server step, server seconds so far)
    t0 = time.perf_counter()

    def on_event(event, stage, h=None, share=None, public=None):
        if event == "stage_start":
            t_stage[0] = time.perf_counter()
        elif event == "share_start":
            progress("round1_start", entity=names[h], index=h, total=H, stage=stage)
        elif event == "share_done":
            what = (f"share of the secure sum ({stage} + noise share)" if secure
                    else f"noisy {release_words(stage)} (full noise)")
            messages.append(array_message(1, names[h], SERVER, what, share.values))
            coalition.append(share.coalition_epsilon)
            progress("round1_done", entity=names[h], index=h, total=H)
        elif event == "server_start":
            progress("server_start", stage=stage)
            t_server[0] = time.perf_counter()
        elif event == "server_done":
            t_server[1] += time.perf_counter() - t_server[0]
            if stage != stages[-1] and stage in broadcast_after:
                for key, arr in broadcast_between_stages(method, public).items():
                    what = f"{method.public_key_labels.get(key, key)} (public, from the {stage} sum)"
                    for name in names:
                        messages.append(array_message(1, SERVER, name, what, arr))
            timings[f"round1_{stage}"] = time.perf_counter() - t_stage[0]

    once = noise_drawn_once(method, entity_rngs[:H])
    public, sums = run_stages(method, matrices, entity_rngs[:H], [ledger.for_entity(n) for n in names],
                              entity_rngs[-1], on_event=on_event, keep_shares=False, n_jobs=n_jobs,
                              noise_once=once)
    V = np.asarray(public["V"], dtype=np.float64)
    # with a DP-selected catalogue V has one row per shared key, not per item
    keys = shared is not None and not shared.public
    progress("server_done", shape=V.shape, keys=keys)
    progress("broadcast", shape=V.shape, receivers=H, keys=keys)
    t1 = time.perf_counter()
    r = V.shape[1]
    rows = matrices if site_matrices is None else site_matrices
    # the scores' shared part on the data's item axis (every known name); each entity fits round 2 on
    # the broadcast V mapped onto the item names it knows (a public map of the released keys)
    V_site = V if shared is None else shared.lift(V)
    U = np.zeros((n_users, r))
    local: list[LocalColumns | None] = [None] * H

    def round2(h: int) -> tuple[np.ndarray | None, LocalColumns | None]:
        """(the entity's U on the broadcast V or None, its own columns) — kept apart and sparse in
        items at once: holding every entity's dense (m × (r + c)) V_h would be
        O(items × entities × rank)."""
        if shared is None:
            return fit_entity_parts(method, rows[h], public, lam, mode, entity_rngs[h])
        # a site maps the released keys back onto the item names it knows only: its federation
        # columns are its own (zero on every other item), kept with its own columns — its rows of the
        # shared U stay zero (scored once, through its own columns)
        X_h = rows[h]  # read once: a split's rows are built when read
        V_h = shared.site_lift(V, X_h)
        U_h, own = fit_entity_parts(method, X_h, {**public, "V": V_h, KNOWN_ONLY: not shared.public}, lam, mode,
                                    entity_rngs[h])
        return None, with_shared_columns(U_h, V_h, own)

    def keep(h: int, out: tuple[np.ndarray | None, LocalColumns | None]) -> None:
        if out[0] is not None:
            U[slices[h]] = out[0]
        local[h] = out[1]

    for h, name in enumerate(names):
        messages.append(array_message(2, SERVER, name, f"item factors V ({method.name})", V))
    # the sites are independent (each its own rows, stream and ledger-free fit): threads, not
    # processes — HALS's sparse products and NumPy's large-array loops release the GIL, and no site's
    # rows are pickled; progress is reported from this thread only, in entity order (a progress bar
    # reads the index)
    for h, out in _in_order(round2, H, _workers(n_jobs, H),
                            lambda h: progress("round2_start", entity=names[h], index=h, total=H)):
        keep(h, out)
        progress("round2_done", entity=names[h], index=h, total=H)
    factors = EntityFactors(U, V_site, slices, local)
    timings["round2_local_fit"] = time.perf_counter() - t1
    timings["round1_total"] = t1 - t0
    # the server's combine steps alone: already inside the round-1 stage timings, so named apart from
    # the prototype methods' ``server_fit`` (a stage of its own there) and never summed with them
    timings["server_combine"] = t_server[1]
    return {"factors": factors, "U": U, "V": V_site, "public": public, "messages": messages,
            "notes": run_notes(method, public, in_process=True, noise_once=once),
            "trust": trust_record(method, ledger, coalition, in_process=True, noise_once=once),
            "secure_sum": sums[stages[-1]], "timings": timings}
