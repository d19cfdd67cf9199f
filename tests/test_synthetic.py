"""The paper §5.1 Poisson generator and the clinic generator: shapes, determinism, finiteness."""
from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.data.synthetic import PAPER, CLINIC_ITEMS, REGIONS, entity_sizes, make_clinic, make_poisson


def test_small_shapes_and_kind():
    ds = make_poisson(500, 60, 5, rank=4, density=0.1, rng=np.random.default_rng(0))
    assert ds.X.shape == (500, 60) and sp.isspmatrix_csr(ds.X)
    assert ds.n_entities == 5 and ds.entity_names[0] == "entity 01"
    assert ds.value_kind == "counts" and ds.value_max == 10
    assert np.all(np.isfinite(ds.X.data)) and ds.X.data.min() >= 1 and ds.X.max() <= 10
    assert abs(ds.X.nnz / (500 * 60) - 0.1) < 0.02  # the calibrated offset hits the target density


def test_deterministic_in_rng_and_seed_sensitive():
    a = make_poisson(300, 40, 3, rng=np.random.default_rng(7))
    b = make_poisson(300, 40, 3, rng=np.random.default_rng(7))
    c = make_poisson(300, 40, 3, rng=np.random.default_rng(8))
    assert (a.X != b.X).nnz == 0 and a.entity_names == b.entity_names
    assert (a.X != c.X).nnz > 0


def test_the_matrix_does_not_depend_on_the_chunk_it_is_drawn_in():
    """The CSR matrix is assembled chunk by chunk (row counts, column indices, values): any chunk size
    gives the same canonical matrix as one chunk, each row holding its own non-zeros."""
    one = make_poisson(257, 31, 4, rank=3, density=0.2, rng=np.random.default_rng(3), chunk_rows=10_000)
    for chunk in (1, 7, 64):
        other = make_poisson(257, 31, 4, rank=3, density=0.2, rng=np.random.default_rng(3), chunk_rows=chunk)
        assert other.X.has_canonical_format and other.X.indices.dtype == np.int32
        np.testing.assert_array_equal(other.X.indptr, one.X.indptr)
        np.testing.assert_array_equal(other.X.indices, one.X.indices)
        np.testing.assert_array_equal(other.X.data, one.X.data)
    assert np.array_equal(np.diff(one.X.indptr), np.count_nonzero(one.X.toarray(), axis=1))


def test_entity_effects_make_entities_differ():
    ds, f = make_poisson(3000, 80, 3, rank=5, entity_effect=0.6, entity_item_sd=0.5,
                         rng=np.random.default_rng(1), return_factors=True)
    means = np.vstack([np.asarray(ds.X[sl].mean(axis=0)).ravel() for sl in ds.entity_slices()])
    # item profiles of different entities differ far more than sampling noise would explain
    assert np.corrcoef(means)[0, 1] < 0.9
    assert f["U"].shape == (3000, 5) and f["V"].shape == (80, 5)
    iid = make_poisson(3000, 80, 3, rank=5, entity_effect=0.0, entity_item_sd=0.0, rng=np.random.default_rng(1))
    m2 = np.vstack([np.asarray(iid.X[sl].mean(axis=0)).ravel() for sl in iid.entity_slices()])
    assert np.corrcoef(m2)[0, 1] > 0.95


def test_sizes():
    g = np.random.default_rng(0)
    assert entity_sizes(10, 3, "uniform", g).tolist() == [4, 3, 3]
    v = entity_sizes(2000, 10, "varied", g)
    assert v.sum() == 2000 and v.max() > 1.5 * v.min()
    assert entity_sizes(10, 2, [1, 4], g).tolist() == [2, 8]
    with pytest.raises(ConfigError):
        entity_sizes(10, 2, "lumpy", g)


@pytest.mark.parametrize("kw, match", [
    ({"n_users": 0}, "n_users"), ({"density": 1.5}, "density"), ({"entity_effect": 1.0}, "entity_effect"),
    ({"n_entities": 50, "n_users": 10}, "entities need"), ({"value_max": 0}, "value_max"),
])  # fmt: skip
def test_bad_parameters(kw, match):
    with pytest.raises(ConfigError, match=match):
        make_poisson(**{"n_users": 100, "n_items": 10, "n_entities": 2, **kw}, rng=0)


