"""Public item side information: an item × feature matrix attached to a dataset.

Sources, all public (they describe the catalogue, never the users):

- ``item_features=FILE`` — a CSV of item id + feature columns, numeric or categories (``|``-separated
  values become 0/1 columns)
  (:func:`dpfed_core.data.inputs.read_item_features`);
- MovieLens ``u.item`` — the 19 genre flags and the release year / decade;
- eICU — the ``|``-separated hierarchy of treatment and diagnosis names (one indicator per prefix
  shared by two or more items) and the tokens of normalised drug names. These are derived from the
  *catalogue's* names only, so only from a declared catalogue (a formulary): names read off the
  private rows would carry the rows' information into the feature list.

The matrix is dense (n_items × f, float64): f is tens to a few thousand columns, O(items × f) like V.
The dataset's notes record it as a public input (no privacy cost).
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.inputs import FeatureTable, read_item_features
from dpfed_core.errors import DataError

#: Most indicator columns derived from names (hierarchy prefixes, drug tokens): the commonest first.
MAX_NAME_FEATURES = 2000


def as_feature_table(features: Any, encoding: str | None = None) -> FeatureTable | None:
    """Item features given as a file path, bytes, an upload, a JSON dict or a :class:`FeatureTable`."""
    if features is None or isinstance(features, FeatureTable):
        return features
    if isinstance(features, dict):  # the dashboard's JSON form: {"ids": […], "values": [[…]], "names": […]}
        return FeatureTable(ids=[str(x) for x in features["ids"]],
                            values=np.asarray(features["values"], dtype=np.float64).reshape(len(features["ids"]), -1),
                            names=[str(x) for x in features["names"]],
                            notes=[str(x) for x in features.get("notes", [])])
    return read_item_features(features, encoding=encoding)


def feature_table_json(table: FeatureTable) -> dict:
    """A feature table as plain JSON values (the dashboard passes loader options as JSON)."""
    return {"ids": list(table.ids), "values": table.values.tolist(), "names": list(table.names),
            "notes": list(table.notes)}


def attach_item_features(ds: FederatedDataset, features: Any = None, *, derived: FeatureTable | None = None,
                         encoding: str | None = None) -> FederatedDataset:
    """``ds`` with public item features: ``derived`` (what the loader knows) and ``features`` (a file,
    bytes or a :class:`FeatureTable`), matched to the catalogue by item id (then by item name), side
    by side. Catalogue items without a row get zeros; rows of other items are ignored; both are noted."""
    tables = [t for t in (derived, as_feature_table(features, encoding)) if t is not None]
    if not tables:
        return ds
    blocks, names, notes = [], [], list(ds.notes)
    ids = [str(x) for x in ds.item_ids]
    inames = [str(x) for x in ds.item_names]
    for k, tab in enumerate(tables):
        row_of = {x: i for i, x in enumerate(tab.ids)}
        pos = np.asarray([row_of.get(a, row_of.get(b, -1)) for a, b in zip(ids, inames)], dtype=np.int64)
        block = np.zeros((ds.n_items, tab.values.shape[1]))
        hit = pos >= 0
        declared = k == len(tables) - 1 and features is not None
        if declared and not hit.any():
            # every item would get all-zero features: the ids are written otherwise than the data's
            raise DataError(f"no item of the item features file is an item of the data (its ids: "
                            f"{', '.join(map(repr, tab.ids[:3]))} …; the data's: {', '.join(map(repr, ids[:3]))} …); "
                            "ids are matched as exact strings ('0242' is not '242'): write them as the data's "
                            "item column does", param="item_features")
        block[hit] = tab.values[pos[hit]]
        blocks.append(block)
        names.extend(tab.names)
        source = "declared item features file" if declared else \
            "item metadata the loader knows"
        unused = len(tab.ids) - int(len(set(pos[hit].tolist())))
        notes.append(f"public input: {tab.values.shape[1]} item features from the {source} "
                     f"({int(hit.sum())} of {ds.n_items} items matched"
                     f"{f'; {ds.n_items - int(hit.sum())} without a row get zeros' if not hit.all() else ''}"
                     f"{f'; {unused} rows name items outside the catalogue, ignored' if unused else ''}); "
                     "no privacy cost")
        notes.extend(tab.notes)
    F = np.hstack([ds.item_features] + blocks) if ds.item_features is not None else np.hstack(blocks)
    all_names = [*ds.item_feature_names, *names]
    if len(set(all_names)) < len(all_names):  # the same name from two sources: keep both, told apart
        seen: dict[str, int] = {}
        uniq = []
        for nm in all_names:
            seen[nm] = seen.get(nm, 0) + 1
            uniq.append(nm if seen[nm] == 1 else f"{nm} ({seen[nm]})")
        all_names = uniq
    return replace(ds, item_features=F, item_feature_names=all_names, notes=notes)


def _indicators(ids: Sequence[str], keys_per_item: list[list[str]], prefix: str) -> FeatureTable:
    """One 0/1 column per key shared by ≥ 2 items (the commonest ``MAX_NAME_FEATURES``)."""
    from collections import Counter

    count = Counter(k for keys in keys_per_item for k in set(keys))
    keep = [k for k, c in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])) if c >= 2][:MAX_NAME_FEATURES]
    col = {k: j for j, k in enumerate(keep)}
    rows = [i for i, keys in enumerate(keys_per_item) for k in set(keys) if k in col]
    cols = [col[k] for keys in keys_per_item for k in set(keys) if k in col]
    M = np.zeros((len(ids), len(keep)))
    M[rows, cols] = 1.0
    return FeatureTable(ids=list(ids), values=M, names=[f"{prefix}{k}" for k in keep])


def hierarchy_features(ids: Sequence[str], names: Sequence[str], max_depth: int = 3) -> FeatureTable:
    """eICU treatment / diagnosis strings ``a|b|c|leaf``: an indicator per prefix (``a``, ``a|b``,
    ``a|b|c``, up to ``max_depth`` levels) shared by two or more items."""
    keys = []
    for nm in names:
        parts = [p.strip().lower() for p in str(nm).split("|") if p.strip()]
        keys.append(["|".join(parts[:d]) for d in range(1, min(max_depth, len(parts) - 1) + 1)])
    return _indicators(ids, keys, "path: ")


def drug_token_features(ids: Sequence[str], names: Sequence[str]) -> FeatureTable:
    """Normalised drug names (``insulin aspart``, ``ipratropium-albuterol``): an indicator per word
    token shared by two or more drugs (drugs of one family or combination share a column)."""
    keys = [[t for t in re.split(r"[\s\-/,]+", str(nm).lower()) if len(t) > 2] for nm in names]
    return _indicators(ids, keys, "token: ")


def movielens_item_features(item_ids: Sequence[str], genre_flags: np.ndarray, genre_names: Sequence[str],
                            release_dates: Sequence[str]) -> FeatureTable:
    """MovieLens ``u.item``: the genre flags, the release year (0 when unknown) and a one-hot decade."""
    years = np.array([_year(d) for d in release_dates], dtype=np.float64)
    decades = sorted({int(y // 10 * 10) for y in years if y > 0})
    D = np.zeros((len(item_ids), len(decades)))
    for j, dec in enumerate(decades):
        D[:, j] = (years > 0) & (years // 10 * 10 == dec)
    values = np.hstack([np.asarray(genre_flags, dtype=np.float64), years[:, None], D])
    names = [f"genre: {g}" for g in genre_names] + ["release year"] + [f"decade: {d}s" for d in decades]
    return FeatureTable(ids=[str(x) for x in item_ids], values=values, names=names)


def _year(date: str) -> float:
    m = re.search(r"(18|19|20)\d\d", str(date))
    return float(m.group(0)) if m else 0.0
