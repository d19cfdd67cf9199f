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

import codecs
import difflib
import gzip
import zlib
import io
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Literal, Sequence, Union

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.features import as_feature_table as _feature_table  # noqa: I001
from dpfed_core.data.features import (attach_item_features, drug_token_features, hierarchy_features,
                                      movielens_item_features)
from dpfed_core.data.inputs import ListFile, check_regular_file, env_limit, read_list
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
    "EICU_DEFAULT_VALUE_MAX",
    "MIN_ENTITY_USERS",
    "read_item_list",
    "infer_value_kind",
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
    "infusiondrug": "drugname",
}

#: Declared public bound on the number of events of one kind in one unit stay (SPEC §2: bounds are
#: public parameters, never read off the data). Medication orders and treatments rarely repeat more
#: than ~20 times in a stay; labs are drawn several times a day in long stays; a diagnosis string is
#: recorded a few times at most. The loader clips nothing: it reports how many values exceed the
#: bound (DP mechanisms clip to it).
EICU_VALUE_MAX: dict[str, float] = {"medication": 20.0, "treatment": 20.0, "lab": 50.0, "diagnosis": 10.0,
                                     "infusiondrug": 50.0}

#: Declared bound for an eICU event table without its own entry above.
EICU_DEFAULT_VALUE_MAX = 20.0

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

#: Longest prefix of ``prefix:N`` (a key longer than any id column is a typo, not a federation).
MAX_PREFIX = 1000
#: Rows of text a long table is read in: the loader's peak is one chunk of Python strings plus the
#: integer codes. 100,000 put a 1M-row run at 4.3× the file (the target: 4×), 25,000 at 3.84×.
TEXT_CHUNK_ROWS = 25_000
_TRANSFORMS_HELP = f'None, "first_char", "first_digit" or "prefix:N" (1 ≤ N ≤ {MAX_PREFIX})'
_VALUE_KINDS = ("ratings", "counts", "implicit")


# ====================================================================== reading raw tables

#: How repeated (user, item) rows are merged, in the words of the Data page's control and the note.
DUPLICATE_WORDS = {"last": "keep the last", "mean": "average them", "error": "stop and name them",
                   "sum": "add them up (counts: repeated events add up)",
                   "max": "keep one (implicit data: an interaction is there or not)"}


def fixed_duplicate_rule(value_kind: str | None) -> str | None:
    """The merge rule a value kind imposes (counts add up, implicit keeps one), None for ratings
    (the user's choice: ``duplicates``)."""
    return {"counts": "sum", "implicit": "max"}.get(value_kind or "")

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


#: Largest table file read: a long table beyond it does not fit the in-memory engine anyway.
MAX_TABLE_BYTES = 16 * 2**30
#: Largest table read from memory (an upload), unpacked: parsed as text, a table takes about six times
#: its size (a 503 MB unpacked upload took 2.9 GB), so 128 MiB keeps the server's read under 1 GiB.
#: ``DPFED_MAX_UPLOAD_MB`` changes it; a larger table is read from its path by the CLI
#: (``python -m dpfed_core run --data FILE``), whose bound is :data:`MAX_TABLE_BYTES`.
MAX_UPLOAD_BYTES = 128 * 2**20
#: Most rows (lines) of an upload: a short-lined table (``12,345,6``) fits ten million rows in 128 MiB,
#: and mapping and loading one took ~240 bytes a row (2.5 M rows of 13 bytes: 590 MiB above the
#: imports), so two million rows keep the dashboard's process under 1 GiB whatever the line length.
#: ``DPFED_MAX_UPLOAD_ROWS`` changes it; the CLI reading a path is bounded by :data:`MAX_TABLE_BYTES`.
MAX_UPLOAD_ROWS = 2_000_000


def upload_limits() -> tuple[int, int]:
    """(unpacked bytes, rows) an upload may have: :data:`MAX_UPLOAD_BYTES`, :data:`MAX_UPLOAD_ROWS`, or
    the environment's ``DPFED_MAX_UPLOAD_MB``, ``DPFED_MAX_UPLOAD_ROWS``."""
    mb = env_limit("DPFED_MAX_UPLOAD_MB", MAX_UPLOAD_BYTES / 2**20, param="data", whole=False)
    return int(mb * 2**20), env_limit("DPFED_MAX_UPLOAD_ROWS", MAX_UPLOAD_ROWS, param="data")


def check_upload_size(data: bytes, label: str) -> None:
    """Refuse an in-memory table (an upload) whose unpacked text is above the upload limits — bytes and
    rows (lines; a Parquet file's rows from its footer) — measured by decompressing in 1 MiB steps,
    never by unpacking it whole (a 733 KB .gz can hold 503 MB)."""
    limit, max_rows = upload_limits()
    size, lines, header = len(data), None, 1  # a text table: one header line besides the rows
    if data[:4] == b"PAR1":
        header = 0
        try:
            import pyarrow.parquet as pq

            lines = int(pq.ParquetFile(io.BytesIO(data)).metadata.num_rows)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types; all mean a damaged file
            raise DataError(f"could not read Parquet file {label}: {exc}. Re-export the file.", param="data") from None
    elif data[:2] == b"\x1f\x8b":
        size, lines = 0, 0
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as z:
                while True:
                    block = z.read(2**20)
                    if not block:
                        break
                    size += len(block)
                    lines += block.count(b"\n")
                    if size > limit or lines > max_rows + header:
                        break
        except (EOFError, OSError, zlib.error) as exc:
            raise DataError(f"{label} is a truncated or corrupt gzip file ({exc}); export or upload it again",
                            param="data") from None
    else:
        lines = data.count(b"\n")
    if size > limit:
        raise DataError(f"{label} unpacks to more than {limit / 2**20:.0f} MiB, the limit of a table read in "
                        "memory (an upload): load it from its path with the CLI (python -m dpfed_core run --data "
                        "FILE), or raise the limit with the environment variable DPFED_MAX_UPLOAD_MB on a machine "
                        "with the memory", param="data")
    if lines is not None and lines > max_rows + header:
        raise DataError(f"{label} has more than {max_rows:,} rows, the limit of a table read in memory (an "
                        "upload; a short-lined table takes ~240 bytes a row to map and load): load it from its "
                        "path with the CLI (python -m dpfed_core run --data FILE), or raise the limit with the "
                        "environment variable DPFED_MAX_UPLOAD_ROWS on a machine with the memory", param="data")


def _first_nul(path: Path | None, data: bytes | None, compression: str | None) -> int | None:
    """Offset of the first NUL byte of the (decompressed) text, or None: read in 4 MiB steps."""
    if data is not None and compression is None:
        k = data.find(b"\x00")
        return None if k < 0 else k
    offset = 0
    with _text_stream(path, data, compression) as f:
        while True:
            block = f.read(4 * 2**20)
            if not block:
                return None
            k = block.find(b"\x00")
            if k >= 0:
                return offset + k
            offset += len(block)


def _text_stream(path: Path | None, data: bytes | None, compression: str | None):
    """A binary stream of the (decompressed) text content, for whole-file checks."""
    if path is not None:
        return gzip.open(path, "rb") if compression == "gzip" else open(path, "rb")
    buf = io.BytesIO(data)  # type: ignore[arg-type]
    return gzip.GzipFile(fileobj=buf) if compression == "gzip" else buf


