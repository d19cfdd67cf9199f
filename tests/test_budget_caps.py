"""The privacy budget as a data owner sets and reads it: caps, what is spent and left, as every front end
states them (a spend never shown below what was spent, a cap never shown above what was set)."""
from __future__ import annotations

import math
import re

import pytest

from dpfed_core.cli.main import main
from dpfed_core.data.loaders import load_data
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease

#: A cap whose rounding to nearest at four digits (1.235) is above it: rounded down it reads 1.234.
ODD_CAP = 1.23456789


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_a_dry_run_states_the_spend_after_it_rounded_up_and_the_cap_rounded_down(tmp_path, capsys, clinic):
    """dp-gaussian composes by basic composition: at ε = 0.12344 the most-spent entity ends at exactly 0.12344,
    which reads 0.1235 (0.1234 would be below the spend), under a cap read 1.234 (1.235 would be above it)."""
    store = tmp_path / "s.sqlite3"
    BudgetOdometer(store).set_cap(clinic, ODD_CAP, 1e-5)
    rc, out, _ = _cli(capsys, "run", "--data", "sample:clinic", "--method", "dp-gaussian", "--epsilon", "0.12344",
                      "--dry-run", "--store", str(store))
    assert rc == 0
    assert "after it: the most-spent entity would be at ε = 0.1235 of the cap ε = 1.234 (fits)" in out, out


def test_a_dry_run_of_a_non_private_release_states_the_dp_spend_up_and_the_cap_down(tmp_path, capsys, clinic):
    """Under a cap a non-private release voids the guarantee; the DP releases' figure beside it is a spend
    (rounded up) of a cap (rounded down)."""
    store = tmp_path / "s.sqlite3"
    odo = BudgetOdometer(store)
    odo.set_cap(clinic, ODD_CAP, 1e-5)
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 0.12344, 1e-6,
                                        {e: (0.12344, 1e-6) for e in clinic.entity_names})]).close()
    rc, out, _ = _cli(capsys, "run", "--data", "sample:clinic", "--method", "central", "--dry-run",
                      "--store", str(store))
    assert rc == 0
    assert "the most-spent entity's DP releases at ε = 0.1235 of the cap ε = 1.234)" in out, out


def test_set_cap_and_its_change_log_never_state_a_cap_above_the_one_set(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite3")
    data = ["--data", "sample:clinic", "--store", store]
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--epsilon", repr(ODD_CAP))
    assert rc == 0
    assert "ε = 1.234, δ = 1e-05 per entity" in out.splitlines()[0], out
    assert "none → ε = 1.234, δ = 1e-05" in out, out
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--epsilon", "1")
    assert rc == 0 and "ε = 1.234, δ = 1e-05 → ε = 1, δ = 1e-05" in out, out
    assert not re.search(r"1\.235|1\.23457", out), out


def test_the_dashboards_cap_is_never_shown_above_the_one_set(tmp_path, clinic):
    from streamlit.testing.v1 import AppTest

    path = tmp_path / "s.sqlite3"
    BudgetOdometer(path).set_cap(clinic, ODD_CAP, 1e-5)
    section = ("from dpfed_core.data.loaders import load_data\nfrom dpfed_core.privacy.store import Store\n"
               "from dpfed_core.ui.budget import render_budget\n"
               f"render_budget(Store({str(path)!r}), load_data('sample:clinic'))\n")
    at = AppTest.from_string(section, default_timeout=60).run()
    assert not at.exception and not at.error
    assert any("Current cap:** ε = 1.234, δ = 1e-05" in m.value for m in at.markdown)
    log = next(d.value for d in at.dataframe if "to" in d.value.columns)
    assert list(log["to"]) == ["ε 1.234, δ 1e-05"]
    assert not math.isinf(BudgetOdometer(path).datasets()[0]["cap_epsilon"])


def _three_entities():
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((24, 12)) < 0.4).astype(float))
    return FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], 8), value_kind="implicit", value_max=1.0,
                                       name="three")


def test_an_audit_that_reads_every_entitys_rows_charges_every_entity(tmp_path):
    """A summable method's audit with ``others="data"`` simulates the rest of the secure sum with the other
    entities' exact rows: each of them is charged the non-private analysis (∞), as the CLI's ``--others data``
    is; with zeros for the others only the audited entity is."""
    from dpfed_core.privacy.store import Store
    from dpfed_core.ui.budget import charged_audit

    ds = _three_entities()
    common = dict(methods=["dp-popularity"], epsilons=[1.0], delta=1e-6, targets=("outlier",), runs=4, seed=0,
                  save=False)
    charged_audit(Store(tmp_path / "data.sqlite3"), ds, "a", others="data", **common)
    charged_audit(Store(tmp_path / "zeros.sqlite3"), ds, "a", others="zeros", **common)
    voided = {name: {b.entity for b in BudgetOdometer(tmp_path / f"{name}.sqlite3").balance(ds) if b.void}
              for name in ("data", "zeros")}
    assert voided == {"data": {"a", "b", "c"}, "zeros": {"a"}}
