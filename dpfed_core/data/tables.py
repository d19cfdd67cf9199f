"""Reading a table the user gave: a path, an upload (bytes or a file-like object) or a DataFrame.

Every loader reads its files through :func:`read_table`, so one place decides the format (by content
first, then by name), the text encoding (decided on the whole file, never on a first block), how large
an upload may be before it is read, and how ids are kept as the file's exact strings. The helpers that
name a row, a missing column or a blank field in messages live here too, next to the reader whose
row numbering they describe. Inputs are only read: nothing is written next to them, DataFrames passed
in are not mutated and file-like objects are rewound to where they were.
"""
from __future__ import annotations

import codecs
import difflib
import gzip
import zlib
import io
import os
import re
import zipfile
from pathlib import Path
from typing import Any, BinaryIO, Callable, Sequence, Union

import numpy as np
import pandas as pd

from dpfed_core.data.inputs import (
    INVISIBLE, ZIP_MAGIC, check_encoding, check_regular_file, env_limit, id_text, is_workbook, wide_encoding,
)
from dpfed_core.errors import ConfigError, DataError

__all__ = [
    "Source",
    "read_table",
    "check_upload_size",
    "upload_limits",
    "MAX_TABLE_BYTES",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_ROWS",
    "TEXT_CHUNK_ROWS",
]

Source = Union[str, os.PathLike, pd.DataFrame, bytes, bytearray, memoryview, BinaryIO]

#: Rows of text a long table is read in: the loader's peak is one chunk of Python strings plus the
#: integer codes. 100,000 put a 1M-row run at 4.3× the file (the target: 4×), 25,000 at 3.84×.
TEXT_CHUNK_ROWS = 25_000


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


# ------------------------------------------------------------------ header-less tables
def _looks_numeric(s: object) -> bool:
    try:
        float(str(s))
        return True
    except ValueError:
        return False


