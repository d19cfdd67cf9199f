"""A long table — one row per (user, item[, value]) with an entity — built into a dataset.

The build is the one every loader ends in (the MovieLens and eICU loaders hand it their rows): the
options are checked before any row is read, then missing values, the values against their declared
bound, users disjoint across entities, repeated (user, item) rows, zero values, the declared
federation and the declared item catalogue, each step a function so that its rule and its message
stay in one place; :func:`_assemble` makes the sparse matrix in the dataset's final order. Every
problem is a :class:`~dpfed_core.errors.DataError` (bad data) or :class:`~dpfed_core.errors.ConfigError`
(bad options) naming the file, the column, the row and the fix.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.features import as_feature_table as _feature_table  # noqa: I001
from dpfed_core.data.features import attach_item_features
from dpfed_core.data.inputs import ListFile, check_one_entity_source, id_text, read_list
from dpfed_core.data.upload import attribute_column_name, join_user_attributes, wide_item_columns, wide_table_text
from dpfed_core.data.tables import (Source, _as_id_strings, _cat_map, _check_columns, _is_missing, _row_ref,
                                    check_id_sizes, names_as_values, not_single_value,
                                    per_value, read_table)
from dpfed_core.errors import ConfigError, DataError

__all__ = [
    "load_long_table",
    "derive_entity",
    "infer_value_kind",
    "read_item_list",
    "fixed_duplicate_rule",
    "release_freed_memory",
    "DUPLICATE_WORDS",
    "MIN_ENTITY_USERS",
    "MAX_PREFIX",
    "VALUE_MAX_LIMIT",
]

#: Default smallest entity kept. The evaluation split makes 20 % of an entity's users test users and
#: an entity fits k prototypes on the rest: below ~10 users an entity has at most one test user and
#: cannot support even a handful of prototypes.
MIN_ENTITY_USERS = 10

#: Longest prefix of ``prefix:N`` (a key longer than any id column is a typo, not a federation).
MAX_PREFIX = 1000
_TRANSFORMS_HELP = f'"first_char", "first_digit" or "prefix:N" (1 ≤ N ≤ {MAX_PREFIX}), or none (the value itself)'
_VALUE_KINDS = ("ratings", "counts", "implicit")

#: How repeated (user, item) rows are merged, in the words of the Data page's control and the note.
DUPLICATE_WORDS = {"last": "keep the last", "mean": "average them", "error": "stop and name them",
                   "sum": "add them up (counts: repeated events add up)",
                   "max": "keep one (implicit data: an interaction is there or not)"}


def fixed_duplicate_rule(value_kind: str | None) -> str | None:
    """The merge rule a value kind imposes (counts add up, implicit keeps one), None for ratings
    (the user's choice: ``duplicates``)."""
    return {"counts": "sum", "implicit": "max"}.get(value_kind or "")


# ====================================================================== entity keys
def derive_entity(values: pd.Series, transform: str | None) -> pd.Series:
    """Apply a federation-key transform to a user attribute (vectorised).

    ``None``: the value itself. ``"first_digit"``: the first character of a value that starts with a
    digit (a ZIP code → its first digit, as the paper federates MovieLens); values whose first
    character is not a digit are grouped into one entity ``"other"``. ``"first_char"``: the first
    character, whatever it is (region codes ``N12``, ``S34`` → ``N``, ``S``; as ``"prefix:1"``).
    ``"prefix:N"``: the first N characters.
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        return _cat_map(values, lambda c: derive_entity(c, transform).astype(str))
    s = values.astype(str).str.strip()
    if transform is None:
        return s
    if transform == "first_digit":
        first = s.str[:1]
        # ASCII 0-9 only: a full-width or Arabic-Indic digit is another character, not that digit
        return first.where(first.isin(list("0123456789")), "other")
    if transform == "first_char":
        return s.str[:1]
    m = re.fullmatch(r"prefix:(\d{1,6})", str(transform), flags=re.ASCII)
    if m and 1 <= int(m.group(1)) <= MAX_PREFIX:
        return s.str[: int(m.group(1))]
    raise ConfigError(f"unknown entity transform {transform!r} (entity_transform); accepted: {_TRANSFORMS_HELP}",
                      param="entity_transform")


# ====================================================================== the core builder
#: Column names from which the value kind is inferred when none is declared (lower case, exact).
_RATING_NAMES = frozenset("rating ratings stars star score scores grade grades preference".split())
_COUNT_NAMES = frozenset("count counts n events event_count n_events freq frequency quantity qty times "
                         "visits clicks plays orders doses number num".split())

#: Largest accepted declared bound of one value: beyond it squares and sums of values overflow the
#: arithmetic of the models (a bound of 1e308 would make every DP noise scale infinite).
VALUE_MAX_LIMIT = 1e9

#: Options of earlier versions that decided who takes part by a true count (no rule on a
#: true count decides what is sent or who takes part) and what replaces each.
_REMOVED_OPTIONS = {
    "min_entity_users": "entities are the declared federation whatever their size; to leave entities out, "
                        "declare them with exclude_entities",
    "small_entities": "entities are no longer dropped by their true size; declare the ones to leave out "
                      "with exclude_entities",
    "min_item_users": "items come from a declared catalogue (items=…) or from the run's DP partition "
                      "selection, never from a true count",
}


def _reject_removed(opts: dict[str, Any], loader: str | None = None) -> None:
    """A removed option says why it went. With ``loader`` (``opts`` = the options that loader did not
    take), any other option is unknown to it."""
    for k in opts:
        if k in _REMOVED_OPTIONS:
            raise ConfigError(f"{k} is no longer an option: {_REMOVED_OPTIONS[k]}", param=k)
    if loader is not None and opts:
        raise ConfigError(f"unknown option(s) {', '.join(sorted(opts))} of {loader}")


def infer_value_kind(value_kind: str | None, value_col: str | None) -> tuple[str, str]:
    """The value kind to use and why: the declared kind, else the value column's name
    (``rating``/``stars``/``score`` → ratings, ``count``/``n``/``events``/… → counts), else, without a
    value column, an event log of ``counts`` (one row = one event). Never read off the values."""
    if value_kind is not None:
        if value_kind not in _VALUE_KINDS:
            raise ConfigError(f"value_kind must be one of {', '.join(_VALUE_KINDS)}; got {value_kind!r}",
                              param="value_kind")
        return value_kind, "declared"
    if value_col is None:
        return "counts", "no value column: each row is one event"
    low = str(value_col).strip().lower()
    if low in _RATING_NAMES:
        return "ratings", f"inferred from the value column's name {value_col!r}"
    if low in _COUNT_NAMES:
        return "counts", f"inferred from the value column's name {value_col!r}"
    raise ConfigError(
        f"say what the values of column {value_col!r} are: value_kind ratings (an explicit scale, e.g. 1–5 "
        "stars), counts (numbers of events) or implicit (0/1). It decides the bound, the observation mode "
        "and the headline metric, so it is not guessed from the values.", param="value_kind")


def _check_distinct_columns(user_col, item_col, value_col, entity_col, entity_from) -> None:
    """One column, one role (user_col = item_col made every user its own item). Both entity options at
    once are the options check's error (exactly one of them), not this one's."""
    roles = [("user_col", user_col), ("item_col", item_col), ("entity_col", entity_col),
             ("entity_from", None if entity_col is not None else entity_from), ("value_col", value_col)]
    seen: dict[str, str] = {}
    for param, col in roles:
        if col is None:
            continue
        if str(col) in seen:
            raise ConfigError(f"{param} and {seen[str(col)]} both name the column {col!r}; each role needs its own "
                              "column (users, items, the entity and the values are different things)", param=param)
        seen[str(col)] = param


def _count(n: int, noun: str) -> str:
    """``n`` and its noun, singular for one: "1 such row", "3 such rows"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _check_options(*, entity_col, entity_from, entity_transform, value_col, value_kind, value_max, duplicates,
                   over_max) -> float:
    """Validate the options before reading a row; returns the value bound (declared or the scale's)."""
    if value_kind not in _VALUE_KINDS:
        raise ConfigError(f"value_kind must be one of {', '.join(_VALUE_KINDS)}; got {value_kind!r}",
                          param="value_kind")
    if (entity_col is None) == (entity_from is None):
        raise ConfigError(
            "give exactly one of entity_col (a column holding the entity, e.g. 'hospital') or "
            "entity_from (a user attribute to derive it from, e.g. 'zip' with entity_transform="
            "'first_digit')", param="entity_col"
        )
    if entity_transform is not None and entity_from is None:
        raise ConfigError("entity_transform applies to entity_from; pass entity_from=<column> too",
                          param="entity_from")
    if entity_transform is not None:
        derive_entity(pd.Series(["0"]), entity_transform)  # validates the transform name early
    if value_kind == "ratings" and value_col is None:
        raise ConfigError("ratings need a value column: pass value_col=<the rating column>", param="value_col")
    if value_max is None:
        if value_kind == "counts":
            # a table without a value column is one event per row: reading each pair as one 1 needs no bound
            implicit = (", or read each user–item pair as one 1 (value_kind=implicit)" if value_col is None else "")
            raise ConfigError(
                "count data needs a declared public upper bound per value: pass value_max (e.g. the "
                f"most events one user can plausibly have for one item){implicit}. It must not be read off "
                "the data.", param="value_max")
        value_max = 5.0 if value_kind == "ratings" else 1.0
    try:
        value_max = float(value_max)
    except (TypeError, ValueError):
        raise ConfigError(f"value_max must be a number, got {value_max!r}", param="value_max") from None
    if not (np.isfinite(value_max) and 0 < value_max <= VALUE_MAX_LIMIT):
        raise ConfigError(f"value_max must be a positive number ≤ {VALUE_MAX_LIMIT:g}, got {value_max!r}",
                          param="value_max")
    if duplicates not in (None, "last", "mean", "sum", "error"):
        raise ConfigError(f"duplicates must be 'last', 'mean', 'sum' or 'error'; got {duplicates!r}",
                          param="duplicates")
    fixed = fixed_duplicate_rule(value_kind)
    if fixed is not None and duplicates in ("last", "mean", "sum") and duplicates != fixed:
        # a merge rule of ratings given for counts or implicit data would not be applied: said, not ignored
        rule = ("add up (two rows of 2 events are 4 events)" if value_kind == "counts" else
                "keep one (an item chosen twice is chosen)")
        raise ConfigError(f"duplicates={duplicates!r} merges repeated ratings; repeated rows of {value_kind} always "
                          f"{rule}. Leave duplicates out, pass duplicates='error' to stop at a repeated row, or "
                          "value_kind=ratings if the values are ratings", param="duplicates")
    if duplicates == "sum" and value_kind == "ratings":
        raise ConfigError("duplicates='sum' adds repeated ratings up, beyond their scale (two 5-star ratings would "
                          "read as 10): for ratings pass duplicates='last', 'mean' or 'error'; for counts of events, "
                          "value_kind=counts (they always add up)", param="duplicates")
    if over_max not in (None, "error", "note"):
        raise ConfigError(f"over_max must be 'error' or 'note'; got {over_max!r}", param="over_max")
    return value_max


#: How exports write a missing number (pandas and NumPy "NaN"/"nan", R "NA", SQL "NULL", spreadsheets
#: "#N/A"), compared in lower case: missing in the value column only — ids are exact strings, where
#: "NA" may be a name.
MISSING_NUMBER_WORDS = frozenset({"nan", "-nan", "na", "n/a", "null", "none", "#n/a"})


def _is_missing_number(s: pd.Series) -> pd.Series:
    """Empty, or a missing-number word (:data:`MISSING_NUMBER_WORDS`), in a column of numbers."""
    return _is_missing(s, MISSING_NUMBER_WORDS)


def _reject_or_drop_missing(df: pd.DataFrame, label: str, from_text: bool | int, needed: dict[str, str],
                            drop_missing: bool, notes: list[str], numeric: tuple = ()) -> pd.DataFrame:
    """Rows with an empty value in a used column, or a missing-number word (``NaN``, ``NA``, …) in a
    ``numeric`` one: an error naming the first, or dropped with a note."""
    cols = list(dict.fromkeys(needed))
    miss = pd.DataFrame({c: (_is_missing_number if c in numeric else _is_missing)(df[c]) for c in cols},
                        index=df.index)
    any_miss = miss.any(axis=1)
    if any_miss.any():
        if drop_missing:
            what = "an empty value" + (" (or a missing number such as NaN)" if numeric else "")
            notes.append(f"dropped {_count(int(any_miss.sum()), 'row')} with {what} in {', '.join(cols)}")
            df = df.loc[~any_miss]
            if len(df) == 0:
                raise DataError(f"every row of {label} has an empty value in one of {', '.join(cols)}")
        else:
            first = miss.index[any_miss.to_numpy()][0]
            empty = [c for c in cols if miss.at[first, c] and pd.isna(df.at[first, c])]
            if from_text is not False and len(empty) > 1:
                # a line that ends early reads as its last fields empty: say which it may be
                raise DataError(
                    f"{_row_ref(label, first, from_text)}: columns {', '.join(repr(c) for c in empty)} are empty — "
                    "the line may end early (fewer fields than the header) or leave them blank. Every row needs a "
                    "value in each; fill the gaps, or leave such rows out with drop_missing.", param="drop_missing")
            col = next(c for c in cols if miss.at[first, c])
            n_bad = int(miss[col].sum())
            raw = df.at[first, col]
            held = "" if pd.isna(raw) else str(raw).strip()
            shows = ("is empty" if not held else f"holds {held!r}, a missing number" if col in numeric else
                     f"holds only invisible characters ({ascii(held)}), so it shows as empty")
            raise DataError(
                f"{_row_ref(label, first, from_text)}: column '{col}' {shows}"
                f"{f' (and in {n_bad - 1} more rows)' if n_bad > 1 else ''}. Every row needs a value in its "
                f"{needed[col]}; fill the gaps, or leave such rows out with drop_missing.",
                param="drop_missing"
            )

    return df


def _refuse_rows_in_one_field(df: pd.DataFrame, label: str, from_text: bool | int, columns: Sequence[str]) -> None:
    """A used field holding a line break after which a line has as many separators as a record: whole rows
    read into one field (a double quote opened, then closed only lines later, as a tab-separated export
    writes a name that starts with a quote), so the table parses with those rows silently merged. Refused,
    naming the record; a field that only spans lines (a spreadsheet cell with a line break) is kept."""
    sep, fields = df.attrs.get("record_sep"), int(df.attrs.get("record_fields") or 0)
    if sep is None or fields < 2:
        return
    for col in dict.fromkeys(columns):
        s = df[col]
        distinct = pd.Series(s.cat.categories if isinstance(s.dtype, pd.CategoricalDtype) else s.dropna().unique())
        text = distinct.astype(str)
        for value in text[text.str.contains("[\r\n]", regex=True)]:
            inner = re.split(r"\r\n|\r|\n", value)[1:]
            if not any(line.count(sep) >= fields - 1 for line in inner):
                continue
            at = s.index[(s.astype(str) == value).to_numpy()]
            if at.empty:  # a category of rows left out before this check
                continue
            row = at[0]
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise DataError(
                f"{_row_ref(label, row, from_text)}: column '{col}' spans {len(inner) + 1} lines, and a line inside it "
                f"has as many separators as a row ({shown!r}): a field that starts with a double quote (\") runs to the next "
                "double quote, across lines, so those rows were read into this one field. Close the quote where "
                "the field ends, or remove it (a quote inside a field is written doubled, \"\", within a field in "
                "quotes)", param="data")


def _numeric(raw: pd.Series) -> pd.Series:
    """Numbers of a text (or categorical) column; NaN where a value is not a number. A categorical
    column is converted through its categories only."""
    if pd.api.types.is_numeric_dtype(raw) and not isinstance(raw.dtype, pd.CategoricalDtype):
        return raw.astype(np.float64)
    if isinstance(raw.dtype, pd.CategoricalDtype):
        cats = pd.to_numeric(pd.Series(raw.cat.categories.astype(str)).str.strip(), errors="coerce")
        cats = cats.to_numpy(dtype=np.float64)
        codes = raw.cat.codes.to_numpy()
        return pd.Series(np.where(codes >= 0, cats[np.maximum(codes, 0)], np.nan), index=raw.index)
    return pd.to_numeric(raw, errors="coerce").astype(np.float64)


#: The largest value a table may hold: the entities' own models (matrix factorisations, kept on the
#: raw values; only the DP mechanisms clip to the public bound) square and multiply the values, and
#: far beyond this they overflow to infinity (at 1e300 every score is NaN).
MAX_VALUE = 1e15


def _cell(x: object) -> str:
    """A cell as a message quotes it: text in quotes, a number as written (never ``np.float64(inf)``)."""
    if isinstance(x, str):
        return repr(x)
    try:
        return f"{float(x):g}"
    except (TypeError, ValueError):
        return repr(str(x))


def _comma_hint(shown: str) -> str:
    """What a comma in an unreadable number most likely is, and how to write the number instead.

    Groups of exactly three digits after the commas ("1,200", "12,000,000") are digit grouping from a
    spreadsheet's number format: re-exporting with '.' decimals would keep them, so the hint says to
    drop the grouping. Any other "3,5" is a comma-decimal locale's 3.5. No option reads either form, so
    the fix is in the file."""
    text = shown.strip()
    if re.fullmatch(r"[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?", text):  # "0,500" is no digit grouping
        return (f"The commas read as a thousands separator: numbers are written without digit grouping "
                f"({text.replace(',', '')}, not {text}); remove the separators from the file (export the "
                "column without a thousands separator). ")
    if re.fullmatch(r"[-+]?\d+,\d+", text):
        return ("Numbers are read with '.' as the decimal separator (3.5, not 3,5): export the table with "
                "'.' decimals. ")
    return ""


_GROUPED = r"[-+]?[1-9]\d{0,2}(\.\d{3})+"


def _dot_grouped(raw: pd.Series) -> str | None:
    """A value of a text column whose dots most likely group thousands ("1.200" for twelve hundred), or None.

    A comma-decimal locale's export ('1.200;3' beside '3,5') writes every number from 1,000 up with
    dots and every smaller one without: the column's dotted values all have groups of three digits and
    its other values are integers below 1,000. A number format with decimals writes every value with
    them, and a "3.5" among the dotted values means a decimal point, so neither is taken for grouping."""
    if pd.api.types.is_numeric_dtype(raw) and not isinstance(raw.dtype, pd.CategoricalDtype):
        return None
    if isinstance(raw.dtype, pd.CategoricalDtype):  # the values rows hold (a dropped row's stays a category)
        codes = raw.cat.codes.to_numpy()
        texts = pd.Series(raw.cat.categories[np.unique(codes[codes >= 0])])
    else:
        texts = pd.Series(raw.dropna().unique())
    texts = texts.astype(str).str.strip()
    dotted = texts.str.contains(".", regex=False)
    if not dotted.any() or dotted.all() or not texts[dotted].str.fullmatch(_GROUPED).all():
        return None
    plain = pd.to_numeric(texts[~dotted], errors="coerce")
    if plain.isna().any() or not (plain.abs() < 1000).all():
        return None
    return str(texts[dotted].iloc[0])


def _refuse_header_read_as_data(df: pd.DataFrame, label: str, from_text, columns: list[str], header: bool) -> None:
    """A file read without a header whose first line names its columns: in a column of numbers (ids),
    a first cell that is no number and appears nowhere else is the column's name; where every id is a
    word, a first row of words whose cells each appear in no other row is the header. Read as data it
    would be a made-up user, item or entity; the value column's own check names it when there is one."""
    if header or len(df) < 2:
        return
    named = []
    for col in dict.fromkeys(columns):
        s = df[col]
        if pd.isna(s.iloc[0]):
            continue  # a missing cell is the missing-value check's
        first = str(s.iloc[0]).strip()
        if _numeric(pd.Series([first])).notna().all():
            continue
        if isinstance(s.dtype, pd.CategoricalDtype):
            codes = s.cat.codes.to_numpy()
            words = np.flatnonzero(_numeric(pd.Series(s.cat.categories.astype(str))).isna().to_numpy())
            if words.size == 1 and codes[0] == words[0] and int((codes == words[0]).sum()) == 1:
                named.append(first)
        elif _numeric(s.iloc[1:].astype(str)).notna().all():
            named.append(first)
    if named:
        raise DataError(
            f"{_row_ref(label, df.index[0], from_text)} holds {', '.join(repr(n) for n in named)} where the rest of "
            f"{'its column holds' if len(named) == 1 else 'their columns hold'} numbers: the first line looks like a "
            "header, and this file was read without one: leave out --no-header.", param="no_header")
    # ids that are words throughout: a header read as data is a row whose user, item and entity each
    # appear in no other row — a user 'user' holding an item 'item', alone in an entity 'site'
    first = [str(df[c].iloc[0]).strip() for c in dict.fromkeys(columns)]
    if _numeric(pd.Series(first)).notna().any() or any(pd.isna(df[c].iloc[0]) for c in columns):
        return
    if all(_rows_of_first(df[c]) == 1 for c in dict.fromkeys(columns)):
        raise DataError(
            f"{_row_ref(label, df.index[0], from_text)} holds {', '.join(repr(n) for n in first)}, each in no other "
            "row (a user with one item, alone in its entity): the first line looks like a header, and this file was "
            "read without one: leave out --no-header.", param="no_header")


def _refuse_data_read_as_header(df: pd.DataFrame, label: str, from_text, columns: list[str], header: bool) -> None:
    """A text file read with a header whose used columns' names are values of those columns below
    (:func:`~dpfed_core.data.tables.names_as_values`: ``p1,d1,2,h0`` above more rows of user p1 in entity
    h0): its first line is a data row, and read as the header that row would be lost without a word."""
    if from_text is False or not header:
        return
    named = names_as_values(df[list(dict.fromkeys(columns))])
    if len(named) >= 2:
        raise DataError(
            f"{label}: the header's names {', '.join(map(repr, named))} are values of their own columns in the rows "
            "below, so the first line is data, not a header: give --no-header (the columns are then 'column 1' … "
            "'column N'), or add a header line naming the columns", param="no_header")


def _rows_of_first(s: pd.Series) -> int:
    """How many rows hold the first row's value (outer spaces aside), counted on a categorical's codes."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        text = pd.Series(s.cat.categories.astype(str)).str.strip().to_numpy()
        codes = s.cat.codes.to_numpy()
        same = np.flatnonzero(text == text[codes[0]])
        return int(np.isin(codes, same).sum())
    return int((s.astype(str).str.strip() == str(s.iloc[0]).strip()).sum())


def _skip_repeated_headers(df: pd.DataFrame, label: str, from_text, columns: list[str],
                           notes: list[str], header: bool) -> pd.DataFrame:
    """Rows of a text table that write each used column's own name in it: the header line again, as
    files joined one after another carry it (`cat a.csv b.csv`). No data row is so: read as one it would
    be a user 'user' with the item 'item' in an entity 'site' (or a value 'rating' refused as no number).
    Skipped with a note naming their lines, as a blank line is."""
    if from_text is False or not header or len(df) == 0:
        return df
    again = np.ones(len(df), dtype=bool)
    for col in dict.fromkeys(columns):
        name = id_text(str(col))
        # the cell and the name both read as ids do (id_text): a repeat written with a byte-order mark, a
        # no-break space or other outer spaces is the header still, in a column of text or of categories
        again &= per_value(df[col], lambda values: values.astype(str).map(id_text).eq(name).to_numpy())
        if not again.any():
            return df
    at = [re.search(r"line (\d+)\)$", _row_ref(label, i, from_text)).group(1)  # type: ignore[union-attr]
          for i in df.index[again][:3]]
    n = int(again.sum())
    notes.append(f"skipped {n} line{'s' if n != 1 else ''} repeating the header (line{'s' if n != 1 else ''} "
                 f"{', '.join(at)}{' …' if n > 3 else ''}): files joined one after another; a header is no data row")
    return df.loc[~again]


def _with_user_attributes(df: pd.DataFrame, label: str, from_text, columns: list[str], user_col: str,
                          user_attributes: tuple[pd.DataFrame, str], notes: list[str], header: bool) -> pd.DataFrame:
    """The table with a user-attribute table joined on the user id
    (:func:`~dpfed_core.data.upload.join_user_attributes`). Lines repeating the table's header are skipped
    first, by the rule of a table read alone: joined, such a line is a user named like the user column
    ('user') that no attribute row has, and the join would refuse the upload for it."""
    own = [c for c in columns if c in df.columns]  # a missing one is named by the column check after the join
    df = _skip_repeated_headers(df, label, from_text, own, notes, header)
    return join_user_attributes(df, user_col, *user_attributes)


#: How a text column writes a boolean, in any case (a spreadsheet's TRUE/FALSE, Python's True/False,
#: JSON's true/false): read as 1 and 0, as a Parquet column of booleans is. Other words ("yes", "no") are
#: no number in either kind of file.
TRUE_FALSE_WORDS = {"true": 1.0, "false": 0.0}


def _true_false(raw: pd.Series, vals: pd.Series, label: str, from_text, value_col: str,
                notes: list[str]) -> pd.Series:
    """The value column's numbers ``vals``, a column of booleans read as 1 and 0 — a boolean column (a
    Parquet file's) or a text column of true/false words only — with a note. A column mixing such words
    with numbers is refused naming its first word: which of the two it holds is for its writer to say."""
    if not isinstance(raw.dtype, pd.CategoricalDtype) and (
            pd.api.types.is_bool_dtype(raw) or pd.api.types.infer_dtype(raw, skipna=True) == "boolean"):
        notes.append(f"column '{value_col}' holds true and false: read as 1 and 0")
        return vals
    bad = vals.isna().to_numpy()
    if not bad.any():
        return vals
    truth = per_value(raw, lambda v: v.astype(str).str.strip().str.lower().map(TRUE_FALSE_WORDS).to_numpy(float),
                      missing=np.nan)
    word = ~np.isnan(truth)
    if word.all():
        notes.append(f"column '{value_col}' holds true and false: read as 1 and 0")
        return pd.Series(truth, index=raw.index)
    if word.any() and (word | ~bad).all():
        first, number = raw.index[word][0], raw.index[~bad][0]
        raise DataError(
            f"{_row_ref(label, first, from_text)}: column '{value_col}' holds {_cell(raw.loc[first])}, a true/false "
            f"word, where its other rows hold numbers (such as {_cell(raw.loc[number])}) ({int(word.sum())} such "
            f"row{'s' if word.sum() != 1 else ''}). A column is read as true (1) and false (0) only when every value "
            "is one of those words: write the values as numbers throughout (1 for true, 0 for false), or take the "
            "values from another column (value_col).", param="value_col")
    return vals


def _values(df: pd.DataFrame, label: str, from_text: bool | int, value_col: str | None, value_kind: str,
            value_max: float, over_max: str | None, notes: list[str], *, declared: bool = True,
            header: bool = True) -> np.ndarray:
    """The value of every row as float64 (1 per row for an event log), checked: numeric, finite, ≥ 0,
    and within the declared bound.

    Values above the bound follow one rule in every loader, set by the value kind: a
    rating above its scale's maximum is an error (the data or the declared scale is wrong); a count
    above its bound is kept and reported in a note, and every DP mechanism clips it to the bound.
    ``over_max`` overrides the rule ("error" or "note")."""
    if value_col is not None:
        raw = df[value_col]
        vals = _true_false(raw, _numeric(raw), label, from_text, value_col, notes)
        bad = vals.isna()
        if bad.any():
            first = bad.index[bad.to_numpy()][0]
            shown = str(raw.loc[first])
            # read header-less, a header's words are the first data row: say so rather than "a bad value"
            header_hint = ("The first line looks like a header, and this file was read without one: leave out "
                           "--no-header. " if not header and first == 0 and int(bad.sum()) == 1
                           else "")
            raise DataError(
                f"{_row_ref(label, first, from_text)}: column '{value_col}' holds {_cell(raw.loc[first])} "
                f"where a number was expected ({_count(int(bad.sum()), 'such row')}). " + header_hint + _comma_hint(shown)
                + "Fix or remove those rows, or take the values from another column (value_col).",
                param="value_col"
            )
        grouped = _dot_grouped(raw)
        if grouped is not None:
            at = raw.index[(raw.astype(str).str.strip() == grouped).to_numpy()][0]
            raise DataError(
                f"{_row_ref(label, at, from_text)}: column '{value_col}' holds {grouped!r} beside whole numbers below "
                f"1,000: a table whose dots group thousands writes {grouped.replace('.', '')} that way, and read "
                f"with '.' as the decimal point it is {float(grouped):g}. Write the numbers without digit grouping "
                f"(export the column without a thousands separator), or, if {float(grouped):g} is meant, write it as "
                f"{float(grouped):g}."
            )
        v = vals.to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(v)):
            i = int(np.flatnonzero(~np.isfinite(v))[0])
            raise DataError(
                f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds an infinite "
                f"value {_cell(raw.iloc[i])}; values must be finite numbers. Fix or remove that row, or take "
                "the values from another column (value_col).", param="value_col"
            )
        huge = np.flatnonzero(v > MAX_VALUE)
        if huge.size:
            i = int(huge[0])
            raise DataError(
                f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds {_cell(raw.iloc[i])}, "
                f"beyond {MAX_VALUE:.0e}, the largest value the models fit without overflowing "
                f"({huge.size} such row{'s' if huge.size != 1 else ''}): no count or rating is that large, it "
                "is an export error. Fix or remove those rows."
            )
        if (v < 0).any():
            i = int(np.flatnonzero(v < 0)[0])
            raise DataError(
                f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds a negative "
                f"value {_cell(raw.iloc[i])} ({_count(int((v < 0).sum()), 'negative row')}). Values must be ≥ 0 "
                "(ratings, counts or 0/1 interactions): fix those rows, or take the values from another column "
                "(value_col).", param="value_col"
            )
        # implicit data records whether a user interacted, not how much: any other value is read as an
        # interaction, said here rather than as a bound the DP mechanisms clip to
        read_as_one = value_kind == "implicit" and over_max != "error"
        other = (v != 0) & (v != 1) if read_as_one else np.zeros(0, dtype=bool)
        if other.any():
            notes.append(
                f"{_count(int(other.sum()), 'value')} ({other.mean():.2%}) of column '{value_col}' "
                f"{'is' if int(other.sum()) == 1 else 'are'} neither 0 nor 1; "
                "implicit values record only whether a user interacted, so each positive value is read as 1 "
                "(to keep them, declare value_kind=ratings or counts)")
        over = np.zeros(0, dtype=bool) if read_as_one else v > value_max
        if over.any():
            i = int(np.flatnonzero(over)[0])
            rule = over_max or ("error" if value_kind == "ratings" else "note")
            # a bound nobody declared is not called declared: the user is told it was assumed, and where to set it
            bound = (f"the declared maximum value_max={value_max:g}" if declared else
                     f"{value_max:g}, the maximum assumed for {value_kind} without a declared value_max")
            if rule == "error":
                raise DataError(
                    f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds "
                    f"{_cell(raw.iloc[i])}, above {bound} "
                    f"({_count(int(over.sum()), 'such row')}). A {value_kind[:-1]} above its scale's maximum is "
                    "a mistake in the data or in the declared scale: declare the true maximum (value_max), "
                    "declare value_kind counts if these are counts, or fix those rows.", param="value_max"
                )
            notes.append(
                f"{_count(int(over.sum()), 'value')} ({over.mean():.2%}) exceed{'s' if int(over.sum()) == 1 else ''} "
                + (f"the declared public bound {value_max:g}" if declared else
                   f"the public bound {value_max:g} assumed for {value_kind} without a declared value_max")
                + f"; {'it is' if int(over.sum()) == 1 else 'they are'} kept as is here and clipped to it by the DP "
                "mechanisms"
            )
        if value_kind == "implicit":
            v = (v > 0).astype(np.float64)
    else:
        v = np.ones(len(df), dtype=np.float64)  # an event log: one row = one event / interaction

    return v


def _int_codes(s: pd.Series) -> tuple[np.ndarray, int]:
    """(an integer code per row, the number of codes) of an id column — a categorical's own codes
    (no copy), else factorised."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.cat.codes.to_numpy(), len(s.cat.categories)
    codes, uniq = pd.factorize(s)
    return codes, len(uniq)


def _check_disjoint_users(t: pd.DataFrame, label: str, from_text: bool | int) -> None:
    """Every user belongs to exactly one entity (users are disjoint across entities)."""
    # the common case on integer codes: each user's smallest and largest entity code agree (a
    # drop_duplicates of the (user, entity) pairs hashed every row: +50 MB at 1M rows)
    u, n_u = _int_codes(t["u"])
    e, _ = _int_codes(t["e"])
    lo = np.full(n_u, np.iinfo(np.int64).max)
    hi = np.full(n_u, -1, dtype=np.int64)
    np.minimum.at(lo, u, e)
    np.maximum.at(hi, u, e)
    present = hi >= 0
    if np.array_equal(lo[present], hi[present]):
        return
    ue = t.drop_duplicates(["u", "e"])  # only to name the first offending user and its rows
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
            "user a single entity, or derive the entity from an attribute that is constant per user. If each "
            "entity numbers its own users (1, 2, … at every site), an id names different people at each: "
            "make the ids unique across entities (e.g. the entity and the number together), or take them "
            "from another column (user_col).", param="user_col"
        )


