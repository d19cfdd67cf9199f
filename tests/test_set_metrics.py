"""Clinical set metrics (Jaccard, F1, PR-AUC of the top-N) against hand-computed values and
scikit-learn's average precision."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.evaluation.metrics import set_metrics


def test_hand_example():
    # 6 items; item 0 in training; hidden {1, 4}; scores rank candidates 2 > 1 > 3 > 4 > 5
    scores = np.array([[9.0, 5.0, 6.0, 4.0, 3.0, 1.0]])
    train = sp.csr_matrix(np.array([[1, 0, 0, 0, 0, 0]], float))
    test = sp.csr_matrix(np.array([[0, 2, 0, 0, 1, 0]], float))
    out = set_metrics(scores, train, test, n=2)  # top-2 = {2, 1}: one hit
    assert out["hits"][0] == 1
    assert out["jaccard"][0] == pytest.approx(1 / 3)  # |{1}| / |{1, 2, 4}|
    p, r = 1 / 2, 1 / 2
    assert out["f1"][0] == pytest.approx(2 * p * r / (p + r))
    # ranking 2, 1, 3, 4, 5: hits at positions 2 and 4 → AP = (1/2 + 2/4) / 2
    assert out["pr_auc"][0] == pytest.approx(0.5)


def test_perfect_and_user_without_hidden_items():
    scores = np.array([[0.1, 0.9, 0.8, 0.0], [1, 2, 3, 4.0]])
    train = sp.csr_matrix((2, 4))
    test = sp.csr_matrix(np.array([[0, 1, 1, 0], [0, 0, 0, 0]], float))
    out = set_metrics(scores, train, test, n=2)
    assert out["jaccard"][0] == 1 and out["f1"][0] == 1 and out["pr_auc"][0] == 1
    assert np.isnan(out["jaccard"][1]) and np.isnan(out["pr_auc"][1])


def test_pr_auc_matches_sklearn():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(3)
    b, m = 40, 30
    scores = rng.normal(size=(b, m))
    train = sp.csr_matrix((rng.random((b, m)) < 0.2).astype(float))
    hidden = (rng.random((b, m)) < 0.15) & (train.toarray() == 0)
    hidden[:, 0] |= train.toarray()[:, 0] == 0  # every user has at least one hidden event
    test = sp.csr_matrix(hidden.astype(float))
    out = set_metrics(scores, train, test, n=5)
    for u in range(b):
        cand = train[u].toarray().ravel() == 0
        want = average_precision_score(hidden[u, cand], scores[u, cand])
        assert out["pr_auc"][u] == pytest.approx(want, abs=1e-12)
        top = np.argsort(-np.where(cand, scores[u], -np.inf), kind="stable")[:5]
        h = set(np.flatnonzero(hidden[u]))
        inter = len(h & set(top))
        assert out["jaccard"][u] == pytest.approx(inter / len(h | set(top)))


def test_a_stored_zero_in_the_test_rows_is_no_hidden_event():
    """The hidden set is the items with a non-zero hidden entry: a zero that a sparse difference left
    stored in the test rows (``test - test.multiply(train > 0)`` keeps one) is not an event."""
    scores = np.array([[9.0, 5.0, 6.0, 4.0, 3.0, 1.0]])
    train = sp.csr_matrix(np.array([[1, 0, 0, 0, 0, 0]], float))
    test = sp.csr_matrix((np.array([0.0, 2.0, 1.0]), np.array([2, 1, 4]), np.array([0, 3])), shape=(1, 6))
    assert test.nnz == 3  # item 2 is stored with value 0
    out = set_metrics(scores, train, test, n=2)
    # hidden {1, 4}, exactly the hand example of the module: top-2 = {2, 1}
    assert out["n_hidden"][0] == 2 and out["hits"][0] == 1
    assert out["jaccard"][0] == pytest.approx(1 / 3) and out["pr_auc"][0] == pytest.approx(0.5)


def test_a_user_with_fewer_candidates_than_n_is_recommended_every_candidate_and_no_more():
    """R_u = top-N(C_u) holds min(N, |C_u|) items: with 3 candidates and N = 10 the set is the 3
    candidates, so P = hits/3 and the Jaccard union counts those 3 items, not 10 slots."""
    scores = np.array([[9.0, 5.0, 6.0, 4.0, 3.0]])
    train = sp.csr_matrix(np.array([[1, 1, 0, 0, 0]], float))  # candidates {2, 3, 4}
    test = sp.csr_matrix(np.array([[0, 0, 0, 1, 0]], float))   # hidden {3}
    out = set_metrics(scores, train, test, n=10)
    assert out["hits"][0] == 1 and out["n_hidden"][0] == 1
    assert out["jaccard"][0] == pytest.approx(1 / 3)  # |{3}| / |{2, 3, 4}|
    p, r = 1 / 3, 1.0
    assert out["f1"][0] == pytest.approx(2 * p * r / (p + r))
    assert out["pr_auc"][0] == pytest.approx(1 / 2)  # ranking 2, 3, 4: the hit at position 2


def test_tied_scores_rank_the_lower_item_first_in_the_set_and_in_the_pr_auc():
    """Among equal scores the lower item index comes first, as in the top-N of the ranking metrics:
    items 0, 1 and 2 tie, so the top-1 is item 0 and the hidden item 2 is ranked third."""
    scores = np.array([[1.0, 1.0, 1.0, 0.0]])
    train = sp.csr_matrix((1, 4))
    test = sp.csr_matrix(np.array([[0, 0, 1, 0]], float))
    out = set_metrics(scores, train, test, n=1)
    assert out["hits"][0] == 0 and out["jaccard"][0] == 0 and out["f1"][0] == 0
    assert out["pr_auc"][0] == pytest.approx(1 / 3)