def _whole_file_encoding(label: str, path: Path | None, data: bytes | None, compression: str | None) -> str:
    """latin-1 when no block of the content holds a valid UTF-8 multi-byte sequence, else an error
    naming the first undecodable byte (UTF-8 text with a stray byte must not be read as latin-1)."""
    pattern = re.compile(rb"[\xc2-\xf4][\x80-\xbf]")
    utf8 = codecs.getincrementaldecoder("utf-8")()
    pos, bad_at, multibyte = 0, None, False
    with _text_stream(path, data, compression) as f:
        while True:
            block = f.read(1 << 22)
            if not block:
                break
            multibyte = multibyte or bool(pattern.search(block))
            if bad_at is None:
                try:
                    utf8.decode(block)
                except UnicodeDecodeError as exc:
                    bad_at = pos + max(exc.start, 0)
            pos += len(block)
            if multibyte and bad_at is not None:
                break
    if multibyte:
        raise DataError(f"{label} is UTF-8 text with an invalid byte near byte {bad_at}: the file is damaged or "
                        "mixes encodings. Fix it, or declare its encoding (encoding=latin-1, cp1252, …)",
                        param="encoding")
    return "latin-1"


def _check_table_encoding(encoding: str) -> str:
    """A declared encoding must exist (the read itself then decodes strictly)."""
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise ConfigError(f"encoding {encoding!r} is not a known text encoding (e.g. utf-8, latin-1, cp1252)",
                          param="encoding") from None


def read_table(
    source: Source,
    *,
    filename: str | None = None,
    sep: str | None = None,
    what: str = "table",
    usecols: Sequence[str] | None = None,
    dtype: Any = str,
    progress: Any = None,
    encoding: str | None = None,
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
        if usecols is not None and all(c in source.columns for c in usecols):
            return source[list(dict.fromkeys(usecols))], label, False  # a new frame: the caller's is untouched
        return source, label, False

    data: bytes | None = None
    path: Path | None = None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
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
        check_regular_file(path, what=f"{what} file", param="data")  # never a FIFO or a device
        size = path.stat().st_size
        if size == 0:
            raise DataError(f"{what} file {path} is empty (0 bytes). Export the data again.")
        if size > MAX_TABLE_BYTES:
            raise DataError(f"{what} file {path} is {size / 2**30:.1f} GB, above the {MAX_TABLE_BYTES / 2**30:.0f} GB "
                            "this tool reads; split the table or load a subset", param="data")
        head = _head_bytes(path)
    else:
        data = _source_bytes(source)
        if len(data) == 0:
            raise DataError(f"{label} is empty (0 bytes). Upload the file again.")
        head = data[:65536]
        check_upload_size(data, label)

    name = (filename or (path.name if path else label)).lower()
    if head[:4] == b"PAR1" or name.endswith((".parquet", ".pq")):
        if head[:4] != b"PAR1":
            raise DataError(
                f"{label} is named like a Parquet file but is not one (it does not start with the "
                "Parquet magic bytes 'PAR1'). Re-export it, or rename it if it is a CSV file."
            )
        try:
            df = pd.read_parquet(path if path is not None else io.BytesIO(data))  # type: ignore[arg-type]
            if usecols is not None and all(c in df.columns for c in usecols):
                df = df[list(dict.fromkeys(usecols))]
                if isinstance(dtype, dict):
                    df = df.astype({c: t for c, t in dtype.items()
                                    if c in df.columns and not pd.api.types.is_float_dtype(df[c])})
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
    try:
        nul_at = _first_nul(path, data, compression)
    except (EOFError, OSError, zlib.error) as exc:  # a gzip stream cut short or damaged
        raise DataError(f"{label} is a truncated or corrupt gzip file ({exc}); export or upload it again",
                        param="data") from None
    if nul_at is not None:  # a NUL anywhere, not only in the first 64 KB: never part of an id
        raise DataError(f"{label} is not a text table: it contains a NUL byte (byte {nul_at:,} of its text). "
                        "Expected CSV, CSV.gz, TSV or Parquet; re-export the file", param="data")

    def _src():
        return path if path is not None else io.BytesIO(data)  # type: ignore[arg-type]

    def _read(encoding: str) -> pd.DataFrame:
        # Only an empty field is missing: ids are exact strings, so 'NA', 'None', 'null' and '#N/A'
        # are ids like any other, never pandas' guesses of a missing value.
        kw = dict(sep=sep, compression=compression, encoding=encoding, skip_blank_lines=False,
                  keep_default_na=False, na_values=[""])
        keep = None
        if usecols is not None:
            header = pd.read_csv(_src(), nrows=0, **kw)
            if not all(c in header.columns for c in usecols):
                return header  # the caller names the missing column among these
            keep = list(dict.fromkeys(usecols))
        cats = [c for c, t in dtype.items() if t == "category"] if isinstance(dtype, dict) else []
        if not cats and progress is None:
            df = pd.read_csv(_src(), dtype=str, **kw)
            return df[keep] if keep is not None else df
        # Chunks of text (never parsed as numbers: '01' and '1' stay different), each chunk's id
        # columns turned into categoricals at once and the unused columns dropped, so the peak is
        # one chunk of strings plus integer codes. Every column is read: pandas skips the
        # field-count check of a line when usecols is given, which would shift a bad line silently.
        enc = {c: _CodeBook() for c in cats}
        plain: dict[str, list[pd.Series]] = {}
        cols: list[str] | None = None
        n = 0
        for chunk in pd.read_csv(_src(), dtype=str, chunksize=TEXT_CHUNK_ROWS, **kw):
            if keep is not None:
                chunk = chunk[keep]
            cols = list(chunk.columns)
            for c in cols:
                if c in enc:
                    enc[c].add(chunk[c])
                else:
                    plain.setdefault(c, []).append(chunk[c])
            n += len(chunk)
            if progress is not None:
                progress(n)
        if cols is None:
            return pd.read_csv(_src(), nrows=0, dtype=str, **kw)
        out = {c: (enc[c].categorical() if c in enc else pd.concat(plain[c], ignore_index=True)) for c in cols}
        return pd.DataFrame(out, index=pd.RangeIndex(n))

    try:
        if encoding is not None:
            enc = _check_table_encoding(encoding)
            df = _read(enc)
        else:
            try:
                df = _read("utf-8")
            except UnicodeDecodeError:
                # decided on the whole content, never on a first block: an old single-byte
                # export (MovieLens titles) is latin-1; UTF-8 text with a stray byte is an error
                df = _read(_whole_file_encoding(label, path, data, compression))
    except UnicodeDecodeError as exc:
        raise DataError(f"{label} is not valid {exc.encoding} text (byte {exc.start} of a block); declare the "
                        "file's encoding (encoding=…)", param="encoding") from None
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
    except (ValueError, TypeError) as exc:
        raise DataError(f"could not read {label} as a delimited text table ({exc}). Check the separator "
                        "and that every line has as many fields as the header.") from exc
    # drop lines that are completely blank (e.g. trailing empty lines) but keep the numbering
    blank = df.isna().all(axis=1)
    if blank.any():
        df = df.loc[~blank]
    return df, label, True


class _CodeBook:
    """Turns chunks of a text column into one categorical: a growing table of the distinct strings
    and an int32 code per row (the strings of a chunk are freed as soon as it is coded), so a large
    upload never holds more than one chunk of Python strings."""

    def __init__(self) -> None:
        self.cats: list[np.ndarray] = []
        self.index = pd.Index([], dtype=object)
        self.codes: list[np.ndarray] = []

    def add(self, values: pd.Series) -> None:
        local, uniq = pd.factorize(values, use_na_sentinel=True)
        if len(uniq) == 0:  # a chunk of empty fields only (a header followed by blank lines)
            self.codes.append(np.full(len(local), -1, dtype=np.int32))
            return
        uniq = np.asarray(uniq, dtype=object)
        glob = self.index.get_indexer(uniq) if len(self.index) else np.full(len(uniq), -1)
        new = glob < 0
        if new.any():
            glob[new] = len(self.index) + np.arange(int(new.sum()))
            self.index = self.index.append(pd.Index(uniq[new], dtype=object))
        glob = glob.astype(np.int32)
        self.codes.append(np.where(local >= 0, glob[np.maximum(local, 0)], -1).astype(np.int32))

    def categorical(self) -> pd.Categorical:
        codes = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int32)
        return pd.Categorical.from_codes(codes, categories=pd.Index(self.index, dtype=str))


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


