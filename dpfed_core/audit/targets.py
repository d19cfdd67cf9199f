"""Who a membership audit is about: the target users of one entity (a synthetic worst case, the
most isolated user, a typical one, or a named one) and the two neighbouring datasets without and
with the target — exactly the add-or-remove-one-user relation of the guarantee.

Apart from :mod:`dpfed_core.audit.membership` because choosing targets reads the entity's rows and
nothing of a release: the attacks only see a target's row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core.audit.defaults import TARGET_LABELS
from dpfed_core.errors import ConfigError


@dataclass(frozen=True)
class AuditTarget:
    """One user whose membership is audited.

    name : label shown in reports. kind : "synthetic" | "outlier" | "typical" | "user".
    row : (m,) the target's row as the mechanism receives it (dense, float64).
    index : row index within the entity's matrix for a real user (None for a synthetic row).
    user_id : the user's id for a real user. nn_distance : Euclidean distance to the nearest other
    user of the entity (value units), a measure of how exposed the target is.
    """

    name: str
    kind: str
    row: np.ndarray
    index: int | None = None
    user_id: str | None = None
    nn_distance: float = math.nan

    def describe(self) -> dict:
        return {"name": self.name, "kind": self.kind, "user_id": self.user_id,
                "nonzeros": int(np.count_nonzero(self.row)), "norm": float(np.linalg.norm(self.row)),
                "nn_distance": self.nn_distance}


def _row_sq_norms(X: sp.csr_matrix) -> np.ndarray:
    return np.asarray(X.multiply(X).sum(1)).ravel()


def nearest_neighbour_stats(X: sp.csr_matrix, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """For each row: distance to its nearest other row, and mean distance to all other rows
    (Euclidean, value units). Chunked so memory stays O(chunk·n)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    n = X.shape[0]
    sq = _row_sq_norms(X)
    nn = np.full(n, np.inf)
    mean = np.zeros(n)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        G = np.asarray((X[s:e] @ X.T).todense())
        D = np.sqrt(np.maximum(sq[s:e, None] - 2.0 * G + sq[None, :], 0.0))
        D[np.arange(e - s), np.arange(s, e)] = np.inf
        nn[s:e] = D.min(1)
        D[np.arange(e - s), np.arange(s, e)] = 0.0
        mean[s:e] = D.sum(1) / max(n - 1, 1)
    return nn, mean


def worst_case_row(X: sp.csr_matrix, value_max: float, support: int) -> np.ndarray:
    """A synthetic user at the worst spot for prototype releases: the public maximum Λ∞ on the
    ``support`` items the entity's users touch least (ties by item index). Its ℓ2 norm is
    Λ∞·√s — exactly the default row bound Λ of ``dp-prototypes``, so no clipping softens it — and
    its presence moves the cluster sums of items that are otherwise (nearly) zero."""
    m = X.shape[1]
    s = int(min(max(support, 1), m))
    col_count = np.diff(sp.csc_matrix(X).indptr)
    items = np.lexsort((np.arange(m), col_count))[:s]
    row = np.zeros(m)
    row[items] = float(value_max)
    return row


#: The fewest users an entity needs for a real target (the outlier, typical or a named user): the target is
#: measured against the entity's other users, so there must be one.
MIN_USERS_FOR_REAL_TARGET = 2


def too_few_users(n_users: int, specs: Sequence[str]) -> bool:
    """Whether ``specs`` ask for a real target of an entity of ``n_users`` users that cannot have one —
    the one rule :func:`check_entity_size` enforces and the audit page states before its button."""
    return n_users < MIN_USERS_FOR_REAL_TARGET and any(s != "synthetic" for s in specs)


def check_entity_size(n_users: int, specs: Sequence[str], entity: str | None = None) -> None:
    """Refuse a real target of an entity with too few users (:func:`too_few_users`), naming the entity, its
    users and the two ways out: its synthetic target only, or another entity."""
    if not too_few_users(n_users, specs):
        return
    where = f"entity {entity!r}" if entity is not None else "the audited entity"
    raise ConfigError(f"auditing a real user (the outlier, typical or user:<id> target) needs an entity with at "
                      f"least {MIN_USERS_FOR_REAL_TARGET} users, and {where} has {n_users}: audit its synthetic "
                      "target only (targets=synthetic), or audit another entity (--entity)", param="targets")


