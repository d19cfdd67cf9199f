"""Results that survive a reload, and every release charged: the dashboard's side of the store.

Built on the store (:mod:`dpfed_core.privacy.store`, :mod:`dpfed_core.privacy.odometer`,
:mod:`dpfed_core.evaluation.history`, :mod:`dpfed_core.ui.budget`): the one SQLite file the command
line uses too (``$DPFED_STORE``, else ``<data home>/dpfed/dpfed.sqlite3``) holding the budget odometer
and the run history. Budgets are the odometer's accounts (the same people, however read, are one
account, capped once for both front ends); the history of a dataset is filtered on its content key
(:func:`dpfed_core.privacy.odometer.dataset_key`), so two uploads never share a history list.

What this module adds for the pages:

* :func:`charged` — run a computation inside an odometer reservation (refused before anything is
  computed when a cap would be passed); called from the background job, never from a cached function;
* :func:`save` / :func:`list_entries` / :func:`load` / :func:`delete` — the History page, with every
  read filtered on the owner's key;
* runs keep their factors: U, V and each entity's released prototypes go into a side table
  ``dashboard_arrays`` of the same file (``numpy.savez``), so a reopened run shows the same
  recommendations and "what the server saw" without re-running (a re-run would draw fresh noise: a
  new release, charged again).

No Streamlit here.
"""
from __future__ import annotations

import contextlib
import io
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterator, Sequence

import numpy as np

KINDS = ("run", "sweep", "audit")

_ARRAYS = ("CREATE TABLE IF NOT EXISTS dashboard_arrays ("
           "history_id INTEGER PRIMARY KEY, arrays BLOB NOT NULL)")


def store_missing() -> bool:
    """No store file yet (first start: nothing was ever charged or kept): a read answers "nothing stored,
    nothing spent" without making it or its folder. A store deleted beside its fingerprint key is not missing:
    opening it refuses it as a lost budget."""
    from dpfed_core.privacy.store import own_key_left, resolve_store_path

    path = resolve_store_path(None)
    return not (path.exists() or path.is_symlink() or own_key_left(path) is not None)


def read_failure(exc: BaseException) -> str:
    """What to say when the store could not be read: a refusal of ours in its own words (they name the fix),
    anything else (a locked or damaged file, a full disk) with its message and the store's location."""
    from dpfed_core.errors import DpfedError
    from dpfed_core.privacy.store import resolve_store_path

    if isinstance(exc, DpfedError):
        return " ".join(str(exc).split())
    said = " ".join(str(exc).split()) or "no message"
    return (f"The history store {resolve_store_path(None)} could not be read: {said} ({type(exc).__name__}). "
            "Its location is set by the DPFED_STORE environment variable of the server.")


def owner_key(dataset) -> str:
    """The data owner's key: the name the owner's store gives the whole dataset's account (its content key
    under the store's secret). A read: a store with no secret yet is not given one (a store that does not exist
    is not made), and the name is then one of this process only, which finds nothing
    (``BudgetOdometer.names_no_account``)."""
    from dpfed_core.privacy.odometer import BudgetOdometer
    from dpfed_core.privacy.store import Store

    if store_missing():
        return BudgetOdometer._named(None, dataset)
    return BudgetOdometer(Store(None)).account_key(dataset, create=False)


def owner_store(dataset, key: str | None = None):
    """(Store, key) of the dataset's owner: the one store the command line charges too
    (``$DPFED_STORE``, else ``<data home>/dpfed/dpfed.sqlite3``), so a cap set with ``budget set-cap``
    binds the dashboard's runs and an upload of the same people read another way meets the account
    it was charged to (a store per upload would give every re-export a fresh budget); every history read is
    still filtered on the owner's key."""
    from dpfed_core.privacy.store import Store

    return Store(None), key or owner_key(dataset)


@contextlib.contextmanager
def reading_store(dataset, key: str | None = None) -> Iterator[tuple[Any, str]]:
    """(Store, key) to read the owner's budget from: the owner's store, or while it does not exist yet an empty
    one in a temporary folder, removed afterwards — it answers as the new store will (nothing spent, no cap)
    and the owner's store is made by the first charge or cap, never by a read."""
    from dpfed_core.privacy.store import Store

    if not store_missing():
        yield owner_store(dataset, key)
        return
    with tempfile.TemporaryDirectory(prefix="dpfed-empty-store-") as tmp:
        yield Store(Path(tmp) / "empty.sqlite3"), key or owner_key(dataset)


