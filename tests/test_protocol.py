import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import crossing_epsilon, json_safe, make_split, run_comparison, run_method, sweep
from dpfed_core.federation.protocol import FederatedRecommender


@pytest.fixture(scope="module")
def small():
    """Three entities of Poisson counts sharing a low-rank item structure."""
    rng = np.random.default_rng(0)
    n, m, r = 240, 40, 3
    U = rng.gamma(1.0, 1.0, size=(n, r))
    V = rng.gamma(1.0, 1.0, size=(m, r))
    X = sp.csr_matrix(rng.poisson(0.4 * U @ V.T).astype(float))
    ent = np.repeat(["north", "south", "west"], [120, 80, 40])
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=10, name="small")


def test_two_rounds_message_log(small):
    model = FederatedRecommender("kmeans", k=5, rank=3, random_state=0).fit(small)
    msgs = model.messages_
    r1 = [m for m in msgs if m.round == 1]
    r2 = [m for m in msgs if m.round == 2]
    assert [m.sender for m in r1] == small.entity_names and {m.receiver for m in r1} == {"server"}
    assert all(m.shape == (5, small.n_items) and m.bytes == 5 * small.n_items * 8 for m in r1)
    assert [m.receiver for m in r2] == small.entity_names
    assert all(m.shape == (small.n_items, 3) for m in r2)
    assert len(msgs) == 2 * small.n_entities  # nothing else crosses a boundary
    assert model.ledger_.guarantee()[0] == math.inf  # k-means centroids are not private
    assert model.U_.shape == (small.n_users, 3) and (model.U_ >= 0).all() and (model.V_ >= 0).all()


def test_counts_weighting_sends_sizes(small):
    model = FederatedRecommender("kmeans", k=4, rank=2, server_weighting="counts", random_state=0).fit(small)
    assert sum(m.content == "cluster sizes" for m in model.messages_) == small.n_entities


def test_a_method_that_declares_no_cluster_sizes_is_refused_before_any_entity_draws(small, monkeypatch):
    """Weighting the server's fit by cluster sizes needs a method that releases them; one that declares
    it does not (a plug-in's ``releases_counts = False``) is refused in process and on a node before any
    entity's release, never after the draws."""
    from dpfed_core.deployment.hooks import prototype_method
    from dpfed_core.federation.prototypes import KMeansPrototypes

    released = []
    monkeypatch.setattr(KMeansPrototypes, "releases_counts", False)
    monkeypatch.setattr(KMeansPrototypes, "release", lambda self, *a, **k: released.append(1))
    with pytest.raises(ConfigError, match="releases no cluster sizes; use server_weighting='none'"):
        FederatedRecommender("kmeans", k=4, rank=2, server_weighting="counts", random_state=0).fit(small)
    with pytest.raises(ConfigError, match="releases no cluster sizes"):
        prototype_method(RunConfig(method="kmeans", k=4, server_weighting="counts"), 10.0)
    assert released == []
    prototype_method(RunConfig(method="kmeans", k=4, server_weighting="none"), 10.0)


def test_a_summable_release_asked_to_weight_prototypes_is_refused_before_any_share(small, monkeypatch):
    """A summable release sends no prototypes, so ``server_weighting='counts'`` has nothing to weight: a run
    that accepted it would state, in its result and report, a setting it never used. Refused before any
    entity's share; the same run with 'none' goes ahead."""
    from dpfed_core.federation.summable import SummableMethod

    drawn = []
    real = SummableMethod.gaussian_share
    monkeypatch.setattr(SummableMethod, "gaussian_share", lambda self, *a, **k: drawn.append(1) or real(self, *a, **k))
    for method in ("dp-cooccurrence", "dp-popularity"):
        with pytest.raises(ConfigError, match=f"{method} is a summable release and sends no prototypes to weight"):
            FederatedRecommender(method, rank=2, epsilon=1.0, server_weighting="counts", simulation=True,
                                 random_state=0).fit(small)
    # the run service's one boundary refuses it before the budget store is charged
    from dpfed_core.evaluation.service import check_run

    with pytest.raises(ConfigError, match="dp-cooccurrence is a summable release") as err:
        check_run(small, RunConfig(method="dp-cooccurrence", epsilon=1.0, server_weighting="counts"))
    assert err.value.param == "server_weighting"
    check_run(small, RunConfig(method="dp-cooccurrence", epsilon=1.0))
    assert drawn == []
    FederatedRecommender("dp-popularity", rank=2, epsilon=1.0, server_weighting="none", simulation=True,
                         random_state=0).fit(small)
    assert drawn
    # compared with a run that weights its prototypes, a summable reference runs and records no weighting
    docs = run_comparison(small, RunConfig(method="kmeans", k=4, rank=2, epsilon=1.0, server_weighting="counts",
                                           simulation=True, seed=0), ["dp-popularity", "central"])
    assert docs["kmeans"]["config"]["server_weighting"] == "counts"
    assert docs["dp-popularity"]["config"]["server_weighting"] == docs["central"]["config"]["server_weighting"] == "none"


