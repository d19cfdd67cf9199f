"""The analyst's walk-through in README states what the odometer charges for its two steps (the
default run, then the ε ∈ {1, 3} sweep); those figures are recomputed here from the same charges the
store records: the run by its stages' ρ, the sweep points by their planned ρ, composed at δ = 1e-5."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpfed_core.evaluation.budget import planned_rho
from dpfed_core.federation.summable import make_summable_method
from dpfed_core.privacy.accounting import RHO_MARGIN, ReleaseCharge, compose_releases

README = Path(__file__).resolve().parents[1] / "README.md"


def _stated() -> tuple[float, float]:
    text = README.read_text(encoding="utf-8")
    m = re.search(r"spends ε ≈ ([0-9.]+) more per hospital \(([0-9.]+) in all", text)
    assert m, "README does not state the sweep's charge"
    return float(m.group(1)), float(m.group(2))


def test_readme_sweep_charge_is_what_the_odometer_composes():
    run = make_summable_method("dp-cooccurrence", value_max=20.0, epsilon=3.0, delta=1e-6,
                               aggregation="secure").budget(30)            # the clinic sample: 30 hospitals
    run_rho = sum(run["rho"].values()) * (1 + RHO_MARGIN)
    account = [ReleaseCharge(3.0, 1e-6, run_rho, True)]
    after_run = compose_releases(account, 1e-5).epsilon
    for eps in (1.0, 3.0):
        rho, gaussian = planned_rho("dp-cooccurrence", eps, 1e-6)
        account.append(ReleaseCharge(eps, 1e-6, rho, gaussian, batch="sweep"))
    after_sweep = compose_releases(account, 1e-5).epsilon
    more, total = _stated()
    assert total == pytest.approx(after_sweep, abs=0.01)
    assert more == pytest.approx(after_sweep - after_run, abs=0.01)
    assert f"({total:g} after the analyst's steps)" in README.read_text(encoding="utf-8")