def _cat_map(s: pd.Series, fn) -> pd.Series:
    """Apply a string function to a categorical column through its categories only (a 2M-row upload
    has a few thousand distinct ids: the per-row work is integer codes, never Python strings)."""
    cats = pd.Series(s.cat.categories.astype(str))
    new = fn(cats)
    codes, uniq = pd.factorize(new, use_na_sentinel=True)
    row_codes = s.cat.codes.to_numpy()
    # int32 per row (not int64): one upload row costs 4 bytes here
    out = np.where(row_codes >= 0, codes.astype(np.int32)[np.maximum(row_codes, 0)], np.int32(-1))
    return pd.Series(pd.Categorical.from_codes(out, categories=pd.Index(uniq).astype(str)), index=s.index)


def _as_id_strings(s: pd.Series) -> pd.Series:
    """Identifiers as the exact strings of the file (outer whitespace removed): ``1``, ``01``,
    ``1.0`` and ``1e0`` are four different ids. Only a float column of a binary format
    (Parquet), which has no text form, is written without the '.0' of its integral values.
    Returns a categorical Series (memory: one code per row)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return _cat_map(s, lambda c: c.str.strip())
    if pd.api.types.is_float_dtype(s):
        vals = s.to_numpy()
        if np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)):
            return pd.Series(vals.astype(np.int64).astype(str), index=s.index).astype("category")
    return s.astype(str).str.strip().astype("category")


def _is_missing(s: pd.Series) -> pd.Series:
    miss = s.isna()
    if isinstance(s.dtype, pd.CategoricalDtype):
        blank = np.asarray(pd.Series(s.cat.categories.astype(str)).str.strip().eq(""), dtype=bool)
        codes = s.cat.codes.to_numpy()
        return miss | pd.Series((codes >= 0) & blank[np.maximum(codes, 0)], index=s.index)
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
    if isinstance(values.dtype, pd.CategoricalDtype):
        return _cat_map(values, lambda c: derive_entity(c, transform).astype(str))
    s = values.astype(str).str.strip()
    if transform is None:
        return s
    if transform in ("first_char", "first_digit"):
        first = s.str[:1]
        return first.where(first.str.isdigit(), "other")
    m = re.fullmatch(r"prefix:(\d{1,6})", str(transform), flags=re.ASCII)
    if m and 1 <= int(m.group(1)) <= MAX_PREFIX:
        return s.str[: int(m.group(1))]
    raise ConfigError(f"unknown entity transform {transform!r}; accepted: {_TRANSFORMS_HELP}")


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
    """One column, one role (user_col = item_col made every user its own item)."""
    roles = [("user_col", user_col), ("item_col", item_col), ("entity_col", entity_col),
             ("entity_from", entity_from), ("value_col", value_col)]
    seen: dict[str, str] = {}
    for param, col in roles:
        if col is None:
            continue
        if str(col) in seen:
            raise ConfigError(f"{param} and {seen[str(col)]} both name the column {col!r}; each role needs its own "
                              "column (users, items, the entity and the values are different things)", param=param)
        seen[str(col)] = param


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
            raise ConfigError(
                "count data needs a declared public upper bound per value: pass value_max (e.g. the "
                "most events one user can plausibly have for one item). It must not be read off the data.",
                param="value_max")
        value_max = 5.0 if value_kind == "ratings" else 1.0
    try:
        value_max = float(value_max)
    except (TypeError, ValueError):
        raise ConfigError(f"value_max must be a number, got {value_max!r}", param="value_max") from None
    if not (np.isfinite(value_max) and 0 < value_max <= VALUE_MAX_LIMIT):
        raise ConfigError(f"value_max must be a positive number ≤ {VALUE_MAX_LIMIT:g}, got {value_max!r}",
                          param="value_max")
    if duplicates not in ("last", "mean", "sum", "error"):
        raise ConfigError(f"duplicates must be 'last', 'mean', 'sum' or 'error'; got {duplicates!r}",
                          param="duplicates")
    if over_max not in (None, "error", "note"):
        raise ConfigError(f"over_max must be 'error' or 'note'; got {over_max!r}", param="over_max")
    return value_max


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
                f"{needed[col]}; fill the gaps, or leave such rows out with drop_missing.",
                param="drop_missing"
            )

    return df


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


def _values(df: pd.DataFrame, label: str, from_text: bool | int, value_col: str | None, value_kind: str,
            value_max: float, over_max: str | None, notes: list[str]) -> np.ndarray:
    """The value of every row as float64 (1 per row for an event log), checked: numeric, finite, ≥ 0,
    and within the declared bound.

    Values above the bound follow one rule in every loader, set by the value kind: a
    rating above its scale's maximum is an error (the data or the declared scale is wrong); a count
    above its bound is kept and reported in a note, and every DP mechanism clips it to the bound.
    ``over_max`` overrides the rule ("error" or "note")."""
    if value_col is not None:
        raw = df[value_col]
        vals = _numeric(raw)
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
            rule = over_max or ("error" if value_kind == "ratings" else "note")
            if rule == "error":
                raise DataError(
                    f"{_row_ref(label, df.index[i], from_text)}: column '{value_col}' holds "
                    f"{raw.iloc[i]!r}, above the declared maximum value_max={value_max:g} "
                    f"({int(over.sum())} such rows). A {value_kind[:-1]} above its scale's maximum is "
                    "a mistake in the data or in the declared scale: declare the true maximum (value_max), "
                    "declare value_kind counts if these are counts, or fix those rows.", param="value_max"
                )
            notes.append(
                f"{int(over.sum())} values ({over.mean():.2%}) exceed the declared public bound "
                f"{value_max:g}; they are kept as is here and clipped to it by the DP mechanisms"
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
            "user a single entity, or derive the entity from an attribute that is constant per user."
        )


def _merge_duplicates(t: pd.DataFrame, label: str, from_text: bool | int, value_kind: str, duplicates: str,
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
        how = fixed_duplicate_rule(value_kind) or duplicates
        if how == "error":
            r = t.loc[dup].iloc[0]
            raise DataError(
                f"{_row_ref(label, r['row'], from_text)}: user '{r['u']}' rates item '{r['i']}' more "
                f"than once ({n_dup} repeated rows). Remove the repeats or pass duplicates='last' or 'mean'.",
                param="duplicates"
            )
        agg = {"v": how if how != "last" else "last", "e": "first", "row": "first"}
        if "name" in t:
            agg["name"] = "first"
        t = t.groupby(["u", "i"], sort=False, as_index=False, observed=True).agg(agg)
        notes.append(f"merged {n_dup} repeated (user, item) rows: {DUPLICATE_WORDS[how]}")

    return t


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
                    declared: Sequence[str] | None = None) -> tuple[pd.DataFrame, list[str] | None]:
    """Entities are the declared federation.

    With a ``declared`` list (public: an entity file, a hospital table, a generator's list) the
    entities are exactly its names: rows of other entities are dropped with a note, a declared entity
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
            notes.append(f"dropped {int((~known).sum())} rows of {others.nunique()} entities that are not in the "
                         f"declared entity list ({shown}{' …' if others.nunique() > 6 else ''})")
            t = t.loc[known]
        if len(t) == 0:
            raise DataError(f"{label}: no row belongs to a declared entity; check the entity list (one name per "
                            "line, as written in the data's entity column)", param="entities")
    if exclude_entities:
        excl = [str(e).strip() for e in exclude_entities]
        unknown = [e for e in excl if e not in set(ents)]
        if unknown:
            shown = ", ".join(sorted(map(str, ents))[:12])
            raise ConfigError(f"exclude_entities names {', '.join(map(repr, unknown))}, not an entity of {label}; "
                              f"entities: {shown}", param="exclude_entities")
        drop = t["e"].isin(excl).to_numpy()
        t = t.loc[~drop]
        notes.append(f"left out {len(excl)} declared entities: {', '.join(excl[:8])}{' …' if len(excl) > 8 else ''}")
        ents = [e for e in ents if e not in set(excl)] if declared is not None else _present(t["e"])
    if len(ents) < 2:
        only = ents[0] if len(ents) else "?"
        raise DataError(
            f"{label}: only one entity ('{only}') — federation needs at least two. Check the entity column, "
            "or use a finer key (e.g. entity_transform='prefix:2' instead of 'prefix:1').",
            param="entity_col"
        )
    if len(t) == 0:
        raise DataError(f"{label}: every row belongs to an excluded entity", param="exclude_entities")
    if declared is not None:
        empty = sorted(set(ents) - set(_present(t["e"])))
        if empty:
            notes.append(f"{len(empty)} declared entities have no user and take part with an all-zero contribution: "
                         f"{', '.join(empty[:8])}{' …' if len(empty) > 8 else ''}")
    return t, (ents if declared is not None else None)


def read_item_list(source: Source | Sequence[str], *, filename: str | None = None,
                   encoding: str | None = None) -> tuple[list[str], list[str] | None]:
    """A declared item catalogue (:func:`dpfed_core.data.inputs.read_list`): one item per line taken
    whole, or CSV ``id,name`` under a recognised header. Returns (ids, names|None)."""
    lf = read_list(source, what="item list", param="items", filename=filename, encoding=encoding)
    return lf.ids, lf.names


def _as_list_file(items: Any, *, what: str, param: str, encoding: str | None = None) -> ListFile | None:
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
    return read_list(items, what=what, param=param, encoding=encoding)


def _apply_catalogue(t: pd.DataFrame, label: str, items: ListFile | None,
                     notes: list[str], unknown: str = "drop") -> tuple[pd.DataFrame, list[str] | None, list[str] | None]:
    """Restrict rows to a declared catalogue. Rows of undeclared items are dropped with a note
    (``unknown="drop"``) or refused (``"error"``); declared items without a row are reported."""
    if items is None:
        return t, None, None
    ids, names = items.ids, items.names
    notes.extend(items.notes)
    known = t["i"].isin(ids).to_numpy()
    if not known.all():
        bad = t.loc[~known, "i"].astype(str)
        if unknown == "error":
            raise DataError(f"{label}: item {bad.iloc[0]!r} is not in the declared catalogue "
                            f"({bad.nunique()} such items)", param="items")
        shown = ", ".join(repr(x) for x in bad.unique()[:5])
        notes.append(f"dropped {int((~known).sum())} rows of {bad.nunique()} items that are not in the declared "
                     f"item catalogue ({shown}{' …' if bad.nunique() > 5 else ''})")
        t = t.loc[known]
        if len(t) == 0:
            raise DataError(f"{label}: no row names an item of the declared catalogue; check the items file "
                            "(one item per line, as written in the data)", param="items")
    n_used = t["i"].nunique()
    if n_used < len(ids):
        notes.append(f"{len(ids) - n_used} of the {len(ids)} declared items have no row in the data (empty columns)")
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
        return rank[codes], uniq[order].astype(str)

    ucode, uids = _codes(t["u"])
    if catalogue is not None:
        pos = {x: j for j, x in enumerate(catalogue)}
        icats, iuniq = _used(t["i"])
        icode = np.asarray([pos[str(x)] for x in iuniq], dtype=np.int32)[icats]
        iids = np.asarray(catalogue, dtype=str)
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
    if catalogue is not None and catalogue_names is not None:
        inames = np.asarray(catalogue_names, dtype=str)
    elif "name" in t:
        got = pd.Series(t["name"].astype(str).to_numpy()).groupby(icode).first()
        inames = iids.copy()
        inames[got.index.to_numpy()] = got.to_numpy().astype(str)
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
        item_source="declared" if catalogue is not None else "data",
        entities=entities,
        entity_source="declared" if entities is not None else "data",
        entities_accepted=entities is not None or bool(entities_accepted),
        copy=False,  # X is this function's own, built in the dataset's row order
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
    duplicates: str,
    over_max: str | None,
    drop_missing: bool,
    name: str,
    exclude_entities: Sequence[str] = (),
    items: ListFile | None = None,
    unknown_items: str = "drop",
    notes: list[str] | None = None,
    entities: Sequence[str] | None = None,
    entities_from_data: bool = False,
    item_features: Any = None,
) -> FederatedDataset:
    """Validate a long table and build the dataset (see :func:`load_long_table` for the rules)."""
    notes = list(notes or [])
    value_kind, why = infer_value_kind(value_kind, value_col)
    if why != "declared":
        notes.append(f"values read as {value_kind} ({why}); declare value_kind to change it")
    value_max = _check_options(
        entity_col=entity_col, entity_from=entity_from, entity_transform=entity_transform, value_col=value_col,
        value_kind=value_kind, value_max=value_max, duplicates=duplicates, over_max=over_max)
    _check_distinct_columns(user_col, item_col, value_col, entity_col, entity_from)
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
    users = _as_id_strings(df[user_col])
    items_col = _as_id_strings(df[item_col])
    ent = derive_entity(df[ent_src], entity_transform)  # type: ignore[index]
    # .array keeps categoricals as codes (to_numpy would make one Python string per row)
    t = pd.DataFrame({"u": users.array, "i": items_col.array, "v": v, "e": ent.array,
                      "row": df.index.to_numpy()})
    if item_name_col is not None:
        nm = df[item_name_col]
        t["name"] = (_cat_map(nm, lambda c: c.str.strip()) if isinstance(nm.dtype, pd.CategoricalDtype)
                     else nm.astype(str).str.strip()).to_numpy()

    _check_disjoint_users(t, label, from_text)
    t = _merge_duplicates(t, label, from_text, value_kind, duplicates, notes)
    t = _drop_zeros(t, label, value_kind, notes)
    t, ent_list = _apply_entities(t, label, exclude_entities, notes, entities)
    if ent_list is None and entities_from_data:
        notes.append("the entity list is read from the data (accepted with entities_from_data): membership of an "
                     "entity is not protected")
    t, catalogue, cat_names = _apply_catalogue(t, label, items, notes, unknown_items)
    ds = _assemble(t, value_kind=value_kind, value_max=value_max, name=name, notes=notes,
                   catalogue=catalogue, catalogue_names=cat_names, entities=ent_list,
                   entities_accepted=entities_from_data)
    return attach_item_features(ds, item_features)


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
    duplicates: Literal["last", "mean", "error"] = "last",
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
        ``None`` (as is), ``"first_char"``/``"first_digit"`` (first character of e.g. a ZIP code;
        non-digit first characters are grouped into one entity ``"other"``), ``"prefix:N"``.
    item_name_col : column with readable item names (the first name seen per item is kept).
    value_kind : ``"ratings"`` (explicit scale), ``"counts"`` (event counts) or ``"implicit"`` (0/1).
        When omitted it is inferred from the value column's *name* (never from its values) and the
        notes say so; an unrecognised name is an error asking for it.
    value_max : the declared public upper bound of one value (defaults: 5 for ratings, 1 for
        implicit; required for counts). Above it: ratings are an error, counts are kept with a note
        (DP mechanisms clip them) — the same rule as :func:`load_eicu`. ``over_max`` overrides it.
    duplicates : repeated (user, item) rows of ratings keep the ``"last"`` row in file order, their
        ``"mean"``, or raise (``"error"``). Counts are always summed, implicit rows collapse to 1.
    exclude_entities : entities the data owner declares out of the federation. Every other entity
        takes part whatever its size (no rule on a true count decides who takes part).
    items : a declared item catalogue (list of ids, or a file: one id per line, or CSV id[,name]).
        The columns are then exactly these items; rows of other items are dropped with a note. Without
        it the catalogue is the data's items, marked ``item_source="data"``: a DP run then selects its
        catalogue by DP partition selection, charged to the ledger.
    drop_missing : skip rows with an empty user/item/value/entity instead of raising.
    sep : field separator of a text file (sniffed from the header line when omitted).
    entities : the declared federation (a public list: a file with one entity per line, or a list of
        names). Rows of other entities are dropped with a note; a declared entity without
        rows takes part with 0 users. Without it the entity list is read from the data
        (``entity_source="data"``): a DP run is then refused unless ``entities_from_data=True``
        accepts it (membership of an entity is then not protected).
    item_features : a CSV of public item features (item id + numeric or category columns), attached as
        ``dataset.item_features``.
    encoding : the text encoding of the file; without it the whole file is checked: UTF-8, or
        latin-1 when it holds no UTF-8 multi-byte sequence, else an error asking for it.

    Rows with value 0 are dropped with a note (see :func:`_drop_zeros` for why).

    Returns
    -------
    FederatedDataset with X of shape (n_users, n_items); rows sorted by entity.
    """
    _reject_removed(removed, "load_long_table")
    # every option is checked before the (possibly large) table is read
    _check_options(entity_col=entity_col, entity_from=entity_from, entity_transform=entity_transform,
                   value_col=value_col, value_kind=infer_value_kind(value_kind, value_col)[0], value_max=value_max,
                   duplicates=duplicates, over_max=over_max)
    _check_distinct_columns(user_col, item_col, value_col, entity_col, entity_from)
    declared = _as_list_file(items, what="item list", param="items", encoding=encoding)
    ent_list = _as_list_file(entities, what="entity list", param="entities", encoding=encoding)
    features = _feature_table(item_features, encoding=encoding)
    cols, dtypes = _id_columns(user_col, item_col, entity_col, entity_from, item_name_col, value_col)
    df, label, from_text = read_table(source, filename=filename, sep=sep, what="long table",
                                      usecols=cols, dtype=dtypes, progress=progress, encoding=encoding)
    try:
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
            notes=ent_list.notes if ent_list is not None else None,
            entities=ent_list.ids if ent_list is not None else None,
            entities_from_data=entities_from_data,
            item_features=features,
        )
    finally:
        del df
        release_freed_memory()


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
    exclude_entities: Sequence[str] = (),
    name: str | None = None,
    entities: Source | Sequence[str] | None = None,
    item_features: Any = None,
    **removed: Any,
) -> FederatedDataset:
    """Load a MovieLens 100K or 1M directory (format recognised from its files).

    100K: ``u.data`` (user, item, rating, time; tab-separated), ``u.user`` (id|age|gender|
    occupation|zip), ``u.item`` (id|title|…, latin-1). 1M: ``ratings.dat``, ``users.dat``
    (id::gender::age::occupation::zip), ``movies.dat`` (id::title::genres), ``::``-separated.

    Entities (``federation``): ``"zip"`` — first digit of the ZIP code, as the paper does ("ZIP 0" …
    "ZIP 9"; ZIP codes not starting with a digit, e.g. Canadian postcodes, form "ZIP other");
    ``"gender"``; ``"occupation"``; ``"age"`` (the 1M age bands; 100K ages are binned the same way).
    Items are named by title. value_kind = "ratings", value_max = 5 (the 1–5 star scale).

    Public catalogue and entity list: the columns are every movie of the public item file
    (``u.item``: all 1682 movies of 100K, rated or not), in its order; entities are every value of the
    federation key present in the users file, whatever their size (``exclude_entities`` declares some
    out). Removing a user changes no message shape and no item list.

    Declared entity list, public metadata rather than the users file: ``zip`` — "ZIP 0" …
    "ZIP 9" and "ZIP other"; ``occupation`` — ``u.occupation`` (100K) or the 1M README's 21 codes;
    ``gender`` — F, M; ``age`` — the seven age bands. ``entities`` (a list or a file) replaces it.
    Public item features: the genres and the release year / decade of ``u.item`` (``movies.dat``),
    plus ``item_features`` (a file) if given.
    """
    _reject_removed(removed, "load_movielens")
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"MovieLens directory not found: {root}")
    if federation not in ("zip", "gender", "occupation", "age"):
        raise ConfigError(f"federation must be 'zip', 'gender', 'occupation' or 'age'; got {federation!r}",
                          param="federation")
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
    item_ids = items["item"].fillna("").str.strip()
    if (item_ids == "").any() or item_ids.duplicated().any():
        bad = item_ids[(item_ids == "") | item_ids.duplicated()].iloc[0]
        raise DataError(f"MovieLens item file in {root} has an empty or repeated movie id {bad!r}.")
    titles = items["title"].fillna("").str.strip()
    catalogue = (item_ids.tolist(), titles.where(titles != "", item_ids).tolist())
    if entities is not None:
        declared_entities = read_list(entities, what="entity list", param="entities").ids
    else:
        declared_entities = _movielens_entities(root, version, federation)
    derived = _movielens_features(root, version, item_ids.tolist(), items)
    df = pd.DataFrame(
        {"user": ratings["user"], "item": ratings["item"], "rating": ratings["rating"], "entity": ent}
    )  # fmt: skip
    ds = _build(
        df, str(rfile), 1,  # header-less file: data row i + 1 is line i + 1
        user_col="user", item_col="item", value_col="rating", entity_col="entity",
        entity_from=None, entity_transform=None, item_name_col=None,
        value_kind="ratings", value_max=5.0, duplicates="last",
        over_max="error", drop_missing=False, exclude_entities=exclude_entities,
        items=_as_list_file(catalogue, what="item list", param="items"), unknown_items="error",
        name=name or f"MovieLens {version} ({federation} federation)", entities=declared_entities,
    )  # fmt: skip
    return attach_item_features(ds, item_features, derived=derived)


def _movielens_entities(root: Path, version: str, federation: str) -> list[str]:
    """The public list of a MovieLens federation key's values (never read off the users file)."""
    if federation == "zip":
        return [f"ZIP {d}" for d in range(10)] + ["ZIP other"]
    if federation == "gender":
        return ["F", "M"]
    if federation == "age":
        return list(_ML1M_AGES.values())
    if version == "100K":
        occ = root / "u.occupation"
        if not occ.is_file():
            raise DataError(f"{occ} is missing: it is the public list of occupations (the entities of "
                            "federation occupation); restore it or declare the entities (entities=FILE)",
                            param="entities")
        return read_list(occ, what="occupation list", param="entities").ids
    return list(_ML1M_OCCUPATIONS)


