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
_ran = st.session_state.get(ui.CONFIG) is not None
if not _ran:  # no mode chosen yet: the sweep's own default for its ranking metric, as `sweep` without --mode
    base = base.replace(mode=dash.sweep_mode(None))
st.caption("The swept method over an ε grid and several seeds (each seed its own split); the "
           "comparison methods once per seed as reference lines. Based on the settings of "
           + ("the last run on the Federate page" if _ran else "the Federate page's defaults (no run there yet), "
              "in zero mode as the command line's sweep runs a ranking metric")
           + " (k, rank, λ, mode, budget split, trust model) — a control changed there since counts from its next "
           "run — with " + dash.sweep_noise_text(ds, base.simulation) + ".")

dp_methods = [m for m in dash.method_catalogue()["method"] if METHODS[m].uses_epsilon] or \
    dash.federated_methods()
others = [m for m in dash.method_catalogue()["method"]]
ui.widget_default("sweep_method", base.method if base.method in dp_methods else dp_methods[0])
ui.widget_default("sweep_grid", ", ".join(dash.format_epsilon(e).replace("∞", "inf")
                                          for e in dash.DEFAULT_EPS_GRID))
ui.widget_default("sweep_seeds", ", ".join(map(str, dash.DEFAULT_SWEEP_SEEDS)))
ui.widget_default("sweep_refs", [m for m in dict.fromkeys((*dash.BASE_REFERENCES, "dp-popularity")) if m in others])
c1, c2, c3 = st.columns([2, 3, 1])
method = c1.selectbox("Method swept", dp_methods, key="sweep_method")
grid_text = c2.text_input("ε grid (comma-separated, inf = non-private)", key="sweep_grid")
seeds_text = c3.text_input("Seeds", key="sweep_seeds")
ui.non_private_checkbox("tradeoff")
refs = st.multiselect("Reference lines", [m for m in others if m != method], key="sweep_refs")
ui.remember("sweep_method", "sweep_grid", "sweep_seeds", "sweep_refs")

try:
    grid = dash.parse_grid(grid_text)
    seeds = dash.parse_seeds(seeds_text)
    config = dash.with_method(base, method)
except DpfedError as exc:
    ui.show_error(exc)
    st.stop()
# the Federate page's k and rank, checked as it checks them: a sweep is never run (nor charged) on settings
# the Federate page and the CLI refuse for these data
_problems = dash.check_k_rank(config.k if METHODS[config.method].uses_k else None, config.rank, ds)
if _problems:
    st.error(" ".join(_problems) + " Set it on the Federate page; the sweep runs with its settings.",
             icon=":material/error:")
    st.stop()
from dpfed_core.evaluation.service import check_run  # noqa: E402

try:  # the sweep's own rules (each reference's, a method's on δ), as the button would meet them: said before it
    check_run(ds, config, [r for r in refs if r != method], "references")
except DpfedError as exc:
    ui.show_error(exc)
    st.stop()

key = (dash.dataset_fingerprint(ds), dash.config_key(config), tuple(grid), tuple(seeds), tuple(refs))
have = st.session_state.get(ui.SWEEP)
try:
    _sweep_runs = dash.sweep_configs(config, grid, seeds, refs)
except DpfedError as exc:  # a run of the grid the checks above let through: its rule in the page's words
    ui.show_error(exc)
    st.stop()
n_runs = len(_sweep_runs)
from dpfed_core.evaluation.budget import plan_sweep  # noqa: E402
from dpfed_core.ui.history import planned_charge_text  # noqa: E402

try:
    _charge = planned_charge_text(ds, plan_sweep(ds, config, grid, seeds, refs))
except DpfedError as exc:
    ui.show_error(exc)
    st.stop()
_untested = dash.no_test_users_warning(ds, config)
if _untested:  # every point would be charged with no metric to compare: said before the button
    st.warning(dash.friendly_text(_untested) + ".", icon=":material/warning:")
_expected = dash.estimate_line(ds, _sweep_runs)
st.caption(f"Expected time: {_expected}.")
ui.widget_default("sweep_metric", "mar")  # the headline metric below: the command's --metric
with st.expander("The same sweep on the command line"):
    st.caption("Every setting written out (the CLI's defaults are the dashboard's); --metric is the headline "
               "metric chosen below, whose crossing ε the command prints.")
    st.code(dash.sweep_command(config, grid, seeds, refs, st.session_state["sweep_metric"], *ui.data_cli_args(),
                               allow_non_private=ui.allow_non_private()), language="bash")
