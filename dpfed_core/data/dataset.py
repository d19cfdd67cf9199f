"""The federated dataset: one sparse user × item matrix whose rows are partitioned into entities.

Users belong to exactly one entity (SPEC §1: users of different entities are disjoint); the item
catalogue is shared. Rows are sorted by entity so that ``X[rows_of(h)]`` is a contiguous slice.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core.errors import ConfigError, DataError

ValueKind = Literal["ratings", "counts", "implicit"]


@dataclass(frozen=True)
class FederatedDataset:
    """A user × item matrix partitioned by entity.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix, shape (n_users, n_items), float64
        Interaction values; absent interactions are structural zeros. Rows sorted by entity.
    entity_of_user : ndarray of int, shape (n_users,)
        Index into ``entity_names`` of each row's entity (non-decreasing).
    entity_names : list of str, length n_entities
    user_ids : ndarray of str, shape (n_users,)
        The users' identifiers as given in the source data.
    item_names : ndarray of str, shape (n_items,)
        Human-readable item names (movie titles, drug or lab names); equal to the ids if none exist.
    item_ids : ndarray of str, shape (n_items,)
    value_kind : {"ratings", "counts", "implicit"}
        What the values mean. Decides the default observation mode and public bounds.
    value_max : float
        The *declared* public upper bound of a single value (e.g. 5 for a 1–5 rating scale). It is
        part of the data's description, never computed from the private values; DP mechanisms clip to
        it (SPEC §2).
    name : str
        A short description shown in the CLI and the dashboard.
    notes : list of str
        What the loader did that a user should know (rows dropped, entities merged, …).
    item_source : {"declared", "data"}
        Where the item catalogue (the columns) comes from. ``"declared"``: public metadata (MovieLens
        ``u.item``, a declared item list or formulary) — message shapes then depend on public inputs
        only. ``"data"``: the items present in the data; a DP run then selects its catalogue by DP
        partition selection charged to its ledger (:mod:`dpfed_core.privacy.catalogue`).
    n_declared : int or None
        With ``item_source="declared"``: how many of the first columns are the declared catalogue. The
        columns after them are items the data holds outside it: each entity keeps them as its own
        (scored by its own model, never shared), and every message is shaped by the declared ones
        only. None: every column is declared.
    entity_source : {"declared", "data"}
        Where the entity list comes from. ``"declared"``: a public input (``entities=FILE``,
        the hospital table of eICU, MovieLens' public key values, a sample's generator) — an entity
        without users stays with 0 users, so the messages never depend on who is in the data.
        ``"data"``: the entity values found in the private rows; membership of an entity is then not
        protected, and a DP run is refused unless ``entities_accepted`` (the user accepted it).
        Datasets built in Python with :meth:`from_parts` are ``"declared"``: the caller's labels are
        its declaration.
    entities_accepted : bool
        With ``entity_source="data"``: the user explicitly accepted an entity list read from the data
        (``entities_from_data``). Always True for a declared list.
    item_features : ndarray (n_items, f) of float, or None
        Public item side information (``item_features=FILE``, MovieLens genres and years, eICU name
        hierarchies and drug-name tokens); never derived from the interactions.
    item_feature_names : list of str (length f)
    generated : bool
        Data made by a generator from public parameters (the bundled samples, the synthetic model),
        not people's records: a simulation run on it releases nothing about anyone. False for every
        loaded table — a simulation run on real data is then a non-private release.
    """

    X: sp.csr_matrix
    entity_of_user: np.ndarray
    entity_names: list[str]
    user_ids: np.ndarray
    item_names: np.ndarray
    item_ids: np.ndarray
    value_kind: ValueKind = "counts"
    value_max: float = 1.0
    name: str = "dataset"
    notes: list[str] = field(default_factory=list)
    item_source: str = "data"
    entity_source: str = "declared"
    entities_accepted: bool = True
    item_features: np.ndarray | None = None
    item_feature_names: list[str] = field(default_factory=list)
    generated: bool = False
    n_declared: int | None = None

    def __post_init__(self) -> None:
        X = self.X
        if not sp.issparse(X):
            raise DataError("the interaction matrix must be a scipy.sparse matrix")
        n, m = X.shape
        if len(self.entity_of_user) != n or len(self.user_ids) != n:
            raise DataError("entity_of_user and user_ids must have one entry per row of X")
        if len(self.item_names) != m or len(self.item_ids) != m:
            raise DataError("item_names and item_ids must have one entry per column of X")
        if n and np.any(np.diff(self.entity_of_user) < 0):
            raise DataError("rows of X must be sorted by entity (use FederatedDataset.from_parts)")
        if not np.isfinite(self.value_max) or not 0 < self.value_max <= 1e9:
            raise ConfigError(f"value_max must be a positive number ≤ 1e9, got {self.value_max!r}",
                              param="value_max")
        if n and (self.entity_of_user[0] < 0 or self.entity_of_user[-1] >= len(self.entity_names)):
            raise DataError("entity_of_user must index entity_names")
        if self.entity_source not in ("declared", "data"):
            raise ConfigError(f"entity_source must be 'declared' or 'data', got {self.entity_source!r}")
        F = self.item_features
        if F is not None:
            if F.ndim != 2 or F.shape[0] != m or F.shape[1] != len(self.item_feature_names):
                raise DataError(f"item_features must have shape (n_items={m}, {len(self.item_feature_names)} "
                                f"named features), got {F.shape}", param="item_features")
            if not np.all(np.isfinite(F)):
                raise DataError("item_features must be finite numbers", param="item_features")
        if self.n_declared is not None and (self.item_source != "declared" or not 0 <= self.n_declared <= m):
            raise DataError(f"n_declared={self.n_declared!r} needs a declared catalogue (item_source='declared') "
                            f"of at most the {m} columns")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_parts(
        cls,
        X: sp.spmatrix,
        entity_labels: np.ndarray,
        *,
        user_ids: np.ndarray | None = None,
        item_ids: np.ndarray | None = None,
        item_names: np.ndarray | None = None,
        value_kind: ValueKind = "counts",
        value_max: float | None = None,
        name: str = "dataset",
        notes: list[str] | None = None,
        item_source: str = "data",
        entities: Sequence[str] | None = None,
        entity_source: str = "declared",
        entities_accepted: bool = True,
        item_features: np.ndarray | None = None,
        item_feature_names: Sequence[str] | None = None,
        copy: bool = True,
        n_declared: int | None = None,
    ) -> "FederatedDataset":
        """Build a dataset from a matrix and one entity label per row (any order).

        Rows are stably re-ordered by entity name. ``value_max`` defaults to 5 for ratings and 1
        for implicit data; for counts it must be given (it is a public bound, not a data statistic).
        ``entities``: the declared entity list (sorted by name in the dataset); entities without a
        row are kept with 0 users, and every label must be one of them. Without it the entities are
        the distinct labels. ``copy=False``: ``X`` is the caller's to give away (a loader's own
        matrix): when its rows are already in entity order it becomes the dataset's, uncopied.
        ``n_declared``: with ``item_source="declared"``, how many of the first columns the declared
        catalogue has (the rest are the data's items outside it).
        """
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        X.eliminate_zeros()
        n, m = X.shape
        labels = np.asarray(entity_labels).astype(str)
        if labels.shape != (n,):
            raise DataError(f"need one entity label per user: got {labels.shape[0]} labels for {n} users")
        if entities is None:
            names, codes = np.unique(labels, return_inverse=True)
        else:
            names = np.unique(np.asarray([str(e) for e in entities], dtype=str))
            if len(names) == 0:
                raise DataError("the declared entity list is empty", param="entities")
            codes = np.searchsorted(names, labels)
            bad = (codes >= len(names)) | (names[np.minimum(codes, len(names) - 1)] != labels)
            if n and bad.any():
                raise DataError(f"entity {str(labels[np.flatnonzero(bad)[0]])!r} of a user is not in the declared entity "
                                "list", param="entities")
        order = np.argsort(codes, kind="stable")
        if value_max is None:
            if value_kind == "ratings":
                value_max = 5.0
            elif value_kind == "implicit":
                value_max = 1.0
            else:
                raise ConfigError(
                    "count data needs a declared public upper bound per value (value_max), "
                    "e.g. the most events a single stay can plausibly have; it must not be read off the data"
                )
        uid = np.arange(n).astype(str) if user_ids is None else np.asarray(user_ids).astype(str)
        iid = np.arange(m).astype(str) if item_ids is None else np.asarray(item_ids).astype(str)
        inames = iid if item_names is None else np.asarray(item_names).astype(str)
        # rows already by entity (a loader builds them so) and X given away: no copy of the matrix
        keep = not copy and bool(np.all(order == np.arange(n)))
        return cls(
            X=X if keep else X[order].tocsr(),
            entity_of_user=codes[order].astype(np.int64),
            entity_names=[str(s) for s in names],
            user_ids=uid[order],
            item_names=inames,
            item_ids=iid,
            value_kind=value_kind,
            value_max=float(value_max),
            name=name,
            notes=list(notes or []),
            item_source=item_source,
            entity_source=entity_source,
            entities_accepted=bool(entities_accepted),
            item_features=None if item_features is None else np.asarray(item_features, dtype=np.float64),
            item_feature_names=[str(x) for x in (item_feature_names or [])],
            n_declared=None if n_declared is None else int(n_declared),
        )

    # ------------------------------------------------------------------ views
    @property
    def n_users(self) -> int:
        return self.X.shape[0]

    @property
    def n_items(self) -> int:
        return self.X.shape[1]

    @property
    def n_entities(self) -> int:
        return len(self.entity_names)

    def entity_slices(self) -> list[slice]:
        """Row slice of each entity, in ``entity_names`` order."""
        bounds = np.searchsorted(self.entity_of_user, np.arange(self.n_entities + 1))
        return [slice(int(bounds[h]), int(bounds[h + 1])) for h in range(self.n_entities)]

    def entity_index(self, entity: str | int) -> int:
        """Index of an entity given by name or index, with a helpful error if unknown."""
        if isinstance(entity, (int, np.integer)):
            if not 0 <= int(entity) < self.n_entities:
                raise ConfigError(f"entity index {entity} out of range 0..{self.n_entities - 1}")
            return int(entity)
        try:
            return self.entity_names.index(str(entity))
        except ValueError:
            shown = ", ".join(self.entity_names[:10]) + (" …" if self.n_entities > 10 else "")
            raise ConfigError(f"unknown entity {entity!r}; the entities are: {shown}") from None

    @property
    def shared_columns(self) -> np.ndarray | None:
        """The columns of a declared catalogue that leaves some of the data's items out (what the
        federation shares; the others are each entity's own); None when every column is shared or
        the catalogue is not declared."""
        if self.item_source != "declared" or self.n_declared is None or self.n_declared >= self.n_items:
            return None
        return np.arange(self.n_declared, dtype=np.int64)

    def items_phrase(self) -> str:
        """The item count as the CLI and the pages state it: "143 items", or with a declared catalogue
        that leaves some of the data's items out "144 items (99 declared and shared, 45 the entities' own)"."""
        if self.shared_columns is None:
            return f"{self.n_items:,} items"
        return (f"{self.n_items:,} items ({self.n_declared:,} declared and shared, "
                f"{self.n_items - self.n_declared:,} the entities' own)")

    def summary(self) -> list[dict]:
        """Per-entity counts (users, items used, interactions, density) — counts only."""
        out = []
        for h, sl in enumerate(self.entity_slices()):
            Xh = self.X[sl]
            n_h = Xh.shape[0]
            items_used = int(np.count_nonzero(np.diff(Xh.tocsc().indptr)))
            out.append(
                {
                    "entity": self.entity_names[h],
                    "users": n_h,
                    "items_used": items_used,
                    "interactions": int(Xh.nnz),
                    "density": float(Xh.nnz / max(n_h * self.n_items, 1)),
                }
            )
        return out

    def merge_items(self, key_matrix: sp.spmatrix, key_names: np.ndarray,
                    item_source: str | None = None) -> "FederatedDataset":
        """The same users and entities on a coarser item axis: ``key_matrix`` (n_items × K, 0/1, at
        most one 1 per row) maps each item to one of K keys (e.g. the released hash buckets of a
        federation-wide DP catalogue); a user's values on the items of one key are summed and
        clipped to ``value_max``. Public item features do not carry over (a key's members are known
        only to the entities that hold them)."""
        M = sp.csr_matrix(key_matrix, dtype=np.float64)
        if M.shape[0] != self.n_items:
            raise DataError(f"key_matrix must have one row per item ({self.n_items}), got {M.shape[0]}")
        X = merge_key_columns(self.X, M, self.value_max)
        names = np.asarray(key_names)
        return replace(
            self, X=X, entity_names=list(self.entity_names), item_names=names, item_ids=names.copy(),
            notes=list(self.notes), item_source=item_source or self.item_source, item_features=None,
            item_feature_names=[], n_declared=None,
        )

    def select_items(self, columns: np.ndarray, item_source: str | None = None) -> "FederatedDataset":
        """The same users and entities restricted to the item columns ``columns`` (indices, in order)."""
        cols = np.asarray(columns, dtype=np.int64)
        return replace(
            self, X=self.X[:, cols].tocsr(), entity_names=list(self.entity_names),
            item_names=self.item_names[cols], item_ids=self.item_ids[cols], notes=list(self.notes),
            item_source=item_source or self.item_source,
            item_features=None if self.item_features is None else self.item_features[cols], n_declared=None,
        )


def merge_key_columns(X: sp.spmatrix, key_matrix: sp.spmatrix, value_max: float) -> sp.csr_matrix:
    """Rows of ``X`` (n × items) on a coarser key axis: ``X @ key_matrix`` (items × K, 0/1), a row's
    values on the items of one key summed and clipped to ``value_max`` (the public bound)."""
    out = sp.csr_matrix(sp.csr_matrix(X) @ sp.csr_matrix(key_matrix, dtype=np.float64))
    np.minimum(out.data, value_max, out=out.data)
    return out
