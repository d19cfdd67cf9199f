"""Reading an uploaded table for the column mapper.

The Data page's upload is parsed here, not in the UI, so the rules are testable without a browser:

* :func:`read_upload` reads a table as is and recognises a header-less file (MovieLens ``u.data``,
  ``u.user``): its first line stays a data row and its columns get their documented names when the
  format is known by the file's name (:data:`KNOWN_FORMATS`), else ``column 1`` …;
* :func:`guess_mapping` proposes User / Item / Value / Item name / Entity — distinct columns, by name
  when the file has a header and by position and content when it has none (``u.data`` is user, item,
  rating, timestamp: a timestamp is never the value nor the entity); the numbered columns of a wide
  table (:func:`wide_item_columns`: item1 … item200) are never proposed;
* :func:`join_user_attributes` joins a second, user-attribute table on the user id, so that an entity
  can come from a user attribute (MovieLens by ZIP or occupation from ``u.data`` + ``u.user``);
* :func:`mapping_problems` states a wrong mapping in the Data page's words.

Nothing here changes the upload: a new frame is returned, the bytes are never rewritten.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from dpfed_core.data.tables import (KNOWN_FORMATS, headerless, headerless_names,  # noqa: F401 (the Data page's)
                                    header_is_data, known_format, per_value)
from dpfed_core.data.inputs import id_text
from dpfed_core.errors import DataError

#: Values of a column above this, all whole numbers, read as Unix timestamps (seconds since 1970;
#: 1e8 is March 1973), which no rating, count, id of a usual catalogue or entity code reaches.
TIMESTAMP_MIN = 1e8
#: The Data page's control names, for messages.
UPLOAD_CONTROL = "“Long table” upload on the Data page"
ATTRIBUTE_CONTROL = "“User attributes (optional)” upload on the Data page"
ATTRIBUTE_USER_CONTROL = "“User id in the attribute table” on the Data page"


def upload_columns(data: bytes, filename: str, min_columns: int = 3, what: str = "uploaded table",
                   encoding: str | None = None) -> pd.DataFrame:
    """Read an uploaded table (without changing it) to offer its columns for mapping; ``encoding``
    None decides it from the content, as the loader does."""
    from dpfed_core.data.tables import read_table

    df, _label, _ = read_table(bytes(data), filename=filename, what=what, encoding=encoding)
    if df.shape[1] < min_columns:
        need = ("a long table needs at least a user, an item and an entity column (and usually a value column)"
                if min_columns >= 3 else "a user-attribute table needs a user id and at least one attribute column")
        raise DataError(
            f"{filename} has {df.shape[1]} column(s) ({', '.join(map(str, df.columns))}); {need}. Check "
            "the file's separator (re-save it as comma- or tab-separated): comma, semicolon, tab and | are read.",
            param="sep")
    return df


#: File types the Data page's uploads accept (the browser's file filter): the known header-less
#: formats' extensions (MovieLens ``u.data``, ``u1.base``, ``u.user``, ``u.occupation``) included.
#: (A workbook, an archive or JSON is taken too: the reader then says what to do with it — save the sheet
#: or the records as CSV, unzip — where the uploader would only refuse its extension.)
LONG_TABLE_TYPES = ["csv", "tsv", "txt", "data", "dat", "base", "test", "gz", "parquet", "pq", "xlsx", "xls", "zip",
                    "json", "jsonl"]
ATTRIBUTE_TYPES = ["csv", "tsv", "txt", "user", "dat", "gz", "parquet"]
ENTITY_LIST_TYPES = ["txt", "csv", "occupation", "gz"]


def read_upload(data: bytes, filename: str, min_columns: int = 3,
                what: str = "uploaded table", encoding: str | None = None) -> tuple[pd.DataFrame, bool]:
    """The uploaded table for the column mapper and whether its first line is data (header-less).
    A header-less table keeps its first line as a data row, read as written, and gets
    :func:`headerless_names`; the upload itself is never changed."""
    df = upload_columns(data, filename, min_columns, what, encoding)
    if not header_is_data(df) and known_format(filename, df.shape[1]) is None:
        return df, False
    # read again without a header: as a header, a repeated or blank cell of the first line was renamed
    from dpfed_core.data.tables import read_table

    out, _label, _ = read_table(bytes(data), filename=filename, what=what, encoding=encoding, header=False)
    return out, True


def guess_column(columns: list[str], *hints: str) -> str | None:
    """The first column named exactly like a hint, else the first whose name contains one."""
    low = {c.lower(): c for c in columns}
    for h in hints:
        for lc, c in low.items():
            if lc == h:
                return c
    for h in hints:
        for lc, c in low.items():
            if h in lc:
                return c
    return None


#: Fewest columns sharing a name stem followed by a number (item1, item2, item3 / movie_1 …) that are read
#: as a wide table's columns, one per item: a long table names each role once.
WIDE_MIN_COLUMNS = 3
_NUMBERED = re.compile(r"(.*[^\W\d_].*?)[\s_.-]*\d+")


def wide_item_columns(columns: list[str], no_header: bool = False) -> list[str]:
    """The columns whose name is a stem shared by :data:`WIDE_MIN_COLUMNS` or more columns, each followed
    by a number (``item1`` … ``item200``, ``movie_1`` …): a wide table's, one column per item, which is
    not read. [] when there are none, and for a header-less table (its ``column 1`` … are positions), or
    one saved with those names as its header."""
    if no_header or list(map(str, columns)) == headerless_names("", len(columns)):
        return []
    stems: dict[str, list[str]] = {}
    for c in map(str, columns):
        m = _NUMBERED.fullmatch(c.strip())
        if m:
            stems.setdefault(m.group(1).strip().lower(), []).append(c)
    return [c for group in stems.values() if len(group) >= WIDE_MIN_COLUMNS for c in group]


def wide_table_text(wide: list[str], then: str = "upload that") -> str:
    """What is wrong with a wide table and what to do: "the 200 columns item1 … item200 are one column per
    item (a wide table), which is not read; convert it to a long table …"."""
    span = f"{wide[0]} … {wide[-1]}" if len(wide) > 2 else " and ".join(wide)
    return (f"the {len(wide)} columns {span} are one column per item (a wide table), which is not read: convert "
            "it to a long table with one row per user–item interaction — columns user, item[, rating] (and the "
            f"entity) — and {then}")


