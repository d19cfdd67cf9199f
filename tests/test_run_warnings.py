"""A run that learned nothing says why and which control fixes it: never a plain
success."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from dpfed_core.cli.main import render_error
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import run_method


def _small(item_source="data", n=12):
    """Users who favour popular items (item j chosen with probability ∝ 1/(j + 1)): learnable."""
    g = np.random.default_rng(0)
    p = 1.0 / np.arange(1, 16)
    X = sp.csr_matrix((g.random((3 * n, 15)) < 0.9 * p / p.max()).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], n), value_kind="counts", value_max=1.0,
                                     name="small")
    return replace(ds, item_source=item_source)


def test_an_empty_dp_catalogue_is_a_warning_naming_the_catalogue():
    doc, _ = run_method(_small(), RunConfig(method="dp-cooccurrence", epsilon=0.5, rank=2, simulation=True))
    codes = [w["code"] for w in doc["warnings"]]
    assert "empty-catalogue" in codes
    w = doc["warnings"][codes.index("empty-catalogue")]
    assert "--items" in render_error(ConfigError(w["text"], param=w["param"]))


def test_a_run_that_learned_something_has_no_such_warning():
    doc, _ = run_method(_small("declared", n=60), RunConfig(method="local", rank=2))
    assert not [w for w in doc["warnings"] if w["code"] in ("empty-catalogue", "chance-ranking")]


def test_entities_without_test_users_are_named_not_counted_as_wins():
    ds = _small("declared", n=60)
    X = sp.vstack([ds.X, sp.csr_matrix((1, ds.n_items))]).tocsr()
    ds2 = FederatedDataset.from_parts(X, np.r_[np.repeat(["a", "b", "c"], 60), ["d"]], value_kind="counts",
                                      value_max=1.0, name="small+empty")
    doc, _ = run_method(replace(ds2, item_source="declared"), RunConfig(method="individual", rank=2))
    (w,) = [w for w in doc["warnings"] if w["code"] == "no-test-users"]
    assert "d" in w["text"]
