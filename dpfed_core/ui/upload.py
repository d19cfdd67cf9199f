"""The Data page's reading of an upload for the column mapper: the engine's reader
(:func:`dpfed_core.data.upload.read_upload`), and a header that repeats a name refused before any
mapping. A reader numbers the repeats ('site', 'site.1'): the mapper would offer names that no column of
the file has, and the loader refuses them only once the user has mapped and built."""
from __future__ import annotations

import pandas as pd

from dpfed_core.data import upload
from dpfed_core.errors import DataError


def repeated_names_text(filename: str, header: list[str], repeated: list[str], control: str) -> str:
    """The loader's refusal of a header naming a column twice, for every repeated name at once, as written
    in the file ('the header names 2 columns 'site' (columns 4, 5)'), and how to fix it."""
    parts = []
    for name in repeated:
        at = [i + 1 for i, n in enumerate(header) if n == name]
        parts.append(f"{len(at)} columns {name!r} (columns {', '.join(map(str, at))})")
    return (f"{filename}: the header names {' and '.join(parts)}, so which one is meant is ambiguous; give each "
            f"column its own name in the file (rename the repeated {'names' if len(repeated) > 1 else 'name'} "
            f"there) and upload it again with the {control}")


def read_upload(data: bytes, filename: str, min_columns: int = 3, what: str = "uploaded table",
                encoding: str | None = None) -> tuple[pd.DataFrame, bool]:
    """The uploaded table for the column mapper and whether its first line is data, as
    :func:`dpfed_core.data.upload.read_upload` reads it; a header that repeats a name is refused with
    the names as written in the file (``min_columns`` below 3: the user-attribute table's upload)."""
    df, no_header = upload.read_upload(data, filename, min_columns, what, encoding)
    repeated = [] if no_header else [str(n) for n in df.attrs.get("repeated_names") or []]
    if repeated:
        control = upload.UPLOAD_CONTROL if min_columns >= 3 else upload.ATTRIBUTE_CONTROL
        raise DataError(repeated_names_text(filename, [str(n) for n in df.attrs.get("header_names") or []],
                                            repeated, control), param="data")
    return df, no_header


def mappable_columns(df: pd.DataFrame) -> tuple[list[str], str | None]:
    """The columns the mapper offers — every column but those whose header cell is blank, which the
    reader names 'Unnamed: N' (no column of the file is called so, and the loader refuses the
    placeholder) — and the sentence saying which were left out and how to map one, or None."""
    blank = {str(c) for c in df.attrs.get("blank_names") or []}
    cols = [str(c) for c in df.columns]
    if not blank:
        return cols, None
    at = [str(i + 1) for i, c in enumerate(cols) if c in blank]
    said = (f"Column{'s' if len(at) > 1 else ''} {', '.join(at)} {'have' if len(at) > 1 else 'has'} no name in the "
            f"header line, so {'they are' if len(at) > 1 else 'it is'} not offered below (a spreadsheet's row numbers "
            "often are such a column); to map one, give it a name in the file and upload it again.")
    return [c for c in cols if c not in blank], said
