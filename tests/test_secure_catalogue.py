"""The federation-wide DP catalogue under secure aggregation.

Release-level checks run the production selection and look at the vector its noise is added to:
one user moves it by at most 1 in L2 (the recorded sensitivity: unit-norm weights over the user's
keys, coarse ``|`` levels included), every share's noise is σ of the
sum over the share divisor, the row's ρ is OpenDP's map of σ. Run-level checks: hospitals too small
for per-entity selection get a catalogue, the run's composed ε stays within the request, and every
message is shaped by public sizes (B buckets) or by the DP output (K released keys).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import example_method  # noqa: F401  (registers the example summable method: the basic-split path)
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.catalogue_run import uses_secure_catalogue
from dpfed_core.evaluation.experiments import run_method
from dpfed_core.privacy import catalogue as cat
from dpfed_core.privacy import noise
from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import PrivacyLedger
from tests.dp_audit import CapturingSampler, patch_sampler

NAMES = np.array([f"drug {j}" for j in range(12)], dtype=object)


def test_item_buckets_are_a_public_function_of_the_name_alone():
    a = cat.item_buckets(NAMES, 4096)
    b = cat.item_buckets(NAMES[::-1], 4096)[::-1]
    assert np.array_equal(a, b) and a.min() >= 0 and a.max() < 4096
    assert len(set(a.tolist())) == len(NAMES)  # 12 names, 4096 buckets: distinct here
    assert not np.array_equal(cat.item_buckets(NAMES, 4096), cat.item_buckets(NAMES, 4093))
    with pytest.raises(Exception, match="bucket count"):
        cat.item_buckets(NAMES, 1)


def _counts(monkeypatch, X, c=4, n_buckets=64, rho=0.05, delta=1e-5, divisor=1.0):
    log: list = []
    patch_sampler(monkeypatch, lambda s: CapturingSampler(s, log))
    ledger = PrivacyLedger(10.0, 1e-3)
    rel = cat.select_catalogue_secure(X, [slice(0, X.shape[0])], ["e"], NAMES, rho, delta,
                                      np.random.default_rng(0), ledger, divisor=divisor, n_buckets=n_buckets,
                                      max_items=c)
    monkeypatch.undo()
    (draw,) = log
    return draw, ledger.rows[0], rel


def test_secure_catalogue_weights_move_by_at_most_one_the_recorded_sensitivity(monkeypatch):
    g = np.random.default_rng(3)
    # 3 items per user (≤ c = 4), so no existing user is subsampled and only the newcomer moves the sum
    X = np.zeros((20, NAMES.size))
    for u in range(20):
        X[u, g.choice(NAMES.size, 3, replace=False)] = g.integers(1, 6, 3)
    X = sp.csr_matrix(X)
    (_, _, base, _), row, _ = _counts(monkeypatch, X)
    assert row.stage == "catalogue" and row.sensitivity == pytest.approx(1.0)
    for extra in (np.full(NAMES.size, 9.0), np.eye(NAMES.size)[0] * 50, np.r_[np.ones(2), np.zeros(10)]):
        (_, _, moved, _), _, _ = _counts(monkeypatch, sp.vstack([X, sp.csr_matrix(extra)]).tocsr())
        dist = float(np.linalg.norm(moved - base))
        # every user's weights have L2 norm exactly 1: the bound is attained by any newcomer
        assert dist == pytest.approx(1.0), (extra, dist)
    # unit weights would have moved the sum by √k: a user of one item adds the whole unit, not 1/√c
    (_, _, one, _), _, _ = _counts(monkeypatch, sp.vstack([X, sp.csr_matrix(np.eye(NAMES.size)[0])]).tocsr())
    assert float(np.linalg.norm(one - base)) == pytest.approx(1.0)


HIER = np.array([f"class {j % 3}|group {j % 2}|drug {j}" for j in range(12)], dtype=object)


def test_hierarchical_keys_count_in_the_bound_and_the_norm(monkeypatch):
    """With names a|b|c a user's keys are its items' full names and their coarse levels; the bound c
    and the unit norm apply to all of them together."""
    g = np.random.default_rng(5)
    X = np.zeros((30, HIER.size))
    for u in range(30):
        X[u, g.choice(HIER.size, 2, replace=False)] = 1.0
    X = sp.csr_matrix(X)
    log: list = []
    for extra in (None, np.ones(HIER.size), np.eye(HIER.size)[4]):
        rows = X if extra is None else sp.vstack([X, sp.csr_matrix(extra)]).tocsr()
        patch_sampler(monkeypatch, lambda s: CapturingSampler(s, log))
        ledger = PrivacyLedger(10.0, 1e-3)
        cat.select_catalogue_secure(rows, [slice(0, rows.shape[0])], ["e"], HIER, 0.05, 1e-5,
                                    np.random.default_rng(0), ledger, divisor=1.0, n_buckets=256, max_items=8,
                                    levels=3)
    base, many, one = (d[2] for d in log)
    assert float(np.linalg.norm(many - base)) == pytest.approx(1.0)
    assert float(np.linalg.norm(one - base)) == pytest.approx(1.0)
    # a user of one leaf holds 3 keys (the leaf, its group, its class), each at weight 1/√3
    moved = np.sort(np.abs(one - base)[np.abs(one - base) > 1e-12])
    assert moved == pytest.approx(np.full(3, 1 / math.sqrt(3)))


def test_item_levels_are_public_and_a_leaf_falls_back_to_its_deepest_released_level():
    lv = cat.item_bucket_levels(np.array(["a|b|c|d", "a|b|x", "flat", "a|b"], dtype=object), 4096, levels=3)
    assert lv.shape == (4, 4)
    assert np.array_equal(lv[:, 0], cat.item_buckets(["a|b|c|d", "a|b|x", "flat", "a|b"], 4096))
    # a|b|c|d: levels a|b|c, a|b, a (deepest first); a|b|x: a|b, a; flat: none; a|b: a
    assert (lv[0] >= 0).all() and lv[1, 3] == -1 and (lv[2, 1:] == -1).all() and lv[3, 2] == -1
    assert lv[0, 2] == lv[1, 1]  # the same prefix a|b has the same bucket whichever leaf it is read from
    assert lv[0, 3] == lv[1, 2] == lv[3, 1]  # and so has a
    # only a's bucket released: every hierarchical name maps to it, the flat one to nothing
    keys = np.array([lv[0, 3]])
    assert cat.item_keys(lv, keys, 4096).tolist() == [0, 0, -1, 0]
    # a|b|x's own bucket released as well: it keeps its own key, the others stay on a's
    keys = np.sort(np.array([lv[0, 3], lv[1, 0]]))
    own = int(np.searchsorted(keys, lv[1, 0]))
    assert cat.item_keys(lv, keys, 4096)[1] == own
    assert cat.item_keys(lv, keys, 4096)[0] == int(np.searchsorted(keys, lv[0, 3]))
    assert cat.item_bucket_levels(["a|b|c|d"], 4096, levels=0).shape == (1, 1)



def test_a_releases_items_are_every_item_of_a_released_key_the_first_key_included():
    """The items a federation-wide release shares (its ``columns``, what the run's note counts and its
    result lists) are those whose bucket was released, whatever the key's position — the first released
    key is position 0 — and the key matrix maps each of them, and no other, to its key."""
    keys = np.array([5, 9])
    item_key = np.array([0, -1, 1, 0, -1])  # items 0 and 3 in bucket 5 (key 0), item 2 in bucket 9
    rel = cat.SecureCatalogueRelease(keys, item_key, 16, 1.0, 1.0, 2.0)
    assert rel.columns.tolist() == [0, 2, 3]
    M = rel.key_matrix().toarray()
    assert M.tolist() == [[1, 0], [0, 0], [0, 1], [1, 0], [0, 0]]
    assert np.flatnonzero(M.sum(axis=1)).tolist() == rel.columns.tolist()

def test_secure_catalogue_share_noise_is_sigma_over_divisor_and_row_rho_is_opendps_map(monkeypatch):
    X = sp.csr_matrix(np.ones((5, NAMES.size)))
    (kind, scale, _, _), row, rel = _counts(monkeypatch, X, divisor=3.0, rho=0.02)
    assert kind == "gaussian" and scale == pytest.approx(row.noise_scale / 3.0)
    assert row.rho == pytest.approx(noise.gaussian_float_rho(row.noise_scale, 1.0, 64), rel=1e-12)
    assert row.rho <= 0.02 * (1 + 1e-9)
    assert row.epsilon == pytest.approx(noise.zcdp_epsilon(row.rho, row.delta), rel=1e-6)
    assert rel.sigma_sum == pytest.approx(rel.sigma / 3.0)  # one entity of a sum sized for 9


def test_a_share_on_the_secure_sums_grid_is_its_value_rounded_to_the_nearest_multiple():
    """Rounding a share to the public grid SecAgg+ carries is post-processing to the nearest multiple:
    within half a step of the share, never biased one way (a floor would shift the sum by H/2 steps)."""
    X = sp.csr_matrix(np.ones((5, NAMES.size)))
    bucket = cat.item_buckets(NAMES, 64)
    args = dict(divisor=3.0, n_buckets=64)

    def share(grid):
        return cat.secure_catalogue_share(X, bucket, 0.02, 1e-6, np.random.default_rng(4),
                                          PrivacyLedger(10.0, 1e-3).for_entity("a"), grid=grid, **args)[0]

    exact, step = share(None), 0.37
    rounded = share(step)
    assert np.allclose(rounded / step, np.round(rounded / step), atol=1e-9)
    assert np.abs(rounded - exact).max() <= step / 2 + 1e-12
    assert np.array_equal(rounded, np.round(exact / step) * step)


def _tiny_hospitals(n_entities=60, users=5, seed=0) -> FederatedDataset:
    """60 hospitals of 5 patients: every patient takes 3 of 6 common drugs (≈ 150 patients each) and
    1 of 32 rare ones (≈ 9 each); per-entity selection needs far more than 5 patients per item."""
    g = np.random.default_rng(seed)
    n = n_entities * users
    X = np.zeros((n, 38))
    for u in range(n):
        X[u, g.choice(6, 3, replace=False)] = 1.0
        X[u, 6 + g.integers(32)] = 1.0
    labels = np.repeat([f"h{h:02d}" for h in range(n_entities)], users)
    return FederatedDataset.from_parts(sp.csr_matrix(X), labels, item_names=np.array([f"d{j}" for j in range(38)]),
                                       value_kind="binary", value_max=1.0, name="tiny hospitals")


@pytest.mark.parametrize("method", ["dp-cooccurrence", "dp-popularity", "dp-als", example_method.NAME])
@pytest.mark.parametrize("epsilon, delta", [(0.3, 1e-6), (1.0, 1e-5), (3.0, 1e-7)])
def test_the_catalogue_and_the_method_share_the_runs_budget_and_no_more(method, epsilon, delta):
    """The selection takes its share of ρ (and of δ on its row); the method gets the rest — as the ε
    whose conversion is the rest of ρ when every release of the method is a Gaussian recording its ρ,
    otherwise as what basic composition leaves of (ε, δ): the selection's (ε, δ) plus the method's
    never exceed the run's, on ε and on δ alike."""
    from dpfed_core.evaluation.catalogue_run import secure_catalogue_budget
    from dpfed_core.federation.protocol import method_class

    cfg = RunConfig(method=method, epsilon=epsilon, delta=delta, aggregation="secure")
    rho_sel, row_delta, rest = secure_catalogue_budget(cfg)
    rho_total = noise.zcdp_rho_for_epsilon(epsilon, delta)
    assert rho_sel == pytest.approx(rho_total * cat.SECURE_CATALOGUE_RHO_SHARE) and 0 < row_delta < delta
    if getattr(method_class(method), "zcdp_budget", False):
        assert rest.delta == delta
        assert rho_sel + noise.zcdp_rho_for_epsilon(rest.epsilon, rest.delta) <= rho_total * (1 + 1e-9)
    else:
        assert rest.epsilon + noise.zcdp_epsilon(rho_sel, row_delta) <= epsilon * (1 + 1e-12)
        assert rest.delta + row_delta <= delta * (1 + 1e-12) and rest.delta > 0


