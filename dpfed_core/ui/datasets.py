"""The loaded dataset as the dashboard shows it, and the cache keys of everything computed from it
(content hashes of the whole dataset and the whole configuration)."""
from __future__ import annotations

import hashlib
import json
from typing import Iterable

import numpy as np
import pandas as pd

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.split import Split
from dpfed_core.evaluation.experiments import make_split
from dpfed_core.evaluation.verdicts import format_epsilon
from dpfed_core.ui.inputs import escape_md

SAMPLES = {
    "sample:clinic": "Clinic sample — ICU stays × lab and medication names, hospitals as entities",
    "sample:synthetic": "Synthetic sample — the paper's Poisson model (§5.1), 10 entities",
}


DEFAULT_SAMPLE = "sample:clinic"


#: Entities below this many users get a warning on the Data page: with a 20 % test split they
#: have too few training users for a handful of prototypes and one or two test users.
SMALL_ENTITY_USERS = 20


def _hash_strings(h, values) -> None:
    """Feed a sequence of ids / names into ``h`` unambiguously (length-prefixed, so ("ab", "c")
    and ("a", "bc") differ)."""
    for v in values:
        b = str(v).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)


def dataset_fingerprint(ds: FederatedDataset) -> str:
    """A content hash of the *whole* dataset: the cache key of everything computed from it.

    Covers every value and position of X (the CSR arrays with their dtypes and shape), every user id,
    item id and item name, the entity of every user and the entity names, the value kind and bound,
    the dataset's name and its notes. Two uploads that differ anywhere get different keys, so one
    person's cached results are never served for another person's data.
    """
    h = hashlib.sha256()
    X = ds.X
    for arr in (X.data, X.indices, X.indptr, np.asarray(ds.entity_of_user)):
        a = np.ascontiguousarray(arr)
        h.update(str(a.dtype).encode())
        h.update(len(a.tobytes()).to_bytes(8, "little"))
        h.update(a.tobytes())
    for seq in (ds.user_ids, ds.item_ids, ds.item_names, ds.entity_names, ds.notes):
        h.update(b"\x1e" + len(seq).to_bytes(8, "little"))
        _hash_strings(h, seq)
    h.update(json.dumps([ds.value_kind, float(ds.value_max), list(X.shape), ds.name]).encode())
    return h.hexdigest()[:32]


def config_key(config: RunConfig) -> str:
    """The full configuration (seed, split, budget split included) as a canonical string."""
    from dpfed_core.evaluation.experiments import json_safe

    return json.dumps(json_safe(config.to_dict()), sort_keys=True)


def entity_table(ds: FederatedDataset, small: int = SMALL_ENTITY_USERS) -> pd.DataFrame:
    """Per-entity users, items, interactions and density, with a flag for too-small entities."""
    df = pd.DataFrame(ds.summary())
    df["too_small"] = df["users"] < small
    return df


def small_entity_warning(ds: FederatedDataset, small: int = SMALL_ENTITY_USERS,
                         test_fraction: float | None = None) -> str | None:
    """Entities of fewer than ``small`` users, named; ``test_fraction``: the session's setting when it
    has one (the Federate page's “Test users per entity”), else the default is said to be the default."""
    df = entity_table(ds, small)
    bad = df[df["too_small"]]
    if bad.empty:
        return None
    names = ", ".join(f"{escape_md(r.entity)} ({r.users} user{'' if r.users == 1 else 's'})"
                      for r in bad.head(8).itertuples())
    more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
    held = (f"the default {100 * RunConfig.__dataclass_fields__['test_fraction'].default:g} %" if test_fraction is None
            else f"{100 * float(test_fraction):g} %")
    return (f"{len(bad)} of {len(df)} entities have fewer than {small} users: {names}{more}. "
            f"With {held} of users held "
            "out for testing (Federate → “Test users per entity”) they have very few training users: their own model "
            "learns little, and a prototype method's k is capped by their size; consider a coarser federation "
            "key or a "
            "declaration that leaves them out (“Leave out entities”); no entity is dropped for its true size.")


def dataset_overview(ds: FederatedDataset) -> dict:
    return {
        "name": ds.name, "users": ds.n_users, "items": ds.n_items, "entities": ds.n_entities,
        "interactions": int(ds.X.nnz), "density": float(ds.X.nnz / max(ds.n_users * ds.n_items, 1)),
        "value_kind": ds.value_kind, "value_max": ds.value_max,
    }


def is_event_data(ds: FederatedDataset) -> bool:
    """Event data (counts of events per stay, e.g. eICU medications): the clinical set metrics apply."""
    return ds.value_kind in ("counts", "implicit")


def split_for(ds: FederatedDataset, config: RunConfig) -> Split:
    """The split every method of a run with this config sees (the engine's own)."""
    return make_split(ds, config)


def run_key(ds: FederatedDataset, config: RunConfig) -> str:
    """Cache key of one run: the whole dataset's content hash and the whole configuration."""
    return "run:" + hashlib.sha256((dataset_fingerprint(ds) + config_key(config)).encode()).hexdigest()


def sweep_key(ds: FederatedDataset, config: RunConfig, epsilons: Iterable[float], seeds: Iterable[int],
              references: Iterable[str]) -> str:
    body = json.dumps([dataset_fingerprint(ds), config_key(config), [format_epsilon(e) for e in epsilons],
                       list(map(int, seeds)), list(references)])
    return "sweep:" + hashlib.sha256(body.encode()).hexdigest()


def generic_key(kind: str, ds: FederatedDataset, *parts) -> str:
    from dpfed_core.evaluation.experiments import json_safe

    body = json.dumps([dataset_fingerprint(ds), json_safe(list(parts))], sort_keys=True, default=str)
    return f"{kind}:" + hashlib.sha256(body.encode()).hexdigest()
