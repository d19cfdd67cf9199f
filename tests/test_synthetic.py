"""The paper §5.1 Poisson generator and the clinic generator: shapes, determinism, finiteness."""
from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.data.synthetic import PAPER, CLINIC_ITEMS, REGIONS, entity_sizes, make_clinic, make_poisson


def test_small_shapes_and_kind():
    ds = make_poisson(500, 60, 5, rank=4, density=0.1, rng=np.random.default_rng(0))
    assert ds.X.shape == (500, 60) and sp.isspmatrix_csr(ds.X)
    assert ds.n_entities == 5 and ds.entity_names[0] == "entity 01"
    assert ds.value_kind == "counts" and ds.value_max == 10
    assert np.all(np.isfinite(ds.X.data)) and ds.X.data.min() >= 1 and ds.X.max() <= 10
    assert abs(ds.X.nnz / (500 * 60) - 0.1) < 0.02  # the calibrated offset hits the target density


def test_deterministic_in_rng_and_seed_sensitive():
    a = make_poisson(300, 40, 3, rng=np.random.default_rng(7))
    b = make_poisson(300, 40, 3, rng=np.random.default_rng(7))
    c = make_poisson(300, 40, 3, rng=np.random.default_rng(8))
    assert (a.X != b.X).nnz == 0 and a.entity_names == b.entity_names
    assert (a.X != c.X).nnz > 0


def test_the_matrix_does_not_depend_on_the_chunk_it_is_drawn_in():
    """The CSR matrix is assembled chunk by chunk (row counts, column indices, values): any chunk size
    gives the same canonical matrix as one chunk, each row holding its own non-zeros."""
    one = make_poisson(257, 31, 4, rank=3, density=0.2, rng=np.random.default_rng(3), chunk_rows=10_000)
    for chunk in (1, 7, 64):
        other = make_poisson(257, 31, 4, rank=3, density=0.2, rng=np.random.default_rng(3), chunk_rows=chunk)
        assert other.X.has_canonical_format and other.X.indices.dtype == np.int32
        np.testing.assert_array_equal(other.X.indptr, one.X.indptr)
        np.testing.assert_array_equal(other.X.indices, one.X.indices)
        np.testing.assert_array_equal(other.X.data, one.X.data)
    assert np.array_equal(np.diff(one.X.indptr), np.count_nonzero(one.X.toarray(), axis=1))


def test_entity_effects_make_entities_differ():
    ds, f = make_poisson(3000, 80, 3, rank=5, entity_effect=0.6, entity_item_sd=0.5,
                         rng=np.random.default_rng(1), return_factors=True)
    means = np.vstack([np.asarray(ds.X[sl].mean(axis=0)).ravel() for sl in ds.entity_slices()])
    # item profiles of different entities differ far more than sampling noise would explain
    assert np.corrcoef(means)[0, 1] < 0.9
    assert f["U"].shape == (3000, 5) and f["V"].shape == (80, 5)
    iid = make_poisson(3000, 80, 3, rank=5, entity_effect=0.0, entity_item_sd=0.0, rng=np.random.default_rng(1))
    m2 = np.vstack([np.asarray(iid.X[sl].mean(axis=0)).ravel() for sl in iid.entity_slices()])
    assert np.corrcoef(m2)[0, 1] > 0.95


def test_sizes():
    g = np.random.default_rng(0)
    assert entity_sizes(10, 3, "uniform", g).tolist() == [4, 3, 3]
    v = entity_sizes(2000, 10, "varied", g)
    assert v.sum() == 2000 and v.max() > 1.5 * v.min()
    assert entity_sizes(10, 2, [1, 4], g).tolist() == [2, 8]
    with pytest.raises(ConfigError):
        entity_sizes(10, 2, "lumpy", g)


@pytest.mark.parametrize("kw, match", [
    ({"n_users": 0}, "n_users"), ({"density": 1.5}, "density"), ({"entity_effect": 1.0}, "entity_effect"),
    ({"n_entities": 50, "n_users": 10}, "entities need"), ({"value_max": 0}, "value_max"),
])  # fmt: skip
def test_bad_parameters(kw, match):
    with pytest.raises(ConfigError, match=match):
        make_poisson(**{"n_users": 100, "n_items": 10, "n_entities": 2, **kw}, rng=0)


def test_paper_size_fast_sparse_finite():
    """The paper's 100,000 × 500, ℓ = 100, 10 entities: the literal N(0,1) factors would overflow."""
    t0 = time.perf_counter()
    ds = make_poisson(**PAPER, rng=np.random.default_rng(0))
    elapsed = time.perf_counter() - t0
    assert ds.X.shape == (100_000, 500) and ds.n_entities == 10
    assert np.bincount(ds.entity_of_user).tolist() == [10_000] * 10
    assert np.all(np.isfinite(ds.X.data)) and ds.X.max() <= ds.value_max
    assert 0.03 < ds.X.nnz / 5e7 < 0.07  # sparse (default density 5 %)
    # ~2–3 s on an idle 2-core machine; the bound only catches a pathological slowdown on a busy one
    assert elapsed < 30, f"paper-size generation took {elapsed:.1f}s"


def test_clinic_generator():
    df = make_clinic(np.random.default_rng(3), n_hospitals=8, n_patients=400, min_hospital=30)
    assert list(df.columns) == ["patient_id", "item", "count", "hospital", "region"]
    assert df["hospital"].nunique() == 8 and set(df["region"]) <= set(REGIONS)
    assert set(df["item"]) <= set(CLINIC_ITEMS) and df["count"].between(1, 20).all()
    assert (df.groupby("patient_id")["hospital"].nunique() == 1).all()  # one hospital per patient
    again = make_clinic(np.random.default_rng(3), n_hospitals=8, n_patients=400, min_hospital=30)
    assert df.equals(again)
    with pytest.raises(ConfigError):
        make_clinic(0, n_hospitals=8, n_patients=100, min_hospital=30)


def test_the_exceedance_note_counts_counts_strictly_above_the_bound():
    ds = make_poisson(300, 30, 3, density=0.3, value_max=2.0, clip=False, rng=4)
    over = int((ds.X.data > 2.0).sum())
    assert 0 < over < int((ds.X.data >= 2.0).sum())
    assert any(n.startswith(f"{over} counts exceeded the declared bound 2") and "they are kept" in n
               for n in ds.notes)
    clipped = make_poisson(300, 30, 3, density=0.3, value_max=2.0, rng=4)
    assert clipped.X.max() == 2.0 and any(n.startswith(f"{over} counts exceeded") and "clipped" in n
                                          for n in clipped.notes)


def test_as_many_entities_as_users_gives_each_entity_one_user():
    ds = make_poisson(3, 5, 3, sizes="uniform", rng=0)
    assert [r["users"] for r in ds.summary()] == [1, 1, 1]
    with pytest.raises(ConfigError, match="3 entities need at least as many users"):
        make_poisson(2, 5, 3, rng=0)
