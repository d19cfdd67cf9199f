"""Loaders: turn user data into a :class:`~dpfed_core.data.dataset.FederatedDataset` (SPEC §5).

Entry points
------------
- :func:`load_long_table` — a long table (CSV, CSV.gz, TSV, Parquet, a pandas DataFrame, or an upload
  given as bytes / a file-like object) with one row per (user, item[, value]) and an entity column,
  or a user attribute from which the entity is derived (first digit of a ZIP code, a prefix, …).
- :func:`load_movielens` — MovieLens 100K (``u.data``/``u.user``/``u.item``) and 1M
  (``ratings.dat``/``users.dat``/``movies.dat``) directories; entity = first digit of the ZIP code.
- :func:`load_eicu` — the eICU Collaborative Research Database or its open demo: ``patient``,
  ``hospital`` and one or more event tables; one row per unit stay, value = number of events.
- :func:`load_sample` — the generated datasets committed in ``sample_data/``.
- :func:`load_data` — one dispatcher for the CLI and the dashboard.
- :func:`fetch_movielens` — download an official MovieLens release into a user cache directory.

Every problem with the input is raised as a :class:`~dpfed_core.errors.DataError` (bad data) or
:class:`~dpfed_core.errors.ConfigError` (bad options) whose message names the file, the column, the
row (data row N = line N + 1 of a CSV file with a header) and what was expected, and says how to fix
it. Inputs are only read: nothing is written next to them, DataFrames passed in are not mutated and
file-like objects are rewound to where they were.
"""
from __future__ import annotations

import difflib
import gzip
import io
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Literal, Sequence, Union

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError, DataError

__all__ = [
    "load_long_table",
    "load_movielens",
    "load_eicu",
    "load_sample",
    "load_data",
    "fetch_movielens",
    "normalize_drug_name",
    "normalize_drug_names",
    "derive_entity",
    "EICU_EVENT_TABLES",
    "EICU_VALUE_MAX",
    "MIN_ENTITY_USERS",
    "SAMPLES",
    "SAMPLE_DIR",
]

Source = Union[str, os.PathLike, pd.DataFrame, bytes, bytearray, memoryview, BinaryIO]

#: Default smallest entity kept. The evaluation split makes 20 % of an entity's users test users and
#: an entity fits k prototypes on the rest: below ~10 users an entity has at most one test user and
#: cannot support even a handful of prototypes.
MIN_ENTITY_USERS = 10

#: eICU event tables this loader understands and the column holding the item (event) name.
EICU_EVENT_TABLES: dict[str, str] = {
    "medication": "drugname",
    "treatment": "treatmentstring",
    "lab": "labname",
    "diagnosis": "diagnosisstring",
}

#: Declared public bound on the number of events of one kind in one unit stay (SPEC §2: bounds are
#: public parameters, never read off the data). Medication orders and treatments rarely repeat more
#: than ~20 times in a stay; labs are drawn several times a day in long stays; a diagnosis string is
#: recorded a few times at most. The loader clips nothing: it reports how many values exceed the
#: bound (DP mechanisms clip to it).
EICU_VALUE_MAX: dict[str, float] = {"medication": 20.0, "treatment": 20.0, "lab": 50.0, "diagnosis": 10.0}

#: Where the generated sample datasets live (``python sample_data/generate.py`` rebuilds them).
SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_data"

#: The committed sample datasets and how to read them. ``value_max`` is the public bound declared
#: by the generator (it is the generator's own clip level, not a statistic of the generated data).
SAMPLES: dict[str, dict[str, Any]] = {
    "synthetic": {
        "file": "synthetic.csv.gz",
        "user_col": "user",
        "item_col": "item",
        "value_col": "count",
        "entity_col": "entity",
        "value_kind": "counts",
        "value_max": 10.0,
        "description": "Poisson factor model of the paper §5.1 (rescaled), 10 entities of varied size",
    },
    "clinic": {
        "file": "clinic.csv.gz",
        "user_col": "patient_id",
        "item_col": "item",
        "value_col": "count",
        "entity_col": "hospital",
        "value_kind": "counts",
        "value_max": 20.0,
        "description": "eICU-like ICU stays × lab and medication names, 30 hospitals in 4 regions",
    },
}

_TRANSFORMS_HELP = 'None, "first_char", "first_digit" or "prefix:N" (N ≥ 1)'
_VALUE_KINDS = ("ratings", "counts", "implicit")


# ====================================================================== reading raw tables
def _label_of(source: Any, filename: str | None) -> str:
    """A name to show the user for a source: its file name, or a generic description."""
    if filename:
        return str(filename)
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    name = getattr(source, "name", None)
    if isinstance(name, str) and name:
        return name
    return "the DataFrame" if isinstance(source, pd.DataFrame) else "the uploaded data"