@pytest.mark.parametrize("method", ["dp-cooccurrence", "dp-popularity", "dp-als", example_method.NAME])
def test_the_coalition_guarantee_of_a_secure_run_counts_the_catalogues_share(method):
    """Against the server colluding with every other entity only an entity's own shares protect it —
    the catalogue's share as much as the method's: a zCDP method's coalition ε is the conversion of
    (H − d)·Σρ over all its rows, the selection's included (so the same as with the catalogue
    declared: the selection takes a share of the same ρ), never the method's rows alone."""
    from dpfed_core.federation.protocol import method_class

    ds = _tiny_hospitals()
    cfg = RunConfig(method=method, epsilon=1.0, delta=1e-5, aggregation="secure", seed=0, simulation=True,
                    mode="zero", rank=2)
    doc, res = run_method(ds, cfg)
    trust = doc["privacy"]["trust"]
    assert res.ledger.simulation  # the run's whole ledger, the selection's rows first, says its noise was the seed's
    coal = trust["against_server_and_other_entities"]["epsilon"]
    H = ds.n_entities
    rows = [r for r in res.ledger.rows if r.entity == ds.entity_names[0]]
    (sel,) = [r for r in rows if r.stage == "catalogue"]
    rest = [r for r in rows if r.stage != "catalogue"]
    assert rest and coal > noise.zcdp_epsilon(H * sel.rho, sel.delta) > trust["against_server"]["epsilon"]
    if getattr(method_class(method), "zcdp_budget", False):
        assert coal == pytest.approx(noise.zcdp_epsilon(H * sum(r.rho for r in rows), cfg.delta), rel=1e-9)
        assert coal > 1.2 * noise.zcdp_epsilon(H * sum(r.rho for r in rest), cfg.delta)  # not the method's alone
        from dataclasses import replace

        d_doc, _ = run_method(replace(ds, item_source="declared"), cfg)
        d_coal = d_doc["privacy"]["trust"]["against_server_and_other_entities"]["epsilon"]
        assert "catalogue" not in {r["stage"] for r in d_doc["privacy"]["ledger"]}
        assert coal == pytest.approx(d_coal, rel=1e-3)
    # without secure aggregation the server sees every release: one guarantee, the whole run's
    n_doc, n_res = run_method(ds, cfg.replace(aggregation="none"))
    n_trust = n_doc["privacy"]["trust"]
    assert "catalogue" in {r.stage for r in n_res.ledger.rows}
    assert n_trust["against_server_and_other_entities"] == n_trust["against_server"]
    assert n_trust["against_server"]["epsilon"] == pytest.approx(n_doc["privacy"]["epsilon"], rel=1e-12)


