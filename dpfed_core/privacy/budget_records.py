"""What the privacy budget odometer (:mod:`dpfed_core.privacy.odometer`) is asked and answers
with: a planned release and its charges (:class:`PlannedRelease`), an entity's account
(:class:`EntityBalance`), the releases it reserved and their settlement or withdrawal
(:class:`Reservation`), which account a dataset is charged to (:class:`Identity`), the dataset's
content key (:func:`dataset_key`) and the refusal that names its fixes (:class:`BudgetRefused`).

Apart from the odometer's store operations because none of these reads the store's tables to decide
anything: they are the values callers build, read and pass back (a :class:`Reservation` writes only
its own releases' status through the odometer's store).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sqlite3
import weakref
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import DpfedError
from dpfed_core.privacy.fingerprint import keyed_key  # noqa: F401  (the account name, beside the key it names)
from dpfed_core.privacy.store import StoreError, actor, now_iso, process_gone, process_identity

#: Relative slack of the cap comparison (floating-point sums of ε shares).
CAP_REL_TOL = 1e-9

#: What fixes a refusal, by front end. Messages carry ``{cap}``, ``{allow_non_private}``,
#: ``{simulation}``, ``{epsilon}``, ``{delta}`` placeholders (:meth:`BudgetRefused.render`); str() uses the
#: Python names, the CLI :data:`CLI_CONTROLS`, the dashboard its own labels (``ui/budget.py``).
PYTHON_CONTROLS = {"cap": "BudgetOdometer.set_cap", "allow_non_private": "allow_non_private=True",
                   "simulation": "simulation=True", "epsilon": "a smaller epsilon",
                   "epsilons": "a smaller ε grid (epsilons)",
                   "delta": "a smaller delta", "confirm_raise": "confirm_raise=True"}
CLI_CONTROLS = {"cap": "`python -m dpfed_core budget set-cap --data … --epsilon E [--delta D]`",
                "allow_non_private": "--allow-non-private", "simulation": "--simulation",
                "epsilon": "a smaller --epsilon", "epsilons": "smaller or fewer --epsilons",
                "delta": "a smaller --delta", "confirm_raise": "--confirm-raise"}


class BudgetRefused(DpfedError):
    """A release would take an entity past the data owner's cap (or is non-private on a capped
    dataset without permission). Raised before anything is computed.

    The message names its fixes as ``{placeholders}``; ``str()`` fills in Python names,
    :meth:`render` a front end's names (CLI flags or dashboard controls)."""

    def __init__(self, template: str, *, param: str | None = None) -> None:
        self.template = template
        super().__init__(_fill(template, PYTHON_CONTROLS), param=param)

    def render(self, names=None) -> str:  # type: ignore[override]
        """The message with each fix named for one front end: ``names`` maps placeholder keys to
        control names; missing keys fall back to the CLI's (``CLI_NAMES`` has no budget keys)."""
        table = dict(CLI_CONTROLS)
        if names:
            # a front end's controls replace the CLI's phrases; a bare flag never does (the phrase says it)
            table.update({k: v for k, v in names.items() if k in CLI_CONTROLS and not str(v).startswith("--")})
        return " ".join(_fill(self.template, table).split())


