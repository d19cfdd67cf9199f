"""The privacy budget odometer and the store file. Every store lives under tmp_path."""
from __future__ import annotations

import json
import math
import re
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.cli.args import CLI_NAMES
from dpfed_core.cli.main import main
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.budget import ledger_charges, method_charges, plan_audit, plan_run, plan_sweep
from dpfed_core.evaluation.history import RunHistory
from dpfed_core.errors import ConfigError
from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused, PlannedRelease, dataset_key
from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds
from dpfed_core.privacy.store import SCHEMA_VERSION, Store, StoreError, default_store_path
from dpfed_core.ui.budget import refusal_text

REPO = Path(__file__).resolve().parents[1]


def make_dataset(name: str = "toy", seed: int = 0, n: int = 12, m: int = 6, shuffle: bool = False,
                 bump: bool = False) -> FederatedDataset:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, m)).astype(float)
    X[:, 0] += 1  # no empty rows
    if bump:
        X[0, 0] += 1
    labels = np.array(["A", "B", "C"])[np.arange(n) % 3]
    uid = np.array([f"u{i}" for i in range(n)])
    if shuffle:
        order = rng.permutation(n)
        X, labels, uid = X[order], labels[order], uid[order]
    return FederatedDataset.from_parts(sp.csr_matrix(X), labels, user_ids=uid,
                                       item_ids=np.array([f"i{j}" for j in range(m)]),
                                       value_kind="counts", value_max=5.0, name=name)


def dp_plan(eps: float, delta: float = 1e-6, entities=("A", "B", "C"), simulation: bool = False,
            kind: str = "run") -> PlannedRelease:
    return PlannedRelease(kind, "dp-gaussian", eps, delta, {e: (eps, delta) for e in entities},
                          seed=0, simulation=simulation)


@pytest.fixture
def odo(tmp_path) -> BudgetOdometer:
    return BudgetOdometer(tmp_path / "owner.sqlite3")


# ------------------------------------------------------------------------------ identity
def test_dataset_key_is_content_not_name_or_row_order():
    base = dataset_key(make_dataset())
    assert dataset_key(make_dataset(name="renamed upload.csv")) == base
    assert dataset_key(make_dataset(shuffle=True)) == base
    assert dataset_key(make_dataset(bump=True)) != base       # one value changed
    assert dataset_key(make_dataset(seed=1)) != base
    ds = make_dataset()
    moved = FederatedDataset.from_parts(ds.X, np.where(ds.entity_of_user == 0, "B", "A"),
                                        user_ids=ds.user_ids, item_ids=ds.item_ids, value_max=5.0)
    assert dataset_key(moved) != base                          # entity assignment changed


def test_the_key_of_known_data_is_the_one_earlier_stores_hold():
    # computed any other way, every budget already stored would sit under a key no dataset has any more
    X = sp.csr_matrix(np.array([[1.0, 0, 2.5], [0, 3.0, 0], [4.0, 0, 0]]))
    ds = FederatedDataset.from_parts(X, np.array(["site a", "site b", "site a"]), user_ids=np.array(["u1", "u2", "u3"]),
                                     item_ids=np.array(["i1", "i2", "i3"]), value_kind="ratings", value_max=5.0)
    assert dataset_key(ds) == "ds-42df054d1c2a8dbcefef78f0423191343ec23fac"


def test_a_key_remembered_for_a_dataset_is_never_given_to_another_at_the_same_address(monkeypatch):
    import weakref

    from dpfed_core.privacy import budget_records

    first, other = make_dataset(), make_dataset(seed=1)
    own = dataset_key(other)
    # the memo is keyed by id(): a collected dataset's address is reused by the next object made
    monkeypatch.setitem(budget_records._KEY_MEMO, id(other), (weakref.ref(first), dataset_key(first)))
    assert dataset_key(other) == own != dataset_key(first)


def test_default_location_env_and_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "env.sqlite3"))
    assert default_store_path() == tmp_path / "env.sqlite3"
    monkeypatch.delenv("DPFED_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_path() == tmp_path / "xdg" / "dpfed" / "dpfed.sqlite3"
    assert default_store_path("Clinic A/../x") == tmp_path / "xdg" / "dpfed" / "dpfed-Clinic_A_.._x.sqlite3"
    s = Store(tmp_path / "new" / "s.sqlite3")
    assert s.schema_version() == SCHEMA_VERSION
    assert oct(os.stat(s.path).st_mode & 0o777) == oct(0o600)
    with sqlite3.connect(s.path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_blank_or_relative_location_setting_is_ignored_and_a_home_path_is_expanded(tmp_path, monkeypatch):
    from dpfed_core.privacy.store import resolve_store_path

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # the XDG rule: a relative path is ignored
    monkeypatch.setenv("DPFED_STORE", "   ")
    default = tmp_path / "home" / ".local" / "share" / "dpfed" / "dpfed.sqlite3"
    assert default_store_path() == default
    assert resolve_store_path("") == resolve_store_path(None) == default  # never the working directory
    monkeypatch.setenv("DPFED_STORE", "~/budgets/mine.sqlite3")
    assert default_store_path() == tmp_path / "home" / "budgets" / "mine.sqlite3"
    # an owner's own file: the one file the environment names does not serve every owner
    assert default_store_path("clinic") == default.with_name("dpfed-clinic.sqlite3")
    assert default_store_path(".hidden.") == default.with_name("dpfed-hidden.sqlite3")
    with pytest.raises(StoreError, match="no usable characters"):
        default_store_path("../..")


def test_a_key_the_environment_names_lets_new_stores_start_and_an_emptied_one_says_to_keep_it(tmp_path, monkeypatch):
    """A key named by DPFED_FINGERPRINT_KEY may serve several stores: its existence says nothing of a store
    that does not exist yet, and the advice for an emptied store must not be to delete it."""
    key = tmp_path / "shared.fpkey"
    key.write_bytes(b"k" * 32)
    monkeypatch.setenv("DPFED_FINGERPRINT_KEY", str(key))
    assert Store(tmp_path / "new.sqlite3").schema_version() == SCHEMA_VERSION
    wiped = tmp_path / "wiped.sqlite3"
    wiped.write_bytes(b"")
    with pytest.raises(StoreError, match="history is gone") as exc:
        Store(wiped)
    assert f"keep the key {key}" in str(exc.value) and "together" not in str(exc.value)
    assert key.exists() and wiped.stat().st_size == 0


# ------------------------------------------------------------------------------ caps
def test_no_cap_charges_but_never_refuses(odo):
    ds = make_dataset()
    for _ in range(5):
        odo.reserve(ds, [dp_plan(3.0)]).close()
    bal = {b.entity: b for b in odo.balance(ds)}
    assert bal["A"].spent_epsilon == pytest.approx(15.0)
    assert bal["A"].spent_delta == pytest.approx(5e-6)
    assert math.isinf(bal["A"].remaining_epsilon)


def test_a_cap_of_zero_epsilon_is_refused_naming_epsilon(odo):
    """ε = 0 is no budget at all, not a valid cap: it is refused (and inf is the way to remove one)."""
    ds = make_dataset()
    with pytest.raises(ConfigError, match="must be positive") as err:
        odo.set_cap(ds, 0.0, 1e-5)
    assert err.value.param == "epsilon"
    with pytest.raises(ConfigError, match="must be positive"):
        odo.set_cap(ds, -0.0, 1e-5)


def test_cap_enforced_and_refusal_names_the_control(odo, tmp_path):
    ds = make_dataset()
    odo.set_cap(ds, 2.5, 1e-5)
    odo.reserve(ds, [dp_plan(1.0)]).close()
    odo.reserve(ds, [dp_plan(1.0)]).close()
    n_before = len(odo.releases(ds))
    with pytest.raises(BudgetRefused) as exc:
        odo.reserve(ds, [dp_plan(1.0)])
    msg = exc.value.render(CLI_NAMES)                         # the CLI names flags …
    assert "budget set-cap" in msg and "--simulation" not in msg and "'A'" in msg and "Budget cap" not in msg
    shown = refusal_text(exc.value)                           # … the dashboard its controls, never flags
    assert "Budget cap ε per entity" in shown and "--" not in shown and "set-cap" not in shown
    assert "spent ε = 2" in msg
    assert len(odo.releases(ds)) == n_before                  # a refusal charges nothing
    assert "Choose a smaller --epsilon," in msg and "--epsilons" not in msg and exc.value.param == "epsilon"
    # a sweep's points are set by its grid: its refusal names the grid's flag and control
    fresh = BudgetOdometer(tmp_path / "sweep.sqlite3")
    fresh.set_cap(ds, 1.0, 1e-5)
    with pytest.raises(BudgetRefused) as exc:
        fresh.reserve(ds, [gauss_plan(1.0, kind="sweep point", batch=True) for _ in range(3)])
    assert exc.value.param == "epsilons" and "Choose smaller or fewer --epsilons," in exc.value.render(CLI_NAMES)
    assert "“ε grid” on the Trade-off page" in refusal_text(exc.value)
    odo.reserve(ds, [dp_plan(0.5)]).close()                   # exactly up to the cap is fine
    assert {b.entity: b.remaining_epsilon for b in odo.balance(ds)}["A"] == pytest.approx(0.0)


def test_a_release_past_the_cap_by_a_hair_is_refused(odo):
    """The cap is a bound, not a target: a release that would take an entity half a percent past it is
    refused; only the floating-point slack of a sum of shares (1e-9 relative) is tolerated."""
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [dp_plan(0.6)]).close()
    for over in (0.405, 0.4 + 1e-6):
        with pytest.raises(BudgetRefused):
            odo.reserve(ds, [dp_plan(over)])
    assert not odo.preview(ds, [dp_plan(0.405)])["fits"]
    odo.reserve(ds, [dp_plan(0.4 * (1 + 1e-12))]).close()


def test_delta_cap_enforced(odo):
    ds = make_dataset()
    for bad in (0.05, 0.01):  # δ = 1/100 is the first refused
        with pytest.raises(Exception, match=r"δ must be in \(0, 0.01\)"):
            odo.set_cap(ds, 1.0, bad)
    odo.set_cap(ds, 100.0, 2e-6)
    # basic composition gets half of the cap's δ (the other half is the zCDP accountant's): one
    # release of δ = 1e-6 fits, a second (no ρ: dp-gaussian) does not
    odo.reserve(ds, [dp_plan(1.0, 1e-6)]).close()
    with pytest.raises(BudgetRefused, match="δ"):
        odo.reserve(ds, [dp_plan(1.0, 1e-6)])


def test_a_cap_of_delta_zero_is_refused_not_shown_as_pure_and_enforced_at_another_delta(odo):
    """Spends are stated and checked at the cap's δ, and neither accountant states one at δ = 0: a cap
    of δ = 0 would read as pure ε-DP while every Gaussian release (δ > 0) was checked at another δ."""
    ds = make_dataset()
    with pytest.raises(ConfigError, match="δ must be above 0") as err:
        odo.set_cap(ds, 1.4, 0.0)
    assert err.value.param == "delta" and odo.datasets() == []  # refused before anything was written
    odo.set_cap(ds, math.inf, 0.0)  # removing a cap states no δ


def test_all_points_of_one_operation_are_checked_together(odo):
    ds = make_dataset()
    odo.set_cap(ds, 2.5)
    with pytest.raises(BudgetRefused, match="3 releases planned"):
        odo.reserve(ds, [dp_plan(1.0, kind="sweep point")] * 3)
    assert odo.releases(ds) == []


def test_per_entity_accounting(odo):
    ds = make_dataset()
    odo.set_cap(ds, 2.0)
    odo.reserve(ds, [dp_plan(1.5, entities=("A",))]).close()
    bal = {b.entity: b for b in odo.balance(ds)}
    assert bal["A"].spent_epsilon == 1.5 and bal["B"].spent_epsilon == 0.0 and bal["C"].n_releases == 0
    odo.reserve(ds, [dp_plan(1.5, entities=("B", "C"))]).close()   # other entities' budgets are their own
    with pytest.raises(BudgetRefused) as exc:
        odo.reserve(ds, [dp_plan(1.0)])
    assert "'A'" in str(exc.value) and "'B'" in str(exc.value)


def test_simulation_recorded_not_charged_even_past_the_cap(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0)
    for _ in range(3):
        odo.reserve(ds, [dp_plan(5.0, simulation=True)]).close()
    assert all(b.spent_epsilon == 0 and b.n_releases == 0 for b in odo.balance(ds))
    rel = odo.releases(ds)
    assert len(rel) == 3 and all(r["simulation"] and not r["charged"] for r in rel)
    odo.reserve(ds, [dp_plan(1.0)]).close()                    # the whole cap is still there


def test_a_simulation_release_settled_from_its_ledger_stays_uncharged(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0)
    res = odo.reserve(ds, [dp_plan(0.8, simulation=True)])
    res.settle(0, {e: (0.8, 1e-6) for e in "ABC"})
    (rel,) = odo.releases(ds)
    assert rel["status"] == "released" and rel["n_entities_charged"] == 0 and not rel["charged"]
    assert all(b.spent_epsilon == 0 and b.n_releases == 0 for b in odo.balance(ds))
    odo.reserve(ds, [dp_plan(1.0)]).close()                    # the whole cap is still there


def test_non_private_refused_on_capped_dataset_unless_allowed(odo):
    ds = make_dataset()
    central = PlannedRelease("comparison", "central", math.inf, 0.0, method_charges("central", math.inf, 0, "ABC"))
    odo.reserve(ds, [central]).close()                         # no cap: recorded, never refused
    odo.set_cap(ds, 3.0)
    with pytest.raises(BudgetRefused) as exc:
        odo.reserve(ds, [dp_plan(1.0), central])
    assert "--allow-non-private" in exc.value.render(CLI_NAMES)
    assert "Allow non-private releases" in refusal_text(exc.value)
    assert len(odo.releases(ds)) == 1
    odo.reserve(ds, [dp_plan(1.0), central], allow_non_private=True).close()
    bal = {b.entity: b for b in odo.balance(ds)}
    assert bal["A"].spent_epsilon == 1.0 and bal["A"].n_non_private == 2 and bal["A"].void
    assert [r["non_private"] for r in odo.releases(ds)] == [True, False, True]


def test_a_release_non_private_for_one_entity_only_is_non_private_and_refused_on_a_capped_dataset(odo):
    ds = make_dataset()
    odo.set_cap(ds, 3.0)
    mixed = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {"A": (math.inf, 0.0), "B": (1.0, 1e-6), "C": (1.0, 1e-6)})
    assert mixed.non_private
    with pytest.raises(BudgetRefused):
        odo.reserve(ds, [mixed])
    odo.reserve(ds, [mixed], allow_non_private=True).close()
    bal = {b.entity: b for b in odo.balance(ds)}
    assert bal["A"].void and not bal["B"].void and odo.releases(ds)[0]["non_private"]