def _movielens_features(root: Path, version: str, item_ids: list[str], items: pd.DataFrame):
    """Genres and release year of every movie, from the public item file."""
    if version == "100K":
        raw = pd.read_csv(root / "u.item", sep="|", header=None, dtype=str, encoding="latin-1", quoting=3,
                          keep_default_na=False)
        genre_file = root / "u.genre"
        genres = ([ln.split("|")[0] for ln in genre_file.read_text(encoding="latin-1").splitlines() if ln.strip()]
                  if genre_file.is_file() else [f"genre {j}" for j in range(raw.shape[1] - 5)])
        flags = raw.iloc[:, 5:5 + len(genres)].apply(pd.to_numeric, errors="coerce").fillna(0).to_numpy()
        if flags.shape[1] != len(genres):
            return None
        return movielens_item_features(item_ids, flags, genres, raw.iloc[:, 2].tolist())
    path = root / "movies.dat"
    raw = pd.read_csv(io.BytesIO(path.read_bytes().replace(b"::", b"\x1f")), sep="\x1f", header=None, dtype=str,
                      encoding="latin-1", quoting=3, keep_default_na=False)
    if raw.shape[1] < 3:
        return None
    lists = raw.iloc[:, 2].str.split("|")
    genres = sorted({g for gl in lists for g in gl if g})
    flags = np.array([[g in set(gl) for g in genres] for gl in lists], dtype=np.float64)
    return movielens_item_features(item_ids, flags, genres, raw.iloc[:, 1].tolist())


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
    import urllib.error  # deferred: only a download needs the HTTP client (and its ssl import)
    import urllib.request

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
    """``stem.csv[.gz]`` in ``root``, matched without regard to case (eICU files are ``infusionDrug.csv.gz``,
    users type ``infusiondrug``)."""
    for cand in (f"{stem}.csv.gz", f"{stem}.csv", f"{stem.upper()}.csv.gz", f"{stem.upper()}.csv"):
        if (root / cand).is_file():
            return root / cand
    low = stem.lower()
    for p in sorted(root.iterdir()) if root.is_dir() else []:
        if p.is_file() and p.name.lower() in (f"{low}.csv.gz", f"{low}.csv"):
            return p
    return None


