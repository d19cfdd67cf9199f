"""Reading the small public input files safely: lists (a catalogue, a formulary, an entity list),
item-feature tables and JSON documents.

One reader for every list file (``--items``, ``--entities``, the first column of
``--item-features``), so the same file means the same thing wherever it is given:

- one item per line, taken whole: commas, ``|`` and spaces belong to the name (a formulary of
  eICU treatment strings is ``"cardiovascular|shock|vasopressors|norepinephrine"``); a line that is one
  field in double quotes (``"A, ward"``, as a spreadsheet saves a one-column list) is that field, as the
  data's CSV reader reads the same cell;
- CSV (``id,name``) only when declared (``csv=True``) or unambiguous: a first line whose every field
  is a recognised column name (``id,name``, ``item,title``, …);
- a first line that names the list's column (the ``--item-col`` / ``--entity-col`` given, e.g. ``drug``,
  ``hospital``) or a word that is never a name (``item``, ``id``, ``name``, …) is the header, never an item;
- duplicates are reported (first kept), items absent from the data are reported by the loader.

Every file argument is read with :func:`read_bounded`: regular files only (a FIFO or a device
would block or never end), at most a size limit (a clear error beyond it), gzip looked through with
the same limit. Text is decoded by :func:`decode_text`: the *whole* file is checked, never its first
64 KB only; a declared encoding is used strictly.
"""
from __future__ import annotations

import codecs
import csv
import json
import math
import os
import re
import stat
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dpfed_core.errors import ConfigError, DataError

#: Largest list / feature file read (bytes, after decompression): a formulary of 100,000 names is
#: ~5 MB; anything far larger is not a list someone wrote (``/dev/zero``, a data table by mistake).
MAX_LIST_BYTES = 64 * 2**20
#: Most lines of a list: 64 MiB of two-byte lines would be 32 million names (~1.6 GiB as Python
#: strings); a million names (a catalogue ten times MovieLens 25M's) is ~60 MiB.
#: ``DPFED_MAX_LIST_LINES`` raises it on a machine that has the memory.
MAX_LIST_LINES = 1_000_000
#: Largest JSON document read (``--resume``, ``report --run``): a sweep of many points is a few MB.
MAX_JSON_BYTES = 256 * 2**20
#: Deepest nesting of a JSON document: result documents nest < 10 levels; Python's parser would
#: raise RecursionError on a hostile file nested 100,000 deep.
MAX_JSON_DEPTH = 200

#: Lower-case words that, alone on the first line (or as every field of a CSV first line), make it a
#: header line rather than an item or entity.
HEADER_WORDS = frozenset(
    """id ids item items item_id itemid item_ids item_name itemname name names title titles label
    drug drugs drugname drug_name medication medications formulary treatment treatmentstring
    diagnosis diagnosisstring lab labname product products movie movies movie_id entity entities
    entity_name hospital hospitals hospitalid hospital_id region regions site sites clinic clinics
    bank banks federation key value""".split()
)


@dataclass
class ListFile:
    """A parsed list file: ``ids`` in file order (duplicates removed, first kept), optional readable
    ``names`` (CSV id,name), and what the reader did (``header``, ``duplicates``, ``notes``)."""

    ids: list[str]
    names: list[str] | None = None
    header: str | None = None
    duplicates: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ====================================================================== bounded reads
def check_regular_file(path: str | os.PathLike, *, what: str, param: str | None) -> Path:
    """``path`` as a Path if it is an existing regular file (symlinks followed); a FIFO, a device, a
    socket or a folder is refused before it is opened (opening a FIFO blocks until a writer comes)."""
    p = Path(path).expanduser()
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise DataError(f"{what} {p}: no such file", param=param) from None
    except OSError as exc:
        raise DataError(f"{what} {p}: cannot be read ({exc.strerror or exc})", param=param) from None
    if stat.S_ISDIR(st.st_mode):
        raise DataError(f"{what} {p} is a folder; give a file", param=param)
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"{what} {p} is not a regular file (a pipe, device or socket is never read: it could "
                        "block or never end); give a file", param=param)
    return p


