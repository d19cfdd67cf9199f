"""The dashboard side of the odometer: the budget section, the sidebar line and the charged engine
calls (their store under tmp_path)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation.history import RunHistory
from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused
from dpfed_core.privacy.store import Store
from dpfed_core.ui import budget as bud

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def test_charged_run_and_sweep_refuse_before_computing(tmp_path, clinic):
    store = Store(tmp_path / "owner.sqlite3")
    assert bud.budget_line(store, clinic).startswith("Budget: nothing released yet (no cap set)")
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=20)
    doc, result, hid = bud.charged_run(store, clinic, cfg)
    assert doc["odometer"]["dataset_key"].startswith("dk-") and result.V.shape[0] == clinic.n_items
    assert RunHistory(store).open(hid)["document"]["config"]["method"] == "dp-gaussian"
    spent = doc["privacy"]["epsilon"]          # what the ledger recorded (≤ the requested 1)
    assert 0 < spent <= 1.0
    line = bud.budget_line(store, clinic)
    # the odometer states the release at the cap's δ by the tighter of its accountants: at most the ledger's ε
    charged = max(b.spent_epsilon for b in BudgetOdometer(store).balance(clinic))
    assert 0 < charged <= spent * (1 + 1e-9)
    from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds

    # what is spent is shown rounded up, what is left and the cap rounded down
    assert "no cap" in line and f"ε {epsilon_that_holds(charged)} spent" in line and "1 release" in line
    assert float(epsilon_that_holds(charged)) >= charged
    cap = spent + 0.5
    BudgetOdometer(store).set_cap(clinic, cap)
    calls = []
    with pytest.raises(BudgetRefused) as refused:
        bud.charged_run(store, clinic, cfg, progress=lambda *a, **k: calls.append(a))
    shown = bud.refusal_text(refused.value)          # the dashboard's words: controls, never CLI flags
    assert "Budget cap ε per entity" in shown and "--" not in shown and "python -m" not in shown
    assert "simulation" not in shown.lower()  # no refusal advises a simulation (not a back door)
    with pytest.raises(BudgetRefused, match="non-private"):
        bud.charged_sweep(store, clinic, cfg, [0.5, math.inf], [0], ["individual"],
                          progress=lambda *a, **k: calls.append(a))
    assert calls == []                                            # nothing was computed
    doc, hid = bud.charged_sweep(store, clinic, cfg, [0.25], [0, 1], ["individual"])
    view = bud.budget_view(store, clinic)
    assert all(e["spent_epsilon"] == pytest.approx(cap) for e in view["entities"])
    assert [r["kind"] for r in view["releases"]][:4] == ["sweep point"] * 4
    assert f"of {epsilon_left(cap)} spent" in bud.budget_line(store, clinic) and "0 left" in bud.budget_line(store, clinic)


_SECTION = """
from dpfed_core.data.loaders import load_data
from dpfed_core.privacy.store import Store
from dpfed_core.ui.budget import render_budget
render_budget(Store(STORE), load_data("sample:clinic"))
"""


def test_budget_section_sets_the_cap_and_lists_releases(tmp_path, clinic):
    path = tmp_path / "section.sqlite3"
    bud.charged_run(Store(path), clinic, RunConfig(method="dp-gaussian", epsilon=0.5, k=3, max_iter=20,
                                                   simulation=True))
    at = AppTest.from_string(_SECTION.replace("STORE", repr(str(path))), default_timeout=60).run()
    assert not at.exception and not at.error
    assert at.checkbox[0].label == bud.NO_CAP_LABEL and at.checkbox[0].value      # starts at "no cap"
    at.checkbox[0].uncheck()
    at.number_input[0].set_value(4.0)
    at.button[0].click().run()                                     # "Set cap…" only asks
    assert not at.exception and not at.error
    assert math.isinf(BudgetOdometer(path).datasets()[0]["cap_epsilon"])
    assert any("set the cap to ε = 4" in i.value for i in at.info)
    next(b for b in at.button if b.label == "Confirm").click().run()
    assert not at.exception and not at.error
    ent = next(d.value for d in at.dataframe if "left ε" in d.value.columns)
    rel = next(d.value for d in at.dataframe if "charged ε (max)" in d.value.columns)
    assert (ent["left ε"] == "4").all() and (ent["spent ε"] == "0").all()  # as `budget show` states them
    assert list(rel["charged ε (max)"]) == ["simulation: not charged"]
    assert BudgetOdometer(path).datasets()[0]["cap_epsilon"] == 4.0
    # raising it asks for the explicit confirmation; the change is logged
    at.number_input[0].set_value(6.0)
    at.button[0].click().run()
    assert any("more budget" in w.value for w in at.warning)
    next(b for b in at.button if b.label == bud.CONFIRM_RAISE_LABEL).click().run()
    assert BudgetOdometer(path).datasets()[0]["cap_epsilon"] == 6.0
    log = BudgetOdometer(path).cap_changes(BudgetOdometer(path).datasets()[0]["key"])
    assert [bool(c["raised"]) for c in log] == [True, False]


def test_cap_form_refuses_a_cap_below_what_is_spent(tmp_path, clinic):
    path = tmp_path / "below.sqlite3"
    odo = BudgetOdometer(path)
    bud.charged_run(Store(path), clinic, RunConfig(method="dp-popularity", epsilon=1.0))
    at = AppTest.from_string(_SECTION.replace("STORE", repr(str(path))), default_timeout=60).run()
    at.checkbox[0].uncheck()
    at.number_input[0].set_value(0.5)
    at.button[0].click().run()
    next(b for b in at.button if b.label == "Confirm").click().run()
    assert any("below what is already spent" in e.value for e in at.error)
    assert not any("--" in e.value for e in at.error)
    assert math.isinf(odo.datasets()[0]["cap_epsilon"])


def test_a_confirmed_or_refused_cap_change_no_longer_says_it_is_about_to_happen(tmp_path, clinic):
    """After Confirm the section says what happened — the cap changed, or why it was refused — and no
    longer "You are about to …" with Confirm and Cancel buttons beside it."""
    path = tmp_path / "done.sqlite3"
    bud.charged_run(Store(path), clinic, RunConfig(method="dp-popularity", epsilon=1.0))
    at = AppTest.from_string(_SECTION.replace("STORE", repr(str(path))), default_timeout=60).run()
    for cap, said in ((0.5, "below what is already spent"), (4.0, "Cap changed")):
        at.checkbox[0].uncheck()
        at.number_input[0].set_value(cap)
        at.button[0].click().run()
        assert any("You are about to" in i.value for i in [*at.info, *at.warning])
        next(b for b in at.button if b.label == "Confirm").click().run()
        assert not at.exception
        assert any(said in m.value for m in [*at.error, *at.success]), [m.value for m in [*at.error, *at.success]]
        assert not any("You are about to" in i.value for i in [*at.info, *at.warning])
        assert not any(b.label in ("Confirm", "Cancel", bud.CONFIRM_RAISE_LABEL) for b in at.button)
        shown = [m.value for m in at.markdown if m.value.startswith("**Current cap:**")]
        assert shown == ["**Current cap:** " + ("no cap" if cap < 1 else "ε = 4, δ = 1e-05 per entity")], shown


def test_the_budget_line_names_the_most_spent_entity_and_the_non_private_releases(tmp_path, clinic):
    """The one line the pages show: the largest spend of any entity (the one a cap binds first), what is
    left of it, and how many entities a non-private release touched (their guarantee is void)."""
    from dpfed_core.privacy.odometer import PlannedRelease

    store = Store(tmp_path / "owner.sqlite3")
    odo = BudgetOdometer(store)
    odo.set_cap(clinic, 5.0, 1e-5)
    a, b, c = clinic.entity_names[:3]
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 2.0, 1e-6, {a: (0.5, 1e-6), b: (2.0, 1e-6)})]).close()
    line = bud.budget_line(store, clinic)
    assert f"ε 2 of 5 spent at δ = 1e-05 (most: {b}), 3 left" in line and "1 release" in line
    assert "non-private" not in line
    odo.reserve(clinic, [PlannedRelease("run", "central", math.inf, 0.0, {c: (math.inf, 0.0)})],
                allow_non_private=True).close()
    assert "1 entities with non-private releases" in bud.budget_line(store, clinic)


def test_the_budget_line_before_any_release_states_the_cap_and_counts_one_release_in_the_singular(tmp_path, clinic):
    from dpfed_core.privacy.odometer import PlannedRelease

    store = Store(tmp_path / "owner.sqlite3")
    odo = BudgetOdometer(store)
    assert bud.budget_line(store, clinic) == "Budget: nothing released yet (no cap set)"
    odo.set_cap(clinic, 5.0, 1e-5)
    assert bud.budget_line(store, clinic) == "Budget: nothing released yet (cap ε = 5 per entity)"
    a = clinic.entity_names[0]
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {a: (1.0, 1e-6)})]).close()
    assert bud.budget_line(store, clinic).endswith(f"(most: {a}), 4 left · 1 release")


_SECTION_BY_KEY = """
from dpfed_core.data.loaders import load_data
from dpfed_core.data.synthetic import reexport
from dpfed_core.privacy.odometer import BudgetOdometer
from dpfed_core.privacy.store import Store
from dpfed_core.ui.budget import render_budget
ds = load_data("sample:clinic")
if REEXPORT:
    ds = reexport(ds, pseudonyms=True, reorder=True, name="re-export.csv")