def _numbers(col: pd.Series, sample: int = 2000) -> np.ndarray | None:
    """The column's first ``sample`` present values as floats, or None when any of them is not a number
    (a missing cell is skipped: the loader reports it by its own rule)."""
    head = col.head(sample)
    text = head[head.notna()].astype(str).str.strip()
    text = text[(text != "") & (text.str.lower() != "nan")]
    vals = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    return None if len(vals) == 0 or np.isnan(vals).any() else vals


def is_timestamp_column(col: pd.Series) -> bool:
    """Whole numbers all above :data:`TIMESTAMP_MIN`: Unix times (u.data's fourth column)."""
    v = _numbers(col)
    return v is not None and bool(np.all(v >= TIMESTAMP_MIN)) and bool(np.all(v == np.round(v)))


def _guess_by_position(df: pd.DataFrame) -> dict[str, str | None]:
    """A header-less table: the usual order of an interaction log is user, item, value, (timestamp),
    so the first two non-timestamp columns are user and item and a third numeric one the value. The
    entity is a further non-timestamp column when there is one; otherwise None (choose it, or take
    it from a user-attribute table)."""
    cols = [str(c) for c in df.columns]
    usable = [c for c in cols if not is_timestamp_column(df[c])]
    out: dict[str, str | None] = {"user": None, "item": None, "value": None, "name": None, "entity": None}
    if usable:
        out["user"] = usable.pop(0)
    if usable:
        out["item"] = usable.pop(0)
    if usable and _numbers(df[usable[0]]) is not None:
        out["value"] = usable.pop(0)
    if usable:
        out["entity"] = usable.pop(0)
    return out


