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
