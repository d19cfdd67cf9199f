"""MovieLens 100K and 1M: a GroupLens directory read as a federated dataset, and its download.

MovieLens is the paper's benchmark: the federation is the first digit of the users' ZIP codes (or
gender, occupation, age band), the catalogue is the public movie file and the entity lists are public
metadata, so nothing that decides the shape of a message is read off the ratings. The header-less
``::``/``|``/tab formats are MovieLens' own, hence their reader here rather than in
:mod:`dpfed_core.data.tables`; the rows then go through the common long-table build.
"""
from __future__ import annotations

import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.features import attach_item_features, movielens_item_features
from dpfed_core.data.inputs import read_list
from dpfed_core.data.long_table import _as_list_file, _build, _reject_removed
from dpfed_core.data.tables import Source, _row_ref
from dpfed_core.errors import ConfigError, DataError

__all__ = ["load_movielens", "fetch_movielens", "default_cache_dir"]


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
    undeclared_entities: Literal["drop", "error"] = "drop",
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
        listing = f" Found: {found}."
        raise DataError(
            f"{root} is not a MovieLens 100K or 1M directory: expected u.data, u.user and u.item "
            f"(100K) or ratings.dat, users.dat and movies.dat (1M).{listing}", listing=(listing,)
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
            f"user {ratings.at[i, 'user']!r} is not in the users file ({int(ent.isna().sum())} such "
            f"row{'' if int(ent.isna().sum()) == 1 else 's'}). "
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
        items=_as_list_file(catalogue, what="item list", param="items"),
        # named by its folder and format, never by its size: a directory of the 100K layout may hold any
        # users, and a name saying whether it holds exactly the published set would say who is in it
        name=name or f"{root.name} (MovieLens {version} format, {federation} federation)", entities=declared_entities,
        undeclared_entities=undeclared_entities,
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
