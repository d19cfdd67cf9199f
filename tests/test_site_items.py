"""A site keeps what it knows: a DP-selected catalogue decides what is shared, never what a site
can recommend; ``local`` and round 2 are one fitting routine."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.experiments import make_split, run_method
from dpfed_core.models import blend
from dpfed_core.models.shared_items import SharedItems


def _data(n=80, m=60, item_source="data", seed=0):
    """Three sites; popular items shared by everyone, and each site's own block of items no other
    site holds (rare: the DP catalogue never keeps them)."""
    g = np.random.default_rng(seed)
    rows = []
    for h in range(3):
        p = np.full(m, 0.002)
        p[:10] = 0.5 / (1 + np.arange(10))            # common items: selected
        own = slice(20 + 12 * h, 32 + 12 * h)         # this site's own items: held by it alone
        p[own] = 0.35
        rows.append((g.random((n, m)) < p).astype(float))
    X = sp.csr_matrix(np.vstack(rows))
    ds = FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], n), value_kind="counts", value_max=1.0,
                                     name="sites")
    return replace(ds, item_source=item_source)


@pytest.mark.parametrize("aggregation", ["secure", "none"])
def test_a_site_scores_its_own_items_outside_the_dp_catalogue(aggregation):
    ds = _data()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=4, simulation=True, aggregation=aggregation, seed=1)
    doc, res = run_method(ds, cfg)
    cat = np.asarray(res.extra["catalogue"])
    factors = res.entity_factors()
    split = make_split(ds, cfg)
    checked = 0
    for h, sl in enumerate(ds.entity_slices()):
        own = np.arange(20 + 12 * h, 32 + 12 * h)
        outside = np.setdiff1d(own, cat)
        assert outside.size, "the test needs own items the DP catalogue left out"
        held = np.flatnonzero(np.asarray(split.train[sl][:, outside].sum(axis=0)).ravel() > 0)
        S = factors.scores(np.arange(sl.start, sl.stop))
        # the site's own model scores the items it has rows for although the federation never saw them
        assert np.all(S[:, outside[held]].max(axis=0) > 0)
        checked += held.size
    assert checked > 0
    assert any("decides only what is shared" in n for n in doc["notes"])
    # and the site's own items rank: far better than the zero scores of a catalogue-only model
    assert doc["overall"]["mar"] < 0.3


@pytest.mark.parametrize("method", ["dp-cooccurrence", "dp-popularity", "dp-gaussian"])
def test_messages_are_shaped_by_the_catalogue_not_by_a_sites_own_items(method):
    """Two federations that differ only in items outside the shared catalogue send messages of the
    same shapes; round 2 still scores those items at the site that holds them."""
    from dpfed_core.federation.protocol import FederatedRecommender

    ds = _data(item_source="declared")
    shared = SharedItems.from_columns(np.arange(10), ds.n_items, ds.value_max)
    X2 = ds.X.tolil()
    X2[:40, 40:60] = 1.0  # many more own items, none of them shared
    shapes = []
    for X in (ds.X, X2.tocsr()):
        est = FederatedRecommender(method=method, k=4, rank=3, epsilon=2.0, simulation=True, random_state=0,
                                   aggregation="secure" if method != "dp-gaussian" else "none")
        est.fit(replace(ds, X=X), shared=shared)
        shapes.append([(m.round, m.sender, m.receiver, m.shape) for m in est.messages_])
        assert est.factors_.n_items == ds.n_items
    assert shapes[0] == shapes[1]
    assert all(s[3][0] in (10, 4, 3) or len(s[3]) == 1 for s in shapes[0] if s[0] == 2)


@pytest.mark.parametrize("aggregation", ["secure", "none"])
def test_an_empty_catalogue_leaves_each_site_its_own_model(monkeypatch, aggregation):
    from dpfed_core.privacy import catalogue as cat

    real = cat.secure_catalogue_keys

    def none_pass(total, *a, **k):  # the server's threshold keeps no bucket
        keys, sigma, sigma_sum, threshold = real(total, *a, **k)
        return keys[:0], sigma, sigma_sum, threshold

    monkeypatch.setattr(cat, "secure_catalogue_keys", none_pass)
    ds = _data()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, rank=2, simulation=True, aggregation=aggregation)
    doc, res = run_method(ds, cfg)
    local, _ = run_method(ds, RunConfig(method="local", rank=2, seed=cfg.seed))
    assert len(res.extra["catalogue"]) == 0
    assert res.ledger.simulation  # the selection's ledger says its noise was the seed's
    assert all(w > 0 for w in res.entity_factors().local_widths)
    assert any("own model alone" in n for n in doc["notes"])
    assert "own model alone" in next(w["text"] for w in doc["warnings"] if w["code"] == "empty-catalogue")
    # what each site knows alone: the very model ``local`` fits (the same routine, rows, hold-out and
    # one-standard-error rule), so every entity's numbers are local's
    assert [e["mar"] for e in doc["entities"]] == [e["mar"] for e in local["entities"]]
    assert doc["overall"]["mar"] == local["overall"]["mar"]
    assert doc["overall"]["mar"] < 0.3



def _genres(n=60, seed=0):
    """Three sites whose users each keep to one of four genres of ten items; the genres are public
    item features (one-hot), so a site's feature parts rank a user's unseen items of its genre first."""
    g = np.random.default_rng(seed)
    n_genres, per = 4, 10
    p = np.full((3 * n, n_genres * per), 0.01)
    for u, genre in enumerate(g.integers(n_genres, size=3 * n)):
        p[u, genre * per:(genre + 1) * per] = 0.35
    X = sp.csr_matrix((g.random(p.shape) < p).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], n), value_kind="binary", value_max=1.0,
                                     name="genres")
    return replace(ds, item_features=np.repeat(np.eye(n_genres), per, axis=0),
                   item_feature_names=[f"genre {i}" for i in range(n_genres)])


def _no_bucket_passes(monkeypatch):
    from dpfed_core.privacy import catalogue as cat

    real = cat.secure_catalogue_keys

    def none_pass(total, *a, **k):  # the server's threshold keeps no bucket
        keys, sigma, sigma_sum, threshold = real(total, *a, **k)
        return keys[:0], sigma, sigma_sum, threshold

    monkeypatch.setattr(cat, "secure_catalogue_keys", none_pass)


def test_an_empty_catalogue_leaves_each_site_the_local_model_with_its_public_feature_parts(monkeypatch):
    """With public item features, what a site knows alone includes its feature parts (its users' feature
    profiles, its content model): an empty catalogue leaves each site exactly ``local``'s model, which
    gives those parts weight here."""
    _no_bucket_passes(monkeypatch)
    ds = _genres()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, rank=2, simulation=True, aggregation="secure", seed=0)
    doc, res = run_method(ds, cfg)
    local, lres = run_method(ds, RunConfig(method="local", rank=2, seed=0))
    assert len(res.extra["catalogue"]) == 0
    features = ("users' own feature profiles", "public item features")
    for name in ds.entity_names:
        assert set(features) <= set(lres.extra["blend_weights"][name])
    assert any(lres.extra["blend_weights"][name][f] > 0 for name in ds.entity_names for f in features)
    assert [e["mar"] for e in doc["entities"]] == [e["mar"] for e in local["entities"]]
    for sl in ds.entity_slices():
        users = np.arange(sl.start, sl.stop)
        np.testing.assert_allclose(res.entity_factors().scores(users), lres.entity_factors().scores(users),
                                   rtol=1e-9, atol=1e-12)


def test_an_empty_catalogue_leaves_a_method_without_its_local_blend_nothing(monkeypatch):
    """dp-popularity's round 2 keeps no own parts by default (the plain DP popularity list, the
    baseline): with nothing shared every score is 0 and the note says nothing was learned — it is not
    turned into ``local`` behind the method's back."""
    from dpfed_core.evaluation.catalogue_run import EMPTY_CATALOGUE_ZERO_NOTE

    _no_bucket_passes(monkeypatch)
    ds = _data()
    doc, res = run_method(ds, RunConfig(method="dp-popularity", epsilon=1.0, rank=2, simulation=True,
                                        aggregation="secure", seed=0))
    assert len(res.extra["catalogue"]) == 0
    assert any(EMPTY_CATALOGUE_ZERO_NOTE.strip(", ") in n for n in doc["notes"])
    assert not any("own model alone" in n for n in doc["notes"])
    assert not np.any(res.entity_factors().scores(np.arange(ds.n_users)))
    assert doc["overall"]["mar"] == 0.5

