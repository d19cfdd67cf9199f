"""Federate: choose the method and the privacy budget, run the two rounds, see what left each entity."""
from __future__ import annotations

import json
import math
import time

import numpy as np
import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.ui import engine as dash
from dpfed_core.ui import deployment_panel
from dpfed_core.reporting import plots
from dpfed_core.errors import DpfedError
from dpfed_core.evaluation.experiments import json_safe
from dpfed_core.evaluation.service import check_run
from dpfed_core.privacy.ledger import validate_budget
from dpfed_core.methods import METHODS

ui.page_setup("Federate", ":material/hub:")
st.title("Federate")
ds = ui.require_dataset()
base = ui.current_config(ds)

# ε slider options: log-spaced, plus ∞ (non-private). A typed value off the grid joins the options, so
# the slider and the typed box always show the same ε: one session-state key (EPS) holds it.
EPS_OPTIONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, math.inf]
EPS = "fed_epsilon"


def _eps_from_slider() -> None:
    st.session_state[EPS] = float(st.session_state["fed_eps_slider"])
    st.session_state["fed_eps_text"] = dash.format_epsilon(st.session_state[EPS]).replace("∞", "inf")


def _eps_from_text() -> None:
    try:
        st.session_state[EPS] = dash.parse_epsilon(st.session_state["fed_eps_text"])
    except DpfedError:
        pass  # the error is shown below, naming the box; ε keeps its last valid value


methods = dash.federated_methods() + [m for m in dash.method_catalogue()["method"]
                                      if m not in dash.federated_methods()]
ui.widget_default("fed_method", base.method if base.method in methods else methods[0])
ui.widget_default(EPS, float(base.epsilon))
ui.widget_default("fed_delta", f"{base.delta:g}")
ui.widget_default("fed_k", base.k)
ui.widget_default("fed_rank", base.rank)
ui.widget_default("fed_lam", float(base.lam))
ui.widget_default("fed_mode", base.mode)
ui.widget_default("fed_seed", base.seed)
ui.widget_default("fed_simulation", base.simulation)



def _load_settings() -> None:
    up = st.session_state.get("fed_settings_doc")
    if up is None:
        return
    try:
        doc = json.loads(up.getvalue().decode("utf-8"))
        state = dash.widget_state(doc.get("config") if isinstance(doc, dict) else None)
    except DpfedError as exc:  # first: the engine's errors are ValueErrors too, and each names what is wrong
        st.session_state["fed_settings_msg"] = ("error", f"{dash.escape_md(up.name)}: {dash.friendly_message(exc)}")
        return
    except (ValueError, UnicodeDecodeError):
        st.session_state["fed_settings_msg"] = ("error", f"{dash.escape_md(up.name)} is not a JSON run document.")
        return
    st.session_state.update(state)
    ui.remember(*state)
    missed = dash.settings_not_loaded(doc["config"])
    st.session_state["fed_settings_msg"] = (
        "warning" if missed else "ok",
        f"Settings of {dash.escape_md(up.name)} loaded ({state['fed_method']}); the data must be the document's too (Data page) "
        "to reproduce its run." + (f" Not settable on this page, so this run differs there: {'; '.join(missed)}."
                                   if missed else ""))


with st.expander("Reproduce a run: load the settings of a run document (from the CLI's --out or this page)"):
    st.file_uploader("Run document (JSON)", type=["json"], key="fed_settings_doc", on_change=_load_settings)
    _msg = st.session_state.pop("fed_settings_msg", None)
    if _msg:
        show, icon = {"ok": (st.success, ":material/check_circle:"), "warning": (st.warning, ":material/warning:"),
                      "error": (st.error, ":material/error:")}[_msg[0]]
        show(_msg[1], icon=icon)

errors: list[str] = []
c1, c2 = st.columns([1, 2])
with c1:
    method = st.selectbox("Method", methods, key="fed_method",
                          format_func=lambda m: f"{m} — {dash.label_of(m)}")
    st.caption(f"Privacy model: **{dash.privacy_of(method)}**. {METHODS[method].description}")