def _merge_duplicates(t: pd.DataFrame, label: str, from_text: bool | int, value_kind: str, duplicates: str | None,
                      notes: list[str]) -> pd.DataFrame:
    """Repeated (user, item) rows: counts add up, implicit takes the max, ratings follow ``duplicates``."""
    # whether any pair repeats, on one sorted int64 key per row (hashing the (user, item) pairs of
    # every row cost +20–30 MB at 1M rows); the merge itself only when some do
    u, _ = _int_codes(t["u"])
    i, n_i = _int_codes(t["i"])
    key = np.sort(u.astype(np.int64) * max(n_i, 1) + i)
    if not np.any(key[1:] == key[:-1]):
        return t
    del key
    dup = t.duplicated(["u", "i"], keep=False)
    if dup.any():
        n_dup = int(t.duplicated(["u", "i"]).sum())
        # an explicit 'error' stops at a repeat whatever the kind; otherwise the kind's rule, else the ratings' choice
        fixed = fixed_duplicate_rule(value_kind)
        how = "error" if duplicates == "error" else (fixed or duplicates or "last")
        if how == "error":
            r = t.loc[dup].iloc[0]
            # name=value pairs, so that each front end writes its own flag or control for them
            fix = ("leave out duplicates=error: repeated rows of "
                   f"{'counts are then added up' if fixed == 'sum' else 'implicit data then count once'}" if fixed else
                   f"merge them with duplicates=last ({DUPLICATE_WORDS['last']}) or duplicates=mean "
                   f"({DUPLICATE_WORDS['mean']})")
            raise DataError(
                f"{_row_ref(label, r['row'], from_text)}: user '{r['u']}' has item '{r['i']}' more "
                f"than once ({_count(n_dup, 'repeated row')}). Remove the repeats, or {fix}.",
                param="duplicates"
            )
        agg = {"v": how if how != "last" else "last", "e": "first", "row": "first"}
        if "name" in t:
            agg["name"] = "first"
        t = t.groupby(["u", "i"], sort=False, as_index=False, observed=True).agg(agg)
        notes.append(f"merged {n_dup} repeated (user, item) rows: {DUPLICATE_WORDS[how]}")

    return t


