"""The federation protocol (SPEC §1, paper Algorithm 2) with a message log, and the one estimator
of every federated method, :class:`FederatedRecommender`.

Prototype methods (``kmeans``, ``krandom``, ``dp-prototypes``, ``dp-gaussian``, …):

1. Round 1, entity → server: each entity releases k prototypes of its *training* rows (and, only if
   the server weights by them, the released cluster sizes). Every spend is in the ledger.
2. Server: stacks the prototypes and fits P ≈ W Vᵀ (non-negative, ridge λ); keeps V. Post-processing.
3. Round 2, server → entities: V is broadcast; each entity fits U_h ≥ 0 with V fixed on its own
   training rows. Nothing further leaves the entity.

Summable methods (``dp-popularity``, ``dp-cooccurrence``, …) run the secure-sum protocol of
:mod:`dpfed_core.federation.summable_protocol` instead; the estimator is the same.

:func:`build_method` makes the per-entity method object of a :class:`~dpfed_core.config.RunConfig`
— the one factory the estimator, the Flower nodes and server, the CLI and the audit use.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import asdict
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import RunConfig, check_params
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.split import TrainRows, row_block
from dpfed_core.errors import ConfigError
from dpfed_core.models.entity_factors import EntityFactors, as_entity_factors
from dpfed_core.models.factorization import check_mode, fit_nmf, fit_rows_given
from dpfed_core.models.shared_items import SharedItems
from dpfed_core.privacy.ledger import PrivacyLedger, validate_budget
from dpfed_core.privacy.noise import SecureGenerator
from .messages import SERVER, Message, array_message
from dpfed_core.federation.prototypes import PROTOTYPE_METHODS, PrototypeRelease, make_prototype_method
from dpfed_core.federation.summable import SUMMABLE_METHODS, make_summable_method, summable_params

ProgressFn = Callable[..., None]


def as_generator(random_state) -> np.random.Generator:
    """An explicit Generator from an int seed, a SeedSequence or a Generator (never global state)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


from dpfed_core.config import no_progress as _noop  # noqa: E402  (one definition)


#: Parameters every method takes from the run's main controls, and what sets each.
MAIN_CONTROLS = {"k": "k", "value_max": "the data's value bound", "epsilon": "epsilon", "delta": "delta",
                 "aggregation": "aggregation", "max_dropouts": "max_dropouts", "rank": "rank", "lam": "lam",
                 "max_iter": "max_iter", "mode": "mode"}


def federated_method_names() -> list[str]:
    """Every registered federated method (prototype and summable), sorted."""
    return sorted({*PROTOTYPE_METHODS, *SUMMABLE_METHODS})


def method_class(name: str):
    """The class of a registered federated method; a :class:`ConfigError` naming the choices otherwise."""
    cls = PROTOTYPE_METHODS.get(name) or SUMMABLE_METHODS.get(name)
    if cls is None:
        raise ConfigError(f"unknown federated method {name!r}; choose one of {', '.join(federated_method_names())}",
                          param="method")
    return cls


def is_summable(name: str) -> bool:
    """A summable-release method (its releases add up; secure aggregation applies)."""
    return name in SUMMABLE_METHODS


def build_method(config: RunConfig, value_max: float):
    """The per-entity method object of a run configuration: a
    :class:`~dpfed_core.federation.prototypes.PrototypeMethod` or a
    :class:`~dpfed_core.federation.summable.SummableMethod`, its declared parameters checked.

    The one factory used by the estimator, the Flower nodes and server, the CLI's preflight and the
    audit: ``config.params`` (``--param``) reaches every federated method the same way."""
    cls = method_class(config.method)
    params = check_params(cls.parameters, config.params, config.method, reserved=MAIN_CONTROLS)
    if config.method in SUMMABLE_METHODS:
        return make_summable_method(config.method, value_max=value_max, epsilon=config.epsilon,
                                    delta=config.delta, **{**summable_params(config), **params})
    if getattr(cls, "private", False):
        params.update(epsilon=config.epsilon, delta=config.delta)
    return make_prototype_method(config.method, k=config.k, value_max=value_max, **params)