if st.button(f"Run sweep ({n_runs} runs; {_charge})", type="primary", key="sweep_run"):
    try:
        doc, cached = ui.run_sweep(ds, config, grid, seeds, refs)
    except DpfedError as exc:
        ui.show_error(exc)
        st.stop()
    have = {"key": key, "doc": doc}
    st.session_state[ui.SWEEP] = have
    if cached:
        st.caption("Same data and settings as an earlier sweep: shown from the cache.")
    else:
        ui.record("sweep", {**doc, "request": {"epsilons": grid, "seeds": seeds, "references": refs}})

if not have:
    st.info(f"Press **Run sweep**: {_expected}; the result is cached, so coming back is instant.")
    st.stop()
doc = have["doc"]
if have["key"] != key:
    st.caption("Showing the last sweep; the settings above have changed since (press Run sweep).")

labels = {m: dash.label_of(m) for m in [doc["config"]["method"], *doc["references"]]}
swept = doc["config"]["method"]
st.caption(f"Swept: **{labels[swept]}** — {dash.privacy_of(swept)}. References: " + "; ".join(
    f"{labels[m]} ({dash.privacy_of(m)})" for m in doc["references"]))
_trust = dash.trust_model_note(swept, doc["config"].get("aggregation", "none"), [swept, *doc["references"]])
if _trust:
    st.caption(dash.escape_md(_trust))
_unproved = dash.unproved_sweep_text(doc)  # points whose ε against the server is not proved (rounded shares)
if _unproved:
    st.warning(dash.escape_md(_unproved))

# ---------------------------------------------------------------- headline verdict (one metric)
all_metrics = ["mar", "test_rmse", "ndcg_at_10", "precision_at_10", "recall_at_10", "train_rmse"]
metric = st.radio("Headline metric", all_metrics, horizontal=True, key="sweep_metric",
                  format_func=lambda m: dash.metric_at(m, dash.METRIC_SHORT))
ui.remember("sweep_metric")
name = dash.metric_at(metric, dash.METRIC_SHORT)
has_ind = any(b in doc["references"] for b in dash.VERDICT_BASELINES)
st.subheader("Verdict")
finite = [e for e in doc["epsilons"] if e != float("inf")]
v_eps = 1.0 if 1.0 in finite else (min(finite, key=lambda e: abs(e - 1.0)) if finite else None)
# the chart marks the crossing against local (each entity alone), else against individual
cross_ref = next((b for b in dash.VERDICT_BASELINES if b in doc["references"]), None)
cross = dash.sweep_crossing(doc, metric, cross_ref) if cross_ref else None
if has_ind:
    st.markdown(dash.pays_from_sweep(doc, metric))
    if v_eps is not None:
        v = dash.sweep_entity_verdict(doc, v_eps, metric)
        if v:
            st.markdown(dash.escape_md(dash.sweep_verdict_sentence(v, len(doc["seeds"]))))
    if "dp-popularity" not in doc["references"]:
        st.caption("DP popularity is not among the reference lines" + (
            " (add it above)." if "dp-popularity" in others else " (not available in this build)."))
else:
    st.info("Add *local* (each entity alone) to the reference lines for the verdict and the crossing ε.",
            icon=":material/info:")

if "dp-popularity" in doc["references"]:
    from dpfed_core.evaluation.experiments import versus_dp_popularity

    rows = versus_dp_popularity(doc, "mar")
    lost = [r for r in rows if r["verdict"] == "LOSES to dp-popularity"]
    if lost:
        # A DP method that loses to the one-line DP popularity list must say so.
        st.warning(f"**{swept} loses to dp-popularity** (a DP list of the most popular items) at ε = " +
                   ", ".join(f"{dash.format_epsilon(r['epsilon'])} (MAR {r['mean']:.3f} vs "
                             f"{r['dp_popularity_mean']:.3f})" for r in lost) +
                   ": at these ε a user is better served by the DP popularity list.")
    elif rows:
        st.caption("MAR against dp-popularity at the same ε: " + "; ".join(
            f"ε = {dash.format_epsilon(r['epsilon'])}: {r['verdict']}" for r in rows))

table = dash.sweep_frame(doc, metric)
fig = plots.tradeoff_chart(table, swept, metric, references=doc["references"], crossing=cross,
                           crossing_against=cross_ref,
                           labels=labels, metric_label=f"{name} ({dash.better_word(metric)})",
                           title=f"{name} against ε")
st.plotly_chart(fig, key=f"tradeoff_{metric}")
if cross_ref:
    st.markdown(f"Crossing ε ({name}) vs {cross_ref}: {dash.sweep_crossing_text(doc, metric, cross_ref)}")