def test_shared_items_project_and_lift_are_public_maps():
    sh = SharedItems.from_columns(np.array([3, 1]), 5, value_max=1.0)
    X = sp.csr_matrix(np.array([[0, 1, 0, 1, 1.0]]))
    assert sh.project(X).toarray().tolist() == [[1.0, 1.0]]
    F = np.array([[2.0], [7.0]])
    assert sh.lift(F).ravel().tolist() == [0.0, 7.0, 0.0, 2.0, 0.0]
    assert sh.columns.tolist() == [1, 3]
    # items sharing a key (a released hash bucket) are summed and clipped to the public value bound: a
    # site's row on the keys never exceeds the bound its releases are calibrated for
    key = SharedItems(np.array([0, 0, 1, 0, -1]), 2, value_max=5.0)
    Y = sp.csr_matrix(np.array([[4.0, 3.0, 2.0, 0.0, 9.0], [1.0, 0.0, 5.0, 1.0, 0.0]]))
    assert key.project(Y).toarray().tolist() == [[5.0, 2.0], [2.0, 5.0]]


def test_a_catalogue_of_columns_keeps_a_fractional_value_bound_and_says_whether_it_is_public():
    """A site's rows on the keys are clipped to the public bound its releases are calibrated for,
    a fractional one included; a declared catalogue's publicness reaches the lift."""
    sh = SharedItems.from_columns(np.array([0, 2]), 3, value_max=2.5, public=True)
    assert sh.value_max == 2.5 and sh.public and sh.n_keys == 2
    X = sp.csr_matrix(np.array([[4.0, 1.0, 2.25]]))
    assert sh.project(X).toarray().tolist() == [[2.5, 2.25]]



def test_a_catalogue_of_no_columns_shares_no_item():
    """A catalogue may select no item at all (np.array([]) is a float array): it maps every item to
    no key, a site's rows project onto zero keys and nothing is lifted back."""
    sh = SharedItems.from_columns(np.array([]), 4, value_max=1.0)
    assert sh.n_keys == 0 and sh.item_key.tolist() == [-1, -1, -1, -1] and sh.columns.size == 0
    assert sh.project(sp.csr_matrix(np.ones((2, 4)))).shape == (2, 0)
    assert sh.lift(np.zeros((0, 3))).tolist() == np.zeros((4, 3)).tolist()

def test_a_site_maps_released_keys_back_onto_the_item_names_it_holds_only():
    """Without a declared catalogue a site knows the items it has rows for (a stored entry of any
    value); a released key lifted onto its item axis reaches those items only, other items of the key
    keep zero rows."""
    from dpfed_core.models.shared_items import known_items

    X = sp.csr_matrix(np.array([[0, 2.0, 0, 0, 0], [0, 0, 0, 1.0, 0]]))
    known = known_items(X)
    assert known.tolist() == [False, True, False, True, False]
    sh = SharedItems(np.array([0, 0, 1, 1, -1]), 2, value_max=1.0)  # items 0, 1 → key 0; items 2, 3 → key 1
    F = np.array([[2.0], [7.0]])
    assert sh.lift(F).ravel().tolist() == [2.0, 2.0, 7.0, 7.0, 0.0]
    assert sh.lift(F, known).ravel().tolist() == [0.0, 2.0, 0.0, 7.0, 0.0]


