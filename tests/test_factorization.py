import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import nnls

from dpfed_core.errors import ConfigError
from dpfed_core.models.factorization import fit_nmf, fit_rows_given, objective, update_factor


def _random_sparse(rng, n=40, m=30, density=0.2):
    X = sp.random(n, m, density=density, random_state=np.random.RandomState(0), format="csr")
    X.data = rng.integers(1, 6, size=X.nnz).astype(float)
    return X


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_objective_never_increases(mode):
    rng = np.random.default_rng(1)
    X = _random_sparse(rng)
    U, V, hist = fit_nmf(X, rank=4, lam=0.1, mode=mode, max_iter=60, tol=0, rng=rng)
    h = np.asarray(hist)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1])), "HALS is exact block descent: F must not increase"
    assert h[-1] < 0.75 * h[0]
    assert (U >= 0).all() and (V >= 0).all()
    assert objective(X, U, V, 0.1, mode) == pytest.approx(h[-1])


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_row_fit_matches_brute_force_nnls(mode):
    """Round 2 solves min_u≥0 Σ_Ω (x − u·v)² + λ‖u‖² exactly: compare with scipy's NNLS on the
    ridge-augmented system [V_Ω; √λ I] u ≈ [x_Ω; 0], row by row."""
    rng = np.random.default_rng(2)
    X = _random_sparse(rng, n=12, m=25, density=0.4)
    V = rng.uniform(0, 1, size=(25, 3))
    lam = 0.3
    U = fit_rows_given(X, V, lam=lam, mode=mode, max_sweeps=2000, tol=1e-12)
    for i in range(X.shape[0]):
        if mode == "zero":
            cols, x = np.arange(25), X[i].toarray().ravel()
        else:
            cols, x = X[i].indices, X[i].data
        A = np.vstack([V[cols], np.sqrt(lam) * np.eye(3)])
        b = np.concatenate([x, np.zeros(3)])
        u_ref, _ = nnls(A, b)
        np.testing.assert_allclose(U[i], u_ref, atol=1e-6)


def test_observed_mode_ignores_unobserved_cells():
    X = sp.csr_matrix(np.array([[5.0, 0, 0], [0, 4.0, 0]]))
    V = np.array([[1.0], [1.0], [1.0]])
    U = fit_rows_given(X, V, lam=0.0, mode="observed", max_sweeps=50)
    # Only the single observed entry per row counts: u = x exactly.
    np.testing.assert_allclose(U.ravel(), [5.0, 4.0], atol=1e-9)
    Uz = fit_rows_given(X, V, lam=0.0, mode="zero", max_sweeps=50)
    np.testing.assert_allclose(Uz.ravel(), [5 / 3, 4 / 3], atol=1e-9)


def test_dense_and_sparse_agree():
    rng = np.random.default_rng(3)
    X = _random_sparse(rng)
    W = rng.uniform(size=(40, 3))
    H = rng.uniform(size=(30, 3))
    a = update_factor(X, W, H, 0.1, "zero", sweeps=3)
    b = update_factor(X.toarray(), W, H, 0.1, "zero", sweeps=3)
    np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("rank", [1, 7, 50])
def test_sweep_by_row_blocks_is_the_column_by_column_sweep(rank):
    """A zero-mode sweep goes block of rows by block of rows; each row's updates read only that row,
    so the result must be the plain column-by-column HALS of the whole matrix — on a matrix of two
    whole blocks and a tail, including the rows at the blocks' edges."""
    from dpfed_core.models.factorization import HALS_BLOCK_ROWS, _hals_sweep

    rng = np.random.default_rng(rank)
    n = 2 * HALS_BLOCK_ROWS + 37
    A = rng.uniform(0, 3, size=(n, rank))
    H = rng.uniform(size=(11, rank))
    B = H.T @ H
    W0 = rng.uniform(size=(n, rank))
    ref = W0.copy()
    for r in range(rank):  # the update as written, on whole columns
        ref[:, r] = np.maximum((A[:, r] - ref @ B[:, r] + ref[:, r] * B[r, r]) / (B[r, r] + 0.1), 0.0)
    W = W0.copy()
    assert _hals_sweep(A, W, B, 0.1) == 0.0
    np.testing.assert_allclose(W, ref, rtol=1e-12, atol=1e-14)
    W = W0.copy()
    delta = _hals_sweep(A, W, B, 0.1, track=True)
    np.testing.assert_allclose(W, ref, rtol=1e-12, atol=1e-14)
    assert delta == pytest.approx(float(np.max(np.abs(ref - W0))), rel=1e-12)


