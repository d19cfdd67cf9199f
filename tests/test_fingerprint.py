"""The keyed people fingerprint: every reading of the same file and every re-export of the same people
meets one account; a dataset holding a quarter of the stored people is charged to them however many
others are added; unrelated people are never taken for them; and the store alone answers no
membership question. Every store and key lives under tmp_path."""
from __future__ import annotations

import json
import os
import sqlite3
import stat

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.cli.main import main
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.loaders import load_data
from dpfed_core.privacy import fingerprint as fpm
from dpfed_core.privacy.fingerprint import (FingerprintKeyError, is_same_people, legacy_fingerprint, match_people,
                                            people_fingerprint)
from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused, PlannedRelease, dataset_key
from tests.toy import tied_design


def population(seed: int, n: int = 400, m: int = 600, per_user=(6, 30), base: int = 0) -> FederatedDataset:
    """Users with 6–30 items drawn with popularity skew from one public catalogue of m items."""
    rng = np.random.default_rng(seed)
    pop = 1.0 / np.arange(1, m + 1) ** 0.8
    pop /= pop.sum()
    rows, cols = [], []
    for u in range(n):
        k = int(rng.integers(*per_user))
        items = rng.choice(m, k, replace=False, p=pop)
        rows += [u] * k
        cols += items.tolist()
    vals = rng.integers(1, 6, len(rows)).astype(float)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, m))
    return FederatedDataset.from_parts(X, np.array(["A", "B", "C", "D"])[np.arange(n) % 4],
                                       user_ids=np.array([f"u{base + i}" for i in range(n)]),
                                       item_ids=np.array([f"i{j}" for j in range(m)]),
                                       value_kind="ratings", value_max=5.0, name=f"pop {seed}")


def rows_of(ds: FederatedDataset, rows, X=None, name="re-export") -> FederatedDataset:
    rows = np.asarray(rows)
    X = (ds.X.tocsr() if X is None else X)[rows]
    names = np.asarray(ds.entity_names, dtype=object)[ds.entity_of_user[rows]].astype(str)
    return FederatedDataset.from_parts(sp.csr_matrix(X), names, user_ids=np.array([f"p{i}" for i in range(len(rows))]),
                                       item_ids=ds.item_ids, value_kind=ds.value_kind, value_max=ds.value_max,
                                       name=name)


def mix(stored: FederatedDataset, share: float, others: FederatedDataset, times: float, seed: int = 1):
    """``share`` of the stored people (a random subsample) plus ``times`` as many others."""
    rng = np.random.default_rng(seed)
    keep = rng.choice(stored.n_users, int(share * stored.n_users), replace=False)
    extra = rng.choice(others.n_users, min(int(times * keep.size), others.n_users), replace=False)
    X = sp.vstack([stored.X.tocsr()[keep], others.X.tocsr()[extra]]).tocsr()
    names = np.r_[np.asarray(stored.entity_names, dtype=object)[stored.entity_of_user[keep]],
                  np.asarray(others.entity_names, dtype=object)[others.entity_of_user[extra]]].astype(str)
    order = rng.permutation(X.shape[0])
    return FederatedDataset.from_parts(X[order], names[order], user_ids=np.array([f"m{i}" for i in range(X.shape[0])]),
                                       item_ids=stored.item_ids, value_kind="ratings", value_max=5.0, name="mixed")


def run_plan(ds: FederatedDataset, eps: float) -> PlannedRelease:
    return PlannedRelease("run", "dp-gaussian", eps, 1e-6, {e: (eps, 1e-6) for e in ds.entity_names}, seed=0)


KEY = b"k" * 32
#: Where each family's bands sit in a fingerprint's keys (fingerprint.ALL_BANDS, in order).
ID_BANDS_AT = slice(2 * fpm.FP_BANDS, fpm.BANDS_OF_VERSION[fpm.SHAPE_FP_VERSION])
PROFILE_BANDS_AT = slice(fpm.BANDS_OF_VERSION[fpm.SHAPE_FP_VERSION], fpm.ALL_BANDS)


def assert_charged_to_the_capped_account(tmp_path, ds: FederatedDataset, other: FederatedDataset) -> None:
    """``ds`` capped at ε = 1 with 0.8 spent: ``other`` is its account and a 0.5 run of it is refused."""
    odo = BudgetOdometer(tmp_path / "capped.sqlite3")
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [run_plan(ds, 0.8)]).close()
    assert odo.identity(other).account == odo.account_key(ds)
    with pytest.raises(BudgetRefused):
        odo.reserve(other, [run_plan(other, 0.5)])