def _table_stems(root: Path) -> list[str]:
    return sorted({p.name[: -len(".csv.gz")] if p.name.lower().endswith(".csv.gz") else p.name[: -len(".csv")]
                   for p in root.iterdir() if p.is_file() and p.name.lower().endswith((".csv", ".csv.gz"))})


def _read_eicu_table(root: Path, stem: str, cols: list[str], why: str,
                     flag: str | None = None) -> tuple[pd.DataFrame, str]:
    path = _find_table(root, stem)
    if path is None:
        stems = [t for t in _table_stems(root) if t.lower() not in ("patient", "hospital")]
        found = ", ".join(sorted(p.name for p in root.iterdir())[:20]) or "nothing"
        hint = (f" Choose the event table(s) with events=<table> — tables here: {', '.join(stems)}." if flag and stems
                else " Choose another event table with events=<table>." if flag else "")
        raise DataError(
            f"eICU directory {root} has no {stem}.csv or {stem}.csv.gz ({why}). Found: {found}.{hint}",
            param=flag,
        )
    header, label, _ = read_table(path, what=f"eICU {stem}", usecols=["\x00none"])  # header only
    _check_columns(header, label, {c: f"needed from the {stem} table" for c in cols})
    df, label, _ = read_table(path, what=f"eICU {stem}", usecols=cols, dtype={c: "category" for c in cols})
    return df, label