spec = METHODS[method]
with c2:
    e1, e2, e3 = st.columns([3, 1, 1])
    # the two widgets are views of st.session_state[EPS]; the typed box keeps an invalid text (with its
    # error) until corrected, and is rewritten only when ε changed elsewhere (the slider)
    eps_now = float(st.session_state[EPS])
    st.session_state["fed_eps_slider"] = eps_now
    try:
        typed_ok = dash.parse_epsilon(st.session_state.get("fed_eps_text", "")) == eps_now
    except DpfedError:
        typed_ok = "fed_eps_text" in st.session_state
    if not typed_ok:
        st.session_state["fed_eps_text"] = dash.format_epsilon(eps_now).replace("∞", "inf")
    e1.select_slider("ε per entity (log scale)", sorted(set(EPS_OPTIONS) | {eps_now}), key="fed_eps_slider",
                     format_func=dash.format_epsilon, on_change=_eps_from_slider,
                     disabled=not spec.uses_epsilon)
    e2.text_input("or type ε", key="fed_eps_text", on_change=_eps_from_text,
                  help="Any positive number; 'inf' or '∞' for the non-private limit.",
                  disabled=not spec.uses_epsilon)
    e3.text_input("δ", key="fed_delta", disabled=not spec.uses_epsilon,
                  help="Probability of failure of the (ε, δ) guarantee; e.g. 1e-6.")
    epsilon, delta = math.inf, 1e-6
    budget_warnings: list[str] = []
    if spec.uses_epsilon:
        try:
            # one check before any run: ε > 0 and ≤ 1e6 (or ∞), δ < 1e-2; messages name these boxes
            epsilon, delta, budget_warnings = dash.check_budget(
                st.session_state["fed_eps_text"], st.session_state["fed_delta"],
                eps_control="“or type ε”", delta_control="“δ”", method=method)
            validate_budget(epsilon, delta)
        except DpfedError as exc:
            errors.append(dash.friendly_message(exc))
        if math.isinf(epsilon) and not errors:
            st.caption("ε = ∞: the non-private limit of the same pipeline — labelled **not private**.")
    else:
        st.caption("This method does not use ε: its privacy model is stated next to it.")

c = st.columns(5)
# k and rank take any whole number here and are checked below (one rule, dash.check_k_rank): an
# out-of-range value disables the Run button with a visible message instead of a clamped tooltip
c[0].number_input("k (prototypes per entity)", step=1, key="fed_k", disabled=not spec.uses_k)
c[1].number_input("rank ℓ (latent factors)", step=1, key="fed_rank")
c[2].number_input(*dash.CONTROL_RANGES["fed_lam"], key="fed_lam", step=0.05, format="%.3f")
c[3].selectbox("Observation mode", ["zero", "observed"], key="fed_mode",
               help="zero: absent interactions are zeros (counts, implicit; ranking headline). "
                    "observed: only observed entries (ratings; RMSE headline).")
c[4].number_input(*dash.CONTROL_RANGES["fed_seed"], key="fed_seed")
st.toggle("Simulation: reproducible noise from the seed (no privacy claim)", key="fed_simulation",
          help="For testing and benchmarking only. Without it, DP noise comes from the operating system's "
               "entropy and the seed fixes only the split and the non-private steps. A simulation run is "
               "labelled 'simulation: noise reproducible, no privacy claim' everywhere.")
errors += dash.check_k_rank(int(st.session_state["fed_k"]) if spec.uses_k else None,
                            int(st.session_state["fed_rank"]), ds)
ui.widget_default("fed_secure", base.aggregation == "secure")
st.toggle("Secure aggregation (summable methods)", key="fed_secure", disabled=not dash.is_summable(method),
          help=dash.AGGREGATION_HELP)
if dash.is_summable(method):
    st.caption(("**Secure aggregation on**: the server learns only the sum of the entities' releases; each "
                "entity adds a share of the noise. " if st.session_state["fed_secure"] else
                "**Secure aggregation off**: every entity adds the full noise and the server sees each release. ")
               + dash.escape_md(dash.advice_text(data=ui.data_cli_args())))
_kn = None if errors else dash.k_note(method, base.replace(k=int(st.session_state["fed_k"]), method=method))
if spec.uses_k and _kn:
    st.caption(_kn)
