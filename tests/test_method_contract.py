"""The method contract: every registered method goes through the same path — the
registry, ``run_method`` and, for federated methods, the one estimator — and keeps the same promises:
the ledger stays within the budget, message shapes do not depend on the private rows, each
entity's own factors cover every user and item, and ``recommend`` returns the best unseen items first. A new method
registered anywhere (the example in ``tests/example_method.py`` included) is checked the same way.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import example_method  # noqa: F401  (registers the example summable method, like any plug-in)
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import make_split, run_method
from dpfed_core.federation.protocol import FederatedRecommender, federated_method_names
from dpfed_core.methods import METHODS, available_methods, get_method
from dpfed_core.privacy.model import PrivacyModel

#: Methods too slow for a contract check on every commit (minutes per fit); covered by their own tests.
SLOW = {"xin-pmd"}


def _dataset(n_per_entity=(14, 11, 9), m: int = 12, seed: int = 0, drop_user: int | None = None) -> FederatedDataset:
    rng = np.random.default_rng(seed)
    rows, cols, vals, ent = [], [], [], []
    u = 0
    for h, n in enumerate(n_per_entity):
        for _ in range(n):
            items = rng.choice(m, size=int(rng.integers(3, 7)), replace=False)
            rows += [u] * len(items)
            cols += items.tolist()
            vals += rng.integers(1, 6, size=len(items)).tolist()
            ent.append(h)
            u += 1
    X = sp.csr_matrix((np.asarray(vals, float), (rows, cols)), shape=(u, m))
    ent = np.asarray(ent)
    ids = np.asarray([f"u{i}" for i in range(u)])
    if drop_user is not None:
        keep = np.arange(u) != drop_user
        X, ent, ids = X[keep], ent[keep], ids[keep]
    return FederatedDataset(X=X, entity_of_user=ent, entity_names=[f"e{h}" for h in range(len(n_per_entity))],
                            user_ids=ids, item_names=np.asarray([f"item {j}" for j in range(m)]),
                            item_ids=np.asarray([str(j) for j in range(m)]), value_kind="ratings", value_max=5.0,
                            name="contract", item_source="declared")


def _config(name: str, **kw) -> RunConfig:
    spec = get_method(name)
    base = dict(method=name, k=2, rank=2, max_iter=20, seed=1, simulation=True,
                epsilon=1.0 if spec.uses_epsilon else math.inf, delta=1e-5)
    if name in ("fcf", "implicit-als"):
        base["method_params"] = {"epochs": 2}
    base.update(kw)
    return RunConfig(**base)


def _all_methods() -> list[str]:
    return [m for m in available_methods() if m not in SLOW]


def _assert_entity_factors(f, ds) -> None:
    """Per entity (per block): U_h (its users × c_h) on V_h (items × c_h), c_h ≥ the shared columns; the
    scores of its rows are exactly U_h V_hᵀ; no entity's columns are another's."""
    assert f.shape == ds.X.shape and f.V.shape == (ds.n_items, f.U.shape[1])
    rows = []
    # the factors' blocks: the entities' slices, or one block of every user for a shared model
    assert [(sl.start, sl.stop) for sl in f.slices] in ([(s.start, s.stop) for s in ds.entity_slices()],
                                                        [(0, ds.n_users)])
    for h, sl in enumerate(f.slices):
        U_h, V_h = f.entity(h)
        c = f.U.shape[1] + f.local_widths[h]
        assert U_h.shape == (sl.stop - sl.start, c) and V_h.shape == (ds.n_items, c)
        assert c >= 1, f"entity {h} has no factors at all"
        np.testing.assert_allclose(f.scores(np.arange(sl.start, sl.stop)), U_h @ V_h.T, atol=1e-12)
        rows.append(sl.start)
    S = f.scores(rows)
    assert S.shape == (len(rows), ds.n_items) and np.isfinite(S).all()


@pytest.mark.parametrize("name", _all_methods())
def test_every_method_keeps_the_contract(name):
    ds = _dataset()
    config = _config(name, aggregation="secure" if name in federated_method_names() else "none")
    doc, result = run_method(ds, config)
    spec = METHODS[name]
    assert isinstance(spec.privacy_model, PrivacyModel)
    # factors: one score per user and item, each entity from its own factors (shared V + its own columns)
    assert result.U.shape[0] == ds.n_users and result.V.shape[0] == ds.n_items
    _assert_entity_factors(result.entity_factors(), ds)
    # the ledger never exceeds the budget it was given
    eps, dlt = result.ledger.guarantee()
    if spec.privacy_model is PrivacyModel.FEDERATED_USER_DP:
        assert eps <= config.epsilon * (1 + 1e-9) and dlt <= config.delta * (1 + 1e-9)
        assert doc["privacy"]["private"]
    elif spec.privacy_model is PrivacyModel.NO_RELEASE:
        assert eps == 0 or not result.ledger.rows
    elif spec.privacy_model in (PrivacyModel.NON_PRIVATE, PrivacyModel.NO_FORMAL_CLAIM):
        assert not doc["privacy"]["private"]
    # every message has a sender, a receiver and a shape
    for m in doc["messages"]:
        assert m["sender"] and m["receiver"] and isinstance(m["shape"], list)


@pytest.mark.parametrize("name", federated_method_names())
def test_federated_message_shapes_do_not_depend_on_the_private_rows(name):
    """Removing one user (neighbouring dataset) leaves every message's shape and content label as it
    was: shapes come from public inputs only."""
    spec = get_method(name)
    if not spec.uses_epsilon:
        pytest.skip("non-private prototype methods release raw rows (their k is compared with sizes)")
    full = _dataset()
    less = _dataset(drop_user=3)
    config = _config(name, aggregation="secure" if name in federated_method_names() else "none")
    shapes = []
    for ds in (full, less):
        doc, _ = run_method(ds, config)
        shapes.append([(m["round"], m["sender"], m["receiver"], m["content"], tuple(m["shape"]))
                       for m in doc["messages"]])
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize("name", federated_method_names())
def test_one_estimator_fits_every_federated_method(name):
    ds = _dataset()
    eps = 1.0 if get_method(name).uses_epsilon else math.inf
    model = FederatedRecommender(method=name, k=2, rank=2, epsilon=eps, delta=1e-5, max_iter=20, random_state=0,
                                 simulation=True, aggregation="secure")
    assert model.fit(ds) is model
    assert model.U_.shape[0] == ds.n_users and model.V_.shape[0] == ds.n_items
    assert model.U_.shape[1] == model.V_.shape[1]  # U_ on the broadcast V_; each entity's own columns apart
    _assert_entity_factors(model.factors_, ds)
    assert model.ledger_.guarantee()[0] <= (eps if math.isfinite(eps) else math.inf)
    assert model.messages_
    # recommend: best first, seen items excluded, scores as predicted
    items, scores = model.recommend("e1", 0, n=5, exclude_seen=True)
    seen = set(ds.X[ds.entity_slices()[1].start].indices)
    assert not seen & set(items.tolist())
    assert np.all(np.diff(scores) <= 1e-12)
    assert np.allclose(scores, model.predict([ds.entity_slices()[1].start])[0][items])


def test_prototypes_alias_and_params_reach_the_method():
    ds = _dataset()
    a = FederatedRecommender(prototypes="dp-gaussian", k=2, rank=2, epsilon=1.0, delta=1e-5, random_state=0,
                             simulation=True, prototype_params={"cluster_size": None}).fit(ds)
    b = FederatedRecommender(method="dp-gaussian", k=2, rank=2, epsilon=1.0, delta=1e-5, random_state=0,
                             simulation=True, params={"cluster_size": None}).fit(ds)
    assert np.allclose(a.V_, b.V_)
    with pytest.raises(ConfigError, match="pop_share"):
        FederatedRecommender(method="dp-cooccurrence", epsilon=1.0, params={"pop_share": 2.0}).fit(ds)
    with pytest.raises(ConfigError, match="no parameter 'nope'"):
        FederatedRecommender(method="dp-popularity", epsilon=1.0, params={"nope": 1}).fit(ds)
    with pytest.raises(ConfigError, match="unknown federated method"):
        FederatedRecommender(method="nothing").fit(ds)


def test_param_reaches_comparison_methods_and_is_checked():
    ds = _dataset()
    with pytest.raises(ConfigError, match="gamma"):
        run_method(ds, _config("fcf", prototype_params={"gamma": -1}))
    doc, _ = run_method(ds, _config("xin-public", prototype_params={"tau": "2.5"}))
    assert doc["config"]["prototype_params"] == {"tau": "2.5"}


def test_declared_parameters_cover_the_constructor():
    """Every constructor keyword of a federated method is either a declared parameter or set by a
    main control, so the Advanced panel and ``--param`` can reach all of it."""
    import inspect

    from dpfed_core.federation.protocol import MAIN_CONTROLS, method_class

    for name in federated_method_names():
        cls = method_class(name)
        declared = {p.name for p in cls.parameters}
        for kw in inspect.signature(cls.__init__).parameters:
            if kw in ("self",):
                continue
            assert kw in declared or kw in MAIN_CONTROLS, f"{name}: {kw} is neither declared nor a main control"
        for p in cls.parameters:
            assert p.doc and p.coerce(p.default) == p.default if p.default is not None else p.optional


def test_privacy_model_decides_the_charge_not_the_wording():
    """The odometer's charge follows the enum: a relabelled method is charged the same."""
    from dataclasses import replace

    from dpfed_core.evaluation.budget import method_charges
    from dpfed_core.methods.registry import register_method

    spec = get_method("dp-popularity")
    renamed = replace(spec, name="contract-relabelled", detail="a label that starts with nothing in particular")
    register_method(renamed)
    try:
        assert method_charges("contract-relabelled", 1.0, 1e-6, ["a"]) == {"a": (1.0, 1e-6)}
        assert method_charges("individual", 1.0, 1e-6, ["a"]) == {}
        assert method_charges("friedman-isgd", 1.0, 1e-6, ["a"]) == {"a": (math.inf, 0.0)}
    finally:
        METHODS.pop("contract-relabelled", None)