def test_an_accounts_balance_states_what_is_left_whether_it_is_void_and_a_basic_epsilon_only_when_it_holds():
    from dataclasses import replace

    from dpfed_core.privacy.budget_records import EntityBalance

    b = EntityBalance("A", spent_epsilon=1.0, spent_delta=2e-6, cap_epsilon=3.0, cap_delta=1e-5, n_releases=2,
                      n_non_private=0, basic_epsilon=1.2, tight_epsilon=0.9, accountant="zcdp", guarantee_delta=1e-5)
    assert b.remaining_epsilon == pytest.approx(2.0) and b.remaining_delta == pytest.approx(8e-6) and not b.void
    # within the cap check's floating-point slack nothing is left: never "1e-12 left"
    full = replace(b, spent_epsilon=3.0 * (1 - 1e-12), spent_delta=1e-5 * (1 - 1e-12))
    assert full.remaining_epsilon == 0.0 and full.remaining_delta == 0.0
    # a cap removed (ε = ∞) bounds neither ε nor δ
    free = replace(b, cap_epsilon=math.inf)
    assert math.isinf(free.remaining_epsilon) and math.isinf(free.remaining_delta)
    assert replace(b, n_non_private=1).void
    # basic composition's Σε is a guarantee only while Σδ is within half the cap's δ
    assert b.stated_basic_epsilon == b.to_dict()["basic_epsilon"] == 1.2
    over = replace(b, spent_delta=6e-6)
    assert math.isinf(over.stated_basic_epsilon) and math.isinf(over.to_dict()["basic_epsilon"])


def test_preview_of_a_non_private_release_says_infinity_the_real_epsilon_left_and_the_refusal(odo):
    from dpfed_core.evaluation.budget import planned_charge

    ds = make_dataset()
    central = PlannedRelease("comparison", "central", math.inf, 0.0, method_charges("central", math.inf, 0, "ABC"))
    p = odo.preview(ds, [central])                             # no cap: charged as it is, but ε = ∞
    assert p["spend"] == math.inf and p["after"] == math.inf and p["fits"] and not p["refused_unless_allowed"]
    assert "ε = ∞" in planned_charge(odo.store, ds, [central])["text"]
    odo.set_cap(ds, 4.0)
    odo.reserve(ds, [dp_plan(2.0)]).close()
    p = odo.preview(ds, [central])
    assert p["left"] == pytest.approx(2.0) and not p["fits"] and p["dp_fits"] and p["refused_unless_allowed"]
    text = planned_charge(odo.store, ds, [central])["text"]
    assert "ε = ∞" in text and "2 left per entity" in text and "refused unless" in text and "ε ≈ 0" not in text
    mixed = planned_charge(odo.store, ds, [dp_plan(0.5), central])
    assert mixed["dp_spend"] == pytest.approx(0.5, rel=0.2) and "its DP releases alone ε ≈" in mixed["text"]


def test_preview_of_unequal_spends_states_one_entitys_spend_beside_its_own_epsilon_left(odo):
    """Releases compose by zCDP: an entity that already spent adds less than a fresh one, so the
    largest increase and the smallest ε left belong to different entities and are stated apart."""
    from dpfed_core.evaluation.budget import planned_charge, planned_rho

    def gauss(eps, entities=("A", "B", "C")):
        return PlannedRelease("run", "dp-cooccurrence", eps, 1e-6, {e: (eps, 1e-6) for e in entities}, seed=0,
                              rho=planned_rho("dp-cooccurrence", eps, 1e-6)[0], gaussian=True)

    ds = make_dataset()
    odo.set_cap(ds, 2.8)
    odo.reserve(ds, [gauss(2.0, ("A",))]).close()
    p = planned_charge(odo.store, ds, [gauss(1.0)])
    assert p["fits"] and p["binding_left"] == pytest.approx(p["left"]) and p["left"] < p["spend"] + 0.1
    assert 0 < p["binding_spend"] < 0.5 * p["spend"]
    assert (f"spends ε ≈ {epsilon_that_holds(p['spend'], 3)} per entity at most; the most-spent entity ε ≈ "
            f"{epsilon_that_holds(p['binding_spend'], 3)} of the {epsilon_left(p['left'], 3)} it has left") in p["text"]
    assert "left per entity" not in p["text"]                   # not one entity's spend and another's ε left


def test_a_planned_charge_shows_its_spend_rounded_up_and_what_is_left_rounded_down():
    from dpfed_core.evaluation.budget import charge_text

    near = {"cap_epsilon": 2.0, "spend": 1.00004, "left": 0.99996, "fits": False, "dp_fits": False}
    # to nearest both read "1": a run that will be refused would seem to spend exactly what is left
    assert charge_text(near).startswith("spends ε ≈ 1.01 of the 0.999 left per entity")
    assert "it will be refused" in charge_text(near)
    uneven = {**near, "spend": 0.5, "left": 1.2344, "fits": True, "dp_fits": True,
              "binding_spend": 0.10001, "binding_left": 0.99996}
    assert charge_text(uneven) == ("spends ε ≈ 0.5 per entity at most; the most-spent entity ε ≈ 0.101 of the "
                                   "0.999 it has left")
    no_cap = {"cap_epsilon": math.inf, "spend": 2.0001, "left": math.inf, "fits": True}
    assert charge_text(no_cap) == "spends ε ≈ 2.01 per entity (no cap set)"
    exact = {"cap_epsilon": 3.0, "spend": 1.0, "left": 3.0, "fits": True}
    assert charge_text(exact) == "spends ε ≈ 1 of the 3 left per entity"
    mixed = {"cap_epsilon": 2.0, "spend": math.inf, "left": 1.99996, "fits": False, "non_private": True,
             "dp_spend": 0.50001}
    assert "its DP releases alone ε ≈ 0.501; 1.99 left per entity under the cap ε = 2" in charge_text(mixed)


def test_cli_dry_run_of_a_non_private_method_under_a_cap_names_the_flag(tmp_path, capsys):
    store = str(tmp_path / "np.sqlite3")
    data = ["--data", "sample:clinic"]
    _cli(capsys, "budget", "set-cap", *data, "--store", store, "--epsilon", "3")
    rc, out, err = _cli(capsys, "run", *data, "--method", "central", "--dry-run", "--store", store)
    assert rc == 0, err
    assert "ε = ∞" in out and "of the 3 left" not in out and "3 left per entity" in out
    assert "would be REFUSED: add --allow-non-private" in out and "(fits)" not in out and "ε ≈ 0" not in out
    rc, out, err = _cli(capsys, "run", *data, "--method", "central", "--dry-run", "--allow-non-private",
                        "--store", store)
    assert rc == 0 and "allowed by --allow-non-private" in out and "REFUSED" not in out


def test_a_compared_method_that_releases_nothing_is_listed_so_and_never_the_last_operation(odo, capsys):
    from dpfed_core.cli.budget_cmd import print_releases

    ds = make_dataset()
    odo.set_cap(ds, 5.0)
    local = PlannedRelease("comparison", "local", math.inf, 0.0, method_charges("local", math.inf, 0.0, "ABC"), seed=0)
    assert local.charges == {}
    odo.reserve(ds, [dp_plan(1.0), local]).close()
    left = odo.runs_left(ds)
    assert (left["method"], left["kind"], left["epsilon"]) == ("dp-gaussian", "run", 1.0)
    print_releases(odo.releases(ds))
    lines = capsys.readouterr().out.splitlines()
    row = next(ln for ln in lines if " local " in ln)
    assert "releases nothing" in row and "∞" not in row


def test_failed_release_stays_charged_and_history_delete_does_not_refund(odo, tmp_path):
    ds = make_dataset()
    with pytest.raises(RuntimeError):
        with odo.charge(ds, [dp_plan(1.0)]):
            raise RuntimeError("crashed after the noise was drawn")
    assert odo.releases(ds)[0]["status"] == "failed"
    assert {b.entity: b.spent_epsilon for b in odo.balance(ds)}["A"] == 1.0
    hist = RunHistory(odo.store)
    hid = hist.add("run", {"config": {"method": "dp-gaussian", "epsilon": 1.0}, "dataset": {"name": "toy"}},
                   dataset_key=odo.account_key(ds))
    hist.delete(hid)
    assert {b.entity: b.spent_epsilon for b in odo.balance(ds)}["A"] == 1.0


def test_settle_records_the_ledger(odo):
    ds = make_dataset()
    with odo.charge(ds, [dp_plan(1.0)]) as res:
        res.settle(0, ledger_charges({"ledger": [
            {"entity": "A", "epsilon": 0.25, "delta": 0.0}, {"entity": "A", "epsilon": 0.5, "delta": 1e-7},
            {"entity": "B", "epsilon": "inf", "delta": 0.0}]}, ["A", "B"]))
    assert odo.charges(res.release_ids[0]) == {"A": (0.75, 1e-7), "B": (math.inf, 0.0)}
    assert odo.releases(ds)[0]["status"] == "released"


def test_a_settled_charge_whose_ledger_gave_no_rho_composes_by_its_epsilon_only(odo):
    """An entity the settlement names no ρ for (its ledger rows had none, e.g. an approximate-DP
    selection) keeps no zCDP charge: it composes basically at its ε, never as a free ρ = 0; an entity
    with a ρ composes by it."""
    ds = make_dataset()
    res = odo.reserve(ds, [dp_plan(1.0)])
    res.settle(0, {"A": (1.0, 1e-6), "B": (1.0, 1e-6)}, {"B": (0.01, True)})
    bal = {b.entity: b for b in odo.balance(ds)}
    assert bal["A"].tight_epsilon == math.inf and bal["A"].accountant == "basic"
    assert bal["A"].spent_epsilon == pytest.approx(1.0)
    assert 0 < bal["B"].tight_epsilon < 1.0 and bal["B"].accountant == "zCDP"


# ------------------------------------------------------------------------------ plans
def test_plans_classify_methods_before_any_computation():
    ds = make_dataset()
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-6, k=2)
    plans = plan_run(ds, cfg, ["individual", "random-v", "central", "popularity", "dp-gaussian"])
    assert [p.method for p in plans] == ["dp-gaussian", "individual", "random-v", "central", "popularity"]
    assert plans[0].charges == {e: (1.0, 1e-6) for e in "ABC"} and not plans[0].non_private
    assert plans[1].charges == {} and plans[2].charges == {}
    assert plans[3].non_private and plans[4].non_private
    assert method_charges("dp-gaussian", math.inf, 1e-6, ["A"]) == {"A": (math.inf, 0.0)}
    assert method_charges("friedman-isgd", 1.0, 0.0, ["A"]) == {"A": (math.inf, 0.0)}  # trusted curator
    sw = plan_sweep(ds, cfg, [0.5, 2, math.inf], [0, 1], ["individual"])
    assert [(p.method, p.epsilon, p.seed) for p in sw][:4] == [("dp-gaussian", 0.5, 0), ("dp-gaussian", 2.0, 0),
                                                              ("dp-gaussian", math.inf, 0), ("individual", math.inf, 0)]
    assert len(sw) == 8 and sum(p.non_private for p in sw) == 2
    a = plan_audit(ds, "B", ["dp-prototypes"], [1.0], 1e-6)
    assert a[0].charges == {"B": (math.inf, 0.0)}
    with pytest.raises(Exception, match="positive"):
        plan_sweep(ds, cfg, [0.0], [0])