def _summed_counts_over_bound(t: pd.DataFrame, label: str, from_text: bool | int, value_max: float,
                              over_max: str | None, notes: list[str]) -> None:
    """The bound applies to a (user, item) count, so repeated rows added up are checked again: an event log
    of one row per event (each row 1) holds counts only once merged, as the eICU loader counts its events
    before the same check. Above the (always declared) bound a count is kept with a note (the DP mechanisms
    clip it), or refused with ``over_max="error"``."""
    v = t["v"].to_numpy()
    over = v > value_max
    if not over.any():
        return
    bound = f"the declared public bound {value_max:g}"
    n = int(over.sum())
    if over_max == "error":
        r = t.loc[over].iloc[0]
        raise DataError(
            f"{_row_ref(label, r['row'], from_text)}: user '{r['u']}' has a count of {_cell(r['v'])} for item "
            f"'{r['i']}' once its repeated rows are added up, above {bound} ({_count(n, 'such count')}). Declare the "
            "true maximum (value_max), or fix those rows.", param="value_max")
    notes.append(f"{_count(n, '(user, item) count')} ({over.mean():.2%}) {'exceeds' if n == 1 else 'exceed'} {bound} "
                 f"once repeated rows are added up; {'it is' if n == 1 else 'they are'} kept as is here and clipped "
                 "to it by the DP mechanisms")