def test_deterministic_and_parallel_identical(small):
    a = FederatedRecommender("krandom", k=6, rank=3, random_state=5).fit(small)
    b = FederatedRecommender("krandom", k=6, rank=3, random_state=5).fit(small)
    c = FederatedRecommender("krandom", k=6, rank=3, random_state=5, n_jobs=2).fit(small)
    np.testing.assert_array_equal(a.V_, b.V_)
    np.testing.assert_allclose(a.U_, c.U_)


def test_parallel_fits_start_no_more_workers_than_cores(small, monkeypatch):
    """n_jobs far above the cores (a direct engine call; the CLI refuses it) runs on at most every core:
    joblib starts every worker it is asked for, and more than the cores only thrash."""
    import joblib
    import os

    from dpfed_core.federation.protocol import worker_count

    cores = os.cpu_count() or 1
    assert (worker_count(100000), worker_count(-1), worker_count(1)) == (cores, cores, 1)
    asked = []
    real = joblib.Parallel

    class Recorded(real):
        # records the count and runs in this process: a run asking for 100000 workers must fail this
        # test, not start them
        def __init__(self, *args, **kwargs):
            asked.append(kwargs.pop("n_jobs", None))
            super().__init__(*args, n_jobs=1, **kwargs)

    monkeypatch.setattr(joblib, "Parallel", Recorded)
    a = FederatedRecommender("krandom", k=6, rank=3, random_state=5).fit(small)
    c = FederatedRecommender("krandom", k=6, rank=3, random_state=5, n_jobs=100000).fit(small)
    assert asked and all(n == cores for n in asked)
    np.testing.assert_allclose(a.U_, c.U_)


def test_recommend_excludes_seen(small):
    model = FederatedRecommender("kmeans", k=5, rank=3, random_state=0).fit(small)
    items, scores = model.recommend("south", 0, n=7)
    row = small.entity_slices()[1].start
    seen = set(small.X[row].indices)
    assert len(items) == 7 and not seen & set(items)
    assert np.all(np.diff(scores) <= 0)
    items_all, _ = model.recommend("south", small.user_ids[row], n=small.n_items, exclude_seen=False)
    assert len(items_all) == small.n_items
    with pytest.raises(ConfigError, match="unknown entity"):
        model.recommend("east", 0)
    with pytest.raises(ConfigError, match="no user with id 'nobody' in entity 'south': give the id of one of its "):
        model.recommend("south", "nobody")


@pytest.mark.parametrize("n", [0, -3, 2.5, "5", True, None])
def test_a_recommendation_list_length_that_is_no_whole_number_above_0_is_one_error_naming_n(small, n):
    """A length that is no whole number ≥ 1 is refused naming n: a negative n would cut the list from its end
    (all items but the last |n|), a fraction would be truncated, and a string would fail in Python's words."""
    model = FederatedRecommender("kmeans", k=5, rank=3, random_state=0).fit(small)
    with pytest.raises(ConfigError, match="n, the length of the recommendation list, must be a whole number of at "
                                          f"least 1, got {n!r}") as err:
        model.recommend("south", 0, n=n)
    assert err.value.param == "n"
    assert len(model.recommend("south", 0, n=np.int64(3))[0]) == 3


