import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.data.split import n_test_users, split_users


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


def test_each_entity_tests_its_fraction_rounded_to_the_nearest_user():
    X = sp.csr_matrix(np.ones((13 + 12, 8)))
    ent = np.repeat([0, 1], [13, 12])
    s = split_users(X, ent, np.random.default_rng(0), test_fraction=0.2, n_hidden=2)
    # 0.2 × 13 = 2.6 → 3 test users; 0.2 × 12 = 2.4 → 2
    assert np.bincount(ent[s.test_users], minlength=2).tolist() == [3, 2]


def test_test_users_and_hidden_entries_are_drawn_uniformly():
    """Which eligible users are tested, and which of their entries are hidden, is a uniform draw of the
    split's stream: over 300 splits every eligible user is tested and every entry hidden, each about
    as often as the others (a rule taking the first users or the first items would not be)."""
    X = sp.csr_matrix(np.ones((10, 6)))
    X[0, :4] = 0.0          # user 0 has 2 entries: never eligible for 2 hidden ones
    X.eliminate_zeros()
    ent = np.zeros(10, dtype=np.int64)
    tested, hidden = np.zeros(10), np.zeros((10, 6))
    for seed in range(300):
        s = split_users(X, ent, np.random.default_rng(seed), test_fraction=0.2, n_hidden=2)
        tested[s.test_users] += 1
        hidden += s.test.toarray() != 0
    assert tested[0] == 0 and tested.sum() == 2 * 300
    # 9 eligible users, 2 tested a split: each ~ 66.7 times (binomial sd ~ 7.4)
    assert np.all(np.abs(tested[1:] - 600 / 9) < 30), tested
    # a tested user hides 2 of its 6 entries: each entry ~ a third of the user's tests
    share = hidden[1:] / tested[1:, None]
    assert np.all(np.abs(share - 1 / 3) < 0.25), share


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