# ------------------------------------------------------------------------------ errors
def test_corrupted_file_is_a_clear_error_and_left_untouched(tmp_path):
    p = tmp_path / "broken.sqlite3"
    junk = b"this is not an sqlite database" * 100
    p.write_bytes(junk)
    with pytest.raises(StoreError, match="damaged or not a dpfed store.*--store"):
        BudgetOdometer(p)
    assert p.read_bytes() == junk
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="not a dpfed store"):
        Store(other)


def test_a_store_emptied_beside_its_key_is_refused_as_a_lost_history_not_read_as_a_new_budget(tmp_path, capsys):
    """A store file of 0 bytes whose key file is still beside it once held a budget (the key is written
    when the first dataset is registered): reading it as new would give every entity a fresh budget."""
    store = tmp_path / "wiped.sqlite3"
    data = ["--data", "sample:clinic", "--store", str(store)]
    rc, _, err = _cli(capsys, "budget", "set-cap", *data, "--epsilon", "3")
    assert rc == 0 and store.with_name(store.name + ".fpkey").exists(), err
    store.write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    with pytest.raises(StoreError) as exc:
        BudgetOdometer(store)
    text = str(exc.value)
    assert str(store) in text and "0 bytes" in text and "history is gone" in text
    assert "Restore it from a backup" in text and f"{store}.fpkey" in text and "new, empty budget" in text
    for argv in (["budget", "show", *data], ["run", *data, "--method", "dp-popularity", "--epsilon", "1",
                                             "--dry-run"]):
        rc, out, err = _cli(capsys, *argv)
        assert rc == 2 and "history is gone" in err and "Traceback" not in err, (argv, out, err)
    assert store.stat().st_size == 0  # refused, never rewritten as a new store
    # deleted outright, its key left beside it: refused too, and nothing created
    store.unlink()
    for argv in (["budget", "show", *data], ["run", *data, "--method", "dp-popularity", "--epsilon", "1"]):
        rc, out, err = _cli(capsys, *argv)
        assert rc == 2 and "does not exist while its fingerprint key" in err and "deleted or moved" in err, err
        assert not store.exists()
    # removing the key too starts a new, empty budget, as does a new store with no file and no key
    store.with_name(store.name + ".fpkey").unlink()
    assert BudgetOdometer(store).datasets() == []
    assert BudgetOdometer(tmp_path / "new.sqlite3").datasets() == []


def test_a_store_whose_pages_are_damaged_is_said_damaged_and_left_untouched(tmp_path):
    path = tmp_path / "damaged.sqlite3"
    Store(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(path.read_bytes())
    # the schema's page after SQLite's header: SQLite says "malformed", not "not a database"
    data[100:4096] = b"\xff" * (4096 - 100)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="is damaged or not a dpfed store .*malformed.*left untouched"):
        Store(path)
    assert path.read_bytes() == bytes(data)


def test_a_store_cut_short_beside_its_key_is_said_damaged_not_emptied(tmp_path):
    store = tmp_path / "cut.sqlite3"
    store.with_name(store.name + ".fpkey").write_bytes(b"k" * 32)
    cut = b"SQLite format 3\x00" + b"\x10" * 84  # a header and no page: a copy that stopped early
    store.write_bytes(cut)
    with pytest.raises(StoreError, match="damaged or not a dpfed store") as exc:
        Store(store)
    assert "0 bytes" not in str(exc.value) and store.read_bytes() == cut


def test_newer_schema_refused(tmp_path):
    s = Store(tmp_path / "s.sqlite3")
    with sqlite3.connect(s.path) as con:
        con.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="newer dpfed"):
        Store(s.path)


def test_locked_store_is_a_clear_error(tmp_path):
    ds = make_dataset()
    odo = BudgetOdometer(Store(tmp_path / "s.sqlite3", timeout=0.2))
    odo.register(ds)
    holder = sqlite3.connect(odo.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="locked by another session"):
            odo.reserve(ds, [dp_plan(1.0)])
        assert len(odo.releases(ds)) == 0                      # reads still work under WAL
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    odo.reserve(ds, [dp_plan(1.0)]).close()


_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[3])
    from test_odometer import make_dataset, dp_plan
    from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused
    import time
    odo = BudgetOdometer(sys.argv[1])
    ds = make_dataset()
    time.sleep(max(float(sys.argv[4]) - time.time(), 0))   # start together: the writers overlap
    ok = 0
    for _ in range(int(sys.argv[2])):
        try:
            odo.reserve(ds, [dp_plan(1.0)]).close()
            ok += 1
        except BudgetRefused:
            pass
    print(ok)
""")


def test_concurrent_writers_never_overspend(tmp_path):
    """Three processes race for a cap of 40 with 30 releases each: exactly 40 pass in total, and no
    writer sees an error (each check-and-charge waits for the others' transactions)."""
    import time

    path = tmp_path / "race.sqlite3"
    odo = BudgetOdometer(path)
    ds = make_dataset()
    odo.set_cap(ds, 40.0, 1e-3)
    start = str(time.time() + 4.0)
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), "30", str(REPO / "tests"), start],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    assert sum(int(o[0]) for o in outs) == 40
    bal = {b.entity: b for b in odo.balance(ds)}
    assert bal["A"].spent_epsilon == pytest.approx(40.0) and bal["A"].n_releases == 40
    assert len(odo.releases(ds)) == 40


# ------------------------------------------------------------------------------ history
def test_history_add_list_open_delete(tmp_path):
    hist = RunHistory(tmp_path / "h.sqlite3")
    doc = {"config": {"method": "dp-gaussian", "epsilon": math.inf, "simulation": True},
           "dataset": {"name": "toy"}, "overall": {"mar": float("nan")}, "created": "2026-11-25T07:00:00+00:00"}
    a = hist.add("run", doc, dataset_key="ds-1")
    b = hist.add("sweep", {"config": {"method": "kmeans"}, "epsilons": [1.0], "dataset": {"name": "toy"}},
                 dataset_key="ds-2")
    rows = hist.list()
    assert [r["id"] for r in rows] == [b, a]
    assert rows[1]["simulation"] and rows[1]["kind"] == "run" and "dp-gaussian" in rows[1]["title"]
    assert [r["id"] for r in hist.list(dataset_key="ds-1")] == [a]
    got = hist.open(a)
    assert got["document"]["config"]["epsilon"] == "inf" and got["document"]["overall"]["mar"] is None
    hist.delete(a)
    assert [r["id"] for r in hist.list()] == [b]
    with pytest.raises(Exception, match="no stored result"):
        hist.open(a)
    with pytest.raises(Exception, match="kind"):
        hist.add("nonsense", {})


# ------------------------------------------------------------------------------ CLI
def _cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_budget_commands_and_rerun_charged_again(tmp_path, capsys):
    """A re-run of the same data is a release too — charged, and refused past the cap."""
    store = str(tmp_path / "cli.sqlite3")
    data = ["--data", "sample:clinic"]
    rc, out, _ = _cli(capsys, "budget", "show", *data, "--store", store)
    assert rc == 0 and "does not exist: nothing has been charged there" in out
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--store", store, "--epsilon", "1.5", "--delta", "1e-5")
    assert rc == 0 and "ε = 1.5" in out
    run = ["run", *data, "--method", "dp-gaussian", "--k", "3", "--epsilon", "1", "--store", store]
    rc, out, err = _cli(capsys, *run)
    assert rc == 0, err
    # one Gaussian release at (1, 1e-6) is also (0.89, 1e-5/2)-DP: the zCDP filter states the smaller
    # (0.89275…, shown rounded up: a spend is never shown below what was spent)
    assert "spent ε = 0.8928 at δ = 1e-05" in out and (
        "(zCDP; cap ε = 1.5; every release composed at the budget's δ, while the lines above state ε at δ = 1e-06)"
        in out)
    # The same data again is the same dataset: the second release would pass the cap.
    rc, out, err = _cli(capsys, *run)
    assert rc == 2 and "refused: privacy budget cap reached" in err and "budget set-cap" in err
    assert "Traceback" not in err
    rc, out, err = _cli(capsys, *run[:-2], "--epsilon", "0.5", "--store", store, "--simulation")
    assert rc == 0, err
    rc, out, _ = _cli(capsys, "budget", "show", *data, "--store", store, "--json")
    view = json.loads(out)
    assert view["cap_epsilon"] == 1.5
    assert all(e["spent_epsilon"] <= 1.0 + 1e-12 and e["n_releases"] <= 1 for e in view["entities"])
    rc, out, _ = _cli(capsys, "budget", "releases", *data, "--store", store)
    assert rc == 0 and "simulation: not charged" in out and out.count("dp-gaussian") == 2
    rc, out, _ = _cli(capsys, "budget", "list", "--store", store, "--json")
    (row,) = json.loads(out)
    assert row["name"] == "sample: clinic" and row["cap_epsilon"] == 1.5 and row["n_releases"] == 2
    hist = RunHistory(store).list()
    assert [h["kind"] for h in hist] == ["run", "run"] and hist[0]["simulation"]
    # Sweeps are charged per point before any is computed: 2 points of ε = 1 (+ 2 of individual) cannot fit.
    rc, out, err = _cli(capsys, "sweep", *data, "--method", "dp-gaussian", "--k", "3", "--epsilons", "1",
                        "--seeds", "0,1", "--references", "individual", "--store", store)
    assert rc == 2 and "4 releases planned" in err and "this would bring it to ε = 3" in err


def test_cli_non_private_needs_permission_on_capped_data(tmp_path, capsys):
    store = str(tmp_path / "np.sqlite3")
    data = ["--data", "sample:clinic"]
    _cli(capsys, "budget", "set-cap", *data, "--store", store, "--epsilon", "5")
    run = ["run", *data, "--method", "kmeans", "--k", "3", "--store", store]
    rc, _, err = _cli(capsys, *run)
    assert rc == 2 and "non-private" in err and "--allow-non-private" in err
    rc, out, err = _cli(capsys, *run, "--allow-non-private")
    assert rc == 0, err
    rc, out, _ = _cli(capsys, "budget", "show", *data, "--store", store)
    assert "no overall guarantee" in out


def test_cli_sweep_of_a_non_private_point_needs_permission_on_capped_data(tmp_path, capsys):
    """A sweep's ε = inf point is a release without a DP guarantee: on data with a cap it is refused, naming
    the flag, until --allow-non-private is given."""
    store = str(tmp_path / "np.sqlite3")
    data = ["--data", "sample:clinic"]
    _cli(capsys, "budget", "set-cap", *data, "--store", store, "--epsilon", "5")
    sweep = ["sweep", *data, "--method", "dp-popularity", "--epsilons", "inf", "--seeds", "0", "--references", "",
             "--store", store]
    rc, _, err = _cli(capsys, *sweep)
    assert rc == 2 and "non-private" in err and "--allow-non-private" in err, err
    rc, out, err = _cli(capsys, *sweep, "--allow-non-private")
    assert rc == 0, err
    # the sweep's own last lines say where it was charged, never that nothing was
    (line,) = [ln for ln in out.splitlines() if ln.startswith("budget")]
    assert line.startswith(f"budget ({store}): no overall guarantee for any entity"), line
    rc, out, _ = _cli(capsys, "budget", "show", *data, "--store", store)
    assert "no overall guarantee" in out


def test_cli_budget_line_states_the_runs_own_delta_beside_the_budgets(tmp_path, capsys):
    """After a run the budget line composes at the budget's δ; where the run's lines state ε at another δ it
    names that δ — the run's own, whatever the default — and at the budget's own δ it says nothing more."""
    store = str(tmp_path / "d.sqlite3")
    data = ["--data", "sample:clinic"]
    _cli(capsys, "budget", "set-cap", *data, "--store", store, "--epsilon", "50", "--delta", "1e-5")
    run = ["run", *data, "--method", "dp-popularity", "--epsilon", "1", "--store", store]
    rc, out, err = _cli(capsys, *run, "--delta", "1e-7")
    assert rc == 0, err
    (line,) = [ln for ln in out.splitlines() if ln.startswith("budget (")]
    assert "at δ = 1e-05" in line and "while the lines above state ε at δ = 1e-07)" in line, line
    rc, out, err = _cli(capsys, *run, "--delta", "1e-5")
    assert rc == 0, err
    (line,) = [ln for ln in out.splitlines() if ln.startswith("budget (")]
    assert "at δ = 1e-05" in line and "the lines above" not in line, line


def test_cli_corrupted_store_is_one_line_error(tmp_path, capsys):
    p = tmp_path / "bad.sqlite3"
    p.write_bytes(b"garbage" * 500)
    rc, _, err = _cli(capsys, "budget", "show", "--data", "sample:clinic", "--store", str(p))
    assert rc == 2 and err.startswith("error: the store") and "Traceback" not in err