def _fill(template: str, names: Mapping[str, str]) -> str:
    out = template
    for k, v in names.items():
        out = out.replace("{" + k + "}", v)
    return out


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

    Returns ``"ds-" + 40 hex digits``: kept in memory only; whatever is written names the dataset by
    :func:`keyed_key` (``BudgetOdometer.account_key``). Cost: one sort of users and items and one pass over X
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
    rho : its ρ-zCDP per charged entity (an upper bound), or None when it cannot be derived (then it
        composes by its (ε, δ) only). gaussian : every mechanism in it is Gaussian (μ-GDP, μ² = 2ρ).
    batch : part of a non-adaptive batch (a sweep's points, all planned before any runs): the
        releases of one operation with ``batch`` compose by PLD among themselves.
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
    rho: float | None = None
    gaussian: bool = False
    batch: bool = False

    @property
    def non_private(self) -> bool:
        return any(math.isinf(e) for e, _ in self.charges.values())


@dataclass
class EntityBalance:
    """One entity's account. ``spent_epsilon`` is the composed charge (the smaller of basic
    composition and zCDP at the cap's δ, ``accountant`` says which); ``spent_delta`` the basic Σδ;
    ``n_non_private`` counts allowed non-private releases that touched the entity (its overall
    guarantee is then void)."""

    entity: str
    spent_epsilon: float
    spent_delta: float
    cap_epsilon: float
    cap_delta: float
    n_releases: int
    n_non_private: int
    basic_epsilon: float = 0.0
    tight_epsilon: float = 0.0
    accountant: str = "none"
    guarantee_delta: float = 0.0

    @staticmethod
    def _left(cap: float, spent: float) -> float:
        # Within the cap check's floating-point slack counts as nothing left (no "1e-12 left").
        left = cap - spent
        return 0.0 if left <= cap * CAP_REL_TOL else left

    @property
    def remaining_epsilon(self) -> float:
        return self._left(self.cap_epsilon, self.spent_epsilon) if math.isfinite(self.cap_epsilon) else math.inf

    @property
    def remaining_delta(self) -> float:
        return self._left(self.cap_delta, self.spent_delta) if math.isfinite(self.cap_epsilon) else math.inf

    @property
    def void(self) -> bool:
        return self.n_non_private > 0

    @property
    def stated_basic_epsilon(self) -> float:
        """Basic composition's ε as a guarantee: Σε while Σδ ≤ δ/2 (the half of the cap's δ the basic
        filter has), else ∞ — past that Σε bounds nothing, so no screen may show it as an ε."""
        from dpfed_core.privacy.accounting import basic_delta_within

        return self.basic_epsilon if basic_delta_within(self.spent_delta, self.guarantee_delta) else math.inf

    def to_dict(self) -> dict:
        return {"entity": self.entity, "spent_epsilon": self.spent_epsilon, "spent_delta": self.spent_delta,
                "cap_epsilon": self.cap_epsilon, "cap_delta": self.cap_delta,
                "remaining_epsilon": self.remaining_epsilon, "remaining_delta": self.remaining_delta,
                "n_releases": self.n_releases, "n_non_private": self.n_non_private, "void": self.void,
                "basic_epsilon": self.stated_basic_epsilon, "tight_epsilon": self.tight_epsilon,
                "accountant": self.accountant, "guarantee_delta": self.guarantee_delta}


@dataclass
class Reservation:
    """Releases reserved (and charged) by :meth:`~dpfed_core.privacy.odometer.BudgetOdometer.reserve`;
    settle them with the actual ledger charges when known (never more than reserved is expected)."""

    odometer: "BudgetOdometer"  # named, not imported: the odometer imports this module
    dataset_key: str
    operation: str
    release_ids: list[int]
    plans: list[PlannedRelease]
    entity_map: Mapping[str, Sequence[str]] | None = None
    #: the same releases charged to other accounts whose people the data holds (at their planned charge,
    #: an upper bound of the ledger's): closed, failed or withdrawn with these
    extra_ids: list[int] = field(default_factory=list)
    #: plan index → its ids among ``extra_ids`` (one per other account)
    extra_of: Mapping[int, Sequence[int]] = field(default_factory=dict)
    #: ids of releases a killed process's sweep had reserved and never started, given back by this charge
    recovered: list[int] = field(default_factory=list)
    _open: set[int] = field(default_factory=set)
    #: how far a tracked computation got, as kept in the store (:meth:`track`); None: not tracked
    _progress: dict | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._open = set(self.release_ids) | set(self.extra_ids)

    def settle(self, index: int, charges: Mapping[str, tuple[float, float]] | None = None,
               rho: Mapping[str, tuple[float | None, bool]] | None = None) -> None:
        """Mark release ``index`` (order of the plans) released; replace its charges by ``charges``
        (entity → (ε, δ) from its ledger) if given, with ``rho`` (entity → (ρ or None, Gaussian-only))
        derived from the same ledger (missing: no ρ). Simulation releases stay uncharged."""
        rid = self.release_ids[index]
        plan = self.plans[index]
        with self.odometer.store.write() as con:
            if charges is not None and not plan.simulation:
                rho = rho or {}
                rows = mapped_charge_rows(rid, {e: (c[0], c[1], *(rho.get(e, (None, False)))) for e, c in charges.items()},
                                    self.entity_map)
                con.execute("DELETE FROM charges WHERE release_id = ?", (rid,))
                con.executemany("INSERT INTO charges (release_id, entity, epsilon, delta, rho, gaussian) "
                                "VALUES (?, ?, ?, ?, ?, ?)", rows)
            con.execute("UPDATE releases SET status = 'released', settled = ?, settled_by = ? WHERE id = ?",
                        (now_iso(), actor(), rid))
        self._open.discard(rid)

    def close(self, failed: bool = False) -> None:
        """Mark every unsettled release released (or failed); their reserved charges stay."""
        if not self._open:
            return
        status = "failed" if failed else "released"
        t, who = now_iso(), actor()
        with self.odometer.store.write() as con:
            con.executemany("UPDATE releases SET status = ?, settled = ?, settled_by = ? WHERE id = ?",
                            [(status, t, who, rid) for rid in sorted(self._open)])
        self._open.clear()

    def withdraw(self, draws: int, evidence: str) -> None:
        """Give back the reservation of a run that failed *before its first draw*: ``draws`` is the
        number of rows its ledgers hold (every mechanism records its row before it draws, so 0 rows
        proves that no noise was drawn and nothing left an entity). Refused (``ValueError``) when a
        draw happened or a release was already settled: those stay charged. The releases stay listed
        with status ``withdrawn``, the evidence and who withdrew them; they are charged nothing."""
        if int(draws) != 0:
            raise ValueError(f"{draws} ledger rows were recorded: noise was drawn, the charge stays")
        if set(self._open) != set(self.release_ids) | set(self.extra_ids):
            raise ValueError("a release of this reservation was already settled: the charge stays")
        self._mark_withdrawn(sorted(self._open), evidence)

    def withdraw_unstarted(self, indices: Iterable[int], evidence: str) -> list[int]:
        """Give back releases ``indices`` (order of the plans) that never started: the points of a sweep
        after the last one it was computing when it stopped. The caller's proof is a count of ledger rows
        (every mechanism records its row before it draws): a point the computation never reached drew no
        noise and released nothing. Only releases still reserved are withdrawn — a settled one stays
        charged; with the same release in other accounts (their ``extra_of`` ids). Returns the indices
        withdrawn; the others stay open (:meth:`close` them)."""
        picked = [i for i in dict.fromkeys(int(i) for i in indices)
                  if 0 <= i < len(self.release_ids) and self.release_ids[i] in self._open]
        rids = [rid for i in picked for rid in (self.release_ids[i], *self.extra_of.get(i, ()))]
        if rids:
            self._mark_withdrawn(rids, evidence)
        return picked

    def _mark_withdrawn(self, rids: Sequence[int], evidence: str) -> None:
        """Releases ``rids`` still reserved marked withdrawn (charged nothing), with ``evidence`` in their
        note and who withdrew them; they are no longer open."""
        with self.odometer.store.write() as con:
            mark_reserved(con, rids, "withdrawn", evidence)
        self._open.difference_update(rids)

    # ------------------------------------------------------------------ a sweep's progress, kept in the store
    # A process killed outright (SIGKILL, out of memory) runs no code as it stops: what it would have given
    # back (withdraw_unstarted) has to be read from the store by the next process that charges it.

    def track(self, sequential: bool = True) -> None:
        """Keep, in the store, how far the computation of these releases got. ``sequential``: computed one
        after another, in the plans' order — none finished yet, and :meth:`note_finished` moves it; otherwise
        (a run and its comparisons) which have drawn is in doubt, so a killed process's releases all stay
        charged, marked failed instead of reserved for ever. :meth:`untrack` ends it; a process that ends
        without it leaves it for :func:`recover_killed`. Nothing is kept where this process cannot be told
        gone later (no ``/proc``)."""
        owner = process_identity()
        if owner is None:
            return
        per_plan = [[rid, *self.extra_of.get(i, ())] for i, rid in enumerate(self.release_ids)]
        self._progress = {"version": PROGRESS_VERSION, "owner": owner, "finished": 0 if sequential else None,
                          "ids": per_plan}
        self._write_progress()

    def note_finished(self, points: int | None) -> None:
        """``points`` releases (the first ones, in the plans' order) are finished; None: which are is in
        doubt, and a killed process's releases are then all left charged. Written before the next release
        starts; a write that fails raises (the computation must stop): a count left behind the releases
        computed since would give back one that drew."""
        if self._progress is None or self._progress["finished"] is None:
            return
        self._progress["finished"] = None if points is None else int(points)
        self._write_progress()

    def untrack(self) -> None:
        """The computation ended in this process (settled, failed or withdrawn here): nothing to recover. A
        store that refuses the delete keeps the row, which then gives nothing back: its releases are no
        longer reserved (:func:`recover_killed` touches only those)."""
        if self._progress is None:
            return
        self._progress = None
        with contextlib.suppress(StoreError), self.odometer.store.write() as con:
            con.execute("DELETE FROM meta WHERE name = ?", (PROGRESS_PREFIX + self.operation,))

    def _write_progress(self) -> None:
        with self.odometer.store.write() as con:
            con.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)",
                        (PROGRESS_PREFIX + self.operation, json.dumps(self._progress)))


