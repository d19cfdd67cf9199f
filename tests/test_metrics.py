import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.evaluation.metrics import evaluate, ranking_metrics


def _rows(dense):
    return sp.csr_matrix(np.asarray(dense, dtype=float))


def test_mar_hand_computed_with_ties():
    # 6 items; item 0 is in training (excluded), hidden: item 2 (x=3) and item 5 (x=1).
    scores = np.array([[9.0, 5.0, 4.0, 4.0, 1.0, 0.0]])
    train = _rows([[1, 0, 0, 0, 0, 0]])
    test = _rows([[0, 0, 3, 0, 0, 1]])
    r = ranking_metrics(scores, train, test, n=2)
    # candidates {1..5}: 5 items, denominator 4.
    # item 2: one higher (item 1), one tie (item 3) -> (1 + 0.5)/4 = 0.375
    # item 5: four higher -> 4/4 = 1.0
    assert r["mar_num"][0] == pytest.approx(3 * 0.375 + 1 * 1.0)
    assert r["mar_den"][0] == pytest.approx(4.0)
    # top-2 among candidates: item 1 (5.0), then item 2 (4.0; tie with 3 broken by lower index)
    assert r["precision"][0] == pytest.approx(1 / 2)
    assert r["recall"][0] == pytest.approx(1 / 2)
    # hit at position 2: DCG = 1/log2(3); IDCG with 2 hidden, N=2: 1 + 1/log2(3)
    assert r["ndcg"][0] == pytest.approx((1 / np.log2(3)) / (1 + 1 / np.log2(3)))


def test_constant_scorer_gets_half_and_perfect_scorer_zero():
    rng = np.random.default_rng(0)
    m = 50
    test = sp.csr_matrix((np.ones(5), (np.zeros(5, int), rng.choice(m, 5, replace=False))), shape=(1, m))
    train = sp.csr_matrix((1, m))
    r = ranking_metrics(np.zeros((1, m)), train, test)
    assert r["mar_num"][0] / r["mar_den"][0] == pytest.approx(0.5)
    perfect = test.toarray() * 10.0
    r = ranking_metrics(perfect, train, test, n=5)
    # the 5 hidden items tie at the top: each has 4 ties -> rank 2/49
    assert r["mar_num"][0] / r["mar_den"][0] == pytest.approx(2 / 49)
    assert r["precision"][0] == 1.0 and r["recall"][0] == 1.0 and r["ndcg"][0] == pytest.approx(1.0)


def test_user_with_nothing_hidden_is_skipped():
    scores = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    train = _rows([[1, 0, 0], [0, 0, 0]])
    test = _rows([[0, 0, 0], [0, 1, 0]])
    r = ranking_metrics(scores, train, test, n=1)
    assert list(r["has_test"]) == [False, True]
    assert r["precision"][0] == 0 and r["mar_den"][0] == 0


def test_evaluate_per_entity_and_overall():
    # two entities, one user each; U V^T computed by hand.
    U = np.array([[1.0], [2.0]])
    V = np.array([[1.0], [0.5], [0.0]])
    train = _rows([[1, 0, 0], [0, 0, 2]])
    test = _rows([[0, 1, 0], [1, 0, 0]])
    res = evaluate(U, V, train, test, np.array([0, 1]), np.array([0, 1]), ["A", "B"], mode="zero", n=1)
    a, b = res["entities"]
    # zero-mode train RMSE over all 3 cells: A: pred [1, .5, 0] vs [1,0,0] -> sse .25
    assert a["train_rmse"] == pytest.approx(np.sqrt(0.25 / 3))
    # B: pred [2, 1, 0] vs [0,0,2] -> sse 4 + 1 + 4 = 9
    assert b["train_rmse"] == pytest.approx(np.sqrt(9 / 3))
    assert a["test_rmse"] == pytest.approx(0.5)  # (1 - 0.5)
    assert b["test_rmse"] == pytest.approx(1.0)  # (1 - 2)
    overall = res["overall"]
    assert overall["train_rmse"] == pytest.approx(np.sqrt(9.25 / 6))
    assert overall["test_rmse"] == pytest.approx(np.sqrt((0.25 + 1) / 2))
    # A: candidates {1,2}, hidden item 1 scores .5 > 0 -> rank 0; B: candidates {0,1}: item 0 top
    assert a["mar"] == 0.0 and b["mar"] == 0.0 and overall["precision_at_1"] == 1.0
    # observed mode counts only stored training entries
    res_o = evaluate(U, V, train, test, np.array([0, 1]), np.array([0, 1]), ["A", "B"], mode="observed", n=1)
    assert res_o["entities"][1]["train_rmse"] == pytest.approx(2.0)


def test_entity_without_test_users_reports_nan():
    U = np.ones((2, 1))
    V = np.ones((3, 1))
    train = _rows([[1, 0, 0], [1, 1, 0]])
    test = _rows([[0, 0, 0], [0, 0, 1]])
    res = evaluate(U, V, train, test, np.array([1]), np.array([0, 1]), ["A", "B"])
    assert np.isnan(res["entities"][0]["mar"]) and np.isnan(res["entities"][0]["test_rmse"])
    assert res["entities"][1]["n_test_users"] == 1


def test_top_n_partial_sort_equals_the_stable_full_sort():
    # the partial sort must pick and order exactly what the stable full sort did,
    # ties (many, and −inf training items) included
    from dpfed_core.evaluation.metrics import top_n_stable

    g = np.random.default_rng(3)
    for m, n in ((7, 3), (50, 10), (50, 49), (20, 20), (30, 1)):
        S = np.round(g.standard_normal((40, m)), 1)
        S[g.random(S.shape) < 0.2] = -np.inf
        S[0] = 0.0  # a row of ties
        S[1] = -np.inf
        ref = np.argsort(-S, axis=1, kind="stable")[:, :n]
        np.testing.assert_array_equal(top_n_stable(S, n), ref)