@pytest.mark.parametrize("method", ["dp-cooccurrence", "dp-popularity", example_method.NAME])
def test_small_hospitals_get_a_catalogue_under_secure_aggregation_and_the_run_stays_within_epsilon(method):
    ds = _tiny_hospitals()
    cfg = RunConfig(method=method, epsilon=1.0, delta=1e-5, aggregation="secure", seed=0, simulation=True,
                    mode="zero", rank=2)
    assert uses_secure_catalogue(ds, cfg)
    doc, res = run_method(ds, cfg)
    kept = set(np.asarray(res.extra["catalogue"]).tolist())
    assert set(range(6)) <= kept, kept  # the 6 common drugs pass
    assert len(kept) < 20  # rare drugs (≈ 7 patients each) stay out
    eps, dlt = res.ledger.guarantee()
    assert eps <= 1.0 * (1 + 1e-9) and dlt <= 1e-5 * (1 + 1e-9)
    stages = {r.stage for r in res.ledger.rows}
    assert "catalogue" in stages and len(stages) >= 2
    cat_msgs = [m for m in res.messages if m.content.startswith("catalogue")]
    up = [m for m in cat_msgs if m.receiver == "server"]
    down = [m for m in cat_msgs if m.sender == "server"]
    assert len(up) == len(down) == ds.n_entities
    assert {m.shape for m in up} == {(cat.SECURE_CATALOGUE_BUCKETS,)}  # public B, whatever the data
    assert {m.shape for m in down} == {(res.extra["catalogue_keys"],)}
    outside = np.setdiff1d(np.arange(ds.n_items), res.extra["catalogue"])
    assert np.all(res.V[outside] == 0)  # the server knows nothing of unreleased items
    assert not [w for w in doc["warnings"] if w["code"] == "empty-catalogue"]
    # without secure aggregation every hospital's histogram carries the full σ: the sum is √H times
    # noisier, so it keeps at most the common drugs, fewer than under secure aggregation
    doc_none, res_none = run_method(ds, cfg.replace(aggregation="none"))
    kept_none = set(np.asarray(res_none.extra["catalogue"]).tolist())
    assert kept_none <= set(range(6)) and len(kept_none) < len(kept)
    assert bool(kept_none) != bool([w for w in doc_none["warnings"] if w["code"] == "empty-catalogue"])


