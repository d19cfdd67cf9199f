"""A release refused because basic composition's Σδ passes half the cap's δ (and zCDP has no ρ for it)
says so: the refusal and the planned charge name δ as what binds, never a finite basic ε as if it held."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.budget import planned_charge
from dpfed_core.privacy.odometer import CLI_CONTROLS, BudgetOdometer, BudgetRefused, PlannedRelease
from dpfed_core.ui.budget import refusal_text


def _dataset() -> FederatedDataset:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(12, 6)).astype(float)
    X[:, 0] += 1
    labels = np.array(["A", "B", "C"])[np.arange(12) % 3]
    return FederatedDataset.from_parts(sp.csr_matrix(X), labels, user_ids=np.array([f"u{i}" for i in range(12)]),
                                       item_ids=np.array([f"i{j}" for j in range(6)]), value_kind="counts",
                                       value_max=5.0, name="toy")


def _no_rho_plan(eps: float, delta: float) -> PlannedRelease:
    # dp-gaussian states no ρ before it runs: it composes by its (ε, δ) only
    return PlannedRelease("run", "dp-gaussian", eps, delta, {e: (eps, delta) for e in "ABC"}, seed=0)


def test_refusal_for_delta_names_delta_not_a_finite_basic_epsilon(tmp_path):
    store = tmp_path / "owner.sqlite3"
    odo, ds = BudgetOdometer(store), _dataset()
    odo.set_cap(ds, 5.0, 1e-5)
    plan = _no_rho_plan(1.0, 6e-6)               # ε far below the cap, δ above half of the cap's δ
    with pytest.raises(BudgetRefused) as refused:
        odo.reserve(ds, [plan])
    cli = refused.value.render(CLI_CONTROLS)
    assert "not valid" in cli and "δ/2 = 5e-06" in cli and "Σδ = 6e-06" in cli
    assert "--delta" in cli and refused.value.param == "delta"
    assert "smaller δ" in refusal_text(refused.value) and "--" not in refusal_text(refused.value)
    # the planned charge says why it reads ∞
    text = planned_charge(store, ds, [plan])["text"]
    assert "spends ε ≈ ∞ of the 5 left" in text and "Σδ would pass half the budget's δ" in text


def test_refusal_for_epsilon_still_names_epsilon(tmp_path):
    odo, ds = BudgetOdometer(tmp_path / "owner.sqlite3"), _dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    with pytest.raises(BudgetRefused) as refused:
        odo.reserve(ds, [_no_rho_plan(2.0, 1e-6)])
    cli = refused.value.render(CLI_CONTROLS)
    assert "not valid" not in cli and refused.value.param == "epsilon"
    assert "Σδ would pass" not in planned_charge(tmp_path / "owner.sqlite3", _dataset(),
                                                 [_no_rho_plan(2.0, 1e-6)])["text"]


def test_refusal_by_zcdp_past_the_basic_delta_still_names_epsilon(tmp_path):
    from dpfed_core.evaluation.budget import planned_rho

    odo, ds = BudgetOdometer(tmp_path / "owner.sqlite3"), _dataset()
    odo.set_cap(ds, 1.0, 1e-5)
    rho, gaussian = planned_rho("dp-cooccurrence", 3.0, 6e-6)
    plan = PlannedRelease("run", "dp-cooccurrence", 3.0, 6e-6, {e: (3.0, 6e-6) for e in "ABC"}, seed=0, rho=rho,
                          gaussian=gaussian)
    with pytest.raises(BudgetRefused) as refused:
        odo.reserve(ds, [plan])
    cli = refused.value.render(CLI_CONTROLS)
    assert "not valid" in cli and refused.value.param == "epsilon" and "--epsilon" in cli


def test_a_gaussian_method_at_delta_zero_is_refused_naming_delta_not_epsilon(tmp_path, capsys):
    """dp-popularity's stages split a zCDP budget ρ(ε, δ), which is 0 at δ = 0: the error names δ, the
    setting at fault, never an ε of 0 the run was not given."""
    from dpfed_core.cli.main import main

    code = main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilon", "2", "--delta", "0",
                 "--dry-run", "--store", str(tmp_path / "s.sqlite3")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and "needs δ > 0" in err and "[--delta]" in err and "ε must be" not in err, err
    code = main(["run", "--data", "sample:clinic", "--method", "dp-cooccurrence", "--compare", "dp-popularity",
                 "--delta", "0", "--dry-run", "--store", str(tmp_path / "s.sqlite3")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and "dp-cooccurrence, dp-popularity add Gaussian noise" in err, err