def test_a_users_position_is_within_its_entity_never_the_next_entitys_first_user(small):
    from dpfed_core.federation.protocol import user_row

    south = small.entity_slices()[1]
    size = south.stop - south.start
    assert user_row(small, "south", 0) == south.start and user_row(small, "south", size - 1) == south.stop - 1
    for bad in (size, -1):
        with pytest.raises(ConfigError, match=f"entity 'south' has {size} users; position {bad} is out of range"):
            user_row(small, "south", bad)


def test_a_catalogue_of_another_item_axis_is_refused_before_any_release(small):
    from dpfed_core.models.shared_items import SharedItems

    model = FederatedRecommender("dp-gaussian", k=2, rank=2, epsilon=1.0, simulation=True, random_state=0)
    with pytest.raises(ConfigError, match=f"the shared catalogue maps {small.n_items + 1} items, the data has "
                                          f"{small.n_items}"):
        model.fit(small, shared=SharedItems.from_columns(np.arange(3), small.n_items + 1, 10.0))
    assert model.ledger_.rows == []


def test_k_policy(small):
    with pytest.raises(ConfigError, match="largest entity"):
        FederatedRecommender("kmeans", k=500).fit(small)
    model = FederatedRecommender("kmeans", k=60, rank=2, random_state=0).fit(small)
    assert model.releases_[2].prototypes.shape[0] == 40 and "west" in model.notes_[0]


def test_result_document_matches_spec(small):
    cfg = RunConfig(method="kmeans", k=5, rank=3, seed=1)
    doc, result = run_method(small, cfg)
    assert {"config", "entities", "overall", "privacy", "messages", "timings"} <= set(doc)
    keys = {"name", "n_users", "train_rmse", "test_rmse", "mar", "precision_at_10", "recall_at_10", "ndcg_at_10"}
    assert all(keys <= set(e) for e in doc["entities"]) and keys <= set(doc["overall"])
    assert [e["name"] for e in doc["entities"]] == small.entity_names
    assert {"epsilon", "delta", "ledger"} <= set(doc["privacy"]) and doc["privacy"]["private"] is False
    text = json.dumps(json_safe(doc), allow_nan=False)
    assert '"epsilon": "inf"' in text
    # the document's metrics are the ones the engine computes for the same split
    split = make_split(small, cfg)
    doc2, _ = run_method(small, cfg, split)
    assert doc2["overall"]["mar"] == doc["overall"]["mar"]


def test_federation_beats_random_and_comparison_shares_split(small):
    docs = run_comparison(small, RunConfig(method="kmeans", k=8, rank=3, seed=0))
    assert set(docs) == {"kmeans", "central", "individual", "dp-popularity", "random-v", "popularity"}
    mar = {m: d["overall"]["mar"] for m, d in docs.items()}
    assert mar["kmeans"] < mar["random-v"] - 0.1
    n_test = {d["overall"]["n_test_users"] for d in docs.values()}
    assert len(n_test) == 1


def test_sweep_and_crossing(small):
    doc = sweep(small, RunConfig(method="kmeans", k=5, rank=3), epsilons=[1.0], seeds=[0, 1],
                references=["individual"])
    assert {(r["method"], r["seed"]) for r in doc["runs"]} == {("kmeans", 0), ("kmeans", 1), ("individual", 0), ("individual", 1)}
    # non-private methods are swept once per seed at ε = inf
    assert doc["epsilons"] == [math.inf]
    fake = {"config": {"method": "dp"}, "runs": [  # two seeds (one seed states no crossing)
        {**r, "seed": s, "overall": dict(r["overall"])} for s in (0, 1) for r in [
            {"method": "individual", "epsilon": math.inf, "overall": {"mar": 0.2}},
            {"method": "dp", "epsilon": 0.1, "overall": {"mar": 0.19}},  # lucky point, then worse
            {"method": "dp", "epsilon": 1.0, "overall": {"mar": 0.25}},
            {"method": "dp", "epsilon": 10.0, "overall": {"mar": 0.15}},
            {"method": "dp", "epsilon": math.inf, "overall": {"mar": 0.1}},
        ]]}
    assert crossing_epsilon(fake, "mar") == 10.0
    for r in fake["runs"]:
        r["overall"]["ndcg_at_10"] = -r["overall"]["mar"]  # higher is better for NDCG
    assert crossing_epsilon(fake, "ndcg_at_10") == 10.0
    fake["runs"] = [r for r in fake["runs"] if r["method"] == "individual" or r["epsilon"] < 5]
    assert crossing_epsilon(fake, "mar") is None