def headerless(columns: list[str]) -> bool:
    """True when a table's "header" is a data row: at least half the names (and at least two) are
    numbers (e.g. MovieLens ``u.data``: ``196 242 3 881250949``; ``u.user``: ``1|24|M|technician|85711``)."""
    cols = [str(c).strip() for c in columns]
    if not cols:
        return False
    numeric = sum(_looks_numeric(c) for c in cols)
    return numeric >= max(2, (len(cols) + 1) // 2)


def names_as_values(df: pd.DataFrame, rows: int = 10_000) -> list[str]:
    """The columns whose own name is one of their values in the first ``rows`` rows, outside a row that
    repeats every name (the header again, as files joined one after another carry it): a header is no
    value of its column, so such names are a first line of data read as the header (``p1,d1,2,h0``
    above more rows of user p1, item d1, entity h0)."""
    head = df.head(rows)
    if head.empty:
        return []
    cells = {c: head[c].astype(str).str.strip() for c in head.columns}
    again = np.logical_and.reduce([(cells[c] == str(c).strip()).to_numpy() for c in head.columns])
    return [str(c) for c in head.columns if (cells[c][~again] == str(c).strip()).any()]


def header_is_data(df: pd.DataFrame) -> bool:
    """Whether a table's header line reads as a data row: its names are numbers (:func:`headerless`), or
    two or more of them are values of their own columns (:func:`names_as_values`; read from
    ``df.attrs["names_as_values"]`` when the table was read without its rows)."""
    found = df.attrs.get("names_as_values")
    return headerless([str(c) for c in df.columns]) or len(found if found is not None else names_as_values(df)) >= 2


#: Header-less files of known formats, by file name: their documented columns (MovieLens 100K's
#: README). A file of that name with another number of columns is not taken for the format.
_ML_GENRES = ["unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary",
              "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller",
              "War", "Western"]
KNOWN_FORMATS = {
    "u.data": ("MovieLens 100K ratings", ["user id", "item id", "rating", "timestamp"]),
    "u.user": ("MovieLens 100K users", ["user id", "age", "gender", "occupation", "zip code"]),
    "u.item": ("MovieLens 100K movies", ["movie id", "movie title", "release date", "video release date",
                                         "IMDb URL", *_ML_GENRES]),
    "u.occupation": ("MovieLens 100K occupations", ["occupation"]),
}
#: MovieLens 100K's train/test splits (u1.base … u5.test, ua.base …) have u.data's columns.
_SPLIT_NAMES = {f"u{s}.{part}" for s in ("1", "2", "3", "4", "5", "a", "b") for part in ("base", "test")}


def known_format(filename: str, n_columns: int) -> tuple[str, list[str]] | None:
    """(format, column names) of a header-less file recognised by its name and column count (MovieLens
    ``u.data``, ``u.user``, ``u.item``, ``u.occupation``, ``u1.base`` …), else None."""
    import os

    name = os.path.basename(str(filename)).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    key = "u.data" if name in _SPLIT_NAMES else name
    fmt = KNOWN_FORMATS.get(key)
    if fmt is None or len(fmt[1]) != n_columns:
        return None
    return fmt


def headerless_names(filename: str, n_columns: int) -> list[str]:
    """The column names of a header-less table: a known format's documented names
    (:func:`known_format`: MovieLens ``u.data``, ``u.user`` …), else ``column 1`` … ``column N`` —
    one rule for the Data page and the CLI's ``--no-header``."""
    known = known_format(filename, n_columns)
    return list(known[1]) if known else [f"column {i + 1}" for i in range(n_columns)]



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
#: Largest table read from memory (an upload), unpacked. Mapping and loading a table of distinct
#: 33-character ids takes ~20× its size (1,000,000 such rows, 68 MiB, peaked at 1.40 GiB in the loader
#: alone), and the dashboard holds the upload, its table and the dataset at once: 16 MiB of such ids
#: peaked at 625 MiB for the whole dashboard process (tested: ``tests/test_upload_bounds.py``).
#: ``DPFED_MAX_UPLOAD_MB`` changes it on a machine that has the memory; a larger table is read from
#: its path by the CLI (``python -m dpfed_core run --data FILE``), whose bound is :data:`MAX_TABLE_BYTES`.
MAX_UPLOAD_BYTES = 16 * 2**20
#: Most rows (lines) of an upload: a short-lined table (``12,345,6``) fits 1.5 million rows in 16 MiB.
#: Mapping and loading one takes ~240 bytes a row when ids repeat, but up to ~670 when every user and
#: item id is distinct, and the dashboard holds the upload, its table and the dataset at once:
#: 1,000,000 such rows peaked at 1.21 GiB for the whole dashboard process, 500,000 at 731 MiB (tested:
#: ``tests/test_upload_bounds.py``). ``DPFED_MAX_UPLOAD_ROWS`` changes it; the CLI reading a path is
#: bounded by :data:`MAX_TABLE_BYTES`.
MAX_UPLOAD_ROWS = 500_000


def upload_limits() -> tuple[int, int]:
    """(unpacked bytes, rows) an upload may have: :data:`MAX_UPLOAD_BYTES`, :data:`MAX_UPLOAD_ROWS`, or
    the environment's ``DPFED_MAX_UPLOAD_MB``, ``DPFED_MAX_UPLOAD_ROWS``."""
    mb = env_limit("DPFED_MAX_UPLOAD_MB", MAX_UPLOAD_BYTES / 2**20, param="data", whole=False)
    return int(mb * 2**20), env_limit("DPFED_MAX_UPLOAD_ROWS", MAX_UPLOAD_ROWS, param="data")


def _size(n_bytes: int) -> str:
    """A byte limit as a reader sets it: MiB to four digits (16, 0.5), or bytes below 1 MiB; never "0 MiB"."""
    return f"{n_bytes / 2**20:.4g} MiB" if n_bytes >= 2**20 else f"{n_bytes:,} bytes"


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
        raise DataError(f"{label} unpacks to more than {_size(limit)}, the limit of a table read in "
                        "memory (an upload): load it from its path with the CLI (python -m dpfed_core run --data "
                        "FILE), or raise the limit with the environment variable DPFED_MAX_UPLOAD_MB on a machine "
                        "with the memory", param="data")
    if lines is not None and lines > max_rows + header:
        raise DataError(f"{label} has more than {max_rows:,} rows, the limit of a table read in memory (an "
                        "upload; a table of distinct ids takes up to ~670 bytes a row to map and load, and the "
                        "dashboard holds it three times): load it from its path with the CLI (python -m "
                        "dpfed_core run --data FILE), or raise the limit with the environment variable "
                        "DPFED_MAX_UPLOAD_ROWS on a machine with the memory", param="data")


def _index_as_columns(df: pd.DataFrame) -> pd.DataFrame:
    """A Parquet file's named index columns as ordinary columns. A table written from pandas with
    ``set_index('user')`` stores 'user' as a column of the file, and the reader would restore it as
    the frame's index: the column the user names would then be missing from a file that has it."""
    names = [n for n in df.index.names if n is not None and n not in df.columns]
    if not names:
        return df
    return df.reset_index(level=names) if isinstance(df.index, pd.MultiIndex) else df.reset_index()


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
    """A single-byte encoding when no block of the content holds a valid UTF-8 multi-byte sequence —
    Windows-1252 when it decodes the whole content, else latin-1
    (:func:`~dpfed_core.data.inputs.single_byte_encoding`) — else an error naming the first undecodable
    byte (UTF-8 text with a stray byte must not be read as latin-1)."""
    pattern = re.compile(rb"[\xc2-\xf4][\x80-\xbf]")
    utf8 = codecs.getincrementaldecoder("utf-8")()
    pos, bad_at, multibyte, cp1252 = 0, None, False, True
    with _text_stream(path, data, compression) as f:
        while True:
            block = f.read(1 << 22)
            if not block:
                break
            multibyte = multibyte or bool(pattern.search(block))
            if cp1252:
                try:
                    block.decode("cp1252")  # a single-byte code: blocks decode alone
                except UnicodeDecodeError:
                    cp1252 = False
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
    return "cp1252" if cp1252 else "latin-1"




def _as_utf8(label: str, path: Path | None, data: bytes | None, compression: str | None, encoding: str) -> bytes:
    """The whole (decompressed) text of a UTF-16/32 table re-encoded as UTF-8, without its mark."""
    with _text_stream(path, data, compression) as f:
        raw = f.read()
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DataError(f"{label} is not valid {encoding} text (byte {exc.start:,}); declare the file's encoding "
                        "(encoding=…)", param="encoding") from None
    return text.lstrip("\ufeff").encode("utf-8")


def _one_line_end(path: Path | None, data: bytes | None, compression: str | None) -> bytes:
    """The whole (decompressed) text with each ``\\r\\r\\n`` written as the ``\\r\\n`` it stands for: a CR LF
    passed through a writer that adds its own CR. Read as it is, every such line is two line ends, a blank
    line after each row, and the rows and lines an error names count twice the file's lines. Held in memory
    whole, as a UTF-16 table re-encoded is."""
    with _text_stream(path, data, compression) as f:
        return f.read().replace(b"\r\r\n", b"\r\n")


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
    header: bool = True,
) -> tuple[pd.DataFrame, str, bool | int]:
    """Read a table from a path, bytes, a file-like object or a DataFrame.

    The format is recognised from the content (Parquet magic ``PAR1``, gzip magic), then from the
    name. CSV fields are read as text so that bad values can be reported verbatim; fully blank lines
    are dropped while keeping the original row numbering.

    Returns
    -------
    df : DataFrame (the caller's own object when a DataFrame was given — do not mutate it)
    label : str — how to name the source in messages
    from_text : bool | int — True when rows correspond to lines of a text file (data row i = line i + 1);
        1 for a text file read with ``header=False`` (data row i = line i)

    ``header=False``: the first line is data. The columns are named as the Data page names them
    (:func:`headerless_names`: a known header-less format's documented names,
    else ``column 1`` …), and every cell of the first line is read as written (a header would have
    its repeated or blank cells renamed ``1.1``, ``Unnamed: 2``).
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
    if not header and (head[:4] == b"PAR1" or name.endswith((".parquet", ".pq"))):
        raise DataError(f"{label} is a Parquet file, which names its columns itself: a header-less reading applies "
                        "to text tables only; leave it out", param="no_header")
    if head[:4] == b"PAR1" or name.endswith((".parquet", ".pq")):
        if head[:4] != b"PAR1":
            raise DataError(
                f"{label} is named like a Parquet file but is not one (it does not start with the "
                "Parquet magic bytes 'PAR1'). Re-export it, or rename it if it is a CSV file."
            )
        _refuse_repeated_parquet_names(label, path if path is not None else io.BytesIO(data))  # type: ignore[arg-type]
        try:
            src = path if path is not None else io.BytesIO(data)  # type: ignore[arg-type]
            df = _index_as_columns(pd.read_parquet(src))
            if usecols is not None:
                df = df.rename(columns=_spelt_as_named(usecols, list(df.columns)))
            if usecols is not None and all(c in df.columns for c in usecols):
                every = [str(c) for c in df.columns]
                df = df[list(dict.fromkeys(usecols))]
                df.attrs = {**df.attrs, "file_columns": every}
                if isinstance(dtype, dict):
                    # floats keep their values (ids without '.0'), booleans their 0/1; a nested value or
                    # bytes that are no text stay as they are, for the loader to name with their column
                    df = df.astype({c: t for c, t in dtype.items()
                                    if c in df.columns and not pd.api.types.is_float_dtype(df[c])
                                    and not pd.api.types.is_bool_dtype(df[c]) and not_single_value(df[c]) is None})
        except Exception as exc:  # pyarrow raises many types; all mean the same to the user
            raise DataError(f"could not read Parquet file {label}: {exc}. Re-export the file.") from exc
        return df, label, False
    if is_workbook(head, name):
        raise DataError(
            f"{label} is an Excel workbook, not a table: this tool reads CSV, TSV or Parquet files and "
            "has no option to pick a sheet. Open it in a spreadsheet program, save the sheet as CSV "
            "(Excel: File > Save As > CSV UTF-8) and load that CSV file in its place.", param="data"
        )
    if head[:4] == ZIP_MAGIC:
        raise DataError(f"{label} is a ZIP archive, not a table. Unzip it and load the table it holds.",
                        param="data")

    text_head = _decompressed_head(head, path, data)
    compression = "gzip" if head[:2] == b"\x1f\x8b" else None
    wide = wide_encoding(text_head, encoding)
    if wide is not None:
        # UTF-16/32 text is full of NUL bytes and its separators are not single bytes: read as UTF-8
        data = _as_utf8(label, path, data, compression, wide)
        path, encoding, compression = None, "utf-8", None
        head = text_head = data[:65536]
    if b"\r\r\n" in text_head:
        data = _one_line_end(path, data, compression)
        path, compression = None, None
        head = text_head = data[:65536]
    if b"\x00" in text_head:
        even, odd = text_head[0::2], text_head[1::2]
        if max(even.count(0) / max(len(even), 1), odd.count(0) / max(len(odd), 1)) > 0.9:
            order = "utf-16-be" if even.count(0) > odd.count(0) else "utf-16-le"
            raise DataError(f"{label} looks like UTF-16 text without a byte-order mark (every other byte is NUL); "
                            f"declare it with encoding={order}, or save it as UTF-8", param="encoding")
        raise DataError(
            f"{label} is not a text table (it contains binary bytes). Expected CSV, CSV.gz, TSV or "
            "Parquet."
        )
    opening = text_head.lstrip(b"\xef\xbb\xbf \t\r\n")[:2]
    if opening in (b"[{", b'{"') or (opening[:1] in (b"[", b"{") and name.endswith((".json", ".jsonl", ".ndjson"))):
        # read as CSV, JSON records would split at their commas into columns named by fragments of the data
        raise DataError(f"{label} is JSON, not a table: this tool reads CSV, TSV or Parquet files. Save the "
                        "records as a CSV file with one column per field (e.g. pandas: read_json, then to_csv) "
                        "and load that file in its place.", param="data")
    # Blank lines before the header (an export's leading empty line) are no header, as a blank line among
    # the rows is no row: skipped, and line numbers still count them. Read as the header, a blank line left
    # the table without a column name. A spreadsheet's separator hint ('sep=;' on a line of its own before
    # the header) is no row and no header either: its separator is the table's, and the line is skipped.
    lead = re.match(rb"(?:\xef\xbb\xbf)?(?:[ \t]*\r?\n)*", text_head)
    hint = re.match(rb"sep=([,;\t|])\r?\n", text_head[lead.end():])  # type: ignore[union-attr]
    skip = lead.group(0).count(b"\n") + (1 if hint else 0)  # type: ignore[union-attr]
    if sep is None:
        sep = hint.group(1).decode() if hint else _sniff_sep(text_head[lead.end():])  # type: ignore[union-attr]
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

    used: list[str] = []  # the encoding the table was read with, for the line numbers of its records

    def _used() -> str:
        return used[0] if used else "utf-8"

    def _read(encoding: str) -> pd.DataFrame:
        # Only an empty field is missing: ids are exact strings, so 'NA', 'None', 'null' and '#N/A'
        # are ids like any other, never pandas' guesses of a missing value.
        used[:] = [encoding]
        # skipinitialspace: a field after ', ' may be in quotes ('"u1", "Zürich"'); read as written, its
        # quotes would be part of the id. Outer spaces are no part of an id or a number anyway.
        kw = dict(sep=sep, compression=compression, encoding=encoding, skip_blank_lines=False,
                  keep_default_na=False, na_values=[""], skipinitialspace=True, skiprows=skip)
        if not header:
            width = pd.read_csv(_src(), header=None, nrows=1, dtype=str, **kw).shape[1]
            kw.update(header=None, names=headerless_names(filename or label, width))
        keep = None
        if usecols is not None:
            names = pd.read_csv(_src(), nrows=0, **kw)
            spelt = _spelt_as_named(usecols, list(names.columns))
            if spelt:  # the file's names, each that differs only in how it is written, as the caller names it
                kw.update(header=0 if header else None, names=[spelt.get(c, c) for c in names.columns])
                names = names.rename(columns=spelt)
            if not all(c in names.columns for c in usecols):
                if not header:  # sized by its first line: a longer line after it is the error to name
                    pd.read_csv(_src(), dtype=str, **kw)
                else:  # the rows below say whether the header line is data (the message then names --no-header)
                    try:
                        names.attrs["names_as_values"] = names_as_values(
                            _aligned(label, pd.read_csv(_src(), dtype=str, nrows=1000, **kw), header))
                    except (DataError, pd.errors.ParserError):
                        pass  # a malformed line is the full read's error to name, with the columns asked for
                return names  # the caller names the missing column among these
            keep = list(dict.fromkeys(usecols))
            if header:  # a header-less file's names are given, never made up by the reader
                _refuse_repeated_names(label, _header_names(_src(), sep, compression, encoding, skip), keep)
        cats = [c for c, t in dtype.items() if t == "category"] if isinstance(dtype, dict) else []
        if not cats and progress is None:
            df = _aligned(label, pd.read_csv(_src(), dtype=str, **kw), header)
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
            chunk = _aligned(label, chunk, header)  # every chunk: a later line's extra field may hold a value
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
            enc = check_encoding(encoding)
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
        if "EOF inside string" in msg:
            at = _unclosed_quote_line(_src, compression, _used(), sep)
            raise DataError(
                f"{label}{f', line {at:,}' if at else ''}: a field opens a double quote (\") that is never "
                "closed, so every line after it would be read into that one field. Close the quote, or remove it "
                "(a quote inside a field is written doubled, \"\", within a field in quotes)", param="data"
            ) from None
        raise DataError(
            f"{label} is not a well-formed delimited file ({msg}). Every line must have as many "
            f"fields as {'the header' if header else 'the first data line'} (separator {sep!r}); quote fields "
            "that contain the separator."
        ) from exc
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"could not read {label}: {exc}. The file may be truncated or corrupt.") from exc
    except (DataError, ConfigError):
        raise  # already one whole message: wrapped, it gained a tail about separators that misled
    except (ValueError, TypeError) as exc:
        raise DataError(f"could not read {label} as a delimited text table ({exc}). Check the separator "
                        "and that every line has as many fields as the header.") from exc
    # drop lines that are completely blank (e.g. trailing empty lines) but keep the numbering
    first = (2 if header else 1) + skip
    lines = _record_lines(_src, compression, _used(), sep, len(df), first)
    blank = df.isna().all(axis=1)
    if blank.any():
        df = df.loc[~blank]
    if lines is not None:  # a record spans lines: the long table checks its used fields against a row's shape
        df.attrs.update(record_sep=sep, record_fields=len(_header_names(_src(), sep, compression, _used(), skip)))
    if header and usecols is not None:
        # the columns left unread still say what the table is (item1 … item200: one column per item)
        df.attrs.update(file_columns=_header_names(_src(), sep, compression, _used(), skip))
    if header and any(_MANGLED.fullmatch(str(c)) or _BLANK.fullmatch(str(c)) for c in df.columns):
        # pandas renames a repeated header name ('site', 'site.1') and names a blank one ('Unnamed: 3'):
        # messages and the Data page's mapper name the file's own names
        names = _header_names(_src(), sep, compression, _used(), skip)
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            df.attrs.update(header_names=names, repeated_names=repeated)
        if usecols is None:  # every column read, in the file's order: a placeholder's number is its column
            blank = [str(c) for c in df.columns if (m := _BLANK.fullmatch(str(c))) and int(m.group(1)) < len(names)
                     and not names[int(m.group(1))].strip()]
            if blank:
                df.attrs.update(blank_names=blank)
    return df, label, (lines if lines is not None else first if skip else True if header else 1)


def _record_lines(src, compression: str | None, encoding: str, sep: str, n_records: int,
                  first: int) -> np.ndarray | None:
    """The line of each data record when a quoted field holds a line break (a record then spans several
    lines, and "data row i is line i + 1" would point past the row an error is about), else None.
    ``src()`` opens the file; ``first``: the line of the first record (2 after a header). Counting the
    line breaks decides it; only a file whose count differs from its records is parsed again, by the
    standard library's CSV reader, to find where each record starts."""
    import csv

    def binary() -> BinaryIO:
        raw = src()
        if isinstance(raw, (str, os.PathLike)):  # opened here, closed with the stream returned
            return gzip.open(raw, "rb") if compression == "gzip" else open(raw, "rb")
        return gzip.GzipFile(fileobj=raw) if compression == "gzip" else raw

    if len(sep) != 1:  # a pattern separator: the standard reader cannot follow it
        return None
    try:
        breaks, last = 0, b"\n"
        with binary() as b:
            for block in iter(lambda: b.read(1 << 20), b""):
                breaks, last = breaks + block.count(b"\n"), block[-1:]
        n_lines = breaks + (last != b"\n")
        if n_lines == n_records + first - 1:
            return None
        starts = np.empty(n_records, dtype=np.int64)
        with io.TextIOWrapper(binary(), encoding=encoding, newline="") as t:
            reader = csv.reader(t, delimiter=sep, skipinitialspace=True)
            at, k = 1, -(first - 1)  # the header's record comes first and is no data record
            for _ in reader:
                if 0 <= k < n_records:
                    starts[k] = at
                k += 1
                at = reader.line_num + 1
        return starts if k == n_records else None
    except (OSError, UnicodeDecodeError, csv.Error, EOFError, zlib.error):
        return None  # the records' own order still names the row