def check_counts(method, server_weighting: str) -> None:
    """A run weighting the server's fit by cluster sizes needs a method that releases them: refused
    before any entity draws (the method declares it, ``releases_counts``). A summable release sends no
    prototypes at all, so a run that asks to weight them would state a setting it never used."""
    if server_weighting == "counts" and is_summable(method.name):
        raise ConfigError(f"{method.name} is a summable release and sends no prototypes to weight; leave "
                          "server_weighting at 'none'", param="server_weighting")
    if server_weighting == "counts" and not getattr(method, "releases_counts", True):
        raise ConfigError(f"prototype method {method.name!r} releases no cluster sizes; use "
                          "server_weighting='none' (--server-weighting none)", param="server_weighting")


def release_entity(method, X_h: sp.csr_matrix, rng: np.random.Generator, entity: str, epsilon: float,
                   delta: float) -> tuple[PrototypeRelease, list]:
    """Round 1 of a prototype method for one entity, on a ledger of its own (ε, δ) (picklable for
    worker processes and used as is by a Flower node). Returns the release and the ledger rows."""
    ledger = PrivacyLedger(epsilon, delta)
    release = method.release(X_h, rng, ledger.for_entity(entity))
    return release, ledger.rows


def check_release(method, release: PrototypeRelease, entity: str, n_columns: int) -> None:
    """Raise :class:`ConfigError` naming the method when one entity's round-1 release is not the message
    the server fits: prototypes k × ``n_columns`` (one column per shared item or key) and cluster sizes,
    when sent, one per prototype. Without it, a plug-in's release of another shape would reach the server's
    fit and fail in round 2 in SciPy's words, or be fitted with the sizes of other prototypes."""
    P = np.asarray(release.prototypes)
    if P.ndim != 2 or P.shape[1] != n_columns:
        raise ConfigError(f"prototype method {method.name!r} sent entity {entity!r} prototypes of shape "
                          f"{tuple(P.shape)}; round 1 must send k rows of {n_columns} columns (one per shared "
                          "item); fix the method's release or choose another method", param="method")
    if release.counts is not None and np.shape(release.counts) != (P.shape[0],):
        raise ConfigError(f"prototype method {method.name!r} sent entity {entity!r} {np.size(release.counts)} "
                          f"cluster sizes for {P.shape[0]} prototypes; it must send one per prototype; fix the "
                          "method's release or choose another method", param="method")


def worker_count(n_jobs: int) -> int:
    """Worker processes for ``n_jobs`` (−1: every core), at most the machine's cores."""
    cores = os.cpu_count() or 1
    return cores if n_jobs == -1 else max(1, min(int(n_jobs), cores))