def test_paper_size_fast_sparse_finite():
    """The paper's 100,000 × 500, ℓ = 100, 10 entities: the literal N(0,1) factors would overflow."""
    t0 = time.perf_counter()
    ds = make_poisson(**PAPER, rng=np.random.default_rng(0))
    elapsed = time.perf_counter() - t0
    assert ds.X.shape == (100_000, 500) and ds.n_entities == 10
    assert np.bincount(ds.entity_of_user).tolist() == [10_000] * 10
    assert np.all(np.isfinite(ds.X.data)) and ds.X.max() <= ds.value_max
    assert 0.03 < ds.X.nnz / 5e7 < 0.07  # sparse (default density 5 %)
    # ~2–3 s on an idle 2-core machine; the bound only catches a pathological slowdown on a busy one
    assert elapsed < 30, f"paper-size generation took {elapsed:.1f}s"


def test_clinic_generator():
    df = make_clinic(np.random.default_rng(3), n_hospitals=8, n_patients=400, min_hospital=30)
    assert list(df.columns) == ["patient_id", "item", "count", "hospital", "region"]
    assert df["hospital"].nunique() == 8 and set(df["region"]) <= set(REGIONS)
    assert set(df["item"]) <= set(CLINIC_ITEMS) and df["count"].between(1, 20).all()
    assert (df.groupby("patient_id")["hospital"].nunique() == 1).all()  # one hospital per patient
    again = make_clinic(np.random.default_rng(3), n_hospitals=8, n_patients=400, min_hospital=30)
    assert df.equals(again)
    with pytest.raises(ConfigError):
        make_clinic(0, n_hospitals=8, n_patients=100, min_hospital=30)


def test_the_exceedance_note_counts_counts_strictly_above_the_bound():
    ds = make_poisson(300, 30, 3, density=0.3, value_max=2.0, clip=False, rng=4)
    over = int((ds.X.data > 2.0).sum())
    assert 0 < over < int((ds.X.data >= 2.0).sum())
    assert any(n.startswith(f"{over} counts exceeded the declared bound 2") and "they are kept" in n
               for n in ds.notes)
    clipped = make_poisson(300, 30, 3, density=0.3, value_max=2.0, rng=4)
    assert clipped.X.max() == 2.0 and any(n.startswith(f"{over} counts exceeded") and "clipped" in n
                                          for n in clipped.notes)


def test_as_many_entities_as_users_gives_each_entity_one_user():
    ds = make_poisson(3, 5, 3, sizes="uniform", rng=0)
    assert [r["users"] for r in ds.summary()] == [1, 1, 1]
    with pytest.raises(ConfigError, match="3 entities need at least as many users"):
        make_poisson(2, 5, 3, rng=0)


def test_an_int_seed_reproduces_the_data_and_another_seed_or_none_draws_other_data():
    a, b, c = (make_poisson(200, 30, 2, density=0.2, rng=s) for s in (5, 5, 6))
    assert (a.X != b.X).nnz == 0 and (a.X != c.X).nnz > 0
    fresh = make_poisson(200, 30, 2, density=0.2, rng=None)  # no seed: OS entropy, not an error
    assert fresh.X.shape == (200, 30)
    assert make_clinic(4, n_hospitals=6, n_patients=200).equals(make_clinic(4, n_hospitals=6, n_patients=200))
    assert not make_clinic(4, n_hospitals=6, n_patients=200).equals(make_clinic(5, n_hospitals=6, n_patients=200))
    with pytest.raises(ConfigError, match="rng must be"):
        make_poisson(20, 5, 2, rng="7")


def test_varied_sizes_round_floored_log_normal_weights_by_largest_remainders():
    """Each weight is exp(N(0, 0.6²)) floored at 0.3 (the same draws from the same generator); the users
    left after flooring go one each to the largest remainders."""
    for seed in range(5):
        sizes = entity_sizes(1000, 40, "varied", np.random.default_rng(seed))
        w = np.maximum(np.exp(np.random.default_rng(seed).normal(0.0, 0.6, 40)), 0.3)
        raw = w / w.sum() * 1000
        assert sizes.sum() == 1000
        assert np.all((sizes == np.floor(raw)) | (sizes == np.floor(raw) + 1))
        extra = sizes - np.floor(raw)
        assert extra.sum() == 1000 - np.floor(raw).sum()
        assert (raw - np.floor(raw))[extra == 1].min() >= (raw - np.floor(raw))[extra == 0].max()
    assert entity_sizes(10, 3, [1, 2, 3], np.random.default_rng(0)).tolist() == [2, 3, 5]


@pytest.mark.parametrize("weights", [[1, 2, 3], [1, 0], [1, -1], [1, float("nan")], [1, float("inf")]])
def test_weights_of_another_length_or_not_all_positive_and_finite_are_refused(weights):
    with pytest.raises(ConfigError, match="sizes must be 2 positive numbers"):
        entity_sizes(10, 2, weights, np.random.default_rng(0))