def test_local_and_round_two_are_fitted_by_one_routine_with_the_same_rule(monkeypatch):
    calls = []
    real = blend.fit_site_model

    def spy(X, **kw):
        calls.append(kw)
        return real(X, **kw)

    monkeypatch.setattr(blend, "fit_site_model", spy)
    ds = _data(item_source="declared")
    run_method(ds, RunConfig(method="local", rank=4, seed=0))
    n_local = len(calls)
    run_method(ds, RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=4, simulation=True, seed=0))
    assert n_local == ds.n_entities and len(calls) == 2 * ds.n_entities
    local, fed = calls[:n_local], calls[n_local:]
    assert {c["evidence"] for c in local} == {c["evidence"] for c in fed} == {1.0}
    assert all(c.get("V_fed") is None and c.get("g") is None for c in local)
    assert all(c["g"] is not None for c in fed)


def test_local_keeps_its_popularity_default_without_evidence():
    """A site of few users cannot tell a searched blend from its own hold-out noise: ``local`` keeps its
    own popularity (the default) unless the search wins by a standard error."""
    X = sp.csr_matrix((np.random.default_rng(3).random((5, 30)) < 0.3).astype(float))
    mats, items, info = blend.fit_site_model(X, rank=2, lam=0.1, mode="zero", max_iter=50,
                                             rng=np.random.default_rng(0), evidence=1e6)
    assert items[0] == "own popularity" and info["item_weights"][0] == 1.0
    assert all(w == 0 for w in info["matrix_weights"])


def test_without_secure_aggregation_each_site_releases_its_full_noise_histogram_and_the_run_stays_within_epsilon():
    """The federation-wide catalogue without secure aggregation: every entity's catalogue row charges
    the σ it draws in full (divisor 1: the server sees each release), the summed threshold scales with
    √H, and the whole run composes to at most (ε, δ)."""
    from dpfed_core.privacy import catalogue as cat

    ds = _data()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.5, delta=1e-6, rank=3, simulation=True, aggregation="none")
    doc, res = run_method(ds, cfg)
    rows = [r for r in res.ledger.rows if r.stage == "catalogue"]
    assert len(rows) == ds.n_entities
    assert all(r.mechanism == "Gaussian (own release, catalogue)" and "full σ" in r.note for r in rows)
    assert all(r.noise_scale == pytest.approx(rows[0].noise_scale) for r in rows)
    assert doc["privacy"]["epsilon"] <= 1.5 * (1 + 1e-9)
    note = next(n for n in doc["notes"] if "federation-wide DP selection without secure aggregation" in n)
    sigma = rows[0].noise_scale
    assert f"σ of the sum {sigma * np.sqrt(ds.n_entities):.3g}" in note
    assert any(m.content.startswith("catalogue: noisy bounded user counts") and m.shape == (cat.SECURE_CATALOGUE_BUCKETS,)
               for m in res.messages)


def test_a_pipe_table_is_read_as_a_catalogue_and_as_item_features():
    from dpfed_core.data.inputs import parse_list, parse_pipe_table, read_item_features

    text = "1|Toy Story (1995)|01-Jan-1995||http://x|0|1|1\n2|GoldenEye (1995)|01-Jan-1995||http://y|0|1|0\n"
    lf = parse_list(text)
    assert lf.ids == ["1", "2"] and lf.names == ["Toy Story (1995)", "GoldenEye (1995)"]
    ft = read_item_features(text.encode())
    assert ft.ids == ["1", "2"] and ft.values.tolist() == [[0, 1, 1], [0, 1, 0]]
    # hierarchical names keep their '|': no numeric id, no 0/1 tail
    assert parse_pipe_table(["cardio|shock|vasopressors|a", "cardio|shock|vasopressors|b"]) is None
    assert parse_list("cardio|shock|vasopressors|norepinephrine|x\nneuro|seizure|drug|b|y\n").ids[0] == \
        "cardio|shock|vasopressors|norepinephrine|x"


def test_the_forecast_states_the_threshold_from_public_parameters():
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue

    ds = _data()
    f1 = forecast_catalogue(ds, RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure"))
    f3 = forecast_catalogue(ds, RunConfig(method="dp-cooccurrence", epsilon=3.0, aggregation="secure"))
    fn = forecast_catalogue(ds, RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="none"))
    assert f1.kind == "federation" and f3.threshold < f1.threshold < fn.threshold
    # the threshold is a function of public parameters only: other rows, same forecast threshold
    other = replace(ds, X=ds.X[::-1].tocsr())
    assert forecast_catalogue(other, RunConfig(method="dp-cooccurrence", epsilon=1.0)).threshold == \
        forecast_catalogue(ds, RunConfig(method="dp-cooccurrence", epsilon=1.0)).threshold
    assert "each entity still recommends every item it has rows for" in f1.text().lower()
    # and says what it cannot: an item none of an entity's users holds comes only with a declared catalogue
    assert "reaches it only through a declared catalogue (a shared key is a hash of names" in f1.text()
    # a prototype method selects per entity: its keys are the released item ids, not hashes
    fp = forecast_catalogue(ds, RunConfig(method="dp-gaussian", epsilon=1.0))
    assert fp.kind == "per-entity" and "reaches it only through a declared catalogue;" in fp.text()
    assert "hash" not in fp.text()
    assert forecast_catalogue(replace(ds, item_source="declared"), RunConfig(method="dp-cooccurrence",
                                                                             epsilon=1.0)) is None