def test_cli_audit_is_charged_as_non_private_analysis_of_its_entity(tmp_path, capsys):
    store = str(tmp_path / "audit.sqlite3")
    data = ["--data", "sample:clinic"]
    _cli(capsys, "budget", "set-cap", *data, "--store", store, "--epsilon", "5")
    audit = ["audit", *data, "--entity", "hospital 02", "--methods", "dp-gaussian", "--epsilons", "1",
             "--targets", "synthetic", "--runs", "8", "--attacks", "distance", "--k", "3", "--store", store]
    rc, _, err = _cli(capsys, *audit)
    assert rc == 2 and "non-private" in err and "--allow-non-private" in err
    rc, out, err = _cli(capsys, *audit, "--allow-non-private")
    assert rc == 0, err
    bal = {b.entity: b for b in BudgetOdometer(store).balance(BudgetOdometer(store).datasets()[0]["key"])}
    assert bal["hospital 02"].void and bal["hospital 02"].spent_epsilon == 0
    assert not bal["hospital 01"].void and bal["hospital 01"].n_releases == 0
    assert RunHistory(store).list()[0]["kind"] == "audit"


def test_a_refused_audit_of_a_view_the_store_does_not_know_leaves_no_row(tmp_path, capsys):
    """Only a charge or a cap registers data: an audit refused on a capped account's people (another view
    of them) leaves no name, no match and no entity map of it in the store, as a refused run leaves none."""
    store = str(tmp_path / "audit.sqlite3")
    _cli(capsys, "budget", "set-cap", "--data", "sample:clinic", "--store", store, "--epsilon", "5")
    audit = ["audit", "--data", "sample:clinic", "--federation", "region", "--entity", "Midwest", "--methods",
             "dp-gaussian", "--epsilons", "1", "--targets", "synthetic", "--runs", "8", "--attacks", "distance",
             "--k", "3", "--store", store]
    rc, _, err = _cli(capsys, *audit)
    assert rc == 2 and "non-private" in err and "--allow-non-private" in err
    assert [(d["name"], d["alias_of"]) for d in BudgetOdometer(store).datasets()] == [("sample: clinic", None)]


def test_sweep_points_outside_the_plan_are_charged_after_the_fact(odo):
    """Safety net: if the sweep ran a point its plan did not list, the odometer records it anyway."""
    from dpfed_core.evaluation.budget import settle_sweep

    ds = make_dataset()
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-6, k=2)
    plans = plan_sweep(ds, cfg, [0.5], [0], ["individual"])
    odo.set_cap(ds, 1.0)
    with odo.charge(ds, plans) as res:
        doc = {"config": cfg.to_dict(), "runs": [
            {"method": "dp-gaussian", "epsilon": 0.5, "seed": 0},
            {"method": "individual", "epsilon": math.inf, "seed": 0},
            {"method": "dp-gaussian", "epsilon": 2.0, "seed": 0}]}     # not planned, and past the cap
    extra = settle_sweep(odo, res, ds, doc)
    assert [(p.method, p.epsilon) for p in extra] == [("dp-gaussian", 2.0)]
    assert {b.entity: b.spent_epsilon for b in odo.balance(ds)}["A"] == pytest.approx(2.5)
    assert "outside the sweep's plan" in odo.releases(ds)[0]["note"]
    assert settle_sweep(odo, res, ds, {"config": cfg.to_dict(), "runs": doc["runs"][:2]}) == []


# ------------------------------------------------------------------------------ tight composition
def gauss_plan(eps: float, delta: float = 1e-6, method: str = "dp-cooccurrence", kind: str = "run",
               batch: bool = False, entities=("A", "B", "C")) -> PlannedRelease:
    from dpfed_core.evaluation.budget import planned_rho

    rho, gaussian = planned_rho(method, eps, delta)
    return PlannedRelease(kind, method, eps, delta, {e: (eps, delta) for e in entities}, seed=0, rho=rho,
                          gaussian=gaussian, batch=batch)


def test_six_gaussian_releases_fit_where_basic_composition_refuses_the_fifth(odo, tmp_path):
    ds = make_dataset()
    odo.set_cap(ds, 4.5, 1e-5)
    for _ in range(6):
        odo.reserve(ds, [gauss_plan(1.0)]).close()
    bal = {b.entity: b for b in odo.balance(ds)}["A"]
    assert bal.accountant == "zCDP" and bal.spent_epsilon <= 4.5 and bal.basic_epsilon == pytest.approx(6.0)
    # the same releases without a ρ (basic composition only) stop at four
    basic = BudgetOdometer(tmp_path / "basic.sqlite3")
    basic.set_cap(ds, 4.5, 1e-5)
    for _ in range(4):
        basic.reserve(ds, [dp_plan(1.0)]).close()
    with pytest.raises(BudgetRefused):
        basic.reserve(ds, [dp_plan(1.0)])


def test_a_run_and_its_comparison_are_checked_as_they_will_be_charged_not_as_a_batch(odo):
    """A run and the method compared with it are two releases, not a sweep's batch: the cap check
    composes them as the store will (zCDP ≈ 1.34 for two Gaussian releases at ε = 1), so a cap of 1.3
    refuses them though their PLD as one batch (≈ 1.23) would fit; a sweep's two points do fit."""
    ds = make_dataset()
    odo.set_cap(ds, 1.3, 1e-5)
    with pytest.raises(BudgetRefused):
        odo.reserve(ds, [gauss_plan(1.0), gauss_plan(1.0, kind="comparison")])
    assert odo.releases(ds) == []
    odo.reserve(ds, [gauss_plan(1.0, kind="sweep point", batch=True) for _ in range(2)]).close()
    assert max(b.spent_epsilon for b in odo.balance(ds)) <= 1.3


def test_default_sweep_charge_per_entity(odo):
    """One method's default grid × 3 seeds is one non-adaptive batch: PLD ≤ 22 (basic: 43.2); with
    dp-popularity at every ε as well, at most twice that."""
    ds = make_dataset()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, delta=1e-6)
    grid, seeds = [0.1, 0.3, 1, 3, 10, math.inf], [0, 1, 2]
    alone = plan_sweep(ds, cfg, grid, seeds, ["individual"])
    assert all(p.batch for p in alone) and sum(p.rho is not None for p in alone) == 15
    pre = odo.preview(ds, alone)
    assert pre["spend"] == math.inf and pre["non_private"]              # the ε = ∞ point
    assert pre["dp_spend"] <= 22.0 and pre["accountant"].startswith("basic + PLD")
    both = plan_sweep(ds, cfg, grid, seeds, ["individual", "dp-popularity", "central", "random-v", "popularity"])
    odo.reserve(ds, both, allow_non_private=True).close()
    bal = {b.entity: b for b in odo.balance(ds)}["A"]
    assert bal.spent_epsilon <= 2 * 22.0 and bal.basic_epsilon <= 2 * 22.0
    left = odo.runs_left(ds)
    assert left["n"] is None and left["kind"] == "sweep point"


def test_ledger_rho_from_gaussian_rows_and_none_for_approximate_selections():
    from dpfed_core.evaluation.budget import ledger_rhos

    rows = [{"entity": "A", "mechanism": "Gaussian share of a secure sum", "epsilon": 0.5, "delta": 1e-6,
             "sensitivity": 1.0, "noise_scale": 4.0},
            {"entity": "B", "mechanism": "discrete Laplace", "epsilon": 0.2, "delta": 0.0,
             "sensitivity": 1.0, "noise_scale": 5.0},
            {"entity": "C", "mechanism": "private partition (randomised threshold)", "epsilon": 0.2,
             "delta": 1e-7, "sensitivity": 1.0, "noise_scale": 5.0}]
    r = ledger_rhos({"ledger": rows})
    assert r["A"][0] == pytest.approx(1 / 32, rel=1e-3) and r["A"][1]
    assert r["B"][0] == pytest.approx(0.02) and not r["B"][1]
    assert r["C"] == (None, False)


def test_a_run_settles_rho_from_its_ledger_and_states_the_accountant(tmp_path):
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.service import charged_run

    ds = load_data("sample:clinic")
    store = Store(tmp_path / "run.sqlite3")
    doc, _, _ = charged_run(store, ds, RunConfig(method="dp-popularity", epsilon=1.0))
    acct = doc["privacy"]["accountant"]
    assert "zCDP" in acct["across_releases"] and acct["delta"] == pytest.approx(1e-5)
    assert acct["non_private_entities"] == []
    with store.read() as con:
        rhos = [r[0] for r in con.execute("SELECT rho FROM charges")]
    from dpfed_core.evaluation.budget import planned_rho

    assert len(rhos) == ds.n_entities and all(0 < r <= planned_rho("dp-popularity", 1.0, 1e-6)[0] for r in rhos)
    doc, _, _ = charged_run(store, ds, RunConfig(method="central", epsilon=math.inf))
    assert doc["privacy"]["accountant"]["non_private_entities"] == list(ds.entity_names)


def test_each_release_of_a_run_is_settled_from_its_own_ledger(odo):
    """A run and its comparison settle in the order they were planned, each from its own ledger: the
    approximate-DP selection's release keeps no ρ (it composes basically), the Gaussian one its ρ —
    never the other's."""
    from dpfed_core.evaluation.budget import settle_run

    ds = make_dataset()
    plans = [dp_plan(1.0), gauss_plan(1.0, kind="comparison")]
    res = odo.reserve(ds, plans)

    def doc(rows):
        return {"privacy": {"ledger": [{"entity": e, **r} for e in ("A", "B", "C") for r in rows]}}

    selection = {"stage": "candidates", "mechanism": "partition selection (OpenDP Laplace threshold)",
                 "epsilon": 1.0, "delta": 1e-6, "sensitivity": 1.0, "noise_scale": 1.0, "rho": None}
    gaussian = {"stage": "release", "mechanism": "Gaussian share of a secure sum", "epsilon": 1.0,
                "delta": 1e-6, "sensitivity": 1.0, "noise_scale": 3.0, "rho": 0.05}
    settle_run(res, [doc([selection]), doc([gaussian])])
    rho = {r["id"]: r["max_charge_rho"] for r in odo.releases(ds)}
    assert rho[res.release_ids[0]] is None and rho[res.release_ids[1]] == pytest.approx(0.05)


def test_schema_v1_store_is_migrated_and_keeps_its_spend(tmp_path):
    from dpfed_core.privacy import store as store_mod

    path = tmp_path / "old.sqlite3"
    con = sqlite3.connect(path)
    for stmt in store_mod._statements(store_mod._SCHEMA_V1):
        con.execute(stmt)
    con.execute("INSERT INTO schema_version VALUES (1)")
    ds = make_dataset()
    key = dataset_key(ds)
    con.execute("INSERT INTO datasets VALUES (?, 'toy', '[\"A\", \"B\", \"C\"]', 't', 't')", (key,))
    con.execute("INSERT INTO caps VALUES (?, 3.0, 1e-5, 't', 0)", (key,))
    con.execute("INSERT INTO releases (dataset_key, operation, kind, method, epsilon, delta, seed, simulation, "
                "non_private, status, created) VALUES (?, 'op', 'run', 'dp-gaussian', 2.0, 1e-6, 0, 0, 0, "
                "'released', 't')", (key,))
    con.execute("INSERT INTO charges VALUES (1, 'A', 2.0, 1e-6)")
    con.commit()
    con.close()
    odo = BudgetOdometer(path)
    assert odo.store.schema_version() == SCHEMA_VERSION == 4
    assert [d["key"] for d in odo.datasets()] == [odo.account_key(ds)] != [key]
    assert {b.entity: b.spent_epsilon for b in odo.balance(ds)}["A"] == pytest.approx(2.0)
    with pytest.raises(BudgetRefused):
        odo.reserve(ds, [dp_plan(1.5)])


# ------------------------------------------------------------------------------ the people
def _reexport(ds: FederatedDataset, *, relabel=False, **kw) -> FederatedDataset:
    from dpfed_core.data.synthetic import reexport

    # relabelled like a data owner renaming its sites: "hospital 3" → "site-hospital 3"
    return reexport(ds, relabel="site-" if relabel else None, name="re-export.csv", **kw)


@pytest.mark.parametrize("case", [dict(pseudonyms=True, reorder=True), dict(add=5), dict(remove=5),
                                  dict(relabel=True), dict(pseudonyms=True, reorder=True, add=3, remove=3,
                                                           relabel=True)],
                         ids=["pseudonyms+reordered", "rows-added", "rows-removed", "entities-relabelled", "all"])
def test_a_reexport_of_the_same_people_meets_the_same_cap(tmp_path, case):
    from dpfed_core.data.loaders import load_data

    ds = load_data("sample:clinic")
    odo = BudgetOdometer(tmp_path / "people.sqlite3")
    odo.set_cap(ds, 2.0, 1e-5)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.5, 1e-6,
                                    {e: (1.5, 1e-6) for e in ds.entity_names})]).close()
    other = _reexport(ds, **case)
    assert dataset_key(other) != dataset_key(ds)
    ident = odo.identity(other)
    assert ident.alias_of == odo.account_key(ds) and ident.similarity >= 0.9
    assert "same people" in ident.describe()
    with pytest.raises(BudgetRefused) as exc:
        odo.reserve(other, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6,
                                           {e: (1.0, 1e-6) for e in other.entity_names})])
    assert "same people" in str(exc.value)
    first = other.entity_names[0]
    assert odo.preview(other, [PlannedRelease("run", "dp-gaussian", 0.5, 0.0, {first: (0.5, 0.0)})])["fits"]