def _unclosed_quote_line(src, compression: str | None, encoding: str, sep: str) -> int | None:
    """The line where the record holding a never-closed double quote starts: that record runs to the end
    of the file, so it is the last one; the line is counted, as a quoted field before it may span lines
    (the reader's own row number counts records, not lines)."""
    import csv

    raw = src()
    try:
        if isinstance(raw, (str, os.PathLike)):
            b = gzip.open(raw, "rb") if compression == "gzip" else open(raw, "rb")
        else:
            b = gzip.GzipFile(fileobj=raw) if compression == "gzip" else raw
        with io.TextIOWrapper(b, encoding=encoding, newline="") as t:
            reader = csv.reader(t, delimiter=sep if len(sep) == 1 else ",", skipinitialspace=True)
            start, done = None, 0
            try:
                for _ in reader:
                    start, done = done + 1, reader.line_num
            except csv.Error:
                return done + 1
            return start
    except (OSError, UnicodeDecodeError, EOFError, zlib.error):
        return None


def _spelt_as_named(usecols: Sequence[str], columns: list[Any]) -> dict[Any, str]:
    """{file's column: the name asked for} for each asked-for name the file writes only in another way that
    displays the same (:func:`~dpfed_core.data.inputs.id_text`: 'Hôpital' with a decomposed accent, 'user '
    with a trailing space), and in one column only: such a name cannot be typed as the file writes it."""
    out: dict[Any, str] = {}
    for c in usecols:
        if c in columns:
            continue
        same = [x for x in columns if isinstance(x, str) and id_text(x) == id_text(str(c))]
        if len(same) == 1 and same[0] not in out:
            out[same[0]] = c
    return out


