"""Privacy budget: what this dataset has already released, per entity, against its data owner's cap."""
from __future__ import annotations

import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.ui import budget as bud

ui.page_setup("Privacy budget", ":material/savings:")
st.title("Privacy budget")
st.markdown(
    "Every release of this dataset — a federation run and each compared method, every point of a "
    "trade-off sweep, an audit — is charged to each entity it touches, **before** it is computed. "
    "When a release would take any entity past the cap, it is refused. Simulation runs are listed "
    "but not charged: they make no privacy claim."
)
ds = ui.require_dataset()
bud.render_budget(bud.current_store(), ds)