#: Name prefix of a meta row holding a running computation's progress (:meth:`Reservation.track`), and
#: the version of its format: a row of another version is read as no proof and left as it is.
PROGRESS_PREFIX = "progress:"
PROGRESS_VERSION = 1


def mark_reserved(con: sqlite3.Connection, rids: Sequence[int], status: str, evidence: str) -> None:
    """Releases ``rids`` that are still reserved get ``status`` (withdrawn: charged nothing; failed:
    charged), ``evidence`` added to their note and who settled them. A release settled meanwhile is left."""
    t, who = now_iso(), actor()
    con.executemany("UPDATE releases SET status = ?, settled = ?, settled_by = ?, "
                    "note = CASE WHEN note = '' THEN ? ELSE note || '; ' || ? END WHERE id = ? "
                    "AND status = 'reserved'",
                    [(status, t, who, evidence, evidence, rid) for rid in rids])


def recover_killed(con: sqlite3.Connection) -> list[int]:
    """Settle what processes killed outright left reserved (inside the caller's write transaction): for
    each progress row (:meth:`Reservation.track`) whose process provably runs no more
    (:func:`~dpfed_core.privacy.store.process_gone`), every release after the one it was computing when
    it ended — the one after its last finished — never started, drew no noise and released nothing: it
    is withdrawn; the rest stay charged (status failed). Only releases of the row's own operation that
    are still reserved are touched; a row of another shape or version proves nothing and is left, so a
    damaged row never stops a charge. Returns the ids withdrawn."""
    given: list[int] = []
    for name, value in con.execute("SELECT name, value FROM meta WHERE name LIKE ?",
                                   (PROGRESS_PREFIX + "%",)).fetchall():
        try:
            plan_ids, finished = _progress_of_gone(value)
        except (ValueError, TypeError, KeyError):
            continue  # not a row this code wrote: no proof, the releases stay as they are
        if plan_ids is None:
            continue
        own = {int(r) for (r,) in con.execute("SELECT id FROM releases WHERE operation = ?",
                                               (name[len(PROGRESS_PREFIX):],))}
        # the release it was computing (the one after the last finished) may have drawn: it stays charged
        unstarted = [] if finished is None else [r for ids in plan_ids[finished + 1:] for r in ids if r in own]
        mark_reserved(con, unstarted, "withdrawn", "withdrawn: not started before its process was killed "
                                                   "(the process ran no more; its progress was kept in the store)")
        mark_reserved(con, [r for ids in plan_ids for r in ids if r in own], "failed",
                      "its process ended before settling it (killed, or its last store write failed): charged "
                      "as reserved")
        con.execute("DELETE FROM meta WHERE name = ?", (name,))
        given.extend(unstarted)
    return given