def _refuse_repeated_parquet_names(label: str, source: Any) -> None:
    """A Parquet file naming two columns alike cannot be read by column name: said with the name and the
    columns, as a text header repeating a name is (the reader's own error named a field reference)."""
    try:
        import pyarrow.parquet as pq

        names = list(pq.read_schema(source).names)
    except Exception:  # noqa: BLE001 - a damaged file: the read itself names it
        return
    finally:
        if hasattr(source, "seek"):
            source.seek(0)
    names = [n for n in names if not n.startswith("__index_level_")]
    twice = [n for n in dict.fromkeys(names) if names.count(n) > 1]
    if twice:
        at = [i + 1 for i, n in enumerate(names) if n == twice[0]]
        raise DataError(f"{label} names {len(at)} columns {twice[0]!r} (columns {', '.join(map(str, at))}), so which "
                        "one is meant is ambiguous and the file cannot be read by column name; give each column its "
                        "own name and write the file again", param="data")


#: What pandas infers an object column of single values to hold.
_SINGLE_VALUES = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float", "decimal", "boolean",
                            "datetime64", "datetime", "date", "timedelta64", "timedelta", "time", "period",
                            "complex"})


def not_single_value(s: pd.Series) -> tuple[Any, str] | None:
    """(row label, what it holds) of the first cell of an object column that is no single value — a list,
    an array, a mapping (a nested Parquet type) or bytes that are not UTF-8 text — else None."""
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) in _SINGLE_VALUES:
        return None  # told in one pass of compiled code: only a column of other values is looked at cell by cell
    for label, v in s.items():
        if isinstance(v, (list, tuple, np.ndarray)):
            return label, "a list"
        if isinstance(v, dict):
            return label, "a mapping (a nested record)"
        if isinstance(v, (bytes, bytearray)):
            try:
                bytes(v).decode("utf-8")
            except UnicodeDecodeError:
                return label, f"bytes that are not UTF-8 text ({bytes(v)[:16]!r})"
    return None