@pytest.mark.parametrize("kw, match", [
    ({"rank": 0}, "rank must be a positive whole number"), ({"rank": True}, "rank must be a positive whole number"),
    ({"n_items": 2.0}, "n_items must be"), ({"density": 0.0}, "density"), ({"density": 1.0}, "density"),
    ({"entity_effect": -0.1}, "entity_effect"), ({"item_sd": -0.1}, "standard deviations"),
    ({"interaction_sd": -1.0}, "standard deviations"), ({"entity_item_sd": -0.5}, "standard deviations"),
    ({"value_max": float("inf")}, "value_max"), ({"value_max": float("nan")}, "value_max"),
    ({"value_max": -1.0}, "value_max"),
])  # fmt: skip
def test_parameters_at_or_beyond_their_limits_are_refused_by_name(kw, match):
    with pytest.raises(ConfigError, match=match):
        make_poisson(**{"n_users": 100, "n_items": 10, "n_entities": 2, **kw}, rng=0)


def test_the_interaction_term_has_the_stated_sd_whatever_the_rank_and_the_entity_effect():
    """sd(u·v) = interaction_sd for any ℓ and ρ: the factors' variance is interaction_sd / √ℓ, and an
    entity's share of the user variance is taken out of it, not added to it."""
    for rank, rho in ((4, 0.0), (64, 0.0), (16, 0.5)):
        _, f = make_poisson(4000, 120, 4, rank=rank, interaction_sd=1.5, entity_effect=rho, sizes="uniform",
                            rng=np.random.default_rng(rank), return_factors=True)
        assert abs(float(np.std(f["U"] @ f["V"].T)) / 1.5 - 1) < 0.1
        assert abs(float(np.var(f["U"])) / (1.5 / np.sqrt(rank)) - 1) < 0.1


def test_counts_are_poisson_at_the_rates_of_the_returned_factors():
    """Every part of the log rate counts: summed over an entity's users, each item's counts match the sum of
    exp(b + a_j + e_hj + u_i·v_j) over them (unclipped: the bound is far above any count)."""
    ds, f = make_poisson(6000, 25, 3, rank=3, density=0.4, item_sd=1.0, entity_item_sd=1.0, value_max=1e9,
                         rng=np.random.default_rng(11), return_factors=True)
    assert ds.generated and f["entity"].tolist() == ds.entity_of_user.tolist()
    eta = f["b"] + f["a"] + f["E"][f["entity"]] + f["U"] @ f["V"].T
    rate = np.exp(np.minimum(eta, 30.0))
    X = ds.X.toarray()
    for h in range(3):
        rows = f["entity"] == h
        got, want = X[rows].sum(axis=0), rate[rows].sum(axis=0)
        big = want > 400
        assert big.sum() >= 10
        np.testing.assert_allclose(got[big], want[big], rtol=0.15)
    _, paper = make_poisson(300, 20, 2, density=None, rng=0, return_factors=True)
    assert paper["b"] == 0.0  # no density target: the paper's literal link


def test_the_density_target_is_met_with_strong_entity_item_offsets():
    ds = make_poisson(3000, 80, 4, rank=3, density=0.1, entity_item_sd=2.0, rng=np.random.default_rng(2))
    assert abs(ds.X.nnz / (3000 * 80) - 0.1) < 0.01


def test_a_clinic_has_every_patient_asked_for_one_preferred_item_per_substitute_group_and_hospitals_from_01():
    from dpfed_core.data.synthetic import SUBSTITUTES

    df = make_clinic(np.random.default_rng(1), n_hospitals=6, n_patients=360, min_hospital=40, off_formulary=0.0)
    assert df["patient_id"].nunique() > 350 and df["patient_id"].max() <= "P00360"
    assert sorted(df["hospital"].unique()) == [f"hospital 0{h}" for h in range(1, 7)]
    assert (df.groupby("hospital")["patient_id"].nunique() >= 39).all()
    for group, _ in SUBSTITUTES:  # off formulary at rate 0: each hospital uses one item of each group
        used = df[df["item"].isin(group)].groupby("hospital")["item"].nunique()
        assert (used <= 1).all(), group
    # with the others at a rate of their own, the substitutes of a used item are used too
    both = make_clinic(np.random.default_rng(1), n_hospitals=6, n_patients=360, min_hospital=40, off_formulary=1.0)
    assert both[both["item"].isin(("troponin I", "troponin T"))].groupby("hospital")["item"].nunique().max() == 2
    with pytest.raises(ConfigError, match="≥ 2 hospitals"):
        make_clinic(0, n_hospitals=1, n_patients=300, min_hospital=30)


