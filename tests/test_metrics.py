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


def _brute_force_user(s, train_items, hidden, n):
    """Every per-user quantity of the module docstring, one candidate at a time (tiny rows only)."""
    cand = [j for j in range(len(s)) if j not in train_items]
    num = 0.0
    for i, x in hidden.items():
        above = sum(1 for j in cand if s[j] > s[i])
        tied = sum(1 for j in cand if j != i and s[j] == s[i])
        num += x * (above + 0.5 * tied) / max(len(cand) - 1, 1)
    top = sorted(cand, key=lambda j: (-s[j], j))[:n]
    hits = [j in hidden for j in top]
    dcg = sum(1 / np.log2(r + 2) for r, h in enumerate(hits) if h)
    idcg = sum(1 / np.log2(r + 2) for r in range(min(n, len(hidden))))
    return {"mar_num": num, "mar_den": float(sum(hidden.values())), "precision": sum(hits) / n,
            "recall": sum(hits) / len(hidden), "ndcg": dcg / idcg}


def _tiny_problem(seed, n_users=12, m=9):
    """Integer scores (many ties), 0–3 training items and 1–5 hidden entries of values 1–5 per user."""
    g = np.random.default_rng(seed)
    S = g.integers(0, 4, (n_users, m)).astype(float)
    train, test = np.zeros((n_users, m)), np.zeros((n_users, m))
    for u in range(n_users):
        items = g.permutation(m)
        n_tr, n_te = int(g.integers(0, 4)), int(g.integers(1, 6))
        train[u, items[:n_tr]] = 1.0
        test[u, items[n_tr:n_tr + n_te]] = g.integers(1, 6, n_te)
    return S, train, test


@pytest.mark.parametrize("n", [1, 3, 20])
def test_ranking_metrics_are_the_definitions_computed_item_by_item(n):
    """Precision divides by N, recall by the user's hidden entries and the ideal DCG stops at
    min(N, hidden): users with fewer hidden entries than N, more than N, and N beyond the catalogue."""
    for seed in range(4):
        S, train, test = _tiny_problem(seed)
        r = ranking_metrics(S, _rows(train), _rows(test), n=n)
        for u in range(S.shape[0]):
            want = _brute_force_user(S[u], set(np.flatnonzero(train[u])),
                                     {int(i): float(test[u, i]) for i in np.flatnonzero(test[u])}, n)
            for k, v in want.items():
                assert r[k][u] == pytest.approx(v, abs=1e-12), (seed, u, k)


def test_entity_metrics_pool_entries_and_average_over_test_users_only():
    """Per entity: MAR = Σ x·rank / Σ x over every hidden entry (not a mean of users' MARs), test RMSE
    over every hidden entry (not per user), and the top-N metrics averaged over the entity's test users
    only — a user with nothing hidden is in n_users, not in n_test_users, and dilutes nothing."""
    S, train, test = _tiny_problem(7, n_users=10)
    test[[3, 8]] = 0.0  # users with nothing hidden, one in each entity
    ent = np.array([0] * 5 + [1] * 5)
    U, V = S, np.eye(S.shape[1])  # U Vᵀ = S
    users = np.flatnonzero(test.any(axis=1))
    res = evaluate(U, V, _rows(train), _rows(test), users, ent, ["A", "B"], mode="zero", n=3)
    per_user = {u: _brute_force_user(S[u], set(np.flatnonzero(train[u])),
                                     {int(i): float(test[u, i]) for i in np.flatnonzero(test[u])}, 3)
                for u in users}
    for h, got in enumerate(res["entities"] + [res["overall"]]):
        rows = np.flatnonzero(ent == h) if h < 2 else np.arange(10)
        tu = [u for u in rows if u in per_user]
        assert got["n_users"] == len(rows) and got["n_test_users"] == len(tu)
        assert got["mar"] == pytest.approx(sum(per_user[u]["mar_num"] for u in tu)
                                           / sum(per_user[u]["mar_den"] for u in tu), abs=1e-12)
        for k in ("precision", "recall", "ndcg"):
            assert got[f"{k}_at_3"] == pytest.approx(np.mean([per_user[u][k] for u in tu]), abs=1e-12)
        hid = test[rows] != 0
        assert got["test_rmse"] == pytest.approx(np.sqrt(np.mean((test[rows][hid] - S[rows][hid]) ** 2)), abs=1e-12)
    # the pooled MAR differs from a mean of the users' MARs here, so the test tells them apart
    a = [u for u in users if ent[u] == 0]
    assert abs(res["entities"][0]["mar"]
               - np.mean([per_user[u]["mar_num"] / per_user[u]["mar_den"] for u in a])) > 1e-3


