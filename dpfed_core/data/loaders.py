"""One entry point for every data source (SPEC §5): :func:`load_data`, which the CLI and the dashboard call.

``load_data(spec, **opts)`` recognises the source from ``spec`` — a generated sample, synthetic data
made on the fly, a MovieLens release or directory, an eICU directory, or a table file — and hands the
options to that source's loader, refusing any option that does not apply to it (a typo should not be
ignored). The loaders live by source:

- :mod:`dpfed_core.data.tables` — reading a table file, an upload or a DataFrame (formats, encodings,
  upload limits);
- :mod:`dpfed_core.data.long_table` — :func:`~dpfed_core.data.long_table.load_long_table` and the build
  every loader ends in (options, values, entities, catalogue, the sparse matrix);
- :mod:`dpfed_core.data.movielens` — MovieLens 100K/1M directories and their download;
- :mod:`dpfed_core.data.eicu` — the eICU database and its drug-name normalisation;
- :mod:`dpfed_core.data.samples` — the generated datasets in ``sample_data/``.

Every problem with the input is raised as a :class:`~dpfed_core.errors.DataError` (bad data) or
:class:`~dpfed_core.errors.ConfigError` (bad options) whose message names the file, the column, the
row (data row N = line N + 1 of a CSV file with a header) and what was expected, and says how to fix
it. Inputs are only read: nothing is written next to them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.eicu import _find_table, load_eicu
from dpfed_core.data.long_table import _reject_removed, load_long_table
from dpfed_core.data.movielens import fetch_movielens, load_movielens
from dpfed_core.data.samples import load_sample
from dpfed_core.data.tables import read_table
from dpfed_core.errors import ConfigError, DataError, OptionError

__all__ = ["load_data"]


_ACCEPTED = (
    "'sample:synthetic', 'sample:clinic', 'synthetic' or 'synthetic:paper' (generated on the fly), "
    "'movielens:100k' / 'movielens:1m' (downloaded into the cache), a MovieLens 100K/1M directory, "
    "an eICU directory (patient.csv[.gz] + an event table), or a CSV/CSV.gz/TSV/Parquet long table "
    "(with user_col, item_col, entity_col or entity_from, …)"
)


def _only(opts: dict[str, Any], allowed: Iterable[str], what: str) -> dict[str, Any]:
    """Refuse options that do not apply to this kind of data (a typo should not be ignored)."""
    allowed = set(allowed)
    bad = sorted(k for k in opts if k not in allowed)
    if bad:
        raise OptionError(bad, sorted(allowed), what)
    return opts


_LONG_OPTS = (
    "user_col", "item_col", "value_col", "entity_col", "entity_from", "entity_transform",
    "item_name_col", "value_kind", "value_max", "duplicates", "exclude_entities", "items",
    "over_max", "drop_missing", "filename", "sep", "name", "progress", "entities", "entities_from_data",
    "item_features", "encoding", "no_header", "undeclared_entities",
)  # fmt: skip


def load_data(spec: str | os.PathLike, **opts: Any) -> FederatedDataset:
    """Load any supported dataset from one string (used by the CLI and the dashboard).

    ``spec`` is one of:

    - ``"sample:synthetic"``, ``"sample:clinic"`` — options of :func:`load_sample`
      (``federation="hospital"|"region"`` for the clinic);
    - ``"synthetic"`` / ``"synthetic:paper"`` — generated on the fly by
      :func:`dpfed_core.data.synthetic.make_poisson` (its options, plus ``seed``);
    - ``"movielens:100k"`` / ``"movielens:1m"`` — fetched into the cache, then as a directory;
    - a MovieLens 100K/1M directory — options of :func:`load_movielens` (``federation``);
    - an eICU directory — options of :func:`load_eicu`; ``federation`` is accepted for ``entity``
      and ``events`` ("medication", "lab,medication" or a list) for ``event_table``;
    - a table file (CSV, CSV.gz, TSV, Parquet) — options of :func:`load_long_table`
      (``user_col`` and ``item_col`` are required).

    Options that do not apply to the kind of data raise a ConfigError naming them.
    """
    _reject_removed(opts)
    s = str(spec).strip()
    low = s.lower()
    if low.startswith("sample:"):
        opts.pop("entities_from_data", None)  # a sample's entity list is its generator's: public
        _only(opts, ("federation", "sample_dir", "exclude_entities", "items", "entities", "item_features",
                     "undeclared_entities"), "sample data")
        return load_sample(low, **opts)
    if low in ("synthetic", "synthetic:paper"):
        from dpfed_core.data import synthetic  # generated data: imported only when asked for

        seed = opts.pop("seed", 0)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        preset = synthetic.PAPER if low == "synthetic:paper" else {}
        try:
            return synthetic.make_poisson(**{**preset, **opts}, rng=rng)
        except TypeError as exc:  # an unknown keyword
            raise ConfigError(f"synthetic data: {exc}") from exc
    if low.startswith("movielens:"):
        cache = opts.pop("cache_dir", None)
        d = fetch_movielens(low.split(":", 1)[1], cache)
        s, low = str(d), str(d).lower()
    p = Path(s).expanduser()
    if p.is_dir():
        if (p / "u.data").is_file() or (p / "ratings.dat").is_file():
            opts.pop("entities_from_data", None)  # MovieLens' entity lists are public metadata
            _only(opts, ("federation", "exclude_entities", "name", "entities", "item_features",
                         "undeclared_entities"), "a MovieLens directory")
            return load_movielens(p, **opts)
        if _find_table(p, "patient") is not None:
            o = dict(opts)
            if "federation" in o:
                o["entity"] = o.pop("federation")
            if "events" in o:
                o["event_table"] = o.pop("events")
            _only(o, ("event_table", "entity", "value_max", "drop_cancelled", "name", "exclude_entities",
                      "items", "entities", "entities_from_data", "item_features", "undeclared_entities"),
                  "an eICU directory")  # fmt: skip
            return load_eicu(p, **o)
        found = ", ".join(sorted(x.name for x in p.iterdir())[:15]) or "nothing"
        listing = f" (found: {found})"
        raise DataError(
            f"{p} is a directory but neither a MovieLens nor an eICU one{listing}. "
            f"Accepted: {_ACCEPTED}.", param="data", listing=(listing,)
        )
    if p.is_file():
        _only(opts, _LONG_OPTS, "a table file")
        header = not opts.pop("no_header", False)
        if "user_col" not in opts or "item_col" not in opts:
            from dpfed_core.data.tables import first_line_is_data, header_is_data

            df, label, _ = read_table(p, usecols=["\x00none"], header=header)
            cols = ", ".join(repr(str(c)) for c in df.columns[:30])
            # a header-less file (u.data) has its first data row read as the column names
            first_row = (first_line_is_data(", add a header line naming the columns, or give the MovieLens directory "
                                            "itself") if header and header_is_data(df) else "")
            raise ConfigError(
                f"{label} is a table: say which columns hold the user, the item, the value and the "
                "entity (user_col, item_col, value_col, entity_col or entity_from with "
                f"entity_transform, and value_kind / value_max). Columns found: {cols}.{first_row}",
                param="user_col"
            )
        return load_long_table(p, header=header, **opts)
    if p.exists():  # a device, a pipe, a socket: nothing a table is read from
        raise DataError(f"{s!r} exists but is not a regular file or a directory. Accepted: {_ACCEPTED}.",
                        param="data")
    raise DataError(f"no such dataset or file: {s!r}. Accepted: {_ACCEPTED}.", param="data")