for w in budget_warnings:
    st.warning(w, icon=":material/warning:")
ui.remember("fed_method", EPS, "fed_delta", "fed_k", "fed_rank", "fed_lam",
            "fed_mode", "fed_seed", "fed_simulation", "fed_secure", "fed_weighting", "fed_max_iter",
            "fed_test_fraction", "fed_n_hidden")

# ----------------------------------------------------------------------------- advanced
proto_params: dict = {}
with st.expander("Advanced: bounds, budget split, server, split"):
    params = dash.method_parameters(method)
    if params:
        st.markdown(f"**Parameters of `{method}`** (declared by the method; blank = its automatic default)")
        cols = st.columns(3)
        for i, p in enumerate(params):
            key = f"fed_p_{method}_{p.name}"
            helptext = f"{p.doc} — {p.describe()}; default {p.default}"
            control = dash.param_widget(p)
            with cols[i % 3]:
                if control == "checkbox":
                    ui.widget_default(key, p.default)
                    v = st.checkbox(p.name, key=key, help=helptext)
                elif control == "select":
                    ui.widget_default(key, p.default)
                    v = st.selectbox(p.name, list(p.choices), key=key, help=helptext)
                elif control == "number":
                    lo = None if p.low is None else (int(p.low) if p.kind == "int" else float(p.low))
                    hi = None if p.high is None else (int(p.high) if p.kind == "int" else float(p.high))
                    ui.widget_default(key, p.default)
                    v = st.number_input(p.name, min_value=lo, max_value=hi,
                                        step=1 if p.kind == "int" else None, key=key, help=helptext,
                                        format=None if p.kind == "int" else "%g")
                else:
                    ui.widget_default(key, "" if p.default is None else str(p.default))
                    text = st.text_input(p.name, key=key, placeholder="automatic", help=helptext)
                    v = p.default
                    if text.strip():
                        try:
                            v = dash.parameter_value(p, text)
                        except Exception as exc:  # a DpfedError naming the parameter: shown in place
                            errors.append(str(exc))
                    else:
                        v = None if p.optional else p.default
            if v != p.default:
                proto_params[p.name] = v
    shares = dash.budget_split_defaults(method)
    if shares:
        st.markdown("**Budget split** — share of ε per stage (renormalised over the stages that run)")
        cols = st.columns(len(shares))
        split = {}
        for col, (stage, share) in zip(cols, shares.items()):
            ui.widget_default(f"fed_split_{stage}", float(share))
            split[stage] = float(col.number_input(stage, 0.0, 1.0, step=0.01,
                                                  key=f"fed_split_{stage}", format="%.3f"))
        if split != shares:
            proto_params["split"] = split
    s1, s2, s3, s4 = st.columns(4)
    for _key, _value in (("fed_weighting", base.server_weighting), ("fed_max_iter", base.max_iter),
                         ("fed_test_fraction", base.test_fraction), ("fed_n_hidden", base.n_hidden)):
        ui.widget_default(_key, _value)
    weighting = s1.selectbox("Server weighting", ["none", "counts"], key="fed_weighting",
                             disabled=not dash.has_server_weighting(method),
                             help="Prototype methods: entities also release (noisy) cluster sizes; the server "
                                  "weights each prototype by its size. CLI: --server-weighting.")
    max_iter = int(s2.number_input(*dash.CONTROL_RANGES["fed_max_iter"], key="fed_max_iter",
                                   help="CLI: --max-iter (the same default on both)."))
    test_fraction = float(s3.number_input(*dash.CONTROL_RANGES["fed_test_fraction"], step=0.05, key="fed_test_fraction",
                                          help="CLI: --test-fraction."))
    n_hidden = int(s4.number_input(*dash.CONTROL_RANGES["fed_n_hidden"], key="fed_n_hidden",
                                   help="CLI: --n-hidden."))