@pytest.mark.parametrize("mode", ["zero", "observed"])
def test_each_entitys_sums_combined_give_the_metrics_of_the_in_process_evaluation(mode):
    """A deployment's evaluation: each entity's sufficient statistics on its own rows, added up by the
    coordinator, give every per-entity and overall metric of :func:`evaluate` in the run's mode — a
    test user with nothing hidden counted in neither."""
    from dpfed_core.evaluation.partial import combine_statistics, entity_statistics

    S, train, test = _tiny_problem(11, n_users=10)
    test[[2, 7]] = 0.0
    ent = np.array([0] * 4 + [1] * 6)
    U, V = S, np.eye(S.shape[1])
    everyone = np.arange(10)
    want = evaluate(U, V, _rows(train), _rows(test), everyone, ent, ["A", "B"], mode=mode, n=3)
    per_entity = []
    for h, name in enumerate(["A", "B"]):
        rows = np.flatnonzero(ent == h)
        per_entity.append((name, entity_statistics(U[rows], V, _rows(train[rows]), _rows(test[rows]),
                                                   np.arange(len(rows)), mode, 3)))
    got = combine_statistics(per_entity, 3)
    for w, g in zip(want["entities"] + [want["overall"]], got["entities"] + [got["overall"]]):
        assert g["name"] == w["name"]
        assert (g["n_users"], g["n_test_users"]) == (w["n_users"], w["n_test_users"])
        for k in ("train_rmse", "test_rmse", "mar", "precision_at_3", "recall_at_3", "ndcg_at_3"):
            assert g[k] == pytest.approx(w[k], abs=1e-12), (w["name"], k)
    assert [e["n_test_users"] for e in got["entities"]] == [3, 5]


@pytest.mark.parametrize("mode,top_n", [("observed", 3), ("zero", 7)])
def test_a_run_is_evaluated_in_its_own_mode_at_its_own_cut_off(mode, top_n):
    """A run's document holds the metrics of its own settings: the training error over the cells its
    mode fits and the top-N metrics at its own N, the evaluation called on its split with them."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method
    from report_docs import small_dataset

    ds = small_dataset()
    cfg = RunConfig(method="individual", rank=3, max_iter=20, mode=mode, top_n=top_n, seed=1)
    split = make_split(ds, cfg)
    doc, res = run_method(ds, cfg, split)
    want = evaluate(res.entity_factors(), None, split.train, split.test, split.test_users, ds.entity_of_user,
                    ds.entity_names, mode, top_n)
    assert doc["overall"] == pytest.approx(want["overall"])
    assert f"precision_at_{top_n}" in doc["overall"] and "precision_at_10" not in doc["overall"]
    other = evaluate(res.entity_factors(), None, split.train, split.test, split.test_users, ds.entity_of_user,
                     ds.entity_names, "zero" if mode == "observed" else "observed", top_n)
    assert doc["overall"]["train_rmse"] != pytest.approx(other["overall"]["train_rmse"])


@pytest.mark.parametrize("where", ["users", "items"])
def test_a_model_with_non_finite_factors_is_refused_by_name_not_ranked(where):
    U = np.array([[1.0], [2.0]])
    V = np.array([[1.0], [0.5], [0.0]])
    if where == "users":
        U[1, 0] = np.nan
    else:
        V[2, 0] = np.inf
    train = _rows([[1, 0, 0], [0, 0, 2]])
    test = _rows([[0, 1, 0], [1, 0, 0]])
    want = "users' factors" if where == "users" else "item factors"
    with pytest.raises(ValueError, match=f"the model's {want} for users 0–1 hold non-finite values"):
        evaluate(U, V, train, test, np.array([0, 1]), np.array([0, 1]), ["A", "B"], mode="zero", n=1)