class FederatedRecommender:
    """One estimator for every federated method (paper Algorithm 2 for prototype methods; the
    secure-sum protocol for summable methods).

    Parameters
    ----------
    method : str
        A registered federated method: a prototype method (``"kmeans"``, ``"krandom"``,
        ``"dp-prototypes"``, ``"dp-gaussian"``) or a summable one (``"dp-popularity"``,
        ``"dp-cooccurrence"``); :func:`federated_method_names` lists them.
    k : int
        Prototypes per entity (prototype methods).
    rank : int
        Latent factors ℓ.
    lam : float
        Ridge penalty λ of the objective (SPEC §1).
    mode : {"zero", "observed"}
        Observation mode of the objective.
    epsilon, delta : float
        Privacy budget per entity (and, by parallel composition, of the run). Ignored — forced to
        ``inf`` and labelled non-private — for non-private methods.
    params : dict, optional
        The method's declared parameters (``--param``; see the method's ``parameters``).
    server_weighting : {"none", "counts"}
        ``"counts"``: entities also release their (noisy, for DP methods) cluster sizes and the
        server weights each prototype's squared error by its size (prototype methods).
    max_iter : int
        Iterations of the server's factorisation.
    n_jobs : int
        Entities are independent in rounds 1 and 2 of a prototype method, so they can run in
        parallel worker processes (joblib; -1 = all cores); a summable method computes that many
        round-1 shares and round-2 sites at once in threads. Results are identical for any
        ``n_jobs``: every entity has its own random stream, spawned before any work starts.
    random_state : int, SeedSequence or Generator, optional
        Seeds the non-private steps (the server's factorisation, non-private prototype methods).
        A DP method never draws its noise from it unless ``simulation`` is set: each entity's
        mechanisms get a fresh stream from the operating system's entropy.
    simulation : bool
        Reproducible DP noise from ``random_state`` for tests and benchmarks. Such a run makes no
        privacy claim and its ledger says so (:data:`~dpfed_core.privacy.noise.SIMULATION_LABEL`).
    aggregation : {"none", "secure"}
        Trust model of summable methods: secure aggregation (each entity adds a share σ/√(H − d) of
        the noise; the server learns only the sums) or none (each adds the full σ).
    max_dropouts : int
        d, entities that may drop out of a secure sum.
    prototypes, prototype_params : aliases of ``method`` and ``params`` (kept for old code); when
        given they win.

    Attributes
    ----------
    V_ : (n_items, r) the item factors the server broadcast.
    U_ : (n_users, r) user factors on ``V_``, each entity's block fitted locally in round 2.
    factors_ : :class:`~dpfed_core.models.entity_factors.EntityFactors` — the scores: ``U_`` on
        ``V_`` plus, for a summable method whose round 2 keeps the entity's own model, each entity's
        own columns (``factors_.entity(h)`` → that entity's ``(U_h, V_h)``). ``U_ @ V_.T`` alone
        is then only the federation's part; :meth:`predict` and :meth:`recommend` use ``factors_``.
    ledger_ : PrivacyLedger
    messages_ : list of Message — everything that crossed an entity's boundary.
    notes_ : list of str. timings_ : dict of seconds per stage.
    releases_ : list of PrototypeRelease (prototype methods: exactly what the server received).
    public_, trust_, secure_sum_ : the broadcast result, trust model and last secure sum (summable).
    """

    def __init__(
        self,
        method: str = "kmeans",
        k: int = 50,
        rank: int = 10,
        lam: float = 0.1,
        mode: str = "zero",
        epsilon: float = math.inf,
        delta: float = 1e-6,
        params: dict | None = None,
        server_weighting: str = "none",
        max_iter: int = 200,
        n_jobs: int = 1,
        random_state=None,
        simulation: bool = False,
        aggregation: str = "none",
        max_dropouts: int = 0,
        prototypes: str | None = None,
        prototype_params: dict | None = None,
    ) -> None:
        self.method = method
        self.k = k
        self.rank = rank
        self.lam = lam
        self.mode = mode
        self.epsilon = epsilon
        self.delta = delta
        self.params = params
        self.server_weighting = server_weighting
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.simulation = simulation
        self.aggregation = aggregation
        self.max_dropouts = max_dropouts
        self.prototypes = prototypes
        self.prototype_params = prototype_params

    @classmethod
    def from_config(cls, config: RunConfig, random_state=None) -> "FederatedRecommender":
        """The estimator of a run configuration (``random_state`` defaults to ``config.seed``)."""
        return cls(method=config.method, k=config.k, rank=config.rank, lam=config.lam, mode=config.mode,
                   epsilon=config.epsilon, delta=config.delta, params=config.params,
                   server_weighting=config.server_weighting, max_iter=config.max_iter, n_jobs=config.n_jobs,
                   random_state=config.seed if random_state is None else random_state,
                   simulation=config.simulation, aggregation=config.aggregation,
                   max_dropouts=config.max_dropouts)

    # ------------------------------------------------------------------ helpers
    def _config(self) -> RunConfig:
        """The estimator's parameters as a run configuration (validated)."""
        name = self.prototypes if self.prototypes is not None else self.method
        params = self.prototype_params if self.prototype_params is not None else self.params
        method_class(name)
        return RunConfig(method=name, k=self.k, rank=self.rank, lam=self.lam, mode=self.mode,
                         epsilon=self.epsilon, delta=self.delta, prototype_params=dict(params or {}),
                         server_weighting=self.server_weighting, max_iter=self.max_iter, n_jobs=self.n_jobs,
                         simulation=bool(self.simulation), aggregation=self.aggregation,
                         max_dropouts=self.max_dropouts)

    def _validate(self) -> RunConfig:
        check_mode(self.mode)
        validate_budget(self.epsilon, self.delta)
        if isinstance(self.rank, bool) or not isinstance(self.rank, (int, np.integer)) or self.rank < 1:
            raise ConfigError(f"rank must be a positive integer, got {self.rank!r}", param="rank")
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ConfigError(f"k (prototypes per entity) must be a positive integer, got {self.k!r}", param="k")
        if not (isinstance(self.lam, (int, float)) and self.lam >= 0 and math.isfinite(self.lam)):
            raise ConfigError(f"λ must be a non-negative number, got {self.lam!r}", param="lam")
        if self.server_weighting not in ("none", "counts"):
            raise ConfigError(f"server_weighting must be 'none' or 'counts', got {self.server_weighting!r}",
                              param="server_weighting")
        return self._config()

    def _map(self, fn, arg_tuples) -> list:
        """Apply ``fn`` to each argument tuple, lazily: an entity's rows are sliced only when its turn
        comes, so the training matrix is never copied whole (entities are streamed)."""
        if self.n_jobs == 1:
            return [fn(*args) for args in arg_tuples]
        from joblib import Parallel, delayed  # deferred: only parallel runs need it

        # never more worker processes than cores: more only thrash, and joblib starts every worker it is
        # asked for, however many; each entity keeps its own stream, so the output does not depend on the count
        return Parallel(n_jobs=worker_count(self.n_jobs))(delayed(fn)(*args) for args in arg_tuples)

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        dataset: FederatedDataset,
        X_train: sp.spmatrix | None = None,
        progress: ProgressFn | None = None,
        shared: SharedItems | None = None,
    ) -> "FederatedRecommender":
        """Run both rounds. ``X_train`` (same shape as ``dataset.X``) replaces the data, e.g. a split's
        training matrix. ``progress(event, **info)`` is called at each step (for live status).

        ``shared``: the catalogue (:class:`~dpfed_core.models.shared_items.SharedItems`) when it is not the
        data's whole item axis — DP-selected when the data declares none, or a declared one that leaves
        some of the data's items out. Round 1 and the server work on the shared keys only (every
        message is shaped by them); round 2 fits each entity on all of its own items, with the
        broadcast V lifted onto them — the catalogue decides what is shared, not what a site knows.
        ``V_`` and ``factors_`` are then on the dataset's item axis; ``public_["V"]`` is what was sent."""
        config = self._validate()
        progress = progress or _noop
        # a split's rows (TrainRows) are read a site's block at a time and never built whole
        X = X_train if isinstance(X_train, TrainRows) else sp.csr_matrix(
            dataset.X if X_train is None else X_train, dtype=np.float64)
        if X.shape != dataset.X.shape:
            raise ConfigError(f"training matrix has shape {X.shape}, the dataset {dataset.X.shape}")
        method = build_method(config, dataset.value_max)
        private = bool(getattr(method, "private", False))
        self.ledger_ = PrivacyLedger(self.epsilon if private else math.inf, self.delta if private else 0.0)
        rng = as_generator(self.random_state)
        entity_rngs = rng.spawn(dataset.n_entities + 1)
        if private and not self.simulation:
            # The mechanisms' noise must be unknown to anyone who knows the (public) seed: each
            # entity gets a SecureGenerator (OS entropy), whose mechanisms sample with OpenDP.
            entity_rngs[:-1] = [SecureGenerator() for _ in range(dataset.n_entities)]
        self.ledger_.simulation = bool(private and self.simulation)
        self.messages_: list[Message] = []
        self.notes_: list[str] = []
        self.timings_: dict[str, float] = {}
        self.releases_: list[PrototypeRelease] = []
        if shared is not None and shared.n_items != X.shape[1]:
            raise ConfigError(f"the shared catalogue maps {shared.n_items} items, the data has {X.shape[1]}")
        if is_summable(config.method):
            self._fit_summable(method, dataset, X, config, entity_rngs, progress, shared)
        else:
            self._fit_prototypes(method, dataset, X, entity_rngs, progress, shared)
        self.dataset_ = dataset
        self.X_train_ = X
        return self

    def _fit_summable(self, method, dataset, X, config, entity_rngs, progress, shared=None) -> None:
        from dpfed_core.federation.summable_protocol import fit_summable
        from dpfed_core.models.blend import drop_entries, released_drop

        check_counts(method, config.server_weighting)
        method.check(dataset.n_entities)
        method.set_public_inputs(item_features=getattr(dataset, "item_features", None))
        slices = dataset.entity_slices()
        # views of X's arrays, or a split's rows built when a stage reads them: no copy of the training matrix
        streamed = isinstance(X, TrainRows)
        own = LazyRows(lambda h: X[slices[h]], len(slices)) if streamed else [row_block(X, sl) for sl in slices]
        # round 1 reads each site's rows without the entries its round 2 validates on (released_rows),
        # rebuilt when a stage reads it (a split's rows in one pass): one site's copy at a time, not every site's
        drops = [released_drop(X_h) for X_h in own]

        def released_rows_of(h: int) -> sp.csr_matrix:
            sl = slices[h]
            return X.block(sl.start, sl.stop, drops[h]) if streamed else drop_entries(own[h], drops[h])

        released = LazyRows(released_rows_of, len(own))
        if shared is None:
            out = fit_summable(method, released, list(dataset.entity_names), slices, X.shape[0],
                               entity_rngs, self.ledger_, config.lam, config.mode, progress, site_matrices=own,
                               n_jobs=config.n_jobs)
        else:
            out = fit_summable(method, LazyRows(lambda h: shared.project(released[h]), len(own)),
                               list(dataset.entity_names), slices, X.shape[0], entity_rngs, self.ledger_,
                               config.lam, config.mode, progress, site_matrices=own, shared=shared,
                               n_jobs=config.n_jobs)
        self.U_, self.V_, self.factors_ = out["U"], out["V"], out["factors"]
        self.messages_ = out["messages"]
        self.notes_ = out["notes"]
        self.timings_ = out["timings"]
        self.public_ = out["public"]
        V_public = self.public_.get("V") if isinstance(self.public_, dict) else None
        # which broadcast columns are item factors and which the DP popularity (what a page labels)
        self.broadcast_parts_ = None if V_public is None else method.broadcast_parts(np.shape(V_public)[1])
        self.trust_ = out["trust"]
        self.secure_sum_ = out["secure_sum"]

    def _fit_prototypes(self, method, dataset, X, entity_rngs, progress, shared=None) -> None:
        from dpfed_core.models.blend import released_rows

        private = bool(getattr(method, "private", False))
        check_counts(method, self.server_weighting)
        slices = dataset.entity_slices()
        largest = max((sl.stop - sl.start for sl in slices), default=0)
        # Only for non-private methods: a DP method treats k as a maximum and sizes its clusters
        # from a noisy count, so comparing k with a true entity size would leak it.
        if not private and self.k > largest:
            raise ConfigError(
                f"k={self.k} prototypes per entity is more than the largest entity has users "
                f"({largest}); lower k (a tenth of an entity's users is a good start)", param="k"
            )
        t0 = time.perf_counter()
        names = dataset.entity_names
        # the messages' columns are shared keys (public hash buckets), not items, on a DP-selected catalogue
        keys = shared is not None and not shared.public
        for h, name in enumerate(names):
            progress("round1_start", entity=name, index=h, total=dataset.n_entities)
        # Each worker spends on a private copy of the ledger; its rows are then re-spent on the run's
        # ledger, which re-checks every spend against the budget.
        outputs = self._map(
            release_entity,
            ((method, X[sl] if shared is None else shared.project(released_rows(X[sl])), entity_rngs[h], name,
              self.ledger_.epsilon, self.ledger_.delta)
             for h, (name, sl) in enumerate(zip(names, slices))),
        )
        n_columns = X.shape[1] if shared is None else shared.n_keys
        for h, (name, (release, rows)) in enumerate(zip(names, outputs)):
            for row in rows:
                self.ledger_.spend(**asdict(row))
            check_release(method, release, name, n_columns)
            self.releases_.append(release)
            if release.note:
                self.notes_.append(release.note)
            self.messages_.append(array_message(1, name, SERVER, f"{len(release.prototypes)} prototypes", release.prototypes))
            if self.server_weighting == "counts":
                if release.counts is None:
                    raise ConfigError(f"prototype method {method.name!r} releases no cluster sizes; "
                                      "use server_weighting='none'", param="server_weighting")
                self.messages_.append(array_message(1, name, SERVER, "cluster sizes", release.counts))
            progress("round1_done", entity=name, index=h, total=dataset.n_entities,
                     shape=release.prototypes.shape, keys=keys)
        self.timings_["round1_prototypes"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        progress("server_start", n_prototypes=sum(len(r.prototypes) for r in self.releases_))
        P = np.vstack([r.prototypes for r in self.releases_])
        weights = None
        if self.server_weighting == "counts":
            weights = np.concatenate([np.maximum(r.counts, 0.0) for r in self.releases_])
        P_fit = sp.csr_matrix(P) if self.mode == "observed" else P
        self.server_W_, self.V_, self.server_history_ = fit_nmf(
            P_fit, self.rank, self.lam, self.mode, max_iter=self.max_iter,
            rng=entity_rngs[-1], weights=weights,
        )
        self.timings_["server_fit"] = time.perf_counter() - t0
        progress("server_done", shape=self.V_.shape, keys=keys)

        for name in dataset.entity_names:
            self.messages_.append(array_message(2, SERVER, name, "item factors V", self.V_))
        progress("broadcast", shape=self.V_.shape, receivers=dataset.n_entities, keys=keys)
        if shared is not None:  # each entity on its own item axis (public map of the released keys)
            self._round2_on_known_items(X, slices, names, shared, progress, t0=time.perf_counter(),
                                        features=getattr(dataset, "item_features", None))
            return

        t0 = time.perf_counter()
        self.U_ = np.zeros((X.shape[0], self.rank))
        for h, name in enumerate(names):
            progress("round2_start", entity=name, index=h, total=dataset.n_entities)
        U_blocks = self._map(fit_rows_given, ((X[sl], self.V_, self.lam, self.mode) for sl in slices))
        for h, (name, sl, U_h) in enumerate(zip(names, slices, U_blocks)):
            self.U_[sl] = U_h
            progress("round2_done", entity=name, index=h, total=dataset.n_entities)
        self.timings_["round2_local_fit"] = time.perf_counter() - t0
        self.factors_ = EntityFactors(self.U_, self.V_)

    def _round2_on_known_items(self, X, slices, names, shared, progress, t0, features=None) -> None:
        """Round 2 of a prototype method on a catalogue that is not the whole item axis (DP-selected, or
        declared and leaving items out): each entity maps the broadcast V onto the item names it knows
        (every name of a declared catalogue; else :func:`~dpfed_core.models.shared_items.known_items`) and fits
        its site model by the routine of ``local`` and of a summable method's round 2
        (:func:`~dpfed_core.models.blend.fit_site_model`): the federation's factors beside its own NMF,
        its own popularity and the public item features, weights on its local hold-out (which round 1
        did not read: :func:`~dpfed_core.models.blend.released_rows`), so every item the entity has rows for stays scored and the
        federation can only add to what it has alone. The columns are its own, never sent."""
        from dpfed_core.models.blend import blend_columns, fit_site_model
        from dpfed_core.models.entity_factors import LocalColumns

        V_keys = self.V_
        self.V_ = shared.lift(V_keys)
        self.U_ = np.zeros((X.shape[0], V_keys.shape[1]))
        local = []
        for h, (name, sl) in enumerate(zip(names, slices)):
            progress("round2_start", entity=name, index=h, total=len(names))
            X_h = sp.csr_matrix(X[sl], dtype=np.float64)
            V_h = shared.site_lift(V_keys, X_h)
            _, _, info = fit_site_model(X_h, rank=self.rank, lam=self.lam, mode=self.mode, max_iter=self.max_iter,
                                        rng=None, features=features, V_fed=V_h, known_only=not shared.public)
            local.append(LocalColumns.from_dense(*blend_columns(info)))
            progress("round2_done", entity=name, index=h, total=len(names))
        self.timings_["round2_local_fit"] = time.perf_counter() - t0
        self.factors_ = EntityFactors(self.U_, self.V_, slices, local)

    # ------------------------------------------------------------------ use
    def predict(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Predicted scores of the given user rows (all users if ``rows`` is None: users × items,
        dense — pass bounded blocks of rows on a large catalogue), each entity's from its own factors."""
        return self.factors_.scores(np.arange(self.factors_.n_users) if rows is None else rows)

    def recommend(self, entity, user, n: int = 10, exclude_seen: bool = True):
        """Top-``n`` items for one user of one entity, like ``implicit``'s ``recommend``.

        ``user`` is the user's id as in the data, or an int position within the entity.
        Returns ``(items, scores)``: item indices and their predicted scores, best first.
        """
        return recommend_from_factors(self.dataset_, self.X_train_, self.factors_, None, entity, user, n,
                                      exclude_seen)


def user_row(dataset: FederatedDataset, entity, user) -> int:
    """Global row index of a user given by id (str) or position (int) within an entity."""
    h = dataset.entity_index(entity)
    sl = dataset.entity_slices()[h]
    if isinstance(user, (int, np.integer)):
        if not 0 <= int(user) < sl.stop - sl.start:
            raise ConfigError(f"entity {dataset.entity_names[h]!r} has {sl.stop - sl.start} users; "
                              f"position {user} is out of range")
        return sl.start + int(user)
    hits = np.flatnonzero(dataset.user_ids[sl] == str(user))
    if len(hits) == 0:
        raise ConfigError(f"no user with id {user!r} in entity {dataset.entity_names[h]!r}: give the id of one of "
                          f"its {sl.stop - sl.start} users, or its position among them (0 to {sl.stop - sl.start - 1})")
    return sl.start + int(hits[0])


def check_list_length(n, control: str = "") -> int:
    """``n`` of a top-n list: a whole number ≥ 1 (a bool, a fraction or a string is refused: a fraction
    would be truncated and a negative one would cut the list from its end). ``control``: where a front
    end sets it, named in the error."""
    where = f" ({control})" if control else ""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ConfigError(f"n{where}, the length of the recommendation list, must be a whole number of at least 1, "
                          f"got {n!r}", param="n")
    return int(n)


def recommend_from_factors(dataset, X_train, U, V, entity, user, n=10, exclude_seen=True):
    """Shared top-n logic for every factor model (see :meth:`FederatedRecommender.recommend`):
    ``(U, V)`` arrays, or an :class:`~dpfed_core.models.entity_factors.EntityFactors` as ``U`` with
    ``V=None`` (the user's entity then scores with its own factors)."""
    n = check_list_length(n)
    row = user_row(dataset, entity, user)
    scores = as_entity_factors(U, V).scores([row])[0]
    if exclude_seen:
        seen = X_train[row].indices
        scores = scores.copy()
        scores[seen] = -np.inf
    n = min(n, int(np.isfinite(scores).sum()))
    items = np.argsort(-scores, kind="stable")[:n]
    return items, scores[items]


class LazyRows(Sequence):
    """A sequence of per-entity matrices built when read (``make(h)``), so that a loop over entities
    holds one entity's matrix at a time rather than all of them."""

    def __init__(self, make: Callable[[int], sp.csr_matrix], n: int) -> None:
        self._make, self._n = make, int(n)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, h):
        if isinstance(h, slice):
            return [self._make(i) for i in range(*h.indices(self._n))]
        if not -self._n <= h < self._n:
            raise IndexError(h)
        return self._make(h % self._n)