def _source_bytes(source: Any) -> bytes:
    """Read an in-memory upload without consuming it (Streamlit's UploadedFile has getvalue)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if hasattr(source, "getvalue"):
        return bytes(source.getvalue())
    if hasattr(source, "read"):
        pos = source.tell() if hasattr(source, "seekable") and source.seekable() else None
        data = source.read()
        if pos is not None:
            source.seek(pos)  # leave the caller's stream where it was
        return data.encode() if isinstance(data, str) else bytes(data)
    raise ConfigError(
        f"cannot read data from a {type(source).__name__}; pass a file path, a pandas DataFrame, "
        "bytes or a binary file-like object"
    )


def _head_bytes(path: Path, n: int = 65536) -> bytes:
    with open(path, "rb") as f:
        return f.read(n)


def _decompressed_head(raw_head: bytes, path: Path | None, data: bytes | None) -> bytes:
    """First ~64 KB of the text content, looking through gzip compression."""
    if raw_head[:2] != b"\x1f\x8b":
        return raw_head
    try:
        if data is not None:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
                return g.read(65536)
        with gzip.open(path, "rb") as g:  # type: ignore[arg-type]
            return g.read(65536)
    except (OSError, EOFError):
        return b""  # reported properly by the full read


def _sniff_sep(text_head: bytes) -> str:
    """The separator of a delimited text file: the candidate most frequent in the header line."""
    first = text_head.split(b"\n", 1)[0]
    counts = {sep: first.count(sep.encode()) for sep in (",", "\t", ";", "|")}
    best = max(counts, key=lambda s: counts[s])
    return best if counts[best] > 0 else ","


def read_table(
    source: Source,
    *,
    filename: str | None = None,
    sep: str | None = None,
    what: str = "table",
) -> tuple[pd.DataFrame, str, bool]:
    """Read a table from a path, bytes, a file-like object or a DataFrame.

    The format is recognised from the content (Parquet magic ``PAR1``, gzip magic), then from the
    name. CSV fields are read as text so that bad values can be reported verbatim; fully blank lines
    are dropped while keeping the original row numbering.

    Returns
    -------
    df : DataFrame (the caller's own object when a DataFrame was given — do not mutate it)
    label : str — how to name the source in messages
    from_text : bool — True when rows correspond to lines of a text file (data row i = line i + 1)
    """
    label = _label_of(source, filename)
    if isinstance(source, pd.DataFrame):
        return source, label, False

    data: bytes | None = None
    path: Path | None = None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            parent = path.parent if str(path.parent) else Path(".")
            hint = ""
            if parent.is_dir():
                near = difflib.get_close_matches(path.name, [p.name for p in parent.iterdir()], n=3)
                if near:
                    hint = f" Did you mean: {', '.join(near)}?"
            raise DataError(f"{what} file not found: {path}.{hint} Check the path and try again.")
        if path.is_dir():
            raise DataError(
                f"{path} is a directory, not a {what} file. For a MovieLens or eICU directory use "
                "load_movielens / load_eicu (or load_data, which recognises both)."
            )
        if path.stat().st_size == 0:
            raise DataError(f"{what} file {path} is empty (0 bytes). Export the data again.")
        head = _head_bytes(path)
    else:
        data = _source_bytes(source)
        if len(data) == 0:
            raise DataError(f"{label} is empty (0 bytes). Upload the file again.")
        head = data[:65536]

    name = (filename or (path.name if path else label)).lower()
    if head[:4] == b"PAR1" or name.endswith((".parquet", ".pq")):
        if head[:4] != b"PAR1":
            raise DataError(
                f"{label} is named like a Parquet file but is not one (it does not start with the "
                "Parquet magic bytes 'PAR1'). Re-export it, or rename it if it is a CSV file."
            )
        try:
            df = pd.read_parquet(path if path is not None else io.BytesIO(data))  # type: ignore[arg-type]
        except Exception as exc:  # pyarrow raises many types; all mean the same to the user
            raise DataError(f"could not read Parquet file {label}: {exc}. Re-export the file.") from exc
        return df, label, False
    if head[:4] == b"PK\x03\x04":
        raise DataError(
            f"{label} is a ZIP archive (or an Excel workbook), not a table. Unzip it, or save the "
            "sheet as CSV, and load the CSV file."
        )

    text_head = _decompressed_head(head, path, data)
    if b"\x00" in text_head:
        raise DataError(
            f"{label} is not a text table (it contains binary bytes). Expected CSV, CSV.gz, TSV or "
            "Parquet."
        )
    if sep is None:
        sep = _sniff_sep(text_head)
    compression = "gzip" if head[:2] == b"\x1f\x8b" else None

    def _read(encoding: str) -> pd.DataFrame:
        src = path if path is not None else io.BytesIO(data)  # type: ignore[arg-type]
        return pd.read_csv(
            src,
            sep=sep,
            dtype=str,
            compression=compression,
            encoding=encoding,
            skip_blank_lines=False,
            keep_default_na=True,
        )

    try:
        try:
            df = _read("utf-8")
        except UnicodeDecodeError:
            df = _read("latin-1")  # older exports (MovieLens titles, …); latin-1 decodes any byte
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"{what} file {label} is empty (no header line, no rows).") from exc
    except pd.errors.ParserError as exc:
        msg = str(exc).replace("Error tokenizing data. C error: ", "").strip()
        raise DataError(
            f"{label} is not a well-formed delimited file ({msg}). Every line must have as many "
            f"fields as the header (separator {sep!r}); quote names that contain the separator."
        ) from exc
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"could not read {label}: {exc}. The file may be truncated or corrupt.") from exc
    # drop lines that are completely blank (e.g. trailing empty lines) but keep the numbering
    blank = df.isna().all(axis=1)
    if blank.any():
        df = df.loc[~blank]
    return df, label, True


def _row_ref(label: str, index_value: Any, from_text: bool | int) -> str:
    """Where a row is. ``from_text``: False for a DataFrame (name the index label); True for a text
    file with a header line (data row i + 1 is line i + 2); an int gives the line offset directly
    (1 for header-less files)."""
    if from_text is False:
        return f"{label}, row with index {index_value!r}"
    offset = 2 if from_text is True else int(from_text)
    r = int(index_value) + 1
    return f"{label}, data row {r} (line {int(index_value) + offset})"


def _check_columns(df: pd.DataFrame, label: str, needed: dict[str, str]) -> None:
    """needed: column → its role ("user column", …). Raise naming every missing one."""
    cols = [str(c) for c in df.columns]
    missing = [(c, role) for c, role in needed.items() if c not in df.columns]
    if not missing:
        return
    parts = []
    for c, role in missing:
        near = difflib.get_close_matches(str(c), cols, n=1, cutoff=0.6)
        near += [x for x in cols if x.lower() == str(c).lower() and x not in near]
        parts.append(f"'{c}' ({role})" + (f" — did you mean '{near[0]}'?" if near else ""))
    shown = ", ".join(repr(c) for c in cols[:30]) + (" …" if len(cols) > 30 else "")
    raise DataError(
        f"{label} has no column {'; no column '.join(parts)}. Columns found: {shown}. "
        "Pass the right column names (they are case-sensitive)."
    )


def _as_id_strings(s: pd.Series) -> pd.Series:
    """Identifiers as clean strings: integral floats (from Parquet/NaN-promoted ints) lose '.0'."""
    if pd.api.types.is_float_dtype(s):
        vals = s.to_numpy()
        if np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)):
            return pd.Series(vals.astype(np.int64).astype(str), index=s.index)
    return s.astype(str).str.strip()


def _is_missing(s: pd.Series) -> pd.Series:
    miss = s.isna()
    if s.dtype == object or pd.api.types.is_string_dtype(s):
        miss |= s.astype(str).str.strip().eq("") & s.notna()
    return miss


# ====================================================================== entity keys
def derive_entity(values: pd.Series, transform: str | None) -> pd.Series:
    """Apply a federation-key transform to a user attribute (vectorised).

    ``None``: the value itself. ``"first_char"`` / ``"first_digit"``: the first character of the
    value (a ZIP code → its first digit, as the paper federates MovieLens); values whose first
    character is not a digit are grouped into one entity ``"other"``. ``"prefix:N"``: the first N
    characters.
    """
    s = values.astype(str).str.strip()
    if transform is None:
        return s
    if transform in ("first_char", "first_digit"):
        first = s.str[:1]
        return first.where(first.str.isdigit(), "other")
    m = re.fullmatch(r"prefix:(\d+)", str(transform))
    if m and int(m.group(1)) >= 1:
        return s.str[: int(m.group(1))]
    raise ConfigError(f"unknown entity transform {transform!r}; accepted: {_TRANSFORMS_HELP}")


# ====================================================================== the core builder
def _check_options(*, entity_col, entity_from, entity_transform, value_col, value_kind, value_max, duplicates,
                   small_entities, over_max, min_entity_users, min_item_users) -> float:
    """Validate the options before reading a row; returns the value bound (declared or the scale's)."""
    if value_kind not in _VALUE_KINDS:
        raise ConfigError(f"value_kind must be one of {', '.join(_VALUE_KINDS)}; got {value_kind!r}")
    if (entity_col is None) == (entity_from is None):
        raise ConfigError(
            "give exactly one of entity_col (a column holding the entity, e.g. 'hospital') or "
            "entity_from (a user attribute to derive it from, e.g. 'zip' with entity_transform="
            "'first_digit')"
        )
    if entity_transform is not None and entity_from is None:
        raise ConfigError("entity_transform applies to entity_from; pass entity_from=<column> too")
    if entity_transform is not None:
        derive_entity(pd.Series(["0"]), entity_transform)  # validates the transform name early
    if value_kind == "ratings" and value_col is None:
        raise ConfigError("ratings need a value column: pass value_col=<the rating column>")
    if value_max is None:
        if value_kind == "counts":
            raise ConfigError(
                "count data needs a declared public upper bound per value: pass value_max (e.g. the "
                "most events one user can plausibly have for one item). It must not be read off the data."
            )
        value_max = 5.0 if value_kind == "ratings" else 1.0
    if not (np.isfinite(value_max) and value_max > 0):
        raise ConfigError(f"value_max must be a positive finite number, got {value_max!r}")
    if duplicates not in ("last", "mean", "sum", "error"):
        raise ConfigError(f"duplicates must be 'last', 'mean', 'sum' or 'error'; got {duplicates!r}")
    if small_entities not in ("error", "drop"):
        raise ConfigError(f"small_entities must be 'error' or 'drop'; got {small_entities!r}")
    if over_max not in ("error", "note"):
        raise ConfigError(f"over_max must be 'error' or 'note'; got {over_max!r}")
    if int(min_entity_users) < 1 or int(min_item_users) < 1:
        raise ConfigError("min_entity_users and min_item_users must be ≥ 1")

    return float(value_max)


def _reject_or_drop_missing(df: pd.DataFrame, label: str, from_text: bool | int, needed: dict[str, str],
                            drop_missing: bool, notes: list[str]) -> pd.DataFrame:
    """Rows with an empty value in a used column: an error naming the first, or dropped with a note."""
    cols = list(dict.fromkeys(needed))
    miss = pd.DataFrame({c: _is_missing(df[c]) for c in cols}, index=df.index)
    any_miss = miss.any(axis=1)
    if any_miss.any():
        if drop_missing:
            notes.append(f"dropped {int(any_miss.sum())} rows with an empty value in {', '.join(cols)}")
            df = df.loc[~any_miss]
            if len(df) == 0:
                raise DataError(f"every row of {label} has an empty value in one of {', '.join(cols)}")
        else:
            first = miss.index[any_miss.to_numpy()][0]
            col = next(c for c in cols if miss.at[first, c])
            n_bad = int(miss[col].sum())
            raise DataError(
                f"{_row_ref(label, first, from_text)}: column '{col}' is empty"
                f"{f' (and in {n_bad - 1} more rows)' if n_bad > 1 else ''}. Every row needs a "
                f"{needed[col]}; fill the gaps or pass drop_missing=True to skip such rows."
            )

    return df


def _values(df: pd.DataFrame, label: str, from_text: bool | int, value_col: str | None, value_kind: str,
            value_max: float, over_max: str, notes: list[str]) -> np.ndarray:
    """The value of every row as float64 (1 per row for an event log), checked: numeric, finite, ≥ 0,
    and within the declared bound (an error, or a note with ``over_max='note'``)."""
    if value_col is not None:
        raw = df[value_col]
        vals = pd.to_numeric(raw, errors="coerce") if not pd.api.types.is_numeric_dtype(raw) else raw
        bad = vals.isna()
        if bad.any():
            first = bad.index[bad.to_numpy()][0]
            raise DataError(
                f"{_row_ref(label, first, from_text)}: column '{value_col}' holds {raw.loc[first]!r} "
                f"where a number was expected ({int(bad.sum())} such rows). Fix or remove those rows."
            )
        v = vals.to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(v)):
            i = int(np.flatnonzero(~np.isfinite(v))[0])
            raise DataError(
                f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds an infinite "
                f"value {raw.iloc[i]!r}; values must be finite numbers."
            )
        if (v < 0).any():
            i = int(np.flatnonzero(v < 0)[0])
            raise DataError(
                f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds a negative "
                f"value {raw.iloc[i]!r} ({int((v < 0).sum())} negative rows). Values must be ≥ 0 "
                "(ratings, counts or 0/1 interactions)."
            )
        over = v > value_max
        if over.any():
            i = int(np.flatnonzero(over)[0])
            if over_max == "error":
                raise DataError(
                    f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds "
                    f"{raw.iloc[i]!r}, above the declared maximum value_max={value_max:g} "
                    f"({int(over.sum())} such rows). Declare the scale's true maximum (value_max) "
                    "or fix those rows."
                )
            notes.append(
                f"{int(over.sum())} values ({over.mean():.2%}) exceed the declared public bound "
                f"{value_max:g}; they are kept as is here and clipped by the DP mechanisms"
            )
        if value_kind == "implicit":
            v = (v > 0).astype(np.float64)
    else:
        v = np.ones(len(df), dtype=np.float64)  # an event log: one row = one event / interaction

    return v


def _check_disjoint_users(t: pd.DataFrame, label: str, from_text: bool | int) -> None:
    """Every user belongs to exactly one entity (users are disjoint across entities)."""
    ue = t.drop_duplicates(["u", "e"])
    multi = ue["u"].duplicated(keep=False)
    if multi.any():
        bad_users = ue.loc[multi, "u"].unique()
        u0 = bad_users[0]
        rows = ue.loc[ue["u"] == u0].head(2)
        where = " and ".join(
            f"'{e}' ({_row_ref(label, r, from_text)})" for e, r in zip(rows["e"], rows["row"])
        )
        raise DataError(
            f"user '{u0}' appears in two entities: {where}"
            f"{f'; {len(bad_users) - 1} more users also do' if len(bad_users) > 1 else ''}. Users "
            "must be disjoint across entities (each user's data stays inside one entity). Give each "
            "user a single entity, or derive the entity from an attribute that is constant per user."
        )



def _merge_duplicates(t: pd.DataFrame, label: str, from_text: bool | int, value_kind: str, duplicates: str,
                      notes: list[str]) -> pd.DataFrame:
    """Repeated (user, item) rows: counts add up, implicit takes the max, ratings follow ``duplicates``."""
    dup = t.duplicated(["u", "i"], keep=False)
    if dup.any():
        n_dup = int(t.duplicated(["u", "i"]).sum())
        if value_kind == "counts":
            how = "sum"  # repeated events of one kind add up
        elif value_kind == "implicit":
            how = "max"
        else:
            how = duplicates
        if how == "error":
            r = t.loc[dup].iloc[0]
            raise DataError(
                f"{_row_ref(label, r['row'], from_text)}: user '{r['u']}' rates item '{r['i']}' more "
                f"than once ({n_dup} repeated rows). Remove the repeats or pass duplicates='last' or 'mean'."
            )
        agg = {"v": how if how != "last" else "last", "e": "first", "row": "first"}
        if "name" in t:
            agg["name"] = "first"
        t = t.groupby(["u", "i"], sort=False, as_index=False).agg(agg)
        notes.append(f"merged {n_dup} repeated (user, item) rows by taking the {how} of their values")

    return t


def _drop_rare_items(t: pd.DataFrame, label: str, min_item_users: int, notes: list[str]) -> pd.DataFrame:
    """Items used by fewer than ``min_item_users`` users are dropped, with a note."""
    if min_item_users > 1:
        item_users = t.groupby("i")["u"].transform("size")
        rare = item_users < min_item_users
        if rare.any():
            n_items_drop = t.loc[rare, "i"].nunique()
            n_users_before = t["u"].nunique()
            t = t.loc[~rare]
            notes.append(
                f"dropped {n_items_drop} items used by fewer than {min_item_users} users "
                f"({int(rare.sum())} interactions; {n_users_before - t['u'].nunique()} users left "
                "with no interactions were dropped too)"
            )
            if len(t) == 0:
                raise DataError(
                    f"{label}: no item is used by at least {min_item_users} users, so the dataset is "
                    "empty after filtering. Lower min_item_users."
                )

    return t


def _apply_entity_sizes(t: pd.DataFrame, label: str, min_entity_users: int, small_entities: str,
                        notes: list[str]) -> pd.DataFrame:
    """Entities smaller than ``min_entity_users``: an error, or dropped with a note; at least two remain."""
    sizes = t.drop_duplicates("u").groupby("e").size().sort_values()
    small = sizes[sizes < min_entity_users]
    if len(small):
        desc = ", ".join(f"'{e}' ({n} users)" for e, n in small.head(6).items())
        desc += f" and {len(small) - 6} more" if len(small) > 6 else ""
        if small_entities == "error" or len(small) == len(sizes):
            raise DataError(
                f"{label}: {len(small)} of {len(sizes)} entities have fewer than {min_entity_users} "
                f"users: {desc}. Each entity needs enough users for its own test split and "
                "prototypes. Use a coarser federation key (e.g. entity_transform='prefix:1'), "
                "lower min_entity_users, or pass small_entities='drop' to leave them out."
            )
        t = t.loc[~t["e"].isin(small.index)]
        notes.append(
            f"dropped {len(small)} entities with fewer than {min_entity_users} users "
            f"({int(small.sum())} users): {desc}"
        )
        sizes = sizes[sizes >= min_entity_users]
    if len(sizes) < 2:
        only = sizes.index[0] if len(sizes) else "?"
        raise DataError(
            f"{label}: only one entity ('{only}', {int(sizes.iloc[0]) if len(sizes) else 0} users) — "
            "federation needs at least two. Check the entity column, or use a finer key "
            "(e.g. entity_transform='prefix:2' instead of 'prefix:1')."
        )

    return t


def _assemble(t: pd.DataFrame, *, value_kind: str, value_max: float, name: str,
              notes: list[str]) -> FederatedDataset:
    """The sparse matrix and the dataset: users and items in natural order (numeric ids numerically)."""
    def _codes(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        num = pd.to_numeric(s, errors="coerce")
        if num.notna().all():
            uniq_num, codes = np.unique(num.to_numpy(), return_inverse=True)
            first_str = pd.Series(s.to_numpy()).groupby(codes).first().to_numpy()
            return codes, first_str.astype(str)
        codes, uniq = pd.factorize(s, sort=True)
        return codes, np.asarray(uniq, dtype=str)

    ucode, uids = _codes(t["u"])
    icode, iids = _codes(t["i"])
    X = sp.csr_matrix(
        (t["v"].to_numpy(dtype=np.float64), (ucode, icode)), shape=(len(uids), len(iids))
    )
    ent_of_user = pd.Series(t["e"].to_numpy()).groupby(ucode).first().to_numpy()
    if "name" in t:
        inames = pd.Series(t["name"].to_numpy()).groupby(icode).first().to_numpy().astype(str)
    else:
        inames = iids
    return FederatedDataset.from_parts(
        X,
        ent_of_user,
        user_ids=uids,
        item_ids=iids,
        item_names=inames,
        value_kind=value_kind,  # type: ignore[arg-type]
        value_max=float(value_max),
        name=name,
        notes=notes,
    )


def _build(
    df: pd.DataFrame,
    label: str,
    from_text: bool | int,
    *,
    user_col: str,
    item_col: str,
    value_col: str | None,
    entity_col: str | None,
    entity_from: str | None,
    entity_transform: str | None,
    item_name_col: str | None,
    value_kind: str,
    value_max: float | None,
    duplicates: str,
    min_entity_users: int,
    min_item_users: int,
    small_entities: str,
    over_max: str,
    drop_missing: bool,
    name: str,
    notes: list[str] | None = None,
) -> FederatedDataset:
    """Validate a long table and build the dataset (see :func:`load_long_table` for the rules)."""
    notes = list(notes or [])
    value_max = _check_options(
        entity_col=entity_col, entity_from=entity_from, entity_transform=entity_transform, value_col=value_col,
        value_kind=value_kind, value_max=value_max, duplicates=duplicates, small_entities=small_entities,
        over_max=over_max, min_entity_users=min_entity_users, min_item_users=min_item_users)
    ent_src = entity_col if entity_col is not None else entity_from
    needed = {user_col: "user column", item_col: "item column", ent_src: "entity column"}  # type: ignore[dict-item]
    if entity_from is not None:
        needed[entity_from] = "column the entity is derived from"
    if value_col is not None:
        needed[value_col] = "value column"
    if item_name_col is not None:
        needed[item_name_col] = "item name column"
    _check_columns(df, label, needed)
    if len(df) == 0:
        raise DataError(f"{label} has a header but no data rows. Nothing to load.")

    df = _reject_or_drop_missing(df, label, from_text, needed, drop_missing, notes)
    v = _values(df, label, from_text, value_col, value_kind, value_max, over_max, notes)
    users = _as_id_strings(df[user_col]).to_numpy()
    items = _as_id_strings(df[item_col]).to_numpy()
    ent = derive_entity(df[ent_src], entity_transform).to_numpy()  # type: ignore[index]
    t = pd.DataFrame({"u": users, "i": items, "v": v, "e": ent, "row": df.index.to_numpy()})
    if item_name_col is not None:
        t["name"] = df[item_name_col].astype(str).str.strip().to_numpy()

    _check_disjoint_users(t, label, from_text)
    t = _merge_duplicates(t, label, from_text, value_kind, duplicates, notes)
    t = t.loc[t["v"] != 0]
    if len(t) == 0:
        raise DataError(f"{label}: every value is 0, so there are no interactions to learn from.")

    t = _drop_rare_items(t, label, min_item_users, notes)
    t = _apply_entity_sizes(t, label, min_entity_users, small_entities, notes)
    return _assemble(t, value_kind=value_kind, value_max=value_max, name=name, notes=notes)


# ====================================================================== public: long table
def load_long_table(
    source: Source,
    *,
    user_col: str,
    item_col: str,
    value_col: str | None = None,
    entity_col: str | None = None,
    entity_from: str | None = None,
    entity_transform: str | None = None,
    item_name_col: str | None = None,
    value_kind: Literal["ratings", "counts", "implicit"] = "ratings",
    value_max: float | None = None,
    duplicates: Literal["last", "mean", "error"] = "last",
    min_entity_users: int = MIN_ENTITY_USERS,
    min_item_users: int = 1,
    small_entities: Literal["error", "drop"] = "error",
    over_max: Literal["error", "note"] = "error",
    drop_missing: bool = False,
    filename: str | None = None,
    sep: str | None = None,
    name: str | None = None,
) -> FederatedDataset:
    """Load a long table: one row per (user, item) interaction.

    Parameters
    ----------
    source : path (CSV, CSV.gz, TSV, Parquet — recognised by content), pandas DataFrame, bytes or a
        binary file-like object (an upload; give ``filename`` for messages and format hints).
    user_col, item_col : columns holding user and item identifiers (any text or numbers).
    value_col : column holding the value. Omit it for an event log (``counts``: each row is one
        event; ``implicit``: each row is an interaction with value 1).
    entity_col : column holding the entity (hospital, bank, …) of each row, **or**
    entity_from, entity_transform : a user attribute and how to derive the entity from it —
        ``None`` (as is), ``"first_char"``/``"first_digit"`` (first character of e.g. a ZIP code;
        non-digit first characters are grouped into one entity ``"other"``), ``"prefix:N"``.
    item_name_col : column with readable item names (the first name seen per item is kept).
    value_kind : ``"ratings"`` (explicit scale), ``"counts"`` (event counts) or ``"implicit"`` (0/1;
        any positive value becomes 1).
    value_max : the declared public upper bound of one value (defaults: 5 for ratings, 1 for
        implicit; required for counts). Values above it are an error (``over_max="error"``) or only
        reported in ``notes`` (``over_max="note"``); the loader never clips.
    duplicates : repeated (user, item) rows of ratings keep the ``"last"`` row in file order (sort
        the table by time first), their ``"mean"``, or raise (``"error"``). Counts are always summed,
        implicit rows collapse to 1.
    min_entity_users : entities with fewer users raise a DataError naming them
        (``small_entities="error"``) or are dropped with a note (``"drop"``).
    min_item_users : items used by fewer users are dropped (with a note).
    drop_missing : skip rows with an empty user/item/value/entity instead of raising.
    sep : field separator of a text file (sniffed from the header line when omitted).

    Returns
    -------
    FederatedDataset with X of shape (n_users, n_items); rows sorted by entity.

    Raises
    ------
    DataError for any problem with the data, ConfigError for inconsistent options. Users in more
    than one entity are an error (users must be disjoint across entities).
    """
    df, label, from_text = read_table(source, filename=filename, sep=sep, what="long table")
    return _build(
        df,
        label,
        from_text,
        user_col=user_col,
        item_col=item_col,
        value_col=value_col,
        entity_col=entity_col,
        entity_from=entity_from,
        entity_transform=entity_transform,
        item_name_col=item_name_col,
        value_kind=value_kind,
        value_max=value_max,
        duplicates=duplicates,
        min_entity_users=min_entity_users,
        min_item_users=min_item_users,
        small_entities=small_entities,
        over_max=over_max,
        drop_missing=drop_missing,
        name=name or Path(label).name,
    )


# ====================================================================== MovieLens
_ML1M_OCCUPATIONS = [
    "other", "academic/educator", "artist", "clerical/admin", "college/grad student",
    "customer service", "doctor/health care", "executive/managerial", "farmer", "homemaker",
    "K-12 student", "lawyer", "programmer", "retired", "sales/marketing", "scientist",
    "self-employed", "technician/engineer", "tradesman/craftsman", "unemployed", "writer",
]  # fmt: skip
_ML1M_AGES = {1: "under 18", 18: "18-24", 25: "25-34", 35: "35-44", 45: "45-49", 50: "50-55", 56: "56+"}


def _read_delimited(path: Path, names: list[str], sep: str, what: str) -> pd.DataFrame:
    """Read a header-less MovieLens file as text columns, with friendly errors.

    ``::`` (the 1M format) is turned into a one-byte separator so the fast C parser can be used.
    """
    if not path.is_file():
        raise DataError(f"{what} file missing: {path}")
    raw = path.read_bytes()
    if not raw.strip():
        raise DataError(f"{what} file {path} is empty.")
    if b"\x00" in raw[:65536]:
        raise DataError(f"{what} file {path} is not a text file.")
    if sep == "::":
        raw, sep = raw.replace(b"::", b"\x1f"), "\x1f"
    try:
        df = pd.read_csv(
            io.BytesIO(raw), sep=sep, header=None, dtype=str, encoding="latin-1",
            quoting=3, usecols=range(len(names)), names=None,
        )  # fmt: skip
    except (pd.errors.ParserError, ValueError) as exc:
        raise DataError(
            f"{what} file {path} is malformed: {exc}. Expected {len(names)} fields separated by "
            f"{sep if sep != chr(31) else '::'!r} on each line ({', '.join(names)})."
        ) from exc
    df.columns = names
    return df


def load_movielens(
    path: str | os.PathLike,
    federation: Literal["zip", "gender", "occupation", "age"] = "zip",
    *,
    min_entity_users: int = MIN_ENTITY_USERS,
    small_entities: Literal["error", "drop"] = "drop",
    name: str | None = None,
) -> FederatedDataset:
    """Load a MovieLens 100K or 1M directory (format recognised from its files).

    100K: ``u.data`` (user, item, rating, time; tab-separated), ``u.user`` (id|age|gender|
    occupation|zip), ``u.item`` (id|title|…, latin-1). 1M: ``ratings.dat``, ``users.dat``
    (id::gender::age::occupation::zip), ``movies.dat`` (id::title::genres), ``::``-separated.

    Entities (``federation``): ``"zip"`` — first digit of the ZIP code, as the paper does ("ZIP 0" …
    "ZIP 9"; ZIP codes not starting with a digit, e.g. Canadian postcodes, form "ZIP other");
    ``"gender"``; ``"occupation"``; ``"age"`` (the 1M age bands; 100K ages are binned the same way).
    Items are named by title. value_kind = "ratings", value_max = 5 (the 1–5 star scale).
    """
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"MovieLens directory not found: {root}")
    if federation not in ("zip", "gender", "occupation", "age"):
        raise ConfigError(f"federation must be 'zip', 'gender', 'occupation' or 'age'; got {federation!r}")
    if (root / "u.data").is_file():
        ratings = _read_delimited(root / "u.data", ["user", "item", "rating", "time"], "\t", "MovieLens 100K ratings")
        users = _read_delimited(root / "u.user", ["user", "age", "gender", "occupation", "zip"], "|", "MovieLens 100K users")
        items = _read_delimited(root / "u.item", ["item", "title"], "|", "MovieLens 100K items")
        version, rfile = "100K", root / "u.data"
        ages = pd.to_numeric(users["age"], errors="coerce")
        bins = [-np.inf, 18, 25, 35, 45, 50, 56, np.inf]
        users["age"] = pd.cut(ages, bins, right=False, labels=list(_ML1M_AGES.values())).astype(str)
    elif (root / "ratings.dat").is_file():
        ratings = _read_delimited(root / "ratings.dat", ["user", "item", "rating", "time"], "::", "MovieLens 1M ratings")
        users = _read_delimited(root / "users.dat", ["user", "gender", "age", "occupation", "zip"], "::", "MovieLens 1M users")
        items = _read_delimited(root / "movies.dat", ["item", "title"], "::", "MovieLens 1M movies")
        version, rfile = "1M", root / "ratings.dat"
        occ = pd.to_numeric(users["occupation"], errors="coerce")
        users["occupation"] = occ.map(dict(enumerate(_ML1M_OCCUPATIONS))).fillna("unknown")
        users["age"] = pd.to_numeric(users["age"], errors="coerce").map(_ML1M_AGES).fillna("unknown")
    else:
        found = ", ".join(sorted(p.name for p in root.iterdir())[:20]) or "nothing"
        raise DataError(
            f"{root} is not a MovieLens 100K or 1M directory: expected u.data, u.user and u.item "
            f"(100K) or ratings.dat, users.dat and movies.dat (1M). Found: {found}."
        )

    users["user"] = users["user"].str.strip()
    if users["user"].duplicated().any():
        dup = users.loc[users["user"].duplicated(), "user"].iloc[0]
        raise DataError(f"MovieLens users file in {root} lists user {dup} twice.")
    if federation == "zip":
        z = users["zip"].fillna("").str.strip()
        first = z.str[:1]
        users["entity"] = "ZIP " + first.where(first.str.isdigit(), "other")
    else:
        users["entity"] = users[federation].fillna("unknown").str.strip()
    ratings["user"] = ratings["user"].str.strip()
    ent = ratings["user"].map(users.set_index("user")["entity"])
    if ent.isna().any():
        i = ent.index[ent.isna().to_numpy()][0]
        raise DataError(
            f"{_row_ref(str(rfile), i, 1)}: "
            f"user {ratings.at[i, 'user']!r} is not in the users file ({int(ent.isna().sum())} such rows). "
            "The directory's files do not belong together."
        )
    titles = ratings["item"].str.strip().map(items.assign(item=items["item"].str.strip()).set_index("item")["title"])
    df = pd.DataFrame(
        {"user": ratings["user"], "item": ratings["item"], "rating": ratings["rating"],
         "entity": ent, "title": titles.fillna(ratings["item"].str.strip())}
    )  # fmt: skip
    return _build(
        df, str(rfile), 1,  # header-less file: data row i + 1 is line i + 1
        user_col="user", item_col="item", value_col="rating", entity_col="entity",
        entity_from=None, entity_transform=None, item_name_col="title",
        value_kind="ratings", value_max=5.0, duplicates="last",
        min_entity_users=min_entity_users, min_item_users=1, small_entities=small_entities,
        over_max="error", drop_missing=False,
        name=name or f"MovieLens {version} ({federation} federation)",
    )  # fmt: skip


_ML_URLS = {
    "100k": "https://files.grouplens.org/datasets/movielens/ml-100k.zip",
    "1m": "https://files.grouplens.org/datasets/movielens/ml-1m.zip",
}


def default_cache_dir() -> Path:
    """``$DPFED_CACHE`` or ``$XDG_CACHE_HOME/dpfed`` or ``~/.cache/dpfed``."""
    if os.environ.get("DPFED_CACHE"):
        return Path(os.environ["DPFED_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dpfed"


def fetch_movielens(version: str = "100k", cache_dir: str | os.PathLike | None = None, *, timeout: float = 60) -> Path:
    """Download an official MovieLens release (GroupLens) into a cache directory; return its folder.

    Already-downloaded releases are reused. The machine must be online; otherwise a DataError
    explains how to download the archive by hand.
    """
    v = str(version).lower().removeprefix("ml-")
    if v not in _ML_URLS:
        raise ConfigError(f"unknown MovieLens version {version!r}; choose one of {', '.join(_ML_URLS)}")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cache / f"ml-{v}"
    marker = "u.data" if v == "100k" else "ratings.dat"
    if (target / marker).is_file():
        return target
    url = _ML_URLS[v]
    cache.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp, tempfile.TemporaryFile() as tmp:
            shutil.copyfileobj(resp, tmp)
            tmp.seek(0)
            with zipfile.ZipFile(tmp) as zf, tempfile.TemporaryDirectory(dir=cache) as tdir:
                zf.extractall(tdir)
                extracted = Path(tdir) / f"ml-{v}"
                if not (extracted / marker).is_file():
                    raise DataError(f"the archive downloaded from {url} does not contain ml-{v}/{marker}")
                extracted.replace(target)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise DataError(
            f"could not download MovieLens {v} from {url} ({exc}); the machine may be offline. "
            f"Download the zip by hand, unzip it and pass the ml-{v} directory instead."
        ) from exc
    except zipfile.BadZipFile as exc:
        raise DataError(f"the file downloaded from {url} is not a valid zip archive; try again") from exc
    return target


# ====================================================================== eICU
_UNITS = r"(?:mg|mcg|g|gm|gram|grams|kg|ml|l|meq|mmol|unit|units|%|mg/ml|mcg/ml|iu)"
_CONTAINER_SEG = re.compile(rf"^\s*[\d.,]+\s*{_UNITS}?\b")
_STOP = frozenset(
    """po iv ivpb ivp im sq subq sc sl pr inj injection ij tab tabs tablet tablets cap caps capsule
    capsules soln sol solution solr susp suspension syr syrup syringe sdv mdv vial vl bag lvp mbp flex
    cont drip infusion inf premix prmx pmx in tbec tbcr tbdp chew chewable ec er xl xr sr dr odt liquid
    liq elixir oral rect supp suppository patch ptch ex op oint ointment cream crm gel neb nebulizer
    nebulization inh inhaler hfa ud pf pack udpwd pwd powder mg mcg g gm gram ml meq unit units bolus
    crys pca gtt sso dose kit ss lf premixed piggyback ivpb. nasal spray top topical soln. tab. mini
    bag. dextrose-free cup inhale inhalation concentrated corrective dosing flexpen sa consult
    laxative standard variable range subcutaneous ir cq mt""".split()
)
_SALTS = frozenset(
    """hcl hydrochloride sodium sod na sulfate bisulfate tartrate bitartrate succinate besylate calcium
    maleate bromide citrate acetate mesylate fumarate potassium disodium hyclate monohydrate dihydrate
    porcine human sulf phosphate gluconate succ suc lactate edisylate methylsulfate tromethamine
    """.split()
)
_IONS = frozenset("sodium potassium magnesium calcium ferrous zinc aluminum sod mag k".split())
#: brand names and abbreviations → generic names (lower case), for the commonest ICU drugs
_SYNONYMS = {
    "tylenol": "acetaminophen", "zofran": "ondansetron", "lasix": "furosemide", "ativan": "lorazepam",
    "protonix": "pantoprazole", "lovenox": "enoxaparin", "pepcid": "famotidine",
    "novolog": "insulin aspart", "aspart insulin": "insulin aspart", "insulin-aspart": "insulin aspart",
    "humalog": "insulin lispro", "insulin-lispro": "insulin lispro", "lispro insulin": "insulin lispro",
    "lantus": "insulin glargine", "glargine insulin": "insulin glargine", "narcan": "naloxone",
    "percocet": "oxycodone-acetaminophen", "lopressor": "metoprolol", "toprol": "metoprolol",
    "flagyl": "metronidazole", "plavix": "clopidogrel", "klor-con": "potassium chloride",
    "k-tab": "potassium chloride", "kcl": "potassium chloride", "potassium cl": "potassium chloride",
    "proventil": "albuterol", "ventolin": "albuterol", "duoneb": "ipratropium-albuterol",
    "albuterol-ipratropium": "ipratropium-albuterol", "cordarone": "amiodarone",
    "zosyn": "piperacillin-tazobactam", "coumadin": "warfarin", "levophed": "norepinephrine",
    "nacl": "sodium chloride", "ns": "sodium chloride", "normal saline": "sodium chloride",
    "d5w": "dextrose", "dext": "dextrose", "rocephin": "ceftriaxone", "dilaudid": "hydromorphone",
    "haldol": "haloperidol", "seroquel": "quetiapine", "colace": "docusate", "senokot": "senna",
    "sennosides": "senna", "xanax": "alprazolam", "toradol": "ketorolac", "precedex": "dexmedetomidine",
    "diprivan": "propofol", "versed": "midazolam", "solu-medrol": "methylprednisolone",
    "solu-cortef": "hydrocortisone", "lipitor": "atorvastatin", "zocor": "simvastatin",
    "norvasc": "amlodipine", "synthroid": "levothyroxine", "vancocin": "vancomycin",
    "norco": "hydrocodone-acetaminophen", "vicodin": "hydrocodone-acetaminophen",
    "acetamin/hydrocodon": "hydrocodone-acetaminophen", "heparin sod": "heparin",
    "kayexalate": "sodium polystyrene sulfonate", "cipro": "ciprofloxacin", "levaquin": "levofloxacin",
    "ancef": "cefazolin", "benadryl": "diphenhydramine", "compazine": "prochlorperazine",
    "reglan": "metoclopramide", "miralax": "polyethylene glycol", "glycolax": "polyethylene glycol",
    "asa": "aspirin", "ecotrin": "aspirin", "nitrostat": "nitroglycerin", "ntg": "nitroglycerin",
    "cardizem": "diltiazem", "imdur": "isosorbide mononitrate", "zyprexa": "olanzapine",
    "ambien": "zolpidem", "flomax": "tamsulosin", "neurontin": "gabapentin", "keppra": "levetiracetam",
    "dilantin": "phenytoin", "decadron": "dexamethasone", "aldactone": "spironolactone",
    "bumex": "bumetanide", "vitamin k": "phytonadione", "mag sulfate": "magnesium sulfate",
    "magnesium sulf": "magnesium sulfate", "sodium bicarb": "sodium bicarbonate",
    "morphine sul": "morphine", "fentanyl citrate": "fentanyl", "pantoprazole sod": "pantoprazole",
    "nss": "sodium chloride", "sodium cl": "sodium chloride", "sodium chl": "sodium chloride",
    "dextrose-nacl": "dextrose-sodium chloride", "d50": "dextrose", "glutose": "glucose",
    "glucagen": "glucagon", "insulin regular human": "insulin regular", "humulin r": "insulin regular",
    "regular insulin": "insulin regular", "insulin reg": "insulin regular",
    "insulin hum-reg": "insulin regular", "insulin-regular": "insulin regular",
    "insulin human regular": "insulin regular", "insulin-glargine": "insulin glargine",
    "insulin lantus": "insulin glargine", "levemir": "insulin detemir", "insulin humalog": "insulin lispro",
    "novolog flexpen": "insulin aspart", "buminate": "albumin", "solumedrol": "methylprednisolone",
    "medrol": "methylprednisolone", "sublimaze": "fentanyl", "sennosides-docusate": "senna-docusate",
    "senokot-s": "senna-docusate", "k-dur": "potassium chloride", "kayciel": "potassium chloride",
    "mvi": "multivitamin", "multivitamins": "multivitamin", "infuvite": "multivitamin",
    "lactated ringers": "lactated ringer's", "ringers": "lactated ringer's", "lr": "lactated ringer's",
    "coreg": "carvedilol", "dulcolax": "bisacodyl", "atrovent": "ipratropium", "apresoline": "hydralazine",
    "piperacillin sod-tazobactam so": "piperacillin-tazobactam",
    "piperacillin-tazobactam": "piperacillin-tazobactam", "heparin sodium lock flush": "heparin flush",
    "heparin lock flush": "heparin flush", "saline flush": "sodium chloride flush",
    "normal saline flush": "sodium chloride flush", "saline lock": "sodium chloride flush",
    "prinivil": "lisinopril", "zestril": "lisinopril", "lanoxin": "digoxin", "deltasone": "prednisone",
    "bayer": "aspirin", "restoril": "temazepam", "magox": "magnesium oxide", "phenergan": "promethazine",
    "pnu-immune-23": "pneumococcal vaccine", "pneumococcal vac polyvalent": "pneumococcal vaccine",
    "pneumococcal polysaccharides": "pneumococcal vaccine", "assess pneumococcal vaccine": "pneumococcal vaccine",
    "pneumococcal": "pneumococcal vaccine", "oxycodone-apap": "oxycodone-acetaminophen",
    "oxycodone-acetamin": "oxycodone-acetaminophen", "acetaminophen-oxycodone": "oxycodone-acetaminophen",
    "hydrocodone-apap": "hydrocodone-acetaminophen", "cozaar": "losartan", "normodyne": "labetalol",
    "trandate": "labetalol", "merrem": "meropenem", "ultram": "tramadol", "valium": "diazepam",
    "maalox": "aluminum-magnesium hydroxide-simethicone",
    "alum & mag hydroxide-simeth": "aluminum-magnesium hydroxide-simethicone",
    "mag-alum hydroxide w-simeth": "aluminum-magnesium hydroxide-simethicone",
    "roxicodone": "oxycodone", "nitro-bid": "nitroglycerin", "cephulac": "lactulose",
    "catapres": "clonidine", "klonopin": "clonazepam", "motrin": "ibuprofen", "nexterone": "amiodarone",
    "heparin-dextrose": "heparin", "milk of magnesia": "magnesium hydroxide", "nicoderm": "nicotine",
    "albuterol-ipratropium": "ipratropium-albuterol", "senna-docusate": "senna-docusate",
}  # fmt: skip


def normalize_drug_name(name: str) -> str:
    """A readable generic name from an eICU ``drugname`` (lower case).

    Container prefixes ("1000 ML FLEX CONT : …"), parenthesised remarks, everything from the first
    dose/strength/route/form token on ("325 MG PO TABS", "IVPB", "ER"), salt suffixes after a
    non-ion name ("metoprolol tartrate" → "metoprolol"; "potassium chloride" kept) are removed, and
    common brand names map to the generic ("TYLENOL" → "acetaminophen").

    >>> normalize_drug_name("ACETAMINOPHEN 325 MG PO TABS"), normalize_drug_name("acetaminophen")
    ('acetaminophen', 'acetaminophen')
    """
    s = re.sub(r"\s+", " ", str(name).lower()).strip()
    if not s:
        return s
    # container descriptions sit before " : " or " - " (or after them): keep the drug segment
    segs = [x.strip() for x in re.split(r"\s*:\s*|\s+-\s+", s) if x.strip()]
    drug_segs = [x for x in segs if not _CONTAINER_SEG.match(x)]
    s = drug_segs[0] if drug_segs else s
    s = re.split(r"[,;]", s)[0]  # "PROVENTIL,VENTOLIN", "NORMODYNE;TRANDATE" list synonyms
    s = re.sub(r"\([^)]*\)?|\[[^\]]*\]?|\*[^*]*\*", " ", s)  # (PEPCID), (PF), *UNIT*
    s = s.replace("%", "% ").replace("/", "-").lstrip("<>*#-=. ")  # "0.9%NaCl", "albuterol/ipratropium"
    tokens = s.split()
    while tokens and (tokens[0] in _STOP or tokens[0][0].isdigit()):
        tokens.pop(0)  # "PRMX NOREPInephrine …"
    out: list[str] = []
    for tok in tokens:
        if tok[0].isdigit() or tok in _STOP or tok.startswith(("0.", ".")):
            break
        out.append(tok)
    while len(out) > 1 and out[-1] in _SALTS and out[0] not in _IONS:
        out.pop()
    res = " ".join(out).strip(" ,.-/") or s.strip()
    res = _SYNONYMS.get(res, res)
    if " " not in res and "-" in res:  # "hydrocodone-acetaminophen" stays, "insulin-lispro" maps
        res = _SYNONYMS.get(res, res)
    return res


def normalize_drug_names(names: pd.Series) -> pd.Series:
    """Vectorised :func:`normalize_drug_name` (evaluated once per distinct name)."""
    uniq = pd.Series(names.dropna().unique())
    mapping = dict(zip(uniq, uniq.map(normalize_drug_name)))
    return names.map(mapping)


def _find_table(root: Path, stem: str) -> Path | None:
    for cand in (f"{stem}.csv.gz", f"{stem}.csv", f"{stem.upper()}.csv.gz", f"{stem.upper()}.csv"):
        if (root / cand).is_file():
            return root / cand
    return None


def _read_eicu_table(root: Path, stem: str, cols: list[str], why: str) -> tuple[pd.DataFrame, str]:
    path = _find_table(root, stem)
    if path is None:
        found = ", ".join(sorted(p.name for p in root.iterdir())[:20]) or "nothing"
        raise DataError(
            f"eICU directory {root} has no {stem}.csv or {stem}.csv.gz ({why}). Found: {found}."
        )
    df, label, _ = read_table(path, what=f"eICU {stem}")
    _check_columns(df, label, {c: f"needed from the {stem} table" for c in cols})
    return df, label


def load_eicu(
    path: str | os.PathLike,
    event_table: str | Sequence[str] = "medication",
    entity: Literal["hospitalid", "hospital", "region"] = "hospitalid",
    *,
    min_entity_users: int = MIN_ENTITY_USERS,
    min_item_users: int = 5,
    small_entities: Literal["error", "drop"] = "drop",
    value_max: float | None = None,
    drop_cancelled: bool = True,
    name: str | None = None,
) -> FederatedDataset:
    """Load the eICU database (or its open demo): unit stays × events, federated by hospital/region.

    Reads ``patient.csv[.gz]`` (patientunitstayid, hospitalid), ``hospital.csv[.gz]`` (hospitalid,
    region; only for ``entity="region"``) and the event table(s) ``medication`` (drugname),
    ``treatment`` (treatmentstring), ``lab`` (labname), ``diagnosis`` (diagnosisstring).

    One row per unit stay (``patientunitstayid``); value = number of events of that item in that
    stay; ``value_kind="counts"`` with the declared public bound :data:`EICU_VALUE_MAX` of the table
    (the largest one when several tables are combined) unless ``value_max`` is given — nothing is
    clipped here, the notes report how many values exceed it. Entities are "hospital <id>" or the
    region ("Unknown region" where the hospital table has none).

    Item names are made readable: drug names are normalised (:func:`normalize_drug_name`), other
    names are whitespace-trimmed. Medication rows without a drug name get the name most often
    recorded with the same ``drughiclseqno`` code; cancelled orders are dropped
    (``drop_cancelled``). Items used by fewer than ``min_item_users`` stays are dropped. With
    several event tables, item names are prefixed with the table ("lab: potassium").
    """
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"eICU directory not found: {root}")
    tables = [event_table] if isinstance(event_table, str) else list(event_table)
    if not tables:
        raise ConfigError("event_table: give at least one of " + ", ".join(EICU_EVENT_TABLES))
    for tb in tables:
        if tb not in EICU_EVENT_TABLES:
            raise ConfigError(
                f"unknown eICU event table {tb!r}; choose from {', '.join(EICU_EVENT_TABLES)}"
            )
    if entity == "hospital":
        entity = "hospitalid"
    if entity not in ("hospitalid", "region"):
        raise ConfigError(f"entity must be 'hospitalid' or 'region'; got {entity!r}")
    notes: list[str] = []

    patient, plabel = _read_eicu_table(root, "patient", ["patientunitstayid", "hospitalid"], "one row per unit stay")
    patient = patient[["patientunitstayid", "hospitalid"]]
    miss = _is_missing(patient["patientunitstayid"]) | _is_missing(patient["hospitalid"])
    if miss.any():
        i = miss.index[miss.to_numpy()][0]
        raise DataError(
            f"{_row_ref(plabel, i, True)}: patientunitstayid or hospitalid is empty; every unit "
            "stay needs both."
        )
    stay_ids = patient["patientunitstayid"].str.strip()
    if stay_ids.duplicated().any():
        i = stay_ids.index[stay_ids.duplicated().to_numpy()][0]
        raise DataError(
            f"{_row_ref(plabel, i, True)}: unit stay {stay_ids.loc[i]} is listed twice in the patient "
            "table; patientunitstayid must be unique."
        )
    hosp = patient["hospitalid"].str.strip()
    if entity == "region":
        hospital, hlabel = _read_eicu_table(root, "hospital", ["hospitalid", "region"], "needed for entity='region'")
        region = hospital.assign(hospitalid=hospital["hospitalid"].str.strip()).drop_duplicates("hospitalid")
        region = region.set_index("hospitalid")["region"].str.strip()
        ent = hosp.map(region)
        n_unknown = int(ent.isna().sum())
        ent = ent.fillna("Unknown region").replace("", "Unknown region")
        if n_unknown:
            notes.append(f"{n_unknown} unit stays are in hospitals without a region: entity 'Unknown region'")
    else:
        ent = "hospital " + hosp
    stay_entity = pd.Series(ent.to_numpy(), index=stay_ids.to_numpy())

    parts = []
    for tb in tables:
        col = EICU_EVENT_TABLES[tb]
        ev, elabel = _read_eicu_table(root, tb, ["patientunitstayid", col], f"the {tb} events")
        n0 = len(ev)
        if tb == "medication" and drop_cancelled and "drugordercancelled" in ev.columns:
            cancelled = ev["drugordercancelled"].str.strip().str.lower().eq("yes")
            if cancelled.any():
                notes.append(f"dropped {int(cancelled.sum())} cancelled medication orders")
                ev = ev.loc[~cancelled]
        names = ev[col].str.strip()
        if tb == "medication" and "drughiclseqno" in ev.columns:
            # eICU leaves drugname empty on many rows that carry the drug's HICL code: recover the
            # name most often recorded with that code elsewhere in the table
            code = ev["drughiclseqno"].str.strip()
            named = pd.DataFrame({"code": code, "name": normalize_drug_names(names)}).dropna()
            best = named.groupby(["code", "name"]).size().reset_index(name="n")
            best = best.sort_values(["code", "n", "name"], ascending=[True, False, True]).drop_duplicates("code")
            norm = normalize_drug_names(names)
            filled = norm.isna() & code.notna()
            norm = norm.where(~filled, code.map(best.set_index("code")["name"]))
            n_filled = int((filled & norm.notna()).sum())
            if n_filled:
                notes.append(f"named {n_filled} medication rows without a drug name from their HICL code")
            names = norm
        elif tb == "medication":
            names = normalize_drug_names(names)
        else:
            names = names.str.replace(r"\s+", " ", regex=True)
        names = names.where(names.fillna("").str.len() > 0)
        if names.isna().any():
            notes.append(f"dropped {int(names.isna().sum())} {tb} rows without a {col}")
        stays = ev["patientunitstayid"].str.strip()
        keep = names.notna() & stays.notna()
        known = stays.isin(stay_entity.index)
        if (keep & ~known).any():
            notes.append(f"dropped {int((keep & ~known).sum())} {tb} rows of unit stays absent from the patient table")
        keep &= known
        item = names[keep] if len(tables) == 1 else tb + ": " + names[keep]
        parts.append(pd.DataFrame({"stay": stays[keep].to_numpy(), "item": item.to_numpy()}))
        if not keep.any():
            raise DataError(f"{elabel}: none of its {n0} rows names an event of a known unit stay")

    events = pd.concat(parts, ignore_index=True)
    counts = events.groupby(["stay", "item"], sort=False).size().reset_index(name="count")
    counts["entity"] = counts["stay"].map(stay_entity).to_numpy()
    vmax = float(value_max) if value_max is not None else max(EICU_VALUE_MAX[t] for t in tables)
    ent_label = "hospital" if entity == "hospitalid" else "region"
    return _build(
        counts, f"eICU {'+'.join(tables)} table", False,
        user_col="stay", item_col="item", value_col="count", entity_col="entity",
        entity_from=None, entity_transform=None, item_name_col=None,
        value_kind="counts", value_max=vmax, duplicates="last",
        min_entity_users=min_entity_users, min_item_users=min_item_users,
        small_entities=small_entities, over_max="note", drop_missing=False,
        name=name or f"eICU {root.name} ({'+'.join(tables)} by {ent_label})", notes=notes,
    )  # fmt: skip


# ====================================================================== samples & dispatcher
def load_sample(
    name: str,
    *,
    federation: Literal["hospital", "region"] | None = None,
    min_entity_users: int = MIN_ENTITY_USERS,
    sample_dir: str | os.PathLike | None = None,
) -> FederatedDataset:
    """Load a generated sample dataset from ``sample_data/`` (see ``sample_data/README.md``).

    ``"synthetic"``: the paper §5.1 Poisson model, 10 entities. ``"clinic"``: eICU-like ICU stays ×
    lab/medication names, by hospital (default) or, with ``federation="region"``, by region.
    """
    key = name.removeprefix("sample:")
    if key not in SAMPLES:
        raise DataError(f"unknown sample dataset {name!r}; available: {', '.join(SAMPLES)}")
    meta = SAMPLES[key]
    path = Path(sample_dir or SAMPLE_DIR) / meta["file"]
    if not path.is_file():
        raise DataError(
            f"sample file {path} is missing; regenerate it with `python sample_data/generate.py`"
        )
    entity_col = meta["entity_col"]
    if federation is not None:
        if key != "clinic" or federation not in ("hospital", "region"):
            raise ConfigError(
                "federation applies to the clinic sample only and must be 'hospital' or 'region'"
            )
        entity_col = federation
    return load_long_table(
        path,
        user_col=meta["user_col"],
        item_col=meta["item_col"],
        value_col=meta["value_col"],
        entity_col=entity_col,
        value_kind=meta["value_kind"],
        value_max=meta["value_max"],
        min_entity_users=min_entity_users,
        name=f"sample: {key}" + (f" by {federation}" if federation else ""),
    )


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
        raise ConfigError(
            f"option{'s' if len(bad) > 1 else ''} {', '.join(bad)} do{'es' if len(bad) == 1 else ''} "
            f"not apply to {what}; accepted: {', '.join(sorted(allowed)) or 'none'}"
        )
    return opts


_LONG_OPTS = (
    "user_col", "item_col", "value_col", "entity_col", "entity_from", "entity_transform",
    "item_name_col", "value_kind", "value_max", "duplicates", "min_entity_users", "min_item_users",
    "small_entities", "over_max", "drop_missing", "filename", "sep", "name",
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
    s = str(spec).strip()
    low = s.lower()
    if low.startswith("sample:"):
        _only(opts, ("federation", "min_entity_users", "sample_dir"), "sample data")
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
            _only(opts, ("federation", "min_entity_users", "small_entities", "name"), "a MovieLens directory")
            return load_movielens(p, **opts)
        if _find_table(p, "patient") is not None:
            o = dict(opts)
            if "federation" in o:
                o["entity"] = o.pop("federation")
            if "events" in o:
                ev = o.pop("events")
                o["event_table"] = [t.strip() for t in ev.split(",") if t.strip()] if isinstance(ev, str) else ev
            _only(o, ("event_table", "entity", "min_entity_users", "min_item_users", "small_entities",
                      "value_max", "drop_cancelled", "name"), "an eICU directory")  # fmt: skip
            return load_eicu(p, **o)
        found = ", ".join(sorted(x.name for x in p.iterdir())[:15]) or "nothing"
        raise DataError(
            f"{p} is a directory but neither a MovieLens nor an eICU one (found: {found}). "
            f"Accepted: {_ACCEPTED}."
        )
    if p.is_file():
        _only(opts, _LONG_OPTS, "a table file")
        if "user_col" not in opts or "item_col" not in opts:
            df, label, _ = read_table(p)
            cols = ", ".join(repr(str(c)) for c in df.columns[:30])
            raise ConfigError(
                f"{label} is a table: say which columns hold the user, the item, the value and the "
                "entity (user_col=…, item_col=…, value_col=…, entity_col=… or entity_from=… with "
                f"entity_transform=…, and value_kind/value_max). Columns found: {cols}."
            )
        return load_long_table(p, **opts)
    raise DataError(f"no such dataset or file: {s!r}. Accepted: {_ACCEPTED}.")
