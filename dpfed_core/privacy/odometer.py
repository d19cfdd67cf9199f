"""The privacy budget odometer (issue 11): every release of a dataset is charged per entity against a
cap the data owner sets, and refused *before any noise is drawn* when it would pass the cap.

What is charged
    A *release* is one output computed from the private data with a privacy claim: a run (and each
    method it is compared with), each point (method, ε, seed) of a sweep, an audit. Its charge to
    entity h is the (ε_h, δ_h) its ledger guarantees for h (SPEC §3; for a planned release the
    requested (ε, δ), which the ledger never exceeds). Releases of the same dataset compose
    **sequentially per entity by basic composition**: spent_h = (Σ ε_h, Σ δ_h) over every release.
    (Entities hold disjoint users, so one entity's spend never touches another's budget.) Basic
    summation is loose but valid for any mix of mechanisms; no tighter accountant is used here.

Identity
    The budget belongs to the *people in the data*, so the key is a content fingerprint
    (:func:`dataset_key`): all user ids, item ids, values and the entity of every user, in a
    canonical order. Re-uploading or re-loading the same data — even under another file name — is
    the same dataset and its spend carries over. The display name is *not* part of the key: renaming
    a file must not reset a budget. Limitation: a *changed* dataset (one user removed) is a new key;
    the odometer cannot know that it holds the same people.

Policy (documented in the README's "Privacy budget" section)
    * No cap set: releases are charged and listed, never refused. ``set_cap`` sets a per-entity cap
      (ε, δ) for a dataset; ``ε = inf`` removes it.
    * The check ``spent_h + charge_h ≤ cap`` for every entity h and the insertion of the charge are
      one ``BEGIN IMMEDIATE`` transaction: concurrent sessions cannot overspend together.
    * A release is charged from the moment it is reserved, whether it then succeeds or fails (a
      failed run may already have released something); nothing is ever refunded, and deleting a
      run from the history does not touch the odometer.
    * **Simulation** releases (noise reproducible from the seed, "no privacy claim") are recorded
      with their requested ε and flagged, and not charged (issue 11).
    * **Non-private** releases (ε = ∞: raw data or exact statistics leave an entity, e.g. the
      ``central``, ``kmeans`` or ``popularity`` references, an ε = inf sweep point, an audit) are
      refused on a dataset with a finite cap unless explicitly allowed (``allow_non_private``; CLI
      ``--allow-non-private``; dashboard checkbox "Allow non-private releases" beside each run button). An allowed one is
      recorded with ε = ∞ for the entities it touched and counted apart: those entities' DP spend
      stays the finite sum (so later DP releases remain bounded by the cap) while the balance says
      their overall guarantee is void (``n_non_private > 0``).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

import numpy as np

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError, DpfedError
from dpfed_core.privacy.store import Store, StoreError, now_iso  # noqa: F401  (StoreError re-exported)

#: Relative slack of the cap comparison (floating-point sums of ε shares).
_REL_TOL = 1e-9

#: Where the cap is set, named in every refusal.
CAP_CONTROL = ("`python -m dpfed_core budget set-cap --data … --epsilon E [--delta D]` "
               "(dashboard: the \"Budget cap ε per entity\" control on the History page)")
NON_PRIVATE_CONTROL = ("--allow-non-private (dashboard: the \"Allow non-private releases\" checkbox beside the "
                       "run button)")


class BudgetRefused(DpfedError):
    """A release would take an entity past the data owner's cap (or is non-private on a capped
    dataset without permission). Raised before anything is computed."""


# ================================================================================ identity
def _strings_digest(h: "hashlib._Hash", arr: np.ndarray) -> None:
    # Length-prefixed UTF-8: no separator ambiguity whatever the ids contain.
    parts = [str(s).encode("utf-8") for s in arr.tolist()]
    h.update(len(parts).to_bytes(8, "little"))
    h.update(np.fromiter((len(p) for p in parts), dtype="<u8", count=len(parts)).tobytes())
    h.update(b"".join(parts))


#: id(dataset) → (weak reference, key): a dataset is immutable by convention, so its key is computed
#: once per object (the dashboard asks on every page render).
_KEY_MEMO: dict[int, tuple[weakref.ref, str]] = {}


def dataset_key(dataset: FederatedDataset) -> str:
    """Content fingerprint of a dataset: SHA-256 over the entity of every user, all user ids, all
    item ids and every stored value, in a canonical order (users by (entity, id), items by id), so
    the same data loaded from another file name or in another row order has the same key.

    Returns ``"ds-" + 40 hex digits``. Cost: one sort of users and items and one pass over X
    (about 10 ms per 100,000 stored values), once per dataset object.
    """
    hit = _KEY_MEMO.get(id(dataset))
    if hit is not None and hit[0]() is dataset:
        return hit[1]
    key = _dataset_key(dataset)
    for k in [k for k, (ref, _) in _KEY_MEMO.items() if ref() is None]:
        del _KEY_MEMO[k]
    _KEY_MEMO[id(dataset)] = (weakref.ref(dataset), key)
    return key


def _dataset_key(dataset: FederatedDataset) -> str:
    h = hashlib.sha256(b"dpfed-dataset-key-v1\0")
    ent = np.asarray(dataset.entity_names, dtype=object)[dataset.entity_of_user].astype(str)
    uid = np.asarray(dataset.user_ids).astype(str)
    iid = np.asarray(dataset.item_ids).astype(str)
    uorder = np.lexsort((uid, ent))
    iorder = np.argsort(iid, kind="stable")
    X = dataset.X.tocsr()[uorder][:, iorder].tocsr()
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    for arr in (ent[uorder], uid[uorder], iid[iorder]):
        _strings_digest(h, arr)
    h.update(np.asarray(X.shape, dtype="<i8").tobytes())
    h.update(X.indptr.astype("<i8").tobytes())
    h.update(X.indices.astype("<i8").tobytes())
    h.update(X.data.astype("<f8").tobytes())
    return "ds-" + h.hexdigest()[:40]


# ================================================================================ plans
@dataclass(frozen=True)
class PlannedRelease:
    """One release about to be computed.

    kind : "run" | "comparison" | "sweep point" | "audit".
    method, epsilon, delta, seed : what is run (requested ε; inf = non-private).
    charges : entity → (ε, δ) charged to it (upper bound of its ledger); ``inf`` = non-private.
        Entities not listed are charged nothing.
    simulation : noise reproducible from the seed — recorded, not charged.
    """

    kind: str
    method: str
    epsilon: float
    delta: float
    charges: Mapping[str, tuple[float, float]]
    seed: int | None = None
    simulation: bool = False
    note: str = ""

    @property
    def non_private(self) -> bool:
        return any(math.isinf(e) for e, _ in self.charges.values())


@dataclass
class EntityBalance:
    """One entity's account. ``spent_*`` sums the finite (DP) charges; ``n_non_private`` counts
    allowed non-private releases that touched the entity (its overall guarantee is then void)."""

    entity: str
    spent_epsilon: float
    spent_delta: float
    cap_epsilon: float
    cap_delta: float
    n_releases: int
    n_non_private: int

    @staticmethod
    def _left(cap: float, spent: float) -> float:
        # Within the cap check's floating-point slack counts as nothing left (no "1e-12 left").
        left = cap - spent
        return 0.0 if left <= cap * _REL_TOL else left

    @property
    def remaining_epsilon(self) -> float:
        return self._left(self.cap_epsilon, self.spent_epsilon) if math.isfinite(self.cap_epsilon) else math.inf

    @property
    def remaining_delta(self) -> float:
        return self._left(self.cap_delta, self.spent_delta) if math.isfinite(self.cap_epsilon) else math.inf

    @property
    def void(self) -> bool:
        return self.n_non_private > 0

    def to_dict(self) -> dict:
        return {"entity": self.entity, "spent_epsilon": self.spent_epsilon, "spent_delta": self.spent_delta,
                "cap_epsilon": self.cap_epsilon, "cap_delta": self.cap_delta,
                "remaining_epsilon": self.remaining_epsilon, "remaining_delta": self.remaining_delta,
                "n_releases": self.n_releases, "n_non_private": self.n_non_private, "void": self.void}


@dataclass
class Reservation:
    """Releases reserved (and charged) by :meth:`BudgetOdometer.reserve`; settle them with the
    actual ledger charges when known (never more than reserved is expected)."""

    odometer: "BudgetOdometer"
    dataset_key: str
    operation: str
    release_ids: list[int]
    plans: list[PlannedRelease]
    _open: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._open = set(self.release_ids)

    def settle(self, index: int, charges: Mapping[str, tuple[float, float]] | None = None) -> None:
        """Mark release ``index`` (order of the plans) released; replace its charges by ``charges``
        (entity → (ε, δ) from its ledger) if given. Simulation releases stay uncharged."""
        rid = self.release_ids[index]
        plan = self.plans[index]
        with self.odometer.store.write() as con:
            if charges is not None and not plan.simulation:
                con.execute("DELETE FROM charges WHERE release_id = ?", (rid,))
                con.executemany("INSERT INTO charges (release_id, entity, epsilon, delta) VALUES (?, ?, ?, ?)",
                                [(rid, str(e), float(c[0]), float(c[1])) for e, c in charges.items()
                                 if c[0] != 0 or c[1] != 0])
            con.execute("UPDATE releases SET status = 'released', settled = ? WHERE id = ?", (now_iso(), rid))
        self._open.discard(rid)

    def close(self, failed: bool = False) -> None:
        """Mark every unsettled release released (or failed); their reserved charges stay."""
        if not self._open:
            return
        status = "failed" if failed else "released"
        with self.odometer.store.write() as con:
            con.executemany("UPDATE releases SET status = ?, settled = ? WHERE id = ?",
                            [(status, now_iso(), rid) for rid in sorted(self._open)])
        self._open.clear()


# ================================================================================ odometer
def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.4g}"


class BudgetOdometer:
    """Per-dataset, per-entity privacy budget kept in the store file.

    Parameters
    ----------
    store : a :class:`Store`, a path, or None (:func:`~dpfed_core.privacy.store.default_store_path`).
    """

    def __init__(self, store: Store | str | os.PathLike | None = None) -> None:
        self.store = store if isinstance(store, Store) else Store(store)

    @property
    def path(self):
        return self.store.path

    # ------------------------------------------------------------------ datasets and caps
    def register(self, dataset: FederatedDataset, key: str | None = None) -> str:
        """Record the dataset (idempotent) and return its key."""
        key = key or dataset_key(dataset)
        with self.store.write() as con:
            self._upsert_dataset(con, key, dataset)
        return key

    @staticmethod
    def _upsert_dataset(con, key: str, dataset: FederatedDataset) -> None:
        t = now_iso()
        con.execute(
            "INSERT INTO datasets (key, name, entities, first_seen, last_seen) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET name = excluded.name, last_seen = excluded.last_seen",
            (key, str(dataset.name), json.dumps([str(e) for e in dataset.entity_names]), t, t))

    def _require_dataset(self, con, key: str) -> dict:
        row = con.execute("SELECT * FROM datasets WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise ConfigError(f"the store {self.path} has no dataset {key}; load the data once "
                              "(e.g. `python -m dpfed_core budget show --data …`)")
        return dict(row)

    def set_cap(self, dataset: FederatedDataset | str, epsilon: float, delta: float = 1e-5) -> str:
        """Set the per-entity cap (ε, δ) of a dataset (a dataset or its key). ``ε = inf`` removes it.
        A cap below what is already spent is allowed: every further charged release is refused."""
        try:
            epsilon, delta = float(epsilon), float(delta)
        except (TypeError, ValueError):
            raise ConfigError(f"the budget cap must be numbers, got ε={epsilon!r}, δ={delta!r}") from None
        if math.isnan(epsilon) or epsilon <= 0:
            raise ConfigError(f"the budget cap ε must be positive (inf removes the cap), got {epsilon}; "
                              f"set it with {CAP_CONTROL}")
        if math.isnan(delta) or not 0 <= delta < 1e-2:
            # As for a run's δ (issue 11): δ ≥ 1e-2 lets a mechanism publish a record outright.
            raise ConfigError(f"the budget cap δ must be in [0, 0.01), got {delta}; a usual cap is 1e-5; "
                              f"set it with {CAP_CONTROL}")
        with self.store.write() as con:
            if isinstance(dataset, str):
                key = dataset
                self._require_dataset(con, key)
            else:
                key = dataset_key(dataset)
                self._upsert_dataset(con, key, dataset)
            con.execute("INSERT INTO caps (dataset_key, epsilon, delta, set_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(dataset_key) DO UPDATE SET epsilon = excluded.epsilon, "
                        "delta = excluded.delta, set_at = excluded.set_at", (key, epsilon, delta, now_iso()))
        return key

    def cap(self, key: str) -> tuple[float, float]:
        """(ε, δ) cap per entity; (inf, inf) when none is set."""
        with self.store.read() as con:
            return self._cap(con, key)

    @staticmethod
    def _cap(con, key: str) -> tuple[float, float]:
        row = con.execute("SELECT epsilon, delta FROM caps WHERE dataset_key = ?", (key,)).fetchone()
        if row is None or math.isinf(row["epsilon"]):
            return math.inf, math.inf
        return float(row["epsilon"]), float(row["delta"])

    def datasets(self) -> list[dict]:
        """Every dataset in the store: key, name, entities, first/last seen, cap."""
        with self.store.read() as con:
            rows = [dict(r) for r in con.execute("SELECT * FROM datasets ORDER BY last_seen DESC")]
            for r in rows:
                r["entities"] = json.loads(r["entities"])
                r["cap_epsilon"], r["cap_delta"] = self._cap(con, r["key"])
        return rows

    # ------------------------------------------------------------------ balances
    @staticmethod
    def _spent(con, key: str) -> dict[str, list]:
        """entity → [Σ finite ε, Σ finite δ, n releases, n non-private] over charged releases."""
        acc: dict[str, list] = {}
        for r in con.execute(
                "SELECT c.entity AS entity, c.epsilon AS eps, c.delta AS dlt FROM charges c "
                "JOIN releases r ON r.id = c.release_id WHERE r.dataset_key = ? AND r.simulation = 0", (key,)):
            a = acc.setdefault(r["entity"], [0.0, 0.0, 0, 0])
            a[2] += 1
            if math.isinf(r["eps"]):
                a[3] += 1
            else:
                a[0] += r["eps"]
                a[1] += r["dlt"]
        return acc

    def balance(self, dataset: FederatedDataset | str) -> list[EntityBalance]:
        """Spent / cap / remaining per entity (the dataset's entities first, in their order)."""
        key = dataset if isinstance(dataset, str) else dataset_key(dataset)
        with self.store.read() as con:
            row = con.execute("SELECT entities FROM datasets WHERE key = ?", (key,)).fetchone()
            names = json.loads(row["entities"]) if row else (
                [] if isinstance(dataset, str) else list(dataset.entity_names))
            cap_e, cap_d = self._cap(con, key)
            spent = self._spent(con, key)
        names = list(dict.fromkeys([*names, *spent]))
        return [EntityBalance(e, *(spent.get(e, [0.0, 0.0, 0, 0])[:2]), cap_e, cap_d,
                              *(spent.get(e, [0.0, 0.0, 0, 0])[2:])) for e in names]

    def releases(self, dataset: FederatedDataset | str, limit: int | None = None) -> list[dict]:
        """The releases of a dataset, newest first: id, created, kind, method, ε, δ, seed, simulation,
        non_private, status, operation, note, and the largest charge over entities."""
        key = dataset if isinstance(dataset, str) else dataset_key(dataset)
        sql = ("SELECT r.*, MAX(c.epsilon) AS max_charge_epsilon, MAX(c.delta) AS max_charge_delta, "
               "COUNT(c.entity) AS n_entities_charged FROM releases r "
               "LEFT JOIN charges c ON c.release_id = r.id WHERE r.dataset_key = ? "
               "GROUP BY r.id ORDER BY r.id DESC")
        params: tuple = (key,)
        if limit is not None:
            sql += " LIMIT ?"
            params = (key, int(limit))
        with self.store.read() as con:
            out = []
            for r in con.execute(sql, params):
                d = dict(r)
                d["simulation"] = bool(d["simulation"])
                d["non_private"] = bool(d["non_private"])
                d["charged"] = not d["simulation"] and d["n_entities_charged"] > 0
                if d["max_charge_epsilon"] is None:
                    d["max_charge_epsilon"], d["max_charge_delta"] = 0.0, 0.0
                out.append(d)
        return out

    def charges(self, release_id: int) -> dict[str, tuple[float, float]]:
        with self.store.read() as con:
            return {r["entity"]: (r["epsilon"], r["delta"]) for r in
                    con.execute("SELECT * FROM charges WHERE release_id = ? ORDER BY entity", (release_id,))}

    # ------------------------------------------------------------------ charging
    def reserve(self, dataset: FederatedDataset, plans: Sequence[PlannedRelease], *,
                allow_non_private: bool = False, key: str | None = None,
                operation: str | None = None, enforce: bool = True) -> Reservation:
        """Check every entity's cap against the plans and charge them, atomically — call it before
        any noise is drawn. Raises :class:`BudgetRefused` (nothing charged) if any entity would pass
        its cap, or if a plan is non-private on a capped dataset without ``allow_non_private``.
        ``enforce=False`` records releases that already happened (never refused: the odometer must
        not forget a release)."""
        if not plans:
            raise ConfigError("nothing to charge: the release plan is empty")
        key = key or dataset_key(dataset)
        operation = operation or uuid.uuid4().hex
        with self.store.write() as con:
            self._upsert_dataset(con, key, dataset)
            cap_e, cap_d = self._cap(con, key)
            charged = [p for p in plans if not p.simulation]
            if enforce and math.isfinite(cap_e) and charged:
                self._check(con, key, dataset, charged, cap_e, cap_d, allow_non_private)
            ids = []
            t = now_iso()
            for p in plans:
                cur = con.execute(
                    "INSERT INTO releases (dataset_key, operation, kind, method, epsilon, delta, seed, simulation, "
                    "non_private, status, created, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?)",
                    (key, operation, p.kind, p.method, float(p.epsilon), float(p.delta), p.seed,
                     int(bool(p.simulation)), int(p.non_private), t, p.note))
                rid = int(cur.lastrowid)
                ids.append(rid)
                if not p.simulation:
                    con.executemany(
                        "INSERT INTO charges (release_id, entity, epsilon, delta) VALUES (?, ?, ?, ?)",
                        [(rid, str(e), float(c[0]), float(c[1])) for e, c in p.charges.items()
                         if c[0] != 0 or c[1] != 0])
        return Reservation(self, key, operation, ids, list(plans))

    def _check(self, con, key, dataset, plans, cap_e, cap_d, allow_non_private) -> None:
        name = str(dataset.name)
        nonpriv = [p for p in plans if p.non_private]
        if nonpriv and not allow_non_private:
            what = ", ".join(sorted({f"{p.method} ({p.kind}, ε = {_fmt(p.epsilon)})" for p in nonpriv}))
            raise BudgetRefused(
                f"refused: dataset {name!r} has a budget cap (ε = {_fmt(cap_e)} per entity) and this would make "
                f"non-private releases (raw data or exact statistics leave entities): {what}. Nothing was "
                f"computed. Drop them, run with --simulation (no privacy claim), or allow them explicitly with "
                f"{NON_PRIVATE_CONTROL}; the cap is set with {CAP_CONTROL}")
        spent = self._spent(con, key)
        need: dict[str, list[float]] = {}
        for p in plans:
            for e, (de, dd) in p.charges.items():
                if math.isinf(de):
                    continue  # counted apart (allowed non-private)
                a = need.setdefault(str(e), [0.0, 0.0])
                a[0] += de
                a[1] += dd
        over = []
        for e, (de, dd) in need.items():
            se, sd = spent.get(e, [0.0, 0.0])[:2]
            if se + de > cap_e * (1 + _REL_TOL) or sd + dd > cap_d * (1 + _REL_TOL) + 1e-300:
                over.append((e, se, sd, de, dd))
        if over:
            n = len(plans)
            # Entities with the same numbers share one line (30 hospitals, one sentence).
            groups: dict[tuple, list[str]] = {}
            for e, se, sd, de, dd in over:
                groups.setdefault((round(se, 12), round(sd, 18), round(de, 12), round(dd, 18)), []).append(e)
            lines = []
            for (se, sd, de, dd), ents in list(groups.items())[:5]:
                who = (f"entity {ents[0]!r}" if len(ents) == 1 else
                       f"{len(ents)} entities ({', '.join(repr(x) for x in ents[:3])}{', …' if len(ents) > 3 else ''})")
                lines.append(f"{who}: spent ε = {_fmt(se)}, δ = {sd:.3g}, this would add ε = {_fmt(de)}, "
                             f"δ = {dd:.3g}")
            shown = "; ".join(lines) + (f"; … and {len(groups) - 5} more groups" if len(groups) > 5 else "")
            raise BudgetRefused(
                f"refused: privacy budget cap reached for dataset {name!r} (cap ε = {_fmt(cap_e)}, δ = {cap_d:.3g} "
                f"per entity; {n} release{'s' if n > 1 else ''} planned). {shown}. Nothing was computed. Lower ε, "
                f"run fewer points, run with --simulation (no privacy claim), or — if you own the data — raise "
                f"the cap with {CAP_CONTROL}")

    @contextlib.contextmanager
    def charge(self, dataset: FederatedDataset, plans: Sequence[PlannedRelease], *,
               allow_non_private: bool = False, key: str | None = None) -> Iterator[Reservation]:
        """``with odometer.charge(ds, plans) as r: …`` — reserve (may refuse) before the body runs,
        mark the releases released at the end, or failed (still charged) if the body raises."""
        res = self.reserve(dataset, plans, allow_non_private=allow_non_private, key=key)
        try:
            yield res
        except BaseException:
            with contextlib.suppress(StoreError):
                res.close(failed=True)
            raise
        res.close()