@pytest.mark.parametrize("aggregation", ["secure", "none"])
def test_the_forecast_is_the_runs_own_threshold_and_its_chance_of_clearing_it(aggregation):
    """What the CLI and the pages say before a run is what the run will do: the threshold and the σ of
    the summed count the server's step uses (:func:`secure_catalogue_keys`, in users holding c or
    more items: × √c), and the expected number of items shared — Σ P(count + N(0, σ_sum²) ≥ T),
    here on users holding one item each (weight 1, so a count in users is the summed weight)."""
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue
    from dpfed_core.evaluation.catalogue_run import secure_catalogue_budget, secure_catalogue_divisor
    from dpfed_core.privacy import catalogue as cat
    from scipy.special import ndtr

    counts = np.array([2, 40, 80, 120, 160, 240])  # users holding item j, spread over 6 entities
    item = np.repeat(np.arange(counts.size), counts)
    n = item.size
    X = sp.csr_matrix((np.ones(n), (np.arange(n), item)), shape=(n, counts.size))
    names = np.array([f"drug {j}" for j in range(counts.size)])
    assert np.unique(cat.item_buckets(names, cat.SECURE_CATALOGUE_BUCKETS)).size == counts.size
    ds = FederatedDataset.from_parts(X, np.array([f"h{h}" for h in np.arange(n) % 6]), item_names=names,
                                     value_kind="binary", value_max=1.0, name="one item each")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, delta=1e-6, aggregation=aggregation)
    f = forecast_catalogue(ds, cfg, train=ds.X)  # the weighting on these rows, not the run's split
    rho, _, _ = secure_catalogue_budget(cfg)
    _, _, sigma_sum, threshold = cat.secure_catalogue_keys(np.zeros(cat.SECURE_CATALOGUE_BUCKETS), rho, 6,
                                                           divisor=secure_catalogue_divisor(6, cfg))
    c = math.sqrt(cat.SECURE_CATALOGUE_MAX_ITEMS_PER_USER)
    assert (f.threshold, f.sigma) == (pytest.approx(threshold * c), pytest.approx(sigma_sum * c))
    assert f.expected_items == pytest.approx(float(ndtr((counts - threshold) / sigma_sum).sum()), rel=1e-9)
    assert 0.5 < f.expected_items < counts.size - 0.5  # neither all nor none: the check has power


def test_where_the_federation_adds_nothing_round_two_is_the_local_model():
    """With the 'alone' default, a site whose hold-out finds no evidence for the federation's parts keeps
    exactly the model ``local`` fits: same rows, same site stream, same hold-out, same weights."""
    ds = _data(item_source="declared")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=0.05, rank=3, simulation=True, seed=2,
                    prototype_params={"round2_default": "alone"})
    doc, res = run_method(ds, cfg)
    loc, lres = run_method(ds, RunConfig(method="local", rank=3, seed=2))
    same = 0
    for h, sl in enumerate(ds.entity_slices()):
        fed_U = res.entity_factors().U[sl]
        if np.any(fed_U):  # this site took some of the federation's parts
            continue
        rows = np.arange(sl.start, sl.stop)
        np.testing.assert_allclose(res.entity_factors().scores(rows), lres.entity_factors().scores(rows), atol=1e-12)
        same += 1
    assert same >= 1


def test_the_site_stream_is_a_function_of_the_rows():
    X = sp.csr_matrix(np.random.default_rng(0).random((6, 9)) < 0.4, dtype=float)
    assert blend.site_rng(X).random() == blend.site_rng(X.copy()).random()
    Y = X.tolil()
    Y[0, 0] = 1 - Y[0, 0]
    assert blend.site_rng(X).random() != blend.site_rng(sp.csr_matrix(Y)).random()


@pytest.mark.parametrize("item_source", ["data", "declared"])
def test_round_two_fits_the_sites_at_once_to_the_same_model(item_source):
    """n_jobs > 1 computes round 1's shares and fits round 2's sites in threads: the same ledger rows
    in the same order, the same secure sum and the same scores to the last bit, with a DP catalogue
    (each site's lifted V) and a declared one, and every site reported done once."""
    ds = _data(item_source=item_source)
    cfg = RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=4, simulation=True, seed=3)
    blend.SITE_FITS.clear()
    _, one = run_method(ds, cfg)
    blend.SITE_FITS.clear()  # no fit read back from the first run: the threads fit every site afresh
    events = []
    _, two = run_method(ds, cfg.replace(n_jobs=2),
                        progress=lambda e, **kw: events.append((e, kw.get("index"))))
    rows = np.arange(ds.n_users)
    np.testing.assert_array_equal(one.entity_factors().scores(rows), two.entity_factors().scores(rows))
    assert [i for e, i in events if e == "round2_done"] == [0, 1, 2]           # in entity order
    r1 = [i for e, i in events if e == "round1_done"]             # every stage's shares, in entity order
    assert r1 and r1 == [0, 1, 2] * (len(r1) // 3)
    assert one.ledger.rows == two.ledger.rows and len(one.ledger.rows) > 3
    np.testing.assert_array_equal(one.model.secure_sum_, two.model.secure_sum_)


@pytest.mark.parametrize("item_source", ["data", "declared"])
def test_a_site_too_small_for_evidence_is_scored_by_its_default_once(item_source):
    """Beside two sites of 80 users (enough for a DP catalogue), a site of 12 (a hold-out under
    MIN_EVIDENCE_USERS) keeps the default blend at weight 1: every one of its users is scored by the
    unit default vector — the same row for the whole site, of norm exactly 1, its DP popularity part
    included. Scored twice (the federation's columns both on the shared U and in the site's own
    columns), the norm is not 1."""
    full = _data(n=80, item_source=item_source)
    keep = np.r_[0:160, 160:172]
    ds = replace(FederatedDataset.from_parts(full.X[keep], np.repeat(["a", "b", "c"], [80, 80, 12]),
                                             value_kind="counts", value_max=1.0, name="sites"),
                 item_source=item_source)
    _, res = run_method(ds, RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=4, simulation=True, seed=5))
    if item_source == "data":
        assert len(res.extra["catalogue"]) > 0
    f = res.entity_factors()
    small = ds.entity_slices()[2]
    S = f.scores(np.arange(small.start, small.stop))
    np.testing.assert_allclose(S, np.broadcast_to(S[0], S.shape), rtol=0, atol=1e-12)
    assert np.linalg.norm(S[0]) == pytest.approx(1.0, abs=1e-9)