def _event_name_column(root: Path, table: str, explicit: str | None) -> str:
    """The column naming the event of an eICU table: given as ``table:column``, known for the common
    tables, else the one column whose name ends in ``name`` or ``string`` (drugname, labname,
    treatmentstring, …)."""
    if explicit:
        return explicit
    if table.lower() in EICU_EVENT_TABLES:
        return EICU_EVENT_TABLES[table.lower()]
    path = _find_table(root, table)
    if path is None:
        return ""  # reported by _read_eicu_table
    header, label, _ = read_table(path, what=f"eICU {table}", usecols=["\x00none"])
    cols = [str(c) for c in header.columns]
    cands = [c for c in cols if c.lower().endswith(("name", "string")) and c.lower() != "patientunitstayid"]
    if len(cands) != 1:
        raise ConfigError(
            f"eICU table {path.name}: cannot tell which column names the event "
            f"({'candidates: ' + ', '.join(cands) if cands else 'no column ending in name/string'}); give it as "
            f"events={table}:<column> (columns: {', '.join(cols[:20])})", param="events")
    return cands[0]


def parse_event_tables(event_table: str | Sequence[str]) -> list[tuple[str, str | None]]:
    """``"medication"``, ``"medication,infusionDrug"``, ``["lab", "infusionDrug:drugname"]`` → [(table, column)]."""
    parts = [t.strip() for t in event_table.split(",")] if isinstance(event_table, str) else [str(t).strip() for t in event_table]
    out = []
    for t in parts:
        if not t:
            continue
        tb, _, col = t.partition(":")
        if not re.fullmatch(r"[A-Za-z0-9_]+", tb.strip()):
            raise ConfigError(f"event table {t!r} is not a table name (letters, digits, _)", param="events")
        out.append((tb.strip(), col.strip() or None))
    if not out:
        raise ConfigError("give at least one eICU event table, e.g. medication, lab, treatment, diagnosis or "
                          "infusionDrug", param="events")
    return out