def test_weights_equal_row_duplication():
    """A prototype of weight 2 must count like the same prototype sent twice."""
    rng = np.random.default_rng(4)
    P = rng.uniform(0, 3, size=(6, 8))
    w = np.array([2, 1, 1, 1, 1, 1.0])
    P_dup = np.vstack([P, P[:1]])
    _, V_w, _ = fit_nmf(P, 2, 0.1, "zero", max_iter=3000, tol=1e-14, rng=np.random.default_rng(0), weights=w)
    _, V_d, _ = fit_nmf(P_dup, 2, 0.1, "zero", max_iter=3000, tol=1e-14, rng=np.random.default_rng(0))
    Uw = fit_rows_given(P, V_w, 0.1)
    Ud = fit_rows_given(P, V_d, 0.1)
    # Same fitted reconstruction (factors are unique only up to permutation/scaling).
    np.testing.assert_allclose(Uw @ V_w.T, Ud @ V_d.T, atol=2e-2)


def test_bad_parameters():
    X = sp.csr_matrix(np.ones((3, 3)))
    with pytest.raises(ConfigError, match="mode"):
        fit_nmf(X, 2, mode="dense")
    with pytest.raises(ConfigError, match="rank"):
        fit_nmf(X, 0)
    with pytest.raises(ConfigError, match="mode"):  # round 2's row fit refuses it too, not fits it as observed
        fit_rows_given(X, np.ones((3, 2)), mode="dense")


def test_objective_from_the_v_updates_products_equals_the_direct_objective():
    # fit_nmf evaluates F from the products of the V update; same value as objective()
    from dpfed_core.models.factorization import objective_from_products

    g = np.random.default_rng(5)
    X = sp.random(60, 40, density=0.2, random_state=5, format="csr") * 3
    U, V = g.random((60, 4)), g.random((40, 4))
    prods = {}
    V2 = update_factor(X.T.tocsr(), V, U, 0.1, "zero", products=prods)
    xx = float(X.multiply(X).sum())
    assert np.isclose(objective_from_products(xx, V2, U, prods["A"], prods["B"], 0.1),
                      objective(X, U, V2, 0.1, "zero"), rtol=1e-10)
    _, _, hist = fit_nmf(X, 4, max_iter=5, tol=0.0, rng=np.random.default_rng(0))
    assert all(b <= a * (1 + 1e-9) for a, b in zip(hist, hist[1:]))


def _long_tail(rng, n=120, m=600):
    """Ratings on a long tail of items (most items seen by one or two users): the shape on which the
    observed-mode objective keeps falling slowly for thousands of iterations."""
    p = 1.0 / np.arange(1, m + 1) ** 1.1
    p /= p.sum()
    rows = np.repeat(np.arange(n), 40)
    cols = rng.choice(m, size=rows.size, p=p)
    X = sp.csr_matrix((rng.integers(1, 6, size=rows.size).astype(float), (rows, cols)), shape=(n, m))
    X.data = np.minimum(X.data, 5.0)
    return X


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_fits_stop_at_their_tolerance_not_their_cap(mode):
    from dpfed_core.models.factorization import TOL, converged

    rng = np.random.default_rng(3)
    X = _long_tail(rng)
    U, V, hist = fit_nmf(X, 6, 0.1, mode, max_iter=400, rng=np.random.default_rng(0))
    h = np.asarray(hist)
    assert len(h) - 1 < 400, "the fit ran to its cap"
    assert converged(hist, TOL) and not converged(hist[:-1], TOL)
    assert h[-2] - h[-1] <= TOL * (h[0] - h[-1])
    # what is left is small against what was gained: a long run gains < 1 % of the decrease more
    _, _, long = fit_nmf(X, 6, 0.1, mode, max_iter=3000, tol=0, rng=np.random.default_rng(0))
    assert h[-1] - long[-1] < 0.01 * (h[0] - long[-1])
    # the objective kept from the update's residual is the objective
    assert objective(X, U, V, 0.1, mode) == pytest.approx(h[-1], rel=1e-10)


def test_converged_is_the_decrease_against_the_progress_made():
    from dpfed_core.models.factorization import converged

    assert not converged([10.0], 1e-4)
    assert converged([10.0, 10.0], 1e-4)  # no progress at all
    assert not converged([100.0, 50.0, 49.0], 1e-2)  # 1 against 51 made
    assert converged([100.0, 50.0, 49.9], 1e-2)  # 0.1 against 50.1