def test_a_method_without_a_formal_claim_is_said_to_release_and_only_no_release_methods_spend_nothing():
    """The Evaluate page tells a user that comparisons which release nothing spend nothing: FCF's gradients
    and Xin & Jaakkola's deniable releases leave the sites, so they are never among them."""
    from dpfed_core.methods.registry import available_methods
    from dpfed_core.privacy.model import PrivacyModel
    from dpfed_core.ui.engine import any_release

    quiet = [m for m in available_methods() if get_method(m).privacy_model is PrivacyModel.NO_RELEASE]
    assert sorted(quiet) == ["individual", "local", "random-v"]
    assert not any_release(quiet)
    for m in available_methods():
        if m not in quiet:
            assert any_release([*quiet, m]), m
    assert any_release(["fcf"]) and any_release(["xin-pmd"])


@pytest.mark.parametrize("method, params, foreign", [
    ("fcf", {"gd_iters": 3, "optimizer": "gd", "epochs": 2}, "beta_m"),
    ("implicit-als", {"epochs": 2, "alpha": 2.0}, "gd_iters"),        # FCF's own: not the centralised ALS's
    ("xin-pmd", {"pmd_tries": 3, "public_fraction": 0.2}, "gd_iters"),
    ("xin-full", {"tau": 5.0}, "beta_m"),
    ("global-average", {"variant": "bounded"}, "gd_iters"),         # its default: the value the run uses anyway
    ("friedman-ge", {"beta_m": 10.0, "split": "0.1,0.4,0.1,0.4,0"}, "pmd_tries"),
])
def test_each_comparison_method_takes_its_own_parameters_and_refuses_another_systems(method, params, foreign):
    """The parameters a comparison's fit reads are the ones the run's one check and the dashboard's Advanced
    panel offer for it; another system's parameter is refused, naming the method's own."""
    from dpfed_core.evaluation.service import check_run

    ds = _dataset()
    check_run(ds, RunConfig(method=method, method_params=params))
    with pytest.raises(ConfigError, match=f"{method} has no parameter {foreign!r}; its parameters: "):
        check_run(ds, RunConfig(method=method, method_params={foreign: 1}))


