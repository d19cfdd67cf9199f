"""FCF (Ammad-ud-din et al. 2019) and centralised implicit ALS: update rules on tiny problems, the
server gradient against the clients' uploads, convergence to ALS, divergence of plain GD, the leak."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.methods.comparison import fcf
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import run_method
from dpfed_core.methods import get_method


def tiny_implicit(seed=0, n=40, m=25, per_user=6, counts=False) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for u in range(n):
        items = rng.choice(m, per_user, replace=False)
        rows += [u] * per_user
        cols += items.tolist()
        vals += (rng.integers(1, 4, per_user) if counts else np.ones(per_user)).tolist()
    return sp.csr_matrix((np.array(vals, float), (rows, cols)), shape=(n, m))


def dense_parts(R, alpha):
    D = R.toarray()
    return (D > 0).astype(float), 1 + alpha * D


def test_solve_rows_matches_eq7_and_zeroes_gradient():
    R = tiny_implicit(1, counts=True)
    alpha, lam = 2.0, 0.7
    Y = np.random.default_rng(2).normal(size=(R.shape[1], 3))
    X = fcf.solve_rows(R, Y, alpha, lam)
    P, C = dense_parts(R, alpha)
    for u in range(R.shape[0]):
        Cu = np.diag(C[u])
        expect = np.linalg.solve(Y.T @ Cu @ Y + lam * np.eye(3), Y.T @ Cu @ P[u])  # Eq. 7
        np.testing.assert_allclose(X[u], expect, atol=1e-10)
        grad = -2 * Y.T @ (C[u] * (P[u] - Y @ X[u])) + 2 * lam * X[u]  # Eq. 6
        np.testing.assert_allclose(grad, 0, atol=1e-9)


def test_objective_matches_dense_eq5():
    R = tiny_implicit(3, counts=True)
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(R.shape[0], 2)), rng.normal(size=(R.shape[1], 2))
    P, C = dense_parts(R, 1.5)
    dense = np.sum(C * (P - X @ Y.T) ** 2) + 0.3 * (np.sum(X ** 2) + np.sum(Y ** 2))
    assert fcf.objective(R, X, Y, 1.5, 0.3) == pytest.approx(dense)


def test_server_gradient_is_sum_of_client_uploads_and_true_gradient():
    R = tiny_implicit(5, counts=True)
    alpha, lam = 1.5, 0.4
    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(R.shape[0], 3)), rng.normal(size=(R.shape[1], 3))
    uploads = sum(fcf.client_upload(X[u], Y, R[u].indices, R[u].data, alpha) for u in range(R.shape[0]))
    g = fcf.item_gradient(R, X, Y, alpha, lam)
    np.testing.assert_allclose(g, -2 * uploads.T + 2 * lam * Y, atol=1e-10)  # Eq. 12
    # and it is ∂J/∂Y (central finite differences on a few coordinates)
    h = 1e-6
    for (i, k) in [(0, 0), (3, 1), (10, 2)]:
        Yp, Ym = Y.copy(), Y.copy()
        Yp[i, k] += h
        Ym[i, k] -= h
        num = (fcf.objective(R, X, Yp, alpha, lam) - fcf.objective(R, X, Ym, alpha, lam)) / (2 * h)
        assert g[i, k] == pytest.approx(num, rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(fcf.item_gradient(R, X, Y, alpha, lam, "mean"),
                               -2 * uploads.T / R.shape[0] + 2 * lam * Y, atol=1e-10)


@pytest.mark.parametrize("alpha", [1.0, 10.0])
def test_one_fcf_epoch_reaches_the_als_item_step(alpha):
    R = tiny_implicit(7, n=300, m=30, per_user=8)
    Y0 = np.random.default_rng(8).normal(0, 0.1, (30, 4))
    X = fcf.solve_rows(R, Y0, alpha, 1.0)
    Y_als = fcf.solve_rows(R.T.tocsr(), X, alpha, 1.0)
    model = fcf.FCF(factors=4, alpha=alpha, lam=1.0, epochs=1, gd_iters=20).fit(R, Y0=Y0)
    err = np.linalg.norm(model.Y_ - Y_als) / np.linalg.norm(Y_als)
    assert err < 1e-2  # notes B.8: ~1e-4 with the paper's Adam settings


def test_plain_gd_with_paper_step_diverges_and_is_reported():
    R = tiny_implicit(9, n=400, m=30, per_user=8)
    with pytest.raises(ConfigError, match="diverged"):
        fcf.FCF(factors=4, alpha=1.0, lam=1.0, epochs=3, gd_iters=20, optimizer="gd", gamma=0.05,
                random_state=0).fit(R)


def test_fcf_and_als_agree_on_scores():
    R = tiny_implicit(10, n=120, m=30, per_user=7)
    Y0 = np.random.default_rng(0).normal(0, 0.1, (30, 3))
    a = fcf.ImplicitALS(3, 2.0, 1.0, epochs=10).fit(R, Y0=Y0)
    f = fcf.FCF(3, 2.0, 1.0, epochs=10, gd_iters=10).fit(R, Y0=Y0)
    Sa, Sf = a.X_ @ a.Y_.T, f.X_ @ f.Y_.T
    assert np.linalg.norm(Sa - Sf) / np.linalg.norm(Sa) < 0.05
    assert f.rounds_ == 100 and len(f.history_) == 10


def test_single_upload_reveals_items_factor_and_values():
    rng = np.random.default_rng(11)
    M, K, alpha = 200, 4, 2.0
    Y = rng.normal(0, 0.3, (M, K))
    x = rng.normal(0, 0.5, K)
    items = np.sort(rng.choice(M, 19, replace=False))
    vals = rng.integers(1, 6, 19).astype(float)
    F = fcf.client_upload(x, Y, items, vals, alpha)
    assert np.linalg.matrix_rank(F) == 1
    res = fcf.analyse_client_upload(F, Y, alpha)
    np.testing.assert_array_equal(np.sort(res["items"]), items)
    np.testing.assert_allclose(res["x_u"], x, atol=1e-10)
    np.testing.assert_allclose(res["values"][np.argsort(res["items"])], vals, atol=1e-8)


def test_what_one_upload_reveals_on_fitted_model():
    R = tiny_implicit(12, n=80, m=40, per_user=6)
    model = fcf.FCF(3, 1.0, 1.0, epochs=3, gd_iters=5, random_state=0).fit(R)
    out = fcf.what_one_upload_reveals(model, R, 7)
    assert out["precision"] == 1.0 and out["recall"] == 1.0
    assert out["n_recovered_items"] == 6 and out["x_u_max_error"] < 1e-8
    assert "reveals 6 interacted items" in out["summary"]


# ------------------------------------------------------------------------------------ engine
def implicit_dataset():
    X = tiny_implicit(13, n=60, m=30, per_user=9)
    return FederatedDataset.from_parts(X, np.where(np.arange(60) % 3 == 0, "A", "B"), value_kind="implicit")


def test_registered_implicit_als_runs():
    doc, res = run_method(implicit_dataset(), RunConfig(method="implicit-als", rank=3, n_hidden=2,
                                                        method_params={"epochs": 3, "alpha": 2.0}))
    assert np.isfinite(doc["overall"]["precision_at_10"])
    assert get_method("implicit-als").privacy.startswith("non-private")
    assert math.isinf(doc["privacy"]["epsilon"])


def test_registered_fcf_runs_and_logs_every_round():
    ds = implicit_dataset()
    cfg = RunConfig(method="fcf", rank=3, n_hidden=2, method_params={"epochs": 2, "gd_iters": 4})
    doc, res = run_method(ds, cfg)
    from dpfed_core.privacy.model import PrivacyModel

    assert get_method("fcf").privacy_model is PrivacyModel.NO_FORMAL_CLAIM
    assert "gradients of raw data leave every round" in get_method("fcf").privacy
    # no formal claim: no ε is asked of it or stated for it, and the budget store counts its release as ∞
    from dpfed_core.evaluation.budget import plan_run

    asked = cfg.replace(epsilon=1.0, method_params={"epochs": 1, "gd_iters": 1})   # an ε it cannot honour
    stated, _ = run_method(ds, asked)
    assert not get_method("fcf").uses_epsilon
    assert math.isinf(stated["privacy"]["epsilon"]) and math.isinf(stated["privacy"]["requested_epsilon"])
    assert math.isinf(stated["config"]["epsilon"])
    assert [math.isinf(p.epsilon) for p in plan_run(ds, asked)] == [True]
    assert np.isfinite(doc["overall"]["precision_at_10"])
    rounds = {m["round"] for m in doc["messages"]}
    assert rounds == set(range(1, 9))
    assert len(doc["messages"]) == 8 * ds.n_entities * 2
    up = [m for m in doc["messages"] if m["sender"] == "A"]
    n_a = int((ds.entity_of_user == 0).sum())
    assert up[0]["bytes"] == n_a * 3 * ds.n_items * 8
    with pytest.raises(ConfigError):
        run_method(ds, cfg.replace(method_params={"optimiser": "adam"}))


# ------------------------------------------------------------------------------------ stated rules
def test_the_implicit_matrix_keeps_only_positive_entries_binarised_when_asked():
    X = sp.csr_matrix(np.array([[2.0, -1.0, 0.0], [0.0, 3.0, -4.0]]))
    kept = fcf.implicit_matrix(X, binarize=False)
    np.testing.assert_array_equal(kept.toarray(), [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    assert kept.nnz == 2
    ones = fcf.implicit_matrix(X)
    np.testing.assert_array_equal(ones.toarray(), [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert ones.nnz == 2


def test_standard_adam_corrects_its_moments_by_the_step_exponent():
    R = fcf.implicit_matrix(tiny_implicit(3, n=20, m=12, per_user=4))
    Y0 = np.random.default_rng(4).normal(0, 0.1, (12, 2))
    b1, b2, gamma, eps, alpha, lam = 0.4, 0.99, 0.2, 1e-8, 1.0, 1.0
    X = fcf.solve_rows(R, Y0, alpha, lam)  # solved once per epoch (x_refresh="epoch")
    Y, m, v = Y0.copy(), np.zeros_like(Y0), np.zeros_like(Y0)
    for t in (1, 2):
        g = fcf.item_gradient(R, X, Y, alpha, lam)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        Y = Y - gamma * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    f = fcf.FCF(2, alpha, lam, epochs=1, gd_iters=2, adam_bias="standard").fit(R, Y0=Y0)
    np.testing.assert_allclose(f.Y_, Y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["factors", "epochs", "gd_iters"])
def test_fewer_than_one_factor_epoch_or_round_is_refused_by_name(name):
    with pytest.raises(ConfigError, match=f"{name} must be ≥ 1"):
        fcf.FCF(**{name: 0})._validate()


def test_counts_keep_their_confidence_and_ratings_are_binarised():
    cfg = RunConfig(method="fcf", rank=3)
    X = tiny_implicit(5, n=6, m=5, per_user=2, counts=True)
    labels = np.where(np.arange(6) < 3, "A", "B")
    counts = FederatedDataset.from_parts(X, labels, value_kind="counts", value_max=5.0)
    ratings = FederatedDataset.from_parts(X, labels, value_kind="ratings")
    assert fcf._params(cfg, counts, fcf.FCF_PARAMETERS)["binarize"] is False
    assert fcf._params(cfg, ratings, fcf.FCF_PARAMETERS)["binarize"] is True


def test_an_uploads_precision_is_over_the_recovered_items_and_recall_over_the_users_own(monkeypatch):
    R = tiny_implicit(12, n=80, m=40, per_user=6)
    model = fcf.FCF(3, 1.0, 1.0, epochs=1, gd_iters=2, random_state=0).fit(R)
    truth = np.sort(R[7].indices)
    wrong = np.setdiff1d(np.arange(40), truth)[:1]
    real = fcf.analyse_client_upload

    def two_right_one_wrong(F, Y, alpha=None, threshold=0.5):
        out = real(F, Y, alpha, threshold)
        return {**out, "items": np.concatenate([truth[:2], wrong])}

    monkeypatch.setattr(fcf, "analyse_client_upload", two_right_one_wrong)
    out = fcf.what_one_upload_reveals(model, R, 7)
    assert out["n_recovered_items"] == 3 and out["n_true_items"] == 6
    assert out["precision"] == pytest.approx(2 / 3) and out["recall"] == pytest.approx(2 / 6)


def _small_problem():
    R = fcf.implicit_matrix(tiny_implicit(3, n=20, m=12, per_user=4))
    return R, np.random.default_rng(4).normal(0, 0.1, (12, 2))


def test_a_gradient_reduction_other_than_sum_or_mean_is_refused_by_name():
    R, Y0 = _small_problem()
    X = fcf.solve_rows(R, Y0, 1.0, 1.0)
    with pytest.raises(ConfigError, match="grad_reduction must be 'sum' or 'mean', got 'avg'"):
        fcf.item_gradient(R, X, Y0, 1.0, 1.0, "avg")
    with pytest.raises(ConfigError, match="grad_reduction"):
        fcf.FCF(2, epochs=1, gd_iters=1, grad_reduction="avg").fit(R, Y0=Y0)


@pytest.mark.parametrize("name, value", [("optimizer", "sgd"), ("adam_bias", "Paper"), ("x_refresh", "user")])
def test_an_unknown_optimiser_bias_correction_or_refresh_is_refused_by_name(name, value):
    with pytest.raises(ConfigError, match=f"{name} must be '.*', got '{value}'"):
        fcf.FCF(**{name: value})._validate()


@pytest.mark.parametrize("bias", ["paper", "standard"])
def test_each_epoch_restarts_adam_unless_told_to_keep_its_state(bias):
    """With the reset, an epoch depends on the item factors it starts from only: two epochs are one
    epoch run again from the first one's Y. Without it Adam's moments and step count carry over."""
    R, Y0 = _small_problem()
    kw = dict(factors=2, alpha=1.0, lam=1.0, gd_iters=3, adam_bias=bias)
    first = fcf.FCF(epochs=1, **kw).fit(R, Y0=Y0)
    again = fcf.FCF(epochs=1, **kw).fit(R, Y0=first.Y_)
    two = fcf.FCF(epochs=2, **kw).fit(R, Y0=Y0)
    np.testing.assert_allclose(two.Y_, again.Y_, rtol=1e-12, atol=1e-14)
    kept = fcf.FCF(epochs=2, reset_state_each_epoch=False, **kw).fit(R, Y0=Y0)
    assert not np.allclose(kept.Y_, two.Y_, rtol=1e-6, atol=1e-9)


def test_round_refresh_re_solves_the_clients_factors_before_every_later_round():
    R, Y0 = _small_problem()
    b1, b2, gamma, eps = 0.4, 0.99, 0.2, 1e-8
    Y, m, v = Y0.copy(), np.zeros_like(Y0), np.zeros_like(Y0)
    for _ in range(2):
        X = fcf.solve_rows(R, Y, 1.0, 1.0)  # every round, not once per epoch
        g = fcf.item_gradient(R, X, Y, 1.0, 1.0)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        Y = Y - gamma * (m / (1 - b1)) / (np.sqrt(v / (1 - b2)) + eps)
    f = fcf.FCF(2, 1.0, 1.0, epochs=1, gd_iters=2, x_refresh="round").fit(R, Y0=Y0)
    np.testing.assert_allclose(f.Y_, Y, rtol=1e-10, atol=1e-12)


def test_a_plain_gradient_step_moves_against_the_gradient_and_the_clients_end_on_the_final_items():
    R, Y0 = _small_problem()
    X = fcf.solve_rows(R, Y0, 1.0, 1.0)
    f = fcf.FCF(2, 1.0, 1.0, epochs=1, gd_iters=1, optimizer="gd", gamma=1e-3).fit(R, Y0=Y0)
    np.testing.assert_allclose(f.Y_, Y0 - 1e-3 * fcf.item_gradient(R, X, Y0, 1.0, 1.0), rtol=1e-12, atol=1e-14)
    # each client re-solves x_u on the server's final Y, so X_ and Y_ are one model
    np.testing.assert_allclose(f.X_, fcf.solve_rows(R, f.Y_, 1.0, 1.0), rtol=1e-12, atol=1e-14)
    assert not np.allclose(f.X_, X, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("declared", [fcf.FCF_PARAMETERS, fcf.ALS_PARAMETERS])
def test_factors_and_ridge_default_to_the_runs_rank_and_lambda_and_a_given_value_wins(declared):
    ds = implicit_dataset()
    params = fcf._params(RunConfig(method="fcf", rank=3, lam=0.25), ds, declared)
    assert params["factors"] == 3 and params["lam"] == 0.25
    none = RunConfig(method="fcf", rank=3, lam=0.25, method_params={"factors": None, "lam": None})
    params = fcf._params(none, ds, declared)  # an optional parameter set to none: the run's value
    assert params["factors"] == 3 and params["lam"] == 0.25
    given = RunConfig(method="fcf", rank=3, lam=0.25, method_params={"factors": 5, "lam": 2.0})
    params = fcf._params(given, ds, declared)
    assert params["factors"] == 5 and params["lam"] == 2.0


def test_only_ratings_are_said_to_be_binarised():
    X = tiny_implicit(5, n=6, m=5, per_user=2, counts=True)
    labels = np.where(np.arange(6) < 3, "A", "B")
    for kind, said in (("ratings", True), ("counts", False), ("implicit", False)):
        ds = FederatedDataset.from_parts(X, labels, value_kind=kind, value_max=5.0)
        assert any("binarised" in n for n in fcf._notes(ds)) is said, kind


def test_fcf_charges_every_entity_logs_both_directions_and_reports_progress_against_every_round():
    ds = implicit_dataset()
    events = []
    cfg = RunConfig(method="fcf", rank=3, method_params={"epochs": 2, "gd_iters": 3})
    res = fcf._fit_fcf(ds, ds.X.tocsr(), cfg, np.random.default_rng(0), lambda stage, **kw: events.append((stage, kw)))
    assert sorted(r.entity for r in res.ledger.rows) == sorted(ds.entity_names)
    assert all(math.isinf(r.epsilon) for r in res.ledger.rows)
    M = ds.n_items
    for name, sl in zip(ds.entity_names, ds.entity_slices()):
        n_h = sl.stop - sl.start
        down = [m for m in res.messages if m.receiver == name]
        up = [m for m in res.messages if m.sender == name]
        assert [m.round for m in down] == [m.round for m in up] == list(range(1, 7))
        assert all(m.shape == (n_h, M, 3) and m.bytes == n_h * M * 3 * 8 for m in down)
        assert all(m.shape == (n_h, 3, M) and m.bytes == n_h * 3 * M * 8 for m in up)
        # every client downloads Y and uploads its own gradient: one copy per client each way
        assert all(m.copies == n_h for m in down + up)
    assert [(kw["round"], kw["total"], kw["epoch"]) for stage, kw in events if stage == "fcf_round"] == [
        (1, 6, 1), (2, 6, 1), (3, 6, 1), (4, 6, 2), (5, 6, 2), (6, 6, 2)]
    assert res.extra["rounds"] == 6 and any("FCF used 6 communication rounds" in n for n in res.extra["notes"])


def test_implicit_als_charges_every_entity_for_the_raw_rows_it_pools():
    ds = implicit_dataset()
    train = ds.X.tocsr()
    cfg = RunConfig(method="implicit-als", rank=3, method_params={"epochs": 1})
    res = fcf._fit_implicit_als(ds, train, cfg, np.random.default_rng(0), lambda *a, **k: None)
    assert sorted(r.entity for r in res.ledger.rows) == sorted(ds.entity_names)
    assert all(math.isinf(r.epsilon) for r in res.ledger.rows)
    for name, sl in zip(ds.entity_names, ds.entity_slices()):
        (msg,) = [m for m in res.messages if m.sender == name]
        block = train[sl]
        assert msg.shape == (sl.stop - sl.start, ds.n_items)
        assert msg.bytes == block.data.nbytes + block.indices.nbytes + block.indptr.nbytes


def test_an_upload_names_at_most_max_items_and_claims_the_values_only_when_every_item_is_recovered(monkeypatch):
    R = tiny_implicit(12, n=80, m=40, per_user=6)
    model = fcf.FCF(3, 1.0, 1.0, epochs=1, gd_iters=2, random_state=0).fit(R)
    names = np.array([f"film {j}" for j in range(40)])
    truth = np.sort(R[7].indices)
    out = fcf.what_one_upload_reveals(model, R, 7, item_names=names, max_items=2)
    assert out["recovered_items"] == [f"film {j}" for j in truth[:2]]
    assert out["value_max_error"] < 1e-6 and "every interaction value" in out["summary"]
    real = fcf.analyse_client_upload

    def four_of_six(F, Y, alpha=None, threshold=0.5):
        out = real(F, Y, alpha, threshold)
        keep = np.isin(out["items"], truth[:4])
        return {**out, "items": out["items"][keep], "values": out["values"][keep]}

    monkeypatch.setattr(fcf, "analyse_client_upload", four_of_six)
    out = fcf.what_one_upload_reveals(model, R, 7)
    assert out["n_recovered_items"] == 4 and math.isnan(out["value_max_error"])
    assert "every interaction value" not in out["summary"]


def test_the_implicit_matrix_leaves_the_callers_matrix_as_it_was():
    """The engine hands its training matrix to FCF and implicit ALS; binarising or clearing it in place
    would change what every later method of the comparison and the evaluation read."""
    X = sp.csr_matrix(np.array([[3.0, -1.0, 0.0], [0.0, 2.0, 5.0]]))
    before = X.toarray()
    fcf.implicit_matrix(X)
    fcf.implicit_matrix(X, binarize=False)
    np.testing.assert_array_equal(X.toarray(), before)


def test_the_history_counts_epochs_from_one_with_the_rounds_so_far():
    R, Y0 = _small_problem()
    f = fcf.FCF(2, 1.0, 1.0, epochs=3, gd_iters=2).fit(R, Y0=Y0)
    assert [(h["epoch"], h["rounds"]) for h in f.history_] == [(1, 2), (2, 4), (3, 6)]
    a = fcf.ImplicitALS(2, 1.0, 1.0, epochs=3).fit(R, Y0=Y0)
    assert len(a.history_) == 3 and a.history_[-1] == pytest.approx(fcf.objective(R, a.X_, a.Y_, 1.0, 1.0))