def _aligned(label: str, frame: pd.DataFrame, header: bool) -> pd.DataFrame:
    """``frame`` as its file's columns, for data lines with one field more than the header line. pandas
    takes the first field of such lines for a row label and shifts every column one place left. When
    every line's extra field is empty (a separator ending each line, as some exports write) the fields
    are put back under their names; otherwise the extra field — an unnamed first column (row numbers)
    or a value after the last named column — cannot be told apart, and the table is refused."""
    if isinstance(frame.index, pd.RangeIndex):
        return frame
    n = frame.shape[1]
    if n and frame.iloc[:, -1].isna().all():
        # the row label is the first field and the last column the trailing empty one
        fields = [frame.index.to_numpy(), *(frame.iloc[:, j].to_numpy() for j in range(n - 1))]
        return pd.DataFrame(dict(zip(frame.columns, fields))).astype(frame.dtypes.to_dict())
    where = "the header" if header else "the first line"
    raise DataError(
        f"{label}: data lines have {n + 1} fields but {where} names {n} columns, so the columns cannot be "
        "matched to their names (a first column without a name, such as row numbers, or a value after the last "
        "named column). Give every column a name in the header line, or remove the extra field from the data "
        "lines.", param="data")


def _header_names(src: Any, sep: str, compression: str | None, encoding: str, skip: int = 0) -> list[str]:
    """The header line's names as the file writes them (a blank one as ''), where pandas' own column
    names number the repeats ('site', 'site.1') and name the blanks ('Unnamed: 3')."""
    first = pd.read_csv(src, header=None, nrows=1, dtype=str, sep=sep, compression=compression,
                        encoding=encoding, keep_default_na=False, na_values=[""], skip_blank_lines=False,
                        skipinitialspace=True, skiprows=skip)
    return [("" if pd.isna(v) else str(v)) for v in first.iloc[0]] if len(first) else []