def test_a_prototype_method_on_a_dp_catalogue_keeps_each_sites_own_items(monkeypatch):
    """The paper's method on a DP-selected catalogue: round 1 reads each site's rows without its
    hold-out entries, round 2 blends the broadcast factors with the site's own model by the routine of
    ``local``, so the items the catalogue left out stay scored where a site has rows for them."""
    released, calls = [], []
    real_released, real_fit = blend.released_rows, blend.fit_site_model

    def spy_released(X_h):
        out = real_released(X_h)
        released.append((X_h, out))
        return out

    def spy_fit(X, **kw):
        calls.append(kw)
        return real_fit(X, **kw)

    monkeypatch.setattr(blend, "released_rows", spy_released)
    monkeypatch.setattr(blend, "fit_site_model", spy_fit)
    ds = _data(n=300)  # a site's common items pass its own noisy count at ε = 4, its rare ones do not
    cfg = RunConfig(method="dp-gaussian", epsilon=4.0, rank=4, k=4, simulation=True, aggregation="none", seed=1)
    doc, res = run_method(ds, cfg)
    cat = np.asarray(res.extra["catalogue"])
    assert 0 < cat.size < ds.n_items
    split = make_split(ds, cfg)
    # the catalogue's selection, then round 1, read each site's training rows without the entries
    # round 2 validates on: two passes over the sites
    assert len(released) == 2 * ds.n_entities
    for (X_in, X_out), sl in zip(released, [*ds.entity_slices()] * 2):
        assert (X_in != split.train[sl]).nnz == 0
        assert (X_out != real_released(split.train[sl])).nnz == 0 and X_out.nnz < X_in.nnz
    # round 2: the one site routine, with the federation's factors and no DP popularity (none is released)
    fed = [c for c in calls if c.get("V_fed") is not None]
    assert len(fed) == ds.n_entities and all(c.get("g") is None and c["known_only"] and c.get("evidence", 1.0) == 1.0
                                              for c in fed)
    factors = res.entity_factors()
    for h, sl in enumerate(ds.entity_slices()):
        own = np.setdiff1d(np.arange(20 + 12 * h, 32 + 12 * h), cat)
        held = own[np.asarray(split.train[sl][:, own].sum(axis=0)).ravel() > 0]
        assert held.size and np.all(factors.scores(np.arange(sl.start, sl.stop))[:, held].max(axis=0) > 0)
    assert any("decides only what is shared" in n for n in doc["notes"])
    local, _ = run_method(ds, RunConfig(method="local", rank=4, seed=1))
    # the federation only adds to what the sites have alone (here, at least, it does not take away)
    assert doc["overall"]["mar"] <= local["overall"]["mar"] + 0.02


def test_a_prototype_method_with_an_empty_dp_catalogue_is_each_sites_own_model():
    ds = _data()  # at ε = 0.05 no item passes a site's own noisy count
    cfg = RunConfig(method="dp-gaussian", epsilon=0.05, rank=2, k=4, simulation=True, aggregation="none", seed=0)
    doc, res = run_method(ds, cfg)
    local, _ = run_method(ds, RunConfig(method="local", rank=2, seed=0))
    assert len(res.extra["catalogue"]) == 0
    assert any("own model alone" in n for n in doc["notes"])
    # not every score 0 (random order, MAR 0.5): each site's model is the one ``local`` fits
    assert doc["overall"]["mar"] == pytest.approx(local["overall"]["mar"], abs=1e-12)
    assert doc["overall"]["mar"] < 0.3


@pytest.mark.parametrize("method,released", [("dp-gaussian", True), ("dp-cooccurrence", True),
                                             ("friedman-psgd", False)])
def test_the_catalogue_selection_reads_the_rows_a_federated_method_releases_from(method, released):
    """A federated method validates the federation's parts on a local hold-out, so its DP catalogue
    selection, like its round 1, reads each site's rows without those entries; a method fitted on the
    selected items alone reads the rows as they are."""
    from dpfed_core.evaluation.catalogue_run import selection_rows

    ds = _data()
    split = make_split(ds, RunConfig(seed=0))
    rows = selection_rows(ds, split.train, RunConfig(method=method, epsilon=1.0))
    for sl in ds.entity_slices():
        want = blend.released_rows(split.train[sl]) if released else split.train[sl]
        assert (rows[sl] != want).nnz == 0 and rows[sl].nnz == want.nnz
    if released:
        assert sum(rows[sl].nnz for sl in ds.entity_slices()) < split.train.nnz


@pytest.mark.parametrize("method", ["dp-popularity", "dp-gaussian"])
def test_the_selections_messages_ledger_rows_and_note_come_first(method):
    ds = _data()
    cfg = RunConfig(method=method, k=4, epsilon=2.0, rank=2, simulation=True, seed=0, max_iter=20,
                    aggregation="secure" if method != "dp-gaussian" else "none")
    doc, res = run_method(ds, cfg)
    first = [m.content for m in res.messages[:2 * ds.n_entities]]
    assert all("catalogue" in w or "DP-selected" in w for w in first), first
    assert not any("catalogue" in m.content or "DP-selected" in m.content for m in res.messages[2 * ds.n_entities:])
    assert res.ledger.rows[0].stage == "catalogue"
    assert res.extra["notes"][0].startswith("no declared item catalogue")