def test_what_a_reexport_spent_binds_the_original_dataset_too(tmp_path):
    """The account is the people's, whichever view of them spent first: releases charged through a
    re-export count in the original dataset's balance and cap, its release list and its runs left."""
    from dpfed_core.data.loaders import load_data

    ds = load_data("sample:clinic")
    odo = BudgetOdometer(tmp_path / "first.sqlite3")
    odo.set_cap(ds, 2.0, 1e-5)
    other = _reexport(ds, pseudonyms=True, reorder=True)
    assert odo.identity(other).alias_of == odo.account_key(ds)
    odo.reserve(other, [PlannedRelease("run", "dp-gaussian", 1.5, 1e-6,
                                       {e: (1.5, 1e-6) for e in other.entity_names})]).close()
    assert max(b.spent_epsilon for b in odo.balance(ds)) == pytest.approx(1.5)
    assert len(odo.releases(ds)) == 1 and odo.runs_left(ds)["n"] == 0
    with pytest.raises(BudgetRefused):
        odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in ds.entity_names})])


def test_an_entity_of_a_reexport_whose_people_are_not_recognised_is_charged_to_every_entity_of_the_account(
        tmp_path):
    """A re-export recognised as the stored people, with one entity none of whose users match (a few
    people relabelled whose rows changed past recognition): a release of that entity alone is charged
    to every entity of the account, never to a fresh account that starts from zero."""
    ds = sparse_dataset(1)
    odo = BudgetOdometer(tmp_path / "p.sqlite3")
    odo.set_cap(ds, 2.0, 1e-5)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.5, 1e-6, {e: (1.5, 1e-6) for e in ds.entity_names})]
                ).close()
    same = _reexport(ds, pseudonyms=True, reorder=True, relabel=True)
    rng = np.random.default_rng(5)
    extra = sp.csr_matrix((rng.integers(1, 6, 12).astype(float), (np.repeat(np.arange(3), 4),
                                                                    rng.choice(ds.n_items, 12, replace=False))),
                          shape=(3, ds.n_items))
    other = FederatedDataset.from_parts(sp.vstack([same.X, extra]).tocsr(),
                                        np.concatenate([np.asarray(same.entity_names, dtype=object)[
                                            same.entity_of_user], ["tiny"] * 3]),
                                        item_ids=ds.item_ids, value_kind=ds.value_kind, value_max=ds.value_max,
                                        name="re-export with a few others.csv")
    assert odo.identity(other).alias_of == odo.account_key(ds)
    tiny_alone = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {"tiny": (1.0, 1e-6)})
    with pytest.raises(BudgetRefused):  # 1.5 spent by every entity of the account: 1.0 more passes 2.0
        odo.reserve(other, [tiny_alone])
    odo.reserve(other, [PlannedRelease("run", "dp-gaussian", 0.25, 1e-6, {"tiny": (0.25, 1e-6)})]).close()
    spent = {b.entity: b.spent_epsilon for b in odo.balance(ds)}
    assert spent["A"] == spent["B"] == spent["C"] == pytest.approx(1.75)


def test_an_account_entity_reached_through_several_new_entities_is_charged_their_largest_charge():
    """A re-export that splits one of the account's entities in two (disjoint people of one site) charges
    that entity the larger of the two charges on every coordinate — parallel composition over disjoint
    people, never the smaller; an entity not in the map is charged under its own name."""
    from dpfed_core.privacy.budget_records import mapped_charge_rows

    charges = {"3a": (1.0, 1e-6, 0.05, True), "3b": (2.0, 3e-6, 0.2, True), "4": (0.5, 1e-7, None, False)}
    rows = mapped_charge_rows(7, charges, {"3a": ["hospital 3"], "3b": ["hospital 3"]})
    assert sorted(rows) == sorted([(7, "hospital 3", 2.0, 3e-6, 0.2, 1), (7, "4", 0.5, 1e-7, None, 0)])
    rows = mapped_charge_rows(8, {"3b": (2.0, 3e-6, 0.2, True), "3a": (1.0, 1e-6, None, False)},
                              {"3a": ["hospital 3"], "3b": ["hospital 3"]})
    assert rows == [(8, "hospital 3", 2.0, 3e-6, None, 0)]  # one of them not Gaussian: no ρ to compose by


def test_a_charge_of_delta_alone_is_kept_and_only_a_charge_of_nothing_is_left_out():
    from dpfed_core.privacy.budget_records import mapped_charge_rows

    rows = mapped_charge_rows(9, {"A": (0.0, 1e-7, None, False), "B": (0.0, 0.0, None, False)}, None)
    assert rows == [(9, "A", 0.0, 1e-7, None, 0)]


def sparse_dataset(seed: int, n: int = 300, m: int = 400, density: float = 0.05) -> FederatedDataset:
    rng = np.random.default_rng(seed)
    X = sp.random(n, m, density=density, format="csr", random_state=rng, data_rvs=lambda k: rng.integers(1, 6, k))
    X[np.arange(n), rng.integers(0, m, n)] = 3.0  # no empty rows
    return FederatedDataset.from_parts(sp.csr_matrix(X), np.array(["A", "B", "C"])[np.arange(n) % 3],
                                       user_ids=np.array([f"u{i}" for i in range(n)]),
                                       item_ids=np.array([f"i{j}" for j in range(m)]),
                                       value_kind="ratings", value_max=5.0, name=f"sparse {seed}")


def test_different_people_get_their_own_budget(tmp_path):
    odo = BudgetOdometer(tmp_path / "p.sqlite3")
    a, b = sparse_dataset(0), sparse_dataset(7)
    odo.set_cap(a, 1.0)
    odo.reserve(a, [dp_plan(1.0)]).close()
    assert odo.identity(b).alias_of is None
    odo.reserve(b, [dp_plan(1.0)]).close()


def test_fingerprint_ignores_user_ids_and_entity_names():
    from dpfed_core.privacy.odometer import match_people, people_fingerprint

    ds = sparse_dataset(1)
    same = _reexport(ds, pseudonyms=True, reorder=True, relabel=True)
    m = match_people(people_fingerprint(same), people_fingerprint(ds))
    assert m.similarity == 1.0 and m.matched_new == ds.n_users
    assert match_people(people_fingerprint(sparse_dataset(2)), people_fingerprint(ds)).similarity < 0.05


# ------------------------------------------------------------------------------ the store is safe
def test_raising_a_cap_needs_confirmation_and_every_change_is_logged(odo):
    ds = make_dataset()
    odo.set_cap(ds, 5.0)
    odo.set_cap(ds, 3.0)                                   # lowering: free
    with pytest.raises(BudgetRefused) as exc:
        odo.set_cap(ds, 4.0)
    assert "--confirm-raise" in exc.value.render(CLI_NAMES)
    with pytest.raises(BudgetRefused):
        odo.set_cap(ds, math.inf)                          # removing a cap is a raise too
    odo.set_cap(ds, 4.0, confirm_raise=True)
    log = odo.cap_changes(ds)
    assert [(c["new_epsilon"], bool(c["raised"])) for c in log] == [(4.0, True), (3.0, False), (5.0, False)]
    odo.reserve(ds, [dp_plan(2.0)]).close()
    with pytest.raises(BudgetRefused, match="below what is already spent"):
        odo.set_cap(ds, 1.0)                               # the CLI and the dashboard alike
    assert odo.cap(odo.account_key(ds)) == (4.0, 1e-5)         # refused: nothing changed
    assert odo.cap_changes(ds)[0]["new_epsilon"] == 4.0


def test_raising_only_the_caps_delta_needs_confirmation_too(odo):
    """δ is budget as much as ε: a cap whose δ alone grows is a raise, refused unless confirmed (and
    nothing changes); lowering δ alone is free."""
    ds = make_dataset()
    odo.set_cap(ds, 3.0, 1e-6)
    odo.set_cap(ds, 3.0, 1e-7)
    with pytest.raises(BudgetRefused, match="raises the budget cap"):
        odo.set_cap(ds, 3.0, 1e-5)
    assert odo.cap(odo.account_key(ds)) == (3.0, 1e-7)
    odo.set_cap(ds, 3.0, 1e-5, confirm_raise=True)
    assert [(c["new_delta"], bool(c["raised"])) for c in odo.cap_changes(ds)] == [
        (1e-5, True), (1e-7, False), (1e-6, False)]


def test_cli_dry_run_prints_the_planned_charge_and_charges_nothing(tmp_path, capsys):
    store = tmp_path / "dry.sqlite3"
    data = ["--data", "sample:clinic"]
    rc, out, err = _cli(capsys, "sweep", *data, "--dry-run", "--store", str(store))
    assert rc == 0, err
    assert "spends ε = ∞" in out and "its DP releases alone ε ≈" in out and "nothing charged" in out
    assert not store.exists()
    _cli(capsys, "budget", "set-cap", *data, "--store", str(store), "--epsilon", "3")
    rc, out, err = _cli(capsys, "run", *data, "--method", "dp-cooccurrence", "--epsilon", "1", "--dry-run",
                        "--store", str(store))
    assert rc == 0 and "of the 3 left per entity" in out and "fits" in out and "REFUSED" not in out
    rc, out, err = _cli(capsys, "run", *data, "--method", "dp-cooccurrence", "--epsilon", "5", "--dry-run",
                        "--store", str(store))
    assert rc == 0 and "would be REFUSED" in out and "(fits)" not in out  # said before anything is run
    rc, out, err = _cli(capsys, "audit", *data, "--entity", "0", "--dry-run", "--store", str(store))
    # an audit reads the entity's exact rows (non-private): refused under a cap unless allowed, as the real one
    assert rc == 0 and "would be REFUSED: add --allow-non-private" in out and "(fits)" not in out
    rc, out, err = _cli(capsys, "audit", *data, "--entity", "0", "--dry-run", "--allow-non-private", "--store",
                        str(store))
    assert rc == 0 and "would be REFUSED" not in out and "allowed by --allow-non-private" in out
    assert BudgetOdometer(store).releases(BudgetOdometer(store).datasets()[0]["key"]) == []
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--store", str(store), "--epsilon", "9")
    assert rc == 2
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--store", str(store), "--epsilon", "9", "--confirm-raise")
    assert rc == 0 and "raised, confirmed" in out


def test_runs_left_reads_as_a_refusal_at_none_and_agrees_in_number():
    from dpfed_core.evaluation.budget import runs_left_text

    last = {"kind": "run", "method": "dp-cooccurrence", "epsilon": 1.0}
    assert runs_left_text(None) is None
    assert runs_left_text({**last, "n": None}).startswith("no cap set — any number of further releases like the last")
    none = runs_left_text({**last, "n": 0})
    assert none.startswith("none — another release like the last operation (run of dp-cooccurrence at ε = 1")
    assert none.endswith("would be refused under the cap") and "0 more" not in none
    assert runs_left_text({**last, "n": 1}).endswith("(run of dp-cooccurrence at ε = 1, same points) fits under the cap")
    assert runs_left_text({**last, "n": 3}).startswith("3 more like the last operation")
    assert runs_left_text({**last, "n": 3}).endswith(" fit under the cap")
    assert runs_left_text({**last, "n": 200}).startswith("at least 200 more")
    assert "at ε = ∞" in runs_left_text({**last, "epsilon": math.inf, "n": None})


def test_budget_show_of_data_nothing_was_charged_to_says_so_instead_of_an_empty_table(tmp_path, capsys):
    store = str(tmp_path / "empty.sqlite3")
    data = ["--data", "sample:clinic"]
    _cli(capsys, "budget", "set-cap", "--data", "sample:synthetic", "--store", store, "--epsilon", "2")
    rc, out, err = _cli(capsys, "budget", "show", *data, "--store", store)
    assert rc == 0, err
    assert "nothing charged to these data yet — every entity has its whole budget" in out
    assert "spent ε" not in out and "runs left" not in out
    rc, out, err = _cli(capsys, "budget", "show", "--data", "sample:synthetic", "--store", store)
    assert rc == 0 and "nothing charged" not in out and out.count("      2        0") == 10


def test_a_finite_cap_states_the_delta_range_it_accepts(odo):
    ds = make_dataset()
    with pytest.raises(ConfigError, match=r"δ must be in \(0, 0\.01\), got 0\.5"):
        odo.set_cap(ds, 1.0, 0.5)
    with pytest.raises(ConfigError, match=r"δ must be in \[0, 0\.01\), got -1"):
        odo.set_cap(ds, math.inf, -1.0)
    odo.set_cap(ds, math.inf, 0.0)                      # removing the cap needs no δ


def test_cli_budget_show_states_accountant_and_runs_left(tmp_path, capsys):
    store = str(tmp_path / "show.sqlite3")
    data = ["--data", "sample:clinic"]
    _cli(capsys, "budget", "set-cap", *data, "--store", store, "--epsilon", "4.5")
    rc, _, err = _cli(capsys, "run", *data, "--method", "dp-popularity", "--epsilon", "1", "--store", store)
    assert rc == 0, err
    rc, out, _ = _cli(capsys, "budget", "show", *data, "--store", store)
    assert "accountant: per entity, the smaller of basic composition" in out
    assert "runs left: " in out and "more like the last operation" in out
    # a second run spends less than its ε: the dry run says why, in the dashboard's words
    rc, out, _ = _cli(capsys, "run", *data, "--method", "dp-popularity", "--epsilon", "1", "--dry-run",
                      "--store", store)
    (line,) = [x for x in out.splitlines() if x.startswith("planned charge:")]
    assert re.search(r"less than the requested ε = 1 because it composes with the ε ≈ 0\.9\d* already spent on "
                     "these data", line), line