def test_items_sharing_a_released_bucket_share_one_key_and_one_row_of_v():
    ds = _tiny_hospitals()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5, aggregation="secure", seed=1,
                    simulation=True, mode="zero")
    _, res = run_method(ds, cfg)
    buckets = cat.item_buckets(ds.item_names, cat.SECURE_CATALOGUE_BUCKETS)
    kept = np.asarray(res.extra["catalogue"])
    for b in np.unique(buckets[kept]):
        rows = res.V[kept[buckets[kept] == b]]
        assert np.all(rows == rows[0])


def test_a_prototype_method_or_one_entity_keeps_per_entity_selection():
    ds = _tiny_hospitals(n_entities=2)
    assert not uses_secure_catalogue(ds, RunConfig(method="dp-gaussian", aggregation="secure"))
    assert not uses_secure_catalogue(ds, RunConfig(method="dp-popularity", aggregation="none"))
    assert not uses_secure_catalogue(ds, RunConfig(method="dp-popularity", aggregation="secure", max_dropouts=1))
    assert uses_secure_catalogue(ds, RunConfig(method="dp-popularity", aggregation="secure"))


def test_the_in_process_selection_is_the_sum_of_the_per_entity_shares_a_node_computes():
    """A deployment node runs :func:`cat.secure_catalogue_share` on its own rows and its own stream
    (``catalogue_streams(config, H)[h]``) and the server :func:`cat.secure_catalogue_keys` on the sum:
    the in-process selection is exactly that, entity by entity, so the two runs release the same keys."""
    from dpfed_core.evaluation.catalogue_run import catalogue_streams, secure_catalogue_budget, secure_catalogue_divisor
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.federation.summable import GRID

    ds = _tiny_hospitals(n_entities=6, users=40)
    cfg = RunConfig(method="dp-popularity", epsilon=2.0, delta=1e-5, aggregation="secure", seed=3, simulation=True)
    X = make_split(ds, cfg).train
    rho, dlt, _ = secure_catalogue_budget(cfg)
    div = secure_catalogue_divisor(ds.n_entities, cfg)
    rel = cat.select_catalogue_secure(X, ds.entity_slices(), ds.entity_names, ds.item_names, rho, dlt,
                                      catalogue_streams(cfg, ds.n_entities), PrivacyLedger(2.0, 1e-5), divisor=div,
                                      grid=GRID)
    bucket = cat.item_buckets(ds.item_names, cat.SECURE_CATALOGUE_BUCKETS)
    # each entity alone, in reverse order: its share depends on its own rows and stream only
    shares = {h: cat.secure_catalogue_share(X[sl], bucket, rho, dlt, catalogue_streams(cfg, ds.n_entities)[h],
                                            PrivacyLedger(2.0, 1e-5).for_entity(str(h)), divisor=div, grid=GRID)[0]
              for h, sl in reversed(list(enumerate(ds.entity_slices())))}
    assert all(np.array_equal(v, np.round(v / GRID) * GRID) for v in shares.values())  # on SecAgg+'s grid
    keys, *_ = cat.secure_catalogue_keys(sum(shares[h] for h in range(ds.n_entities)), rho, ds.n_entities,
                                         divisor=div)
    assert keys.size > 0 and np.array_equal(keys, rel.keys)
    assert np.array_equal(cat.item_keys(bucket, keys, cat.SECURE_CATALOGUE_BUCKETS), rel.item_key)