def check_target_users(dataset, entity: str | int, specs: Sequence[str]) -> None:
    """The targets can be found in the audited entity — checked before an audit is planned or charged, so a
    refusal is one error, never a reservation that fails: the entity has users enough for a real target
    (:func:`check_entity_size`), and every ``user:<id>`` target names one of its users (an id of another
    entity names that entity)."""
    h = dataset.entity_index(entity)
    name = dataset.entity_names[h]
    sl = dataset.entity_slices()[h]
    check_entity_size(int(sl.stop - sl.start), specs, name)
    ids = np.asarray(dataset.user_ids).astype(str)
    own = ids[sl]
    for spec in dict.fromkeys(specs):
        if not str(spec).startswith("user:"):
            continue
        uid = str(spec).split(":", 1)[1]
        if uid in own:
            continue
        elsewhere = np.flatnonzero(ids == uid)
        if elsewhere.size:
            other = dataset.entity_names[int(np.asarray(dataset.entity_of_user)[elsewhere[0]])]
            raise ConfigError(f"the user with id {uid!r} is in entity {other!r}, not in {name!r}: audit entity "
                              f"{other!r} (--entity), or give the id of one of {name!r}'s users", param="targets")
        raise ConfigError(f"no user with id {uid!r} in entity {name!r} (nor in any other): give the id of one of "
                          "its users, or audit the outlier or typical user instead", param="targets")


def make_targets(X: sp.csr_matrix, specs: Sequence[str], value_max: float, support: int,
                 user_ids: Sequence[str] | None = None, entity: str | None = None) -> list[AuditTarget]:
    """Build the audit targets of one entity (``entity``: its name, for the messages).

    specs : any of ``"synthetic"``, ``"outlier"`` (largest nearest-neighbour distance),
    ``"typical"`` (smallest mean distance to the others) and ``"user:<id>"``.
    Real rows are clipped to [0, value_max] (the public bound every method clips to).
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    n = X.shape[0]
    Xc = X.copy()
    np.clip(Xc.data, 0.0, value_max, out=Xc.data)
    ids = np.asarray(user_ids if user_ids is not None else [str(i) for i in range(n)]).astype(str)
    check_entity_size(n, specs, entity)
    need_real = any(s != "synthetic" for s in specs)
    nn, mean = nearest_neighbour_stats(Xc) if need_real else (None, None)
    out: list[AuditTarget] = []
    for spec in dict.fromkeys(specs):
        if spec == "synthetic":
            row = worst_case_row(Xc, value_max, support)
            d = np.sqrt(np.maximum(_row_sq_norms(Xc) - 2.0 * (Xc @ row) + row @ row, 0.0))
            out.append(AuditTarget(TARGET_LABELS["synthetic"], "synthetic", row,
                                   nn_distance=float(d.min()) if n else math.nan))
            continue
        if spec == "outlier":
            i = int(np.argmax(nn))
        elif spec == "typical":
            i = int(np.argmin(mean))
        elif spec.startswith("user:"):
            uid = spec.split(":", 1)[1]
            hits = np.flatnonzero(ids == uid)
            if hits.size == 0:
                where = f"entity {entity!r}" if entity is not None else "the audited entity"
                raise ConfigError(f"no user with id {uid!r} in {where}: give the id of one of its users, or audit "
                                  "the outlier or typical user instead", param="targets")
            i = int(hits[0])
        else:
            raise ConfigError(f"unknown audit target {spec!r}; use synthetic, outlier, typical or user:<id>")
        kind = spec.split(":")[0] if not spec.startswith("user:") else "user"
        label = TARGET_LABELS.get(kind, "chosen user")
        out.append(AuditTarget(f"{label} ({ids[i]})", kind, Xc[i].toarray().ravel(), i, str(ids[i]),
                               float(nn[i])))
    return out


def neighbouring_pair(X: sp.csr_matrix, target: AuditTarget) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(D₀ without the target, D₁ with it) — the add/remove-one-user neighbours of the guarantee."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if target.index is None:
        return X, sp.vstack([X, sp.csr_matrix(target.row[None, :])], format="csr")
    keep = np.ones(X.shape[0], dtype=bool)
    keep[target.index] = False
    return X[keep], X
