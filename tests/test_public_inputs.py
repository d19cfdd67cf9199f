"""Public item features (item 3): used by local and by round 2, declared on the ledger as a
public input at no privacy cost."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.experiments import run_method
from dpfed_core.models.side_information import content_factors, smooth_over_features


def _with_features(features: bool) -> FederatedDataset:
    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((60, 12)) < 0.3).astype(float))
    F = np.repeat(np.eye(3), 4, axis=0) if features else None  # 3 genres of 4 items each
    ds = FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], 20), value_kind="binary", value_max=1.0,
                                     item_source="declared")
    if features:
        import dataclasses

        ds = dataclasses.replace(ds, item_features=F, item_feature_names=["g0", "g1", "g2"])
    return ds


@pytest.mark.parametrize("features", [True, False])
def test_features_are_declared_on_every_ledger_as_a_free_public_input(features):
    ds = _with_features(features)
    doc, res = run_method(ds, RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure", seed=0,
                                        simulation=True, mode="zero", rank=2))
    rows = [r for r in res.ledger.rows if r.stage == "public input"]
    assert len(rows) == (3 if features else 0)
    assert all(r.epsilon == 0 and r.delta == 0 and "g0" in r.note for r in rows)
    assert doc["privacy"]["epsilon"] <= 1.0 * (1 + 1e-9)


def test_content_factors_rank_items_sharing_the_users_features_first():
    F = np.repeat(np.eye(3), 4, axis=0)
    X = sp.csr_matrix(np.r_[np.ones(2), np.zeros(10)][None, :])  # the user has two items of genre 0
    U, V = content_factors(X, F)
    assert U.shape == (1, 3) and V.shape == (12, 3) and np.all(U >= 0)
    s = (U @ V.T).ravel()
    assert s[2:4].min() > s[4:].max()  # the unseen genre-0 items come before every other genre


def test_smoothing_pulls_a_score_towards_its_feature_mean_and_keeps_featureless_items():
    F = np.array([[1, 0], [1, 0], [0, 1], [0, 0]], dtype=float)
    s = np.array([4.0, 0.0, 2.0, 7.0])
    out = smooth_over_features(s, F, 0.5)
    assert out[0] == pytest.approx(3.0) and out[1] == pytest.approx(1.0)  # mean of genre 0 is 2
    assert out[2] == pytest.approx(2.0) and out[3] == pytest.approx(7.0)
    assert np.array_equal(smooth_over_features(s, F, 0.0), s)


def test_smoothing_reads_features_as_memberships_and_averages_an_items_feature_means():
    """Feature values count as membership (a weight of 2 or 3 is "has the feature"); an item of two
    features takes the mean of their two means; the weight w mixes (1 − w)·s + w·mean."""
    F = np.array([[2, 0], [1, 1], [0, 3], [0, 0]], dtype=float)
    s = np.array([4.0, 0.0, 2.0, 7.0])
    # feature means: f0 = (4 + 0)/2 = 2, f1 = (0 + 2)/2 = 1; item means 2, 1.5, 1 and the featureless 7
    out = smooth_over_features(s, F, 0.25)
    np.testing.assert_allclose(out, 0.75 * s + 0.25 * np.array([2.0, 1.5, 1.0, 7.0]))


def test_content_factors_weigh_a_feature_every_item_has_below_a_rare_one():
    F = np.c_[np.ones(12), np.repeat(np.eye(3), 4, axis=0)]  # "all" on every item, then 3 genres of 4
    X = sp.csr_matrix(np.r_[np.ones(2), np.zeros(10)][None, :])
    U, V = content_factors(X, F)
    assert V.shape == (12, 4)
    assert V[0, 0] < V[0, 1]  # the feature of all 12 items says less than a genre of 4
    np.testing.assert_array_equal(V > 0, F > 0)


def test_the_public_input_row_names_six_features_and_counts_the_rest_for_federated_dp_methods_only():
    import dataclasses

    from dpfed_core.evaluation.experiments import declare_public_inputs
    from dpfed_core.methods import MethodResult, get_method
    from dpfed_core.privacy.ledger import PrivacyLedger

    def notes(n_features, method="dp-cooccurrence"):
        names = [f"f{i}" for i in range(n_features)]
        ds = dataclasses.replace(_with_features(False), item_features=np.ones((12, n_features)),
                                 item_feature_names=names)
        res = MethodResult(np.zeros((60, 1)), np.zeros((12, 1)), PrivacyLedger(1.0, 1e-6))
        declare_public_inputs(ds, get_method(method), res)
        return [r.note for r in res.ledger.rows]

    assert notes(6) == ["public item features (f0, f1, f2, f3, f4, f5): no privacy cost"] * 3
    assert notes(7) == ["public item features (f0, f1, f2, f3, f4, f5, … (7 in all)): no privacy cost"] * 3
    assert notes(7, "friedman-isgd") == []  # a curator's method: not a federation's public input