def test_a_user_keeps_a_uniform_random_subset_of_c_of_their_items():
    X = sp.csr_matrix(np.ones((1, 8)))
    g = np.random.default_rng(0)
    kept = np.zeros(8)
    for _ in range(400):
        row = cat._bounded_rows(X, 2, g)
        assert row.nnz == 2 and np.all(row.data == 1.0)
        kept += row.toarray().ravel()
    # each item kept with probability c/k = 1/4: 100 of 400 times (sd ≈ 8.7)
    assert np.all(np.abs(kept - 100) < 40), kept


def test_a_coarse_level_is_hashed_apart_from_a_full_name_of_the_same_text():
    lv = cat.item_bucket_levels(np.array(["cardio", "cardio|shock"], dtype=object), 4096, levels=1)
    assert lv[1, 1] != lv[0, 0]  # the level "cardio" of cardio|shock is not the item "cardio"
    assert lv[1, 1] == cat._bucket_of("cardio", 4096, b"dpfed-catlevel")


def test_key_matrix_and_item_axis_map_every_item_of_a_released_key_key_zero_included():
    item_key = np.array([0, -1, 2, 0, 1])
    np.testing.assert_array_equal(cat.key_matrix(item_key, 3).toarray(),
                                  [[1, 0, 0], [0, 0, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0]])
    factors = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(cat.on_item_axis(factors, item_key),
                                  [[1, 2], [0, 0], [5, 6], [1, 2], [3, 4]])


