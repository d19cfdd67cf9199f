"""Evaluate: the federated model beside the reference methods, on the same split."""
from __future__ import annotations

import math

import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.ui import engine as dash
from dpfed_core.reporting import plots
from dpfed_core.errors import DpfedError
from dpfed_core.privacy.odometer import BudgetRefused
from dpfed_core.methods import METHODS
from dpfed_core.evaluation.defaults import compared_config, compared_epsilon_note

ui.page_setup("Evaluate", ":material/bar_chart:")
st.title("Evaluate")
ds = ui.require_dataset()
r = ui.require_run("compare it with the reference methods")
cfg = r["config"]

others = [m for m in dash.method_catalogue()["method"] if m != cfg.method]
# dp-popularity (a DP reference) joins the defaults when this build has it
ui.widget_default("eval_methods", [m for m in dict.fromkeys((*dash.BASE_REFERENCES, "dp-popularity")) if m in others])
chosen = st.multiselect("Compare with (all on the same split: same seed, same hidden entries)", others,
                        key="eval_methods", format_func=lambda m: f"{m} — {dash.label_of(m)}")
ui.remember("eval_methods")
ui.non_private_checkbox("evaluate")
st.caption("Some systems of the other papers (e.g. FCF's many communication rounds) take much longer "
           "than the defaults; each result is cached once computed.")


def config_for(method: str):
    """The run's config for another method; ε/δ/prototype settings are dropped where the method does
    not use them, so one cached run serves every ε of the federated model."""
    spec = METHODS[method]
    c = compared_config(ds, cfg, method)
    if not spec.uses_epsilon:
        c = c.replace(epsilon=math.inf, delta=1e-6)
    if not spec.uses_k:
        c = c.replace(prototype_params={}, server_weighting="none")
    return c


docs = {cfg.method: r["doc"]}
# Nothing is computed on a visit (every comparison is a release, charged to the budget): the
# comparisons run when the button is pressed; a later visit shows them again from the session.
from dpfed_core.evaluation.budget import plan_run  # noqa: E402
from dpfed_core.ui.history import planned_charge_text  # noqa: E402

run_key = dash.config_key(cfg)
have = st.session_state.get(ui.COMPARISON)
if have and have.get("config_key") == run_key:
    docs.update({m: d for m, d in have["docs"].items() if m in chosen})
todo = [m for m in chosen if m not in docs]
if todo:
    plans = [p for m in todo for p in plan_run(ds, config_for(m), comparison=True)]
    st.caption(f"Expected time: {dash.estimate_line(ds, [config_for(m) for m in todo])}.")
    _moved = compared_epsilon_note(ds, cfg, todo)
    if _moved:
        st.caption(dash.escape_md(dash.friendly_text(_moved)))
    if st.button(f"Run {len(todo)} comparison{'s' if len(todo) != 1 else ''} ({planned_charge_text(ds, plans)})",
                 type="primary", key="eval_run"):
        for i, m in enumerate(todo):
            try:
                docs[m] = ui.run(ds, config_for(m), label=f"Comparison {i + 1}/{len(todo)}: {m}",
                                 comparison=True)[0]
            except DpfedError as exc:
                ui.show_error(exc)
                if isinstance(exc, BudgetRefused):
                    break
            except Exception as exc:  # a comparison method's bug must not hide the other methods' results
                st.error(f"{m} failed unexpectedly ({type(exc).__name__}). This is a bug in the method; "
                         "the other methods are shown.", icon=":material/error:")
        st.session_state[ui.COMPARISON] = {"config_key": run_key, "docs": dict(docs)}
    else:
        st.caption(f"Not run yet: {', '.join(todo)}. "
                   + ("Each comparison that releases something is charged to the privacy budget, so it runs only "
                      "when you press the button." if dash.any_release(todo) else
                      "They release nothing and spend nothing; they run when you press the button."))

df = dash.metrics_frame(docs)
metrics = dash.metric_columns(df)
# ---------------------------------------------------------------- headline verdict (MAR first)
metric_keys = dash.metric_columns(dash.metrics_frame(docs))
head_metric = st.radio("Verdict on", metric_keys, index=metric_keys.index("mar") if "mar" in metric_keys else 0,
                       horizontal=True, key="eval_verdict_metric",
                       format_func=lambda m: dash.metric_at(m, dash.METRIC_SHORT))