def _drop_zeros(t: pd.DataFrame, label: str, value_kind: str, notes: list[str]) -> pd.DataFrame:
    """Rows whose value is 0 are dropped, with a note saying how many and why.

    Counts and implicit data: 0 events is the same as no row (every absent cell is a 0 in zero mode),
    so nothing is lost. Ratings: the sparse matrix stores an absent cell as 0 and observed mode reads
    0 as "not rated", so a 0 cannot be kept as a rating; on a 1–N scale it means "not rated" anyway.
    A scale that really includes 0 must be shifted by the data owner (0–4 → 1–5)."""
    zero = t["v"].to_numpy() == 0
    if zero.any():
        n0 = int(zero.sum())
        why = ("a 0 count is the same as no event (absent cells are 0)" if value_kind != "ratings" else
               "a rating 0 is read as 'not rated' (the matrix stores unrated cells as 0); if 0 is a real "
               "rating on your scale, shift the scale by 1 (e.g. 0–4 → 1–5)")
        notes.append(f"dropped {n0} of {len(t)} rows with value 0 ({n0 / len(t):.1%}): {why}")
        t = t.loc[~zero]
    if len(t) == 0:
        raise DataError(f"{label}: every value is 0, so there are no interactions to learn from.")
    return t


def _apply_entities(t: pd.DataFrame, label: str, exclude_entities: Sequence[str], notes: list[str],
                    declared: Sequence[str] | None = None,
                    transform: str | None = None, undeclared: str = "drop") -> tuple[pd.DataFrame, list[str] | None]:
    """Entities are the declared federation.

    With a ``declared`` list (public: an entity file, a hospital table, a generator's list) the
    entities are exactly its names: rows of other entities are dropped with a note (``undeclared="error"``:
    refused, for a site's own export, whose rows left out would be a silent loss), a declared entity
    without rows stays with 0 users (it still sends every message, all zero), so no message depends
    on who is in the data. Without one, the entities are the values found in the data (the caller
    records ``entity_source="data"``). ``exclude_entities`` (public) leaves some out. At least two
    entities must remain. Returns the rows and the entity list (None without a declaration)."""
    def _present(e: pd.Series) -> list[str]:
        u = e.unique()
        return [str(x) for x in (u.astype(str) if hasattr(u, "astype") else u)]

    ents = list(dict.fromkeys(str(e) for e in declared)) if declared is not None else _present(t["e"])
    if declared is not None:
        known = t["e"].astype(str).isin(ents).to_numpy() if not isinstance(t["e"].dtype, pd.CategoricalDtype) \
            else t["e"].isin(ents).to_numpy()
        if not known.all():
            others = t.loc[~known, "e"].astype(str)
            shown = ", ".join(repr(x) for x in sorted(others.unique())[:6])
            n_rows, n_ents = int((~known).sum()), int(others.nunique())
            # most of the table gone is likelier a list missing an entity than a federation chosen on purpose
            most = (" — most of the table: check the entity list (entities=FILE, one name per line as written in "
                    "the data's entity column)" if 2 * n_rows > len(t) else "")
            # names that differ only in case or surrounding spaces are the likeliest cause: named
            fold = {str(x).strip().casefold(): str(x) for x in others.unique()}
            near = [(d, fold[d.strip().casefold()]) for d in ents if d.strip().casefold() in fold][:3]
            apart = ("; names differ only in case or spaces: " + ", ".join(f"{d!r} in the list, {x!r} in the data"
                                                                         for d, x in near) +
                     " — write them in the entity list as the data's entity column does" if near else "")
            notes.append(f"dropped {n_rows} row{'s' if n_rows != 1 else ''} ({_share(n_rows, len(t))} of the table) of "
                         f"{n_ents} entit{'ies' if n_ents != 1 else 'y'} that are not in the declared entity list "
                         f"({shown}{' …' if n_ents > 6 else ''}){most}{apart}")
            if not known.any():
                hint = ("; names differ only in case or spaces: " + ", ".join(f"{d!r} in the list, {x!r} in the data"
                                                                              for d, x in near) if near else
                        f"; the data's entity column holds {shown}{' …' if n_ents > 6 else ''}")
                raise DataError(f"{label}: no row belongs to a declared entity{hint}. Check the entity list (one name "
                                "per line, as written in the data's entity column)", param="entities")
            if undeclared == "error":
                raise DataError(f"{label} holds {n_rows} row{'s' if n_rows != 1 else ''} ({_share(n_rows, len(t))} of "
                                f"the table) of {n_ents} entit{'ies' if n_ents != 1 else 'y'} not in the declared entity "
                                f"list ({shown}{' …' if n_ents > 6 else ''}); list every entity of the table as its "
                                "entity column writes it, or leave those rows out", param="entities")
            t = t.loc[known]
        if len(t) == 0:
            raise DataError(f"{label}: no row belongs to a declared entity; check the entity list (one name per "
                            "line, as written in the data's entity column)", param="entities")
    if exclude_entities:
        excl = [id_text(str(e)) for e in exclude_entities]
        unknown = [e for e in excl if e not in set(ents)]
        if unknown:
            # a name holding a comma is quoted, or the list would read as more names than there are
            shown = ", ".join(repr(e) if "," in e else e for e in sorted(map(str, ents))[:12])
            raise ConfigError(f"exclude_entities names {', '.join(map(repr, unknown))}, not an entity of {label}; "
                              f"entities: {shown}", param="exclude_entities")
        drop = t["e"].isin(excl).to_numpy()
        t = t.loc[~drop]
        notes.append(f"left out {len(excl)} declared entities: "
                     f"{', '.join(repr(e) if ',' in e else e for e in excl[:8])}{' …' if len(excl) > 8 else ''}")
        before = ents
        ents = [e for e in ents if e not in set(excl)] if declared is not None else _present(t["e"])
        if len(ents) < 2 <= len(before):  # the leaving out is what leaves too few, not the data or the list
            left = f"one entity ('{ents[0]}')" if ents else f"no entity (all {len(before)} are left out)"
            raise ConfigError(f"{label}: exclude_entities leaves {left} — federation needs at least two; leave "
                              "fewer out", param="exclude_entities")
        ents = ents or before  # one entity before anything was left out: named below as the data's
    if len(ents) < 2:
        only = ents[0] if len(ents) else "?"
        if declared is not None:
            # the entities are the declared list's: it is what names one entity only
            raise DataError(f"{label}: the declared entity list leaves one entity ('{only}') — federation needs at "
                            "least two; list every entity of the federation (one name per line)"
                            + (" or leave fewer out" if exclude_entities else ""),
                            param="exclude_entities" if exclude_entities and len(declared) >= 2 else "entities")
        if transform is not None:  # the derived key is what merged them
            raise DataError(f"{label}: only one entity ('{only}') — federation needs at least two. Derive a finer "
                            f"key than entity_transform='{transform}' (e.g. 'prefix:2' instead of 'prefix:1'), or "
                            "derive the entity from another attribute", param="entity_transform")
        raise DataError(f"{label}: only one entity ('{only}') — federation needs at least two, and every row "
                        "names this one. Take the entity from another column (entity_col)", param="entity_col")
    if len(t) == 0:
        raise DataError(f"{label}: every row belongs to an excluded entity", param="exclude_entities")
    if declared is not None:
        empty = sorted(set(ents) - set(_present(t["e"])))
        if empty:
            first = str(declared[0]) if len(declared) else None
            # a header line the reader did not recognise (it names no column of this table) reads as an entity
            header = (f"; the list's first line {first!r} is one of them: if it is a header, remove it (or name the "
                      "entity column the same), else that entity takes part with no user"
                      if first in empty and len(empty) < len(ents) else "")
            notes.append(f"{len(empty)} declared entities have no user and take part with an all-zero contribution: "
                         f"{', '.join(empty[:8])}{' …' if len(empty) > 8 else ''}{header}")
    return t, (ents if declared is not None else None)