def test_bad_config(small):
    with pytest.raises(ConfigError, match="ε"):
        run_method(small, RunConfig(method="kmeans", epsilon=0))
    with pytest.raises(ConfigError, match="unknown method"):
        run_method(small, RunConfig(method="nope"))
    with pytest.raises(ConfigError, match="rank"):
        run_method(small, RunConfig(method="kmeans", rank=0))


def test_a_prototype_method_sends_k_prototypes_and_one_per_user_only_below_k():
    from dpfed_core.federation.prototypes import make_prototype_method

    X = sp.csr_matrix(np.arange(1, 61, dtype=float).reshape(6, 10))
    method = make_prototype_method("krandom", k=6)
    assert method.effective_k(X, "a") == (6, "")  # exactly k users: k prototypes, nothing to note
    k, note = make_prototype_method("krandom", k=7).effective_k(X, "a")
    assert k == 6 and "has 6 training users < k=7" in note
    for bad in (0, -1, 2.5):
        with pytest.raises(ConfigError, match="positive integer"):
            make_prototype_method("krandom", k=bad).effective_k(X, "a")


def test_k_above_the_largest_entity_is_refused_for_a_non_private_method_only(small):
    """A non-private method is told its k is more than any entity has users; a DP method must not be
    (the refusal would be a function of the true entity sizes): it treats k as a maximum instead."""
    with pytest.raises(ConfigError, match=r"k=121 prototypes per entity is more than the largest entity has users "
                                          r"\(120\)") as exc:
        FederatedRecommender("kmeans", k=121, rank=2, random_state=0).fit(small)
    assert exc.value.param == "k"
    FederatedRecommender("kmeans", k=120, rank=2, random_state=0, max_iter=5).fit(small)
    model = FederatedRecommender("dp-gaussian", k=121, rank=2, epsilon=1.0, random_state=0, simulation=True,
                                 max_iter=5).fit(small)
    assert len(model.releases_) == small.n_entities and math.isfinite(model.ledger_.guarantee()[0])


def test_krandom_sends_k_distinct_rows_and_kmeans_its_cluster_sizes():
    from dpfed_core.federation.prototypes import make_prototype_method
    from dpfed_core.privacy.ledger import PrivacyLedger

    X = sp.csr_matrix(np.arange(1, 61, dtype=float).reshape(6, 10))  # six distinct rows
    for seed in range(20):
        rel = make_prototype_method("krandom", k=6).release(X, np.random.default_rng(seed),
                                                            PrivacyLedger(math.inf).for_entity("a"))
        assert sorted(map(tuple, rel.prototypes)) == sorted(map(tuple, X.toarray()))
    Y = sp.csr_matrix(np.vstack([np.zeros((5, 4)), np.full((2, 4), 9.0)]))  # clusters of 5 and 2 users
    rel = make_prototype_method("kmeans", k=2).release(Y, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("a"))
    assert sorted(rel.counts.tolist()) == [2.0, 5.0]


def test_an_entity_without_users_sends_nothing_and_is_still_labelled_non_private():
    from dpfed_core.federation.prototypes import make_prototype_method
    from dpfed_core.privacy.ledger import PrivacyLedger

    ledger = PrivacyLedger(math.inf)
    rel = make_prototype_method("kmeans", k=3).release(sp.csr_matrix((0, 5)), np.random.default_rng(0),
                                                       ledger.for_entity("empty"))
    assert rel.prototypes.shape == (0, 5) and rel.counts.size == 0
    assert [r.epsilon for r in ledger.rows] == [math.inf]


def test_a_run_records_a_non_dp_methods_epsilon_as_inf_keeps_the_datas_notes_and_is_compared_first(small):
    from dataclasses import replace

    ds = replace(small, notes=["a note the data set carries"])
    doc, _ = run_method(ds, RunConfig(method="popularity", epsilon=1.0, rank=2, seed=0))
    assert math.isinf(doc["config"]["epsilon"]) and math.isinf(doc["privacy"]["requested_epsilon"])
    assert doc["notes"][0] == "a note the data set carries"
    docs = run_comparison(ds, RunConfig(method="popularity", rank=2, seed=0), methods=("random-v", "popularity"))
    assert list(docs) == ["popularity", "random-v"]


