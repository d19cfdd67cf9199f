"""Per-entity factors: each entity scores with its own factors, kept apart and sparse in
items, so a run's factors do not grow with a declared catalogue of unused items beyond the shared
O(items × rank)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.experiments import make_split, run_method
from dpfed_core.evaluation.metrics import evaluate
from dpfed_core.models.entity_factors import EntityFactors, LocalColumns, from_entity_parts


def _random_factors(seed=0, sizes=(4, 0, 3, 5), m=9, r=2):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    starts = np.cumsum([0, *sizes])
    slices = [slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])]
    U, V = rng.random((n, r)), rng.random((m, r))
    per_entity = []
    for h, sl in enumerate(slices):
        c = h % 3  # 0, 1 or 2 own columns
        L = rng.random((m, c)) * (rng.random((m, 1)) < 0.5)  # zero rows: items the entity never saw
        per_entity.append((np.hstack([U[sl], rng.random((sl.stop - sl.start, c))]), np.hstack([V, L])))
    return from_entity_parts(n, slices, V, per_entity), per_entity, slices


def _block_reference(per_entity, slices, n, m):
    """The old block layout, dense: every entity's scores U_h V_hᵀ in its rows."""
    S = np.zeros((n, m))
    for sl, (U_h, V_h) in zip(slices, per_entity):
        S[sl] = U_h @ V_h.T
    return S


def test_scores_are_each_entity_s_own_product():
    f, per_entity, slices = _random_factors()
    ref = _block_reference(per_entity, slices, f.n_users, f.n_items)
    np.testing.assert_allclose(f.scores(np.arange(f.n_users)), ref, atol=1e-12)
    rows = np.array([11, 0, 7, 3, 7])  # any order, repeats, across entities
    np.testing.assert_allclose(f.scores(rows), ref[rows], atol=1e-12)
    for h, sl in enumerate(slices):
        U_h, V_h = f.entity(h)
        np.testing.assert_allclose(U_h @ V_h.T, ref[sl], atol=1e-12)


def test_local_columns_keep_only_non_zero_item_rows():
    L = np.zeros((1000, 3))
    L[[5, 17, 999]] = [[1, 0, 0], [0, 2, 0], [0, 0, 3]]
    loc = LocalColumns.from_dense(np.ones((2, 3)), L)
    assert loc.items.tolist() == [5, 17, 999] and loc.L.shape == (3, 3)
    np.testing.assert_array_equal(loc.dense(1000), L)


def test_on_items_and_storage_round_trip():
    f, per_entity, slices = _random_factors(seed=1)
    cols = np.array([0, 2, 3, 5, 8, 10, 11, 13, 14])
    wide = f.on_items(cols, 15)
    ref = _block_reference(per_entity, slices, f.n_users, f.n_items)
    S = wide.scores(np.arange(f.n_users))
    np.testing.assert_allclose(S[:, cols], ref, atol=1e-12)
    assert not S[:, np.setdiff1d(np.arange(15), cols)].any()
    back = EntityFactors.from_arrays(wide.to_arrays())
    np.testing.assert_array_equal(back.scores(np.arange(f.n_users)), S)
    assert back.local_widths == wide.local_widths
    # arrays of the shared factors alone (no ``slices``): one block of every user on them
    shared = EntityFactors.from_arrays({"U": wide.U, "V": wide.V})
    np.testing.assert_array_equal(shared.scores(np.arange(f.n_users)), wide.U @ wide.V.T)
    assert shared.local_widths == (0,)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="same number of columns"):
        EntityFactors(np.zeros((3, 2)), np.zeros((4, 1)))
    with pytest.raises(ValueError, match="do not fit"):
        EntityFactors(np.zeros((3, 1)), np.zeros((4, 1)), [slice(0, 3)],
                      [LocalColumns(np.zeros((2, 1)), np.array([0]), np.zeros((1, 1)))])


