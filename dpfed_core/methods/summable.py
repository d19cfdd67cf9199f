"""Summable-release methods (``dp-popularity``, ``dp-cooccurrence``) run in one process: the
reference the Flower deployment must reproduce (same shares, same sums, same V; see
:mod:`dpfed_core.federation.summable` for the mechanisms and :mod:`dpfed_core.federation.deployment`
for the secure sum on the wire).

Trust model (``RunConfig.aggregation``, CLI ``--aggregation``):

* ``secure`` — each entity adds a share σ/√(H − d) of the noise and the server learns only the sums.
  In this process the sum is formed in memory (no cryptography), so the guarantee against the
  server assumes the secure aggregation that ``deploy-local`` or a Flower deployment provides; the
  run's notes say so. The ledger's notes and ``extra["trust"]`` give both guarantees: against the
  server, and the weaker one each entity's own share gives against the server with all other entities.
* ``none`` — no secure aggregation: each entity adds the full σ to its own release.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..federation.messages import SERVER, Message, array_message
from ..federation.summable import SUMMABLE_METHODS, make_summable_method, summable_params
from ..privacy.ledger import PrivacyLedger
from .registry import METHODS, MethodResult, MethodSpec, register_method

IN_PROCESS_NOTE = ("in-process run: the sum of the entities' shares is formed in this process; the "
                   "guarantee against the server assumes secure aggregation (deploy-local / Flower SecAgg+)")
NO_SECAGG_NOTE = ("no secure aggregation (--aggregation none): every entity adds the full noise to its own "
                  "release and the server sees each release")


class SummableModel:
    """The fitted model of a summable run, for the dashboard and the API: ``recommend`` like the
    prototype protocol's :class:`~dpfed_core.federation.protocol.FederatedRecommender`.

    Attributes: ``U_`` (n_users × r), ``V_`` (n_items × r) — every entity's scores are U_ V_ᵀ (shared
    columns and the entity's own local columns in a block layout); ``public_`` what the server
    broadcast; ``dataset_``, ``X_train_``."""

    def __init__(self, dataset, X_train, U, V, public) -> None:
        self.dataset_ = dataset
        self.X_train_ = X_train
        self.U_ = U
        self.V_ = V
        self.public_ = public

    def predict(self, rows=None) -> np.ndarray:
        U = self.U_ if rows is None else self.U_[rows]
        return U @ self.V_.T

    def recommend(self, entity, user, n: int = 10, exclude_seen: bool = True):
        """Top-``n`` items ``(items, scores)`` for one user (id or position) of one entity."""
        from ..federation.protocol import recommend_from_factors

        return recommend_from_factors(self.dataset_, self.X_train_, self.U_, self.V_, entity, user, n, exclude_seen)


def summable_method_from_config(name: str, config, value_max: float):
    """The summable method of a run configuration (:func:`~dpfed_core.federation.summable.summable_params`:
    the same parameters the Flower deployment uses)."""
    return make_summable_method(name, value_max=value_max, epsilon=config.epsilon, delta=config.delta,
                                **summable_params(config))


def run_stages(method, matrices, rngs, ledgers, server_rng, *, final_combine: bool = True,
               on_event=None) -> tuple[dict, dict]:
    """Round 1 of a summable method: for every stage, each entity's share, their sum, and the
    server's ``combine`` → the public result broadcast before the next stage.

    The one implementation of the stage loop, shared by the in-process runner and the privacy audit
    (which replays it with one entity's data swapped for a neighbouring dataset).

    matrices : per entity its training rows (n_h × m); rngs, ledgers : per entity its noise stream
    and ledger view; server_rng : the server's stream (``combine``).
    final_combine : run the server step after the last stage (False: the audit needs only the
    releases, not V). on_event(event, stage, h=, share=, public=) with events ``stage_start``,
    ``share_start``, ``share_done``, ``server_start``, ``server_done``.

    Returns ``(public, sums)``: ``sums[stage]`` the sum of the shares (m-vector of the stage),
    ``sums[(stage, "shares")]`` the per-entity :class:`SummableShare` list and
    ``sums[(stage, "public")]`` the public dict the entities made that stage's shares with.
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
        for h, X_h in enumerate(matrices):
            ev("share_start", stage, h=h)
            share = method.share(X_h, rngs[h], ledgers[h], H, stage=stage, public=public)
            total = share.values.copy() if total is None else total + share.values
            shares.append(share)
            ev("share_done", stage, h=h, share=share)
        out[stage] = total
        out[(stage, "shares")] = shares
        out[(stage, "public")] = public  # what the entities saw when they made this stage's shares
        if stage != stages[-1] or final_combine:
            ev("server_start", stage)
            public = method.combine(stage, total, public, server_rng, H)
            ev("server_done", stage, public=public)
    return public, out


def _fit_summable(dataset, train, config, rng, progress):
    method = summable_method_from_config(config.method, config, dataset.value_max)
    H = dataset.n_entities
    method.check(H)
    private = math.isfinite(config.epsilon)
    ledger = PrivacyLedger(config.epsilon if private else math.inf, config.delta if private else 0.0)
    # One stream per entity plus one for the server, spawned exactly as the prototype protocol does,
    # so a deployment node reproduces its entity's stream from the seed in simulation mode.
    entity_rngs = rng.spawn(H + 1)
    secure = method.aggregation == "secure"
    t0 = time.perf_counter()
    messages: list[Message] = []
    notes = [IN_PROCESS_NOTE if secure else NO_SECAGG_NOTE]
    shares_c = []
    timings: dict[str, float] = {}
    stages = tuple(method.stages)
    ts = [0.0]

    def on_event(event, stage, h=None, share=None, public=None):
        if event == "stage_start":
            ts[0] = time.perf_counter()
        elif event == "share_start":
            progress("round1_start", entity=dataset.entity_names[h], index=h, total=H, stage=stage)
        elif event == "share_done":
            name = dataset.entity_names[h]
            what = (f"share of the secure sum ({stage} + noise share)" if secure
                    else f"noisy {stage} release (full noise)")
            messages.append(array_message(1, name, SERVER, what, share.values))
            shares_c.append(share.coalition_epsilon)
            progress("round1_done", entity=name, index=h, total=H)  # a share, not prototypes: no shape line
        elif event == "server_start":
            progress("server_start", stage=stage)
        elif event == "server_done":
            if stage != stages[-1] and "items" in public:
                for name in dataset.entity_names:
                    messages.append(array_message(1, SERVER, name, "selected items (from the DP popularity sum)",
                                                  np.asarray(public["items"])))
            timings[f"round1_{stage}"] = time.perf_counter() - ts[0]

    public, sums = run_stages(method, [train[sl] for sl in dataset.entity_slices()], entity_rngs[:H],
                              [ledger.for_entity(name) for name in dataset.entity_names], entity_rngs[-1],
                              on_event=on_event)
    total = sums[stages[-1]]
    V = public["V"]
    progress("server_done", shape=V.shape)
    progress("broadcast", shape=V.shape, receivers=H)
    t1 = time.perf_counter()
    # Round 2: shared columns V plus, per entity, optional columns computed from its own data only;
    # a block layout gives one (U, V) pair whose product is every entity's scores.
    blocks = []
    for h, (name, sl) in enumerate(zip(dataset.entity_names, dataset.entity_slices())):
        messages.append(array_message(2, SERVER, name, f"item factors V ({config.method})", V))
        progress("round2_start", entity=name, index=h, total=H)
        U_h, L_h, U_loc = method.fit_local(train[sl], public, config.lam, config.mode, entity_rngs[h])
        blocks.append((sl, U_h, L_h, U_loc))
        progress("round2_done", entity=name, index=h, total=H)
    extra_cols = [b[2] for b in blocks if b[2] is not None]
    n_extra = sum(c.shape[1] for c in extra_cols)
    U = np.zeros((dataset.n_users, V.shape[1] + n_extra))
    V_big = np.hstack([V, *extra_cols]) if extra_cols else V
    col = V.shape[1]
    for sl, U_h, L_h, U_loc in blocks:
        U[sl, :V.shape[1]] = U_h
        if L_h is not None:
            U[sl, col:col + L_h.shape[1]] = U_loc
            col += L_h.shape[1]
    timings["round2_local_fit"] = time.perf_counter() - t1
    timings["round1_total"] = t1 - t0
    if "kept_directions" in public:
        notes.append(f"server kept {public['kept_directions']} eigen-direction(s) of the co-occurrence sum "
                     f"above the noise edge {public['noise_edge']:.3g}")
    trust = {"aggregation": method.aggregation, "max_dropouts": int(method.max_dropouts) if secure else 0,
             "in_process": True,
             "sum": ("formed in this process (the cryptographic secure sum runs in the Flower deployment)"
                     if secure else "no secure sum: the server sees every entity's release")}
    eps, dlt = ledger.guarantee()
    trust["against_server"] = {"epsilon": eps, "delta": dlt}
    coal = max((c for c in shares_c), default=math.inf) if private else math.inf
    trust["against_server_and_other_entities"] = {"epsilon": coal if secure else eps,
                                                  "delta": dlt}
    model = SummableModel(dataset, train, U, V_big, public)
    return MethodResult(U, V_big, ledger, messages, timings, model=model,
                        extra={"notes": notes, "secure_sum": total, "public": public, "trust": trust})


def register_summable_methods() -> None:
    for name, cls in SUMMABLE_METHODS.items():
        if name in METHODS:
            continue
        register_method(MethodSpec(
            name=name, fit=_fit_summable, label=f"{name} (summable release)",
            privacy="user-level DP (federated, summable release)",
            description=(cls.__doc__ or "").strip().split("\n")[0],
            uses_epsilon=True, uses_k=False,
        ))


register_summable_methods()