def _refuse_repeated_names(label: str, names: list[str], used: list[str]) -> None:
    """Refuse a header that names a used column twice: pandas would rename the second 'rating' to
    'rating.1' and the first would be read without a word about the other. ``names``: the header as
    written (:func:`_header_names`)."""
    for c in used:
        if names and c not in names:
            # a name the reader made up: 'site.1' for the second of two columns 'site', 'Unnamed: 3' for a
            # column the header leaves blank — no column of the file is called so
            rep = _MANGLED.fullmatch(c)
            blank = _BLANK.fullmatch(c)
            if rep and names.count(rep.group(1)) > int(rep.group(2)):
                raise DataError(f"{label}: the header has no column {c!r}: it names {names.count(rep.group(1))} "
                                f"columns {rep.group(1)!r}, and {c!r} is how a reader numbers the repeats; give each "
                                "column its own name in the file", param="data")
            if blank and int(blank.group(1)) < len(names) and not names[int(blank.group(1))].strip():
                raise DataError(f"{label}: column {int(blank.group(1)) + 1} has no name in the header ({c!r} is a "
                                "reader's placeholder); name it in the file", param="data")
        at = [i + 1 for i, n in enumerate(names) if n == c]
        if len(at) > 1:
            raise DataError(f"{label}: the header names {len(at)} columns {c!r} (columns "
                            f"{', '.join(map(str, at))}), so which one is meant is ambiguous; give each column its "
                            "own name in the file", param="data")


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