def test_observed_rows_given_stops_at_the_same_solution_with_the_setup_kept_across_sweeps():
    rng = np.random.default_rng(8)
    X = _long_tail(rng, 60, 200)
    V = rng.random((200, 5))
    U = fit_rows_given(X, V, 0.1, "observed", max_sweeps=500, tol=1e-10)
    ref = np.zeros_like(U)
    for _ in range(500):  # one sweep at a time through the public update
        ref = update_factor(X, ref, V, 0.1, "observed", sweeps=1)
    np.testing.assert_allclose(U, ref, atol=1e-8)


def test_sum_of_squares_reads_the_entries_without_a_copy_duplicates_summed_first():
    from dpfed_core.models.factorization import sum_of_squares

    X = _random_sparse(np.random.default_rng(2))
    assert sum_of_squares(X) == pytest.approx(float(X.multiply(X).sum()), rel=1e-12)
    assert sum_of_squares(X.toarray()) == pytest.approx(float(X.multiply(X).sum()), rel=1e-12)
    # (0, 1) stored twice: the entry is 5, not two 2.5s
    dup = sp.csr_matrix((np.array([2.5, 2.5, 1.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 3))
    assert not dup.has_canonical_format
    assert sum_of_squares(dup) == 26.0 and dup.nnz == 3            # the caller's matrix untouched


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_the_row_fit_stops_relative_to_the_largest_factor_so_tiny_values_are_fitted_exactly(mode):
    """fit_rows_given's stopping rule is relative to ‖U‖∞: the ridge-NNLS solution is homogeneous in
    X, so values a billion times smaller give factors a billion times smaller, not a first sweep."""
    rng = np.random.default_rng(9)
    X = _random_sparse(rng, n=15, m=20, density=0.5)
    V = rng.uniform(0, 1, size=(20, 4))
    U = fit_rows_given(X, V, lam=0.1, mode=mode, max_sweeps=5000, tol=1e-10)
    tiny = fit_rows_given(X * 1e-9, V, lam=0.1, mode=mode, max_sweeps=5000, tol=1e-10)
    np.testing.assert_allclose(tiny * 1e9, U, rtol=1e-6, atol=1e-9)


def test_the_starting_factors_have_the_mean_product_asked_for():
    from dpfed_core.models.factorization import init_factors

    U, V = init_factors((4000, 3000), 5, 2.5, np.random.default_rng(0))
    assert U.shape == (4000, 5) and V.shape == (3000, 5) and (U >= 0).all() and (V >= 0).all()
    assert float(U.mean(axis=0) @ V.mean(axis=0)) == pytest.approx(2.5, rel=0.02)


def test_an_observed_fit_starts_at_the_mean_of_the_observed_entries():
    X = _random_sparse(np.random.default_rng(3), n=300, m=200, density=0.05)
    for mode, mean in (("observed", X.data.mean()), ("zero", X.sum() / (300 * 200))):
        U, V, hist = fit_nmf(X, 4, 0.1, mode, max_iter=0, rng=np.random.default_rng(1))
        assert len(hist) == 1
        assert float(U.mean(axis=0) @ V.mean(axis=0)) == pytest.approx(mean, rel=0.1), mode


def test_row_weights_leave_u_predicting_the_unweighted_rows():
    """The weights scale the rows by √w for the fit; the returned U is unscaled again, so U Vᵀ is the
    rows themselves (a row of weight 0 gets zero factors)."""
    rng = np.random.default_rng(6)
    X = rng.uniform(0.5, 2, size=(8, 2)) @ rng.uniform(0.5, 2, size=(2, 10))  # exactly rank 2, positive
    w = np.array([4.0, 4.0, 9.0, 1.0, 4.0, 2.0, 4.0, 0.0])
    U, V, _ = fit_nmf(X, 2, 1e-6, "zero", max_iter=3000, tol=1e-14, rng=np.random.default_rng(0), weights=w)
    np.testing.assert_allclose((U @ V.T)[:-1], X[:-1], rtol=1e-2)
    assert not U[-1].any()


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_the_row_fit_stops_only_when_every_column_has_stopped_moving(mode):
    """The stopping rule reads the largest change over all ℓ columns of a sweep: here column 2 lives on
    items of its own, so it is exact after one sweep, while columns 0 and 1 (nearly parallel) take many
    sweeps; stopping when the last column stops moving would leave them far from the NNLS solution."""
    rng = np.random.default_rng(11)
    m = 20
    V = np.zeros((m, 3))
    V[:10, 0] = 1.0 + 0.05 * rng.random(10)
    V[:10, 1] = 1.0 + 0.05 * rng.random(10)
    V[10:, 2] = rng.uniform(0.5, 1.5, size=10)
    X = sp.csr_matrix(rng.uniform(1, 5, size=(6, m)))  # every cell observed: both modes solve the same rows
    lam = 0.01
    U = fit_rows_given(X, V, lam=lam, mode=mode, max_sweeps=20000, tol=1e-12)
    for i in range(X.shape[0]):
        A = np.vstack([V, np.sqrt(lam) * np.eye(3)])
        u_ref, _ = nnls(A, np.concatenate([X[i].toarray().ravel(), np.zeros(3)]))
        np.testing.assert_allclose(U[i], u_ref, atol=1e-6)


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_the_row_fit_runs_at_most_max_sweeps_sweeps_from_zero(mode):
    """max_sweeps is the number of sweeps a row fit may take, no fewer: with no tolerance to stop it,
    k sweeps are k sweeps of the public update from U = 0."""
    rng = np.random.default_rng(12)
    X = _random_sparse(rng, n=10, m=15, density=0.5)
    V = rng.uniform(0, 1, size=(15, 3))
    for k in (1, 2, 5):
        U = fit_rows_given(X, V, lam=0.1, mode=mode, max_sweeps=k, tol=0.0)
        ref = update_factor(X, np.zeros((10, 3)), V, 0.1, mode, sweeps=k)
        assert U.any()
        np.testing.assert_allclose(U, ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_a_dense_matrix_is_fitted_as_its_sparse_copy(mode):
    """A dense X is the same data as its sparse copy: in observed mode its zero cells are unobserved, so
    the start (the mean of the observed entries) and every iteration are those of the sparse fit."""
    X = _random_sparse(np.random.default_rng(3), n=60, m=40, density=0.1)
    for iters in (0, 4):
        Us, Vs, hs = fit_nmf(X, 3, 0.1, mode, max_iter=iters, tol=0.0, rng=np.random.default_rng(1))
        Ud, Vd, hd = fit_nmf(X.toarray(), 3, 0.1, mode, max_iter=iters, tol=0.0, rng=np.random.default_rng(1))
        np.testing.assert_allclose(Ud, Us, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(Vd, Vs, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(hd, hs, rtol=1e-10)


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_a_row_fit_of_no_rows_is_no_factors(mode):
    """A site with no training rows (every user of a small entity held out for testing) still gets its
    round 2: an empty (0 × ℓ) row factor, not an error."""
    V = np.random.default_rng(0).uniform(size=(7, 3))
    U = fit_rows_given(sp.csr_matrix((0, 7)), V, lam=0.1, mode=mode)
    assert U.shape == (0, 3)


@pytest.mark.parametrize("seed", [0, 2])
def test_round_twos_row_fit_with_its_defaults_is_the_exact_ridge_nnls(seed):
    """Round 2 and the site's blend call fit_rows_given with its default stopping rule: that rule must
    reach the ridge-NNLS solution to well within 0.1 % of the largest factor (a looser tolerance or
    fewer sweeps stop several per cent away from it on the same rows)."""
    rng = np.random.default_rng(seed)
    m, lam = 30, 0.1
    V = rng.uniform(0.5, 1.5, size=(m, 4))  # positive, strongly correlated columns: HALS converges slowly
    X = sp.csr_matrix((rng.random((20, m)) < 0.4) * rng.integers(1, 6, size=(20, m)).astype(float))
    U = fit_rows_given(X, V, lam)
    A = np.vstack([V, np.sqrt(lam) * np.eye(4)])
    for i in range(X.shape[0]):
        u_ref, _ = nnls(A, np.concatenate([X[i].toarray().ravel(), np.zeros(4)]))
        assert np.abs(U[i] - u_ref).max() <= 1e-3 * np.abs(u_ref).max(), i


def test_a_negative_row_weight_counts_as_zero():
    """Row weights are released cluster sizes, which DP noise can push below zero: such a row weighs
    nothing (its √w is never taken), so the fit is the fit with that weight at zero, not NaN."""
    rng = np.random.default_rng(7)
    P = rng.uniform(0, 3, size=(6, 8))
    neg = np.array([2.0, 1.0, 1.0, -3.0, 1.0, 1.0])
    zero = np.where(neg < 0, 0.0, neg)
    U_n, V_n, h_n = fit_nmf(P, 2, 0.1, "zero", max_iter=50, rng=np.random.default_rng(0), weights=neg)
    U_z, V_z, h_z = fit_nmf(P, 2, 0.1, "zero", max_iter=50, rng=np.random.default_rng(0), weights=zero)
    assert np.isfinite(V_n).all() and np.isfinite(U_n).all()
    np.testing.assert_array_equal(V_n, V_z)
    np.testing.assert_array_equal(U_n, U_z)
    assert not U_n[3].any()


def test_an_observed_fit_of_a_repeated_cell_is_the_fit_of_its_sum():
    """A cell stored twice is one observed entry of their sum (as scipy reads the matrix), not two
    entries each fitted on its own: the observed fit equals the fit of the canonical copy."""
    X = _random_sparse(np.random.default_rng(4), n=20, m=15, density=0.3)
    dup = sp.csr_matrix((np.repeat(X.data / 2, 2), np.repeat(X.indices, 2), 2 * X.indptr), shape=X.shape)
    assert dup.nnz == 2 * X.nnz and (dup.toarray() == X.toarray()).all()  # each cell stored as two halves
    Ud, Vd, hd = fit_nmf(dup, 3, 0.1, "observed", max_iter=5, tol=0.0, rng=np.random.default_rng(1))
    Uc, Vc, hc = fit_nmf(X, 3, 0.1, "observed", max_iter=5, tol=0.0, rng=np.random.default_rng(1))
    np.testing.assert_allclose(Ud, Uc, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hd, hc, rtol=1e-9)


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_without_ridge_a_factor_column_of_zeros_gives_zero_not_nan(mode):
    """λ = 0 is accepted: a column of V that is all zeros leaves F independent of that column of U,
    whose value is then the ridge's limit 0 — never 0/0, which would spread NaN to every column."""
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    V = np.array([[1.0, 0.0], [0.5, 0.0], [1.0, 0.0]])
    U = fit_rows_given(X, V, lam=0.0, mode=mode, max_sweeps=50)
    # least squares on the first column alone: zero mode over every cell, observed over the stored ones
    want = [[3 / 2.25, 0.0], [1.5 / 2.25, 0.0]] if mode == "zero" else [[1.5, 0.0], [6.0, 0.0]]
    np.testing.assert_allclose(U, want, atol=1e-12)


def test_without_ridge_an_item_nobody_holds_gets_zero_factors_and_the_run_is_evaluated():
    """Observed mode, λ = 0 and an item without any training entry (the common case on real data): that
    item's factors are 0, every score is finite and the run's metrics are computed, not a crash."""
    from dpfed_core.config import RunConfig
    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.evaluation.experiments import make_split, run_method

    X = np.array([[1.0, 0.0, 2.0], [3.0, 0.0, 0.0]])
    U, V, hist = fit_nmf(sp.csr_matrix(X), 2, lam=0.0, mode="observed", max_iter=5, rng=np.random.default_rng(0))
    assert np.isfinite(U).all() and np.isfinite(hist).all() and (V[1] == 0).all() and (V[[0, 2]] > 0).any()
    U, V, hist = fit_nmf(sp.csr_matrix((3, 3)), 2, lam=0.0, max_iter=3, rng=np.random.default_rng(0))
    assert (U == 0).all() and (V == 0).all() and hist[-1] == 0.0
    g = np.random.default_rng(0)
    R = (g.random((60, 20)) < 0.3) * g.integers(1, 6, (60, 20)).astype(float)
    R[:, 19] = 0.0  # nobody holds the last item
    ds = FederatedDataset.from_parts(sp.csr_matrix(R), np.repeat(["a", "b"], 30), value_kind="ratings",
                                     item_source="declared")
    for method in ("central", "individual"):
        cfg = RunConfig(method=method, rank=3, max_iter=10, mode="observed", lam=0.0, seed=1, top_n=5)
        doc, res = run_method(ds, cfg, make_split(ds, cfg))
        assert np.isfinite(res.entity_factors().scores(np.arange(ds.n_users))).all()
        assert 0.0 <= doc["overall"]["mar"] <= 1.0 and np.isfinite(doc["overall"]["test_rmse"])


def test_a_factor_update_minimises_the_ridge_objective_in_that_factor():
    """Each alternating update of :func:`fit_nmf` is block descent on F with its ridge: run to
    convergence from any start, a zero-mode update of one factor is the exact ridge NNLS fit of that
    factor (round 2's row fit), never the fit without λ."""
    rng = np.random.default_rng(6)
    X = _random_sparse(rng, n=15, m=20, density=0.4)
    V = rng.uniform(0, 1, size=(20, 3))
    lam = 5.0
    U = update_factor(X, rng.uniform(0, 2, size=(15, 3)), V, lam, "zero", sweeps=3000)
    np.testing.assert_allclose(U, fit_rows_given(X, V, lam, "zero", max_sweeps=3000, tol=1e-13), atol=1e-8)
    assert not np.allclose(U, fit_rows_given(X, V, 0.0, "zero", max_sweeps=3000, tol=1e-13), atol=1e-3)
