"""Prototype methods: what an entity sends the server in round 1 (SPEC §1–2).

A prototype method turns an entity's training matrix X_h (n_h × m) into k rows P_h (k × m) and,
optionally, released cluster sizes. Every method spends through the entity's ledger view: the
non-private methods record an ε = inf row, so a run that used them can never be labelled private.

Register a new method with :func:`register_prototype_method`; it is then available to the protocol,
the CLI and the dashboard by name. Constructors take keyword arguments ``k``, ``value_max`` (public
bound of one value) plus their own parameters; ``release(X, rng, ledger)`` does the work.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import Param
from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import EntityLedger

#: A catalogue size beyond every cap of a default bound that grows with it (Λ∞·√min(m, 64)): the size a
#: method's :meth:`~PrototypeMethod.public_bounds` derives such a default at when the catalogue's size is
#: not known yet, so that it is taken at its largest.
UNKNOWN_CATALOGUE_SIZE = 2**31 - 1


@dataclass(frozen=True)
class PrototypeRelease:
    """What one entity sends in round 1.

    prototypes : ndarray, shape (k, m), float64
    counts : ndarray of shape (k,) or None — released cluster sizes (noisy for DP methods).
    """

    prototypes: np.ndarray
    counts: np.ndarray | None = None
    note: str = ""


class PrototypeMethod(ABC):
    """Base class: parameters stored as given; ``release`` computes and spends."""

    name: str = ""
    private: bool = False
    #: Whether :meth:`release` returns cluster sizes (``server_weighting="counts"`` needs them): declared,
    #: so a run that needs them is refused before anything is drawn.
    releases_counts: bool = True
    #: Declared parameters beyond ``k``/``value_max``/ε/δ (see :class:`~dpfed_core.config.Param`).
    parameters: tuple[Param, ...] = ()

    def __init__(self, k: int = 50, value_max: float = 1.0) -> None:
        self.k = k
        self.value_max = value_max

    def effective_k(self, X: sp.spmatrix, entity: str) -> tuple[int, str]:
        """k for a non-private method on this entity: an entity with fewer users than k sends one
        prototype per user (the protocol refuses a k larger than *every* entity). Returns (k, note)."""
        if not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ConfigError(f"k (prototypes per entity) must be a positive integer, got {self.k!r}")
        n = X.shape[0]
        if n < 1:  # a declared entity without users sends no prototype
            return 0, f"entity {entity!r} has no training users: it sends no prototype"
        if n < self.k:
            return n, f"entity {entity!r} has {n} training users < k={self.k}: it sends {n} prototypes"
        return int(self.k), ""

    def public_bounds(self, n_items: int | None = None) -> dict[str, float]:
        """The public bounds this method clips and scales an entity's rows with (``row_norm``,
        ``value_min``), derived from public inputs only: its parameters, the value bound and the size
        ``n_items`` of the catalogue its release reads (None: not known yet; a bound that grows with it
        is taken at its largest). A bound the method does not use is absent; a site's policy checks
        these before it accepts a run. Default: none (a method that releases its rows as they are)."""
        return {}

    def check_parameters(self, n_items: int | None = None) -> None:
        """Raise :class:`ConfigError` naming a parameter the release cannot use, as :meth:`release` would
        before it draws, from public inputs only (its parameters, the value bound, the catalogue's size
        ``n_items``; None: not known yet) — never from an entity's rows. A deployed site checks a run's
        request with it before it accepts the run. Default: nothing beyond the declared parameters' own
        checks."""

    @abstractmethod
    def release(self, X: sp.csr_matrix, rng: np.random.Generator, ledger: EntityLedger) -> PrototypeRelease:
        """Compute the k prototypes of one entity's training matrix, recording every spend."""

    def get_params(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and not k.endswith("_")}


PROTOTYPE_METHODS: dict[str, Callable[..., PrototypeMethod]] = {}


def register_prototype_method(name: str):
    def deco(cls):
        cls.name = name
        PROTOTYPE_METHODS[name] = cls
        return cls

    return deco


def make_prototype_method(name: str, **params) -> PrototypeMethod:
    if name not in PROTOTYPE_METHODS:
        raise ConfigError(
            f"unknown prototype method {name!r}; choose one of {', '.join(sorted(PROTOTYPE_METHODS))}"
        )
    try:
        return PROTOTYPE_METHODS[name](**params)
    except TypeError as exc:  # an unknown keyword from the CLI or the dashboard
        raise ConfigError(f"prototype method {name!r}: {exc}") from None


def _no_prototypes(X, ledger, note: str) -> PrototypeRelease:
    """A non-private method's release of an entity without users: nothing (still labelled non-private)."""
    ledger.spend("prototypes", "no prototypes (no users; non-private method)", math.inf, note=note)
    return PrototypeRelease(np.zeros((0, X.shape[1])), np.zeros(0), note)


@register_prototype_method("kmeans")
class KMeansPrototypes(PrototypeMethod):
    """Non-private: the k-means++ centroids of the entity's rows (paper §5.3). Releases raw
    averages, so it records ε = inf. ``n_init`` restarts of scikit-learn's KMeans."""

    private = False
    parameters = (
        Param("n_init", "int", 1, "k-means++ restarts (the best is kept)", low=1, high=100),
        Param("max_iter", "int", 100, "Lloyd iterations per restart", low=1, high=10_000),
    )

    def __init__(self, k: int = 50, value_max: float = 1.0, n_init: int = 1, max_iter: int = 100) -> None:
        super().__init__(k, value_max)
        self.n_init = n_init
        self.max_iter = max_iter

    def release(self, X, rng, ledger):
        from sklearn.cluster import KMeans  # deferred: importing scikit-learn costs seconds at start-up

        k, note = self.effective_k(X, ledger.entity)
        if k == 0:
            return _no_prototypes(X, ledger, note)
        km = KMeans(
            n_clusters=k,
            init="k-means++",
            n_init=self.n_init,
            max_iter=self.max_iter,
            random_state=int(rng.integers(2**31 - 1)),
        ).fit(X)
        ledger.spend("prototypes", "k-means++ centroids (non-private)", math.inf,
                     note="exact cluster means of raw rows leave the entity")
        counts = np.bincount(km.labels_, minlength=k).astype(np.float64)
        return PrototypeRelease(np.asarray(km.cluster_centers_, dtype=np.float64), counts, note)


@register_prototype_method("krandom")
class KRandomPrototypes(PrototypeMethod):
    """Non-private: k of the entity's raw rows chosen uniformly without replacement (paper §5.3)."""

    private = False

    def release(self, X, rng, ledger):
        k, note = self.effective_k(X, ledger.entity)
        if k == 0:
            return _no_prototypes(X, ledger, note)
        idx = rng.choice(X.shape[0], size=k, replace=False)
        ledger.spend("prototypes", "k random raw rows (non-private)", math.inf,
                     note="raw user rows leave the entity")
        P = X[idx].toarray() if sp.issparse(X) else np.asarray(X)[idx]
        return PrototypeRelease(np.asarray(P, dtype=np.float64), np.ones(k), note)