def load_eicu(
    path: str | os.PathLike,
    event_table: str | Sequence[str] = "medication",
    entity: Literal["hospitalid", "hospital", "region"] = "hospitalid",
    *,
    value_max: float | None = None,
    drop_cancelled: bool = True,
    exclude_entities: Sequence[str] = (),
    items: Source | Sequence[str] | None = None,
    name: str | None = None,
    entities: Source | Sequence[str] | None = None,
    entities_from_data: bool = False,
    item_features: Any = None,
    **removed: Any,
) -> FederatedDataset:
    """Load the eICU database (or its open demo): unit stays × events, federated by hospital/region.

    Declared federation: the hospital table's hospitals (``"hospital <id>"``) or its
    regions, public metadata — never the hospitals that happen to have stays. A hospital without a
    stay takes part with 0 users. ``entities`` (a file or list; bare hospital ids accepted) replaces
    it; without a hospital table the list is read from the data (``entities_from_data``).
    Public item features from a declared catalogue: the ``|`` hierarchy of treatment / diagnosis
    names and the tokens of normalised drug names; ``item_features`` adds a file.

    Reads ``patient.csv[.gz]`` (patientunitstayid, hospitalid), ``hospital.csv[.gz]`` (hospitalid,
    region; only for ``entity="region"``) and the event table(s): any eICU table with a
    ``patientunitstayid`` and a column naming the event — ``medication`` (drugname), ``treatment``
    (treatmentstring), ``lab`` (labname), ``diagnosis`` (diagnosisstring), ``infusionDrug``
    (drugname), … (the name column is found by its name ending in ``name``/``string``, or given as
    ``"table:column"``).

    One row per unit stay (``patientunitstayid``); value = number of events of that item in that
    stay; ``value_kind="counts"`` with the declared public bound :data:`EICU_VALUE_MAX` of the table
    (the largest one when several tables are combined; :data:`EICU_DEFAULT_VALUE_MAX` for other
    tables) unless ``value_max`` is given. Counts above the bound are kept with a note and clipped by
    the DP mechanisms — the same rule as counts in :func:`load_long_table`.

    Entities are every hospital (or region) with stays in the patient table, whatever its size
    (``exclude_entities`` declares some out). Items: a declared formulary ``items`` (one name per
    line; drug names are normalised like the data's) fixes the columns, else the data's item names,
    marked ``item_source="data"`` so that a DP run selects its catalogue by DP partition selection.
    No item is dropped for being rare (a rule on a true count).

    Drug names are normalised (:func:`normalize_drug_name`); medication rows without a drug name get
    the name most often recorded with the same ``drughiclseqno`` code; cancelled orders are dropped
    (``drop_cancelled``). With several event tables, item names are prefixed with the table.
    """
    _reject_removed(removed, "load_eicu")
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"eICU directory not found: {root}")
    tables = parse_event_tables(event_table)
    if entity == "hospital":
        entity = "hospitalid"
    if entity not in ("hospitalid", "region"):
        raise ConfigError(f"entity must be 'hospitalid' or 'region'; got {entity!r}", param="entity")
    notes: list[str] = []

    patient, plabel = _read_eicu_table(root, "patient", ["patientunitstayid", "hospitalid"], "one row per unit stay")
    miss = _is_missing(patient["patientunitstayid"]) | _is_missing(patient["hospitalid"])
    if miss.any():
        i = miss.index[miss.to_numpy()][0]
        raise DataError(
            f"{_row_ref(plabel, i, True)}: patientunitstayid or hospitalid is empty; every unit "
            "stay needs both."
        )
    stay_ids = patient["patientunitstayid"].astype(str).str.strip()
    if stay_ids.duplicated().any():
        i = stay_ids.index[stay_ids.duplicated().to_numpy()][0]
        raise DataError(
            f"{_row_ref(plabel, i, True)}: unit stay {stay_ids.loc[i]} is listed twice in the patient "
            "table; patientunitstayid must be unique."
        )
    hosp = patient["hospitalid"].astype(str).str.strip()
    declared_entities = _eicu_entities(root, entity, entities, notes)
    if entity == "region":
        hospital, hlabel = _read_eicu_table(root, "hospital", ["hospitalid", "region"], "needed for entity='region'")
        hospital = hospital.astype(str)
        region = hospital.assign(hospitalid=hospital["hospitalid"].str.strip()).drop_duplicates("hospitalid")
        region = region.set_index("hospitalid")["region"].str.strip().replace("nan", "")
        ent = hosp.map(region)
        n_unknown = int(ent.isna().sum() + ent.eq("").sum())
        ent = ent.fillna("Unknown region").replace("", "Unknown region")
        if n_unknown:
            notes.append(f"{n_unknown} unit stays are in hospitals without a region: entity 'Unknown region'")
    else:
        ent = "hospital " + hosp
    stay_entity = pd.Series(ent.to_numpy(), index=stay_ids.to_numpy())

    parts = []
    bounds = []
    names_cols = []
    for tb, col_given in tables:
        col = _event_name_column(root, tb, col_given)
        extra = [c for c in ("drugordercancelled", "drughiclseqno") if tb.lower() == "medication"]
        path_tb = _find_table(root, tb)
        cols = ["patientunitstayid", col]
        if path_tb is not None and extra:
            header, _, _ = read_table(path_tb, what=f"eICU {tb}", usecols=["\x00none"])
            cols += [c for c in extra if c in header.columns]
        ev, elabel = _read_eicu_table(root, tb, cols, f"the {tb} events", flag="events")
        n0 = len(ev)
        if tb.lower() == "medication" and drop_cancelled and "drugordercancelled" in ev.columns:
            cancelled = _cat_map(ev["drugordercancelled"], lambda c: c.str.strip().str.lower()).astype(str).eq("yes")
            if cancelled.any():
                notes.append(f"dropped {int(cancelled.sum())} cancelled medication orders")
                ev = ev.loc[~cancelled.to_numpy()]
        raw_names = ev[col].astype(str).where(ev[col].notna())
        names = raw_names.str.strip()
        is_drug = col.lower() == "drugname"
        if tb.lower() == "medication" and "drughiclseqno" in ev.columns:
            # eICU leaves drugname empty on many rows that carry the drug's HICL code: recover the
            # name most often recorded with that code elsewhere in the table
            code = ev["drughiclseqno"].astype(str).where(ev["drughiclseqno"].notna()).str.strip()
            norm = normalize_drug_names(names.where(names.fillna("").str.len() > 0))
            named = pd.DataFrame({"code": code, "name": norm}).dropna()
            best = named.groupby(["code", "name"]).size().reset_index(name="n")
            best = best.sort_values(["code", "n", "name"], ascending=[True, False, True]).drop_duplicates("code")
            filled = norm.isna() & code.notna()
            norm = norm.where(~filled, code.map(best.set_index("code")["name"]))
            n_filled = int((filled & norm.notna()).sum())
            if n_filled:
                notes.append(f"named {n_filled} medication rows without a drug name from their HICL code")
            names = norm
        elif is_drug:
            names = normalize_drug_names(names.where(names.fillna("").str.len() > 0))
        else:
            names = names.str.replace(r"\s+", " ", regex=True)
        names = names.where(names.fillna("").str.len() > 0)
        if names.isna().any():
            notes.append(f"dropped {int(names.isna().sum())} {tb} rows without a {col}")
        stays = ev["patientunitstayid"].astype(str).where(ev["patientunitstayid"].notna()).str.strip()
        keep = names.notna() & stays.notna()
        known = stays.isin(stay_entity.index)
        if (keep & ~known).any():
            notes.append(f"dropped {int((keep & ~known).sum())} {tb} rows of unit stays absent from the patient table")
        keep &= known
        item = names[keep] if len(tables) == 1 else tb + ": " + names[keep]
        parts.append(pd.DataFrame({"stay": stays[keep].to_numpy(), "item": item.to_numpy()}))
        if not keep.any():
            raise DataError(f"{elabel}: none of its {n0} rows names an event of a known unit stay")
        bounds.append(EICU_VALUE_MAX.get(tb.lower()))
        names_cols.append((tb, is_drug))

    declared = None
    derived = None
    if items is not None:
        lf = read_list(items, what="item list", param="items")
        ids = lf.ids
        drugs = len(names_cols) == 1 and names_cols[0][1]
        if drugs:
            ids = normalize_drug_names(pd.Series(ids)).tolist()  # a formulary is matched like the data
        declared = read_list(ids, what="item list", param="items")
        declared.notes = lf.notes + declared.notes
        # public features of the declared names only (names read off the rows would not be public)
        if any("|" in x for x in declared.ids):
            derived = hierarchy_features(declared.ids, declared.ids)
        elif drugs:
            derived = drug_token_features(declared.ids, declared.ids)
    events = pd.concat(parts, ignore_index=True)
    counts = events.groupby(["stay", "item"], sort=False).size().reset_index(name="count")
    counts["entity"] = counts["stay"].map(stay_entity).to_numpy()
    if value_max is not None:
        vmax = value_max
    elif all(b is not None for b in bounds):
        vmax = max(bounds)
    else:
        vmax = max(b if b is not None else EICU_DEFAULT_VALUE_MAX for b in bounds)
        other = [tb for (tb, _), b in zip(tables, bounds) if b is None]
        notes.append(f"table(s) {', '.join(other)} have no declared bound: the default public bound "
                     f"{EICU_DEFAULT_VALUE_MAX:g} events per stay and item is used (set it with value_max)")
    ent_label = "hospital" if entity == "hospitalid" else "region"
    tnames = "+".join(tb for tb, _ in tables)
    ds = _build(
        counts, f"eICU {tnames} table", False,
        user_col="stay", item_col="item", value_col="count", entity_col="entity",
        entity_from=None, entity_transform=None, item_name_col=None,
        value_kind="counts", value_max=vmax, duplicates="last",
        over_max="note", drop_missing=False, exclude_entities=exclude_entities, items=declared,
        name=name or f"eICU {root.name} ({tnames} by {ent_label})", notes=notes,
        entities=declared_entities, entities_from_data=entities_from_data,
    )  # fmt: skip
    return attach_item_features(ds, item_features, derived=derived)


