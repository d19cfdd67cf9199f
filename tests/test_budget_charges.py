"""What the odometer charges, to whom and against which cap: a release landing on the cap, a cap
removed or set through a re-export, ε and δ kept apart, non-private and withdrawn releases, the
figures a dry run and a refusal state. Every store lives under tmp_path."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.cli.args import CLI_NAMES
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.budget import plan_audit, plan_run, planned_rho
from dpfed_core.privacy.accounting import ReleaseCharge, compose_releases
from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused, PlannedRelease


def make_dataset(name: str = "toy") -> FederatedDataset:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(12, 6)).astype(float)
    X[:, 0] += 1  # no empty rows
    return FederatedDataset.from_parts(sp.csr_matrix(X), np.array(["A", "B", "C"])[np.arange(12) % 3],
                                       user_ids=np.array([f"u{i}" for i in range(12)]),
                                       item_ids=np.array([f"i{j}" for j in range(6)]),
                                       value_kind="counts", value_max=5.0, name=name)


def dp_plan(eps: float, delta: float = 1e-6, entities=("A", "B", "C"), kind: str = "run") -> PlannedRelease:
    return PlannedRelease(kind, "dp-gaussian", eps, delta, {e: (eps, delta) for e in entities}, seed=0)


def gauss_plan(eps: float, delta: float = 1e-6) -> PlannedRelease:
    rho, gaussian = planned_rho("dp-cooccurrence", eps, delta)
    return PlannedRelease("run", "dp-cooccurrence", eps, delta, {e: (eps, delta) for e in "ABC"}, seed=0, rho=rho,
                          gaussian=gaussian)


def non_private_plan(entities=("A", "B", "C")) -> PlannedRelease:
    return PlannedRelease("run", "popularity", math.inf, 0.0, {e: (math.inf, 0.0) for e in entities}, seed=0)


def spent(odo: BudgetOdometer, ds) -> dict[str, float]:
    return {b.entity: b.spent_epsilon for b in odo.balance(ds)}


@pytest.fixture
def odo(tmp_path) -> BudgetOdometer:
    return BudgetOdometer(tmp_path / "owner.sqlite3")


# ------------------------------------------------------------------------------ the cap is a bound, reached
def test_a_release_that_ends_exactly_on_the_cap_fits_in_the_dry_run_and_in_the_charge(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [dp_plan(0.5)]).close()
    assert odo.preview(ds, [dp_plan(0.5)])["fits"]
    odo.reserve(ds, [dp_plan(0.5)]).close()
    assert spent(odo, ds) == {"A": 1.0, "B": 1.0, "C": 1.0}
    with pytest.raises(BudgetRefused):
        odo.reserve(ds, [dp_plan(0.01)])


def test_a_cap_equal_to_what_is_spent_is_accepted_and_one_below_names_the_most_spent_entity(odo):
    ds = make_dataset()
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 0.8, 1e-6, {"A": (0.8, 1e-6), "B": (0.6, 1e-6)})]).close()
    with pytest.raises(BudgetRefused) as exc:
        odo.set_cap(ds, 0.5, 1e-5)
    assert "up to ε = 0.8 by 'A'" in str(exc.value) and "at least 0.8" in str(exc.value)
    assert exc.value.param == "epsilon"
    odo.set_cap(ds, 0.8, 1e-5)
    assert odo.cap(odo.account_key(ds)) == (0.8, 1e-5)


def test_removing_a_cap_is_a_raise_refused_without_confirmation_naming_that_flag_and_logged(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    with pytest.raises(BudgetRefused) as exc:
        odo.set_cap(ds, math.inf)
    assert exc.value.param == "confirm_raise" and "--confirm-raise" in exc.value.render(CLI_NAMES)
    assert odo.cap(odo.account_key(ds)) == (1.0, 1e-5)
    odo.set_cap(ds, math.inf, confirm_raise=True)
    assert odo.cap(odo.account_key(ds)) == (math.inf, math.inf)
    assert [c["raised"] for c in odo.cap_changes(ds)] == [1, 0]


# ------------------------------------------------------------------------------ what is charged
def test_a_release_is_charged_its_epsilon_as_epsilon_and_its_delta_as_delta(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    with pytest.raises(BudgetRefused):
        odo.reserve(ds, [dp_plan(3.0, 1e-7)])
    res = odo.reserve(ds, [dp_plan(0.75, 1e-7)])
    res.close()
    assert odo.charges(res.release_ids[0]) == {e: (0.75, 1e-7) for e in "ABC"}
    bal = {b.entity: b for b in odo.balance(ds)}["A"]
    assert (bal.spent_epsilon, bal.spent_delta) == (0.75, 1e-7)


def test_a_non_private_release_is_free_to_make_without_a_cap_refused_under_one_and_recorded_when_allowed(tmp_path):
    ds = make_dataset()
    free = BudgetOdometer(tmp_path / "free.sqlite3")
    free.reserve(ds, [non_private_plan()]).close()  # no cap: charged, never refused
    assert {b.entity: b.n_non_private for b in free.balance(ds)} == {"A": 1, "B": 1, "C": 1}
    capped = BudgetOdometer(tmp_path / "capped.sqlite3")
    capped.set_cap(ds, 1.0, 1e-5)
    for plans in ([non_private_plan()], plan_audit(ds, "B", ["dp-cooccurrence"], [1.0], 1e-6)):
        with pytest.raises(BudgetRefused) as exc:
            capped.reserve(ds, plans)
        assert exc.value.param == "allow_non_private" and "--allow-non-private" in exc.value.render(CLI_NAMES)
    assert capped.releases(ds) == []
    capped.reserve(ds, [non_private_plan(("A",))], allow_non_private=True).close()
    assert {b.entity: b.n_non_private for b in capped.balance(ds)} == {"A": 1, "B": 0, "C": 0}
    assert [r["charged"] for r in capped.releases(ds)] == [True]


def test_a_central_rating_level_method_is_charged_as_non_private_at_the_epsilon_it_was_asked(odo):
    """A rating-level ε at a trusted curator bounds no user and the raw data leave the entities: the
    run is charged ∞ per entity (refused under a cap unless allowed), its requested ε recorded."""
    ds = make_dataset()
    odo.set_cap(ds, 5.0, 1e-5)
    plans = plan_run(ds, RunConfig(method="friedman-ge", epsilon=1.0, delta=1e-6))
    assert [(p.epsilon, dict(p.charges)) for p in plans] == [(1.0, {e: (math.inf, 0.0) for e in "ABC"})]
    with pytest.raises(BudgetRefused) as exc:
        odo.reserve(ds, plans)
    assert exc.value.param == "allow_non_private"


def test_a_withdrawn_release_spends_nothing_and_is_listed_uncharged(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [dp_plan(0.75)]).withdraw(0, "withdrawn: no ledger row was recorded before the failure")
    assert spent(odo, ds) == {"A": 0.0, "B": 0.0, "C": 0.0}
    assert [r["charged"] for r in odo.releases(ds)] == [False]
    odo.reserve(ds, [dp_plan(1.0)]).close()


def test_a_run_through_charge_is_charged_once_released_kept_when_it_drew_and_given_back_when_it_did_not(odo):
    ds = make_dataset()
    with odo.charge(ds, [dp_plan(0.25)]):
        pass
    assert [(r["status"], r["charged"]) for r in odo.releases(ds)] == [("released", True)]

    class RunnerFailed(RuntimeError):
        ledger_rows = 2  # a runner elsewhere drew twice before failing

    with pytest.raises(RunnerFailed):
        with odo.charge(ds, [dp_plan(0.25)], drawn=lambda: 0):
            raise RunnerFailed("lost the connection")
    with pytest.raises(ValueError):
        with odo.charge(ds, [dp_plan(0.25)], drawn=lambda: 0):
            raise ValueError("bad input")
    assert [(r["status"], r["charged"]) for r in odo.releases(ds)] == [
        ("withdrawn", False), ("failed", True), ("released", True)]
    assert spent(odo, ds)["A"] == 0.5


# ------------------------------------------------------------------------------ at the cap's δ
def _six_gaussian_releases_between(delta_cap: float) -> tuple[float, float]:
    rho, _ = planned_rho("dp-cooccurrence", 1.0, 1e-6)
    six = [ReleaseCharge(1.0, 1e-6, rho, True, None)] * 6
    return compose_releases(six, delta_cap).epsilon, compose_releases(six, 1e-5).epsilon


def test_releases_are_composed_and_checked_at_the_caps_delta_not_a_reference_one(odo):
    at_cap, at_reference = _six_gaussian_releases_between(1e-3)
    assert at_cap < at_reference - 0.05
    ds = make_dataset()
    odo.set_cap(ds, (at_cap + at_reference) / 2, 1e-3)
    for _ in range(6):
        odo.reserve(ds, [gauss_plan(1.0)]).close()
    assert spent(odo, ds)["A"] == pytest.approx(at_cap)


# ------------------------------------------------------------------------------ what a dry run and a refusal state
def test_a_dry_run_states_the_increase_and_the_epsilon_left_after_earlier_releases(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [dp_plan(0.6)]).close()
    pre = odo.preview(ds, [dp_plan(0.3)])
    assert pre["spend"] == pytest.approx(0.3) and pre["after"] == pytest.approx(0.9)
    assert pre["left"] == pytest.approx(0.4) and pre["binding_left"] == pytest.approx(0.4)
    assert pre["fits"]


def test_a_refusal_states_the_spend_before_and_after_the_release(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [dp_plan(0.6)]).close()
    with pytest.raises(BudgetRefused) as exc:
        odo.reserve(ds, [dp_plan(0.5)])
    assert "spent ε = 0.6, this would bring it to ε = 1.1" in str(exc.value)


def test_runs_left_counts_the_releases_that_still_fit(odo):
    ds = make_dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    odo.reserve(ds, [dp_plan(0.25)]).close()
    assert odo.runs_left(ds)["n"] == 3
    for _ in range(3):
        odo.reserve(ds, [dp_plan(0.25)]).close()
    assert odo.runs_left(ds)["n"] == 0


# ------------------------------------------------------------------------------ a re-export is the same people
def test_a_cap_set_through_a_relabelled_reexport_is_the_peoples_and_binds_every_view_of_them(tmp_path):
    from dpfed_core.data.loaders import load_data
    from dpfed_core.data.synthetic import reexport

    ds = load_data("sample:clinic")
    odo = BudgetOdometer(tmp_path / "people.sqlite3")
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.5, 1e-6,
                                    {e: (1.5, 1e-6) for e in ds.entity_names})]).close()
    other = reexport(ds, relabel="site-", pseudonyms=True, reorder=True, name="re-export.csv")
    assert odo.set_cap(other, 2.0, 1e-5) == odo.account_key(ds)
    assert odo.cap(odo.account_key(ds)) == (2.0, 1e-5) and odo.cap(odo.key_of(other)) == (2.0, 1e-5)
    assert max(spent(odo, other).values()) == pytest.approx(1.5)
    with pytest.raises(BudgetRefused):
        odo.reserve(other, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6,
                                           {e: (1.0, 1e-6) for e in other.entity_names})])
    odo.reserve(other, [PlannedRelease("run", "dp-gaussian", 0.25, 1e-6,
                                       {e: (0.25, 1e-6) for e in other.entity_names})]).close()
    assert spent(odo, ds) == {e: pytest.approx(1.75) for e in ds.entity_names}