def test_substitutes_share_their_leaders_rates_and_hospital_sizes_round_by_largest_remainders():
    from dpfed_core.data.synthetic import SUBSTITUTES

    n_h, n, floor = 6, 1500, 50
    df = make_clinic(np.random.default_rng(9), n_hospitals=n_h, n_patients=n, min_hospital=floor, off_formulary=1.0,
                     habit_sd=0.0)
    totals = df.groupby("item")["count"].sum()
    for group, _ in SUBSTITUTES:  # every item of a group at full rate: each as frequent as its leader
        lead = totals.get(group[0], 0)
        if lead > 300:
            for other in group[1:]:
                assert 0.75 < totals.get(other, 0) / lead < 1.33, (group, other)
    # hospital sizes: the floor plus the rest split by log-normal weights (the generator's first draws),
    # rounded by largest remainders; patients are numbered hospital by hospital
    w = np.maximum(np.exp(np.random.default_rng(9).normal(0.0, 0.7, n_h)), 1e-3)
    raw = w / w.sum() * (n - n_h * floor)
    sizes = np.floor(raw).astype(int)
    sizes[np.argsort(-(raw - sizes), kind="stable")[: n - n_h * floor - sizes.sum()]] += 1
    ends = np.cumsum(sizes + floor)
    number = df["patient_id"].str[1:].astype(int)
    for h in range(n_h):
        mine = number[df["hospital"] == f"hospital {h + 1:02d}"]
        assert mine.min() > (ends[h - 1] if h else 0) and mine.max() <= ends[h]


def test_the_specialty_centres_are_the_largest_hospitals():
    """Specialties go to the largest hospitals: with three trauma centres, the three hospitals with the most
    stays give far more of them a tetanus toxoid (a trauma-only medication) than the other hospitals do."""
    df = make_clinic(np.random.default_rng(3), specialties=("trauma centre",) * 3)
    stays = df.groupby("hospital")["patient_id"].nunique().sort_values(ascending=False, kind="stable")
    tetanus = df[df["item"] == "tetanus toxoid"].groupby("hospital")["patient_id"].nunique()
    share = (tetanus / stays).fillna(0.0)[stays.index]
    assert share.iloc[:3].median() > 2 * share.iloc[3:].median()


def test_fewer_hospitals_than_specialties_take_the_first_ones_listed():
    """Fewer hospitals than specialties (two hospitals and three listed; five and the six defaults): each
    hospital takes one, the largest the first listed, and the generator does not fail."""
    listed = ("trauma centre", "stroke centre", "liver/GI unit")

    def clinic(specialties):
        return make_clinic(3, n_hospitals=2, n_patients=200, specialties=specialties)

    assert clinic(listed).equals(clinic(listed[:2])) and not clinic(listed).equals(clinic(listed[1:]))
    assert make_clinic(0, n_hospitals=5, n_patients=300).groupby("hospital").ngroups == 5


def test_a_reexport_holds_the_same_people_under_new_names_with_only_the_changes_asked_for():
    from dpfed_core.data.synthetic import reexport

    ds = make_poisson(200, 30, 3, density=0.2, rng=1)

    def people(d, prefix=""):
        return sorted((str(d.entity_names[d.entity_of_user[i]]).removeprefix(prefix),
                       tuple(sorted(zip(d.X[i].indices.tolist(), d.X[i].data.tolist())))) for i in range(d.n_users))

    same = reexport(ds, pseudonyms=True, reorder=True, relabel="site-", seed=2)
    assert (same.value_kind, same.value_max, list(same.item_ids)) == (ds.value_kind, ds.value_max, list(ds.item_ids))
    assert sorted(same.entity_names) == sorted(f"site-{e}" for e in ds.entity_names)
    assert not set(same.user_ids) & set(ds.user_ids) and people(same, "site-") == people(ds)
    # reordered under the same ids: each id keeps its own row
    moved = reexport(ds, reorder=True, seed=3)
    row_of = {u: i for i, u in enumerate(ds.user_ids)}
    assert list(moved.user_ids) != list(ds.user_ids)
    assert all((moved.X[i] != ds.X[row_of[u]]).nnz == 0 for i, u in enumerate(moved.user_ids))
    fewer = reexport(ds, remove=10, seed=4)
    assert fewer.X.nnz == ds.X.nnz - 10 and ((ds.X - fewer.X).toarray() >= 0).all()
    more = (reexport(ds, add=15, seed=4).X - ds.X).toarray()
    assert more.sum() == 15 and more.min() == 0.0
