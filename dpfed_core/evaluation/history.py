"""Run history: runs, sweeps and audits kept in the store file
(:mod:`dpfed_core.privacy.store`, the same file as the budget odometer), so a reload or a new
session can list and reopen them.

Each entry holds the JSON result document exactly as ``--out`` would write it (``inf`` as
``"inf"``, NaN as ``null``), its configuration, the dataset key and name, the kind, a title, the
simulation flag and the creation time. Deleting an entry removes the document only: the releases it
made stay charged in the odometer.
"""
from __future__ import annotations

import json
import math
import os
from typing import Mapping

from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import json_safe
from dpfed_core.privacy.store import Store, now_iso

KINDS = ("run", "sweep", "audit")


def _title(kind: str, doc: Mapping) -> str:
    cfg = doc.get("config", {}) or {}
    ds = (doc.get("dataset") or {}).get("name", "")
    if kind == "run":
        return f"{cfg.get('method', '?')} at ε = {_eps_word(cfg.get('epsilon'))} on {ds}".strip()
    if kind == "sweep":
        grid = doc.get("epsilons") or doc.get("grid") or []
        return (f"sweep of {cfg.get('method', '?')} over ε ∈ {{{', '.join(_eps_word(e) for e in grid)}}} "
                f"on {ds}").strip()
    methods = cfg.get("methods")
    return f"audit of {', '.join(map(str, methods)) if isinstance(methods, list) else methods or '?'} on {ds}".strip()


def _eps_word(x) -> str:
    """An ε as the CLI and the report write it (:func:`~dpfed_core.evaluation.verdicts.format_epsilon`),
    from a number or a JSON document's "inf"; "?" for a document that holds none."""
    from dpfed_core.evaluation.verdicts import format_epsilon

    f = _as_float(x)
    return "?" if f is None else format_epsilon(f)


def _as_float(x) -> float | None:
    if x is None:
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


class RunHistory:
    """List / add / open / delete stored result documents.

    Parameters
    ----------
    store : a :class:`~dpfed_core.privacy.store.Store`, a path, or None (the default store).
    """

    def __init__(self, store: Store | str | os.PathLike | None = None) -> None:
        self.store = store if isinstance(store, Store) else Store(store)

    def add(self, kind: str, document: Mapping, *, dataset_key: str | None = None,
            title: str | None = None, operation: str | None = None) -> int:
        """Store a result document; returns its id. ``kind``: run | sweep | audit."""
        if kind not in KINDS:
            raise ConfigError(f"history kind must be one of {', '.join(KINDS)}, got {kind!r}")
        doc = json_safe(dict(document))
        cfg = doc.get("config", {}) or {}
        privacy = doc.get("privacy") or {}
        simulation = bool(cfg.get("simulation") or privacy.get("simulation"))
        method = cfg.get("method") or ",".join(cfg.get("methods", []) or [])
        eps = _as_float(cfg.get("epsilon"))
        with self.store.write() as con:
            cur = con.execute(
                "INSERT INTO history (dataset_key, dataset_name, operation, kind, title, method, epsilon, simulation, "
                "created, config, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (dataset_key, str((doc.get("dataset") or {}).get("name", "")), operation, kind,
                 title or _title(kind, doc), str(method), eps, int(simulation),
                 str(doc.get("created") or now_iso()), json.dumps(cfg, allow_nan=False),
                 json.dumps(doc, allow_nan=False)))
            return int(cur.lastrowid)

    def list(self, dataset_key: str | None = None, kind: str | None = None, limit: int = 200) -> list[dict]:
        """Entries newest first, without their documents: id, kind, title, method, epsilon,
        simulation, created, dataset_key, dataset_name, operation."""
        sql = ("SELECT id, kind, title, method, epsilon, simulation, created, dataset_key, dataset_name, operation "
               "FROM history WHERE 1 = 1")
        params: list = []
        if dataset_key is not None:
            sql += " AND dataset_key = ?"
            params.append(dataset_key)
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(int(limit))
        with self.store.read() as con:
            rows = [dict(r) for r in con.execute(sql, params)]
        for r in rows:
            r["simulation"] = bool(r["simulation"])
            if r["epsilon"] is None and r["kind"] == "run":
                r["epsilon"] = math.inf
        return rows

    def open(self, entry_id: int) -> dict:
        """The entry with its parsed ``config`` and ``document``."""
        with self.store.read() as con:
            row = con.execute("SELECT * FROM history WHERE id = ?", (int(entry_id),)).fetchone()
        if row is None:
            raise ConfigError(f"no stored result with id {entry_id} in {self.store.path}")
        d = dict(row)
        d["simulation"] = bool(d["simulation"])
        d["config"] = json.loads(d["config"])
        d["document"] = json.loads(d["document"])
        return d

    def delete(self, entry_id: int) -> None:
        """Remove one entry (its releases stay charged in the odometer)."""
        with self.store.write() as con:
            cur = con.execute("DELETE FROM history WHERE id = ?", (int(entry_id),))
            if cur.rowcount == 0:
                raise ConfigError(f"no stored result with id {entry_id} in {self.store.path}")