def guess_mapping(columns: list[str], df: pd.DataFrame | None = None,
                  no_header: bool = False) -> dict[str, str | None]:
    """Initial guesses for User / Item / Value / Item name / Entity: distinct columns, never the same
    column twice. With ``no_header`` (and the table) the guess is by position and content
    (:func:`_guess_by_position`); otherwise by the column names. ``entity`` and ``item`` may be None:
    no column is named like one (choose it, or upload a user-attribute table for the entity)."""
    if no_header and df is not None:
        if list(map(str, columns))[:3] == KNOWN_FORMATS["u.data"][1][:3]:
            return {"user": "user id", "item": "item id", "value": "rating", "name": None, "entity": None}
        return _guess_by_position(df)
    cols = [str(c) for c in columns]
    # a wide table's numbered columns (item1 … item200) are items, not a role: never proposed, even
    # where their stem reads like one
    taken: set[str] = set(wide_item_columns(cols))

    def pick(*hints: str, optional: bool = False) -> str | None:
        free = [c for c in cols if c not in taken]
        g = guess_column(free, *hints)
        if g is None and not optional:
            g = free[0] if free else None
        if g is not None:
            taken.add(g)
        return g

    out: dict[str, str | None] = {}
    out["user"] = pick("user", "user_id", "userid", "patientunitstayid", "stay", "patient", "patient_id",
                       "customer", "client")
    out["entity"] = pick("entity", "hospitalid", "hospital", "region", "bank", "site", "zip", "clinic",
                         optional=True)
    # never the first free column: in a table of one column per item (user, site, i1 … i200) that is
    # an item's counts read as item ids; the CLI too needs the item column named
    out["item"] = pick("item", "item_id", "itemid", "movie", "product", "drugname", "drug", "medication",
                       "code", optional=True)
    out["value"] = pick("value", "rating", "count", "score", "amount", optional=True)
    out["name"] = pick("title", "item_name", "name", optional=True)
    return out


def guess_attribute_user(columns: list[str], no_header: bool) -> str:
    """The user-id column of a user-attribute table: ``column 1`` of a header-less one (u.user), else
    the column named like a user id."""
    cols = [str(c) for c in columns]
    if no_header:
        return cols[0]
    return guess_column(cols, "user", "user_id", "userid", "patientunitstayid", "patient", "id") or cols[0]


ATTRIBUTE_PREFIX = "attribute: "


def attribute_column_name(column: str) -> str:
    """How an attribute column is named after the join (kept apart from the interaction table's)."""
    return f"{ATTRIBUTE_PREFIX}{column}"


def source_column_name(column: str) -> str:
    """The column's name in the table it came from (an attribute's own name after the join): the word a
    declared list's header line carries."""
    return column[len(ATTRIBUTE_PREFIX):] if column.startswith(ATTRIBUTE_PREFIX) else column