def read_item_list(source: Source | Sequence[str], *, filename: str | None = None,
                   encoding: str | None = None, column: str | None = None) -> tuple[list[str], list[str] | None]:
    """A declared item catalogue (:func:`dpfed_core.data.inputs.read_list`): one item per line taken
    whole, or CSV ``id,name`` under a recognised header; ``column``: the data's item column, whose name
    on the first line is the list's header. Returns (ids, names|None)."""
    lf = read_list(source, what="item list", param="items", filename=filename, encoding=encoding, column=column)
    return lf.ids, lf.names


def _as_list_file(items: Any, *, what: str, param: str, encoding: str | None = None,
                  column: str | None = None) -> ListFile | None:
    """A list option (file, bytes, list of names, (ids, names) pair or ListFile) as a ListFile."""
    if items is None or isinstance(items, ListFile):
        return items
    if isinstance(items, tuple) and len(items) == 2 and isinstance(items[0], list):
        ids, names = items
        lf = read_list(list(ids), what=what, param=param)
        if names is not None:
            by_id = dict(zip(ids, names))
            lf.names = [by_id[x] for x in lf.ids]
        return lf
    return read_list(items, what=what, param=param, encoding=encoding, column=column)


def _share(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage for a note: '27 %', '< 1 %'."""
    pct = 100.0 * part / max(whole, 1)
    return "< 1 %" if 0 < pct < 1 else f"{pct:.0f} %"


def _written_apart(declared: Sequence[str], data: Sequence[str],
                   used: frozenset[str] | set[str] = frozenset()) -> str:
    """Items of the data outside the catalogue that are a number it writes another way ('1' in the data,
    '01' or '1.0' in the catalogue, and without a row as written there): ids are exact strings, so they
    never match. Said with up to three such pairs, else ''."""
    by_number: dict[float, str] = {}
    for x in (x for x in declared if x not in used):
        v = pd.to_numeric(str(x).strip(), errors="coerce")
        if pd.notna(v):
            by_number.setdefault(float(v), str(x))
    pairs = []
    for x in data:
        v = pd.to_numeric(str(x).strip(), errors="coerce")
        if pd.notna(v) and float(v) in by_number and by_number[float(v)] != str(x):
            pairs.append((by_number[float(v)], str(x)))
    if not pairs:
        return ""
    shown = "; ".join(f"{b!r} in the data, {a!r} in the catalogue" for a, b in pairs[:3])
    return (f". {_count(len(pairs), 'item')} of the data {'is a number' if len(pairs) == 1 else 'are numbers'} the "
            f"catalogue writes another way ({shown}{' …' if len(pairs) > 3 else ''}): ids are compared as written, "
            "so write the items file's ids as the data's item column writes them")


def _apply_catalogue(t: pd.DataFrame, label: str, items: ListFile | None, notes: list[str],
                     columns: Sequence[str] = ()) -> tuple[pd.DataFrame, list[str] | None, list[str] | None]:
    """Check rows against a declared catalogue. Rows of undeclared items are kept as their entities'
    own items, with a note (never shared, each entity still scores them — the catalogue decides what
    is shared, not what a site knows); declared items without a row are reported, and a first line that
    names one of the table's ``columns`` is said to be a header read as an item."""
    if items is None:
        return t, None, None
    ids, names = items.ids, items.names
    notes.extend(items.notes)
    known = t["i"].isin(ids).to_numpy()
    if not known.all():
        bad = t.loc[~known, "i"].astype(str)
        if known.sum() == 0:
            def first(xs) -> str:
                xs = list(xs)
                return ", ".join(repr(str(x)) for x in xs[:3]) + (" …" if len(xs) > 3 else "")

            # the likeliest mix-up: a table of ids and titles (u.item) against data that names its items
            titled = names is not None and list(names) != list(ids)
            # lines of '|'-separated fields taken whole: a table of ids and titles the reader did not take as one
            piped = not titled and sum(str(x).count("|") >= 4 for x in ids) > len(ids) / 2
            raise DataError(f"{label}: no row names an item of the declared catalogue (its ids: {first(ids)}; "
                            f"the data's items: {first(bad.unique())})"
                            + ("; the items file was read as a table of ids and titles "
                               f"({first(names)} are its titles), so the data's item column must hold the ids"
                               if titled else
                               "; its lines were taken whole as names: an `id|title|…` table is read as ids and "
                               "titles only when every line's first field is a whole-number id (unique) and every "
                               "line ends in two or more 0/1 flag fields, as MovieLens' u.item does — give such a "
                               "table, or one item per line as written in the data" if piped else
                               "; check the items file (one item per line, as written in the data)")
                            + _written_apart(ids, bad.unique()), param="items")
        shown = ", ".join(repr(x) for x in bad.unique()[:5])
        more = " …" if bad.nunique() > 5 else ""
        n_rows, n_items = int((~known).sum()), int(bad.nunique())
        what = (f"{n_rows} row{'s' if n_rows != 1 else ''} ({_share(n_rows, len(t))} of the table) of "
                f"{n_items} item{'s' if n_items != 1 else ''} not in the declared item catalogue ({shown}{more})")
        # what the catalogue does and does not decide, said where it happens
        notes.append(f"kept {what} as their entities' own items: never shared (every message is shaped by the "
                     "declared catalogue), scored by the entities that hold them with their own model where the "
                     "method keeps one (the run's notes say), and by the metrics — list them in the items file "
                     f"to share them{_written_apart(ids, bad.unique(), set(t.loc[known, 'i'].astype(str)))}")
    n_used = t.loc[known, "i"].nunique()
    if n_used < len(ids):
        head = str(ids[0])
        header = (f"; its first line {head!r} names a column of the table, not an item: a header the list reader "
                  "took for an item (remove it, or write the item column's name there)"
                  if head in {str(c) for c in columns} and not t["i"].astype(str).eq(head).any() else "")
        notes.append(f"{len(ids) - n_used} of the {len(ids)} declared items have no row in the data (empty "
                     f"columns){header}")
    return t, ids, names


def _natural_order(uniq: np.ndarray) -> np.ndarray:
    """Positions that sort string ids naturally: numerically when every id is a number (ties — '1',
    '01', '1.0' — by their text, never merged), else as text."""
    u = pd.Series(uniq, dtype=object).astype(str)
    num = pd.to_numeric(u, errors="coerce")
    if num.notna().all():
        return np.lexsort((u.to_numpy(), num.to_numpy()))
    return np.argsort(u.to_numpy(), kind="stable")


def _assemble(t: pd.DataFrame, *, value_kind: str, value_max: float, name: str,
              notes: list[str], catalogue: list[str] | None = None,
              catalogue_names: list[str] | None = None, entities: list[str] | None = None,
              entities_accepted: bool = False) -> FederatedDataset:
    """The sparse matrix and the dataset: users and items in natural order, ids as exact strings.

    With a declared ``catalogue`` the columns are exactly its items in its order (items without
    any row are empty columns): the item list is public, whatever the data holds."""
    def _used(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """(int32 code per row, the distinct values present) — a categorical's codes remapped to
        the categories still used (no per-row hashing, no int64 copy: the peak memory)."""
        if not isinstance(s.dtype, pd.CategoricalDtype):
            codes, uniq = pd.factorize(s.astype(str), sort=False)
            return codes.astype(np.int32), np.asarray(pd.Index(uniq).astype(str), dtype=object)
        codes = s.cat.codes.to_numpy()
        used = np.flatnonzero(np.bincount(codes, minlength=len(s.cat.categories)))
        remap = np.full(len(s.cat.categories), -1, dtype=np.int32)
        remap[used] = np.arange(used.size, dtype=np.int32)
        return remap[codes], np.asarray(s.cat.categories[used].astype(str), dtype=object)

    def _codes(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        codes, uniq = _used(s)
        order = _natural_order(uniq)
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        return rank[codes], uniq[order]  # the dataset makes the one fixed-width copy

    ucode, uids = _codes(t["u"])
    n_declared = None
    if catalogue is not None:
        pos = {x: j for j, x in enumerate(catalogue)}
        icats, iuniq = _used(t["i"])
        # items outside the catalogue (kept as their entities' own) come after it, in natural order
        extra = np.asarray([str(x) for x in iuniq if str(x) not in pos], dtype=object)
        extra = extra[_natural_order(extra)] if extra.size else extra
        pos.update({x: len(catalogue) + k for k, x in enumerate(extra)})
        icode = np.asarray([pos[str(x)] for x in iuniq], dtype=np.int32)[icats]
        iids = np.asarray([*catalogue, *extra], dtype=str)
        n_declared = len(catalogue) if extra.size else None
    else:
        icode, iids = _codes(t["i"])
    # int32 indices from the start: the COO → CSR conversion then copies no int64 index arrays
    ecodes, enames = _used(t["e"])
    first = np.empty(len(uids), dtype=np.int32)
    first[ucode] = ecodes  # users are disjoint across entities (checked): any row of a user names its entity
    ent_of_user = enames[first].astype(str)
    del ecodes
    # rows by entity name, natural order within (the dataset's order): the matrix is built in its
    # final order, so the dataset need not copy it to reorder (the peak memory)
    perm = np.argsort(ent_of_user, kind="stable")
    new = np.empty(len(perm), dtype=np.int32)
    new[perm] = np.arange(len(perm), dtype=np.int32)
    ucode, uids, ent_of_user = new[ucode], uids[perm], ent_of_user[perm]
    X = sp.csr_matrix(
        (t["v"].to_numpy(dtype=np.float64), (ucode, icode)), shape=(len(uids), len(iids))
    )
    del ucode
    # names: a catalogue's own (u.item titles) for its items, the data's name column (the first name
    # seen for each) for the others, else the ids
    named = len(catalogue_names) if catalogue is not None and catalogue_names is not None else 0
    inames = np.asarray([*(catalogue_names or [])[:named], *iids[named:]], dtype=object)
    if "name" in t and len(iids) > named:
        got = pd.Series(t["name"].astype(str).to_numpy()).groupby(icode).first()
        got = got[got.index.to_numpy() >= named]
        inames[got.index.to_numpy()] = got.to_numpy().astype(str)
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
        item_source="declared" if catalogue is not None else "data",
        entities=entities,
        entity_source="declared" if entities is not None else "data",
        entities_accepted=entities is not None or bool(entities_accepted),
        copy=False,  # X is this function's own, built in the dataset's row order
        n_declared=n_declared,
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
    value_kind: str | None,
    value_max: float | None,
    duplicates: str | None,
    over_max: str | None,
    drop_missing: bool,
    name: str,
    exclude_entities: Sequence[str] = (),
    items: ListFile | None = None,
    notes: list[str] | None = None,
    entities: Sequence[str] | None = None,
    entities_from_data: bool = False,
    item_features: Any = None,
    undeclared_entities: str = "drop",
    header: bool = True,
) -> FederatedDataset:
    """Validate a long table and build the dataset (see :func:`load_long_table` for the rules)."""
    if undeclared_entities not in ("drop", "error"):
        raise ConfigError(f"undeclared_entities={undeclared_entities!r} must be 'drop' or 'error'",
                          param="undeclared_entities")
    notes = list(notes or [])
    _check_distinct_columns(user_col, item_col, value_col, entity_col, entity_from)  # before asking what values are
    value_kind, why = infer_value_kind(value_kind, value_col)
    if why != "declared":
        notes.append(f"values read as {value_kind} ({why}); declare value_kind to change it")
    declared_max = value_max is not None
    value_max = _check_options(
        entity_col=entity_col, entity_from=entity_from, entity_transform=entity_transform, value_col=value_col,
        value_kind=value_kind, value_max=value_max, duplicates=duplicates, over_max=over_max)
    ent_src = entity_col if entity_col is not None else entity_from
    needed = {user_col: "user column", item_col: "item column", ent_src: "entity column"}  # type: ignore[dict-item]
    # the parameter that names each column: a missing one is named by its flag or control
    params = {user_col: "user_col", item_col: "item_col", ent_src: "entity_col" if entity_col is not None else None}
    if entity_from is not None:
        needed[entity_from] = "column the entity is derived from"
        params[entity_from] = "entity_from"
    if value_col is not None:
        needed[value_col] = "value column"
        params[value_col] = "value_col"
    if item_name_col is not None:
        needed[item_name_col] = "item name column"
        params[item_name_col] = "item_name_col"
    _check_columns(df, label, needed, params)
    # every column of the file, as the reader saw it under a header (a header-less file's are positions)
    wide = wide_item_columns(df.attrs.get("file_columns", []), not header)
    for col, param in ((item_col, "item_col"), (value_col, "value_col")):
        if col in wide:
            # one of item1 … item200 read as the item or value column would give every user its cells as
            # item ids or values of another item: a wrong dataset, never an error
            raise DataError(f"column '{col}' cannot be the {needed[col]} ({param}): "
                            f"{wide_table_text(wide, 'load that')}", param=param)
    for col, role in needed.items():
        odd = not_single_value(df[col])
        if odd is not None:
            param = params.get(col)
            raise DataError(f"{_row_ref(label, odd[0], from_text)}: column '{col}' holds {odd[1]}, not one value a "
                            f"row as the {role} needs: take it from another column{f' ({param})' if param else ''}, "
                            "or write the column as plain text or numbers", param=param)
    # a header alone, or a header and only its repeats: no data row either way
    df = _skip_repeated_headers(df, label, from_text, list(needed), notes, header)
    if len(df) == 0:
        raise DataError(f"{label} has a header but no data rows. Nothing to load.")
    if value_col is None:  # with one, its own check names a header read as data
        _refuse_header_read_as_data(df, label, from_text, [c for c in needed], header)
    _refuse_data_read_as_header(df, label, from_text, list(needed), header)
    _refuse_rows_in_one_field(df, label, from_text, list(needed))  # before: merged rows leave fields empty
    df = _reject_or_drop_missing(df, label, from_text, needed, drop_missing, notes,
                                 numeric=(value_col,) if value_col is not None else ())
    v = _values(df, label, from_text, value_col, value_kind, value_max, over_max, notes, declared=declared_max,
                header=header)
    if value_kind == "implicit" and value_max != 1.0:
        # every value is now 0 or 1: a larger declared bound would only scale the DP noise up for nothing
        notes.append(f"implicit values are read as 0/1, so their public bound is 1, not the declared {value_max:g}")
        value_max = 1.0
    users = _one_spelling(_as_id_strings(df[user_col]), "user ids", user_col, notes)
    check_id_sizes(users, "user id", label, from_text, "user_col")
    items_col = _one_spelling(_as_id_strings(df[item_col]), "item ids", item_col, notes)
    check_id_sizes(items_col, "item id", label, from_text, "item_col")
    ent = derive_entity(_one_spelling(df[ent_src], "entity names", ent_src, notes),  # type: ignore[index]
                        entity_transform)
    if isinstance(ent.dtype, pd.CategoricalDtype):
        check_id_sizes(ent, "entity name", label, from_text, "entity_col")
    # .array keeps categoricals as codes (to_numpy would make one Python string per row)
    t = pd.DataFrame({"u": users.array, "i": items_col.array, "v": v, "e": ent.array,
                      "row": df.index.to_numpy()})
    if item_name_col is not None:
        nm = _one_spelling(_as_id_strings(df[item_name_col]), "item names", item_name_col, notes)
        check_id_sizes(nm, "item name", label, from_text, "item_name_col")
        t["name"] = nm.to_numpy()

    _check_disjoint_users(t, label, from_text)
    n_rows = len(t)
    t = _merge_duplicates(t, label, from_text, value_kind, duplicates, notes)
    if value_kind == "counts" and len(t) < n_rows:
        _summed_counts_over_bound(t, label, from_text, value_max, over_max, notes)
    t = _drop_zeros(t, label, value_kind, notes)
    t, ent_list = _apply_entities(t, label, exclude_entities, notes, entities, entity_transform,
                                  undeclared_entities)
    if ent_list is None and entities_from_data:
        notes.append("the entity list is read from the data (accepted with entities_from_data): membership of an "
                     "entity is not protected")
    t, catalogue, cat_names = _apply_catalogue(t, label, items, notes, columns=list(df.columns))
    ds = _assemble(t, value_kind=value_kind, value_max=value_max, name=name, notes=notes,
                   catalogue=catalogue, catalogue_names=cat_names, entities=ent_list,
                   entities_accepted=entities_from_data)
    return attach_item_features(ds, item_features)


def _one_spelling(ids: pd.Series, what: str, column: str, notes: list[str]) -> pd.Series:
    """``ids`` as they read (:func:`~dpfed_core.data.inputs.id_text`): one Unicode form, no invisible
    characters around them. Two spellings of one name that display the same ('Zürich' precomposed and
    decomposed, 'Bern' and 'Bern' followed by a zero-width space) would otherwise be two entities or items
    under one visible name, and miss the declared list that writes it once; those read as one are said
    in a note. A column of numbers is returned as it is (its ids are ASCII)."""
    if not isinstance(ids.dtype, pd.CategoricalDtype):
        if not (ids.dtype == object or pd.api.types.is_string_dtype(ids)):
            return ids
        ids = ids.astype(str).astype("category")
    cats = pd.Series(ids.cat.categories.astype(str))
    odd = ~cats.str.isascii()
    if not odd.any():
        return ids
    read = cats.map(id_text)
    out = _cat_map(ids, lambda _categories: read)  # the categories' reading above, not a second one
    used = pd.Series(ids.cat.codes.to_numpy()).drop_duplicates()
    used = used[used >= 0].to_numpy()
    # outer spaces were never part of an id: only the spellings that differ otherwise are said
    spellings = pd.DataFrame({"as_written": cats.str.strip().to_numpy()[used], "read": read.to_numpy()[used]})
    spellings = spellings.drop_duplicates()
    many = spellings.groupby("read")["as_written"].agg(list)
    many = many[many.map(len) > 1]
    if len(many):
        shown = "; ".join(" and ".join(ascii(x) for x in forms) + f" as {name!r}"
                          for name, forms in list(many.items())[:3])
        notes.append(f"column {column!r}: {len(many)} of its {what} {'are' if len(many) > 1 else 'is'} written in "
                     f"more than one way that displays the same (another Unicode form of an accent, or an "
                     f"invisible character around it), read as one ({shown}{' …' if len(many) > 3 else ''})")
    return out


def release_freed_memory() -> None:
    """Give the memory a large parse freed back to the operating system: the text chunks' buffers
    stay in the allocators' free lists (pyarrow's pool, glibc's heap), so without this the process
    keeps ~75 MB per million rows resident after loading and every later stage of a run stacks its
    own arrays on top (the run's peak was 9× the file). Best effort: a platform without
    glibc's ``malloc_trim`` keeps its memory, nothing fails."""
    import ctypes
    import ctypes.util
    import sys

    if "pyarrow" in sys.modules:  # pandas' text columns live in pyarrow's pool
        try:
            sys.modules["pyarrow"].default_memory_pool().release_unused()
        except (AttributeError, NotImplementedError):
            pass
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


# ====================================================================== public: long table
def _id_columns(user_col, item_col, entity_col, entity_from, item_name_col, value_col) -> tuple[list[str], dict]:
    """Columns a long table needs and how to read them: ids and names as categoricals (one small code
    per row instead of a Python string: a 2M-row upload stays within a few times its file size)."""
    cols = [c for c in (user_col, item_col, entity_col, entity_from, item_name_col, value_col) if c is not None]
    cols = list(dict.fromkeys(cols))
    return cols, {c: "category" for c in cols}


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
    value_kind: Literal["ratings", "counts", "implicit"] | None = None,
    value_max: float | None = None,
    duplicates: Literal["last", "mean", "sum", "error"] | None = None,
    over_max: Literal["error", "note"] | None = None,
    drop_missing: bool = False,
    exclude_entities: Sequence[str] = (),
    items: Source | Sequence[str] | None = None,
    filename: str | None = None,
    sep: str | None = None,
    name: str | None = None,
    progress: Any = None,
    entities: Source | Sequence[str] | None = None,
    entities_from_data: bool = False,
    item_features: Any = None,
    encoding: str | None = None,
    header: bool = True,
    undeclared_entities: Literal["drop", "error"] = "drop",
    user_attributes: tuple[pd.DataFrame, str] | None = None,
    **removed: Any,
) -> FederatedDataset:
    """Load a long table: one row per (user, item) interaction.

    Parameters
    ----------
    source : path (CSV, CSV.gz, TSV, Parquet — recognised by content), pandas DataFrame, bytes or a
        binary file-like object (an upload; give ``filename`` for messages and format hints).
    user_col, item_col : columns holding user and item identifiers. Ids are the exact strings of the
        file (outer spaces removed): ``1``, ``01`` and ``1.0`` are different users.
    value_col : column holding the value. Omit it for an event log (each row is one event).
    entity_col : column holding the entity (hospital, bank, …) of each row, **or**
    entity_from, entity_transform : a user attribute and how to derive the entity from it —
        ``None`` (as is), ``"first_digit"`` (first digit of e.g. a ZIP code; values not starting with
        a digit are grouped into one entity ``"other"``), ``"first_char"`` (the first character,
        whatever it is), ``"prefix:N"``.
    item_name_col : column with readable item names (the first name seen per item is kept).
    value_kind : ``"ratings"`` (explicit scale), ``"counts"`` (event counts) or ``"implicit"`` (0/1).
        When omitted it is inferred from the value column's *name* (never from its values) and the
        notes say so; an unrecognised name is an error asking for it.
    value_max : the declared public upper bound of one value (defaults: 5 for ratings, 1 for
        implicit; required for counts). Above it: ratings are an error, counts are kept with a note
        (DP mechanisms clip them) — the same rule as :func:`~dpfed_core.data.eicu.load_eicu`.
        ``over_max`` overrides it.
    duplicates : repeated (user, item) rows of ratings keep the ``"last"`` row in file order (None, the
        default), their ``"mean"``, or raise (``"error"``). Counts are always summed and implicit rows
        collapse to 1 (a ratings rule given for them is refused); ``"error"`` stops at a repeat of any kind.
    exclude_entities : entities the data owner declares out of the federation. Every other entity
        takes part whatever its size (no rule on a true count decides who takes part).
    items : a declared item catalogue (list of ids, or a file: one id per line, or CSV id[,name]).
        It decides what is shared: its items are the first columns, in its order; the data's items
        outside it follow as their entities' own (never shared, scored by each entity's own model; a
        note says how many rows). Without
        it the catalogue is the data's items, marked ``item_source="data"``: a DP run then selects its
        catalogue by DP partition selection, charged to the ledger.
    drop_missing : skip rows with an empty user/item/value/entity instead of raising.
    sep : field separator of a text file (sniffed from the header line when omitted).
    entities : the declared federation (a public list: a file with one entity per line, or a list of
        names). Rows of other entities are dropped with a note; a declared entity without
        rows takes part with 0 users. Without it the entity list is read from the data
        (``entity_source="data"``): a DP run is then refused unless ``entities_from_data=True``
        accepts it (membership of an entity is then not protected).
    undeclared_entities : what rows of entities outside ``entities`` get: ``"drop"`` (with a note) or
        ``"error"`` (a site's own export, where a row left out would be lost without a word).
    item_features : a CSV of public item features (item id + numeric or category columns), attached as
        ``dataset.item_features``.
    encoding : the text encoding of the file; without it the whole file is checked: UTF-8, or
        latin-1 when it holds no UTF-8 multi-byte sequence, else an error asking for it.
    header : False for a text file whose first line is data: its columns are then named
        ``column 1`` … (a known header-less format's documented names, e.g. MovieLens ``u.data``'s
        ``user id``, ``item id``, ``rating``, ``timestamp``), as the Data page names them.
    user_attributes : (a table of one row per user, its user-id column), joined on the user id once the
        table is read (:func:`~dpfed_core.data.upload.join_user_attributes`): its other columns are then
        columns ``attribute: <name>`` of the table, so the entity may come from one (the Data page's
        user-attribute upload: MovieLens ``u.data`` by ``u.user``'s occupation). Lines repeating the
        table's header are skipped before the join, with the note a table read alone gets.

    Rows with value 0 are dropped with a note (see :func:`_drop_zeros` for why).

    Returns
    -------
    FederatedDataset with X of shape (n_users, n_items); rows sorted by entity.
    """
    _reject_removed(removed, "load_long_table")
    check_one_entity_source(entities, entities_from_data)
    # every option is checked before the (possibly large) table is read; a column named for two roles first
    _check_distinct_columns(user_col, item_col, value_col, entity_col, entity_from)
    _check_options(entity_col=entity_col, entity_from=entity_from, entity_transform=entity_transform,
                   value_col=value_col, value_kind=infer_value_kind(value_kind, value_col)[0], value_max=value_max,
                   duplicates=duplicates, over_max=over_max)
    declared = _as_list_file(items, what="item list", param="items", encoding=encoding, column=item_col)
    ent_list = _as_list_file(entities, what="entity list", param="entities", encoding=encoding, column=entity_col)
    features = _feature_table(item_features, encoding=encoding)
    cols, dtypes = _id_columns(user_col, item_col, entity_col, entity_from, item_name_col, value_col)
    if user_attributes is not None:  # the attribute table's columns are not read from this file
        from_attributes = {attribute_column_name(str(c)) for c in user_attributes[0].columns}
        cols = [c for c in cols if c not in from_attributes]
        dtypes = {c: dtypes[c] for c in cols}
    df, label, from_text = read_table(source, filename=filename, sep=sep, what="long table",
                                      usecols=cols, dtype=dtypes, progress=progress, encoding=encoding,
                                      header=header)
    notes = list(ent_list.notes) if ent_list is not None else []
    try:
        if user_attributes is not None:
            df = _with_user_attributes(df, label, from_text, cols, user_col, user_attributes, notes, header)
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
            over_max=over_max,
            drop_missing=drop_missing,
            exclude_entities=exclude_entities,
            items=declared,
            name=name or Path(label).name,
            notes=notes,
            entities=ent_list.ids if ent_list is not None else None,
            entities_from_data=entities_from_data,
            item_features=features,
            undeclared_entities=undeclared_entities,
            header=header,
        )
    finally:
        del df
        release_freed_memory()
