import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.data.split import split_users


def _data(rng, n_per=(50, 30, 20), m=40):
    n = sum(n_per)
    nnz = rng.integers(2, 20, size=n)
    rows = np.repeat(np.arange(n), nnz)
    cols = np.concatenate([rng.choice(m, size=k, replace=False) for k in nnz])
    X = sp.csr_matrix((rng.integers(1, 6, size=len(rows)).astype(float), (rows, cols)), shape=(n, m))
    ent = np.repeat(np.arange(len(n_per)), n_per)
    return X, ent


def test_split_invariants():
    rng = np.random.default_rng(0)
    X, ent = _data(rng)
    s = split_users(X, ent, np.random.default_rng(1), test_fraction=0.2, n_hidden=5)
    # train + test = X with disjoint supports
    assert abs(s.train + s.test - X).max() == 0
    assert s.train.multiply(s.test).nnz == 0
    hidden_per_user = np.diff(s.test.indptr)
    assert set(np.flatnonzero(hidden_per_user)) == set(s.test_users)
    assert (hidden_per_user[s.test_users] == 5).all()
    # test users kept at least one training entry, and only eligible users were chosen
    assert (np.diff(s.train.indptr)[s.test_users] >= 1).all()
    assert (np.diff(X.indptr)[s.test_users] >= 6).all()
    # 20% of each entity (rounded), when enough users are eligible
    for h, n_h in enumerate((50, 30, 20)):
        eligible = ((ent == h) & (np.diff(X.indptr) >= 6)).sum()
        assert ((ent[s.test_users] == h).sum()) == min(round(0.2 * n_h), eligible)


def test_split_deterministic_per_seed():
    X, ent = _data(np.random.default_rng(0))
    a = split_users(X, ent, np.random.default_rng(7))
    b = split_users(X, ent, np.random.default_rng(7))
    c = split_users(X, ent, np.random.default_rng(8))
    assert (a.test != b.test).nnz == 0
    assert (a.test != c.test).nnz > 0


def test_users_with_few_entries_never_tested():
    X = sp.csr_matrix(np.array([[1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1]], dtype=float))
    s = split_users(X, np.array([0, 0]), np.random.default_rng(0), test_fraction=1.0, n_hidden=5)
    assert list(s.test_users) == [1]
    assert s.test[0].nnz == 0 and s.test[1].nnz == 5


@pytest.mark.parametrize("kw", [{"test_fraction": 1.5}, {"n_hidden": 0}])
def test_split_bad_parameters(kw):
    X, ent = _data(np.random.default_rng(0))
    with pytest.raises(ConfigError):
        split_users(X, ent, np.random.default_rng(0), **kw)


def test_keep_entries_is_the_matrix_of_the_kept_entries_empty_rows_included():
    """Row pointers from the dropped entries' rows alone: the same matrix as building it from the kept
    (row, column, value) triplets — empty rows, rows losing every entry and a mask keeping all or none."""
    import scipy.sparse as sp

    from dpfed_core.data.split import keep_entries

    rng = np.random.default_rng(4)
    X = sp.random(60, 40, density=0.1, format="csr", random_state=np.random.RandomState(4))
    X = sp.vstack([X, sp.csr_matrix((5, 40)), X[:7]]).tocsr()   # empty rows in the middle
    X.sum_duplicates()
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    for keep in (rng.random(X.nnz) < 0.6, rng.random(X.nnz) < 0.2,  # from the dropped / the kept entries
                 np.ones(X.nnz, bool), np.zeros(X.nnz, bool), rows % 3 != 0, rows % 3 == 0):
        got = keep_entries(X, keep)
        want = sp.csr_matrix((X.data[keep], (rows[keep], X.indices[keep])), shape=X.shape)
        assert got.has_canonical_format or got.nnz == 0
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