def test_evaluate_per_entity_equals_the_block_layout():
    f, per_entity, slices = _random_factors(seed=2, sizes=(6, 5, 7, 4), m=12)
    n, m = f.shape
    rng = np.random.default_rng(3)
    train = sp.random(n, m, density=0.3, random_state=4, format="csr") * 5
    test = sp.random(n, m, density=0.15, random_state=5, format="csr") * 5
    test = (test - test.multiply(train > 0)).tocsr()
    test.eliminate_zeros()
    ent = np.concatenate([np.full(sl.stop - sl.start, h) for h, sl in enumerate(slices)])
    names = [f"e{h}" for h in range(len(slices))]
    users = rng.permutation(np.flatnonzero(np.diff(test.indptr) > 0))
    # the block layout (one U, V pair with every entity's own columns side by side), built here only
    r = f.U.shape[1]
    widths = f.local_widths
    U_big = np.zeros((n, r + sum(widths)))
    V_big = np.zeros((m, r + sum(widths)))
    U_big[:, :r], V_big[:, :r] = f.U, f.V
    col = r
    for h, sl in enumerate(slices):
        U_h, V_h = f.entity(h)
        U_big[sl, col:col + widths[h]] = U_h[:, r:]
        V_big[:, col:col + widths[h]] = V_h[:, r:]
        col += widths[h]
    for mode in ("zero", "observed"):
        a = evaluate(f, None, train, test, users, ent, names, mode=mode, n=3)
        b = evaluate(U_big, V_big, train, test, users, ent, names, mode=mode, n=3)
        for ea, eb in zip(a["entities"] + [a["overall"]], b["entities"] + [b["overall"]]):
            for k, v in eb.items():
                if isinstance(v, float):
                    np.testing.assert_allclose(ea[k], v, rtol=1e-10, equal_nan=True, err_msg=k)
                else:
                    assert ea[k] == v


def _padded(ds: FederatedDataset, extra: int) -> FederatedDataset:
    """The same rows with ``extra`` declared catalogue items nobody used."""
    X = sp.hstack([ds.X, sp.csr_matrix((ds.n_users, extra))]).tocsr()
    names = np.concatenate([ds.item_names, [f"unused {j}" for j in range(extra)]])
    ids = np.concatenate([ds.item_ids, [f"unused {j}" for j in range(extra)]])
    return FederatedDataset(X=X, entity_of_user=ds.entity_of_user, entity_names=list(ds.entity_names),
                            user_ids=ds.user_ids, item_names=names, item_ids=ids, value_kind=ds.value_kind,
                            value_max=ds.value_max, name=ds.name, item_source="declared")


def _local_bytes(f: EntityFactors) -> int:
    return sum(loc.U.nbytes + loc.L.nbytes + loc.items.nbytes for loc in f.local if loc is not None)


@pytest.mark.parametrize("method", ["local", "individual", "dp-cooccurrence"])
def test_entities_own_columns_do_not_grow_with_unused_catalogue_items(method):
    """A declared catalogue 10× the used items: the entities' own columns keep the same item rows
    (only items the entity's training rows hold: the local blend and the entity's own NMF are
    exactly zero elsewhere) and a width bounded by the rank, so their cost is bounded by a figure
    that does not depend on the catalogue; only the shared V (items × rank) grows.

    The width itself (which local parts the hold-out search keeps) may differ between two runs by a
    float tie in the search (BLAS thread counts), so the bound is stated per item row and column,
    not as equal byte counts."""
    from dpfed_core.data.loaders import load_data

    ds = load_data("sample:synthetic")
    big = _padded(ds, 9 * ds.n_items)
    cfg = RunConfig(method=method, epsilon=float("inf"), rank=3, seed=0, max_iter=30, aggregation="secure")
    max_width = cfg.rank + 2  # own NMF (≤ rank) + own popularity + a content part
    rows_per_run, sizes = [], []
    for d in (ds, big):
        split = make_split(d, cfg)
        _, res = run_method(d, cfg, split)
        f = res.entity_factors()
        assert f.shape == d.X.shape
        rows = []
        for sl, loc in zip(f.slices, f.local):
            if loc is None:
                rows.append(None)
                continue
            seen = np.flatnonzero(np.diff(split.train[sl].tocsc().indptr) > 0)
            assert np.isin(loc.items, seen).all(), "own columns on items the entity never saw"
            assert loc.width <= max_width
            rows.append(loc.items.tolist())
        rows_per_run.append(rows)
        sizes.append(_local_bytes(f))
    assert rows_per_run[0] == rows_per_run[1]
    assert sizes[0] > 0
    # the most the own columns can cost on the small catalogue's item rows, whatever widths are kept
    bound = sum(8 * max_width * ((sl.stop - sl.start) + len(r)) + 8 * len(r)
                for sl, r in zip(f.slices, rows_per_run[0]) if r is not None)
    assert sizes[1] <= bound, (sizes, bound)