# ---------------------------------------------------------------- ε planner
st.subheader("ε planner")
p1, p2 = st.columns(2)
with p1:
    tol = st.number_input("Utility I need: within this % of the best reference", 0.0, 100.0, 5.0, step=1.0,
                          key="sweep_tol", help="Of central (all data pooled, non-private) when it was "
                                                "run, else of the swept method at ε = ∞.")
    plan = dash.epsilon_for_utility(doc, metric, tol / 100.0)
    if plan["reference"] is None:
        st.info("Add *central* to the reference lines (or ∞ to the grid) to plan ε.")
    elif plan["epsilon"] is None:
        st.markdown(f"No ε on this grid gets {name} within {tol:g} % of {plan['reference']} "
                    f"({plan['reference_value']:.4f} → target {plan['target']:.4f}). Try a larger grid.")
    else:
        st.markdown(f"**Smallest ε on the grid within {tol:g} % of {plan['reference']}: "
                    f"ε = {dash.format_epsilon(plan['epsilon'])}** ({name} target {plan['target']:.4f}; "
                    "at that ε and every larger one).")
with p2:
    sub_eps = st.select_slider("How many users per entity would make this ε pay?", finite or [1.0],
                               value=v_eps if v_eps in finite else (finite or [1.0])[0],
                               key="sweep_sub_eps", format_func=dash.format_epsilon)
    per_user = st.number_input("Interactions per user (your assumption)", 1.0, 10_000.0, 20.0, step=1.0,
                               key="sweep_sub_per_user",
                               help="The planner never reads the private rows: it builds synthetic federations "
                                    "from the entity list, the item count, the value bound and this assumption "
                                    "(the item count is the data's own when no catalogue is declared).")
    items_from_data = ds.item_source != "declared"
    st.caption(f"Runs {swept} (simulation noise) and **local** (each entity alone, done properly) on synthetic "
               f"federations of {ds.n_entities} entities × {ds.n_items} items with 50–800 users per entity "
               f"(2 seeds each; observation mode {config.mode}) and finds where the federation's advantage "
               "crosses zero. Synthetic data: no row is read and nothing is charged"
               + ("; the item count is the data's own (no catalogue is declared), which the public report "
                  "withholds — this estimate is for the data owner's eyes." if items_from_data else "."))
    if st.button("Estimate users needed", key="sweep_sub_run"):
        cfg_sub = config.replace(method=swept, epsilon=sub_eps)

        def compute(progress):
            from dpfed_core.evaluation.planner import users_needed

            return users_needed(cfg_sub, n_entities=ds.n_entities, n_items=ds.n_items, value_max=ds.value_max,
                                interactions_per_user=per_user, metric=metric, progress=progress)

        try:
            res, _ = ui.run_job(dash.generic_key("users", ds, dash.config_key(cfg_sub),
                                                 sub_eps, metric, per_user), compute, "Runs on synthetic federations")
            st.session_state["sweep_sub_result"] = {"eps": sub_eps, "metric": metric, "points": res["points"],
                                                    "mode": res["mode"]}
        except DpfedError as exc:
            ui.show_error(exc)
    sub = st.session_state.get("sweep_sub_result")
    if sub and sub["eps"] == sub_eps and sub["metric"] == metric:
        est = dash.users_to_pay(sub["points"], metric)
        st.dataframe([{"users per entity": p["users"], "advantage over local": p["advantage"],
                       "sd over seeds": p["sd"]} for p in sub["points"]], hide_index=True, width="stretch")
        st.markdown(dash.users_to_pay_sentence(est, dash.format_epsilon(sub_eps), sub.get("mode", config.mode)))

with st.expander("Other metrics"):
    tables = []
    for mtr in all_metrics:
        t = dash.sweep_frame(doc, mtr)
        tables.append(t)
        if mtr != metric:
            c_ = dash.sweep_crossing(doc, mtr, cross_ref) if cross_ref else None
            nm = dash.metric_at(mtr, dash.METRIC_SHORT)
            st.plotly_chart(plots.tradeoff_chart(t, swept, mtr, references=doc["references"], crossing=c_,
                                                 crossing_against=cross_ref,
                                                 labels=labels, metric_label=f"{nm} ({dash.better_word(mtr)})",
                                                 title=f"{nm} against ε"), key=f"tradeoff_other_{mtr}")
all_rows = pd.concat(tables, ignore_index=True)
all_rows["epsilon"] = all_rows["epsilon"].map(dash.format_epsilon)
with st.expander("Mean ± sd table"):
    st.dataframe(all_rows, hide_index=True, width="stretch")
st.download_button("Download the sweep table (CSV)", all_rows.to_csv(index=False).encode(),
                   file_name="dpfed_sweep.csv", mime="text/csv", key="sweep_csv")
