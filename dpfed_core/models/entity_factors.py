"""Per-entity factors: every fitted model's scores, without mixing entities' own columns.

A federated run shares one item factor matrix V (m × r, broadcast by the server); each entity h may
add columns of its own (its own NMF, its own popularity — round 2 of a summable method, the ``local``
and ``individual`` references) that never left it. User u of entity h scores::

    s_u = U[u] @ V.T + U_loc_h[u − start_h] @ L_h.T

A single (U, V) pair holding every entity's local columns side by side would be block-diagonal:
O(items × entities × rank) for V and O(users × entities × rank) for U, mostly zeros (a
100,000-item catalogue then cost more than the data). Here each entity keeps its own ``L_h`` and
only its non-zero item rows: an entity's own NMF and popularity are exactly zero on the items it
never saw (a HALS update of an all-zero column is 0), so an entity's local part costs
O(its items × its columns), and the whole object O(items × r + users × r + Σ_h items_h × c_h).

Nothing here forms a users × items matrix: :meth:`EntityFactors.scores` scores the rows it is asked
for; callers pass bounded blocks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np


@dataclass(frozen=True)
class LocalColumns:
    """An entity's own columns: its users' weights ``U`` (n_h × c) on item factors that are zero
    except on the item rows ``items`` (k,), where they are ``L`` (k × c)."""

    U: np.ndarray
    items: np.ndarray
    L: np.ndarray

    @classmethod
    def from_dense(cls, U: np.ndarray, L_full: np.ndarray) -> "LocalColumns":
        """Keep the non-zero item rows of a dense (m × c) ``L_full`` (exact: dropped rows are 0)."""
        L_full = np.asarray(L_full, dtype=np.float64)
        items = np.flatnonzero(np.any(L_full != 0.0, axis=1))
        return cls(np.asarray(U, dtype=np.float64), items.astype(np.int64), np.ascontiguousarray(L_full[items]))

    @property
    def width(self) -> int:
        return int(self.L.shape[1])

    def dense(self, n_items: int) -> np.ndarray:
        """The (m × c) item factors: one entity's, O(items × c) — never all entities' at once."""
        out = np.zeros((n_items, self.width))
        out[self.items] = self.L
        return out


class EntityFactors:
    """Scores of every user from the shared factors (``U`` n × r on ``V`` m × r) plus, per entity,
    its own :class:`LocalColumns` (or None).

    slices : the entities' contiguous user rows (default: one block of every user).
    """

    def __init__(self, U: np.ndarray, V: np.ndarray, slices: Sequence[slice] | None = None,
                 local: Sequence[LocalColumns | None] | None = None) -> None:
        self.U = np.asarray(U, dtype=np.float64)
        self.V = np.asarray(V, dtype=np.float64)
        if self.U.ndim != 2 or self.V.ndim != 2 or self.U.shape[1] != self.V.shape[1]:
            raise ValueError(f"U {self.U.shape} and V {self.V.shape} must be 2-d with the same number of columns")
        n = self.U.shape[0]
        self.slices = tuple(slices) if slices is not None else (slice(0, n),)
        self.local = tuple(local) if local is not None else (None,) * len(self.slices)
        if len(self.local) != len(self.slices):
            raise ValueError(f"{len(self.local)} local parts for {len(self.slices)} entities")
        for sl, loc in zip(self.slices, self.local):
            if not (0 <= sl.start <= sl.stop <= n):
                raise ValueError(f"entity rows {sl} outside the {n} users")
            if loc is not None and (loc.U.shape != (sl.stop - sl.start, loc.width)
                                    or loc.items.shape[0] != loc.L.shape[0]
                                    or (loc.items.size and not 0 <= loc.items.min() <= loc.items.max() < self.n_items)):
                raise ValueError(f"local columns of entity rows {sl}: U {loc.U.shape}, L {loc.L.shape} "
                                 f"do not fit {sl.stop - sl.start} users × {self.n_items} items")
        # a user's entity is looked up by the slices' starts: they must tile the users in order, each
        # user in exactly one entity (a gap's users would be scored as the entity before it)
        ends = [0, *(sl.stop for sl in self.slices)]
        if any(sl.start != end for sl, end in zip(self.slices, ends)) or ends[-1] != n:
            raise ValueError(f"entity rows {[(sl.start, sl.stop) for sl in self.slices][:6]} must follow one "
                             f"another from user 0 to user {n}, each user in one entity")
        self._starts = np.array([sl.start for sl in self.slices], dtype=np.int64)

    # ------------------------------------------------------------------ shape
    @property
    def n_users(self) -> int:
        return int(self.U.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.V.shape[0])

    @property
    def shape(self) -> tuple[int, int]:
        """(users, items): the shape of the score matrix (never formed)."""
        return self.n_users, self.n_items

    @property
    def local_widths(self) -> tuple[int, ...]:
        """Each entity's number of own columns (0: the shared factors only)."""
        return tuple(0 if loc is None else loc.width for loc in self.local)

    # ------------------------------------------------------------------ per entity
    def entity(self, h: int) -> tuple[np.ndarray, np.ndarray]:
        """Entity h's own factors ``(U_h, V_h)``: its users (n_h × (r + c_h)) on the shared V followed
        by its own columns (m × (r + c_h)); its scores are ``U_h @ V_h.T``. O(items × (r + c_h))."""
        sl, loc = self.slices[h], self.local[h]
        if loc is None:
            return self.U[sl], self.V
        return np.hstack([self.U[sl], loc.U]), np.hstack([self.V, loc.dense(self.n_items)])

    def blocks(self) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
        """``(rows, U_h, V_h)`` for every entity with users, one at a time (see :meth:`entity`); a
        model without local columns is one block of every user."""
        if all(loc is None for loc in self.local):
            yield slice(0, self.n_users), self.U, self.V
            return
        for h, sl in enumerate(self.slices):
            if sl.stop > sl.start:
                U_h, V_h = self.entity(h)
                yield sl, U_h, V_h

    def scores(self, rows) -> np.ndarray:
        """Scores (len(rows) × m) of the given user rows; bound ``rows`` to keep memory bounded."""
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        S = self.U[rows] @ self.V.T
        if rows.size == 0 or all(loc is None for loc in self.local):
            return S
        ent = np.searchsorted(self._starts, rows, side="right") - 1
        for h in np.unique(ent):
            loc = self.local[h]
            if loc is None:
                continue
            mask = ent == h
            # only the entity's non-zero item rows get its own columns' contribution
            S[np.ix_(np.flatnonzero(mask), loc.items)] += loc.U[rows[mask] - self.slices[h].start] @ loc.L.T
        return S

    def on_items(self, cols: np.ndarray, n_items: int) -> "EntityFactors":
        """The same model on a wider item axis: item j of this model is item ``cols[j]`` of
        ``n_items``; every other item gets zero factors (so it is never scored above 0)."""
        cols = np.asarray(cols, dtype=np.int64)
        V = np.zeros((n_items, self.V.shape[1]))
        V[cols] = self.V
        local = [None if loc is None else LocalColumns(loc.U, cols[loc.items], loc.L) for loc in self.local]
        return EntityFactors(self.U, V, self.slices, local)

    def on_keys(self, item_key: np.ndarray, n_items: int) -> "EntityFactors":
        """The same model on the item axis of a coarser key space (e.g. the released hash buckets of
        a federation-wide DP catalogue): item j takes the factors of key ``item_key[j]`` (−1: none, zero
        factors). Items sharing a key share its factors, the entity's own columns included."""
        item_key = np.asarray(item_key, dtype=np.int64)
        items = np.flatnonzero(item_key >= 0)
        V = np.zeros((n_items, self.V.shape[1]))
        V[items] = self.V[item_key[items]]
        local = []
        for loc in self.local:
            if loc is None:
                local.append(None)
                continue
            pos = np.full(self.V.shape[0], -1, dtype=np.int64)
            pos[loc.items] = np.arange(loc.items.size)
            sel = items[pos[item_key[items]] >= 0]
            local.append(LocalColumns(loc.U, sel, loc.L[pos[item_key[sel]]]))
        return EntityFactors(self.U, V, self.slices, local)

    # ------------------------------------------------------------------ storage
    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays (for ``numpy.savez``): ``U``, ``V``, ``slices`` and each entity's ``LU{h}``,
        ``Li{h}``, ``LL{h}`` when it has local columns."""
        out = {"U": self.U, "V": self.V,
               "slices": np.array([[sl.start, sl.stop] for sl in self.slices], dtype=np.int64).reshape(-1, 2)}
        for h, loc in enumerate(self.local):
            if loc is not None:
                out[f"LU{h}"], out[f"Li{h}"], out[f"LL{h}"] = loc.U, loc.items, loc.L
        return out

    @classmethod
    def from_arrays(cls, arrays: dict) -> "EntityFactors":
        """The inverse of :meth:`to_arrays` (arrays without ``slices``: the shared factors only)."""
        if "slices" not in arrays:
            return cls(arrays["U"], arrays["V"])
        slices = [slice(int(a), int(b)) for a, b in np.asarray(arrays["slices"]).reshape(-1, 2)]
        local = [LocalColumns(arrays[f"LU{h}"], np.asarray(arrays[f"Li{h}"], dtype=np.int64), arrays[f"LL{h}"])
                 if f"LU{h}" in arrays else None for h in range(len(slices))]
        return cls(arrays["U"], arrays["V"], slices, local)


def as_entity_factors(U, V: np.ndarray | None = None) -> EntityFactors:
    """``U`` itself when it is an :class:`EntityFactors` (``V`` must then be None), else the shared
    model ``(U, V)``."""
    if isinstance(U, EntityFactors):
        if V is not None:
            raise ValueError("pass EntityFactors alone (V=None)")
        return U
    return EntityFactors(U, V)


def from_entity_parts(n_users: int, slices: Sequence[slice], V: np.ndarray,
                      per_entity: Sequence[tuple[np.ndarray, np.ndarray]]) -> EntityFactors:
    """Per-entity ``(U_h, V_h)`` pairs whose first ``r = V.shape[1]`` columns are on the shared ``V``
    (any further columns the entity's own) → one :class:`EntityFactors` (local parts kept sparse in
    items; nothing O(items × entities) is formed)."""
    V = np.asarray(V, dtype=np.float64)
    r = V.shape[1]
    U = np.zeros((n_users, r))
    local: list[LocalColumns | None] = []
    for sl, (U_h, V_h) in zip(slices, per_entity):
        U[sl] = U_h[:, :r]
        local.append(LocalColumns.from_dense(U_h[:, r:], V_h[:, r:]) if V_h.shape[1] > r else None)
    return EntityFactors(U, V, slices, local)