def _progress_of_gone(value: str) -> tuple[list[list[int]] | None, int | None]:
    """``(release ids per plan, finished count or None)`` of a progress row whose process provably runs
    no more; ``(None, None)`` while it may still run. Raises ValueError, TypeError or KeyError for a row
    of another shape or version."""
    progress = json.loads(value)
    if not isinstance(progress, dict) or progress.get("version") != PROGRESS_VERSION:
        raise ValueError("not a progress row of this version")
    finished = progress["finished"]
    if finished is not None and (type(finished) is not int or finished < 0):
        raise ValueError("finished is not a count")
    plan_ids = progress["ids"]
    if not isinstance(plan_ids, list) or not all(
            isinstance(ids, list) and all(type(r) is int for r in ids) for ids in plan_ids):
        raise TypeError("ids are not lists of release ids")
    return (plan_ids, finished) if process_gone(progress["owner"]) else (None, None)


def mapped_charge_rows(rid: int, charges: Mapping[str, tuple], entity_map: Mapping[str, Sequence[str]] | None
                 ) -> list[tuple]:
    """Charge rows (release, entity, ε, δ, ρ, gaussian) with a re-export's entities mapped onto the
    account's entities; an account entity reached through several (disjoint) new entities is
    charged the largest of their charges (parallel composition)."""
    out: dict[str, tuple] = {}
    for e, (eps, dlt, rho, gauss) in charges.items():
        if eps == 0 and dlt == 0:
            continue
        for target in (entity_map or {}).get(str(e)) or [str(e)]:
            prev = out.get(target)
            row = (float(eps), float(dlt), None if rho is None else float(rho), int(bool(gauss)))
            if prev is None:
                out[target] = row
            else:  # the larger on every coordinate (conservative)
                r = None if prev[2] is None or row[2] is None else max(prev[2], row[2])
                out[target] = (max(prev[0], row[0]), max(prev[1], row[1]), r, int(prev[3] and row[3]))
    return [(rid, t, *v) for t, v in out.items()]



# ================================================================================ accounts
#: How a dataset was recognised as stored people, said without which of the ways found them (which
#: would tell a prober more): the people fingerprint's four families (privacy/fingerprint.py).
RECOGNISED_BY = "recognised by its users' items, how many users hold each item, or their ids"


@dataclass(frozen=True)
class Identity:
    """Which account a dataset is charged to: its own (``alias_of`` None) or that of a stored dataset
    of the same people (``similarity``: their containment, :class:`~dpfed_core.privacy.fingerprint.PeopleMatch`),
    with its entities mapped (``entity_map``)."""

    key: str
    account: str
    alias_of: str | None
    alias_name: str | None
    similarity: float | None
    entity_map: dict[str, list[str]] | None

    def describe(self) -> str:
        if self.alias_of is None:
            return ""
        # recognised or not, nothing more: how many people matched and which entities they were found in
        # would tell whoever reads a dry run whether a record added to a probe is in the stored data
        return (f"same people as the stored dataset {self.alias_name!r} ({self.alias_of}; {RECOGNISED_BY}): "
                "charged to its budget")
