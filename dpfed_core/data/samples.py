"""The generated sample datasets committed in ``sample_data/``, and their public lists.

A sample is made by ``sample_data/generate.py`` from public parameters, so its item catalogue and its
federation are the generator's own lists (never read off the sample file) and the dataset is marked
``generated``: it holds no one's records.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Sequence

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.long_table import _reject_removed, load_long_table
from dpfed_core.data.tables import Source
from dpfed_core.errors import ConfigError, DataError

__all__ = ["load_sample", "sample_catalogue", "sample_entities", "SAMPLES", "SAMPLE_DIR"]

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
    undeclared_entities: Literal["drop", "error"] = "drop",
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
        undeclared_entities=undeclared_entities,
        item_features=item_features,
        name=f"sample: {key}" + (f" by {federation}" if federation else ""),
        # messages name what the user chose, not where the server keeps it
        filename=f"sample:{key}" if sample_dir is None else None,
    )
    if not _is_bundled(path, meta["file"]):
        # another folder's file under a sample's name may hold anyone's records: it is data like any
        # other (a simulation run on it is charged as a non-private release), never a generated sample
        return ds
    from dataclasses import replace

    return replace(ds, generated=True)  # made by sample_data/generate.py from public parameters: no one's records


def _is_bundled(path: Path, file: str) -> bool:
    """Is ``path`` the bundled sample file itself, or a byte-for-byte copy of it?"""
    import filecmp

    bundled = Path(SAMPLE_DIR) / file
    try:
        return path.resolve() == bundled.resolve() or filecmp.cmp(path, bundled, shallow=False)
    except OSError:
        return False
