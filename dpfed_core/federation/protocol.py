"""The two-round federation protocol (SPEC §1, paper Algorithm 2) with a message log.

1. Round 1, entity → server: each entity releases k prototypes of its *training* rows (and, only if
   the server weights by them, the released cluster sizes). Every spend is in the ledger.
2. Server: stacks the prototypes and fits P ≈ W Vᵀ (non-negative, ridge λ); keeps V. Post-processing.
3. Round 2, server → entities: V is broadcast; each entity fits U_h ≥ 0 with V fixed on its own
   training rows. Nothing further leaves the entity.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict
from typing import Callable

import numpy as np
import scipy.sparse as sp

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.models.factorization import check_mode, fit_nmf, fit_rows_given
from dpfed_core.privacy.ledger import PrivacyLedger, validate_budget
from dpfed_core.privacy.noise import SecureGenerator
from .messages import SERVER, Message, array_message
from dpfed_core.federation.prototypes import PROTOTYPE_METHODS, PrototypeRelease, make_prototype_method

ProgressFn = Callable[..., None]


def as_generator(random_state) -> np.random.Generator:
    """An explicit Generator from an int seed, a SeedSequence or a Generator (never global state)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


def _noop(*_args, **_kwargs) -> None:
    return None


class FederatedRecommender:
    """Federated NMF through prototypes (paper Algorithm 2).

    Parameters
    ----------
    prototypes : str
        Registered prototype method: ``"kmeans"``, ``"krandom"``, ``"dp-prototypes"`` (see
        :mod:`dpfed_core.federation.prototypes`).
    k : int
        Prototypes per entity.
    rank : int
        Latent factors ℓ.
    lam : float
        Ridge penalty λ of the objective (SPEC §1).
    mode : {"zero", "observed"}
        Observation mode of the objective.
    epsilon, delta : float
        Privacy budget per entity (and, by parallel composition, of the run). Ignored — forced to
        ``inf`` and labelled non-private — for non-private prototype methods.
    prototype_params : dict, optional
        Extra keyword arguments of the prototype method (bounds, budget split, …).
    server_weighting : {"none", "counts"}
        ``"counts"``: entities also release their (noisy, for DP methods) cluster sizes and the
        server weights each prototype's squared error by its size.
    max_iter : int
        Iterations of the server's factorisation.
    n_jobs : int
        Entities are independent in rounds 1 and 2, so they can run in parallel worker processes
        (joblib; -1 = all cores). Results are identical for any ``n_jobs``: every entity has its own
        random stream, spawned before any work starts.
    random_state : int, SeedSequence or Generator, optional
        Seeds the non-private steps (the server's factorisation, non-private prototype methods).
        A DP prototype method never draws from it unless ``simulation`` is set: each entity's
        mechanisms get a fresh stream from the operating system's entropy.
    simulation : bool
        Reproducible DP noise from ``random_state`` for tests and benchmarks. Such a run makes no
        privacy claim and its ledger says so (:data:`~dpfed_core.privacy.noise.SIMULATION_LABEL`).

    Attributes
    ----------
    V_ : (n_items, rank) item factors learned by the server.
    U_ : (n_users, rank) user factors, each entity's block fitted locally in round 2.
    releases_ : list of PrototypeRelease, one per entity (exactly what the server received).
    ledger_ : PrivacyLedger
    messages_ : list of Message
    timings_ : dict of seconds per stage
    """

    def __init__(
        self,
        prototypes: str = "kmeans",
        k: int = 50,
        rank: int = 10,
        lam: float = 0.1,
        mode: str = "zero",
        epsilon: float = math.inf,
        delta: float = 1e-6,
        prototype_params: dict | None = None,
        server_weighting: str = "none",
        max_iter: int = 200,
        n_jobs: int = 1,
        random_state=None,
        simulation: bool = False,
    ) -> None:
        self.prototypes = prototypes
        self.k = k
        self.rank = rank
        self.lam = lam
        self.mode = mode
        self.epsilon = epsilon
        self.delta = delta
        self.prototype_params = prototype_params
        self.server_weighting = server_weighting
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.simulation = simulation

    # ------------------------------------------------------------------ helpers
    def _method(self, value_max: float):
        params = dict(self.prototype_params or {})
        cls = PROTOTYPE_METHODS.get(self.prototypes)
        if cls is None:
            return make_prototype_method(self.prototypes)  # raises the friendly error
        if getattr(cls, "private", False):
            params.setdefault("epsilon", self.epsilon)
            params.setdefault("delta", self.delta)
        return make_prototype_method(self.prototypes, k=self.k, value_max=value_max, **params)

    def _validate(self) -> None:
        check_mode(self.mode)
        validate_budget(self.epsilon, self.delta)
        if not isinstance(self.rank, (int, np.integer)) or self.rank < 1:
            raise ConfigError(f"rank must be a positive integer, got {self.rank!r}")
        if not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ConfigError(f"k (prototypes per entity) must be a positive integer, got {self.k!r}")
        if not (isinstance(self.lam, (int, float)) and self.lam >= 0 and math.isfinite(self.lam)):
            raise ConfigError(f"λ must be a non-negative number, got {self.lam!r}")
        if self.server_weighting not in ("none", "counts"):
            raise ConfigError(f"server_weighting must be 'none' or 'counts', got {self.server_weighting!r}")

    def _map(self, fn, arg_tuples) -> list:
        """Apply ``fn`` to each argument tuple, lazily: an entity's rows are sliced only when its turn
        comes, so the training matrix is never copied whole (entities are streamed)."""
        if self.n_jobs == 1:
            return [fn(*args) for args in arg_tuples]
        from joblib import Parallel, delayed  # deferred: only parallel runs need it

        return Parallel(n_jobs=self.n_jobs)(delayed(fn)(*args) for args in arg_tuples)

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        dataset: FederatedDataset,
        X_train: sp.spmatrix | None = None,
        progress: ProgressFn | None = None,
    ) -> "FederatedRecommender":
        """Run both rounds. ``X_train`` (same shape as ``dataset.X``) replaces the data, e.g. a split's
        training matrix. ``progress(event, **info)`` is called at each step (for live status)."""
        self._validate()
        progress = progress or _noop
        X = sp.csr_matrix(dataset.X if X_train is None else X_train, dtype=np.float64)
        if X.shape != dataset.X.shape:
            raise ConfigError(f"training matrix has shape {X.shape}, the dataset {dataset.X.shape}")
        method = self._method(dataset.value_max)
        private = bool(getattr(method, "private", False))
        self.ledger_ = PrivacyLedger(self.epsilon if private else math.inf, self.delta if private else 0.0)
        rng = as_generator(self.random_state)
        entity_rngs = rng.spawn(dataset.n_entities + 1)
        if private and not self.simulation:
            # The mechanisms' noise must be unknown to anyone who knows the (public) seed: each
            # entity gets a SecureGenerator (OS entropy), whose mechanisms sample with OpenDP.
            entity_rngs[:-1] = [SecureGenerator() for _ in range(dataset.n_entities)]
        self.ledger_.simulation = bool(private and self.simulation)
        slices = dataset.entity_slices()
        largest = max((sl.stop - sl.start for sl in slices), default=0)
        # Only for non-private methods: a DP method treats k as a maximum and sizes its clusters
        # from a noisy count, so comparing k with a true entity size would leak it.
        if not private and self.k > largest:
            raise ConfigError(
                f"k={self.k} prototypes per entity is more than the largest entity has users "
                f"({largest}); lower k (a tenth of an entity's users is a good start)"
            )
        self.messages_: list[Message] = []
        self.notes_: list[str] = []
        self.timings_: dict[str, float] = {}

        t0 = time.perf_counter()
        self.releases_: list[PrototypeRelease] = []
        names = dataset.entity_names
        for h, name in enumerate(names):
            progress("round1_start", entity=name, index=h, total=dataset.n_entities)
        # Each worker spends on a private copy of the ledger; its rows are then re-spent on the run's
        # ledger, which re-checks every spend against the budget.
        outputs = self._map(
            _release_one,
            ((method, X[sl], entity_rngs[h], name, self.ledger_.epsilon, self.ledger_.delta)
             for h, (name, sl) in enumerate(zip(names, slices))),
        )
        for h, (name, (release, rows)) in enumerate(zip(names, outputs)):
            for row in rows:
                self.ledger_.spend(**asdict(row))
            self.releases_.append(release)
            if release.note:
                self.notes_.append(release.note)
            self.messages_.append(array_message(1, name, SERVER, f"{len(release.prototypes)} prototypes", release.prototypes))
            if self.server_weighting == "counts":
                if release.counts is None:
                    raise ConfigError(f"prototype method {self.prototypes!r} releases no cluster sizes; "
                                      "use server_weighting='none'")
                self.messages_.append(array_message(1, name, SERVER, "cluster sizes", release.counts))
            progress("round1_done", entity=name, index=h, total=dataset.n_entities,
                     shape=release.prototypes.shape)
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
        progress("server_done", shape=self.V_.shape)

        for name in dataset.entity_names:
            self.messages_.append(array_message(2, SERVER, name, "item factors V", self.V_))
        progress("broadcast", shape=self.V_.shape, receivers=dataset.n_entities)

        t0 = time.perf_counter()
        self.U_ = np.zeros((X.shape[0], self.rank))
        for h, name in enumerate(names):
            progress("round2_start", entity=name, index=h, total=dataset.n_entities)
        U_blocks = self._map(fit_rows_given, ((X[sl], self.V_, self.lam, self.mode) for sl in slices))
        for h, (name, sl, U_h) in enumerate(zip(names, slices, U_blocks)):
            self.U_[sl] = U_h
            progress("round2_done", entity=name, index=h, total=dataset.n_entities)
        self.timings_["round2_local_fit"] = time.perf_counter() - t0
        self.dataset_ = dataset
        self.X_train_ = X
        return self

    # ------------------------------------------------------------------ use
    def predict(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Predicted scores ``U_[rows] @ V_.T`` (all users if ``rows`` is None)."""
        U = self.U_ if rows is None else self.U_[rows]
        return U @ self.V_.T

    def recommend(self, entity, user, n: int = 10, exclude_seen: bool = True):
        """Top-``n`` items for one user of one entity, like ``implicit``'s ``recommend``.

        ``user`` is the user's id as in the data, or an int position within the entity.
        Returns ``(items, scores)``: item indices and their predicted scores, best first.
        """
        return recommend_from_factors(self.dataset_, self.X_train_, self.U_, self.V_, entity, user, n, exclude_seen)


def _release_one(method, X_h, rng, entity, epsilon, delta):
    """Round 1 for one entity, on a private ledger copy (picklable for worker processes)."""
    ledger = PrivacyLedger(epsilon, delta)
    release = method.release(X_h, rng, ledger.for_entity(entity))
    return release, ledger.rows


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
        raise ConfigError(f"user {user!r} is not a user of entity {dataset.entity_names[h]!r}")
    return sl.start + int(hits[0])


def recommend_from_factors(dataset, X_train, U, V, entity, user, n=10, exclude_seen=True):
    """Shared top-n logic for every factor model (see :meth:`FederatedRecommender.recommend`)."""
    if n < 1:
        raise ConfigError(f"n must be at least 1, got {n}")
    row = user_row(dataset, entity, user)
    scores = U[row] @ V.T
    if exclude_seen:
        seen = X_train[row].indices
        scores = scores.copy()
        scores[seen] = -np.inf
    n = min(n, int(np.isfinite(scores).sum()))
    items = np.argsort(-scores, kind="stable")[:n]
    return items, scores[items]
