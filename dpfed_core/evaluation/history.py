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


def entry_label(kind: str, doc: Mapping) -> str:
    """The words a stored result is listed under, from its document alone, so the same run, sweep or
    audit reads the same whichever front end ran it (the command line or the dashboard): a run's settings
    (:func:`~dpfed_core.evaluation.defaults.settings_line`), a sweep's method, ε grid and seeds, an audit's
    entity, methods, ε grid and runs per class; then the data's name, and "(simulation)" where the noise
    was reproducible."""
    from dpfed_core.evaluation.defaults import method_words, settings_line

    cfg = doc.get("config", {}) or {}
    ds = (doc.get("dataset") or {}).get("name", "")
    on, sim = (f" on {ds}" if ds else ""), (" (simulation)" if _simulation(doc) else "")
    if kind == "run":
        dep = doc.get("deployment")
        flower = f", deployed on Flower ({dep.get('supernodes')} SuperNodes)" if isinstance(dep, dict) else ""
        return f"{settings_line(cfg)}{on}{flower}{sim}"
    if kind == "sweep":
        grid = doc.get("epsilons") or doc.get("grid") or []
        seeds = doc.get("seeds") or []
        return (f"sweep of {method_words(cfg)} over ε ∈ {{{', '.join(_eps_word(e) for e in grid)}}}"
                + (f", seeds {', '.join(map(str, seeds))}" if seeds else "") + on + sim)
    methods = cfg.get("methods")
    entity = (doc.get("entity") or {}).get("name")
    grid = cfg.get("epsilons") or []
    return (f"audit of {f'{entity}: ' if entity is not None else ''}"
            f"{', '.join(map(str, methods)) if isinstance(methods, list) else methods or '?'}"
            + (f" at ε ∈ {{{', '.join(_eps_word(e) for e in grid)}}}" if grid else "")
            + (f", {cfg['runs']} runs per class" if cfg.get("runs") else "") + on + sim)


def _simulation(doc: Mapping) -> bool:
    """Was the result's noise reproducible from its seed (no privacy claim)? Its config or its privacy
    section says so."""
    return bool((doc.get("config") or {}).get("simulation") or (doc.get("privacy") or {}).get("simulation"))


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
            operation: str | None = None) -> int:
        """Store a result document under its label (:func:`entry_label`, the same for every front end);
        returns its id. ``kind``: run | sweep | audit."""
        if kind not in KINDS:
            raise ConfigError(f"history kind must be one of {', '.join(KINDS)}, got {kind!r}")
        doc = json_safe(dict(document))
        cfg = doc.get("config", {}) or {}
        simulation = _simulation(doc)
        method = cfg.get("method") or ",".join(cfg.get("methods", []) or [])
        eps = _as_float(cfg.get("epsilon"))
        with self.store.write() as con:
            cur = con.execute(
                "INSERT INTO history (dataset_key, dataset_name, operation, kind, title, method, epsilon, simulation, "
                "created, config, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (dataset_key, str((doc.get("dataset") or {}).get("name", "")), operation, kind,
                 entry_label(kind, doc), str(method), eps, int(simulation),
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