def test_the_selections_parameters_outside_their_ranges_are_refused():
    with pytest.raises(Exception, match="needs δ > 0"):
        cat.selection_threshold(1.0, 1.0, 4)
    with pytest.raises(Exception, match="items per user must be ≥ 1"):
        cat.selection_threshold(1.0, 1e-6, 0)
    with pytest.raises(Exception, match="phantom share must be in"):
        cat.secure_threshold_z(4096, 0.5)
    assert cat.secure_threshold_z(4096, 0.01) == pytest.approx(2.3263, abs=1e-4)


def test_a_leaf_without_a_level_is_never_mapped_to_bucket_zero():
    bucket = np.array([[5, -1], [7, 0], [0, -1]])  # item 0: no coarse level; item 1: level in bucket 0
    assert cat.item_keys(bucket, np.array([0, 3]), 8).tolist() == [-1, 0, 0]


def test_a_share_needs_at_least_one_item_per_user():
    X = sp.csr_matrix(np.ones((3, NAMES.size)))
    with pytest.raises(Exception, match="items per user must be ≥ 1"):
        cat.secure_catalogue_share(X, cat.item_buckets(NAMES, 64), 0.05, 1e-5, np.random.default_rng(0),
                                   PrivacyLedger(10.0, 1e-3).for_entity("e"), divisor=1.0, n_buckets=64,
                                   max_items=0)