def read_bounded(source: Any, *, what: str, param: str | None, limit: int = MAX_LIST_BYTES) -> bytes:
    """The bytes of a path (regular files only), bytes or a file-like upload, at most ``limit`` bytes
    (gzip content decompressed up to the same limit); beyond it a clear error."""
    label = f"{what} {source}" if isinstance(source, (str, os.PathLike)) else what

    def too_big() -> DataError:
        return DataError(f"{label} is larger than {limit / 2**20:.0f} MB; this input is a short public list or "
                         "document — check that the right file was given", param=param)

    if isinstance(source, (str, os.PathLike)):
        p = check_regular_file(source, what=what, param=param)
        try:
            with open(p, "rb") as f:
                raw = f.read(limit + 1)
        except OSError as exc:
            raise DataError(f"{what} {p}: cannot be read ({exc.strerror or exc})", param=param) from None
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    elif hasattr(source, "getvalue"):
        raw = bytes(source.getvalue())
    elif hasattr(source, "read"):
        data = source.read(limit + 1)
        raw = data.encode() if isinstance(data, str) else bytes(data)
    else:
        raise ConfigError(f"{what}: cannot read a {type(source).__name__}; give a file path or bytes", param=param)
    if len(raw) > limit:
        raise too_big()
    if raw[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out = d.decompress(raw, limit + 1)
        except zlib.error as exc:
            raise DataError(f"{label}: not a valid gzip file ({exc})", param=param) from None
        if len(out) > limit or d.unconsumed_tail:
            raise too_big()
        raw = out
    return raw


# ====================================================================== encodings
def check_encoding(encoding: str, param: str | None = "encoding") -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise ConfigError(f"encoding {encoding!r} is not a known text encoding; e.g. utf-8, latin-1, cp1252",
                          param=param) from None


def detect_encoding(raw: bytes, *, what: str, encoding: str | None = None, param: str | None = None) -> str:
    """The encoding of ``raw``, decided on the whole content (never on a first block only).

    Declared ``encoding``: used strictly — a byte it cannot decode is an error naming its offset.
    Else UTF-8 when the whole content is valid UTF-8 (a BOM is dropped by the caller); else a single-byte
    encoding (:func:`single_byte_encoding`) when the content has no valid UTF-8 multi-byte sequence at
    all (an old single-byte export, e.g. MovieLens titles); anything else (UTF-8 text with a stray byte) is an error asking to declare the
    encoding, never a silent half-guess that garbles names."""
    if encoding is not None:
        enc = check_encoding(encoding)
        try:
            raw.decode(enc)
        except UnicodeDecodeError as exc:
            raise DataError(f"{what} is not valid {enc}: byte {exc.start} cannot be decoded; declare the file's "
                            "real encoding", param="encoding") from None
        return enc
    try:
        raw.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    if not re.search(rb"[\xc2-\xf4][\x80-\xbf]", raw):
        return single_byte_encoding(raw)
    raise DataError(f"{what} is mostly UTF-8 but byte {first_bad} is not valid UTF-8; the file is damaged or "
                    "mixes encodings — fix it, or declare the encoding (encoding=latin-1, cp1252, …)",
                    param="encoding")


#: The codec a byte-order mark names, byte order included (what an error tells to declare); UTF-32
#: first: its little-endian mark begins with UTF-16's.
MARKED_CODECS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                 (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
                 (codecs.BOM_UTF8, "utf-8"))
#: The wide Unicode encodings' marks (a spreadsheet's "Unicode text" export), by family.
WIDE_BOMS = tuple((bom, name[:6]) for bom, name in MARKED_CODECS if name.startswith(("utf-16", "utf-32")))


def marked_codec(head: bytes) -> str | None:
    """The codec of content starting with a byte-order mark, with its byte order; None without one."""
    return next((name for bom, name in MARKED_CODECS if head.startswith(bom)), None)


def contradicts_mark(codec: str, marked: str) -> bool:
    """A (looked-up) codec name that cannot read content whose byte-order mark names ``marked``: another
    encoding, or the other byte order."""
    family = marked[:6]  # "utf-8", "utf-16", "utf-32"
    if not codec.startswith(family):
        return True
    return codec.endswith(("-le", "-be")) and codec != marked


def single_byte_encoding(raw: bytes) -> str:
    """The single-byte encoding of text that is not UTF-8: Windows-1252 (a Windows export: €, ™, curly
    quotes in 0x80–0x9F) when it decodes the whole content, else latin-1. The two agree on every other
    byte; latin-1 reads 0x80–0x9F as invisible control characters, so "Köln€" would become a name no
    list matches."""
    try:
        raw.decode("cp1252")
        return "cp1252"
    except UnicodeDecodeError:
        return "latin-1"


def wide_encoding(head: bytes, declared: str | None, what: str = "") -> str | None:
    """The UTF-16/UTF-32 codec of content declared as one or starting with its byte-order mark, else
    None; ``what`` names the file in the errors. A declared encoding that contradicts the content's mark
    (a UTF-8 one included: declared single-byte, it would become a first name "ï»¿user") is refused, and
    so is UTF-16/32 declared without a byte order on content with no mark."""
    at = f"{what}: " if what else ""
    marked = next((name for bom, name in WIDE_BOMS if head.startswith(bom)), None)
    if declared is None:
        return marked
    name = check_encoding(declared)
    ordered = marked_codec(head)
    if ordered is not None and contradicts_mark(name, ordered):
        raise ConfigError(f"{at}encoding {declared!r} is declared, but the file starts with a {ordered[:6]} "
                          f"byte-order mark; declare encoding={ordered}, or leave the encoding out",
                          param="encoding")
    if name in ("utf-16", "utf-32") and marked is None:
        # without a mark the codec guesses the byte order, and ASCII read so decodes to CJK noise
        raise ConfigError(f"{at}encoding {declared!r} needs a byte-order mark, and this file has none; declare "
                          f"the byte order ({name}-le or {name}-be) with encoding=…", param="encoding")
    return name if name.startswith(("utf-16", "utf-32")) else None


#: The extensions of spreadsheet workbooks: a file so named is refused with the workbook's advice even
#: when its first bytes are damaged or unrecognised.
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".xlsb", ".xls", ".ods")