def test_entity_rows_and_local_items_outside_the_model_are_refused():
    loc = LocalColumns(np.zeros((3, 1)), np.array([4]), np.ones((1, 1)))
    with pytest.raises(ValueError, match="outside the 3 users"):
        EntityFactors(np.zeros((3, 1)), np.zeros((4, 1)), [slice(0, 2), slice(2, 4)])
    with pytest.raises(ValueError, match="2 local parts for 1 entities"):
        EntityFactors(np.zeros((3, 1)), np.zeros((4, 1)), [slice(0, 3)], [None, None])
    with pytest.raises(ValueError, match="do not fit 3 users × 4 items"):  # item 4 of items 0…3
        EntityFactors(np.zeros((3, 1)), np.zeros((4, 1)), [slice(0, 3)], [loc])
    EntityFactors(np.zeros((3, 1)), np.zeros((5, 1)), [slice(0, 3)], [loc])  # item 4 of 0…4: fits
    with pytest.raises(ValueError, match="alone"):
        from dpfed_core.models.entity_factors import as_entity_factors

        as_entity_factors(EntityFactors(np.zeros((3, 1)), np.zeros((4, 1))), np.zeros((4, 1)))


def test_on_keys_gives_each_item_its_keys_factors_own_columns_included_and_none_without_a_key():
    f, per_entity, slices = _random_factors(seed=3)  # 9 keys
    item_key = np.array([0, -1, 3, 3, 8, 0, -1, 5, 2, 7, 1, 4, 6])  # key 0 twice, key 3 twice, two without
    wide = f.on_keys(item_key, item_key.size)
    ref = _block_reference(per_entity, slices, f.n_users, f.n_items)
    S = wide.scores(np.arange(f.n_users))
    has = item_key >= 0
    np.testing.assert_allclose(S[:, has], ref[:, item_key[has]], atol=1e-12)
    assert not S[:, ~has].any()
    for h, sl in enumerate(slices):  # each entity's own product on the item axis, too
        U_h, V_h = wide.entity(h)
        np.testing.assert_allclose((U_h @ V_h.T)[:, has], ref[sl][:, item_key[has]], atol=1e-12)


def test_reversed_or_negative_entity_rows_and_local_items_not_matching_their_rows_are_refused():
    """A slice starting before the first user or ending before it starts would score users with
    another entity's columns; local item rows must be item indices, one per row of ``L``."""
    U, V = np.zeros((3, 1)), np.zeros((4, 1))
    for sl in (slice(-1, 2), slice(2, 1)):
        with pytest.raises(ValueError, match="outside the 3 users"):
            EntityFactors(U, V, [sl])
    for items, L in ((np.array([0, 1]), np.ones((1, 1))),    # two item rows named, one row of factors
                     (np.array([-1]), np.ones((1, 1)))):      # item −1 is not an item of the model
        with pytest.raises(ValueError, match="do not fit 3 users × 4 items"):
            EntityFactors(U, V, [slice(0, 3)], [LocalColumns(np.zeros((3, 1)), items, L)])


def test_entity_rows_out_of_order_overlapping_or_leaving_users_out_are_refused():
    """A user's entity is found from where each entity's rows start: rows given out of order scored a
    user with another entity's own columns (or failed in NumPy's words), and a user between two
    entities' rows was scored as the entity before it."""
    U, V = np.zeros((5, 1)), np.zeros((4, 1))
    for slices in ([slice(3, 5), slice(0, 3)], [slice(0, 3), slice(2, 5)], [slice(0, 2), slice(3, 5)],
                   [slice(1, 5)], [slice(0, 4)]):
        with pytest.raises(ValueError, match="must follow one another from user 0 to user 5"):
            EntityFactors(U, V, slices)
    f = EntityFactors(U, V, [slice(0, 2), slice(2, 2), slice(2, 5)])  # an entity without users is no gap
    assert f.scores(np.arange(5)).shape == (5, 4)