def _row_ref(label: str, index_value: Any, from_text: bool | int | np.ndarray) -> str:
    """Where a row is. ``from_text``: False for a DataFrame (name the index label); True for a text
    file with a header line (data row i + 1 is line i + 2); an int gives the line offset directly
    (1 for header-less files); an array, the line of each record (a file whose quoted fields hold line
    breaks)."""
    if from_text is False:
        return f"{label}, row with index {index_value!r}"
    r = int(index_value) + 1
    if isinstance(from_text, np.ndarray):
        return f"{label}, data row {r} (line {int(from_text[int(index_value)])})"
    offset = 2 if from_text is True else int(from_text)
    return f"{label}, data row {r} (line {int(index_value) + offset})"


def first_line_is_data(more: str = "") -> str:
    """The sentence telling that a table's header reads like data (:func:`headerless`), and how to read it."""
    return (" Its first line looks like data, not a header: give --no-header (the columns are then 'column 1' … "
            "'column N', or a known format's documented names such as MovieLens u.data's 'user id', 'item id', "
            f"'rating'){more}.")


#: A column name as pandas renames the second of two equal header names ('site' → 'site.1'): the
#: name and the repeat's number.
_MANGLED = re.compile(r"(.+)\.(\d+)")
#: pandas' name for a column whose header cell is blank, with the column's 0-based position.
_BLANK = re.compile(r"Unnamed: (\d+)")


