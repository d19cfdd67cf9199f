"""Per-entity shard files: the only data a node of a deployment ever loads.

:func:`write_shards` takes any dataset the project loads (plus its train/test split) and writes one
``.npz`` per entity holding that entity's rows only: training matrix, hidden test entries, its test
users, and the public facts every node needs (entity name and position in the declared federation,
number of entities, number of items, the public value bound) and the names of its columns (the
labels of the axis its matrices are on: what a node hashes to the public buckets of a federation-wide
DP catalogue). Public item features are not in a shard: they are one public file every node is given
(:func:`write_item_features`, ``--node-config "item-features='…'"``). A site of a real deployment runs the
same writer on its own export and keeps the file on its own machine (docs/DEPLOYMENT.md).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpfed_core.errors import ConfigError

#: 2: a shard states where its items come from and its declared catalogue's size, which its node reads
#: instead of the run's message; a version-1 shard (without them) is refused, naming write-shards.
SHARD_VERSION = 2
#: The item features file's format (unchanged by the shard's).
FEATURES_VERSION = 1


@dataclass(frozen=True)
class Shard:
    """One entity's data as a node sees it. ``train``/``test``: csr (n_h × m); ``test_users``: row
    positions within the entity; ``index``/``n_entities``: its place in the declared federation."""

    entity: str
    index: int
    n_entities: int
    train: sp.csr_matrix
    test: sp.csr_matrix
    test_users: np.ndarray
    value_max: float
    dataset_name: str
    #: names of the columns (the labels of the axis ``train``/``test`` are on), hashed by the node to
    #: the public buckets of a federation-wide DP catalogue; None in a shard written without them
    item_names: np.ndarray | None = None
    #: how many of the first columns are the declared public catalogue (the rest are the entity's own
    #: items, never in a message), as the site's own export states it; None when its items are no
    #: declared list
    n_declared: int | None = None
    #: where the shard's item names come from ("declared": a public list; else the site's own data);
    #: every shard of the current format states it
    item_source: str | None = None
    #: the items' ids (what the site's odometer recognises its people by, whatever column each item
    #: sits in); None in a shard written without them
    item_ids: np.ndarray | None = None


def _csr_parts(prefix: str, X: sp.csr_matrix) -> dict:
    X = sp.csr_matrix(X, dtype=np.float64)
    return {f"{prefix}_data": X.data, f"{prefix}_indices": X.indices, f"{prefix}_indptr": X.indptr,
            f"{prefix}_shape": np.asarray(X.shape, dtype=np.int64)}


def _csr_from(z, prefix: str) -> sp.csr_matrix:
    return sp.csr_matrix((z[f"{prefix}_data"], z[f"{prefix}_indices"], z[f"{prefix}_indptr"]),
                         shape=tuple(int(s) for s in z[f"{prefix}_shape"]))


def write_shards(dataset, split, out_dir: str | os.PathLike, declared: list[str] | None = None,
                 only: list[str] | None = None) -> list[Path]:
    """Write ``entity_000.npz`` … into ``out_dir`` (created if needed); returns the paths in entity
    order. Each file is written to a temporary name and renamed, so no half-written shard exists.

    ``declared``: the federation's public entity list, for a site that exports only its own entity
    (its shard then carries its position in that list and the list's length). ``only``: the entities
    whose shards are written (a site's export read in the declared federation: its own)."""
    names = [str(n) for n in dataset.entity_names]
    if declared is not None:
        declared = [str(d) for d in declared]
        unknown = [n for n in names if n not in declared]
        if unknown or len(set(declared)) != len(declared):
            raise ConfigError(f"entities {unknown} are not in the declared federation {declared} (or it lists "
                              "one twice); fix --declared-entities")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train = sp.csr_matrix(split.train)
    test = sp.csr_matrix(split.test)
    test_users = np.asarray(split.test_users, dtype=np.int64)
    paths = []
    for h, (name, sl) in enumerate(zip(dataset.entity_names, dataset.entity_slices())):
        if only is not None and str(name) not in only:
            continue
        local_test = test_users[(test_users >= sl.start) & (test_users < sl.stop)] - sl.start
        index = h if declared is None else declared.index(str(name))
        total = dataset.n_entities if declared is None else len(declared)
        payload = {
            "version": np.asarray(SHARD_VERSION), "entity": np.asarray(str(name)), "index": np.asarray(index),
            "n_entities": np.asarray(total), "value_max": np.asarray(float(dataset.value_max)),
            "dataset_name": np.asarray(str(dataset.name)), "test_users": local_test,
            "item_names": np.asarray([str(n) for n in dataset.item_names], dtype=str),
            "item_ids": np.asarray([str(i) for i in dataset.item_ids], dtype=str),
            # the node reads its catalogue from its own file, never from the coordinator's message
            **({"n_declared": np.asarray(int(dataset.n_items if dataset.shared_columns is None
                                             else dataset.n_declared))}
               if dataset.item_source == "declared" else {}),
            "item_source": np.asarray(str(dataset.item_source)),
            **_csr_parts("train", train[sl]), **_csr_parts("test", test[sl]),
        }
        path = out / f"entity_{index:03d}.npz"
        fd, tmp = tempfile.mkstemp(dir=out, suffix=".npz.tmp")
        os.close(fd)
        with open(tmp, "wb") as f:
            np.savez(f, **payload)
        os.replace(tmp, path)
        paths.append(path)
    return paths


def other_shards(out_dir: str | os.PathLike, written: list[Path], dataset_name: str,
                 n_entities: int) -> tuple[list[Path], int]:
    """The shard files in ``out_dir`` an export did not write (``written``), and how many of them belong to
    another export — other data or another number of entities, or no readable shard at all. A folder
    written to twice keeps the first export's files the second does not replace (a federation of more
    entities before one of fewer, or other sites' exports), and a SuperNode pointed at one reads it."""
    mine = {Path(w).name for w in written}
    others = sorted(q for q in Path(out_dir).glob("entity_*.npz") if q.name not in mine)
    foreign = 0
    for q in others:
        try:
            with np.load(q, allow_pickle=False) as z:
                same = str(z["dataset_name"]) == str(dataset_name) and int(z["n_entities"]) == int(n_entities)
        except (KeyError, ValueError, OSError):
            same = False
        foreign += not same
    return others, foreign


def load_shard(path: str | os.PathLike) -> Shard:
    """Read one shard; a missing or foreign file is a :class:`ConfigError` naming the path and the
    SuperNode's ``--node-config data-path=…`` that points at it."""
    p = Path(path)
    if not p.is_file():
        # a folder is no shard either: saying it "does not exist" would send its operator looking for a typo
        state = "is a folder, not a shard file" if p.is_dir() else "does not exist"
        raise ConfigError(f"shard file {p} {state}; fix the SuperNode's --node-config \"data-path='…'\"")
    try:
        with np.load(p, allow_pickle=False) as z:
            if int(z["version"]) != SHARD_VERSION:
                raise ConfigError(f"shard {p} has format version {int(z['version'])}, expected {SHARD_VERSION}; "
                                  "rewrite it with `python -m dpfed_core write-shards`")
            return Shard(str(z["entity"]), int(z["index"]), int(z["n_entities"]), _csr_from(z, "train"),
                         _csr_from(z, "test"), np.asarray(z["test_users"], dtype=np.int64),
                         float(z["value_max"]), str(z["dataset_name"]),
                         np.asarray(z["item_names"]) if "item_names" in z.files else None,
                         int(z["n_declared"]) if "n_declared" in z.files else None,
                         str(z["item_source"]),
                         np.asarray(z["item_ids"]) if "item_ids" in z.files else None)
    except (KeyError, ValueError, OSError) as exc:
        raise ConfigError(f"{p} is not a dpfed shard file ({exc}); write shards with "
                          "`python -m dpfed_core write-shards`") from None


def write_item_features(features: np.ndarray, names, path: str | os.PathLike) -> Path:
    """Write the dataset's public item features (n_items × f, float) and their names to ``path``
    (``.npz``, temporary name then rename): the one public file every node is pointed at with
    ``--node-config "item-features='…'"``. Public input, no entity's data."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    F = np.ascontiguousarray(np.asarray(features, dtype=np.float64))
    fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".npz.tmp")
    os.close(fd)
    with open(tmp, "wb") as f:
        np.savez(f, version=np.asarray(FEATURES_VERSION), features=F,
                 names=np.asarray([str(n) for n in names], dtype=str))
    os.replace(tmp, p)
    return p


def load_item_features(path: str | os.PathLike, n_items: int) -> tuple[np.ndarray, list[str]]:
    """The public item features at ``path`` (written by :func:`write_item_features`) for a shard of
    ``n_items`` columns: ``(features n_items × f, names)``. A missing, foreign or mis-shaped file is
    a :class:`ConfigError` naming the SuperNode's ``--node-config item-features=…``."""
    p = Path(path)
    fix = "fix the SuperNode's --node-config \"item-features='…'\""
    if not p.is_file():
        raise ConfigError(f"item features file {p} {'is a folder' if p.is_dir() else 'does not exist'}; {fix}")
    try:
        with np.load(p, allow_pickle=False) as z:
            F = np.asarray(z["features"], dtype=np.float64)
            names = [str(n) for n in z["names"]]
    except (KeyError, ValueError, OSError) as exc:
        raise ConfigError(f"{p} is not a dpfed item features file ({exc}); {fix}") from None
    if F.ndim != 2 or F.shape != (int(n_items), len(names)) or not np.all(np.isfinite(F)):
        raise ConfigError(f"item features {p} are {F.shape} with {len(names)} names; this node's shard has "
                          f"{n_items} items (finite numbers needed); {fix}")
    return F, names