# ------------------------------------------------------------------------------ what is compared
def test_values_play_no_part_items_do():
    ds = population(0)
    X = ds.X.tocsr().copy()
    rng = np.random.default_rng(3)
    X.data = X.data + rng.choice([-1.0, 1.0], X.data.size) + 0.5  # every value moved, none to 0
    moved = rows_of(ds, np.arange(ds.n_users), X)
    implicit = rows_of(ds, np.arange(ds.n_users), (ds.X != 0).astype(float))
    for other in (moved, implicit):
        m = match_people(people_fingerprint(other, KEY), people_fingerprint(ds, KEY))
        assert m.contained == 1.0 and m.similarity == 1.0 and m.matched_new == ds.n_users
    # a tenth of each user's items swapped for others: no longer the same profile
    Y = ds.X.tolil()
    for u in range(ds.n_users):
        cols = Y.rows[u]
        k = max(1, len(cols) // 2)
        for c in list(cols)[:k]:
            Y[u, c] = 0
            Y[u, (c + 300) % ds.n_items] = 1.0
    m = match_people(people_fingerprint(rows_of(ds, np.arange(ds.n_users), Y.tocsr()), KEY),
                     people_fingerprint(ds, KEY))
    assert m.contained < 0.05


def test_every_user_is_found_again_even_among_near_identical_profiles():
    """sample:clinic has many patients with nearly the same items: a band key several stored users
    share must not hide any of them (a first-hit lookup found 93 %)."""
    from dpfed_core.data.synthetic import reexport

    ds = load_data("sample:clinic")
    other = reexport(ds, pseudonyms=True, reorder=True, relabel="site-", name="re")
    m = match_people(people_fingerprint(other, KEY), people_fingerprint(ds, KEY))
    fp = people_fingerprint(ds, KEY)
    assert m.contained == 1.0 and m.matched_new == m.matched_stored == fp.n_informative > 2000


def test_users_with_too_few_items_and_repeated_profiles_count_once():
    ds = population(0, n=50)
    X = ds.X.tolil()
    X[0, :] = 0
    X[0, 1] = 1.0
    X[0, 2] = 1.0                                         # two items: identifies no one
    X[2, :] = X[1, :]                                     # the same items as user 1
    fp = people_fingerprint(rows_of(ds, np.arange(50), X.tocsr()), KEY)
    assert fp.n_informative == 48
    # the item sets' and the shape's bands; the ids u0 … u49 are a counter, so no id band
    assert (fp.keys[0] == 0).all() and (fp.keys[2] == 0).all() and (fp.keys[1, :fpm.FP_BANDS] != 0).all()
    assert (fp.keys[:, ID_BANDS_AT] == 0).all()
    assert (fp.keys[2, ID_BANDS_AT] == 0).all() and (fp.keys[2, PROFILE_BANDS_AT] == 0).all()    # the repeat has no profile either, whatever its id
    # duplicating every user (under new pseudonyms) hides no one
    twice = rows_of(ds, np.r_[np.arange(50), np.arange(50)])
    m = match_people(people_fingerprint(twice, KEY), people_fingerprint(ds, KEY))
    assert m.contained == 1.0 and is_same_people(m)


# ------------------------------------------------------------------------------ containment
@pytest.mark.parametrize("share,times", [(1.0, 0), (0.5, 1), (0.5, 3), (0.25, 3), (0.25, 0), (0.3, 6)])
def test_a_subsample_mixed_with_others_is_charged_to_the_stored_people(share, times):
    stored, others = population(0), population(1, n=1200, base=10_000)
    m = match_people(people_fingerprint(mix(stored, share, others, times), KEY), people_fingerprint(stored, KEY))
    assert is_same_people(m)
    assert m.matched_stored == pytest.approx(share * stored.n_users, abs=3)


def test_the_containment_threshold_is_a_fifth():
    """Pinned: 25 % of the stored people diluted 3× are recognised, 15 % diluted 5× are not (a
    threshold of 0.1 or 0.3 would fail this)."""
    stored, others = population(0), population(1, n=1200, base=10_000)
    fps = people_fingerprint(stored, KEY)
    m25 = match_people(people_fingerprint(mix(stored, 0.25, others, 3), KEY), fps)
    m15 = match_people(people_fingerprint(mix(stored, 0.15, others, 5), KEY), fps)
    assert 0.2 <= m25.contained < 0.3 and is_same_people(m25)
    assert 0.1 < m15.contained < 0.2 and not is_same_people(m15)


def test_a_match_exactly_at_the_containment_threshold_is_the_same_people():
    """A fifth of the people matched, exactly, is already the same people (the threshold is
    inclusive): a strict comparison would let a re-read holding exactly 20 % of them start afresh."""
    from dpfed_core.privacy.fingerprint import CONTAINMENT_THRESHOLD, PeopleMatch
    at = PeopleMatch(similarity=0.1, matched_new=5, matched_stored=5, entity_map={},
                     contained=CONTAINMENT_THRESHOLD)
    below = PeopleMatch(similarity=0.1, matched_new=5, matched_stored=5, entity_map={},
                        contained=CONTAINMENT_THRESHOLD - 1e-9)
    assert is_same_people(at)
    assert not is_same_people(below)


def test_a_handful_of_stored_people_is_charged_to_them():
    """Releasing two stored people at a time must not escape the cap."""
    stored, others = population(0), population(1, n=1200, base=10_000)
    small = mix(stored, 0.005, others, 0)                  # two users, all of them stored
    m = match_people(people_fingerprint(small, KEY), people_fingerprint(stored, KEY))
    assert m.contained == 1.0 and m.matched_new == 2 and is_same_people(m)
    one = mix(stored, 0.0025, others, 0)
    assert is_same_people(match_people(people_fingerprint(one, KEY), people_fingerprint(stored, KEY)))


def test_a_pool_of_a_few_people_of_every_entity_is_mapped_onto_every_one_of_them():
    """One or two people of each of many stored entities pooled into one new entity: each stored entity
    holds a small share of the pool's matched people — one person is enough — and every one of them is
    charged."""
    rng = np.random.default_rng(3)
    base = population(0, n=840)
    many = FederatedDataset.from_parts(base.X, np.array([f"E{i:02d}" for i in range(21)])[np.arange(840) % 21],
                                       user_ids=base.user_ids, item_ids=base.item_ids, value_kind="ratings",
                                       value_max=5.0, name="21 entities")
    pick = np.concatenate([rng.choice(np.flatnonzero(many.entity_of_user == h), 1 + h % 2, replace=False)
                           for h in range(21)])
    pooled = rows_of(many, pick)
    pooled = FederatedDataset.from_parts(pooled.X, np.array(["all"] * pick.size), user_ids=pooled.user_ids,
                                         item_ids=pooled.item_ids, value_kind="ratings", value_max=5.0, name="pool")
    m = match_people(people_fingerprint(pooled, KEY), people_fingerprint(many, KEY))
    assert is_same_people(m) and sorted(m.entity_map["all"]) == list(many.entity_names)


def test_an_id_column_written_as_numbers_another_way_is_the_same_items():
    from dpfed_core.privacy.fingerprint import canonical_item_id

    assert {canonical_item_id(x) for x in ("242", "0242", "242.0", " 242 ", "2.42e2", 242)} == {"242"}
    assert canonical_item_id("2.5") == "2.5" and canonical_item_id("aspirin 5mg") == "aspirin 5mg"
    assert canonical_item_id("nan") == "nan" and canonical_item_id("0x10") == "0x10"
    ds = FederatedDataset.from_parts(population(0).X, population(0).entity_of_user,
                                     item_ids=np.array([str(j) for j in range(600)]), value_kind="ratings",
                                     value_max=5.0)
    padded = FederatedDataset.from_parts(ds.X, ds.entity_of_user, item_ids=np.array([f"{j:04d}.0" for j in range(600)]),
                                         value_kind="ratings", value_max=5.0)
    m = match_people(people_fingerprint(padded, KEY), people_fingerprint(ds, KEY))
    assert m.contained == 1.0 and is_same_people(m)


@pytest.mark.parametrize("seeds", [(0, 1), (2, 3), (4, 5)])
def test_unrelated_people_are_never_taken_for_the_stored_ones(seeds):
    a, b = population(seeds[0]), population(seeds[1], n=800, base=10_000)
    for x, y in ((a, b), (b, a)):
        m = match_people(people_fingerprint(x, KEY), people_fingerprint(y, KEY))
        assert not is_same_people(m) and m.contained < 0.05


def test_unrelated_halves_of_real_data_are_never_matched(shared_data):
    for spec in (str(shared_data / "ml-100k"), str(shared_data / "eicu-demo"), "sample:clinic"):
        ds = load_data(spec)
        perm = np.random.default_rng(0).permutation(ds.n_users)
        a, b = rows_of(ds, np.sort(perm[: ds.n_users // 2])), rows_of(ds, np.sort(perm[ds.n_users // 2:]))
        m = match_people(people_fingerprint(b, KEY), people_fingerprint(a, KEY))
        assert not is_same_people(m) and m.contained < 0.1, spec
        quarter = mix(a, 0.25, b, 3)
        m = match_people(people_fingerprint(quarter, KEY), people_fingerprint(a, KEY))
        assert is_same_people(m), spec


# ------------------------------------------------------------------------------ one account per reading
def _long_table(path):
    rng = np.random.default_rng(0)
    lines = ["user,item,rating,site,stars"]
    for u in range(120):
        for i in rng.choice(80, int(rng.integers(5, 15)), replace=False):
            r = int(rng.integers(1, 6))
            lines.append(f"u{u},item{i},{r},{'AB'[u % 2]},{6 - r}")
    u, i, r, site, _ = lines[1].split(",")
    lines.append(f"{u},{i},{6 - int(r) if int(r) != 3 else 1},{site},1")  # a repeated (user, item) row
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_reading_of_one_file_is_one_account(tmp_path):
    f = _long_table(tmp_path / "clinic.csv")
    base = dict(user_col="user", item_col="item", entity_col="site")
    readings = [dict(value_col="rating"), dict(value_col="rating", value_kind="implicit"),
                dict(value_col="rating", value_kind="counts", value_max=5), dict(value_col="rating", duplicates="mean"),
                dict(value_col="rating", value_max=10), dict(value_col="stars"), dict(value_kind="implicit")]
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    first = load_data(str(f), **base, **readings[0])
    odo.set_cap(first, 1.0, 1e-5)
    odo.reserve(first, [run_plan(first, 0.8)]).close()
    keys = {dataset_key(first)}
    for opts in readings[1:]:
        ds = load_data(str(f), **base, **opts)
        keys.add(dataset_key(ds))
        assert odo.identity(ds).account == odo.account_key(first), opts
        with pytest.raises(BudgetRefused):
            odo.reserve(ds, [run_plan(ds, 0.5)])
    assert len(keys) >= 4  # the readings really differ (values, duplicates rule, value column)


def test_a_table_read_with_its_user_and_item_columns_swapped_is_refused_naming_the_swap(tmp_path):
    """Read with its user and item columns swapped, a capped account's people are its "items": each would
    be protected as one item's column (the noise sized to one row), the people's cap never asked. A table
    of other people read the same way, and the right reading, are not refused."""
    from dpfed_core.errors import ConfigError

    stored, others = population(0), population(1, base=10_000)
    one = [FederatedDataset.from_parts(d.X.tocsr(), np.array(["A"] * d.n_users), user_ids=d.user_ids,
                                       item_ids=d.item_ids, value_kind="ratings", value_max=5.0, name=n)
           for d, n in ((stored, "patients"), (others, "others"))]

    def swapped(d: FederatedDataset, name: str) -> FederatedDataset:
        return FederatedDataset.from_parts(d.X.T.tocsr(), np.array(["A"] * d.n_items), user_ids=d.item_ids,
                                           item_ids=d.user_ids, value_kind="ratings", value_max=5.0, name=name)

    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    odo.set_cap(one[0], 1.0, 1e-5)
    with pytest.raises(ConfigError, match="patients read as items: its user and item columns look swapped.*"
                                          "people of the stored dataset 'patients'") as exc:
        odo.reserve(swapped(one[0], "patients read as items"), [run_plan(one[0], 0.5)])
    assert exc.value.param == "user_col"
    assert [d["name"] for d in odo.datasets()] == ["patients"]  # nothing registered
    odo.reserve(swapped(one[1], "others read as items"), [run_plan(one[1], 0.5)]).close()
    odo.reserve(one[0], [run_plan(one[0], 0.5)]).close()


def _flags(options: dict) -> list[str]:
    return [x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", str(v))]


def _capped_reading(f, store, first: dict) -> tuple[list[str], FederatedDataset]:
    """The CLI's common arguments for the long table ``f``, and its reading ``first`` after a cap of
    ε = 1 was set on it through the CLI and 0.8 of it spent."""
    common = ["--data", str(f), "--user-col", "user", "--entity-col", "site", "--entities-from-data",
              "--store", str(store)]
    assert main(["budget", "set-cap", *common, *_flags(first), "--epsilon", "1"]) == 0
    ds = load_data(str(f), user_col="user", entity_col="site", **first)
    BudgetOdometer(store).reserve(ds, [run_plan(ds, 0.8)]).close()
    return common, ds


def _refused_as_the_same_people(common: list[str], other: dict, capsys) -> None:
    capsys.readouterr()
    assert main(["run", *common, *_flags(other), "--method", "dp-popularity", "--aggregation", "none",
                 "--epsilon", "0.5"]) != 0
    err = capsys.readouterr().err
    assert "refused" in err and "same people" in err


def test_cli_value_kind_implicit_meets_the_cap(tmp_path, capsys):
    store = tmp_path / "cli.sqlite3"
    common, ratings = _capped_reading(_long_table(tmp_path / "clinic.csv"), store,
                                      {"item_col": "item", "value_col": "rating"})
    _refused_as_the_same_people(common, {"item_col": "item", "value_col": "rating", "value_kind": "implicit"}, capsys)
    assert len(BudgetOdometer(store).releases(ratings)) == 1


# ------------------------------------------------------------------------------ keyed: no membership oracle
def test_a_dry_run_and_budget_show_say_recognised_and_nothing_of_who_was_found_where(tmp_path, capsys):
    """Three known members and a probe record: the outputs that spend nothing must read the same
    whether the probe's person is in the stored data or not (no containment, no entity mapping)."""
    f = _long_table(tmp_path / "clinic.csv")
    lines = f.read_text().splitlines()
    store = tmp_path / "probe.sqlite3"
    cols = ["--user-col", "user", "--item-col", "item", "--value-col", "rating", "--entity-col", "site",
            "--entities-from-data", "--store", str(store)]
    assert main(["budget", "set-cap", "--data", str(f), *cols, "--epsilon", "1"]) == 0
    rows = {u: [ln for ln in lines[1:] if ln.split(",")[0] == u] for u in ("u0", "u2", "u4", "u1")}
    outside = [f"x9,item{i},3,B,3" for i in (70, 71, 72, 73, 74, 75, 76)]
    said = []
    for probe in (rows["u1"], outside):                    # u1 (site B) is stored; x9 is nobody
        p = tmp_path / "probe.csv"
        p.write_text("\n".join([lines[0], *rows["u0"], *rows["u2"], *rows["u4"],
                                 *probe]) + "\n")
        capsys.readouterr()
        assert main(["run", "--data", str(p), *cols, "--method", "dp-popularity", "--epsilon", "0.5",
                     "--dry-run"]) == 0
        assert main(["budget", "show", "--data", str(p), *cols]) == 0
        out = capsys.readouterr().out
        assert "same people as the stored dataset" in out
        said.append([ln for ln in out.splitlines() if "identity" in ln or "same people" in ln])
    assert said[0] == said[1]
    assert not any("containment" in ln or "→" in ln for ln in said[0])


def test_the_key_is_created_beside_the_store_private_and_named_in_the_store(tmp_path):
    odo = BudgetOdometer(tmp_path / "k.sqlite3")
    assert not odo.secret_path.exists()
    odo.register(population(0))
    p = odo.secret_path
    assert p == tmp_path / "k.sqlite3.fpkey" and p.stat().st_size == fpm.SECRET_BYTES
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    con = sqlite3.connect(odo.path)
    (kid,) = con.execute("SELECT value FROM meta WHERE name = 'fingerprint_key_id'").fetchone()
    blob = b"".join(r[0] for r in con.execute("SELECT keys FROM fingerprints"))
    con.close()
    assert kid == fpm.secret_id(p.read_bytes()) and p.read_bytes() not in blob
    assert p.read_bytes().hex() not in kid


def test_the_store_alone_cannot_say_who_is_in_it(tmp_path):
    """An adversary with the store file and people's records: recomputing their band keys with the
    public algorithm, the older unkeyed one or any key but the store's matches no one; the store's own
    key (kept apart, protected like the data) matches every member."""
    members, outsiders = population(0, n=200), population(1, n=200, base=10_000)
    odo = BudgetOdometer(tmp_path / "m.sqlite3")
    key = odo.register(members)
    con = sqlite3.connect(odo.path)
    n, bands, blob = con.execute("SELECT n_users, bands, keys FROM fingerprints WHERE dataset_key = ?",
                                 (key,)).fetchone()
    con.close()
    stored = np.frombuffer(blob, dtype="<u8").reshape(n, bands)
    stored_set = {(b, int(v)) for b in range(bands) for v in stored[:, b] if v}

    def hits(fp) -> np.ndarray:  # bands of each record found among the stored keys
        width = min(bands, fp.keys.shape[1])  # the older unkeyed algorithm has the item sets' bands only
        return np.array([sum((b, int(fp.keys[u, b])) in stored_set for b in range(width)) for u in range(fp.n_users)])

    for guess in (legacy_fingerprint(members), people_fingerprint(members, b"\0" * 32),
                  people_fingerprint(members, os.urandom(32)), people_fingerprint(members)):
        assert hits(guess).max() == 0
    secret = odo.secret_path.read_bytes()
    own = people_fingerprint(members, secret)
    assert (hits(own) == (own.keys != 0).sum(axis=1)).all() and (own.keys != 0).sum(axis=1).min() >= fpm.FP_BANDS
    # with the key, outsiders are told apart: none matches every band as each member does, and a chance
    # match of three bands (the key is drawn afresh each run) is rare
    out = people_fingerprint(outsiders, secret)
    out_hits = hits(out.item_sets_only())
    assert out_hits.max() < fpm.FP_BANDS and (out_hits >= 3).mean() <= 0.02
    # the shape's bands (how many users have each item) are shared more often by people drawn alike from
    # one catalogue, but never three with one stored person: no outsider is taken for a member
    m = match_people(out, people_fingerprint(members, secret))
    assert not is_same_people(m) and m.contained < 0.05


def test_a_missing_or_foreign_key_is_refused_never_replaced(tmp_path):
    a = population(0)
    odo = BudgetOdometer(tmp_path / "x.sqlite3")
    odo.set_cap(a, 1.0)
    odo.reserve(a, [run_plan(a, 0.9)]).close()
    account = odo.account_key(a)
    key_file = odo.secret_path
    saved = key_file.read_bytes()
    key_file.unlink()
    re = mix(a, 0.5, population(1, n=400, base=10_000), 1)
    with pytest.raises(FingerprintKeyError, match="missing"):
        BudgetOdometer(odo.path).reserve(re, [run_plan(re, 0.5)])
    assert not key_file.exists()                            # not silently recreated
    key_file.write_bytes(os.urandom(32))
    with pytest.raises(FingerprintKeyError, match="not the key"):
        BudgetOdometer(odo.path).register(re)
    key_file.write_bytes(saved[:5])
    with pytest.raises(FingerprintKeyError, match="damaged"):
        BudgetOdometer(odo.path).register(re)
    key_file.write_bytes(saved)
    with pytest.raises(BudgetRefused):
        BudgetOdometer(odo.path).reserve(re, [run_plan(re, 0.5)])
    # the known dataset still reads without any key (balances never need it)
    key_file.unlink()
    assert BudgetOdometer(odo.path).balance(account)[0].spent_epsilon == pytest.approx(0.9)


def test_cli_names_the_missing_key_in_one_line(tmp_path, capsys):
    store = tmp_path / "cli.sqlite3"
    assert main(["budget", "set-cap", "--data", "sample:clinic", "--store", str(store), "--epsilon", "2"]) == 0
    (tmp_path / "cli.sqlite3.fpkey").unlink()
    capsys.readouterr()
    assert main(["budget", "set-cap", "--data", "sample:synthetic", "--store", str(store), "--epsilon", "2"]) == 2
    err = capsys.readouterr().err
    assert "fingerprint key" in err and "missing" in err and str(tmp_path / "cli.sqlite3.fpkey") in err
    assert "Traceback" not in err and not (tmp_path / "cli.sqlite3.fpkey").exists()


def test_cli_budget_show_states_where_the_key_is(tmp_path, capsys):
    store = tmp_path / "show.sqlite3"
    assert main(["budget", "set-cap", "--data", "sample:clinic", "--epsilon", "3", "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["budget", "show", "--data", "sample:clinic", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert f"{store}.fpkey" in out and "protect it with the store" in out


# ------------------------------------------------------------------------------ older stores
def test_an_older_stores_unkeyed_fingerprints_still_match_and_are_rekeyed_when_the_data_is_read(tmp_path):
    from dpfed_core.data.synthetic import reexport

    ds = load_data("sample:clinic")
    odo = BudgetOdometer(tmp_path / "old.sqlite3")
    key = odo.account_key(ds)
    fp = legacy_fingerprint(ds)
    with odo.store.write() as con:  # what an older dpfed wrote: no key, a version-1 fingerprint
        con.execute("INSERT INTO datasets (key, name, entities, first_seen, last_seen) VALUES (?, 'clinic', ?, "
                    "'t', 't')", (key, json.dumps(list(ds.entity_names))))
        con.execute("INSERT INTO fingerprints VALUES (?, 1, ?, ?, ?, ?)",
                    (key, fp.n_users, fp.keys.shape[1], fp.keys.astype("<u8").tobytes(),
                     fp.entity.astype("<i4").tobytes()))
        con.execute("INSERT INTO caps VALUES (?, 1.0, 1e-5, 't', 0)", (key,))
    assert odo.unkeyed_fingerprints() == 1
    other = reexport(ds, pseudonyms=True, reorder=True, name="re")
    assert odo.identity(other).account == key               # matched through the unkeyed entry
    odo.register(ds)                                        # the data read again: rekeyed
    assert odo.unkeyed_fingerprints() == 0
    con = sqlite3.connect(odo.path)
    assert con.execute("SELECT version FROM fingerprints WHERE dataset_key = ?", (key,)).fetchone()[0] == fpm.FP_VERSION
    con.close()
    implicit = rows_of(ds, np.arange(ds.n_users), (ds.X != 0).astype(float), name="implicit")
    assert odo.identity(implicit).account == key            # and now by the keyed item sets


def test_a_stores_keyed_item_set_fingerprints_still_match_and_gain_every_band_when_the_data_is_read(tmp_path):
    """A keyed entry holding the item sets' bands only (version 2) is compared on those bands, not
    skipped (a re-export would get a fresh budget), and is rewritten with every band when its data is
    read again."""
    from dpfed_core.data.synthetic import reexport

    ds = population(0)
    odo = BudgetOdometer(tmp_path / "v2.sqlite3")
    key = odo.account_key(ds)
    secret = odo._secret(create=True)
    fp = people_fingerprint(ds, secret).item_sets_only()
    assert fp.version == fpm.ITEM_SETS_FP_VERSION and fp.keys.shape[1] == fpm.FP_BANDS
    with odo.store.write() as con:
        con.execute("INSERT INTO datasets (key, name, entities, first_seen, last_seen) VALUES (?, 'pop', ?, 't', 't')",
                    (key, json.dumps(list(ds.entity_names))))
        con.execute("INSERT INTO fingerprints VALUES (?, 2, ?, ?, ?, ?)",
                    (key, fp.n_users, fp.keys.shape[1], fp.keys.astype("<u8").tobytes(),
                     fp.entity.astype("<i4").tobytes()))
    other = reexport(ds, pseudonyms=True, reorder=True, name="re")
    assert odo.identity(other).account == key
    odo.register(ds)
    con = sqlite3.connect(odo.path)
    version, bands = con.execute("SELECT version, bands FROM fingerprints WHERE dataset_key = ?", (key,)).fetchone()
    con.close()
    assert (version, bands) == (fpm.FP_VERSION, fpm.ALL_BANDS)


# ------------------------------------------------------------------------------ the same people under other names
def _renamed(ds: FederatedDataset, names, X=None, user_ids=None) -> FederatedDataset:
    return FederatedDataset.from_parts(ds.X if X is None else X, np.asarray(ds.entity_names)[ds.entity_of_user],
                                       user_ids=ds.user_ids if user_ids is None else user_ids,
                                       item_ids=np.asarray(names), value_kind=ds.value_kind, value_max=ds.value_max,
                                       name="renamed")


def test_the_same_people_with_their_items_named_otherwise_are_one_account(tmp_path):
    """Another id column of the same file (titles for ids), or a catalogue renamed one to one, under new
    pseudonyms: the item sets' bands see other items and no id is left to read a profile under; the
    shape's bands (how many users have each item) see the same people.
    Two items of the catalogue read as one (two titles alike) still leave most of them recognised."""
    ds = population(0)
    fps = people_fingerprint(ds, KEY)
    perm = np.random.default_rng(5).permutation(ds.n_items)
    pseudonyms = np.array([f"n{i}" for i in np.random.default_rng(6).permutation(ds.n_users)])
    renamed = _renamed(ds, np.array([f"drug {j}" for j in perm]), user_ids=pseudonyms)
    m = match_people(people_fingerprint(renamed, KEY), fps)
    assert is_same_people(m) and m.contained >= 0.8     # the users holding three items of untied counts
    item_sets_only = match_people(people_fingerprint(renamed, KEY).item_sets_only(), fps.item_sets_only())
    assert item_sets_only.contained == 0.0           # what the item sets alone saw: nobody
    merged = ds.X.tocsc().copy().tolil()
    X = ds.X.tocsc()
    cols = [X[:, j] for j in range(ds.n_items)]
    cols[1] = cols[1] + cols[599]                        # items 1 and 599 read as one name
    cols[599] = cols[599] * 0
    joined = sp.hstack(cols).tocsr()
    joined.eliminate_zeros()
    m2 = match_people(people_fingerprint(_renamed(ds, [f"t{j}" for j in perm], X=joined, user_ids=pseudonyms), KEY), fps)
    assert is_same_people(m2) and m2.contained > 0.5
    # the odometer charges the renamed reading to the stored account
    assert_charged_to_the_capped_account(tmp_path, ds, renamed)


def test_record_numbers_find_the_same_people_in_another_table_counters_do_not():
    """User ids that are record numbers (sparse, like eICU's patientunitstayid) find the same people
    read with other items altogether — another column or another table of theirs; ids of a counter
    (1, 2, 3 …) are left out, for unrelated datasets numbered alike share them."""
    ds = population(0)
    rng = np.random.default_rng(7)
    stays = np.array([str(x) for x in rng.choice(3_000_000, ds.n_users, replace=False) + 141_000])
    meds = _renamed(ds, ds.item_ids, user_ids=stays)
    other_table = population(9, m=300)                   # other items, other item sets, the same stays
    diagnoses = _renamed(other_table, [f"dx {j}" for j in range(300)], user_ids=stays)
    fp_meds = people_fingerprint(meds, KEY)
    assert (fp_meds.keys[:, ID_BANDS_AT] != 0).all()
    # keyed like the items: the ids alone, hashed without the store's key, find no one
    assert not (people_fingerprint(meds, b"\0" * 32).keys[:, ID_BANDS_AT] == fp_meds.keys[:, ID_BANDS_AT]).any()
    m = match_people(people_fingerprint(diagnoses, KEY), fp_meds)
    assert is_same_people(m) and m.contained == 1.0
    half = _renamed(other_table, [f"dx {j}" for j in range(300)],
                    user_ids=np.r_[stays[: ds.n_users // 2], [f"x{i}" for i in range(ds.n_users - ds.n_users // 2)]])
    assert match_people(people_fingerprint(half, KEY), fp_meds).contained == pytest.approx(0.5, abs=0.02)
    # as many dummy users numbered by a counter as there are people again: the counter's ids are left
    # out, the record numbers still find everyone
    dummies = np.array([f"x{i + 1}" for i in range(ds.n_users + 100)])
    padded = FederatedDataset.from_parts(
        sp.vstack([diagnoses.X, sp.csr_matrix(([1.0] * dummies.size, (np.arange(dummies.size), np.zeros(dummies.size, int))),
                                              shape=(dummies.size, diagnoses.n_items))]).tocsr(),
        np.r_[np.asarray(diagnoses.entity_names, dtype=object)[diagnoses.entity_of_user].astype(str),
              np.full(dummies.size, str(diagnoses.entity_names[0]))],
        user_ids=np.r_[stays, dummies], item_ids=diagnoses.item_ids, value_kind=diagnoses.value_kind,
        value_max=diagnoses.value_max, name="padded")
    is_dummy = np.char.startswith(np.asarray(padded.user_ids).astype(str), "x")
    assert is_dummy.sum() == dummies.size
    id_keys = people_fingerprint(padded, KEY).keys[:, ID_BANDS_AT]
    assert not (id_keys[is_dummy] != 0).any() and (id_keys[~is_dummy] != 0).all()
    assert match_people(fp_meds, people_fingerprint(padded, KEY)).contained == 1.0
    # the same record numbers written with thousands separators, as a spreadsheet exports them
    grouped = _renamed(other_table, [f"dx {j}" for j in range(300)], user_ids=np.array([f"{int(x):,}" for x in stays]))
    assert match_people(people_fingerprint(grouped, KEY), fp_meds).contained == 1.0
    # the same items under counter ids: only the item sets' and the shape's bands can match
    counted = _renamed(other_table, [f"dx {j}" for j in range(300)], user_ids=np.array([str(i + 1) for i in range(400)]))
    also = _renamed(ds, ds.item_ids, user_ids=np.array([str(i + 1) for i in range(400)]))
    assert not is_same_people(match_people(people_fingerprint(counted, KEY), people_fingerprint(also, KEY)))
    for ids, counter in ((["1", "2", "3", "5", "8"], True), ([f"P{i:05d}" for i in range(1, 400)], True),
                         (list(stays), False), ([f"{h:032x}" for h in rng.integers(0, 2**62, 50)], False),
                         (["alice", "bob", "carol"], False), ([f"u{i}" for i in range(0, 4000, 10)], True)):
        assert fpm.ids_are_counters(np.array(ids)) is counter, ids[:3]


def _counted(ds: FederatedDataset, rows, X=None, names=None) -> FederatedDataset:
    """The users ``rows`` of ds under their own ids, items renamed by ``names``."""
    rows = np.asarray(rows)
    X = (ds.X.tocsr() if X is None else X)[rows]
    return FederatedDataset.from_parts(sp.csr_matrix(X), np.asarray(ds.entity_names)[ds.entity_of_user[rows]],
                                       user_ids=np.asarray(ds.user_ids)[rows],
                                       item_ids=ds.item_ids if names is None else np.asarray(names),
                                       value_kind=ds.value_kind, value_max=ds.value_max, name="counted")


@pytest.mark.parametrize("change", ["rows dropped", "users left out", "entity left out", "others added"])
def test_items_renamed_and_counts_changed_under_the_same_counter_ids_are_the_same_people(tmp_path, change):
    """A re-export that renames every item *and* changes how many users have each item defeats the item
    sets' bands (other ids) and the shape's (other counts); the people keep their ids — a counter, which
    alone names no one — and nearly the same items. Read as popularity-rank bins under each user's id,
    they are found, and the odometer charges them to their capped account; other people under the same
    counter ids are not."""
    ds = population(0, n=600, m=200, per_user=(15, 50))
    ds = FederatedDataset.from_parts(ds.X, np.asarray(ds.entity_names)[ds.entity_of_user],
                                     user_ids=np.array([str(i + 1) for i in range(ds.n_users)]), item_ids=ds.item_ids,
                                     value_kind="ratings", value_max=5.0, name="counted")
    assert fpm.ids_are_counters(ds.user_ids)
    rng = np.random.default_rng(3)
    names = [f"drug {j}" for j in rng.permutation(ds.n_items)]
    everyone = np.arange(ds.n_users)
    if change == "rows dropped":
        X = ds.X.tocsr().copy()
        X.data[rng.random(X.data.size) < 0.05] = 0.0
        X.eliminate_zeros()
        new = _counted(ds, everyone, X, names)
    elif change == "users left out":
        new = _counted(ds, np.sort(rng.choice(everyone, int(0.9 * ds.n_users), replace=False)), names=names)
    elif change == "entity left out":
        new = _counted(ds, everyone[ds.entity_of_user != 0], names=names)
    else:
        other = population(8, n=60, m=200, per_user=(15, 50))
        X = sp.vstack([ds.X.tocsr(), other.X.tocsr()]).tocsr()
        new = FederatedDataset.from_parts(X, np.r_[np.asarray(ds.entity_names)[ds.entity_of_user], ["A"] * 60],
                                          user_ids=np.r_[ds.user_ids, [f"x{i}" for i in range(60)]],
                                          item_ids=np.asarray(names), value_kind="ratings", value_max=5.0, name="more")
    cols = rng.permutation(new.n_items)                   # a renamed catalogue is read in another column order
    new = FederatedDataset.from_parts(new.X.tocsc()[:, cols].tocsr(), np.asarray(new.entity_names)[new.entity_of_user],
                                      user_ids=new.user_ids, item_ids=np.asarray(new.item_ids)[cols],
                                      value_kind="ratings", value_max=5.0, name=new.name)
    stored, found = people_fingerprint(ds, KEY), people_fingerprint(new, KEY)
    shape_only = match_people(found.as_version(fpm.SHAPE_FP_VERSION), stored.as_version(fpm.SHAPE_FP_VERSION))
    assert not is_same_people(shape_only)               # what the families before the profile saw
    m = match_people(found, stored)
    assert is_same_people(m) and m.contained >= 0.3, m
    # other people under the same counter ids
    others = population(9, n=600, m=200, per_user=(15, 50))
    others = FederatedDataset.from_parts(others.X, np.asarray(others.entity_names)[others.entity_of_user],
                                         user_ids=ds.user_ids, item_ids=others.item_ids, value_kind="ratings",
                                         value_max=5.0, name="others")
    m = match_people(people_fingerprint(others, KEY), stored)
    assert not is_same_people(m) and m.contained < 0.1, m
    # the odometer charges the re-export to the capped account
    assert_charged_to_the_capped_account(tmp_path, ds, new)


def test_a_catalogue_whose_items_all_have_about_as_many_users_takes_no_one_for_another():
    """Drawn uniformly, every item's count of users is shared by other items: such counts name no item,
    so two unrelated datasets of one such catalogue are never one account (counting them took 79 % of
    one for the other)."""
    def uniform(seed: int) -> FederatedDataset:
        rng = np.random.default_rng(seed)
        X = sp.random(300, 400, density=0.05, format="csr", random_state=rng, data_rvs=lambda k: rng.integers(1, 6, k))
        return FederatedDataset.from_parts(X, np.array(["A", "B", "C"])[np.arange(300) % 3],
                                           user_ids=np.array([f"u{i}" for i in range(300)]),
                                           item_ids=np.array([f"i{j}" for j in range(400)]), value_kind="ratings",
                                           value_max=5.0)
    a, b = uniform(0), uniform(7)
    fa = people_fingerprint(a, KEY)
    assert (fa.keys[:, fpm.FP_BANDS:2 * fpm.FP_BANDS] == 0).mean() > 0.9   # hardly anyone holds three untied counts
    m = match_people(people_fingerprint(b, KEY), fa)
    assert not is_same_people(m) and m.contained < 0.05

    # exactly tied: every item held by 10 users, every user 10 items, users numbered 1, 2, 3 … in both — every
    # profile is "10 items of one bin", which names no one, so no one is taken for the user of the same number
    def latin(shifts) -> FederatedDataset:
        n = 60
        return FederatedDataset.from_parts(tied_design(n, shifts), np.array(["A", "B"])[np.arange(n) % 2],
                                           user_ids=np.array([str(i + 1) for i in range(n)]),
                                           item_ids=np.array([f"i{j}" for j in range(n)]), value_kind="counts",
                                           value_max=1.0)
    c, d = latin([0, 7, 13, 21, 29, 34, 41, 47, 52, 58]), latin([1, 5, 11, 17, 23, 31, 37, 43, 49, 55])
    assert (people_fingerprint(c, KEY).keys[:, PROFILE_BANDS_AT] == 0).all()
    m = match_people(people_fingerprint(d, KEY), people_fingerprint(c, KEY))
    assert not is_same_people(m) and m.contained == 0.0


def test_one_file_read_with_another_item_column_is_one_account(tmp_path, capsys):
    """A table naming each item twice (a code and a name, one to one): reading it by either column is
    the same people, and the run on the second reading is refused under the cap the first reached."""
    ds = population(0, n=300)
    X = ds.X.tocoo()
    lines = ["user,code,name,rating,site"] + [
        f"u{u},{ds.item_ids[i]},drug {(int(i) * 37) % ds.n_items:04d},{int(v)},{'AB'[u % 2]}"
        for u, i, v in zip(X.row, X.col, X.data)]
    f = tmp_path / "orders.csv"
    f.write_text("\n".join(lines) + "\n")
    store = tmp_path / "cli.sqlite3"
    common, by_code = _capped_reading(f, store, {"item_col": "code", "value_col": "rating"})
    by_name = load_data(str(f), user_col="user", item_col="name", entity_col="site", value_col="rating")
    assert dataset_key(by_name) != dataset_key(by_code)
    assert BudgetOdometer(store).identity(by_name).account == BudgetOdometer(store).account_key(by_code)
    _refused_as_the_same_people(common, {"item_col": "name", "value_col": "rating"}, capsys)


# ------------------------------------------------------------------------------ people of several accounts
def _padded(stored: FederatedDataset, padding: FederatedDataset) -> FederatedDataset:
    """Every stored person plus more people than them (made up, or another account's)."""
    return mix(stored, 1.0, padding, 1.5)


def test_people_padded_with_others_are_checked_against_their_own_cap_and_charged_to_it(tmp_path):
    """A capped account's people in a table padded with more made-up people than them: the table is
    matched to the padding's account (more users matched), and the capped people must still be checked
    against their cap and charged — or padding would walk around any cap."""
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    capped, padding = population(0), population(1, n=1200, base=10_000)
    odo.set_cap(capped, 1.0, 1e-5)
    odo.reserve(capped, [run_plan(capped, 1.0)]).close()
    odo.reserve(padding, [run_plan(padding, 1.0)]).close()
    both = _padded(capped, padding)
    assert odo.identity(both).alias_of == odo.account_key(padding)
    pre = odo.preview(both, [run_plan(both, 1.0)])
    assert not pre["fits"] and "'pop 0'" in pre["identity"] and "too" in pre["identity"]
    with pytest.raises(BudgetRefused, match="'pop 0'"):
        odo.reserve(both, [run_plan(both, 1.0)])
    assert len(odo.releases(capped)) == 1  # refused: nothing charged anywhere
    # within the cap it is charged to both accounts
    odo.set_cap(capped, 5.0, 1e-5, confirm_raise=True)
    before = max(b.spent_epsilon for b in odo.balance(capped))
    odo.reserve(both, [run_plan(both, 1.0)]).close()
    assert len(odo.releases(capped)) == 2
    assert max(b.spent_epsilon for b in odo.balance(capped)) > before + 0.5
    assert len(odo.releases(padding)) == 2


def test_runs_left_of_an_account_counts_its_own_charges_of_a_padded_tables_run_not_the_other_accounts(tmp_path):
    """A padded table's run is charged to both accounts under one operation: the runs left of the capped
    people repeat their own charge of it, never the padding account's beside it (entities of the same
    names would count each run twice)."""
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    capped, padding = population(0), population(1, n=1200, base=10_000)
    odo.set_cap(capped, 3.0, 1e-4)  # δ does not bind: six releases at 1e-6 each fit
    odo.reserve(padding, [run_plan(padding, 0.5)]).close()
    both = _padded(capped, padding)
    odo.reserve(both, [run_plan(both, 0.5)]).close()
    assert max(b.spent_epsilon for b in odo.balance(capped)) == pytest.approx(0.5)
    assert odo.runs_left(capped)["n"] == 5
    for _ in range(5):
        odo.reserve(capped, [run_plan(capped, 0.5)]).close()
    with pytest.raises(BudgetRefused):
        odo.reserve(capped, [run_plan(capped, 0.5)])


def test_a_stopped_sweep_gives_back_its_unstarted_points_in_every_account_charged(tmp_path):
    """Points a sweep never reached are given back in the padding's account and in the capped people's
    own, which was charged the same releases; a finished point stays charged in both."""
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    capped, padding = population(0), population(1, n=1200, base=10_000)
    odo.reserve(capped, [run_plan(capped, 1.0)]).close()
    odo.reserve(padding, [run_plan(padding, 1.0)]).close()
    both = _padded(capped, padding)
    res = odo.reserve(both, [run_plan(both, 1.0), run_plan(both, 0.5), run_plan(both, 0.25)])
    assert len(res.extra_ids) == 3 and sorted(res.extra_of) == [0, 1, 2]
    assert res.withdraw_unstarted([1, 2], "not started") == [1, 2]
    res.close(failed=True)
    for ds in (capped, padding):
        last = sorted(odo.releases(ds), key=lambda r: r["id"])[-3:]
        assert [(r["epsilon"], r["status"]) for r in last] == [(1.0, "failed"), (0.5, "withdrawn"),
                                                              (0.25, "withdrawn")], last
    assert res.withdraw_unstarted([0, 1], "again") == []  # settled or given back already: nothing moves


def test_a_sweep_killed_outright_has_its_unstarted_points_given_back_in_every_account_charged(tmp_path):
    """What a killed process kept of its progress names each point's release in every account, so the next
    charge gives back the unstarted points in the capped people's own account too."""
    from dpfed_core.privacy.store import Store, process_identity

    if process_identity() is None:
        pytest.skip("no /proc of this PID namespace: no progress is kept")
    path = tmp_path / "s.sqlite3"
    odo = BudgetOdometer(path)
    capped, padding = population(0), population(1, n=1200, base=10_000)
    odo.reserve(capped, [run_plan(capped, 1.0)]).close()
    odo.reserve(padding, [run_plan(padding, 1.0)]).close()
    both = _padded(capped, padding)
    res = odo.reserve(both, [run_plan(both, 1.0), run_plan(both, 0.5)])
    res.track()
    with Store(path).write() as con:  # its process is gone (no process has this id) while computing point 1
        name, value = con.execute("SELECT name, value FROM meta WHERE name LIKE 'progress:%'").fetchone()
        progress = json.loads(value)
        progress["owner"]["pid"] = 2 ** 22 + 7
        con.execute("UPDATE meta SET value = ? WHERE name = ?", (json.dumps(progress), name))
    odo.reserve(padding, [run_plan(padding, 0.1)]).close()
    for ds in (capped, padding):
        ours = [r for r in odo.releases(ds) if r["operation"] == res.operation]
        assert sorted((r["epsilon"], r["status"]) for r in ours) == [(0.5, "withdrawn"), (1.0, "failed")], ours


def test_a_withdrawn_reservation_gives_back_every_accounts_charge(tmp_path):
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    capped, padding = population(0), population(1, n=1200, base=10_000)
    odo.reserve(capped, [run_plan(capped, 1.0)]).close()
    odo.reserve(padding, [run_plan(padding, 1.0)]).close()
    both = _padded(capped, padding)
    res = odo.reserve(both, [run_plan(both, 1.0)])
    assert res.extra_ids
    res.withdraw(0, "failed before its first draw")
    assert {r["status"] for r in odo.releases(capped)} == {"released", "withdrawn"}
    assert max(b.n_releases for b in odo.balance(capped)) == 1


def test_a_standard_set_many_stored_people_share_does_not_make_strangers_the_same_people():
    """Hundreds of stored people hold one standard order set plus an item of their own; strangers holding
    the same standard set (and items of their own) share band keys with many stored people at once. A
    band key that many stored users hold is generic: it tells nothing, and matches no one."""
    standard = list(range(10))

    def standard_holders(n: int, first_own: int, prefix: str) -> FederatedDataset:
        rows = np.repeat(np.arange(n), len(standard) + 1)
        cols = np.concatenate([[*standard, first_own + u] for u in range(n)])
        X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, 1000))
        return FederatedDataset.from_parts(X, np.array(["A", "B"])[np.arange(n) % 2],
                                           user_ids=np.array([f"{prefix}{u}" for u in range(n)]),
                                           item_ids=np.array([f"i{j}" for j in range(1000)]),
                                           value_kind="implicit", value_max=1.0, name=prefix)

    stored, strangers = standard_holders(300, 100, "s"), standard_holders(200, 500, "t")
    m = match_people(people_fingerprint(strangers, KEY), people_fingerprint(stored, KEY))
    assert not is_same_people(m), m


def test_a_profile_of_exactly_the_minimum_length_is_keyed_and_a_shorter_one_is_not():
    """The popularity profile keys users with at least PROFILE_MIN_ITEMS items: one of exactly that many
    is kept (a re-export that renames its items and changes their counts still finds that person), one
    item fewer is left out."""
    n_items = fpm.PROFILE_MIN_ITEMS
    lengths = [n_items, n_items - 1, n_items + 1]
    cols = np.concatenate([np.arange(k) + 100 * u for u, k in enumerate(lengths)])
    rows = np.repeat(np.arange(len(lengths)), lengths)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(len(lengths), 400))
    ids = ["patient-a", "patient-b", "patient-c"]
    keys = fpm._profile_keys(X, fpm._user_hashes(ids, KEY), KEY)
    assert (keys[0] != 0).any() and (keys[2] != 0).any(), keys
    assert not (keys[1] != 0).any(), keys