def _plain_str(s: pd.Series) -> pd.Series:
    """Stripped strings of any column (categorical or text), missing values as ""."""
    o = s.astype(object)
    return o.where(o.notna(), "").astype(str).str.strip()


def _eicu_entities(root: Path, entity: str, entities: Any, notes: list[str]) -> list[str] | None:
    """The declared entity list of an eICU federation: ``entities`` if given (bare hospital ids become
    "hospital <id>"), else the hospital table's hospitals or regions; None without a hospital table."""
    if entities is not None:
        ids = read_list(entities, what="entity list", param="entities").ids
        if entity == "hospitalid":
            ids = [f"hospital {x}" if re.fullmatch(r"\d+", x) else x for x in ids]
        return ids
    if _find_table(root, "hospital") is None:
        if entity == "region":
            return None  # reported by the region lookup itself
        notes.append("no hospital table: the entity list is the hospitals found in the patient table (read from "
                     "the data); declare it with entities=FILE")
        return None
    hospital, _ = _read_eicu_table(root, "hospital", ["hospitalid"] + (["region"] if entity == "region" else []),
                                   "the public list of hospitals")
    hid = _plain_str(hospital["hospitalid"])
    if entity == "hospitalid":
        return [f"hospital {x}" for x in dict.fromkeys(hid[hid != ""])]
    reg = _plain_str(hospital["region"])
    out = list(dict.fromkeys(r for r in reg if r))
    if (reg == "").any():
        out.append("Unknown region")
    return out


# ====================================================================== samples & dispatcher
def sample_catalogue(key: str) -> list[str]:
    """A generated sample's item catalogue: public by construction (the generator's item list in
    ``sample_data/generate.py``), never read off the sample file."""
    if key == "clinic":
        from dpfed_core.data.synthetic import CLINIC_ITEMS

        return list(CLINIC_ITEMS)
    n_items = 200  # sample_data/generate.py: SYNTHETIC_PARAMS["n_items"]
    return [f"item {j:03d}" for j in range(n_items)]


def sample_entities(key: str, federation: str | None = None) -> list[str]:
    """A generated sample's entity list: public by construction (the generator's settings in
    ``sample_data/generate.py``), never read off the sample file."""
    if key == "clinic":
        from dpfed_core.data.synthetic import REGIONS

        if federation == "region":
            return list(REGIONS)
        n_hospitals = 30  # sample_data/generate.py: CLINIC_PARAMS["n_hospitals"]
        return [f"hospital {h + 1:02d}" for h in range(n_hospitals)]
    n_entities = 10  # sample_data/generate.py: SYNTHETIC_PARAMS["n_entities"]
    return [f"entity {h + 1:02d}" for h in range(n_entities)]


def load_sample(
    name: str,
    *,
    federation: Literal["hospital", "region"] | None = None,
    sample_dir: str | os.PathLike | None = None,
    exclude_entities: Sequence[str] = (),
    items: Source | Sequence[str] | None = None,
    entities: Source | Sequence[str] | None = None,
    item_features: Any = None,
    **removed: Any,
) -> FederatedDataset:
    """Load a generated sample dataset from ``sample_data/`` (see ``sample_data/README.md``).

    ``"synthetic"``: the paper §5.1 Poisson model, 10 entities. ``"clinic"``: eICU-like ICU stays ×
    lab/medication names, by hospital (default) or, with ``federation="region"``, by region.
    """
    _reject_removed(removed, "load_sample")
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
                "federation applies to the clinic sample only and must be 'hospital' or 'region'",
                param="federation")
        entity_col = federation
    ds = load_long_table(
        path,
        user_col=meta["user_col"],
        item_col=meta["item_col"],
        value_col=meta["value_col"],
        entity_col=entity_col,
        value_kind=meta["value_kind"],
        value_max=meta["value_max"],
        exclude_entities=exclude_entities,
        # A generated sample's catalogue is public by construction: the generator's item list.
        items=items if items is not None else sample_catalogue(key),
        # and so is its federation: the generator's entity list
        entities=entities if entities is not None else sample_entities(key, federation),
        item_features=item_features,
        name=f"sample: {key}" + (f" by {federation}" if federation else ""),
    )
    from dataclasses import replace

    return replace(ds, generated=True)  # made by sample_data/generate.py from public parameters: no one's records


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
            f"not apply to {what}; accepted: {', '.join(sorted(allowed)) or 'none'}", param=bad[0]
        )
    return opts


_LONG_OPTS = (
    "user_col", "item_col", "value_col", "entity_col", "entity_from", "entity_transform",
    "item_name_col", "value_kind", "value_max", "duplicates", "exclude_entities", "items",
    "over_max", "drop_missing", "filename", "sep", "name", "progress", "entities", "entities_from_data",
    "item_features", "encoding",
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
        _only(opts, ("federation", "sample_dir", "exclude_entities", "items", "entities", "item_features"),
              "sample data")
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
            _only(opts, ("federation", "exclude_entities", "name", "entities", "item_features"),
                  "a MovieLens directory")
            return load_movielens(p, **opts)
        if _find_table(p, "patient") is not None:
            o = dict(opts)
            if "federation" in o:
                o["entity"] = o.pop("federation")
            if "events" in o:
                o["event_table"] = o.pop("events")
            _only(o, ("event_table", "entity", "value_max", "drop_cancelled", "name", "exclude_entities",
                      "items", "entities", "entities_from_data", "item_features"), "an eICU directory")  # fmt: skip
            return load_eicu(p, **o)
        found = ", ".join(sorted(x.name for x in p.iterdir())[:15]) or "nothing"
        raise DataError(
            f"{p} is a directory but neither a MovieLens nor an eICU one (found: {found}). "
            f"Accepted: {_ACCEPTED}.", param="data"
        )
    if p.is_file():
        _only(opts, _LONG_OPTS, "a table file")
        if "user_col" not in opts or "item_col" not in opts:
            df, label, _ = read_table(p, usecols=["\x00none"])
            cols = ", ".join(repr(str(c)) for c in df.columns[:30])
            raise ConfigError(
                f"{label} is a table: say which columns hold the user, the item, the value and the "
                "entity (user_col, item_col, value_col, entity_col or entity_from with "
                f"entity_transform, and value_kind / value_max). Columns found: {cols}.", param="user_col"
            )
        return load_long_table(p, **opts)
    raise DataError(f"no such dataset or file: {s!r}. Accepted: {_ACCEPTED}.", param="data")
