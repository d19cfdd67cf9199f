"""Trade-off: the privacy–utility sweep (SPEC §4) with mean ± sd bands and the crossing ε."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.ui import engine as dash
from dpfed_core.reporting import plots
from dpfed_core.errors import DpfedError
from dpfed_core.methods import METHODS

ui.page_setup("Trade-off", ":material/show_chart:")
st.title("Privacy–utility trade-off")
ds = ui.require_dataset()
base = ui.current_config(ds)
st.caption("The swept method over an ε grid and several seeds (each seed its own split); the "
           "comparison methods once per seed as reference lines. Based on the Federate page's "
           "settings (k, rank, λ, mode, budget split).")

dp_methods = [m for m in dash.method_catalogue()["method"] if METHODS[m].uses_epsilon] or \
    dash.federated_methods()
others = [m for m in dash.method_catalogue()["method"]]
ui.widget_default("sweep_method", base.method if base.method in dp_methods else dp_methods[0])
ui.widget_default("sweep_grid", ", ".join(dash.format_epsilon(e).replace("∞", "inf")
                                          for e in dash.DEFAULT_EPS_GRID))
ui.widget_default("sweep_seeds", ", ".join(map(str, dash.DEFAULT_SWEEP_SEEDS)))
ui.widget_default("sweep_refs", list(dash.BASE_REFERENCES))
c1, c2, c3 = st.columns([2, 3, 1])
method = c1.selectbox("Method swept", dp_methods, key="sweep_method")
grid_text = c2.text_input("ε grid (comma-separated, inf = non-private)", key="sweep_grid")
seeds_text = c3.text_input("Seeds", key="sweep_seeds")
refs = st.multiselect("Reference lines", [m for m in others if m != method], key="sweep_refs")
ui.remember("sweep_method", "sweep_grid", "sweep_seeds", "sweep_refs")

try:
    grid = dash.parse_grid(grid_text)
    seeds = dash.parse_seeds(seeds_text)
    config = base.replace(method=method, epsilon=base.epsilon if METHODS[base.method].uses_epsilon else 1.0)
    config.validate()
except DpfedError as exc:
    ui.show_error(exc)
    st.stop()

key = (dash.dataset_fingerprint(ds), dash.config_key(config), tuple(grid), tuple(seeds), tuple(refs))
have = st.session_state.get(ui.SWEEP)
n_runs = len(seeds) * (len(grid) + len(refs))
if st.button(f"Run sweep ({n_runs} runs)", type="primary", key="sweep_run"):
    bar = st.progress(0.0, text="Starting the sweep…")

    def progress(event: str, **info) -> None:
        if event == "sweep_step":
            bar.progress(info["done"] / info["total"],
                         text=f"{info['done']}/{info['total']}: {info['method']}, "
                              f"ε = {dash.format_epsilon(info['epsilon'])}, seed {info['seed']}")

    try:
        doc = ui.run_sweep(ds, config, grid, seeds, refs, progress)
    except DpfedError as exc:
        bar.empty()
        ui.show_error(exc)
        st.stop()
    bar.empty()
    have = {"key": key, "doc": doc}
    st.session_state[ui.SWEEP] = have

if not have:
    st.info("Press **Run sweep**. The default grid takes well under a minute on the sample data; the "
            "result is cached, so coming back is instant.")
    st.stop()
doc = have["doc"]
if have["key"] != key:
    st.caption("Showing the last sweep; the settings above have changed since (press Run sweep).")

labels = {m: dash.label_of(m) for m in [doc["config"]["method"], *doc["references"]]}
swept = doc["config"]["method"]
st.caption(f"Swept: **{labels[swept]}** — {dash.privacy_of(swept)}. References: " + "; ".join(
    f"{labels[m]} ({dash.privacy_of(m)})" for m in doc["references"]))

show = ["mar", "test_rmse"]
extra = st.selectbox("Another metric", ["(none)", "ndcg_at_10", "precision_at_10", "recall_at_10", "train_rmse"],
                     key="sweep_extra")
if extra != "(none)":
    show.append(extra)
cols = st.columns(2)
tables = []
for i, metric in enumerate(show):
    table = dash.sweep_frame(doc, metric)
    tables.append(table)
    cross = dash.sweep_crossing(doc, metric) if "individual" in doc["references"] else None
    name = dash.METRIC_SHORT.get(metric, metric)
    fig = plots.tradeoff_chart(table, swept, metric, references=doc["references"], crossing=cross,
                               labels=labels, metric_label=f"{name} ({dash.better_word(metric)})",
                               title=f"{name} against ε")
    with cols[i % 2]:
        st.plotly_chart(fig, key=f"tradeoff_{metric}")
        if "individual" in doc["references"]:
            st.markdown(f"Crossing ε ({name}) vs individual: {dash.sweep_crossing_text(doc, metric)}")

if "dp-popularity" in doc["references"]:
    from dpfed_core.evaluation.experiments import versus_dp_popularity

    rows = versus_dp_popularity(doc, "mar")
    lost = [r for r in rows if r["verdict"] == "LOSES to dp-popularity"]
    if lost:
        # A DP method that loses to the one-line DP popularity list must say so (issue 15).
        st.warning(f"**{swept} loses to dp-popularity** (a DP list of the most popular items) at ε = " +
                   ", ".join(f"{dash.format_epsilon(r['epsilon'])} (MAR {r['mean']:.3f} vs "
                             f"{r['dp_popularity_mean']:.3f})" for r in lost) +
                   ": at these ε a user is better served by the DP popularity list.")
    elif rows:
        st.caption("MAR against dp-popularity at the same ε: " + "; ".join(
            f"ε = {dash.format_epsilon(r['epsilon'])}: {r['verdict']}" for r in rows))

all_rows = pd.concat(tables, ignore_index=True)
all_rows["epsilon"] = all_rows["epsilon"].map(dash.format_epsilon)
with st.expander("Mean ± sd table"):
    st.dataframe(all_rows, hide_index=True)
st.download_button("Download the sweep table (CSV)", all_rows.to_csv(index=False).encode(),
                   file_name="dpfed_sweep.csv", mime="text/csv", key="sweep_csv")