def test_a_users_weight_in_the_forecast_is_their_chance_of_keeping_an_item_over_root_c():
    """A user holding k > c items keeps each with probability c/k and gives it 1/√c: a user of 2c
    items adds ½·1/√c to each of their buckets on average."""
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue
    from dpfed_core.evaluation.catalogue_run import secure_catalogue_budget, secure_catalogue_divisor
    from dpfed_core.privacy import catalogue as cat
    from scipy.special import ndtr

    c = cat.SECURE_CATALOGUE_MAX_ITEMS_PER_USER
    names = np.array([f"drug {j}" for j in range(2 * c)])
    assert np.unique(cat.item_buckets(names, cat.SECURE_CATALOGUE_BUCKETS)).size == names.size
    n = 260  # about the threshold at ½ · 1/√c each
    X = sp.csr_matrix(np.ones((n, names.size)))  # every user holds every one of the 2c items
    ds = FederatedDataset.from_parts(X, np.array([f"h{h}" for h in np.arange(n) % 4]), item_names=names,
                                     value_kind="binary", value_max=1.0, name="2c items each")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=0.5, delta=1e-6, aggregation="secure")
    f = forecast_catalogue(ds, cfg, train=ds.X)  # the weighting on these rows, not the run's split
    rho, _, _ = secure_catalogue_budget(cfg)
    _, _, sigma_sum, threshold = cat.secure_catalogue_keys(np.zeros(cat.SECURE_CATALOGUE_BUCKETS), rho, 4,
                                                           divisor=secure_catalogue_divisor(4, cfg))
    total = n * 0.5 / math.sqrt(c)
    assert f.expected_items == pytest.approx(names.size * float(ndtr((total - threshold) / sigma_sum)), rel=1e-9)
    assert 0.5 < f.expected_items < names.size - 0.5


def test_the_forecast_reads_the_rows_the_selection_reads_not_every_row():
    """Before a run the forecast reads what the run's selection will read — each site's training rows
    without its held-out and round-2 validation entries — not the whole table (10 % high on eICU)."""
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue
    from dpfed_core.evaluation.catalogue_run import selection_rows
    from dpfed_core.evaluation.experiments import make_split

    ds = _data()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=3.0, delta=1e-6, aggregation="secure", seed=0)
    rows = selection_rows(ds, make_split(ds, cfg).train_rows, cfg)
    read = sp.vstack([sp.csr_matrix(rows[sl]) for sl in ds.entity_slices()]).tocsr()
    assert read.nnz < ds.X.nnz
    f = forecast_catalogue(ds, cfg)
    assert f.expected_items == pytest.approx(forecast_catalogue(ds, cfg, train=read).expected_items, rel=1e-12)
    assert f.expected_items < forecast_catalogue(ds, cfg, train=ds.X).expected_items


def _discrete_laplace_tail(t: float, b: float) -> float:
    """P(Z ≥ t) for P(Z = z) ∝ e^(−|z|/b), summed term by term."""
    z = np.arange(-4000, 4001)
    p = np.exp(-np.abs(z) / b)
    return float(p[z >= t].sum() / p.sum())


def test_the_per_entity_forecast_is_each_entitys_own_threshold_and_chance_of_clearing_it():
    """A prototype method selects per entity at its share of (ε, δ) with c items per user: the
    forecast states the threshold 1 + K and the scale b of that selection, and the expected items
    Σ_j 1 − Π_h (1 − P(n_hj + Z ≥ 1 + K)), n_hj the entity's expected bounded count (users of k > c
    items count c/k), an item an entity does not hold never released by it."""
    from dpfed_core.evaluation.catalogue_forecast import CatalogueForecast, forecast_catalogue
    from dpfed_core.privacy import catalogue as cat

    c = cat.CATALOGUE_MAX_ITEMS_PER_USER
    g = np.random.default_rng(0)
    counts = np.array([[80, 0], [40, 120], [200, 10], [0, 100], [0, 0], [110, 95]])  # users of item j at entity h
    blocks = []
    for h in range(2):
        rows = []
        for j, nj in enumerate(counts[:, h]):
            for _ in range(nj):
                r = np.zeros(counts.shape[0] + 2 * c)
                r[j] = 1.0
                if g.random() < 0.5:  # half the users also hold 2c filler items: 2c + 1 > c items
                    r[counts.shape[0]:] = 1.0
                rows.append(r)
        blocks.append(np.array(rows))
    X = sp.csr_matrix(np.vstack(blocks))
    ds = FederatedDataset.from_parts(X, np.repeat(["a", "b"], [len(b) for b in blocks]), value_kind="binary",
                                     value_max=1.0, name="two sites")
    cfg = RunConfig(method="dp-gaussian", epsilon=3.0, delta=1e-6, aggregation="none")
    f = forecast_catalogue(ds, cfg, train=ds.X)  # the weighting on these rows, not the run's split
    b, k = cat.selection_threshold(3.0 * cat.CATALOGUE_EPSILON_SHARE, 1e-6 * cat.CATALOGUE_DELTA_SHARE, c)
    assert f.kind == "per-entity" and (f.threshold, f.sigma) == (1 + k, pytest.approx(b))
    expected = 0.0
    for j in range(X.shape[1]):
        miss = 1.0
        for sl in ds.entity_slices():
            Xh = X[sl].toarray()
            n = float((Xh[:, j] * np.minimum(1.0, c / Xh.sum(axis=1))).sum())
            if n > 0:
                miss *= 1 - _discrete_laplace_tail(1 + k - round(n), b)
        expected += 1 - miss
    assert f.expected_items == pytest.approx(expected, rel=1e-9)
    assert 0.5 < f.expected_items < X.shape[1] - 0.5
    text = CatalogueForecast("federation", 100.0, 10.0, 1.0, None, 50, True).text()
    assert "95 % sure from 116 users" in text  # T + 1.645σ: the one-sided 95 % quantile



def test_the_per_entity_forecast_counts_the_users_holding_an_item_not_their_values():
    """The per-entity selection counts users (each kept item of a user adds 1, whatever its value): a
    table of counts forecasts the items its 0/1 pattern forecasts."""
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue

    g = np.random.default_rng(1)
    p = np.full(30, 0.02)
    p[:6] = [0.4, 0.4, 0.4, 0.3, 0.3, 0.3]  # a few items near the threshold of 1 + K users
    pattern = (g.random((600, 30)) < p).astype(float)
    values = pattern * g.integers(2, 6, size=pattern.shape)  # 2–5 of each item held
    cfg = RunConfig(method="dp-gaussian", epsilon=3.0, delta=1e-6, aggregation="none")
    forecasts = []
    for X, kind, vmax in ((pattern, "binary", 1.0), (values, "counts", 5.0)):
        ds = FederatedDataset.from_parts(sp.csr_matrix(X), np.repeat(["a", "b"], 300), value_kind=kind,
                                         value_max=vmax, name="two sites")
        forecasts.append(forecast_catalogue(ds, cfg, train=ds.X))
    assert forecasts[0].kind == forecasts[1].kind == "per-entity"
    assert 0.5 < forecasts[0].expected_items < 29.5
    assert forecasts[1].expected_items == pytest.approx(forecasts[0].expected_items, rel=1e-12)