# a configuration is checked where it is made: an unusable control value is one error on the page
# (the Run button disabled), and the page goes on with the controls' last usable configuration
_settings = dict(
    method=method, epsilon=epsilon if spec.uses_epsilon else math.inf,
    delta=delta if spec.uses_epsilon else base.delta,
    k=int(st.session_state["fed_k"]), rank=int(st.session_state["fed_rank"]),
    lam=float(st.session_state["fed_lam"]), mode=st.session_state["fed_mode"],
    seed=int(st.session_state["fed_seed"]), simulation=bool(st.session_state["fed_simulation"]),
    max_iter=max_iter, test_fraction=test_fraction,
    n_hidden=n_hidden, server_weighting=weighting if dash.has_server_weighting(method) else "none",
    prototype_params=proto_params,
    aggregation="secure" if st.session_state.get("fed_secure") and dash.is_summable(method) else "none",
)
try:
    config = base.replace(**_settings)
except DpfedError as exc:
    if not errors:  # the controls' own checks above already named the value
        errors.append(dash.friendly_message(exc))
    config = base.replace(method=method, epsilon=_settings["epsilon"], delta=_settings["delta"],
                          prototype_params=proto_params, aggregation=_settings["aggregation"])
if not errors:
    try:  # the run's own rules (a method's on δ and on its parameters): refused here, with Run disabled
        check_run(ds, config)
    except DpfedError as exc:
        errors.append(dash.friendly_message(exc))
if spec.uses_epsilon and not errors and math.isfinite(epsilon):
    try:
        for line in dash.plan_captions(method, config, dash.budget_plans(method, ds, config)):
            st.caption(line)
    except DpfedError as exc:
        errors.append(dash.friendly_message(exc))

for e in errors:
    st.error(e, icon=":material/error:")

# ----------------------------------------------------------------------------- run
if deployment_panel.execution_choice() == deployment_panel.EXECUTION_OPTIONS[1]:
    deployment_panel.flower_panel(ds, config, disabled=bool(errors))
    st.stop()
_b1, _b2 = st.columns([1, 3])
from dpfed_core.evaluation.budget import plan_run  # noqa: E402
from dpfed_core.ui.history import planned_charge_text  # noqa: E402

_forecast = None if errors else dash.catalogue_forecast_text(ds, config)
if _forecast:
    st.info(dash.friendly_text(_forecast) + ".", icon=":material/info:")
_untested = None if errors else dash.no_test_users_warning(ds, config)
if _untested:
    st.warning(dash.friendly_text(_untested) + ".", icon=":material/warning:")
_cached = not errors and ui.is_cached_run(ds, config)
_charge = "" if errors else f" ({planned_charge_text(ds, plan_run(ds, config), cached=_cached)})"
_run_slot = _b1.empty()
_run_clicked = _run_slot.button("Run federation" + _charge, type="primary", disabled=bool(errors), key="fed_run")
# the button drawn after a run (below) reads "nothing new spent"; pressing it is pressing Run
_run_clicked = _run_clicked or (bool(st.session_state.get("fed_run_cached")) and not errors)
with _b2:
    ui.non_private_checkbox("federate")
    if not errors:
        st.caption(("Shown from the cache: nothing to compute." if _cached else
                    f"Expected time: {dash.estimate_line(ds, [config])}.")
                   + (" The ε on the button is the plan, charged when the run starts, then settled to what the run's "
                      "ledger recorded — never more (a method whose stages compose by zCDP, such as dp-prototypes, "
                      "can spend less)." if "spends ε ≈" in _charge else ""))
if _run_clicked:
    with st.status(f"Federating {ds.n_entities} entities with {method}…", expanded=True) as status:
        t0 = time.perf_counter()
        try:
            doc, result, cached = ui.run(ds, config, label=f"Federating with {method}",
                                         lines=lambda ev, info: dash.progress_text(ev, {
                                             **info, "entity": dash.escape_md(info.get("entity", ""))}),
                                         container=status)
        except DpfedError as exc:
            status.update(label="The run stopped", state="error", expanded=True)
            ui.show_error(exc)
        else:
            dt = time.perf_counter() - t0
            if cached:
                status.write("Same data and configuration as an earlier run: shown from the cache "
                             "(no new release, nothing new spent).")
            st.session_state[ui.RUN] = {"doc": doc, "result": result, "config": config, "seconds": dt,
                                        "cached": cached}
            st.session_state[ui.CONFIG] = config
            if not cached:
                ui.record("run", doc, result)
            _state, _label = dash.run_outcome(doc, dt)
            status.update(label=_label, state=_state, expanded=False)
            # the button now says what pressing it again does: show this result, spend nothing
            _run_slot.button("Run federation (" + planned_charge_text(ds, [], cached=True) + ")", type="primary",
                             key="fed_run_cached")