def test_the_comparison_systems_state_the_privacy_they_have():
    """What a comparison's row says beside its numbers: the central curator's rating-level DP, FCF's and Xin &
    Jaakkola's releases with no formal claim, the pooled references non-private."""
    models = {m: get_method(m).privacy_model for m in available_methods()}
    assert {m for m, v in models.items() if v is PrivacyModel.CENTRAL_RATING_DP} == {
        "friedman-ge", "friedman-isgd", "friedman-psgd", "friedman-pals"}
    assert {m for m, v in models.items() if v is PrivacyModel.NO_FORMAL_CLAIM} == {
        "fcf", "xin-public", "xin-pmc", "xin-pmd"}
    assert all(models[m] is PrivacyModel.NON_PRIVATE for m in ("xin-full", "implicit-als", "global-average",
                                                                "item-average", "global-effects", "ge-mf"))
    assert get_method("xin-public").privacy.startswith("no formal privacy claim — public users share all")
    assert get_method("xin-full").privacy == "non-private — all users' ratings pooled at the server"


def test_example_method_is_picked_up_everywhere():
    """The example summable method (tests/example_method.py: one module + its registration) runs
    through the estimator, the registry's run path, the CLI's preflight and the audit."""
    from dpfed_core.audit.membership import audit_summable_target
    from dpfed_core.audit.targets import AuditTarget
    from dpfed_core.cli.args import preflight
    from dpfed_core.federation.protocol import build_method

    name = example_method.NAME
    ds = _dataset()
    assert name in available_methods() and get_method(name).privacy_model is PrivacyModel.FEDERATED_USER_DP
    doc, result = run_method(ds, _config(name, aggregation="secure", prototype_params={"power": 2}))
    assert doc["privacy"]["epsilon"] <= 1.0 and result.V.shape == (ds.n_items, 1)
    preflight(ds, _config(name))
    with pytest.raises(ConfigError, match="power"):
        preflight(ds, _config(name, prototype_params={"power": 9}))
    method = build_method(_config(name, aggregation="none"), ds.value_max)
    X = sp.csr_matrix(ds.X)
    res = audit_summable_target(X[:14], [X[14:25], X[25:]], 0, AuditTarget(name="synthetic", kind="synthetic", row=np.r_[np.ones(3), np.zeros(ds.n_items - 3)]), method,
                                runs=8, seed=np.random.SeedSequence(0), entity="e0")
    assert res["runs"] == 8 and res["attacks"]


