"""Results that survive a reload: runs, sweeps and audits in the embedded SQLite store.

One file, standard-library :mod:`sqlite3`, the same file as the privacy budget odometer (issue 11):
``$DPFED_STORE`` if set, else ``$XDG_DATA_HOME/dpfed/store.sqlite3`` (``~/.local/share/dpfed/…``).
This module owns one table, ``results``:

=========  ====================================================================================
owner      the data owner's key: the content hash of the whole dataset
           (:func:`dpfed_core.ui.engine.dataset_fingerprint`). Every read filters on it, so one
           upload never lists or opens another upload's results.
kind       ``run`` | ``sweep`` | ``audit``
created    UTC time (ISO 8601)
label      one line for the list (method, ε, seeds …)
config     the configuration (JSON)
doc        the result document (JSON, ``json_safe``)
arrays     for runs: U, V and each entity's released prototypes (``numpy.savez``), so a reopened
           run shows the same recommendations and "what the server saw" without re-running
           (re-running would draw fresh noise: a new release)
=========  ====================================================================================

Writes are one transaction each (nothing half-written); the store is created on first use.
"""
from __future__ import annotations

import datetime as _dt
import io
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

KINDS = ("run", "sweep", "audit")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('run', 'sweep', 'audit')),
    created TEXT NOT NULL,
    label TEXT NOT NULL,
    dataset TEXT NOT NULL,
    config TEXT NOT NULL,
    doc TEXT NOT NULL,
    arrays BLOB
);
CREATE INDEX IF NOT EXISTS results_owner ON results (owner, kind, id);
"""


def store_path() -> Path:
    """The store file: ``$DPFED_STORE``, else the user's data directory."""
    env = os.environ.get("DPFED_STORE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dpfed" / "store.sqlite3"


def _connect(path: Path | None = None) -> sqlite3.Connection:
    path = Path(path) if path is not None else store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(path), timeout=15)
    con.execute("PRAGMA journal_mode=WAL")  # several sessions write at once
    con.executescript(_SCHEMA)
    return con


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _json(obj: Any) -> str:
    from dpfed_core.evaluation.experiments import json_safe

    return json.dumps(json_safe(obj), sort_keys=True)


def _pack_run(result) -> bytes:
    arrays = {"U": np.asarray(result.U, dtype=np.float64), "V": np.asarray(result.V, dtype=np.float64)}
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


def save(owner: str, kind: str, label: str, dataset_name: str, config: Any, doc: dict,
         result=None, path: Path | None = None) -> int:
    """Store one result for ``owner``; returns its id. ``result`` (a MethodResult) for runs."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    blob = _pack_run(result) if (kind == "run" and result is not None) else None
    cfg = config.to_dict() if hasattr(config, "to_dict") else config
    with _connect(path) as con:
        cur = con.execute(
            "INSERT INTO results (owner, kind, created, label, dataset, config, doc, arrays) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (owner, kind, _now(), label, dataset_name, _json(cfg), _json(doc), blob))
        return int(cur.lastrowid)


def list_entries(owner: str, kind: str | None = None, path: Path | None = None,
                 limit: int = 500) -> list[Entry]:
    """The owner's results, newest first."""
    q = "SELECT id, kind, created, label, dataset FROM results WHERE owner = ?"
    args: list = [owner]
    if kind:
        q += " AND kind = ?"
        args.append(kind)
    q += " ORDER BY id DESC LIMIT ?"
    args.append(int(limit))
    with _connect(path) as con:
        return [Entry(*row) for row in con.execute(q, args)]


def load(owner: str, entry_id: int, path: Path | None = None) -> dict | None:
    """One stored result of ``owner`` (None if it is not theirs or does not exist):
    ``{"kind", "label", "created", "config", "doc", "arrays"}``."""
    with _connect(path) as con:
        row = con.execute("SELECT kind, label, created, config, doc, arrays FROM results "
                          "WHERE owner = ? AND id = ?", (owner, int(entry_id))).fetchone()
    if row is None:
        return None
    kind, label, created, config, doc, blob = row
    arrays = {}
    if blob:
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    return {"kind": kind, "label": label, "created": created, "config": json.loads(config),
            "doc": _restore_inf(json.loads(doc)), "arrays": arrays}


def delete(owner: str, entry_id: int, path: Path | None = None) -> bool:
    with _connect(path) as con:
        return con.execute("DELETE FROM results WHERE owner = ? AND id = ?", (owner, int(entry_id))).rowcount > 0


def _restore_inf(obj):
    """``json_safe`` wrote ∞ as "inf": turn ε / δ fields back into floats."""
    if isinstance(obj, dict):
        return {k: (float(v) if (v in ("inf", "-inf") and isinstance(v, str)) else _restore_inf(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [float(v) if v in ("inf", "-inf") and isinstance(v, str) else _restore_inf(v) for v in obj]
    return obj


def restored_run(stored: dict):
    """A stored run as the pages use it: (doc, result, RunConfig). ``result`` has U, V, the message
    log and each entity's prototypes (``result.model.releases_[h].prototypes``)."""
    from dpfed_core.config import RunConfig
    from dpfed_core.methods import MethodResult

    doc, arrays = stored["doc"], stored["arrays"]
    cfg_dict = dict(stored["config"])
    for k in ("epsilon", "delta"):
        if isinstance(cfg_dict.get(k), str):
            cfg_dict[k] = float(cfg_dict[k])
    config = RunConfig(**{k: v for k, v in cfg_dict.items() if k in RunConfig.__dataclass_fields__})
    releases = [SimpleNamespace(prototypes=arrays[f"P{h}"])
                for h in range(len(arrays)) if f"P{h}" in arrays]
    messages = [SimpleNamespace(**m) for m in doc.get("messages", [])]
    model = SimpleNamespace(releases_=releases, stored=True) if releases else None
    result = MethodResult(U=arrays["U"], V=arrays["V"], ledger=None, messages=messages, model=model,
                          extra={"stored": True})
    return doc, result, config