def test_the_spend_reason_blames_composition_only_on_the_entity_that_composed():
    """Data recognised as a stored account's people plus an entity the account never held: the largest
    increase is that fresh entity's (below ε = 3 only by the budget's δ), so it is not said to compose
    with what another entity spent; the most-spent entity's own increase is."""
    from dpfed_core.evaluation.budget import spend_reason
    from dpfed_core.privacy.odometer import PlannedRelease

    plan = [PlannedRelease("run", "dp-cooccurrence", 3.0, 1e-6, {"a": (3.0, 1e-6), "b": (3.0, 1e-6)})]
    p = {"text": "spends ε ≈ 2.79 per entity (no cap set)", "spend": 2.79, "after": 7.76, "binding_spend": 0.787,
         "simulation": False, "identity": ""}
    line = spend_reason(p, plan)
    assert "less than the requested ε = 3 because it composes" not in line, line
    assert "the most-spent entity adds less, ε ≈ 0.787, because it composes with the ε ≈ 6.97 it has" in line, line
    same = spend_reason({**p, "spend": 0.787, "text": "spends ε ≈ 0.787 per entity (no cap set)"}, plan)
    assert "less than the requested ε = 3 because it composes with the ε ≈ 6.97 already spent" in same, same


def test_simulation_without_a_named_store_opens_none(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home-data"
    monkeypatch.delenv("DPFED_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    rc, out, err = _cli(capsys, "run", "--data", "sample:clinic", "--method", "dp-popularity", "--simulation")
    assert rc == 0, err
    assert "no store opened" in out and not home.exists()


def test_nothing_in_the_suite_opens_the_default_store():
    """conftest points DPFED_STORE and XDG_DATA_HOME at a temporary directory and guards Store against
    the real home directory's store: opening it fails the test that does."""
    real = Path.home() / ".local" / "share" / "dpfed" / "dpfed.sqlite3"
    assert default_store_path() != real and str(default_store_path()).startswith(os.environ["DPFED_STORE"][:5])
    with pytest.raises(AssertionError, match="home directory's store"):
        Store(real)


def test_a_simulation_on_real_data_is_no_back_door(tmp_path):
    """A simulation run's noise is a function of the public seed, so on people's records it
    is an exact release — refused on a capped dataset unless non-private releases are allowed, and then
    charged as non-private (ε = ∞); no refusal advises it. Generated samples are unaffected."""
    from dpfed_core.config import RunConfig
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.service import execute_run

    from dataclasses import replace

    real = replace(load_data("sample:clinic"), generated=False)  # the same rows, as a hospital's export
    store = Store(tmp_path / "s.sqlite3")
    odo = BudgetOdometer(store)
    key = odo.register(real)
    odo.set_cap(key, 10.0, 1e-5)
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, simulation=True, rank=3, max_iter=20)
    with pytest.raises(BudgetRefused) as err:
        execute_run(real, cfg, store=store)
    from dpfed_core.privacy.odometer import CLI_CONTROLS

    text = err.value.render(CLI_CONTROLS)
    assert "--allow-non-private" in text and "--simulation" not in text  # no refusal advises a simulation
    # what a dry run and the Run button say before it: why it counts as non-private, not that no noise is added
    from dpfed_core.evaluation.budget import plan_run, planned_charge

    said = planned_charge(store, real, plan_run(real, cfg))["text"]
    assert said.startswith("spends ε = ∞: a simulation on people's records (its noise is reproducible"), said
    assert "exact data-derived values leave" not in said
    out = execute_run(real, cfg, store=store, allow_non_private=True)
    bal = {b.entity: b for b in odo.balance(key)}
    assert all(b.n_non_private >= 1 for b in bal.values())
    sample = load_data("sample:clinic")
    assert sample.generated
    store2 = Store(tmp_path / "s2.sqlite3")
    odo2 = BudgetOdometer(store2)
    key2 = odo2.register(sample)
    odo2.set_cap(key2, 10.0, 1e-5)
    execute_run(sample, cfg, store=store2)  # a generated sample: recorded, not charged, not refused
    assert all(b.spent_epsilon == 0 and b.n_non_private == 0 for b in odo2.balance(key2))
    assert out.doc["privacy"]["simulation"]


# ------------------------------------------------------------------------------ the store's transactions
def test_a_write_is_durable_checks_references_and_holds_the_write_lock_from_its_start(tmp_path):
    store = Store(tmp_path / "private" / "s.sqlite3", timeout=0.1)
    assert oct(os.stat(store.path.parent).st_mode & 0o777) == oct(0o700)  # results derive from private data
    other = Store(store.path, timeout=0.1)
    with store.write() as con:
        # a committed charge survives a power cut (FULL = 2) and a charge needs its release (foreign keys on)
        assert con.execute("PRAGMA synchronous").fetchone()[0] == 2
        assert con.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        # the budget check reads before it writes: the lock is taken at BEGIN, or two sessions could both
        # read the same remaining budget
        with pytest.raises(StoreError, match="locked by another session"):
            with other.write():
                pass
    with pytest.raises(StoreError, match="FOREIGN KEY"):
        with store.write() as con:
            con.execute("INSERT INTO charges (release_id, entity, epsilon, delta) VALUES (12345, 'A', 1.0, 0.0)")


def test_a_write_that_fails_midway_leaves_nothing_behind(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    with pytest.raises(RuntimeError):
        with store.write() as con:
            con.execute("INSERT INTO meta (name, value) VALUES ('half', 'done')")
            raise RuntimeError("the release failed before it was charged in full")
    with store.read() as con:
        assert con.execute("SELECT COUNT(*) FROM meta WHERE name = 'half'").fetchone()[0] == 0


def test_a_store_that_cannot_be_set_up_leaves_no_file(tmp_path, monkeypatch):
    from dpfed_core.privacy import store as store_mod

    monkeypatch.setattr(store_mod, "_MIGRATIONS", {**store_mod._MIGRATIONS, 3: "CREATE TABLE broken (;"})
    path = tmp_path / "s.sqlite3"
    with pytest.raises(StoreError):
        Store(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_store_one_schema_ahead_is_refused(tmp_path):
    s = Store(tmp_path / "s.sqlite3")
    with sqlite3.connect(s.path) as con:
        con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match=f"schema {SCHEMA_VERSION + 1} > {SCHEMA_VERSION}"):
        Store(s.path)


# ------------------------------------------------------------------------------ what a plan charges
def test_every_planned_release_states_its_kind_delta_rho_and_batch():
    from dpfed_core.evaluation.experiments import job_key
    from dpfed_core.privacy.noise import zcdp_rho_for_epsilon

    ds = make_dataset()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, delta=1e-6, k=2)
    run, comp = plan_run(ds, cfg, ["central"])
    assert (run.kind, comp.kind) == ("run", "comparison")
    assert run.rho == pytest.approx(zcdp_rho_for_epsilon(1.0, 1e-6), rel=1e-12) and run.gaussian
    # a non-private release spends no δ: its plan says ε = ∞, δ = 0
    assert (comp.epsilon, comp.delta, comp.rho) == (math.inf, 0.0, None) and comp.non_private
    # a sweep's points are one non-adaptive batch; a resumed sweep skips only the points it holds
    done = {job_key("dp-cooccurrence", 1.0, 1, "dp-cooccurrence")}
    sw = plan_sweep(ds, cfg, [1.0, 2.0], [0, 1], [], done=done)
    assert [(p.epsilon, p.seed) for p in sw] == [(1.0, 0), (2.0, 0), (2.0, 1)]
    assert all(p.batch and p.kind == "sweep point" for p in sw)
    # an audit reading every entity's rows charges every entity ∞, otherwise only the audited one
    assert plan_audit(ds, "C", ["dp-popularity"], [1.0], 1e-6, all_entities=True)[0].charges == \
        {e: (math.inf, 0.0) for e in "ABC"}


def test_charges_read_back_from_a_ledger_sum_delta_and_keep_only_the_named_entities():
    old = {"ledger": [{"entity": "A", "epsilon": 0.25, "delta": 1e-7}, {"entity": "A", "epsilon": 0.5, "delta": 2e-7},
                      {"entity": "B", "epsilon": 0.5, "delta": None}]}
    assert ledger_charges(old) == {"A": (pytest.approx(0.75), pytest.approx(3e-7)), "B": (0.5, 0.0)}
    new = {"per_entity": [{"entity": "A", "epsilon": 0.9, "delta": 1e-6}, {"entity": "Z", "epsilon": "inf"}]}
    assert ledger_charges(new, ["A", "B"]) == {"A": (0.9, 1e-6)}
    assert ledger_charges(old, ["B"]) == {"B": (0.5, 0.0)}


def test_the_planned_charge_of_a_mixed_plan_reads_the_store_and_says_whether_it_fits(tmp_path):
    from dpfed_core.evaluation.budget import charge_text, planned_charge, skip_store

    ds = make_dataset()
    store = Store(tmp_path / "s.sqlite3")
    odo = BudgetOdometer(store)
    odo.set_cap(ds, 2.0, 1e-5)
    mixed = [dp_plan(1.5, simulation=True), dp_plan(1.5)]
    p = planned_charge(store, ds, mixed)
    assert not p.get("simulation") and p["spend"] == pytest.approx(1.5) and p["fits"]
    assert charge_text(p) == "spends ε ≈ 1.5 of the 2 left per entity"
    over = planned_charge(store, ds, [dp_plan(1.5), dp_plan(1.5)])
    assert not over["fits"] and "it will be refused" in charge_text(over)
    # one release that leaves nothing does not make the others skip the store
    assert not skip_store(tmp_path / "s.sqlite3", [PlannedRelease("run", "individual", 1.0, 0.0, {}), dp_plan(1.0)])


def test_a_planned_charge_above_the_runs_own_epsilon_says_why(tmp_path, monkeypatch):
    """The accountant composes a release with the data's earlier ones, so its cost can exceed its own ε:
    the label then says so and where to look, instead of a bare larger number."""
    from dpfed_core.evaluation.budget import planned_charge

    ds = make_dataset()
    store = Store(tmp_path / "s.sqlite3")
    assert "more than the ε" not in planned_charge(store, ds, [dp_plan(1.5)])["text"]
    real = BudgetOdometer.preview

    def costlier(self, dataset, plans):
        p = real(self, dataset, plans)
        return {**p, "spend": 3.4}

    monkeypatch.setattr(BudgetOdometer, "preview", costlier)
    text = planned_charge(store, ds, [dp_plan(1.5)])["text"]
    assert text.endswith("— more than the ε = 1.5 asked for: composed with this data's earlier releases at the "
                         "budget's δ (budget show lists them)"), text


def test_the_accountant_record_reports_the_most_spent_entity(tmp_path):
    from dpfed_core.evaluation.budget import accountant_record, most_spent

    ds = make_dataset()
    store = Store(tmp_path / "s.sqlite3")
    odo = BudgetOdometer(store)
    odo.reserve(ds, [dp_plan(1.0)]).close()
    assert accountant_record(store, ds)["every_entity_alike"]  # one run charged every entity alike
    odo.reserve(ds, [dp_plan(0.5, entities=("B",))]).close()
    rec = accountant_record(store, ds)
    assert rec["most_spent_entity"] == "B" and rec["spent_epsilon"] == pytest.approx(1.5)
    assert not rec["every_entity_alike"]
    # one entity is the most spent, not "every entity"; no balance names no one
    one = [b for b in odo.balance(odo.key_of(ds)) if b.entity == "A"]
    assert most_spent(one) == (one[0], False) and most_spent([]) == (None, False)


def test_the_budget_commands_name_the_most_spent_entity_a_withdrawn_release_and_a_void_guarantee(tmp_path, capsys):
    import argparse

    from dpfed_core.cli import budget_cmd

    ds = make_dataset()
    a, b = ds.entity_names[:2]
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    key = odo.register(ds)
    odo.set_cap(key, 100.0, 1e-5)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 0.01, 1e-9, {a: (0.001, 1e-9), b: (0.01, 1e-9)})],
                key=key).close()
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 2.0, 1e-6, {a: (2.0, 1e-6)})], key=key).withdraw(0, "test")
    line = budget_cmd.budget_summary_line(odo, key)
    assert f"most-spent entity {b!r} has spent ε = 0.01 " in line and "non-private" not in line
    even = BudgetOdometer(tmp_path / "even.sqlite3")
    even.reserve(ds, [PlannedRelease("run", "dp-gaussian", 0.5, 1e-9, {e: (0.5, 1e-9) for e in ds.entity_names})],
                 key=even.register(ds)).close()
    line = budget_cmd.budget_summary_line(even, even.key_of(ds))
    assert "every entity has spent ε = 0.5 " in line and "most-spent" not in line  # a tie names no one
    # a run stating its ε at another δ than the budget's: the line says which δ each figure is at
    other = budget_cmd.budget_summary_line(odo, key, run_delta=1e-6)
    assert ("at δ = 1e-05 (" in other and "every release composed at the budget's δ, while the lines above "
            "state ε at δ = 1e-06" in other)
    assert budget_cmd.budget_summary_line(odo, key, run_delta=1e-5) == budget_cmd.budget_summary_line(odo, key)
    budget_cmd.print_releases(odo.releases(key))
    rows = capsys.readouterr().out.splitlines()[1:]
    assert "withdrawn: 0" in rows[0] and "withdrawn" in rows[0] and "withdrawn" not in rows[1]
    budget_cmd.print_balance(odo, ds, key)
    out = capsys.readouterr().out
    assert "runs left: at least 200 more like the last operation" in out and "non-private release" not in out
    budget_cmd.cmd_list(argparse.Namespace(store=str(tmp_path / "s.sqlite3"), json=True))
    assert json.loads(capsys.readouterr().out)[0]["max_spent_epsilon"] == pytest.approx(0.01)
    odo.reserve(ds, [PlannedRelease("run", "central", math.inf, 0.0, {a: (math.inf, 0.0)})], key=key,
                allow_non_private=True).close()
    assert f"; no overall guarantee for {a!r}: non-private release(s)" in budget_cmd.budget_summary_line(odo, key)
    budget_cmd.print_balance(odo, ds, key)
    (row,) = [r for r in capsys.readouterr().out.splitlines() if r.startswith(a)]
    assert row.endswith("1 non-private release(s): no overall guarantee")
    # nothing but non-private releases: no "spent ε = 0", which would read as a guarantee
    sim = BudgetOdometer(tmp_path / "sim.sqlite3")
    sim.reserve(ds, [PlannedRelease("run", "central", math.inf, 0.0, {e: (math.inf, 0.0) for e in ds.entity_names})],
                key=sim.register(ds), allow_non_private=True).close()
    line = budget_cmd.budget_summary_line(sim, sim.key_of(ds))
    assert "no overall guarantee for any entity — only non-private release(s)" in line and "spent ε = 0" not in line