def test_training_rows_read_any_way_are_the_training_matrix():
    """A split's training data is held as X and the hidden positions: every way of reading it — blocks
    of rows (empty ones too), one row, negative rows, rows in any order, a row mask, the whole — gives
    X's entries less the hidden ones, exactly."""
    from dpfed_core.data.split import Split, keep_entries

    X, ent = _data(np.random.default_rng(2))
    X = sp.vstack([X, sp.csr_matrix((3, X.shape[1])), X[:4]]).tocsr()  # empty rows, then a tail
    ent = np.concatenate([ent, [2, 2, 2, 2, 2, 2, 2]])
    s = split_users(X, ent, np.random.default_rng(3))
    hide = np.zeros(X.nnz, bool)
    hide[s.rows.hidden] = True
    want = keep_entries(X, ~hide)
    assert abs(want + s.test - X).max() == 0 and s.rows.nnz == want.nnz
    n = X.shape[0]

    def same(got, ref):
        assert got.shape == ref.shape
        np.testing.assert_array_equal(got.indptr, ref.indptr)
        np.testing.assert_array_equal(got.indices, ref.indices)
        np.testing.assert_array_equal(got.data, ref.data)

    for a, b in ((0, n), (0, 1), (5, 5), (17, 63), (n - 9, n), (100, n)):
        same(s.rows[a:b], want[a:b])
    for i in (0, 7, n - 1, -1, -n):
        same(s.rows[i], want[i])
    order = np.random.default_rng(5).permutation(n)[:30]
    same(s.rows[order], want[order])
    same(s.rows[np.sort(order)], want[np.sort(order)])
    same(s.rows[np.arange(n) % 4 == 1], want[np.arange(n) % 4 == 1])
    same(s.rows[np.array([], dtype=int)], want[np.array([], dtype=int)])
    same(s.rows[[3, 3, -2]], want[[3, 3, n - 2]])
    nothing_hidden = Split.of(want, s.test, s.test_users)
    same(nothing_hidden.rows[order], want[order])
    same(s.rows.tocsr(), want)
    same(s.train, want)
    for outside in (n, [0, n], -n - 1):
        with pytest.raises(IndexError):
            s.rows[outside]
    # a block less some of its training entries, in one pass: the block, then those entries dropped
    from dpfed_core.models.blend import drop_entries

    pick = np.random.default_rng(6)
    for a, b in ((0, n), (17, 63), (5, 5), (n - 9, n)):
        blk = want[a:b]
        for drop in (np.sort(pick.choice(blk.nnz, size=blk.nnz // 3, replace=False)), np.arange(blk.nnz),
                     np.zeros(0, dtype=np.int64)):
            same(s.rows.block(a, b, drop), drop_entries(blk, drop))
    # a block read is the reader's own: writing it leaves X and later reads alone
    blk = s.rows[0:20]
    blk.data[:] = -1.0
    same(s.rows[0:20], want[0:20])
    assert (X.data > 0).all()


def test_a_federated_run_reads_its_training_data_a_site_at_a_time():
    """The federation, its round 2, going alone (`local`) and the evaluation read a split's training
    rows one site's block at a time: no block as large as the data set is ever built (the run holds the
    data set's matrix once), and the result is the run on the whole training matrix, to the last bit."""
    from dpfed_core.config import RunConfig
    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.data.split import Split, TrainRows
    from dpfed_core.evaluation import metrics
    from dpfed_core.evaluation.experiments import make_split, run_method

    rng = np.random.default_rng(0)
    n, m = 800, 40
    U, V = rng.gamma(1.0, 1.0, size=(n, 3)), rng.gamma(1.0, 1.0, size=(m, 3))
    X = sp.csr_matrix(rng.poisson(0.4 * U @ V.T).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["north", "south", "west", "east"], n // 4),
                                     value_kind="counts", value_max=10, name="four")
    read = []
    block = TrainRows.block

    def recorded(self, a, b, drop=None):
        read.append(b - a)
        return block(self, a, b, drop)

    import unittest.mock as mock

    for method, params in (("dp-cooccurrence", {"aggregation": "secure"}), ("dp-gaussian", {}), ("local", {}),
                           ("central", {})):
        cfg = RunConfig(method=method, epsilon=1.0, k=8, rank=3, seed=1, simulation=True, **params)
        split = make_split(ds, cfg)
        read.clear()
        with mock.patch.object(metrics, "EVAL_TRAIN_ROWS", 90), mock.patch.object(TrainRows, "block", recorded):
            doc, res = run_method(ds, cfg, split)
        whole = Split.of(split.train, split.test, split.test_users)
        whole.train  # built: every reader reads the whole matrix
        ref, ref_res = run_method(ds, cfg, whole)
        assert doc["overall"] == ref["overall"]
        for (_, U_a, V_a), (_, U_b, V_b) in zip(res.entity_factors().blocks(), ref_res.entity_factors().blocks()):
            np.testing.assert_array_equal(U_a, U_b)
            np.testing.assert_array_equal(V_a, V_b)
        if method == "central":  # a method that reads the pooled matrix is given it whole
            assert max(read) == n
        else:
            assert read and max(read) <= n // 4, method


@pytest.mark.parametrize("fraction, hidden", [(0.2, 5), (0.5, 12), (1.0, 18), (0.05, 3), (0.2, 19), (0.01, 5)])
def test_the_number_of_test_users_is_known_before_the_split_is_drawn(fraction, hidden):
    X, ent = _data(np.random.default_rng(3))
    want = n_test_users(X, ent, fraction, hidden)
    assert n_test_users(np.diff(sp.csr_matrix(X).indptr), ent, fraction, hidden) == want  # from row lengths
    for seed in (0, 1):
        assert len(split_users(X, ent, np.random.default_rng(seed), fraction, hidden).test_users) == want
    assert (want == 0) == (hidden >= 19 or fraction == 0.01)  # nobody holds 20 entries; 0.01 × 50 rounds to 0


def test_a_run_whose_split_gives_no_entity_a_test_user_says_so_before_it_is_charged(tmp_path, capsys):
    from dpfed_core.cli.main import main

    store = tmp_path / "s.sqlite3"
    table = tmp_path / "small.csv"   # 3 sites of 10 users: 0.01 of 10 rounds to no test user anywhere
    table.write_text("user,item,site\n" + "".join(f"u{s}{u},i{(u + k) % 12},s{s}\n" for s in range(3)
                                                 for u in range(10) for k in range(8)))
    code = main(["run", "--data", str(table), "--user-col", "user", "--item-col", "item", "--entity-col", "site",
                 "--entities-from-data", "--value-kind", "implicit", "--test-fraction", "0.01", "--store", str(store),
                 "--dry-run"])
    err = capsys.readouterr().err
    assert code == 0 and "warning: no entity will have a test user: a test user needs more than --n-hidden = 5" in err
    assert "every metric it reports will be undefined: lower --n-hidden, or raise --test-fraction" in err, err
    assert main(["run", "--data", "sample:clinic", "--store", str(store), "--dry-run"]) == 0
    assert "test user" not in capsys.readouterr().err


def test_a_sweep_whose_split_gives_no_entity_a_test_user_says_so_before_it_is_charged(tmp_path, capsys):
    """Each point of such a sweep is charged and has no metric to compare: said before the charge, as a run
    says it."""
    from dpfed_core.cli.main import main

    store = tmp_path / "s.sqlite3"
    table = tmp_path / "small.csv"
    table.write_text("user,item,site\n" + "".join(f"u{s}{u},i{(u + k) % 12},s{s}\n" for s in range(3)
                                                 for u in range(10) for k in range(3)))
    code = main(["sweep", "--data", str(table), "--user-col", "user", "--item-col", "item", "--entity-col", "site",
                 "--entities-from-data", "--value-kind", "implicit", "--epsilons", "1,3", "--seeds", "0,1",
                 "--references", "local", "--store", str(store), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 0 and ("warning: no entity will have a test user: a test user needs more than --n-hidden = 5 "
                          "entries") in err, err
    assert "lower --n-hidden to at most 2 (the most entries any user holds is 3)" in err, err
    assert main(["sweep", "--data", str(table), "--user-col", "user", "--item-col", "item", "--entity-col", "site",
                 "--entities-from-data", "--value-kind", "implicit", "--epsilons", "1", "--seeds", "0",
                 "--references", "local", "--n-hidden", "2", "--store", str(store), "--dry-run"]) == 0
    assert "test user" not in capsys.readouterr().err


def test_training_rows_read_with_a_step_are_every_other_row():
    """A slice with a step (rows[::2], rows[1:9:3]) reads those rows, not the contiguous block."""
    X, ent = _data(np.random.default_rng(7))
    s = split_users(X, ent, np.random.default_rng(8))
    want = s.train
    for sl in (slice(None, None, 2), slice(1, 9, 3), slice(None, None, -1)):
        got = s.rows[sl]
        assert got.shape == want[sl].shape
        assert abs(got - want[sl]).max() == 0


def test_stored_zeros_are_neither_counted_nor_hidden():
    """A stored zero is no entry: a user with n_hidden entries and stored zeros beside them is not
    eligible, and a hidden entry is never a stored zero (it would score a test on a missing rating)."""
    n_hidden = 3
    indptr = np.array([0, 5, 10])
    indices = np.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
    # user 0: three ratings and two stored zeros; user 1: five ratings
    data = np.array([4.0, 5.0, 3.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 6))
    assert X.nnz == 10
    for seed in range(10):
        s = split_users(X, np.array([0, 0]), np.random.default_rng(seed), test_fraction=1.0, n_hidden=n_hidden)
        assert list(s.test_users) == [1]
        assert s.test.nnz == n_hidden and (s.test.data != 0).all()


def test_a_repeated_cell_counts_as_one_entry_of_its_user():
    """Cells given twice are one entry (summed), so a user of three items with each cell repeated holds
    three entries: not eligible with n_hidden = 3, and a split of the given training matrix reports
    its distinct entries."""
    from dpfed_core.data.split import Split

    def repeated():
        indptr = np.array([0, 6, 10])
        indices = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 3])
        X = sp.csr_matrix((np.ones(10), indices, indptr), shape=(2, 5))
        assert X.nnz == 10
        return X

    for seed in range(10):
        s = split_users(repeated(), np.array([0, 0]), np.random.default_rng(seed), test_fraction=1.0, n_hidden=3)
        assert list(s.test_users) == [1]
        assert s.rows.nnz + s.test.nnz == 7
    given = Split.of(repeated(), sp.csr_matrix((2, 5)), np.zeros(0, dtype=np.int64))
    assert given.rows.nnz == 7
    assert given.rows.X.nnz == 7


def test_the_split_leaves_the_callers_matrix_as_it_was():
    """A matrix with a stored zero and a repeated cell is read as its canonical form, on a copy: the
    caller's arrays are not rewritten (a float64 CSR input shares them with ``sp.csr_matrix``)."""
    X = sp.csr_matrix((np.array([1.0, 0.0, 1.0, 1.0, 2.0, 3.0]), np.array([0, 1, 1, 0, 1, 2]),
                       np.array([0, 3, 6])), shape=(2, 4))
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    split_users(X, np.array([0, 0]), np.random.default_rng(0), test_fraction=0.5, n_hidden=1)
    for got, want in zip((X.data, X.indices, X.indptr), before):
        np.testing.assert_array_equal(got, want)
    assert X.nnz == 6