def test_per_entity_selection_releases_the_union_of_the_entities_items():
    X = sp.csr_matrix(np.r_[np.tile([1.0, 0, 0, 0], (300, 1)), np.tile([0, 1.0, 0, 0], (300, 1))])
    rel = cat.select_catalogue(X, [slice(0, 300), slice(300, 600)], ["a", "b"], 5.0, 1e-5,
                               np.random.default_rng(0), PrivacyLedger(10.0, 1e-3))
    assert rel.per_entity["a"].tolist() == [0] and rel.per_entity["b"].tolist() == [1]
    assert rel.columns.tolist() == [0, 1]


def test_a_user_counts_once_in_a_bucket_two_of_their_items_share():
    """A user's row over the public buckets is 0/1: two items hashed to one bucket (or sharing a `|`
    level) weigh as one, in the share and in the forecast that reads the same rows."""
    X = sp.csr_matrix(np.array([[2.0, 5.0, 1.0, 0.0], [0.0, 3.0, 0.0, 0.0]]))
    B = cat._bucket_rows(X, np.array([0, 0, 2, 1]), 4)
    assert B.toarray().tolist() == [[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]


def test_each_entity_enumerates_only_the_items_its_users_hold(monkeypatch):
    """The selection's δ covers an item an entity does not hold (it appears with probability ≤ δ/c):
    such items are never among the counts an entity's partition selection reads, so a column only
    another entity holds cannot be released by this one."""
    from dpfed_core.privacy import mechanisms as mech

    seen = []
    real = mech.partition_selection

    def spy(counts, *args, **kwargs):
        seen.append(np.asarray(counts).copy())
        return real(counts, *args, **kwargs)

    monkeypatch.setattr(mech, "partition_selection", spy)
    X = sp.csr_matrix(np.r_[np.tile([1.0, 1.0, 0, 0, 0], (50, 1)), np.tile([0, 0, 0, 1.0, 0], (50, 1))])
    rel = cat.select_catalogue(X, [slice(0, 50), slice(50, 100)], ["a", "b"], 1.0, 1e-5,
                               np.random.default_rng(0), PrivacyLedger(10.0, 1e-3))
    assert [c.tolist() for c in seen] == [[50, 50], [50]]
    assert set(rel.per_entity["a"]) <= {0, 1} and set(rel.per_entity["b"]) <= {3}


@pytest.mark.parametrize("eps, delta, c", [(1.0, 1e-3, 4), (0.5, 1e-6, 1), (3.0, 1e-5, 16)])
def test_the_per_entity_selection_rows_state_the_map_at_the_threshold_the_release_reports(eps, delta, c):
    """Each entity's selection row is OpenDP's map of the Laplace threshold at the very threshold the
    release reports (1 + K of :func:`selection_threshold`), and that map fits the (ε, δ) given: a
    threshold applied one below the reported one would state a larger δ than the release claims."""
    rng = np.random.default_rng(3)
    X = sp.csr_matrix((rng.random((400, 30)) < 0.3).astype(float))
    ledger = PrivacyLedger(10.0, 5e-3)
    rel = cat.select_catalogue(X, [slice(0, 200), slice(200, 400)], ["a", "b"], eps, delta,
                               np.random.default_rng(0), ledger, c)
    _, k = cat.selection_threshold(eps, delta, c)
    assert rel.threshold == 1 + k
    e_map, d_map = noise.laplace_threshold(float(c / eps), int(rel.threshold)).map((c, c, 1))
    assert [r.entity for r in ledger.rows] == ["a", "b"]
    for row in ledger.rows:
        assert row.epsilon == pytest.approx(e_map, rel=1e-12) and row.delta == pytest.approx(d_map, rel=1e-12)
        assert row.epsilon <= eps * (1 + 1e-9) and row.delta <= delta * (1 + 1e-9)


def test_the_catalogues_divisor_and_coalition_count_the_dropouts_and_the_most_exposed_entity():
    from dpfed_core.evaluation.catalogue_run import coalition_with_catalogue, secure_catalogue_divisor

    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5, aggregation="secure", max_dropouts=1)
    assert secure_catalogue_divisor(5, cfg) == 2.0  # √(H − d)
    assert secure_catalogue_divisor(5, cfg.replace(aggregation="none")) == 1.0
    ledger = PrivacyLedger(10.0, 1e-3)
    for entity, rhos in (("a", [0.01, 0.01]), ("b", [0.05]), ("c", [0.001])):
        for rho in rhos:
            ledger.for_entity(entity).spend("s", "Gaussian", 0.1, 1e-7, rho=rho)
    assert coalition_with_catalogue(cfg, 5, 1.0, ledger) == pytest.approx(noise.zcdp_epsilon(4 * 0.05, 1e-5),
                                                                          rel=1e-12)