def join_user_attributes(interactions: pd.DataFrame, user_col: str, attributes: pd.DataFrame,
                         attr_user_col: str) -> pd.DataFrame:
    """The interaction table with every attribute column of the user's row beside it (as
    ``attribute: <name>``), joined on the user id — e.g. MovieLens ``u.data`` with ``u.user``, so the
    entity can be the ZIP code's first digit or the occupation.

    Ids are compared as the exact strings of the files read as they display (:func:`id_text`: outer
    spaces removed, one Unicode form), as the loader reads them. Refused, with the control that fixes
    it: a user id repeated in the attribute table (which row would decide the entity?), and users of
    the interactions without an attribute row (their entity would be unknown; an unmatched user is
    never silently dropped).
    """
    if user_col not in interactions.columns:
        raise DataError(f"the user column {user_col!r} is not in the interaction table", param="user_col")
    if attr_user_col not in attributes.columns:
        raise DataError(f"{attr_user_col!r} is not a column of the user-attribute table; choose it in "
                        f"{ATTRIBUTE_USER_CONTROL}", param="attr_user_col")
    keys = attributes[attr_user_col].astype(str).map(id_text)
    dup = keys[keys.duplicated()]
    if len(dup):
        raise DataError(f"the user-attribute table has {dup.nunique()} repeated user id(s) in {attr_user_col!r} "
                        f"(first: {dup.iloc[0]!r}); one row per user is needed — check "
                        f"{ATTRIBUTE_USER_CONTROL}", param="attr_user_col")
    attrs = attributes.drop(columns=[attr_user_col]).astype(str)
    attrs.columns = [attribute_column_name(str(c)) for c in attrs.columns]
    attrs.index = pd.Index(keys.to_numpy(), name=None)
    raw = interactions[user_col].astype(str)
    # each id read once: a user's many rows share it
    users = pd.Series(per_value(raw, lambda ids: ids.map(id_text).to_numpy(object)), index=raw.index)
    missing = ~users.isin(attrs.index)
    if missing.any():
        lost = users[missing].unique()
        raise DataError(f"{len(lost)} user(s) of the interaction table have no row in the user-attribute table "
                        f"(first: {lost[0]!r}); upload the complete attribute table in {ATTRIBUTE_CONTROL} or "
                        f"check {ATTRIBUTE_USER_CONTROL}", param="attr_user_col")
    joined = attrs.reindex(users.to_numpy())
    joined.index = interactions.index
    return pd.concat([interactions, joined], axis=1)


def mapping_problems(user: str, item: str | None, entity: str | None, value: str | None,
                     name: str | None, wide: list[str] | None = None) -> list[str]:
    """Mapping errors in the Data page's words: an Item column must be chosen, User, Item and Entity
    must be three different columns (a user × item table of one column against itself is a diagonal of
    nonsense), and the value / name columns must not be one of them. ``wide``: the table's wide-table
    columns (:func:`wide_item_columns`): the Item and Value columns are never one of them, and without
    another Item column the message says the table is not read and what to do."""
    out = []
    if wide and (not item or item in wide):
        out.append(f"Choose “Item”: {wide_table_text(wide)}.")
    elif not item:
        out.append("Choose “Item”: no column is named like an item (item, movie, product, drug, code). Each row "
                   "must be one user–item interaction; a table with one column per item (a wide table) is not "
                   "read — reshape it to user, item and value columns.")
    if wide and value in wide:
        out.append(f"Choose another “Value”: {wide_table_text(wide)}.")
    if user == item:
        out.append(f"“User” and “Item” are both {user!r}: choose two different columns (one row per "
                   "user–item interaction).")
    if not entity:
        out.append("Choose “Entity from column” (the hospital / region / site column), or upload a user-attribute "
                   "table and take the entity from one of its columns.")
    elif entity == user:
        out.append(f"“Entity from column” is the user column {user!r}: every user would be their own "
                   "entity. Choose the hospital / region / site column.")
    elif entity == item:
        out.append(f"“Entity from column” is the item column {item!r}: choose the column of the data "
                   "holder (hospital, region, site).")
    if value and value in (user, item, entity):
        out.append(f"“Value” {value!r} is also the user, item or entity column; choose the rating / "
                   "count column or (none) for an event log.")
    if name and name in (user, entity):
        out.append(f"“Item name” {name!r} is the user or entity column; choose the item's title / name "
                   "column or (none).")
    return out


def bound_rule_text(value_max: float) -> str:
    """The one rule for values above the declared bound, the same in every load path."""
    return (f"One rule in every load path (upload, MovieLens, eICU): ratings above the declared maximum "
            f"({value_max:g}) are refused — the declared scale is wrong; counts above it are kept, reported "
            "in the notes and clipped to [0, bound] by every DP mechanism before any aggregate. The bound is "
            "public: take it from the scale's definition, never from the data.")
