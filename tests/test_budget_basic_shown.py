"""Basic composition's ε is shown only where it holds: once the basic Σδ passes half the cap's δ, the
"basic ε" that `budget show`, the dashboard and the result document state is ∞, not Σε."""
from __future__ import annotations

import math

from dpfed_core.cli.main import main
from dpfed_core.evaluation.budget import planned_rho
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease
from tests.test_budget_delta_refusal import _dataset  # the same toy data


def _gauss(eps: float, delta: float) -> PlannedRelease:
    rho, gaussian = planned_rho("dp-cooccurrence", eps, delta)
    return PlannedRelease("run", "dp-cooccurrence", eps, delta, {e: (eps, delta) for e in "ABC"}, seed=0, rho=rho,
                          gaussian=gaussian)


def test_basic_epsilon_past_half_the_delta_is_stated_as_infinite(tmp_path):
    odo, ds = BudgetOdometer(tmp_path / "owner.sqlite3"), _dataset()
    odo.reserve(ds, [_gauss(1.0, 3e-6)]).close()
    first = {b.entity: b for b in odo.balance(ds)}["A"]
    assert first.stated_basic_epsilon == first.to_dict()["basic_epsilon"] == 1.0   # Σδ 3e-6 ≤ 5e-6: holds
    odo.reserve(ds, [_gauss(1.0, 3e-6)]).close()
    bal = {b.entity: b for b in odo.balance(ds)}["A"]
    assert bal.basic_epsilon == 2.0 and bal.spent_delta > 5e-6          # the sum is kept …
    assert math.isinf(bal.stated_basic_epsilon) and math.isinf(bal.to_dict()["basic_epsilon"])  # … never shown
    assert bal.accountant == "zCDP" and math.isfinite(bal.spent_epsilon)


def test_budget_show_prints_infinite_basic_epsilon(tmp_path, capsys):
    from dpfed_core.data.loaders import load_data

    store = tmp_path / "owner.sqlite3"
    odo = BudgetOdometer(store)
    synthetic = load_data("sample:synthetic")
    ents = list(synthetic.entity_names)
    for _ in range(2):
        rho, gaussian = planned_rho("dp-cooccurrence", 1.0, 3e-6)
        odo.reserve(synthetic, [PlannedRelease("run", "dp-cooccurrence", 1.0, 3e-6, {e: (1.0, 3e-6) for e in ents},
                                            seed=0, rho=rho, gaussian=gaussian)]).close()
    assert main(["budget", "show", "--data", "sample:synthetic", "--store", str(store)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(ents[0]))
    spent, basic = row[len(ents[0]):].split()[:2]                  # entity, spent ε, basic ε, …
    assert basic == "∞" and spent != "∞"


def test_the_note_on_an_infinite_basic_epsilon_states_the_largest_delta_spent():
    """"basic ε is ∞ for 2 entities: the δ spent (up to …)": the bound is the largest δ any of them spent,
    not the smallest; an entity whose basic ε holds, or a voided one, is not counted."""
    from dpfed_core.evaluation.budget import basic_epsilon_note

    def bal(delta, basic=math.inf, void=False):
        return {"basic_epsilon": basic, "void": void, "spent_delta": delta, "guarantee_delta": 1e-5}

    note = basic_epsilon_note([bal(6e-6), bal(8e-6), bal(2e-6, basic=1.0), bal(9e-6, void=True)])
    assert note.startswith("basic ε is ∞ for 2 entities: the δ spent (up to 8e-06) is past half the guarantee's δ "
                           "(1e-05)"), note
    assert basic_epsilon_note([bal(2e-6, basic=1.0)]) is None