def test_with_dropouts_allowed_the_forecast_is_the_threshold_of_the_sum_of_every_entitys_share():
    """Shares are sized for d dropouts (σ/√(H − d) each), but the in-process selection sums all H of
    them, as a deployment does when nobody drops: the forecast states that sum's threshold and σ."""
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue
    from dpfed_core.evaluation.catalogue_run import (catalogue_streams, secure_catalogue_budget,
                                                     secure_catalogue_divisor)
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import PrivacyLedger

    ds = _data()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, delta=1e-6, aggregation="secure", max_dropouts=1,
                    seed=0, simulation=True)
    f = forecast_catalogue(ds, cfg, train=ds.X)  # the weighting on these rows, not the run's split
    rho, dlt, _ = secure_catalogue_budget(cfg)
    rel = cat.select_catalogue_secure(ds.X, ds.entity_slices(), ds.entity_names, ds.item_names, rho, dlt,
                                      catalogue_streams(cfg, ds.n_entities), PrivacyLedger(1.0, 1e-6),
                                      divisor=secure_catalogue_divisor(ds.n_entities, cfg))
    c = math.sqrt(cat.SECURE_CATALOGUE_MAX_ITEMS_PER_USER)
    assert (f.threshold, f.sigma) == (pytest.approx(rel.threshold * c), pytest.approx(rel.sigma_sum * c))


def _declared_part(ds: FederatedDataset, n_declared: int) -> FederatedDataset:
    """``ds`` with a declared catalogue of its first ``n_declared`` columns: the others are the data's
    items outside it (as the loader lays out a catalogue that leaves items out)."""
    return replace(ds, item_source="declared", n_declared=n_declared)


@pytest.mark.parametrize("method", ["dp-cooccurrence", "dp-als", "kmeans", "dp-gaussian"])
def test_a_declared_catalogue_that_leaves_items_out_shares_it_and_each_site_scores_its_own(method):
    """A declared catalogue decides what is shared, not what a site knows: every message is shaped
    by its 20 items (the same shapes when the data holds far more items outside it), nothing is
    charged for it, V reaches every declared item of every site (the names are public), and each
    site's own model scores the items outside it that the site holds."""
    ds = _declared_part(_data(item_source="declared"), 20)
    X2 = ds.X.tolil()
    X2[:40, 40:60] = 1.0  # many more items outside the catalogue, none of them shared
    cfg = RunConfig(method=method, epsilon=2.0, rank=3, k=4, simulation=True, seed=1,
                    aggregation="secure" if method.startswith(("dp-co", "dp-als")) else "none")
    docs = []
    for X in (ds.X, X2.tocsr()):
        doc, res = run_method(replace(ds, X=X), cfg)
        docs.append(doc)
        assert all(m["shape"][-1] in (20, 3, 4) or len(m["shape"]) == 1 for m in doc["messages"]), doc["messages"]
        assert not any("catalogue" in r["stage"] for r in doc["privacy"]["ledger"])
        eps = doc["privacy"]["epsilon"]
        assert math.isinf(eps) if method == "kmeans" else eps <= cfg.epsilon * (1 + 1e-9)  # kmeans: non-private
        assert doc["notes"][0].startswith("the declared item catalogue is what is shared: every message is shaped "
                                          "by its 20 items")
        assert res.V.shape[0] == ds.n_items and np.all(res.V[20:] == 0)
    assert [m["shape"] for m in docs[0]["messages"]] == [m["shape"] for m in docs[1]["messages"]]
    # each site scores the items outside the catalogue it has rows for: its own block (20 + 12h …)
    split = make_split(ds, cfg)
    S_all = res.entity_factors()
    for h, sl in enumerate(ds.entity_slices()):
        own = np.arange(20 + 12 * h, 32 + 12 * h)
        own = own[own >= 20]
        held = own[np.asarray(split.train[sl][:, own].sum(axis=0)).ravel() > 0]
        assert held.size and np.all(S_all.scores(np.arange(sl.start, sl.stop))[:, held].max(axis=0) > 0)


def test_a_declared_catalogue_that_leaves_items_out_reaches_every_declared_item_of_every_site(monkeypatch):
    """The declared names are public: round 2 lifts V onto every declared item of a site, including
    one the site holds no row of (a DP-selected catalogue's keys reach only the names a site holds)."""
    from dpfed_core.federation import summable_protocol

    seen = []
    real = summable_protocol.fit_entity_parts

    def spy(method, X_h, public, *a, **k):
        seen.append((np.asarray(public["V"]).copy(), bool(public.get("known_only")), X_h))
        return real(method, X_h, public, *a, **k)

    monkeypatch.setattr(summable_protocol, "fit_entity_parts", spy)
    ds = _declared_part(_data(item_source="declared"), 40)
    run_method(ds, RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=3, simulation=True, seed=1,
                             aggregation="secure"))
    assert len(seen) == ds.n_entities
    for V_h, known_only, X_h in seen:
        unheld = np.flatnonzero(np.asarray(X_h[:, :40].sum(axis=0)).ravel() == 0)
        assert not known_only and unheld.size and np.any(V_h[unheld] != 0)
        assert np.all(V_h[40:] == 0)