def test_the_catalogue_note_states_the_keys_kept_of_the_public_buckets_and_the_items_they_cover():
    from dpfed_core.evaluation.catalogue_run import secure_catalogue_note

    note = secure_catalogue_note(7, 3.25, 1.4, 30, 500)
    assert f"kept 7 of {cat.SECURE_CATALOGUE_BUCKETS} public hash buckets" in note
    assert "noisy sum of user weights ≥ 3.25" in note and "30 of the data's 500 items" in note
    assert "under secure aggregation" in note
    assert "without secure aggregation" in secure_catalogue_note(7, 3.25, 1.4, 30, 500, secure=False)


def test_the_selections_public_parameters_are_refused_at_their_bounds_and_accepted_inside():
    """ε = 0 and ε = ∞ have no selection threshold, ρ = 0 and ρ = ∞ no secure-sum σ (∞ would be a sum
    without noise): each is refused naming the control. One item per user and two buckets are the
    smallest settings and are accepted; fewer are refused."""
    for eps in (0.0, math.inf, math.nan):
        with pytest.raises(ConfigError, match="finite ε > 0") as exc:
            cat.selection_threshold(eps, 1e-6, 5)
        assert exc.value.param == "epsilon"
    b, k = cat.selection_threshold(1.0, 1e-6, 1)
    assert b == 1.0 and k >= 1 and cat.new_item_release_probability(b, k) <= 1e-6
    for rho in (0.0, math.inf):
        with pytest.raises(ConfigError, match="finite ρ > 0") as exc:
            cat.secure_catalogue_threshold(rho, 3, divisor=1.0)
        assert exc.value.param == "epsilon"
    assert cat.secure_catalogue_threshold(0.1, 3, divisor=1.0, n_buckets=2)[0] > 0
    X = sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 1.0]]))
    ledger = PrivacyLedger(10.0, 1e-3).for_entity("A")
    share, _ = cat.secure_catalogue_share(X, cat.item_buckets(["x", "y"], 2), 0.1, 1e-6, np.random.default_rng(0),
                                          ledger, divisor=1.0, n_buckets=2, max_items=1)
    assert share.shape == (2,)
    with pytest.raises(ConfigError, match="items per user must be ≥ 1"):
        cat.secure_catalogue_share(X, cat.item_buckets(["x", "y"], 2), 0.1, 1e-6, np.random.default_rng(0),
                                   ledger, divisor=1.0, n_buckets=2, max_items=0)
    with pytest.raises(ConfigError, match="bucket count must be ≥ 2") as exc:
        cat.item_buckets(["x", "y"], 1)
    assert exc.value.param == "catalogue_buckets"
