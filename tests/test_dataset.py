"""The federated dataset itself: rows by entity with their ids, the declared entity list, the public
value bound, the declared catalogue and a selection of item columns."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError, DataError


def _three_users(**kw):
    # users u0 (entity b), u1 (a), u2 (b); u0 holds a stored zero at item 2
    X = sp.csr_matrix((np.array([4.0, 0.0, 1.0, 2.0, 3.0]), np.array([0, 2, 1, 0, 2]), np.array([0, 2, 3, 5])),
                      shape=(3, 3))
    return FederatedDataset.from_parts(X, np.array(["b", "a", "b"]), user_ids=np.array(["u0", "u1", "u2"]),
                                       value_kind="ratings", **kw)


def test_rows_are_reordered_by_entity_with_their_ids_and_a_stored_zero_is_no_interaction():
    ds = _three_users()
    assert ds.entity_names == ["a", "b"] and ds.entity_of_user.tolist() == [0, 1, 1]
    assert ds.user_ids.tolist() == ["u1", "u0", "u2"]
    np.testing.assert_array_equal(ds.X.toarray(), [[0, 1, 0], [4, 0, 0], [2, 0, 3]])
    assert ds.X.nnz == 4
    assert [(s["entity"], s["users"], s["interactions"]) for s in ds.summary()] == [("a", 1, 1), ("b", 2, 3)]


def test_the_default_value_bound_is_five_for_ratings_one_for_implicit_data_and_counts_need_one():
    X = sp.csr_matrix(np.ones((2, 2)))
    assert FederatedDataset.from_parts(X, ["a", "b"], value_kind="ratings").value_max == 5.0
    assert FederatedDataset.from_parts(X, ["a", "b"], value_kind="implicit").value_max == 1.0
    with pytest.raises(ConfigError, match="value_max"):
        FederatedDataset.from_parts(X, ["a", "b"], value_kind="counts")
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(ConfigError, match="value_max must be a positive number") as err:
            FederatedDataset.from_parts(X, ["a", "b"], value_kind="counts", value_max=bad)
        assert err.value.param == "value_max"


@pytest.mark.parametrize("label", ["b", "0", "z"])
def test_a_label_outside_the_declared_entities_is_refused_wherever_it_would_sort(label):
    X = sp.csr_matrix(np.ones((2, 2)))
    with pytest.raises(DataError, match=f"entity '{label}' of a user is not in the declared entity list") as err:
        FederatedDataset.from_parts(X, ["a", label], entities=["a", "c"], value_kind="ratings")
    assert err.value.param == "entities"
    ds = FederatedDataset.from_parts(X, ["c", "c"], entities=["a", "c"], value_kind="ratings")
    assert ds.entity_names == ["a", "c"] and [s.stop - s.start for s in ds.entity_slices()] == [0, 2]


def test_an_entity_index_beyond_the_last_entity_is_refused():
    ds = _three_users()
    assert ds.entity_index(1) == 1 and ds.entity_index("a") == 0
    for bad in (2, -1):
        with pytest.raises(ConfigError, match=f"entity index {bad} out of range 0..1"):
            ds.entity_index(bad)


def test_a_declared_catalogue_is_shared_whole_unless_it_leaves_some_of_the_datas_items_out():
    whole = _three_users(item_source="declared", n_declared=3)
    assert whole.shared_columns is None and whole.items_phrase() == "3 items"
    part = _three_users(item_source="declared", n_declared=2)
    assert part.shared_columns.tolist() == [0, 1]
    assert part.items_phrase() == "3 items (2 declared and shared, 1 the entities' own)"
    assert _three_users().shared_columns is None


def test_selected_items_keep_their_own_names_ids_features_and_columns_in_the_order_asked():
    F = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    ds = _three_users(item_ids=np.array(["i0", "i1", "i2"]), item_names=np.array(["zero", "one", "two"]),
                      item_features=F, item_feature_names=["f", "g"])
    sel = ds.select_items(np.array([2, 0]))
    assert sel.item_names.tolist() == ["two", "zero"] and sel.item_ids.tolist() == ["i2", "i0"]
    np.testing.assert_array_equal(sel.item_features, F[[2, 0]])
    np.testing.assert_array_equal(sel.X.toarray(), ds.X.toarray()[:, [2, 0]])