#: The first bytes of a ZIP archive (and so of an OOXML or OpenDocument workbook).
ZIP_MAGIC = b"PK\x03\x04"


def is_workbook(head: bytes, name: str = "") -> bool:
    """Whether the file is a spreadsheet workbook: named as one, an OOXML or OpenDocument ZIP holding a
    workbook part (its entry names sit in the ZIP's first local headers), or an OLE2 compound file —
    the old .xls format, which is no ZIP and would otherwise read as 'binary bytes' with no advice."""
    if name.endswith(WORKBOOK_SUFFIXES) or head[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        return True
    return head[:4] == ZIP_MAGIC and (b"xl/" in head or b"opendocument.spreadsheet" in head)


def decode_text(raw: bytes, *, what: str, encoding: str | None = None, param: str | None = None) -> str:
    """``raw`` decoded by :func:`detect_encoding` (a UTF-8 BOM removed), or as UTF-16/32 when it starts
    with their byte-order mark or is declared so; NUL bytes in any other text refused."""
    if is_workbook(raw[:65536]):  # a workbook is no list: its bytes would read as UTF-16 or binary noise
        raise DataError(f"{what} is an Excel workbook, not a text list: save the sheet as CSV (one entry per line) "
                        "and give that file", param=param)
    if raw[:4] == ZIP_MAGIC:
        raise DataError(f"{what} is a ZIP archive, not a text list: unzip it and give the list it holds", param=param)
    enc = wide_encoding(raw[:4], encoding, what)
    if enc is not None:
        try:
            text = raw.decode(enc)
        except UnicodeDecodeError as exc:
            raise DataError(f"{what} is not valid {enc}: byte {exc.start} cannot be decoded; declare the file's "
                            "real encoding", param="encoding") from None
        return text.lstrip("\ufeff")
    if b"\x00" in raw:
        hint = ""
        if len(raw) >= 4 and (raw[1::2].count(0) > len(raw) // 4 or raw[0::2].count(0) > len(raw) // 4):
            order = "utf-16-be" if raw[0::2].count(0) > raw[1::2].count(0) else "utf-16-le"
            hint = f"; it looks like UTF-16 text without a byte-order mark: declare encoding={order}"
        raise DataError(f"{what} is not a text file (it contains NUL bytes){hint}",
                        param="encoding" if hint else param)
    enc = detect_encoding(raw, what=what, encoding=encoding, param=param)
    text = raw.decode(enc)
    return text[1:] if text.startswith("\ufeff") else text


# ====================================================================== names
#: Characters that show nothing: a zero-width space, (non-)joiner, word joiner, and a byte-order mark
#: left inside a file by joining exports. Around a name they are invisible, so they are no part of it.
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"
#: Spaces that do not break a line (as French and spreadsheet exports put inside names) show as a space.
_AS_SPACE = {0x00A0: " ", 0x2007: " ", 0x202F: " "}
_OUTER = re.compile(f"^[\\s{INVISIBLE}]+|[\\s{INVISIBLE}]+$")


def id_text(text: str) -> str:
    """A name or id as it reads: its outer spaces and invisible characters (:data:`INVISIBLE`) removed,
    a no-break space inside it a space, and its accents in one Unicode form (NFC). 'Zürich' written with
    a precomposed 'ü' (as most programs write it) and with 'u' plus a combining diaeresis (as macOS names
    files) are one text that displays the same, so it must be one entity, item or user, and match a
    declared list written either way. ASCII text only loses its outer spaces."""
    if text.isascii():
        return text.strip()
    return _OUTER.sub("", unicodedata.normalize("NFC", text).translate(_AS_SPACE))


# ====================================================================== lists
#: The words a one-column list's first line may be to be read as a header: column names that are never
#: a plausible item or entity name. Words that are (``value``, ``region``, ``site``, ``drug``, ``title``…)
#: head a list only inside an unambiguous CSV header of two or more column names (``id,name``); alone on
#: the first line they are a name — decided from the file itself, never from the data.
LONE_HEADER_WORDS = frozenset(
    """id ids item items item_id itemid item_ids item_name itemname name names drugname drug_name
    treatmentstring diagnosisstring labname movie_id entity entities entity_name hospitalid hospital_id""".split()
)


def _header_word(s: str) -> str:
    """A field as a column name is compared: quotes, case and spaces aside."""
    return s.strip().strip('"').strip().lower().replace(" ", "_")


def _is_header_field(s: str) -> bool:
    return _header_word(s) in HEADER_WORDS


def _is_lone_header(s: str) -> bool:
    return _header_word(s) in LONE_HEADER_WORDS


def _same_word(line: str, column: str) -> bool:
    """A list's first line is the name of the column the list is for."""
    return bool(_header_word(column)) and _header_word(line) == _header_word(column)


def _csv_header(first: str) -> str | None:
    """The separator of ``first`` when it is an unambiguous CSV header: split by ``,`` / tab / ``;``
    into ≥ 2 fields that are all recognised column names."""
    for sep in (",", "\t", ";"):
        parts = first.split(sep)
        if len(parts) >= 2 and all(_is_header_field(x) for x in parts):
            return sep
    return None


#: MovieLens' public genre names: the 0/1 flag columns at the end of a ``u.item`` table, in order.
MOVIELENS_GENRES = ("unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary",
                    "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller",
                    "War", "Western")


@dataclass
class PipeTable:
    """A MovieLens-style item table (``u.item``: ``id|title|date|…|flag|flag|…``): item ids, titles
    and the trailing 0/1 flag columns (MovieLens' genres)."""

    ids: list[str]
    titles: list[str]
    flags: np.ndarray
    flag_names: list[str]


def parse_pipe_table(lines: Sequence[str]) -> PipeTable | None:
    """The lines as a MovieLens-style ``u.item`` table, or None when they are not unambiguously one.
    The rule: every line has the same number (≥ 5) of ``|``-separated fields, the first field is a
    whole-number id, unique, and the last two or more fields of every line are 0 or 1. A list of
    hierarchical names (``cardiovascular|shock|vasopressors``) has no numeric id and no 0/1 tail, so it
    stays a list of names taken whole."""
    if not lines:
        return None
    rows = [ln.split("|") for ln in lines]
    width = len(rows[0])
    if width < 5 or any(len(r) != width for r in rows):
        return None
    ids = [r[0].strip() for r in rows]
    if not all(x.isascii() and x.isdigit() for x in ids) or len(set(ids)) < len(ids):
        return None
    tail = 0
    for j in range(width - 1, 1, -1):
        if all(r[j].strip() in ("0", "1") for r in rows):
            tail += 1
        else:
            break
    if tail < 2:
        return None
    flags = np.array([[float(r[j]) for j in range(width - tail, width)] for r in rows])
    names = list(MOVIELENS_GENRES) if tail == len(MOVIELENS_GENRES) else [f"flag {k + 1}" for k in range(tail)]
    return PipeTable(ids, [r[1].strip() or r[0].strip() for r in rows], flags, names)


_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def _unquoted(line: str) -> str:
    """A line that is one field in double quotes, as a spreadsheet saves a one-column list whose name holds
    a comma ('"A, ward"'), read as that field ('A, ward'), as the data's CSV reader reads the same cell;
    any other line is taken whole."""
    m = _QUOTED.fullmatch(line)
    return id_text(m.group(1).replace('""', '"')) if m else line


def parse_list(text: str, *, what: str = "item list", param: str | None = "items",
               csv_sep: str | None = None, column: str | None = None) -> ListFile:
    """Parse a list's text (see the module docstring for the rules). ``csv_sep`` declares CSV
    (id[,name]) with that separator. A MovieLens-style ``u.item`` table (:func:`parse_pipe_table`) is
    read as its ids and titles. ``column``: the name of the data column the list names (the user's
    ``--entity-col`` / ``--item-col``, a public input): a lone first line equal to it is the header."""
    lines = [id_text(ln) for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    lines = [ln for ln in lines if ln]
    out = ListFile(ids=[])
    if not lines:
        raise DataError(f"the {what} is empty; give at least one name, one per line", param=param)
    table = parse_pipe_table(lines) if csv_sep is None else None
    if table is not None:
        return ListFile(ids=table.ids, names=table.titles,
                        notes=[f"{what}: read as a MovieLens-style item table (id|title|…|{len(table.flag_names)} "
                               f"0/1 flags): {len(table.ids)} items by their ids, titles as names"])
    sep = csv_sep or _csv_header(lines[0])
    if sep is not None:
        rows = list(csv.reader(lines, delimiter=sep, skipinitialspace=True))
        if all(_is_header_field(x) for x in rows[0]):
            out.header = lines[0]
            rows = rows[1:]
        width = {len(r) for r in rows}
        if rows and min(width) < 1:
            raise DataError(f"the {what} has an empty CSV line", param=param)
        ids = [r[0].strip() for r in rows]
        names = [(r[1].strip() if len(r) > 1 and r[1].strip() else r[0].strip()) for r in rows]
        ids, names = [id_text(x) for x in ids], [id_text(x) for x in names]
        if any(x == "" for x in ids):
            i = ids.index("")
            raise DataError(f"the {what}: CSV line {i + 1 + (out.header is not None)} has no id in its first field",
                            param=param)
        has_names = any(len(r) > 1 for r in rows)
    else:
        if _is_lone_header(lines[0]) or (column is not None and _same_word(lines[0], column)):
            out.header = lines[0]
            lines = lines[1:]
        lines = [_unquoted(ln) for ln in lines]
        ids, names, has_names = lines, lines, False
    if out.header is not None:
        out.notes.append(f"{what}: first line {out.header!r} read as a header, not as a name")
    seen: dict[str, str] = {}
    keep_ids, keep_names = [], []
    for line, (x, nm) in enumerate(zip(ids, names), start=1 + (out.header is not None)):
        if x in seen:
            if has_names and nm != seen[x]:
                # one id, two names: which one is meant is the list's author's to say, not a repeat to drop
                raise DataError(f"the {what} gives id {x!r} two names ({seen[x]!r}, then {nm!r} on line {line}); "
                                "give each id one name", param=param)
            out.duplicates.append(x)
            continue
        seen[x] = nm
        keep_ids.append(x)
        keep_names.append(nm)
    if not keep_ids:
        raise DataError(f"the {what} has a header but no names; give at least one name, one per line", param=param)
    if out.duplicates:
        shown = ", ".join(repr(d) for d in out.duplicates[:5]) + (" …" if len(out.duplicates) > 5 else "")
        n = len(out.duplicates)
        out.notes.append(f"{what}: {n} repeated line{'s' if n != 1 else ''} ignored (first kept): {shown}")
    out.ids = keep_ids
    out.names = keep_names if has_names else None
    return out


def read_list(source: Any, *, what: str = "item list", param: str | None = "items", encoding: str | None = None,
              csv_sep: str | None = None, filename: str | None = None, column: str | None = None) -> ListFile:
    """Read a list from a path, bytes, an upload or a Python sequence of names (see :func:`parse_list`)."""
    if isinstance(source, ListFile):
        return source
    if isinstance(source, (list, tuple)) and all(isinstance(x, str) for x in source):
        ids = [id_text(x) for x in source if id_text(x)]
        if not ids:
            raise DataError(f"the {what} is empty; give at least one name", param=param)
        dup = [x for i, x in enumerate(ids) if x in ids[:i]] if len(ids) < 5000 else []
        uniq = list(dict.fromkeys(ids))
        lf = ListFile(ids=uniq, duplicates=dup if len(uniq) < len(ids) else [])
        if len(uniq) < len(ids):
            n = len(ids) - len(uniq)
            lf.notes.append(f"{what}: {n} repeated name{'s' if n != 1 else ''} ignored (first kept)")
        return lf
    label = filename or (str(source) if isinstance(source, (str, os.PathLike)) else f"the uploaded {what}")
    raw = read_bounded(source, what=what if isinstance(source, (str, os.PathLike)) else f"{what} {label}",
                       param=param)
    utf8_note = ""
    if (encoding is not None and not raw.isascii() and _valid_utf8(raw)
            and check_encoding(encoding) != "utf-8"):
        # the --encoding is the data file's: a list written beside it by hand is UTF-8 more often than the
        # export, and decoded as latin-1 its names would match no row (every such entity or item left out)
        encoding, utf8_note = None, (f"{what} {label}: read as UTF-8 (it is valid UTF-8), not as the data's "
                                     "encoding")
    text = decode_text(raw, what=f"{what} {label}", encoding=encoding, param=param)
    limit = env_limit("DPFED_MAX_LIST_LINES", MAX_LIST_LINES, param=param)
    if text.count("\n") > limit + 1:  # a header line besides the names
        raise DataError(f"{what} {label} has more than {limit:,} lines, the most a list may have (the names are "
                        "held in memory): check that the right file was given, or raise the limit with the "
                        "environment variable DPFED_MAX_LIST_LINES", param=param)
    lf = parse_list(text, what=what, param=param, csv_sep=csv_sep, column=column)
    if utf8_note:
        lf.notes.append(utf8_note)
    return lf


def _valid_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# ====================================================================== item features
@dataclass
class FeatureTable:
    """Public item features: ``ids`` (one per row), ``values`` (rows × features, float64) and the
    feature ``names``."""

    ids: list[str]
    values: np.ndarray
    names: list[str]
    notes: list[str] = field(default_factory=list)


def read_item_features(source: Any, *, encoding: str | None = None, filename: str | None = None,
                       param: str = "item_features") -> FeatureTable:
    """A CSV of public item features: a header line (item id column, then one column per feature), then
    one line per item. The separator is ``,``, tab or ``;`` (from the header). Item ids are exact
    strings; a repeated item is an error (which row would be meant?).

    A column is *numeric* (empty = 0) or a column of *categories*: every non-empty cell text, none a
    number (e.g. a drug class, ``Comedy|Drama`` genres, an ``a|b|c`` hierarchy). A category column
    becomes one 0/1 indicator per ``|``-separated value (``column=value``) that two or more items
    share — a value on one item relates it to nothing — the commonest :data:`MAX_CATEGORY_FEATURES`
    of the file. A column mixing numbers and text is an error naming its first odd cell (a typo in a
    numeric column must not silently become a category)."""
    what = "item features file"
    label = filename or (str(source) if isinstance(source, (str, os.PathLike)) else "the uploaded item features")
    raw = read_bounded(source, what=what if isinstance(source, (str, os.PathLike)) else f"{what} {label}",
                       param=param)
    text = decode_text(raw, what=f"{what} {label}", encoding=encoding, param=param)
    lines = [ln for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if ln.strip()]
    table = parse_pipe_table([ln.strip() for ln in lines])
    if table is not None:  # a MovieLens-style u.item: its 0/1 flag columns are the features
        return FeatureTable(table.ids, table.flags, [f"genre={g}" for g in table.flag_names],
                            notes=[f"item features read from a MovieLens-style item table: {len(table.flag_names)} "
                                   "0/1 flag columns"])
    if len(lines) < 2:
        raise DataError(f"{what} {label} needs a header line (item id, then feature names) and one line per item",
                        param=param)
    sep = max((",", "\t", ";"), key=lambda s: lines[0].count(s))
    rows = list(csv.reader(lines, delimiter=sep))
    header = [h.strip() for h in rows[0]]
    if len(header) < 2:
        raise DataError(f"{what} {label}: the header {lines[0]!r} names no feature column; expected "
                        "'item,feature1,feature2,…' separated by commas", param=param)
    if len(set(header)) < len(header) or any(h == "" for h in header[1:]):
        raise DataError(f"{what} {label}: feature names in the header must be distinct and non-empty", param=param)
    body = rows[1:]
    bad = next((i for i, r in enumerate(body) if len(r) != len(header)), None)
    if bad is not None:
        raise DataError(f"{what} {label}, line {bad + 2}: {len(body[bad])} fields where the header has "
                        f"{len(header)}", param=param)
    ids = [id_text(r[0]) for r in body]
    if any(x == "" for x in ids):
        raise DataError(f"{what} {label}, line {ids.index('') + 2}: empty item id", param=param)
    seen: set[str] = set()
    for i, x in enumerate(ids):
        if x in seen:
            raise DataError(f"{what} {label}, line {i + 2}: item {x!r} appears twice", param=param)
        seen.add(x)
    blocks: list[np.ndarray] = []
    names: list[str] = []
    categories: list[tuple[str, list[list[str]]]] = []  # (column, per item its values)
    empty: list[tuple[str, int]] = []  # numeric columns with empty cells (read as 0)
    for j, col in enumerate(header[1:]):
        cells = [r[j + 1].strip() for r in body]
        numbers = [_number_or_none(c) for c in cells]
        filled = [i for i, c in enumerate(cells) if c]
        if filled and all(numbers[i] is None for i in filled) and any(_has_letter(cells[i]) for i in filled):
            categories.append((col, [[t.strip() for t in c.split("|") if t.strip()] for c in cells]))
            continue
        vals = np.zeros(len(body), dtype=np.float64)
        for i in filled:
            v = numbers[i]
            if v is None:
                hint = (" (a column of categories holds no numbers, a numeric column no text)"
                        if any(numbers[k] is not None for k in filled) and _has_letter(cells[i]) else "")
                raise DataError(f"{what} {label}, line {i + 2}, column {col!r}: {cells[i]!r} is not a number{hint}",
                                param=param)
            if not math.isfinite(v):
                raise DataError(f"{what} {label}, line {i + 2}, column {col!r}: {cells[i]!r} is not finite",
                                param=param)
            if abs(v) > MAX_FEATURE_MAGNITUDE:
                raise DataError(f"{what} {label}, line {i + 2}, column {col!r}: {cells[i]!r} is beyond "
                                f"±{MAX_FEATURE_MAGNITUDE:.0e}, the largest feature the models fit without "
                                "overflowing; rescale the column (e.g. thousands, a logarithm)", param=param)
            vals[i] = v
        if filled and len(filled) < len(body):
            empty.append((col, len(body) - len(filled)))
        blocks.append(vals[:, None])
        names.append(col)
    # an empty cell is 0 in a column of 0/1 flags, but a wrong number in a column of years or doses
    notes: list[str] = [f"item features: column {col!r}: {n} empty cell{'s' if n != 1 else ''} read as 0 — write the value "
                        "where 0 is not what it means" for col, n in empty]
    if categories:
        # one indicator per (column, value) shared by ≥ 2 items, the commonest first (ties: file order)
        count: dict[tuple[str, str], int] = {}
        for col, per_item in categories:
            for values in per_item:
                for v in dict.fromkeys(values):
                    count[(col, v)] = count.get((col, v), 0) + 1
        shared = [k for k, c in count.items() if c >= 2]
        shared.sort(key=lambda k: -count[k])
        kept = shared[:MAX_CATEGORY_FEATURES]
        check_feature_size(len(body), len(blocks) + len(kept), what=f"{what} {label}", param=param)
        index = {k: c for c, k in enumerate(kept)}
        ind = np.zeros((len(body), len(kept)), dtype=np.float64)
        for col, per_item in categories:
            for i, values in enumerate(per_item):
                for v in values:
                    c = index.get((col, v))
                    if c is not None:
                        ind[i, c] = 1.0
        blocks.append(ind)
        names.extend(f"{col}={v}" for col, v in kept)
        for col, _ in categories:
            n_all = sum(1 for k in count if k[0] == col)
            n_kept = sum(1 for k in kept if k[0] == col)
            notes.append(f"item features: column {col!r} read as categories — {n_kept} of its {n_all} values "
                         "(those two or more items share) as 0/1 columns")
    values = np.hstack(blocks) if blocks else np.zeros((len(body), 0))
    if values.shape[1] == 0:
        raise DataError(f"{what} {label}: no usable feature column (every category value is on one item only)",
                        param=param)
    return FeatureTable(ids=ids, values=values, names=names, notes=notes)


#: The largest magnitude of a numeric item feature: the sites' content and popularity models use the
#: features as they are and square them (a feature profile, a ridge fit), so far beyond this the
#: scores overflow to infinity — the bound the long table puts on its values.
MAX_FEATURE_MAGNITUDE = 1e15
#: Most indicator columns a file's category columns become (the commonest values first).
MAX_CATEGORY_FEATURES = 2000
#: Most values (items × feature columns) a feature table may hold in memory: 2^24 doubles = 128 MiB,
#: checked before the table is built (a 150,000-line file with 2,000 category values would otherwise
#: ask for 2.2 GiB). ``DPFED_MAX_FEATURE_VALUES`` raises it on a machine that has the memory.
MAX_FEATURE_VALUES = 2 ** 24


def check_feature_size(n_items: int, n_columns: int, *, what: str, param: str) -> None:
    """Refuse, before allocating, a feature table of more than :data:`MAX_FEATURE_VALUES` values."""
    limit = env_limit("DPFED_MAX_FEATURE_VALUES", MAX_FEATURE_VALUES, param=param)
    cells = int(n_items) * int(n_columns)
    if cells > limit:
        raise DataError(f"{what}: {n_items:,} items × {n_columns:,} feature columns = {cells:,} values "
                        f"({cells * 8 / 2**30:.2f} GiB) is above the limit of {limit:,} values ({limit * 8 / 2**20:.0f} "
                        "MiB); keep only the catalogue's items in the file or fewer category columns (the limit is "
                        "the environment variable DPFED_MAX_FEATURE_VALUES)", param=param)


def _number_or_none(text: str) -> float | None:
    try:
        return strict_float(text) if text else None
    except ValueError:
        return None


def _has_letter(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


# ====================================================================== numbers
_FLOAT_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_INT_RE = re.compile(r"[+-]?\d+", re.ASCII)


def strict_float(text: str) -> float:
    """A decimal number as written in ASCII (``1``, ``-2.5``, ``1e-6``, ``inf``) — Python's ``float``
    also takes ``1_0`` (= 10), full-width digits and ``nan``, which an input must not mean."""
    t = str(text).strip()
    low = t.lower()
    if low in ("inf", "+inf", "infinity", "+infinity", "∞"):
        return math.inf
    if not _FLOAT_RE.fullmatch(t):
        raise ValueError(f"not a number: {text!r}")
    return float(t)


def strict_int(text: str) -> int:
    """A whole number as written in ASCII digits (no ``1_0``, no ``1.0``, no full-width digits)."""
    t = str(text).strip()
    if not _INT_RE.fullmatch(t) or len(t) > 40:
        raise ValueError(f"not a whole number: {text!r}")
    return int(t)


def env_limit(name: str, default: int | float, *, param: str | None, whole: bool = True) -> int | float:
    """A size limit from the environment variable ``name`` — ``default`` when it is unset or empty; a
    value that is not a positive (whole) finite number is one error naming the variable, never a
    traceback or a silent default."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = strict_int(text) if whole else strict_float(text)
    except ValueError:
        value = -1
    if not (value > 0 and math.isfinite(value)):
        raise DataError(f"{name}={text!r} must be a positive {'whole ' if whole else ''}number (unset it for the "
                        f"default {default:,})", param=param)
    return value


# ====================================================================== JSON documents
def _json_depth_ok(text: str, limit: int) -> bool:
    """True when no bracket nesting (outside strings) exceeds ``limit`` — checked before parsing so a
    hostile document never reaches the recursive parser."""
    depth = 0
    in_str = esc = False
    for m in re.finditer(r'[\[\]{}"\\]', text):
        ch = m.group(0)
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                # an escape consumes the next character only when it is adjacent
                esc = text[m.start() + 1:m.start() + 2] in '"\\'
                continue
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def read_json_document(path: str | os.PathLike, *, what: str, param: str | None) -> Any:
    """A JSON document from a regular file: bounded size, bounded nesting, UTF-8; every failure is a
    :class:`DataError` naming ``what`` (e.g. "--resume FILE")."""
    raw = read_bounded(path, what=what, param=param, limit=MAX_JSON_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{what} {path} is not a JSON document (not UTF-8 text at byte {exc.start})",
                        param=param) from None
    if not _json_depth_ok(text, MAX_JSON_DEPTH):
        raise DataError(f"{what} {path} is not a result document: nested deeper than {MAX_JSON_DEPTH} levels",
                        param=param)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise DataError(f"{what} {path} is not a JSON document ({exc})", param=param) from None


# ====================================================================== outputs vs inputs
def _identity(p: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(p)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def check_output_not_input(out: str | os.PathLike, inputs: Sequence[tuple[str, Any]], flag: str = "--out",
                           param: str = "out") -> None:
    """Refuse an output path that is one of the inputs: the same path, a symbolic link to it or a hard
    link of it (same device and inode). ``inputs``: (flag, path) pairs; a folder input (a MovieLens
    or eICU directory) protects every file inside it. Checked before anything is computed."""
    o = Path(out).expanduser()
    o_real = Path(os.path.realpath(o))
    o_id = _identity(o)
    for in_flag, src in inputs:
        if src is None or not isinstance(src, (str, os.PathLike)) or str(src).startswith("sample:"):
            continue
        ip = Path(src).expanduser()
        i_real = Path(os.path.realpath(ip))
        if not os.path.lexists(ip):
            same = o_real == i_real  # e.g. a budget store not created yet: the path is still taken
        else:
            same = o_real == i_real or (o_id is not None and o_id == _identity(ip))
        if not same and i_real.is_dir():
            inside = o_real.parent == i_real or i_real in o_real.parents
            if inside and o_id is not None:
                same = True
            elif o_id is not None:
                try:  # a hard link elsewhere of a file of the data folder
                    same = any(_identity(c) == o_id for c in i_real.iterdir() if c.is_file())
                except OSError:
                    same = False
        if same:
            raise ConfigError(f"{flag} {out} is the input {in_flag} {src} (the same file, a link to it, or a "
                              f"file of that input folder); writing it would destroy the input — choose another "
                              f"{flag}", param=param)


def check_one_entity_source(entities, entities_from_data: bool) -> None:
    """A declared entity list and the consent to read the list from the data are two answers to one
    question: given both, one would silently win (and the consent say nothing)."""
    if entities is not None and entities_from_data:
        raise ConfigError("both a declared entity list (entities=FILE) and entities_from_data (read the list from the "
                          "data) are given, and one would silently win: keep one", param="entities_from_data")


def split_names(text: str) -> list[str]:
    """Comma-separated names; a name holding a comma is written in double quotes ('"A, ward",B'), as in
    a CSV line, since an entity named so could not be given otherwise. Raises ``ValueError`` on a
    line the CSV reader refuses, and on a name given twice: a second copy would run (and be charged)
    again or say nothing, so the list was mistyped."""
    try:
        fields = next(csv.reader([text], skipinitialspace=True, strict=True), [])
    except csv.Error:
        raise ValueError(f"cannot read {text!r} as comma-separated names (a quote is left open?); write a name "
                         "holding a comma in double quotes: '\"A, ward\",B'") from None
    names = [id_text(t) for t in fields if id_text(t)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{', '.join(repr(n) for n in twice)} given more than once in {text!r}; name each once")
    return names