def charged(dataset, plans: Sequence, body: Callable[[], Any], *, allow_non_private: bool = False,
            settle: Callable[[Any, Any], None] | None = None, key: str | None = None):
    """``body()`` inside an odometer reservation of ``plans`` for the dataset's owner.

    Refuses (:class:`~dpfed_core.privacy.odometer.BudgetRefused`, a DpfedError naming the control)
    before ``body`` runs when a cap would be passed; ``settle(reservation, result)`` replaces the
    reserved charges by the ledger's (runs)."""
    from dpfed_core.privacy.odometer import BudgetOdometer

    store, key = owner_store(dataset, key)
    with BudgetOdometer(store).charge(dataset, plans, allow_non_private=allow_non_private, key=key) as res:
        out = body()
        if settle is not None:
            settle(res, out)
    return out


def planned_charge_text(dataset, plans: Sequence, cached: bool = False) -> str:
    """What ``plans`` would charge the session's data owner, for a button's label: e.g. "spends ε ≈ 0.35
    of the 4.2 left per entity", with the reason when that differs from the requested ε (releases
    compose with what these data already spent; the data recognised as a re-export of stored data),
    and "nothing new spent" when the result is cached. Reads the store, charges nothing; a problem
    reading it is said, not raised (a label must never take a page down)."""
    from dpfed_core.evaluation.budget import planned_charge, spend_reason

    if cached:
        return "same data and settings as an earlier run: shown from the cache, nothing new spent"
    try:
        if plans and all(p.simulation for p in plans):
            return planned_charge(None, dataset, plans)["text"]
        with reading_store(dataset) as (store, _):
            return spend_reason(planned_charge(store, dataset, plans), plans)
    except Exception as exc:  # noqa: BLE001  (a label)
        return f"planned charge unknown ({type(exc).__name__})"


def _pack_run(result) -> bytes:
    arrays = dict(result.entity_factors().to_arrays())  # each entity's own columns too
    model = getattr(result, "model", None)
    for h, rel in enumerate(getattr(model, "releases_", None) or []):
        arrays[f"P{h}"] = np.asarray(rel.prototypes, dtype=np.float64)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


@dataclass(frozen=True)
class Entry:
    """One stored result as listed on the History page."""

    id: int
    kind: str
    created: str
    label: str
    dataset: str


def save(dataset, kind: str, doc: dict, result=None, key: str | None = None) -> int:
    """Keep a result of the dataset's owner in the history, under the label the command line's results
    get too (:func:`~dpfed_core.evaluation.history.entry_label`); returns its id."""
    from dpfed_core.evaluation.history import RunHistory

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    from dpfed_core.privacy.odometer import BudgetOdometer

    store, key = owner_store(dataset, key)
    odo = BudgetOdometer(store)
    # filed under the name the charge registered (a name read before the store had a secret finds no one)
    key = odo.filing_key(dataset, key)
    entry_id = RunHistory(store).add(kind, doc, dataset_key=key)
    if kind == "run" and result is not None:
        blob = _pack_run(result)
        with store.write() as con:
            con.execute(_ARRAYS)
            con.execute("INSERT OR REPLACE INTO dashboard_arrays (history_id, arrays) VALUES (?, ?)",
                        (entry_id, blob))
    return entry_id


def list_entries(dataset, kind: str | None = None, key: str | None = None, limit: int = 500) -> list[Entry]:
    """The owner's results, newest first (results of other data are never listed)."""
    from dpfed_core.evaluation.history import RunHistory

    if store_missing():
        return []
    store, key = owner_store(dataset, key)
    rows = RunHistory(store).list(dataset_key=key, kind=kind, limit=limit)
    return [Entry(int(r["id"]), r["kind"], str(r["created"]), str(r["title"]), str(r.get("dataset_name") or ""))
            for r in rows]