r = ui.get_run()
if r is None:
    st.info(f"Set the budget and press **Run federation**: {dash.estimate_line(ds, [config])}.")
    st.stop()

doc, result, cfg = r["doc"], r["result"], r["config"]
if dash.config_key(cfg) != dash.config_key(config):
    st.caption("The results below are from the last run; the controls above have changed since.")
st.markdown(dash.guarantee_text(doc))
if r.get("cached"):
    st.caption("Same data and configuration as an earlier run (this or another session): shown from the "
               "cache — no new release, nothing new spent.")
if r.get("stored_id"):
    st.caption(f"Reopened from the history (result #{r['stored_id']}).")
ui.run_messages(doc, ds.notes)  # its warnings (a run that learned nothing is an error) and notes
o = doc["overall"]
m = st.columns(5)
m[0].metric("Run time", f"{r['seconds']:.2f} s", help="Fit and evaluation; 0 if served from the cache.")
_spent, _asked = float(doc["privacy"]["epsilon"]), float(doc["privacy"].get("requested_epsilon", math.inf))
m[1].metric("ε (ledger)" if not doc["privacy"].get("simulation") else "ε (simulation)",
            dash.format_epsilon(_spent),
            # less than asked: the stages compose by zCDP to less than their sum, or a stage that did not
            # run spent nothing (e.g. nothing passed the DP selection; the notes say so)
            delta=(dash.epsilon_below_request(doc) if math.isfinite(_asked) and _spent < _asked * 0.999 else None),
            delta_color="off")
for _col, (_key, _label, _help) in zip(m[2:], dash.headline_metrics(cfg.mode, cfg.top_n)):
    _col.metric(_label, ui.fmt(o[_key]), help=_help)
if cfg.mode == "zero" and ds.value_kind == "ratings":
    st.caption(dash.RMSE_NOT_HEADLINED)

tabs = st.tabs(["What the server saw", "V: item factors", "Message log", "Privacy ledger", "Run document"])
with tabs[0]:
    if dash.has_prototypes(result):
        st.markdown("Exactly what each entity sent in round 1: its **prototypes** (rows) over the items "
                    "(columns, the items with most prototype mass across all entities, same for every "
                    "entity). Nothing else derived from its data left it.")
        st.dataframe(dash.prototype_summary(result, ds), hide_index=True)
        if dash.k_note(cfg.method, cfg):
            st.caption(dash.k_note(cfg.method, cfg))
        # a catalogue of 5 items or fewer is shown whole: a slider needs a range to choose from
        n_cols = (st.slider("Items shown", 5, min(80, ds.n_items), min(30, ds.n_items), key="fed_n_cols")
                  if ds.n_items > 5 else ds.n_items)
        P_all = np.vstack([rel.prototypes for rel in result.model.releases_])
        cols_idx = dash.top_columns(P_all, n_cols)
        ent = st.selectbox("Entity", list(ds.entity_names) + ["all entities"], key="fed_proto_entity")
        names = ds.entity_names if ent == "all entities" else [ent]
        for name in names:
            rel = result.model.releases_[ds.entity_index(name)]
            st.plotly_chart(plots.prototype_heatmap(rel.prototypes, ds.item_names, cols_idx,
                                                    title=f"{plots.escape_text(name)}: {len(rel.prototypes)} prototypes sent",
                                                    value_max=ds.value_max),
                            key=f"proto_{name}")
    elif getattr(result.model, "secure_sum_", None) is not None:
        public = result.model.public_
        st.markdown("Exactly what the server learned in round 1: the **sums** of the entities' releases "
                    + ("(secure aggregation: no entity's own share)" if cfg.aggregation == "secure" else
                       "(no secure aggregation: it also saw every entity's release — see the message log)")
                    + ", and what it broadcast between the sums.")
        st.dataframe(dash.server_view(result), hide_index=True)
    else:
        st.info(f"`{cfg.method}` does not send prototypes; see the message log for what it shares.")
