"""History: the runs, sweeps and audits of this dataset, kept in the embedded SQLite store.

A reload or a new session reopens them. The list is per data owner: only results computed on exactly
this dataset (same content hash) are listed or opened, so two uploads never see each other's results.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dpfed_core.errors import DpfedError
from dpfed_core.ui import widgets as ui
from dpfed_core.ui import engine as dash
from dpfed_core.ui import deployment_panel, history

ui.page_setup("History", ":material/history:")
st.title("History")
ds = ui.require_dataset()
try:
    owner = ui.owner_key()
except DpfedError as exc:  # a store that cannot be read (deleted beside its key, damaged): its own words and fix
    st.error(dash.escape_md(history.read_failure(exc)), icon=":material/error:")
    st.stop()
st.caption(f"Results computed on this dataset ({dash.escape_md(ds.name)}, key {owner[:12]}…), newest first. "
           "They are kept in the store file on this server (the privacy odometer's file) and survive a "
           "reload or a new session. Results of other data are never listed here.")

KINDS = {"all": "everything", "run": "federation runs", "sweep": "trade-off sweeps", "audit": "privacy audits"}
kind = st.radio("Show", list(KINDS), format_func=KINDS.get, horizontal=True, key="hist_kind")
try:
    entries = history.list_entries(ds, None if kind == "all" else kind, key=owner)
except Exception as exc:  # an unreadable store is a message, not a traceback: what failed, where, and the fix
    st.error(dash.escape_md(history.read_failure(exc)), icon=":material/error:")
    st.stop()


def _budget() -> None:
    st.subheader("Privacy budget of this dataset")
    try:
        from dpfed_core.ui.budget import render_budget

        if history.store_missing() and not st.session_state.get("hist_make_store"):
            # a read makes no store: the first charge or an explicit cap does
            st.info("Nothing spent yet: no run, sweep or audit has been charged on this server (the store file "
                    "does not exist yet; the first charged result or a cap set here makes it).",
                    icon=":material/info:")
            if not st.button("Set a budget cap…", key="hist_make_store_button"):
                ui.non_private_checkbox("history")
                return
            st.session_state["hist_make_store"] = True
        store, key = history.owner_store(ds, owner)
        render_budget(store, ds, key)
    except Exception as exc:  # the budget view must not take the page down
        st.error(f"The budget could not be shown ({type(exc).__name__}).", icon=":material/error:")
    ui.non_private_checkbox("history")


if not entries:
    st.info("Nothing stored for this dataset yet: runs (Federate), sweeps (Trade-off) and audits "
            "(Privacy audit) are stored as they finish.", icon=":material/info:")
    _budget()
    st.stop()

table = pd.DataFrame([{"id": e.id, "kind": e.kind, "created (UTC)": e.created, "what": e.label} for e in entries])
st.dataframe(table, hide_index=True, width="stretch", key="hist_table")
labels = {e.id: f"#{e.id} · {e.kind} · {e.created} · {e.label}" for e in entries}
pick = st.selectbox("Result", list(labels), format_func=labels.get, key="hist_pick")
c1, c2 = st.columns([1, 5])
if c1.button("Open", type="primary", key="hist_open"):
    stored = history.load(ds, pick, key=owner)
    if stored is None:
        st.error("This result is not stored for this dataset any more.", icon=":material/error:")
        st.stop()
    if stored["kind"] == "run":
        try:
            doc, result, config = history.restored_run(stored)
        except ValueError as exc:  # a run whose factors were not kept here: its document, not its pages
            st.info(str(exc), icon=":material/info:")
            st.markdown(dash.stored_run_summary(stored["doc"]))
            st.download_button("Download its result document (JSON)", dash.document_json(stored["doc"]),
                               file_name=f"dpfed_run_{pick}.json", mime="application/json", key="hist_download")
            if isinstance(stored["doc"].get("deployment"), dict):
                # the Flower panel shows a deployed run from its document alone (messages, ledger, nodes)
                st.session_state[deployment_panel.DOC_KEY] = stored["doc"]
                st.page_link(ui.PAGES["federate"], icon=":material/hub:",
                             label="Show its message log and ledger on Federate (Execution: separate processes)")
            st.stop()
        st.session_state[ui.RUN] = {"doc": doc, "result": result, "config": config, "seconds": 0.0,
                                    "stored_id": pick}
        st.session_state[ui.CONFIG] = config
        st.success(f"Run #{pick} reopened: Federate, Evaluate and Recommend now show it.",
                   icon=":material/check_circle:")
        st.page_link(ui.PAGES["federate"], label="Show it on Federate", icon=":material/hub:")
    elif stored["kind"] == "sweep":
        doc = stored["doc"]
        req = doc.get("request", {})
        st.session_state[ui.SWEEP] = {"key": ("stored", pick, tuple(req.get("epsilons", []))), "doc": doc}
        st.success(f"Sweep #{pick} reopened on the Trade-off page.", icon=":material/check_circle:")
        st.page_link(ui.PAGES["tradeoff"], label="Show it on Trade-off", icon=":material/show_chart:")
    else:
        # keyed by the data's content, as the audit page keys its own: it shows an audit of the data loaded
        st.session_state["audit_result"] = {"key": (dash.dataset_fingerprint(ds), "stored", pick),
                                            "doc": stored["doc"]}
        st.success(f"Audit #{pick} reopened on the Privacy audit page.", icon=":material/check_circle:")
        st.page_link(ui.PAGES["audit"], label="Show it on Privacy audit", icon=":material/policy:")
if c2.button("Delete", key="hist_delete"):
    history.delete(ds, pick, key=owner)
    st.rerun()
_budget()