def test_a_declared_catalogue_that_covers_the_data_is_shared_whole_by_the_plain_path():
    """Every column declared: no shared-subset path, the same run as a dataset without ``n_declared``."""
    ds = _data(item_source="declared")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=3, simulation=True, seed=1, aggregation="secure")
    a, ra = run_method(ds, cfg)
    b, rb = run_method(replace(ds, n_declared=ds.n_items), cfg)
    assert a["overall"] == b["overall"] and "catalogue_declared" not in rb.extra
    np.testing.assert_array_equal(ra.V, rb.V)


def test_an_entity_keeps_its_own_items_only_where_its_site_model_keeps_its_own_parts():
    """What the notes say of the items a catalogue leaves out follows the method's round 2: a prototype
    method's and a summable method's with its local blend keep each entity's own model; dp-popularity
    (no local blend by default) scores them 0; a method that is not federated has no catalogue to speak of."""
    from dpfed_core.evaluation.catalogue_run import declared_catalogue_note, keeps_own_items
    from dpfed_core.methods import get_method

    def keeps(method: str, **params) -> bool:
        return keeps_own_items(get_method(method), RunConfig(method=method, epsilon=1.0, method_params=params))

    assert keeps("dp-gaussian") and keeps("dp-cooccurrence")
    assert not keeps("dp-popularity") and keeps("dp-popularity", local_blend=True)
    assert not keeps("dp-cooccurrence", local_blend=False) and not keeps("local")
    kept = declared_catalogue_note(3, 10, True)
    assert "shaped by its 3 items" in kept and "the data's 7 other items stay" in kept and "own model" in kept
    zero = declared_catalogue_note(9, 10, False)
    assert "the data's 1 other item stays its entities' own" in zero and "they score 0" in zero


@pytest.mark.parametrize("aggregation", ["secure", "none"])
def test_a_sites_model_on_a_dp_catalogue_masks_the_federation_to_the_names_it_holds(monkeypatch, aggregation):
    """On a DP-selected catalogue (released hash keys) every site's round 2 fits its model with the
    federation's parts limited to the item names it holds rows for (``known_only``); on a declared
    catalogue every shared name is public and nothing is masked. The default a small hold-out keeps is
    the method's own (``round2_default``)."""
    from dpfed_core.models import blend as blend_module

    calls = []
    real = blend_module.fit_site_model

    def spy(X, **kwargs):
        if kwargs.get("V_fed") is not None:  # round 2 with the federation's parts (not ``local``)
            calls.append((kwargs.get("known_only", False), kwargs.get("default_rule", "shrunk")))
        return real(X, **kwargs)

    monkeypatch.setattr(blend_module, "fit_site_model", spy)
    cfg = RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=3, simulation=True, aggregation=aggregation, seed=1)
    _, res = run_method(_data(), cfg)
    assert len(res.extra["catalogue"]) > 0 and calls == [(True, "shrunk")] * 3
    calls.clear()
    run_method(_data(item_source="declared"), cfg.replace(prototype_params={"round2_default": "alone"}))
    assert calls == [(False, "alone")] * 3


@pytest.mark.parametrize("streamed", [False, True])
def test_a_summable_round_one_reads_each_sites_rows_without_its_validation_entries(monkeypatch, streamed):
    """Round 1 of a summable method releases from each site's rows less the entries its round 2 validates
    on, whether the training data comes as a matrix or as a split's rows read a block at a time."""
    from dpfed_core.federation import summable_protocol
    from dpfed_core.federation.protocol import FederatedRecommender

    seen = []
    real = summable_protocol.fit_summable

    def spy(method, released, *args, **kwargs):
        seen.append([released[h] for h in range(len(released))])
        return real(method, released, *args, **kwargs)

    monkeypatch.setattr(summable_protocol, "fit_summable", spy)
    ds = _data(item_source="declared")
    split = make_split(ds, RunConfig(seed=0))
    X = split.rows if streamed else split.train
    FederatedRecommender("dp-popularity", rank=2, epsilon=1.0, simulation=True, aggregation="secure",
                         random_state=0).fit(ds, X)
    assert len(seen) == 1
    for X_h, sl in zip(seen[0], ds.entity_slices()):
        want = blend.released_rows(split.train[sl])
        assert X_h.nnz == want.nnz < split.train[sl].nnz and (X_h != want).nnz == 0


def _round_two_features(monkeypatch, ds, cfg):
    """(the item features each site's round 2 was fitted with beside the federation's parts, the run)."""
    calls = []
    real = blend.fit_site_model

    def spy(X, **kw):
        if kw.get("V_fed") is not None:
            calls.append(kw.get("features"))
        return real(X, **kw)

    monkeypatch.setattr(blend, "fit_site_model", spy)
    _, res = run_method(ds, cfg)
    return calls, res


def test_a_prototype_method_on_a_dp_catalogue_gives_each_site_its_public_feature_parts(monkeypatch):
    """The paper's method on a DP-selected catalogue fits each site's round 2 with the public item
    features, as ``local`` does, beside the broadcast factors (public inputs: the rows' own parts score
    the items the catalogue left out)."""
    ds = replace(_genres(n=600), item_source="data")
    cfg = RunConfig(method="dp-gaussian", epsilon=10.0, rank=2, k=4, simulation=True, aggregation="none", seed=0)
    calls, res = _round_two_features(monkeypatch, ds, cfg)
    assert 0 < len(res.extra["catalogue"]) < ds.n_items
    assert len(calls) == ds.n_entities and all(f is ds.item_features for f in calls)


@pytest.mark.parametrize("item_source", ["declared", "data"])
def test_a_summable_round_two_has_the_public_feature_parts_beside_the_federations(monkeypatch, item_source):
    """Public item features reach every site's round 2 of a summable method, on a declared catalogue
    and on a DP-selected one alike."""
    ds = replace(_genres(n=200), item_source=item_source)
    cfg = RunConfig(method="dp-cooccurrence", epsilon=3.0, rank=2, simulation=True, aggregation="secure", seed=0)
    calls, _ = _round_two_features(monkeypatch, ds, cfg)
    assert len(calls) == ds.n_entities and all(f is ds.item_features for f in calls)