ui.remember("eval_verdict_metric")
if any(b in docs for b in dash.VERDICT_BASELINES) and cfg.method not in dash.VERDICT_BASELINES:
    # against local (each entity's own model + own popularity) with individual beside it: the
    # function the CLI's run --compare and the report use (evaluation/verdicts.py)
    v = dash.entity_verdict(docs, cfg.method, head_metric)
    st.subheader("Verdict")
    word = dash.verdict_word(v) or dash.verdict_word(v, "individual")
    show = {"better": st.success, "worse": st.error}.get(word, st.info)
    show(dash.escape_md(dash.verdict_sentence(v)), icon=":material/balance:")
    if "local" not in docs:
        st.caption("The verdict is stated against *local* (each entity's own model and popularity): add it above.")
    sweep = st.session_state.get(ui.SWEEP)
    if sweep and sweep["doc"]["config"]["method"] == cfg.method:
        st.markdown(dash.pays_from_sweep(sweep["doc"], head_metric) + " (from the last trade-off sweep)")
    else:
        st.caption("“Federation pays from ε ≈ …” needs a sweep over ε: run one on the Trade-off page.")
    st.caption(dash.escape_md(dash.paper_differences_text(cfg.to_dict(), docs.get(cfg.method))))
    st.caption("One run, one split: per-entity differences below 0.5 % count as ties; an entity without "
               "test users has no verdict. The Trade-off page repeats this over seeds and says when a "
               "difference is inside the noise.")
else:
    st.info("Add *local* (each entity alone) to the comparison to get the verdict.", icon=":material/info:")

st.subheader("Overall")
overall = df[df["entity"] == "overall"].set_index("method")[[*metrics, "privacy"]]
st.dataframe(overall, column_config={m: st.column_config.NumberColumn(
    dash.metric_at(m, dash.METRIC_SHORT), format="%.4f", help=dash.metric_at(m)) for m in metrics})
_obs_note = dash.observed_ranking_note(docs, cfg.mode)
if _obs_note:
    st.info(_obs_note, icon=":material/info:")
_trust = dash.trust_model_note(cfg.method, cfg.aggregation, list(docs))
if _trust:
    st.caption(dash.escape_md(_trust))
st.caption("Privacy models differ: a method's ε is comparable with ours only when its privacy model "
           "says user-level DP. MAR: 0 = the hidden items are ranked first, 0.5 = random order. "
           f"Federated run: {dash.guarantee_text(r['doc']).replace('**', '')}")

if "n_test_users" in df and not (df.loc[df["entity"] != "overall", "n_test_users"].fillna(0) > 0).any():
    st.warning("No entity has test users, so every held-out metric is undefined: the run's warnings on the "
               "Federate page say why and which control changes it.", icon=":material/warning:")
metric = st.selectbox("Metric", metrics, index=metrics.index("mar") if "mar" in metrics else 0,
                      format_func=lambda m: dash.metric_at(m), key="eval_metric")
_short = dash.metric_at(metric, dash.METRIC_SHORT)
st.plotly_chart(plots.metric_bars(df, metric, title=f"{_short} per entity ({dash.better_word(metric)})",
                                  metric_label=_short),
                key="eval_bars")
if df["entity"].nunique() - 1 > plots.MANY_ENTITIES:
    st.caption("Many entities: one row per entity, sorted by the federated model's value; a grey line "
               "joins each entity's methods.")

st.subheader("Per entity")
wide = df.pivot_table(index="entity", columns="method", values=metric, sort=False, dropna=False)
wide = wide[[m for m in docs if m in wide.columns]]
# an entity without test users has an undefined metric: said in words, never a number or a win
st.dataframe(dash.undefined_as_words(wide))

st.download_button("Download all metrics (CSV)", df.to_csv(index=False).encode(),
                   file_name=f"dpfed_metrics_{cfg.method}_seed{cfg.seed}.csv", mime="text/csv",
                   key="eval_csv")
st.session_state[ui.COMPARISON] = {"config_key": run_key, "docs": {**(have or {}).get("docs", {}), **docs}} \
    if have and have.get("config_key") == run_key else {"config_key": run_key, "docs": docs}
