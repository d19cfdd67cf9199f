"""The dashboard's list of releases states each release as `budget releases` does: a reference that
sends nothing (local, individual) shows no ε and "releases nothing", never ε = ∞ (which reads as a
non-private release) and a charge of 0."""
from __future__ import annotations

import math

from streamlit.testing.v1 import AppTest

from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation.budget import release_cells
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease

_SECTION = """
from dpfed_core.data.loaders import load_data
from dpfed_core.privacy.store import Store
from dpfed_core.ui.budget import render_budget
render_budget(Store(STORE), load_data("sample:synthetic"))
"""


def test_reference_release_reads_the_same_on_both_front_ends(tmp_path):
    path = tmp_path / "owner.sqlite3"
    data = load_data("sample:synthetic")
    odo = BudgetOdometer(path)
    ents = list(data.entity_names)
    # a sweep's reference point: recorded, charged to no entity (it sends nothing)
    odo.reserve(data, [PlannedRelease("sweep point", "local", math.inf, 0.0, {}, seed=0),
                       PlannedRelease("sweep point", "dp-popularity", 1.0, 1e-6, {e: (1.0, 1e-6) for e in ents},
                                      seed=0)]).close()
    rows = {r["method"]: r for r in odo.releases(data)}
    assert release_cells(rows["local"]) == ("—", "releases nothing")
    assert release_cells(rows["dp-popularity"]) == ("1", "1")
    at = AppTest.from_string(_SECTION.replace("STORE", repr(str(path))), default_timeout=60).run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "charged ε (max)" in df.value.columns)
    local = table[table["method"] == "local"].iloc[0]
    assert local["ε"] == "—" and local["charged ε (max)"] == "releases nothing"


def test_a_reference_compared_in_a_simulation_reads_releases_nothing_as_in_production(tmp_path):
    """`local` beside a simulation run draws no noise and sends nothing: its planned release is no simulation
    release, and its row reads "—" / "releases nothing" (not ε = ∞ with "simulation: not charged", as if it
    were reproducible noise), on people's records and on a generated sample alike; the simulation run itself
    keeps its own row."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.budget import plan_run

    import dataclasses

    for people in (True, False):
        # the bundled sample as if it were people's records (a simulation on them is charged as non-private)
        data = dataclasses.replace(load_data("sample:clinic"), generated=not people)
        odo = BudgetOdometer(tmp_path / f"{people}.sqlite3")
        for simulation in (True, False):
            plans = plan_run(data, RunConfig(method="dp-cooccurrence", epsilon=1.0, simulation=simulation),
                             compare=["local"])
            assert [p.method for p in plans] == ["dp-cooccurrence", "local"]
            assert plans[1].simulation is False and plans[1].charges == {}
            odo.reserve(data, plans).close()
        rows = [r for r in odo.releases(data)]
        assert [release_cells(r) for r in rows if r["method"] == "local"] == [("—", "releases nothing")] * 2
        run = [release_cells(r)[1] for r in rows if r["method"] == "dp-cooccurrence"]
        assert sorted(run) == sorted(["non-private" if people else "simulation: not charged",
                                      "1"]), run