def test_a_basic_epsilon_shown_as_infinite_says_why(tmp_path, capsys):
    """Past half the guarantee's δ basic composition bounds nothing and the table shows ∞: the balance
    says so (the spent δ against that half), so nobody reads it as an infinite spend."""
    from dpfed_core.cli import budget_cmd

    ds = make_dataset()
    a = ds.entity_names[0]
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    key = odo.register(ds)
    odo.set_cap(key, 100.0, 1e-5)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {a: (1.0, 1e-6)}, rho=0.02, gaussian=True)], key=key).close()
    budget_cmd.print_balance(odo, ds, key)
    assert "basic ε is ∞" not in capsys.readouterr().out  # within half the δ: Σε is stated
    for _ in range(5):
        odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {a: (1.0, 1e-6)}, rho=0.02, gaussian=True)], key=key).close()
    budget_cmd.print_balance(odo, ds, key)
    (note,) = [ln for ln in capsys.readouterr().out.splitlines() if "basic ε is ∞" in ln]
    assert "for 1 entity: the δ spent (up to 6e-06) is past half the guarantee's δ (1e-05)" in note
    assert "not an infinite spend" in note


def test_history_names_an_audits_methods_and_a_sweeps_grid_and_refuses_deleting_what_is_not_there(tmp_path):
    hist = RunHistory(tmp_path / "h.sqlite3")
    audit = hist.add("audit", {"config": {"methods": ["dp-gaussian", "kmeans"]}, "dataset": {"name": "toy"}})
    sweep = hist.add("sweep", {"config": {"method": "dp-gaussian", "epsilon": 1.0}, "epsilons": [0.5, 2.0],
                               "dataset": {"name": "toy"}})
    run = hist.add("run", {"config": {"method": "central"}, "dataset": {"name": "toy"},
                           "privacy": {"simulation": True}})
    rows = {r["id"]: r for r in hist.list()}
    assert rows[audit]["method"] == "dp-gaussian,kmeans" and rows[audit]["epsilon"] is None
    assert rows[audit]["title"] == "audit of dp-gaussian, kmeans on toy"
    assert rows[sweep]["title"] == "sweep of dp-gaussian over ε ∈ {0.5, 2} on toy"
    assert math.isinf(rows[run]["epsilon"])  # a run without a stated ε is non-private
    assert rows[run]["simulation"] and not rows[sweep]["simulation"]  # said by the privacy section alone
    assert [r["id"] for r in hist.list(kind="audit")] == [audit]
    with pytest.raises(Exception, match="no stored result"):
        hist.delete(run + 10)
    assert len(hist.list()) == 3


def test_a_results_label_is_made_from_its_document_alone(tmp_path):
    """One function of the stored document labels every result, whichever front end stored it: an
    audit's entity, methods, grid and runs; a sweep's method, grid and seeds (the dashboard's request
    beside them changes nothing)."""
    from dpfed_core.evaluation.history import entry_label

    sweep = {"config": {"method": "dp-cooccurrence", "aggregation": "secure", "simulation": True},
             "epsilons": [1.0, 3.0], "seeds": [0, 1], "dataset": {"name": "toy"}}
    want = "sweep of dp-cooccurrence (secure aggregation) over ε ∈ {1, 3}, seeds 0, 1 on toy (simulation)"
    assert entry_label("sweep", sweep) == entry_label("sweep", {**sweep, "request": {"epsilons": [9.0]}}) == want

    doc = {"config": {"methods": ["dp-cooccurrence"], "epsilons": [1.0, math.inf], "runs": 50},
           "entity": {"name": "hospital 01"}, "dataset": {"name": "toy"}}
    hist = RunHistory(tmp_path / "h.sqlite3")
    hist.add("audit", doc)
    (row,) = hist.list()
    assert row["title"] == entry_label("audit", doc) == \
        "audit of hospital 01: dp-cooccurrence at ε ∈ {1, ∞}, 50 runs per class on toy"


def test_history_lists_each_entrys_data_epsilon_time_operation_and_flag_up_to_the_limit(tmp_path):
    hist = RunHistory(tmp_path / "h.sqlite3")
    a = hist.add("run", {"config": {"method": "dp-gaussian", "epsilon": 0.5, "simulation": True},
                         "dataset": {"name": "toy"}, "created": "2026-11-25T07:00:00+00:00"},
                 dataset_key="k", operation="op-1")
    b = hist.add("run", {"config": {"method": "dp-gaussian", "epsilon": "inf"}, "dataset": {"name": "toy"}})
    rows = {r["id"]: r for r in hist.list()}
    assert rows[a]["epsilon"] == 0.5 and math.isinf(rows[b]["epsilon"])
    assert rows[a]["dataset_name"] == "toy" and rows[a]["created"] == "2026-11-25T07:00:00+00:00"
    assert rows[a]["operation"] == "op-1" and rows[b]["operation"] is None  # links to the releases it charged
    assert rows[a]["simulation"] is True and rows[b]["simulation"] is False
    assert [r["id"] for r in hist.list(limit=1)] == [b]
    assert hist.open(a)["created"] == "2026-11-25T07:00:00+00:00"


def test_a_deployed_runs_label_names_flower_and_a_grid_point_without_a_number_is_a_question_mark():
    from dpfed_core.evaluation.history import entry_label

    doc = {"config": {"method": "dp-gaussian", "epsilon": 1.0}, "dataset": {"name": "toy"}}
    assert entry_label("run", {**doc, "deployment": {"supernodes": 3}}) == \
        entry_label("run", doc) + ", deployed on Flower (3 SuperNodes)"
    assert "Flower" not in entry_label("run", doc)
    sweep = {"config": {"method": "dp-gaussian"}, "epsilons": [1.0, None, "inf"], "dataset": {"name": "toy"}}
    assert "over ε ∈ {1, ?, ∞} on toy" in entry_label("sweep", sweep)


def test_a_read_of_data_the_store_does_not_know_writes_nothing_and_a_preview_never_says_where_its_people_are(
        tmp_path):
    """A dry run, a balance or a preview of a probe (a few records) leaves no row in the store — no name,
    no match score, no entity map — and a re-export's preview reads the account as a whole: an entity
    that spent more than the others is the ε left whichever entity the probe's people were matched to,
    so a dry run of one person cannot say at which entity that person is."""
    ds = sparse_dataset(1)
    odo = BudgetOdometer(tmp_path / "p.sqlite3")
    odo.set_cap(ds, 2.0, 1e-5)
    odo.reserve(ds, [dp_plan(1.0)]).close()
    odo.reserve(ds, [dp_plan(0.5, entities=("A",))]).close()          # A spent more than B and C
    A = [i for i in range(ds.n_users) if ds.entity_of_user[i] == ds.entity_index("A")]
    C = [i for i in range(ds.n_users) if ds.entity_of_user[i] == ds.entity_index("C")]

    def probe(rows, name, entity="probe", entities=None):
        return FederatedDataset.from_parts(ds.X[rows], np.array([entity] * len(rows)), entities=entities,
                                           item_ids=ds.item_ids, value_kind=ds.value_kind, value_max=ds.value_max,
                                           name=name)

    def datasets():
        with sqlite3.connect(odo.path) as con:
            return con.execute("SELECT key, name, similarity, entity_map FROM datasets ORDER BY key").fetchall()

    before = datasets()
    plan = [PlannedRelease("run", "dp-gaussian", 0.3, 1e-6, {"probe": (0.3, 1e-6)})]
    lefts = []
    for rows, name in ((A, "people of A.csv"), (C, "people of C.csv")):
        p = probe(rows, name)
        assert odo.identity(p).alias_of == odo.account_key(ds)              # recognised, in memory
        pre = odo.preview(p, plan)
        lefts.append((pre["left"], pre["binding_left"], pre["spend"]))
        odo.balance(p)
        odo.key_of(p)
    # a probe whose entity is named after a guessed stored entity (beside an empty one) reads the same:
    # a right guess maps to its own name and must say no more than a wrong one
    for guess in ("A", "C"):
        p = probe(C, f"guess {guess}.csv", entity=guess, entities=[guess, "empty"])
        pre = odo.preview(p, [PlannedRelease("run", "dp-gaussian", 0.3, 1e-6, {guess: (0.3, 1e-6)})])
        lefts.append((pre["left"], pre["binding_left"], pre["spend"]))
    assert datasets() == before                                         # nothing of any probe was written
    assert len(set(lefts)) == 1                                         # the same words wherever the people are
    spent_a = {b.entity: b.spent_epsilon for b in odo.balance(ds)}["A"]
    assert lefts[0][0] == pytest.approx(2.0 - spent_a)                  # the account's tightest entity
    # the charge itself follows the match: only the entity whose people they are
    odo.reserve(probe(C, "people of C.csv"), plan).close()
    after = {b.entity: b.spent_epsilon for b in odo.balance(ds)}
    assert after["A"] == pytest.approx(spent_a) and after["C"] > after["B"]


def test_a_declared_entity_without_users_in_a_reexport_charges_none_of_the_accounts_entities(tmp_path):
    """A re-export of one entity's people beside a declared entity that holds no user: the empty
    entity carries no one, so a release is charged to the entity whose people they are only — not to
    every entity of the account, as an entity of unrecognised users would be."""
    ds = sparse_dataset(1)
    odo = BudgetOdometer(tmp_path / "p.sqlite3")
    odo.reserve(ds, [dp_plan(0.5)]).close()
    C = [i for i in range(ds.n_users) if ds.entity_of_user[i] == ds.entity_index("C")]
    only_c = FederatedDataset.from_parts(ds.X[C], np.array(["C"] * len(C)), entities=["C", "empty"],
                                         item_ids=ds.item_ids, value_kind=ds.value_kind, value_max=ds.value_max,
                                         name="C and an empty site.csv")
    assert odo.identity(only_c).alias_of == odo.account_key(ds)
    before = {b.entity: b.spent_epsilon for b in odo.balance(ds)}
    odo.reserve(only_c, [dp_plan(0.25, entities=("C", "empty"))]).close()
    spent = {b.entity: b.spent_epsilon for b in odo.balance(ds)}
    assert spent["A"] == pytest.approx(before["A"]) and spent["B"] == pytest.approx(before["B"])
    assert spent["C"] > before["C"]


def test_budget_list_says_a_re_export_is_charged_to_its_account(tmp_path, capsys):
    """A re-export of stored people is listed with the account it is charged to: its releases and
    spend are that account's, not more of them."""
    import argparse

    from dpfed_core.cli import budget_cmd
    from dpfed_core.data.loaders import load_data
    from dpfed_core.data.synthetic import reexport

    ds = load_data("sample:clinic")
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    key = odo.register(ds)
    odo.register(reexport(ds, pseudonyms=True, reorder=True, name="re"))
    budget_cmd.cmd_list(argparse.Namespace(store=str(tmp_path / "s.sqlite3"), json=False))
    out = capsys.readouterr().out
    (line,) = [r for r in out.splitlines() if r.rstrip().endswith("its account's figures")]
    assert f"re (30 entities) — same people as {key}" in line