# ------------------------------------------------------------------------------------ the built-in references
def test_popularity_scores_each_item_by_its_pooled_mean_over_users_or_over_its_ratings():
    ds = _dataset()
    train = ds.X.tocsr()
    zero = get_method("popularity").fit(ds, train, _config("popularity"), np.random.default_rng(0), lambda *a, **k: None)
    np.testing.assert_allclose(zero.V[:, 0], np.asarray(train.sum(axis=0)).ravel() / ds.n_users)
    np.testing.assert_array_equal(zero.U, np.ones((ds.n_users, 1)))
    # every entity sends its exact item totals to the server, in round 1
    assert [(m.round, m.sender, m.receiver) for m in zero.messages] == [(1, e, "server") for e in ds.entity_names]
    Xo = sp.csr_matrix(train.toarray() * (np.arange(ds.n_items) != 0))  # item 0: nobody rated it
    obs = get_method("popularity").fit(ds, Xo, _config("popularity", mode="observed"), np.random.default_rng(0),
                                       lambda *a, **k: None)
    cnt = np.diff(Xo.tocsc().indptr)
    want = np.asarray(Xo.sum(axis=0)).ravel() / np.maximum(cnt, 1)
    want[0] = Xo.data.mean()  # …so it gets the global mean rating
    np.testing.assert_allclose(obs.V[:, 0], want)


def test_only_prototype_methods_take_k():
    assert get_method("dp-prototypes").uses_k
    summable = [m for m in available_methods() if get_method(m).federated and "summable" in get_method(m).label]
    assert summable and not any(get_method(m).uses_k for m in summable)
    assert not get_method("central").uses_k


def test_every_federated_method_reads_the_training_data_a_sites_block_at_a_time():
    federated = [m for m in available_methods() if get_method(m).federated]
    assert federated and all(get_method(m).site_rows for m in federated)