@pytest.mark.parametrize("method", ["kmeans", "krandom"])
def test_every_row_of_a_non_private_prototype_method_states_epsilon_inf(small, method):
    """Raw centroids or raw rows leave the entity: each entity's row says ε = inf, never a finite ε."""
    model = FederatedRecommender(method, k=4, rank=2, random_state=0).fit(small)
    rows = model.ledger_.rows
    assert {r.entity for r in rows} == set(small.entity_names)
    assert all(math.isinf(r.epsilon) for r in rows) and math.isinf(model.ledger_.guarantee()[0])


def test_a_dp_method_spends_the_runs_own_delta():
    """The run's (ε, δ) are the method's: a δ below the method's default is the δ its releases share."""
    from dpfed_core.federation.protocol import build_method

    rng = np.random.default_rng(1)
    X = sp.csr_matrix(rng.integers(0, 3, size=(200, 12)).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["a", "b"], 100), value_kind="counts", value_max=2, name="two")
    config = RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-9, k=2, rank=2, simulation=True)
    assert build_method(config, 2.0).delta == 1e-9
    model = FederatedRecommender.from_config(config, random_state=0).fit(ds)
    for name in ds.entity_names:
        spent = sum(r.delta for r in model.ledger_.rows if r.entity == name)
        assert 0 < spent <= 1e-9


def test_recommend_hides_the_users_training_items_only_and_breaks_ties_by_the_lower_item(small):
    """A recommendation hides what the user has in the rows the model was trained on — never items held
    out of training (the ones a recommendation is judged on) — offers every other item when asked for
    all of them, finds a user by id in its own entity, and ranks equal scores by item index."""
    from dpfed_core.federation.protocol import recommend_from_factors, user_row

    south = small.entity_slices()[1]
    row = south.start + 5
    assert user_row(small, "south", small.user_ids[row]) == row
    train = small.X.tolil()
    held = small.X[row].indices[:2]
    train[row, held] = 0.0
    train = train.tocsr()
    train.eliminate_zeros()
    model = FederatedRecommender("kmeans", k=5, rank=3, random_state=0).fit(small, train)
    items, scores = model.recommend("south", 5, n=small.n_items)
    seen = set(train[row].indices)
    assert set(items) == set(range(small.n_items)) - seen and np.isfinite(scores).all()
    assert set(held) <= set(items)
    # every score equal: the items in index order, the seen ones left out
    flat = np.zeros((small.n_users, 1)), np.zeros((small.n_items, 1))
    items, _ = recommend_from_factors(small, train, *flat, "south", 5, n=4)
    assert items.tolist() == sorted(set(range(small.n_items)) - seen)[:4]


def test_a_prototype_runs_server_and_round_two_fit_with_the_runs_ridge(small):
    """The server's factors minimise the run's ridge objective on the prototypes it received (the
    history it keeps is that objective), and each entity's round-2 factors are the exact ridge row fit
    on its own rows and the broadcast V at the run's λ."""
    from dpfed_core.models.factorization import fit_rows_given, objective

    lam = 2.0
    model = FederatedRecommender("kmeans", k=5, rank=3, lam=lam, random_state=0, max_iter=30).fit(small)
    P = np.vstack([r.prototypes for r in model.releases_])
    assert objective(P, model.server_W_, model.V_, lam, "zero") == pytest.approx(model.server_history_[-1],
                                                                                 rel=1e-9)
    for sl in small.entity_slices():
        np.testing.assert_allclose(model.U_[sl], fit_rows_given(small.X[sl], model.V_, lam, "zero"), atol=1e-12)
    assert not np.allclose(model.U_, fit_rows_given(small.X, model.V_, 0.0, "zero"), atol=1e-6)