def test_a_refused_probe_of_a_few_stored_people_names_no_stored_entity_and_leaves_no_row(tmp_path):
    """A table of a few people cut from a stored, capped dataset (under pseudonyms, in an entity of its
    own name) is charged to the stored account. Refused, it must not say which stored entity those
    people are in — nor its spend, when the entities spent differently — and, like a dry run, it
    leaves nothing in the store; charged, the summary line names no stored entity either."""
    from dpfed_core.cli.budget_cmd import budget_summary_line
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.service import charged_run

    ds = load_data("sample:clinic")
    where = ds.entity_names[7]
    path = tmp_path / "owner.sqlite3"
    odo = BudgetOdometer(path)
    odo.set_cap(ds, 5.0, 1e-5)
    spends = {e: (2.345 if e == where else 0.5, 1e-6) for e in ds.entity_names}
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 2.345, 1e-6, spends)]).close()
    users = np.flatnonzero(np.asarray(ds.entity_of_user) == ds.entity_names.index(where))[:40]
    probe = FederatedDataset.from_parts(ds.X[users], np.array(["A"] * users.size),
                                        user_ids=np.array([f"p{i}" for i in range(users.size)]),
                                        item_ids=ds.item_ids, value_kind=ds.value_kind, value_max=ds.value_max,
                                        name="probe.csv")
    assert odo.identity(probe).alias_of == odo.account_key(ds)
    before = odo.datasets()
    with pytest.raises(BudgetRefused) as exc:
        charged_run(Store(path), probe, RunConfig(method="dp-popularity", epsilon=20.0, delta=1e-6))
    text = str(exc.value)
    assert "same people" in text and where not in text, text
    assert not re.search(r"2\.3[45]|22\.3", text), text   # its spend, or a composition of it
    assert odo.datasets() == before and not odo.knows(probe)
    charged_run(Store(path), probe, RunConfig(method="dp-popularity", epsilon=0.3, delta=1e-6))
    line = budget_summary_line(odo, odo.account_key(probe))
    assert "stored account" in line and where not in line, line


def test_budget_list_says_when_entities_have_no_overall_guarantee(tmp_path, capsys):
    """The list's spent ε counts DP releases only: a dataset one of whose entities a non-private release
    reached says so on its line, never a bare finite ε."""
    import argparse

    from dpfed_core.cli import budget_cmd

    ds = make_dataset()
    a = ds.entity_names[0]
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    key = odo.register(ds)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-9, {e: (1.0, 1e-9) for e in ds.entity_names})],
                key=key).close()
    budget_cmd.cmd_list(argparse.Namespace(store=str(tmp_path / "s.sqlite3"), json=False))
    assert "guarantee" not in capsys.readouterr().out
    odo.reserve(ds, [PlannedRelease("run", "central", math.inf, 0.0, {a: (math.inf, 0.0)})], key=key,
                allow_non_private=True).close()
    budget_cmd.cmd_list(argparse.Namespace(store=str(tmp_path / "s.sqlite3"), json=False))
    (line,) = [r for r in capsys.readouterr().out.splitlines() if r.startswith(key)]
    assert line.endswith(f"({ds.n_entities} entities); no overall guarantee for 1 entity (non-private release): "
                         "the spent ε is of the DP releases alone"), line


def test_simulation_sweep_on_real_data_records_each_point_once(odo):
    """On people's records a simulation point is planned as a non-private release (ε = inf) and runs at
    its grid ε: the settlement matches the two, so no point is recorded a second time as unplanned."""
    from dpfed_core.evaluation.budget import settle_sweep

    ds = make_dataset()
    assert not getattr(ds, "generated", False)
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-6, k=2, simulation=True)
    plans = plan_sweep(ds, cfg, [0.5, 1.0], [0], ["individual"])
    assert all(p.non_private for p in plans if p.method == "dp-gaussian")
    with odo.charge(ds, plans, allow_non_private=True) as res:
        doc = {"config": cfg.to_dict(), "runs": [
            {"method": "dp-gaussian", "epsilon": 0.5, "seed": 0},
            {"method": "dp-gaussian", "epsilon": 1.0, "seed": 0},
            {"method": "individual", "epsilon": math.inf, "seed": 0}]}
    assert settle_sweep(odo, res, ds, doc) == []
    assert len([r for r in odo.releases(ds) if r["method"] == "dp-gaussian"]) == 2
    assert not any("outside the sweep's plan" in r["note"] for r in odo.releases(ds))


def test_the_planned_charge_states_the_epsilon_left_after_earlier_releases_and_the_delta_it_composes_at(tmp_path):
    """A dry run's sentence: what the release spends of what is left under the cap after the data's earlier
    releases (not of the cap), and — when the run's δ is not the budget's — that the ε is the budget's δ's."""
    from dpfed_core.evaluation.budget import planned_charge

    ds = make_dataset()
    store = Store(tmp_path / "s.sqlite3")
    odo = BudgetOdometer(store)
    odo.set_cap(ds, 4.0, 1e-5)
    odo.reserve(ds, [dp_plan(1.0)]).close()
    p = planned_charge(store, ds, [dp_plan(1.0)])
    assert p["left"] == pytest.approx(3.0) and p["delta"] == pytest.approx(1e-5)
    assert p["text"] == "spends ε ≈ 1 of the 3 left per entity (ε at δ = 1e-05, the budget's δ)"
    assert "(ε at δ" not in planned_charge(store, ds, [dp_plan(1.0, delta=1e-5)])["text"]


def _clinic_with_one_earlier_release(tmp_path, cap: float):
    """A store holding the clinic sample under a cap, with one earlier release of ε = 1 on every entity."""
    from dpfed_core.data.loaders import load_data

    store = tmp_path / "s.sqlite3"
    ds = load_data("sample:clinic")
    odo = BudgetOdometer(store)
    odo.set_cap(ds, cap, 1e-5)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in ds.entity_names},
                                    seed=0)]).close()
    return store


def test_a_dry_run_states_where_the_most_spent_entity_ends_after_the_datas_earlier_releases(tmp_path, capsys):
    """`--dry-run` after an earlier release: "after it" is the most-spent entity's total once this release is
    composed with the earlier ones — more than this release's own spend — not the release's spend again."""
    store = _clinic_with_one_earlier_release(tmp_path, cap=10.0)
    rc, out, _ = _cli(capsys, "run", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilon", "1",
                      "--dry-run", "--store", str(store))
    assert rc == 0
    spend = float(re.search(r"planned charge: spends ε ≈ ([0-9.]+)", out).group(1))
    after = float(re.search(r"after it: the most-spent entity would be at ε = ([0-9.]+) of the cap ε = 10 \(fits\)",
                            out).group(1))
    assert spend > 0.5 and after > spend + 0.5, out


def test_budget_list_rounds_the_spend_up_and_the_cap_down(tmp_path, capsys):
    """`budget list` states a third of an ε spent as 0.3334 (never below what was spent) and a cap of 2/3 as 0.6666
    (never above what was set), as `budget show` and the dashboard do."""
    import argparse

    from dpfed_core.cli import budget_cmd

    ds = make_dataset()
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    key = odo.register(ds)
    odo.set_cap(ds, 2 / 3, 1e-5)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1 / 3, 1e-9, {e: (1 / 3, 1e-9) for e in ds.entity_names})],
                key=key).close()
    budget_cmd.cmd_list(argparse.Namespace(store=str(tmp_path / "s.sqlite3"), json=False))
    (line,) = [r for r in capsys.readouterr().out.splitlines() if r.startswith(key)]
    assert line.split()[1:3] == ["0.6666", "0.3334"], line


def test_a_dry_run_of_a_non_private_method_states_the_dp_releases_spend_after_it(tmp_path, capsys):
    """Under a cap, a non-private release voids the guarantee; the line still states what the DP releases alone
    have spent (the ε the cap is checked on), a finite figure — not the ∞ of the non-private release."""
    store = _clinic_with_one_earlier_release(tmp_path, cap=3.0)
    rc, out, _ = _cli(capsys, "run", "--data", "sample:clinic", "--method", "central", "--dry-run",
                      "--store", str(store))
    assert rc == 0
    m = re.search(r"the most-spent entity's DP releases at ε = ([^ ]+) of the cap ε = 3\)", out)
    assert m and float(m.group(1)) == pytest.approx(1.0, rel=1e-3), out


def test_budget_show_rounds_what_each_entity_has_left_down(tmp_path, capsys):
    """`budget show`: a third of a cap of 1 spent leaves 0.6666 per entity on the table — never 0.6667, more than
    is left — beside a spend of 0.3334, rounded up."""
    from dpfed_core.data.loaders import load_data

    store = tmp_path / "s.sqlite3"
    ds = load_data("sample:clinic")
    odo = BudgetOdometer(store)
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1 / 3, 1e-9, {e: (1 / 3, 1e-9) for e in ds.entity_names},
                                    seed=0)]).close()
    rc, out, _ = _cli(capsys, "budget", "show", "--data", "sample:clinic", "--store", str(store))
    assert rc == 0
    rows = [r for r in out.splitlines() if r.startswith(tuple(ds.entity_names))]
    assert len(rows) == ds.n_entities and all(" 0.3334 " in r and " 0.6666 " in r for r in rows), out
    assert "0.6667" not in out


def test_the_line_after_a_run_names_five_voided_entities_and_how_many_more(tmp_path):
    """After a run, the budget line names up to five entities a non-private release left without a guarantee,
    then how many more — a list that reads complete would hide the others."""
    from dpfed_core.cli.budget_cmd import budget_summary_line
    from dpfed_core.data.loaders import load_data

    ds = load_data("sample:clinic")
    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    key = odo.register(ds)
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in ds.entity_names})],
                key=key).close()
    void = ds.entity_names[:7]
    odo.reserve(ds, [PlannedRelease("run", "central", math.inf, 0.0, {e: (math.inf, 0.0) for e in void})], key=key,
                allow_non_private=True).close()
    line = budget_summary_line(odo, key)
    shown = ", ".join(repr(e) for e in void[:5])
    assert f"; no overall guarantee for {shown} and 2 more: non-private release(s)" in line, line


def test_the_line_after_a_run_names_a_budget_show_that_runs_as_printed(tmp_path, capsys):
    import shlex

    table = tmp_path / "visits, 2026.csv"
    wards = ('"A, north"', "B", "C")  # a name holding a comma, quoted in the table as in the list
    table.write_text("patient,drug,n,ward\n" + "".join(
        f"p{u},d{(u * 7 + j) % 9},{1 + j % 3},{wards[u % 3]}\n" for u in range(60) for j in range(4)))
    ents = tmp_path / "wards.txt"
    ents.write_text('"A, north"\nB\nC\n')
    store = tmp_path / "owner.sqlite3"
    flags = ["--data", str(table), "--user-col", "patient", "--item-col", "drug", "--value-col", "n",
             "--value-kind", "counts", "--value-max", "3.5", "--entity-col", "ward", "--entities", str(ents),
             "--exclude-entities", '"A, north"', "--drop-missing", "--store", str(store)]
    assert main(["run", *flags, "--method", "dp-popularity", "--epsilon", "1"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    command = re.search(r"`(python -m dpfed_core budget show [^`]*)` for every entity", line).group(1)
    words = shlex.split(command)
    assert words[:5] == ["python", "-m", "dpfed_core", "budget", "show"]
    # the same data flags, and the same store: the command finds this run's account and lists it
    assert sorted(words[5:]) == sorted(flags)
    assert main(words[3:]) == 0
    shown = capsys.readouterr().out
    assert "B" in shown and "C" in shown and "dp-popularity" in shown and "A, north" not in shown


@pytest.mark.parametrize("case", ["pure releases that reach the cap exactly", "Gaussian releases under a small cap δ"])
def test_runs_left_is_the_number_of_further_releases_the_cap_then_accepts(tmp_path, case):
    """'runs left' is read before a decision: it must count what reserve() will accept — a release
    landing exactly on the cap included, composed at the cap's own δ (not the reference δ)."""
    from dpfed_core.privacy.accounting import REFERENCE_DELTA

    ds = make_dataset()
    odo = BudgetOdometer(tmp_path / "owner.sqlite3")
    if case.startswith("pure"):
        odo.set_cap(ds, 3.0, 1e-5)
        plan = PlannedRelease("run", "dp-laplace", 1.0, 0.0, {e: (1.0, 0.0) for e in "ABC"}, seed=0)
    else:
        odo.set_cap(ds, 2.0, 1e-7)
        assert 1e-7 < REFERENCE_DELTA
        plan = PlannedRelease("run", "dp-gaussian", 1.0, 1e-8, {e: (1.0, 1e-8) for e in "ABC"}, seed=0,
                              rho=0.02, gaussian=True)
    odo.reserve(ds, [plan]).close()
    said = odo.runs_left(ds)["n"]
    accepted = 0
    while accepted <= said + 1:
        try:
            odo.reserve(ds, [plan]).close()
        except BudgetRefused:
            break
        accepted += 1
    assert said == accepted, (case, said, accepted)
    assert accepted >= 1 if case.startswith("pure") else True