def test_central_states_every_entitys_raw_rows_as_non_private():
    ds = _dataset()
    res = get_method("central").fit(ds, ds.X.tocsr(), _config("central"), np.random.default_rng(0),
                                    lambda *a, **k: None)
    assert sorted(r.entity for r in res.ledger.rows) == sorted(ds.entity_names)
    assert all(math.isinf(r.epsilon) for r in res.ledger.rows)
    assert {m.sender for m in res.messages} == set(ds.entity_names)


def test_random_v_fits_each_users_row_on_the_drawn_items_with_the_runs_ridge():
    from dpfed_core.models.factorization import fit_rows_given

    ds = _dataset()
    cfg = _config("random-v", lam=0.7)
    res = get_method("random-v").fit(ds, ds.X.tocsr(), cfg, np.random.default_rng(0), lambda *a, **k: None)
    sl = ds.entity_slices()[1]
    np.testing.assert_allclose(res.U[sl], fit_rows_given(ds.X.tocsr()[sl], res.V, 0.7, cfg.mode))
    assert not np.allclose(res.U[sl], fit_rows_given(ds.X.tocsr()[sl], res.V, 0.0, cfg.mode))


#: The public bounds a site's policy checks (``value_bounds``) that a method may take as parameters.
PUBLIC_BOUND_PARAMS = ("row_norm", "value_min")


def _bounds_a_release_applies(method, X: sp.csr_matrix) -> dict[str, float]:
    """The bounds one release of ``X`` actually applied, read from the release itself: a prototype method's
    row scaling (its Λ) and the smallest entry left after its clipping (its value_min, ``X`` holding entries
    below it); a summable method's ℓ2 sensitivity its ledger row states for the rows it summed (its Λ)."""
    from dpfed_core.federation.protocol import release_entity
    from dpfed_core.privacy.ledger import PrivacyLedger

    seen: dict[str, float] = {}
    rng = np.random.default_rng(3)
    if hasattr(method, "release"):
        scale, preprocess = method._scale_rows, method._preprocess

        def scale_rows(Xc, lam):
            seen.setdefault("row_norm", float(lam))
            assert seen["row_norm"] == float(lam), "one release scales rows by one bound"
            return scale(Xc, lam)

        def clipped(X_):
            Xc, Xs = preprocess(X_)
            seen["value_min"] = min(seen.get("value_min", 0.0), float(Xc.data.min()))
            return Xc, Xs

        method._scale_rows, method._preprocess = scale_rows, clipped
        release_entity(method, X, rng, "e0", method.epsilon, method.delta)
    else:
        ledger = PrivacyLedger(method.epsilon, method.delta)
        method.share(X, rng, ledger.for_entity("e0"), 3, stage=method.stages[0], public={})
        seen["row_norm"] = max(float(r.sensitivity) for r in ledger.rows)
    return seen


@pytest.mark.parametrize("given", [{}, {"row_norm": 3.0, "value_min": -1.0}], ids=["defaults", "given"])
@pytest.mark.parametrize("name", federated_method_names())
def test_a_methods_public_bounds_are_the_bounds_its_release_applies(name, given):
    """What a site checks before it accepts a run — the method's ``public_bounds``, derived from public inputs
    only (its parameters, the value bound, the catalogue's size) — is what its release clips and scales rows
    with, defaults included, so the two cannot drift. A method that takes a bound parameter states it; one
    whose catalogue size is unknown states its default at its largest (Λ∞·√64 for dp-gaussian)."""
    from dpfed_core.federation.protocol import build_method, method_class

    takes = {p.name for p in method_class(name).parameters} & set(PUBLIC_BOUND_PARAMS)
    cfg = _config(name, epsilon=1.0, method_params={k: v for k, v in given.items() if k in takes})
    m = 9
    method = build_method(cfg, 5.0)
    bounds = method.public_bounds(m)
    assert takes <= set(bounds) and set(bounds) <= set(PUBLIC_BOUND_PARAMS), (name, bounds)
    if not bounds:
        return
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.integers(-3, 9, size=(40, m)).astype(float) * (rng.random((40, m)) < 0.6))
    assert _bounds_a_release_applies(method, X) == pytest.approx(bounds), name
    if "row_norm" not in given and "value_min" in takes:  # the default grows with the catalogue: at its largest
        assert method.public_bounds(None)["row_norm"] == pytest.approx(5.0 * 8)
    for k, v in given.items():
        if k in takes:
            assert bounds[k] == v


