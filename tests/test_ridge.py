"""Ridge solves that hold at λ = 0 (dpfed_core.models.ridge), and the methods built on them."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import run_method
from dpfed_core.evaluation.service import check_run
from dpfed_core.models.ridge import ridge_inverse, ridge_solve


def test_a_regular_system_is_numpys_solve_to_the_bit_and_a_singular_one_its_minimum_norm_solution():
    rng = np.random.default_rng(0)
    V = rng.random((6, 3))
    A = V.T @ V + 0.1 * np.eye(3)
    b = rng.random((3, 2))
    assert np.array_equal(ridge_solve(A, b), np.linalg.solve(A, b))
    assert np.array_equal(ridge_inverse(A), np.linalg.inv(A))
    V[:, 2] = 0.0                                   # a factor column nobody's entries reach; λ = 0
    A0, y = V.T @ V, rng.random(6)
    x = ridge_solve(A0, (V.T @ y)[:, None])[:, 0]
    np.testing.assert_allclose(x, np.linalg.lstsq(V, y, rcond=None)[0], atol=1e-12)
    assert x[2] == pytest.approx(0.0, abs=1e-12)
    # the ridge's limit as λ → 0+, not an arbitrary solution of the singular system
    lim = np.linalg.solve(A0 + 1e-9 * np.eye(3), V.T @ y)
    np.testing.assert_allclose(x, lim, atol=1e-6)
    np.testing.assert_allclose(ridge_inverse(A0) @ (V.T @ y), x, atol=1e-12)
    # a stack with one singular system: every system still solved, the regular ones as before
    stack = np.stack([A, A0])
    rhs = np.stack([b[:, :1], (V.T @ y)[:, None]])
    out = ridge_solve(stack, rhs)
    np.testing.assert_allclose(out[0], np.linalg.solve(A, b[:, :1]), atol=1e-12)
    np.testing.assert_allclose(out[1][:, 0], x, atol=1e-12)


def _with_an_item_nobody_holds() -> FederatedDataset:
    rng = np.random.default_rng(3)
    X = (rng.random((40, 12)) < 0.5) * rng.integers(1, 6, (40, 12))
    X[:, 11] = 0                                    # the catalogue's last item: no rating anywhere
    X[:, 0] = np.maximum(X[:, 0], 1)
    return FederatedDataset.from_parts(sp.csr_matrix(X.astype(float)), np.repeat(["a", "b"], 20),
                                       value_kind="ratings", value_max=5.0, name="unheld")


@pytest.mark.parametrize("method", ["dp-als", "ge-mf", "fcf"])
def test_a_run_without_ridge_on_data_with_an_item_nobody_holds_is_evaluated(method):
    ds = _with_an_item_nobody_holds()
    cfg = RunConfig(method=method, lam=0.0, mode="observed", simulation=True, rank=4, epsilon=3.0, seed=0)
    doc, res = run_method(ds, cfg)
    assert np.isfinite(res.U).all() and np.isfinite(res.V).all()
    overall = doc["overall"]
    assert overall["n_test_users"] > 0 and 0 <= overall["mar"] <= 1 and np.isfinite(overall["test_rmse"])


def test_output_perturbation_without_ridge_is_refused_before_the_run_naming_lambda():
    ds = _with_an_item_nobody_holds()
    cfg = RunConfig(method="friedman-pals", lam=0.0, mode="observed", epsilon=1.0)
    with pytest.raises(ConfigError, match=r"friedman-pals needs a ridge penalty λ > 0") as exc:
        check_run(ds, cfg)
    assert exc.value.param == "lam"
    with pytest.raises(ConfigError, match=r"friedman-pals needs a ridge penalty λ > 0"):
        check_run(ds, cfg.replace(method="dp-cooccurrence"), compare=["friedman-pals"])
    with pytest.raises(ConfigError, match=r"friedman-pals needs a ridge penalty λ > 0"):
        check_run(ds, cfg.replace(epsilon=float("inf")))
    check_run(ds, cfg.replace(lam=0.1))
    check_run(ds, cfg.replace(method="friedman-psgd"))   # a gradient perturbation needs no ridge


def test_the_pals_estimator_itself_refuses_a_fit_without_ridge():
    from dpfed_core.methods.comparison.friedman import FriedmanMF

    X = _with_an_item_nobody_holds().X
    with pytest.raises(ConfigError, match=r"PALS needs a ridge penalty λ > 0, got λ = 0"):
        FriedmanMF(algorithm="pals", epsilon=1.0, lam=0.0, factors=2, random_state=0).fit(X)
    FriedmanMF(algorithm="pals", epsilon=1.0, lam=0.1, factors=2, random_state=0, iterations=1).fit(X)


def test_dp_als_site_users_without_ridge_are_their_minimum_norm_directions():
    from dpfed_core.federation.dp_als import _user_factors

    rng = np.random.default_rng(1)
    V = rng.random((8, 3))
    V[:, 1] = 0.0                                   # a factor no item carries: VᵀV is singular at λ = 0
    X = sp.csr_matrix((rng.random((5, 8)) < 0.6).astype(float))
    U = _user_factors(X, V, 0.0)
    want = np.maximum(np.linalg.lstsq(V, X.toarray().T, rcond=None)[0].T, 0.0)
    norms = np.linalg.norm(want, axis=1, keepdims=True)
    np.testing.assert_allclose(U, np.where(norms > 1e-12, want / np.maximum(norms, 1e-300), 0.0), atol=1e-10)
    assert np.all(U[:, 1] == 0.0)


@pytest.mark.parametrize("mode", ["observed", "zero"])
def test_dp_als_in_its_non_private_limit_without_ridge_is_evaluated(mode):
    ds = _with_an_item_nobody_holds()
    doc, res = run_method(ds, RunConfig(method="dp-als", lam=0.0, mode=mode, epsilon=float("inf"), rank=4, seed=0))
    assert np.isfinite(res.U).all() and np.isfinite(res.V).all()
    assert 0 <= doc["overall"]["mar"] <= 1