with tabs[1]:
    V_shared, n_local = dash.broadcast_factors(result)
    _keys, _declared = dash.broadcast_keys(result), dash.declared_split(result)
    _columns = dash.broadcast_column_names(getattr(result.model, "broadcast_parts_", None), V_shared.shape[1])
    _on = (f"{_keys[0]} shared keys × {V_shared.shape[1]} columns, shown on the "
           f"{_keys[1]} items of the kept keys: items sharing a key "
           "share its row" if _keys is not None else
           f"{_declared[0]} declared items × {V_shared.shape[1]} columns; the data's {_declared[1]} items outside "
           "the declared catalogue have no row — each entity scores the ones it holds with its own model"
           if _declared is not None else f"{V_shared.shape[0]} items × {V_shared.shape[1]} columns")
    if _columns == ["DP popularity"]:  # dp-popularity: no factor at all
        st.markdown(f"What the server {dash.broadcast_words(doc)} (**V**, {_on.replace('1 columns', '1 column')}): one "
                    "column, the DP popularity of the items — no latent factor — and the items it ranks highest.")
    else:
        _pop = (" — its last column is the DP popularity of the items, not a latent factor"
                if "DP popularity" in _columns else "")
        st.markdown(f"The server's item factors **V** ({_on}{_pop}), {dash.broadcast_words(doc)}, and "
                    "the items that load most on each column.")
    if n_local:
        st.caption(f"Not shown: {n_local} entity-local columns (each entity's own model and popularity, "
                   "computed from its own rows in round 2). They never left their entity.")
    if V_shared.shape[1] <= 200:
        st.plotly_chart(plots.factor_heatmap(V_shared, ds.item_names, columns=_columns), key="v_heatmap")
        st.dataframe(dash.top_items_per_factor(V_shared, ds.item_names, 8, columns=_columns))
with tabs[2]:
    msgs = dash.messages_table(doc)
    st.markdown(f"{int(msgs['copies'].sum())} messages crossed an entity's boundary "
                f"({msgs['bytes'].sum() / 1024:.1f} KiB in total)." if not msgs.empty else "No messages.")
    st.dataframe(msgs, hide_index=True)
with tabs[3]:
    st.markdown(dash.guarantee_text(doc))
    stages = dash.per_stage_table(doc)
    if not stages.empty:
        st.dataframe(stages, hide_index=True, column_config={
            c: st.column_config.NumberColumn(c, format="%.3g") for c in stages.columns
            if c not in ("entity", "composed by")}
            | {"δ (composed)": st.column_config.NumberColumn("δ (composed)", format="%.3e")})
        st.caption("A stage's column is what it would cost alone; the stages compose into the entity's ε by the "
                   "accountant named in the last column (under zCDP that is less than their sum).")
        if doc["privacy"]["private"] and doc["privacy"].get("per_entity"):
            _trust = doc["privacy"].get("trust") or {}
            _coal = (_trust.get("against_server_and_other_entities") or {}).get("epsilon")
            st.plotly_chart(plots.privacy_composed_bars(
                doc["privacy"]["per_entity"], float(doc["privacy"]["requested_epsilon"]),
                float(_coal) if _trust.get("aggregation") == "secure" and _coal is not None else None,
                title="ε per entity (composed guarantee)"), key="ledger_bars")
    with st.expander("Every mechanism invocation (ledger rows)"):
        st.dataframe(dash.ledger_table(doc), hide_index=True)
with tabs[4]:
    st.download_button("Download the result document (JSON)",
                       dash.document_json(doc), file_name=f"dpfed_{cfg.method}_run.json",
                       mime="application/json", key="dl_run")
    st.markdown("The same run on the command line (every setting written out; the CLI's defaults are the "
                "dashboard's):")
    st.code(dash.cli_command(cfg, *ui.data_cli_args()), language="bash")
    st.json({"config": json_safe(doc["config"]), "timings (s)": doc["timings"], "notes": doc["notes"]},
            expanded=False)