def test_a_prototype_methods_parameter_check_refuses_what_its_release_refuses_before_any_row():
    """``check_parameters`` makes the checks a release makes before it draws, from public inputs only: a
    combination of parameters every value of which is valid on its own (several trials with the LSH candidates)
    is refused with the release's own words, with or without the catalogue's size; the defaults pass."""
    from dpfed_core.federation.protocol import build_method, release_entity

    for name in ("dp-prototypes", "dp-gaussian", "kmeans", "krandom"):
        build_method(_config(name, epsilon=1.0), 5.0).check_parameters(9)
    method = build_method(_config("dp-gaussian", epsilon=1.0, method_params={"trials": 2, "candidates": "lsh"}), 5.0)
    with pytest.raises(ConfigError) as released:
        release_entity(method, sp.csr_matrix(np.ones((4, 9))), np.random.default_rng(0), "e0", 1.0, 1e-5)
    for n_items in (9, None):
        with pytest.raises(ConfigError) as checked:
            method.check_parameters(n_items)
        assert str(checked.value) == str(released.value) and "trials" in str(checked.value)


# ------------------------------------------------------------------------------------ the registry
def test_an_unknown_method_is_refused_naming_every_method_to_choose_from():
    with pytest.raises(ConfigError, match="unknown method 'nosuch'; choose one of") as exc:
        get_method("nosuch")
    for name in ("central", "dp-popularity", "fcf", "kmeans"):
        assert name in str(exc.value)


def test_a_federated_method_is_registered_with_its_classes_parameters_each_found_by_name():
    """``--param`` and the dashboard's Advanced panel read a method's parameters from its registration."""
    from dpfed_core.federation.protocol import method_class

    for name in federated_method_names():
        spec = get_method(name)
        assert spec.parameters == tuple(method_class(name).parameters), name
        for p in spec.parameters:
            assert spec.parameter(p.name) is p
        assert spec.parameter("no such parameter") is None
    assert len(get_method("dp-prototypes").parameters) > 1


def test_a_non_private_prototype_method_says_raw_prototypes_leave_the_entities():
    for name in ("kmeans", "krandom"):
        spec = get_method(name)
        assert spec.privacy_model is PrivacyModel.NON_PRIVATE and not spec.uses_epsilon
        assert spec.privacy.endswith("raw prototypes leave entities"), spec.privacy


def test_a_look_up_and_the_method_list_know_every_federated_method_before_any_is_registered():
    removed = {n: METHODS.pop(n) for n in federated_method_names() if n in METHODS}
    try:
        assert get_method("dp-popularity").name == "dp-popularity"
        for n in federated_method_names():
            METHODS.pop(n, None)
        assert set(federated_method_names()) <= set(available_methods())
    finally:
        METHODS.update(removed)


def test_a_federated_method_is_described_by_the_first_line_of_its_classes_doc():
    from dpfed_core.federation.protocol import method_class

    for name in federated_method_names():
        doc = (method_class(name).__doc__ or "").strip()
        assert get_method(name).description == doc.split("\n")[0], name
    assert any("\n" in (method_class(n).__doc__ or "").strip() for n in federated_method_names())


def test_a_federated_method_registered_again_keeps_the_registration_given():
    """A plug-in may register its own spec under a built-in federated name; a later look-up must not
    silently put the built-in one back."""
    from dataclasses import replace

    from dpfed_core.methods.registry import register_method

    spec = get_method("kmeans")
    mine = replace(spec, label="my k-means")
    register_method(mine)
    try:
        assert get_method("kmeans") is mine and "kmeans" in available_methods() and METHODS["kmeans"] is mine
    finally:
        register_method(spec)


def test_a_federated_runs_document_carries_its_models_notes_and_stage_timings():
    ds = _dataset()
    doc, res = run_method(ds, _config("kmeans", k=12))  # entities e1 (11 users) and e2 (9) send fewer than k
    assert res.extra["notes"] == res.model.notes_
    assert any("'e2' has 9 training users < k=12" in n for n in doc["notes"]), doc["notes"]
    assert res.model.timings_ and all(doc["timings"][k] == v for k, v in res.model.timings_.items())
