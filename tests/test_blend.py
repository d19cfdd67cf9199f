"""The entity's own blend (issue 23): the ``local`` reference and round 2 keeping what the entity knows."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation.experiments import make_split, run_method
from dpfed_core.methods import get_method
from dpfed_core.models.blend import choose_weights, fit_blend, holdout_mar, holdout_split, popularity
from dpfed_core.privacy.model import PrivacyModel


def _popular_data(n=200, m=30, seed=0):
    """Users pick items by a shared popularity (Zipf-like): popularity is the informative part."""
    g = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, m + 1)
    p /= p.sum()
    rows = [g.choice(m, size=int(g.integers(3, 8)), replace=False, p=p) for _ in range(n)]
    X = sp.lil_matrix((n, m))
    for u, items in enumerate(rows):
        X[u, items] = 1.0
    return sp.csr_matrix(X)


def test_holdout_hides_one_item_of_each_user_with_two():
    X = _popular_data()
    red, hidden, has = holdout_split(X, np.random.default_rng(1))
    cnt = np.diff(X.indptr)
    assert (has == (cnt >= 2)).all()
    assert (np.diff(red.indptr) == cnt - has).all()
    assert all(X[u, hidden[u]] == 1 and red[u, hidden[u]] == 0 for u in np.flatnonzero(has))


def test_the_blend_picks_the_informative_part_and_never_loses_to_a_part_alone():
    X = _popular_data()
    red, hidden, has = holdout_split(X, np.random.default_rng(2))
    noise = np.random.default_rng(3).random(X.shape)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    pop = popularity(red)
    pop /= np.linalg.norm(pop)
    wm, wi, best = choose_weights([(noise, np.eye(X.shape[1]))], [pop], red, hidden, has)
    assert wi[0] > 0
    assert best <= holdout_mar(noise, red, hidden, has) + 1e-12
    assert best <= holdout_mar(np.tile(pop, (X.shape[0], 1)), red, hidden, has) + 1e-12
    U, V, info = fit_blend(X, [lambda Z: (noise, np.eye(X.shape[1]))], [popularity], np.random.default_rng(2))
    assert (U @ V.T).shape == X.shape and info["item_weights"][0] > 0


def test_local_is_a_reference_that_releases_nothing_and_beats_individual_on_the_sample():
    ds = load_data("sample:clinic")
    spec = get_method("local")
    assert spec.privacy_model is PrivacyModel.NO_RELEASE
    cfg = RunConfig(method="local", rank=5, seed=0, max_iter=100)
    split = make_split(ds, cfg)
    doc, res = run_method(ds, cfg, split)
    assert doc["messages"] == [] and not res.ledger.rows
    assert set(res.extra["blend_weights"]) == set(ds.entity_names)
    ind, _ = run_method(ds, cfg.replace(method="individual"), split)
    assert doc["overall"]["mar"] < ind["overall"]["mar"]


def test_round_two_keeps_the_entity_s_own_model():
    """dp-cooccurrence's round 2 blends the entity's own NMF and popularity with the federation's
    parts: its local columns exist, and at ε = inf (exact sums) it is not worse than local."""
    ds = load_data("sample:clinic")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=float("inf"), rank=5, seed=0, max_iter=100,
                    aggregation="secure")
    split = make_split(ds, cfg)
    doc, res = run_method(ds, cfg, split)
    assert res.V.shape[1] > res.model.public_["V"].shape[1]  # entity-local columns beside the broadcast V
    loc, _ = run_method(ds, cfg.replace(method="local"), split)
    assert doc["overall"]["mar"] <= loc["overall"]["mar"] + 0.01
    off, _ = run_method(ds, cfg.replace(prototype_params={"local_blend": False}), split)
    assert off["overall"]["mar"] > doc["overall"]["mar"]