def load(dataset, entry_id: int, key: str | None = None) -> dict | None:
    """One stored result of the owner, or None (another owner's id, or gone):
    ``{"kind", "label", "created", "config", "doc", "arrays"}``."""
    owned = _owned(dataset, entry_id, key)
    if owned is None:
        return None
    store, d = owned
    arrays: dict = {}
    # a read: works on a store this process cannot write, waits for no charge, creates no table (a store whose
    # results all came from the command line has none, and its runs reopen from their documents)
    with store.read() as con:
        row = con.execute("SELECT arrays FROM dashboard_arrays WHERE history_id = ?",
                          (int(entry_id),)).fetchone() if _kept_arrays(con) else None
    if row is not None:
        with np.load(io.BytesIO(row[0]), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    return {"kind": d["kind"], "label": d.get("title", ""), "created": d.get("created", ""),
            "config": d["config"], "doc": _restore_inf(d["document"]), "arrays": arrays}


def _owned(dataset, entry_id: int, key: str | None):
    """``(store, stored entry)`` when ``entry_id`` is a result of the owner of ``dataset``, else None (another
    owner's id, gone, or no store): the entry's document only, never its arrays."""
    from dpfed_core.errors import DpfedError
    from dpfed_core.evaluation.history import RunHistory

    if store_missing():
        return None
    store, key = owner_store(dataset, key)
    try:
        d = RunHistory(store).open(int(entry_id))
    except DpfedError:
        return None
    return (store, d) if d.get("dataset_key") == key else None


def _kept_arrays(con) -> bool:
    """Whether the store has the dashboard's arrays table: one whose results all came from the command line
    has none (made by the first run the dashboard keeps)."""
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dashboard_arrays'"
                       ).fetchone() is not None


def delete(dataset, entry_id: int, key: str | None = None) -> bool:
    """Remove one stored result of the owner (its releases stay charged in the odometer)."""
    from dpfed_core.evaluation.history import RunHistory

    owned = _owned(dataset, entry_id, key)
    if owned is None:
        return False
    store = owned[0]
    RunHistory(store).delete(int(entry_id))
    with store.write() as con:
        # a store that never kept a run's arrays has nothing to delete: it is left without the table
        if _kept_arrays(con):
            con.execute("DELETE FROM dashboard_arrays WHERE history_id = ?", (int(entry_id),))
    return True


def _restore_inf(obj):
    """The stored JSON writes ∞ as "inf": turn those strings back into floats."""
    if isinstance(obj, dict):
        return {k: _restore_inf(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_restore_inf(v) for v in obj]
    if isinstance(obj, str) and obj in ("inf", "-inf"):
        return float(obj)
    return obj


def restored_run(stored: dict):
    """A stored run as the pages use it: (doc, result, RunConfig). ``result`` has U, V, the message
    log and each entity's prototypes (``result.model.releases_[h].prototypes``)."""
    from dpfed_core.config import RunConfig
    from dpfed_core.methods import MethodResult

    doc, arrays = stored["doc"], stored["arrays"]
    if "U" not in arrays:
        where = ("a Flower deployment: each entity's user factors stayed at its node"
                 if isinstance(doc.get("deployment"), dict) else "the command line, which keeps no factors")
        raise ValueError(f"this run was stored without its factors ({where}); its result document can be "
                         "downloaded below but the Federate, Evaluate and Recommend pages cannot reopen it")
    cfg = _restore_inf(dict(stored["config"]))
    config = RunConfig(**{k: v for k, v in cfg.items() if k in RunConfig.__dataclass_fields__})
    releases = [SimpleNamespace(prototypes=arrays[f"P{h}"]) for h in range(len(arrays)) if f"P{h}" in arrays]
    messages = [SimpleNamespace(**m) for m in doc.get("messages", [])]
    model = SimpleNamespace(releases_=releases, stored=True) if releases else None
    from dpfed_core.models.entity_factors import EntityFactors

    factors = EntityFactors.from_arrays(arrays)
    result = MethodResult(U=factors.U, V=factors.V, ledger=None, messages=messages, model=model,
                          extra={"stored": True}, factors=factors)
    return doc, result, config