def _check_columns(df: pd.DataFrame, label: str, needed: dict[str, str], params: dict | None = None) -> None:
    """needed: column → its role ("user column", …); params: column → the parameter that names it (a
    front end renders it as its flag or control). Raise naming every missing one, among the header's own
    names (not pandas' renaming of a repeated one)."""
    cols = [str(c) for c in df.columns]
    missing = [(c, role) for c, role in needed.items() if c not in df.columns]
    if not missing:
        return
    parts = []
    for c, role in missing:
        # the same name in other case first: 'item' is 'Item' before it is 'Site'
        near = [x for x in cols if x.lower() == str(c).lower()]
        near += [x for x in difflib.get_close_matches(str(c), cols, n=1, cutoff=0.6) if x not in near]
        param = (params or {}).get(c)
        parts.append(f"'{c}' ({role}{', ' + param if param else ''})" + (f" — did you mean '{near[0]}'?" if near else ""))
    found = df.attrs.get("header_names") or cols
    shown = ", ".join(repr(c) for c in found[:30]) + (" …" if len(found) > 30 else "")
    said = f"{label} has no column {'; no column '.join(parts)}"
    first_row = first_line_is_data() if header_is_data(df) else ""
    repeated = df.attrs.get("repeated_names") or []
    twice = (f" The header names {', '.join(map(repr, repeated))} more than once: give each column its own name."
             if repeated else "")
    raise DataError(
        f"{said}{'' if said.endswith('?') else '.'} Columns found: {shown}. Pass the right column names (they "
        f"are case-sensitive).{twice}{first_row}", param=(params or {}).get(missing[0][0])
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


def per_value(s: pd.Series, fn: Callable[[pd.Series], np.ndarray], missing: Any = False) -> np.ndarray:
    """``fn`` of each row of ``s`` (``fn`` gives one entry per value of the Series it is given), computed
    once per distinct value — a categorical's categories, another column's distinct values — and read
    back by each row's code: a million rows of a few thousand ids are a few thousand calls' worth of
    work. A missing row gets ``missing``."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes, values = s.cat.codes.to_numpy(), pd.Series(s.cat.categories)
    else:
        codes, uniq = pd.factorize(s, use_na_sentinel=True)
        values = pd.Series(uniq)
    out = np.asarray(fn(values))
    if not out.size:  # no value at all: nothing to look a code up in
        return np.full(len(s), missing)
    rows = out[np.maximum(codes, 0)]
    rows[codes < 0] = missing
    return rows


def _as_id_strings(s: pd.Series) -> pd.Series:
    """Identifiers as the exact strings of the file (outer whitespace removed): ``1``, ``01``,
    ``1.0`` and ``1e0`` are four different ids. Only a float column of a binary format
    (Parquet), which has no text form, is written without the '.0' of its integral values (each
    value on its own: a fractional one keeps its decimals and renames no other).
    Returns a categorical Series (memory: one code per row)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return _cat_map(s, lambda c: c.str.strip())
    if pd.api.types.is_float_dtype(s):
        vals = s.to_numpy()
        if np.all(np.isfinite(vals)):
            # each integral value without its '.0', whatever the others are: one 0.5 in the column must
            # not rename every other id ('3' → '3.0')
            whole = vals == np.round(vals)
            whole &= np.abs(vals) < 2.0**63  # beyond int64 a whole float keeps its own text ('1e+20')
            text = np.where(whole, np.where(whole, vals, 0).astype(np.int64).astype(str), vals.astype(str))
            return pd.Series(text, index=s.index).astype("category")
    if pd.api.types.is_string_dtype(s) and s.dtype != object:
        # already text (a read file's columns): strip in place of a copy of one Python string per row
        return s.str.strip().astype("category")
    return s.astype(str).str.strip().astype("category")


#: Largest (distinct ids × longest id) of one id column, in characters. The dataset keeps its ids as
#: fixed-width text, so one 50,000-character id among 20,000 users asks for 4 GB (measured: 11.9 GB
#: RSS for a 315 KB file). 2^25 characters is 128 MiB of such text: 2,000,000 ids of 16 characters,
#: or 900,000 UUIDs. ``DPFED_MAX_ID_CHARS`` raises it on a machine that has the memory.
MAX_ID_CHARS = 2 ** 25


def _a(noun: str) -> str:
    """``noun`` after its indefinite article ('an item id', 'an entity name', 'a user id': the nouns said of
    ids, none of which starts with a vowel sound other than a, e, i or o)."""
    return f"{'an' if noun[:1].lower() in 'aeio' else 'a'} {noun}"


def check_id_sizes(ids: pd.Series, what: str, label: str, from_text: bool | int, param: str) -> None:
    """Refuse, before any fixed-width copy, an id column whose distinct values × longest value is
    above :data:`MAX_ID_CHARS` (``ids``: a categorical from :func:`_as_id_strings`), naming the row
    of the longest id, the limit and the variable that raises it."""
    cats = ids.cat.categories
    if len(cats) == 0:
        return
    lengths = pd.Series(cats).str.len().to_numpy()
    longest = int(lengths.max())
    limit = env_limit("DPFED_MAX_ID_CHARS", MAX_ID_CHARS, param=param)
    if len(cats) * longest <= limit:
        return
    pos = int(np.argmax(lengths))
    row = ids.index[int(np.flatnonzero(ids.cat.codes.to_numpy() == pos)[0])]
    raise DataError(f"{_row_ref(label, row, from_text)}: {_a(what)} of {longest:,} characters among {len(cats):,} "
                    f"distinct {what}s — {len(cats) * longest:,} characters of ids, above the limit of {limit:,} "
                    f"(the server's memory holds every id at the longest one's width). Shorten the ids, take the "
                    f"{what}s from another column ({param}; a text column is no id), or raise the limit with the "
                    f"environment variable DPFED_MAX_ID_CHARS", param=param)


#: A field of spaces and invisible characters, at least one of them invisible.
_ONLY_INVISIBLE = f"[\\s{INVISIBLE}]*[{INVISIBLE}][\\s{INVISIBLE}]*"


def _is_missing(s: pd.Series, words: frozenset[str] = frozenset()) -> pd.Series:
    """Missing (NA), blank, or one of ``words`` (compared stripped and in lower case: how a column of
    numbers spells a missing one) — per row, each distinct value (a categorical's category) tested once."""
    def hit(values: pd.Series) -> np.ndarray:
        text = values.astype(str).str.strip()
        found = np.array(text.eq(""), dtype=bool)  # a copy of its own: marked below
        # a field of invisible characters (a zero-width space) shows as empty: it is no id. Every invisible
        # character is outside ASCII, so only the other values are matched against the pattern
        odd = ~text.str.isascii().to_numpy(dtype=bool)
        if odd.any():
            found[odd] |= text[odd].str.fullmatch(_ONLY_INVISIBLE).fillna(False).to_numpy(dtype=bool)
        if words:
            found |= text.str.lower().isin(words).to_numpy(dtype=bool)
        return found

    miss = s.isna()
    if isinstance(s.dtype, pd.CategoricalDtype) or s.dtype == object or pd.api.types.is_string_dtype(s):
        # once per distinct value, read back by code: the pattern match costs per value, and a column of
        # a million rows has a few thousand
        miss |= pd.Series(per_value(s, hit), index=s.index)
    return miss