render_budget(Store(STORE), ds, BudgetOdometer(Store(STORE)).account_key(ds))
"""


def test_the_budget_section_reads_data_the_store_does_not_know_by_key_and_sets_its_first_cap(tmp_path, clinic):
    """The History page reads the budget by the data's key: a re-export of capped people shows their
    account's cap and balances before its first charge (matched in memory, nothing written), and a data
    owner sets a first cap on an upload no release has registered yet."""
    from dpfed_core.data.synthetic import reexport
    from dpfed_core.privacy.odometer import PlannedRelease

    path = tmp_path / "owner.sqlite3"
    odo = BudgetOdometer(path)
    odo.set_cap(clinic, 2.0, 1e-5)
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6,
                                        {e: (1.0, 1e-6) for e in clinic.entity_names})]).close()
    again = reexport(clinic, pseudonyms=True, reorder=True, name="re-export.csv")
    line = bud.budget_line(Store(path), again, odo.account_key(again))
    assert "of 2 spent" in line and "1 left" in line, line
    n_datasets = len(BudgetOdometer(path).datasets())
    at = AppTest.from_string(_SECTION_BY_KEY.replace("STORE", repr(str(path))).replace("REEXPORT", "True"),
                             default_timeout=60).run()
    assert not at.exception and not at.error
    assert any("Current cap:** ε = 2" in m.value for m in at.markdown)
    assert len(BudgetOdometer(path).datasets()) == n_datasets          # reading registered nothing
    fresh = tmp_path / "fresh.sqlite3"
    Store(fresh)
    at = AppTest.from_string(_SECTION_BY_KEY.replace("STORE", repr(str(fresh))).replace("REEXPORT", "False"),
                             default_timeout=60).run()
    at.checkbox[0].uncheck()
    at.number_input[0].set_value(3.0)
    at.button[0].click().run()
    next(b for b in at.button if b.label == "Confirm").click().run()
    assert not at.exception and not at.error
    assert BudgetOdometer(fresh).cap(BudgetOdometer(fresh).account_key(clinic))[0] == 3.0


def test_the_budget_line_rounds_what_is_left_down_and_the_spend_up(tmp_path, clinic):
    """A third of a cap of 1 spent: the line says 0.3334 spent and 0.6666 left — never more left than there is
    (0.6667) — as `budget show` states them."""
    from dpfed_core.privacy.odometer import PlannedRelease

    store = Store(tmp_path / "owner.sqlite3")
    odo = BudgetOdometer(store)
    odo.set_cap(clinic, 1.0, 1e-5)
    a = clinic.entity_names[0]
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 1 / 3, 1e-6, {a: (1 / 3, 1e-6)})]).close()
    top = max(odo.balance(clinic), key=lambda b: b.spent_epsilon)
    assert top.remaining_epsilon == pytest.approx(2 / 3)
    line = bud.budget_line(store, clinic)
    assert f"ε 0.3334 of 1 spent at δ = 1e-05 (most: {a}), 0.6666 left" in line, line