def test_krandom_sends_rows_drawn_at_random_not_the_entitys_first_rows():
    from dpfed_core.federation.prototypes import make_prototype_method
    from dpfed_core.privacy.ledger import PrivacyLedger

    X = sp.csr_matrix(np.arange(1, 61, dtype=float).reshape(6, 10))
    sent = set()
    for seed in range(10):
        rel = make_prototype_method("krandom", k=2).release(X, np.random.default_rng(seed),
                                                            PrivacyLedger(math.inf).for_entity("a"))
        rows = {tuple(r) for r in rel.prototypes}
        assert len(rows) == 2 and rows <= {tuple(r) for r in X.toarray()}
        sent |= rows
    assert len(sent) > 2


def test_a_release_of_another_shape_is_refused_naming_the_method_before_the_server_fits(small, monkeypatch):
    """What an entity sends in round 1 is k rows of one column per catalogue item and, when sent, one
    cluster size per row: a release of another shape (a plug-in's bug) is one error naming the method
    and the shape, not a traceback of the server's or round 2's fit."""
    from dpfed_core.federation.prototypes import KRandomPrototypes, PrototypeRelease

    real = KRandomPrototypes.release
    fitted = []
    monkeypatch.setattr("dpfed_core.federation.protocol.fit_nmf", lambda *a, **k: fitted.append(1))
    for wide, counts, said in ((1, None, rf"prototypes of shape \(4, {small.n_items + 1}\); round 1 must send k rows "
                                         rf"of {small.n_items} columns"),
                               (0, np.ones(5), "5 cluster sizes for 4 prototypes")):
        def bad(self, X, rng, ledger, wide=wide, counts=counts):
            rel = real(self, X, rng, ledger)
            P = np.hstack([rel.prototypes, np.zeros((rel.prototypes.shape[0], wide))])
            return PrototypeRelease(P, rel.counts if counts is None else counts, rel.note)

        monkeypatch.setattr(KRandomPrototypes, "release", bad)
        with pytest.raises(ConfigError, match=f"prototype method 'krandom' sent entity 'north' {said}") as exc:
            FederatedRecommender("krandom", k=4, rank=2, random_state=0).fit(small)
        assert exc.value.param == "method" and not fitted


def test_a_compared_method_gets_only_the_settings_it_uses_and_is_checked_with_them_before_the_run(small,
                                                                                                  monkeypatch):
    from dpfed_core.data.loaders import load_data
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation import defaults
    from dpfed_core.evaluation.defaults import compared_config, default_config
    from dpfed_core.evaluation.service import check_run

    ds = load_data("sample:clinic")
    secure = default_config(ds, "dp-cooccurrence").replace(aggregation="secure", max_dropouts=1)
    assert compared_config(ds, secure, "dp-popularity").max_dropouts == 1  # a secure sum of its own
    assert compared_config(ds, secure, "dp-prototypes").max_dropouts == 0
    assert compared_config(ds, secure, "central").max_dropouts == 0
    weighted = default_config(ds, "dp-gaussian").replace(server_weighting="counts")
    assert compared_config(ds, weighted, "kmeans").server_weighting == "counts"
    assert compared_config(ds, weighted, "dp-cooccurrence").server_weighting == "none"
    check_run(ds, secure, ["dp-prototypes", "dp-popularity", "central"])
    check_run(ds, weighted, ["dp-cooccurrence", "kmeans"])
    # each compared configuration is checked as the run's own is, before anything runs or is charged
    monkeypatch.setattr(defaults, "compared_config", lambda d, b, m: b.replace(method=m))
    with pytest.raises(ConfigError, match="dp-cooccurrence is a summable release and sends no prototypes to weight"):
        check_run(ds, weighted, ["dp-cooccurrence"])
    with pytest.raises(ConfigError, match="max_dropouts = 1 applies to the secure aggregation of a summable method"):
        check_run(ds, secure, ["dp-prototypes"])
    monkeypatch.undo()
    # and a compared run records the settings it ran with
    docs = run_comparison(small, RunConfig(method="dp-popularity", rank=2, epsilon=1.0, aggregation="secure",
                                           max_dropouts=1, simulation=True, seed=0), ["kmeans"])
    assert docs["dp-popularity"]["config"]["max_dropouts"] == 1 and docs["kmeans"]["config"]["max_dropouts"] == 0
