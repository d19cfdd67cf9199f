"""dpfed dashboard: the entry point (``streamlit run app.py``) — the Home page and the navigation.

Home imports nothing heavy before its text is on screen, so it is interactive right after the server
starts; the other pages live in ``pages/`` and are registered here with readable titles.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from dpfed_core.ui import widgets as ui


def home() -> None:
    ui.page_setup("Home", ":material/lock:")
    st.title("dpfed — federated recommendations with differentially private prototypes")
    st.markdown(
        "Several data holders (**entities**: hospitals, regions, banks) learn a shared recommender "
        "without pooling their raw data. "
        "Each entity sends the server only **differentially private statistics** of its users — the "
        "paper's **k prototypes**, or **summable releases** (DP popularity, DP item co-occurrence: the "
        "recommended `dp-cooccurrence`) that add up across entities, optionally under **secure "
        "aggregation** so the server sees only their sum; the server learns item factors **V** from "
        "them and sends V back, and every entity fits its own users locally. "
        "You choose the privacy budget **ε** and see what the server saw, what it cost, how good the "
        "recommendations are, and how utility changes with ε."
    )

    left, right = st.columns([3, 2])
    # The right column first: it needs no engine import, so "where to start" shows at once.
    with right:
        st.subheader("Where to start")
        st.markdown(
            "1. **Data** — pick the clinic sample (loaded by default), MovieLens / eICU, or upload a CSV; "
            "choose the federation key.\n"
            "2. **Federate** — set ε and run; see what each entity released, V, the message log and the "
            "privacy ledger.\n"
            "3. **Evaluate** — the federated model beside individual, central, random-V, popularity and "
            "DP popularity.\n"
            "4. **Recommend** — a user's top items next to what they already have.\n"
            "5. **Trade-off** — utility against ε, with the crossing ε where sharing starts to pay."
        )
        st.page_link(ui.PAGES["data"], label="Start with the data", icon=":material/folder_open:")
        st.page_link(ui.PAGES["federate"], label="Or federate the default sample right away", icon=":material/hub:")
    with left:
        st.subheader("The two rounds")
        # Imported here, after the text above is on screen: the engine pulls in scikit-learn.
        from dpfed_core.reporting import plots

        st.graphviz_chart(plots.protocol_dot(3, ["Hospital A", "Hospital B", "Hospital C"]),
                          width="content")
        st.caption("Round 1: each entity → server, differentially private releases of its data and nothing "
                   "else — with a summable method (dp-cooccurrence, dp-popularity, dp-als) noisy shares of its "
                   "item statistics, which under secure aggregation the server sees only summed over every "
                   "entity; with a prototype method (dp-prototypes), k DP prototypes (k × items). Before them, "
                   "a catalogue the entities do not declare is selected by a charged DP release too. "
                   "Server: the shared item factors V from the releases (an NMF of the stacked prototypes, or "
                   "a factorisation of the summed statistics), pure post-processing. "
                   "Round 2: server → each entity, V; each entity fits its users on V beside its own model, on "
                   "its own data. The Federate page's message log lists every message of a run. "
                   "Privacy: (ε, δ)-DP for every user of every entity (entities hold disjoint users).")


st.set_page_config(page_title="dpfed", page_icon=ui.app_icon(), layout="wide")  # local favicon
_MINE = [
    ("data", "Data", ":material/folder_open:"),
    ("federate", "Federate", ":material/hub:"),
    ("evaluate", "Evaluate", ":material/bar_chart:"),
    ("recommend", "Recommend", ":material/lightbulb:"),
    ("tradeoff", "Trade-off", ":material/show_chart:"),
    ("audit", "Privacy audit", ":material/policy:"),
    ("history", "History", ":material/history:"),
]
_pages = [st.Page(home, title="Home", icon=":material/lock:", default=True)]
_pages += [st.Page(ui.PAGES[key], title=title, icon=icon) for key, title, icon in _MINE]
# Any other page dropped into pages/ (e.g. the privacy audit) joins the navigation in file order,
# titled from its file name as Streamlit does for a plain pages/ folder.
_ROOT = Path(__file__).resolve().parent
_known = {str(Path(p)) for p in ui.PAGES.values()}
for _path in sorted((_ROOT / "pages").glob("*.py")):
    _rel = str(_path.relative_to(_ROOT))
    if _rel not in _known and not _path.name.startswith(("_", ".")):
        _pages.append(st.Page(_rel))
nav = st.navigation(_pages)
# The sidebar's status slot is filled before the page runs (so it shows even when the page stops
# early with st.stop, after which Streamlit accepts no more elements) and refreshed after it (so it
# reflects a run made on the page): data, last run and budget on every page.
_status = st.sidebar.empty()
with _status.container():
    ui.sidebar_status()
nav.run()
with _status.container():
    ui.sidebar_status()
