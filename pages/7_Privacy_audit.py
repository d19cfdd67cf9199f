"""Privacy audit: what could someone who sees the server's inbox learn about one user?

A membership-inference audit of one entity's round-1 release (:mod:`dpfed_core.audit.membership`): the
mechanism runs many times with and without a target user; an attacker scores each release; we show
ROC curves, AUC, TPR at low FPR and the empirical ε lower bound against the claimed ε. Plus the
one-click compliance report (:mod:`dpfed_core.reporting.report`).
"""
from __future__ import annotations

import json
import math

import pandas as pd
import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.audit import membership as aud
from dpfed_core.audit.targets import MIN_USERS_FOR_REAL_TARGET, too_few_users
from dpfed_core.ui import engine as dash
from dpfed_core.reporting import report as rep
from dpfed_core.errors import DpfedError
from dpfed_core.evaluation.experiments import json_safe

RESULT = "audit_result"  # {"key", "doc"} of the last audit (keys prefixed audit_, like the widgets)
TARGET_CHOICES = {"synthetic": "Synthetic worst case (Λ∞ on the entity's rarest items)",
                  "outlier": "Real user farthest from the rest",
                  "typical": "Typical real user"}

ui.page_setup("Privacy audit", ":material/policy:")
st.title("🕵️ Privacy audit")
st.markdown(
    "What could someone who sees **everything the server received** learn about one patient? "
    "For one entity and a target user, the round-1 mechanism runs many times **with** and "
    "**without** the target (fresh randomness each time). An attacker who knows the target's row "
    "and sees only what the method releases (its DP statistics or prototypes) tries to tell the two apart. "
    "A DP method must keep the "
    "attacker's success within what its ε allows; the non-private k-means and k-random prototypes "
    "are audited alongside for contrast."
)
ds = ui.require_dataset()
base = ui.current_config(ds)
aud.ensure_prototype_methods()

auditable = aud.auditable_methods()  # prototype methods and summable releases (dp-cooccurrence, dp-popularity)
methods_all = sorted(auditable)
private_methods = [m for m in methods_all if getattr(auditable[m], "private", False)]
# by default the audit covers the run's own method at the run's own ε (plus the non-private
# baselines for contrast)
own = base.method if base.method in methods_all else None
default_methods = list(dict.fromkeys(([own] if own else []) + [m for m in aud.DEFAULT_METHODS
                                                                 if m in methods_all and (own is None or m not in private_methods)]))
own_grid = (f"{base.epsilon:g}" if own in private_methods and math.isfinite(base.epsilon) else "1, 4")
sizes = {name: int(sl.stop - sl.start) for name, sl in zip(ds.entity_names, ds.entity_slices())}

if st.session_state.get("audit_entity") not in ds.entity_names:  # data changed since last visit
    st.session_state.pop("audit_entity", None)
    ui.forget("audit_entity")
# a declared entity may have no users: the page opens on the first whose real users can be audited
ui.widget_default("audit_entity", next((e for e in ds.entity_names if not too_few_users(sizes[e], ["outlier"])),
                                        ds.entity_names[0]))
ui.widget_default("audit_methods", default_methods)
ui.widget_default("audit_grid", own_grid)
ui.widget_default("audit_targets", ["synthetic", "outlier"])
ui.widget_default("audit_runs", 100)
ui.widget_default("audit_k", int(min(base.k, 50)))
ui.widget_default("audit_seed", 0)
ui.widget_default("audit_lr", True)
ui.widget_default("audit_with_v", False)
ui.widget_default("audit_conf", 0.95)

c1, c2, c3 = st.columns([2, 3, 2])
entity = c1.selectbox("Entity", ds.entity_names, key="audit_entity",
                      format_func=lambda e: f"{e} ({sizes[e]} users)")
methods = c2.multiselect("Methods", methods_all, key="audit_methods",
                         help="Private methods run at every ε of the grid; non-private ones once (ε = ∞).")
grid_text = c3.text_input("ε grid for DP methods", key="audit_grid",
                          help="Comma-separated, e.g. 0.5, 1, 2, 4, 8; 'inf' = the non-private limit.")
c4, c5, c6, c7 = st.columns([3, 1, 1, 1])
targets = c4.multiselect("Target users", list(TARGET_CHOICES), key="audit_targets",
                         format_func=lambda t: TARGET_CHOICES[t])
runs = int(c5.number_input("Runs per class", 4, 5000, key="audit_runs", step=50,
                           help="Releases with and (as many) without the target, per method, ε and target."))
k = int(c6.number_input("k (prototypes)", 1, 10_000, key="audit_k"))
seed = int(c7.number_input("Seed", 0, 2**31 - 1, key="audit_seed"))
with st.expander("Advanced: attacks, confidence, a specific user"):
    a1, a2, a3, a4 = st.columns(4)
    use_lr = a1.checkbox("Likelihood-ratio attack", key="audit_lr",
                         help="Gaussian likelihood ratio over four release features, fitted on half the runs.")
    with_v = a2.checkbox("Also attack V", key="audit_with_v",
                         help="Runs the server's factorisation on every release (slower). V is post-processing "
                              "of the prototypes, so it cannot leak more than they do.")
    conf = float(a3.select_slider("Confidence", [0.9, 0.95, 0.99], key="audit_conf"))
    user_text = a4.text_input("Specific user id (optional)", key="audit_user",
                              help="Audit this user of the entity as an extra target.")
ui.non_private_checkbox("audit")
ui.remember("audit_entity", "audit_methods", "audit_grid", "audit_targets", "audit_runs", "audit_k",
            "audit_seed", "audit_lr", "audit_with_v", "audit_conf", "audit_user")

errors = []
try:
    grid = dash.parse_grid(grid_text)
except DpfedError as exc:
    errors.append(f"“ε grid for DP methods”: {exc}")  # this page's box, not the Trade-off page's grid
    grid = []
if not methods:
    errors.append("Choose at least one method to audit.")
specs = list(targets) + ([f"user:{user_text.strip()}"] if user_text.strip() else [])
if not specs:
    errors.append("Choose at least one target user.")
if too_few_users(sizes[entity], specs):
    # the box above shows the entity's size already: said here, before the button charges anything
    errors.append(f"“Target users”: auditing a real user (the outlier, typical or a specific user) needs an entity "
                  f"with at least {MIN_USERS_FOR_REAL_TARGET} users, and {dash.escape_md(entity)} has {sizes[entity]}: "
                  "audit its synthetic target only, or choose another entity.")
elif _user_problem := dash.audit_user_problem(ds, entity, user_text):
    errors.append(_user_problem)
n_jobs = sum(len(grid) if m in private_methods else 1 for m in methods) * len(specs)
proto_params = dict(base.prototype_params or {}) if base.method in private_methods else {}
st.caption(
    f"{n_jobs} audits × {2 * runs} releases = **{n_jobs * 2 * runs:,} releases** of entity "
    f"{dash.escape_md(entity)}. δ = {base.delta:g}; trust model from the Federate page: "
    + ("secure aggregation (a summable release is audited as the entity's own noise share)"
       if base.aggregation == "secure" else "no secure aggregation")
    + (f", DP parameters from the Federate page: {json.dumps(proto_params)}" if proto_params else "")
    + "." + (f" The last audit here took {dash.format_seconds(st.session_state['audit_seconds'])} "
             "per audit." if st.session_state.get("audit_seconds") else ""))
for e in errors:
    st.error(e, icon=":material/error:")
if not errors:
    try:
        st.caption(dash.audit_estimate_line(
            ds, entity, methods=methods, epsilons=grid, targets=specs, runs=runs, k=k,
            attacks=["distance", "lr", "counts"] if use_lr else ["distance", "counts"], with_v=with_v,
            rank=base.rank, lam=base.lam, delta=base.delta, prototype_params=proto_params,
            aggregation=base.aggregation, max_dropouts=base.max_dropouts))
    except DpfedError as exc:
        st.caption(f"Expected time: not estimated ({dash.escape_md(str(exc))})")

key = (dash.dataset_fingerprint(ds), entity, tuple(methods), tuple(grid), tuple(specs), runs, k, seed,
       use_lr, with_v, conf, base.delta, json.dumps(proto_params, sort_keys=True), base.aggregation,
       base.max_dropouts)
from dpfed_core.evaluation.budget import plan_audit as _plan_audit  # noqa: E402
from dpfed_core.ui.history import planned_charge_text  # noqa: E402

_charge = "" if errors else \
    f" ({planned_charge_text(ds, _plan_audit(ds, entity, methods, grid, base.delta, seed=seed))})"
if st.button("Run audit" + _charge, type="primary", disabled=bool(errors), key="audit_run"):
    allow = ui.allow_non_private()

    def compute(progress):  # runs in a worker thread: no Streamlit in here
        from dpfed_core.evaluation.budget import plan_audit
        from dpfed_core.ui import history

        # an audit reads the entity's exact rows: charged (or refused on a capped dataset) first
        return history.charged(ds, plan_audit(ds, entity, methods, grid, base.delta, seed=seed), lambda: aud.run_audit(
            ds, entity, methods=methods, epsilons=grid, delta=base.delta, k=k,
            prototype_params=proto_params, targets=specs, runs=runs,
            attacks=["distance", "lr", "counts"] if use_lr else ["distance", "counts"], with_v=with_v,
            rank=base.rank, lam=base.lam, confidence=conf, seed=seed, aggregation=base.aggregation,
            max_dropouts=base.max_dropouts, progress=progress),
            allow_non_private=allow)

    import time

    t0 = time.perf_counter()
    try:
        doc, cached = ui.run_job(dash.generic_key("audit", ds, *key[1:]), compute, "Membership audit")
    except DpfedError as exc:
        ui.show_error(exc)
        st.stop()
    if not cached:  # the next time hint: measured, not promised
        st.session_state["audit_seconds"] = (time.perf_counter() - t0) / max(n_jobs, 1)
    st.session_state[RESULT] = {"key": key, "doc": doc}
    if not cached:
        ui.record("audit", doc)

have = st.session_state.get(RESULT)
if have is not None and have["key"][0] != key[0]:  # an audit of other data no longer applies
    have = None
    st.session_state.pop(RESULT, None)


def _report_section() -> None:
    st.subheader("Compliance report")
    run = ui.get_run()
    if run is None:
        st.info("The report documents a federation run: run one on the Federate page, then download it "
                "here (with this audit and the last trade-off sweep, if any).", icon=":material/info:")
        try:
            st.page_link(ui.PAGES["federate"], label="Go to Federate", icon=":material/hub:")
        except Exception:  # the page is not registered (e.g. this page opened on its own)
            st.markdown("Open **Federate** in the sidebar.")
        return
    comp = st.session_state.get(ui.COMPARISON)
    if comp and comp.get("config_key") != dash.config_key(run["config"]):
        comp = None  # comparisons of another configuration would misreport the run
    sweep = st.session_state.get(ui.SWEEP)
    audit_doc = have["doc"] if have else None
    parts = ["the run"] + (["comparison methods"] if comp else []) + (["the sweep"] if sweep else []) + \
        (["this audit"] if audit_doc else [])
    st.caption("A self-contained HTML file (opens offline): data summary per entity, every parameter, the "
               "ledger and the (ε, δ) guarantee (ledger) with its assumptions, the message log, utility against the comparison methods, the "
               f"trade-off and the audit, with date and version. Includes: {', '.join(parts)}.")

    def make(public: bool):
        return lambda: rep.report_from_session(run, comparison=comp, sweep=sweep, audit=audit_doc, dataset=ds,
                                               public=public)

    stem = f"dpfed_report_{run['config'].method}_seed{run['config'].seed}"
    d1, d2 = st.columns(2)
    d1.download_button("Download the analyst's full report", data=make(False), type="primary",
                       file_name=f"{stem}_analyst.html", mime="text/html", key="audit_report",
                       on_click="ignore", icon=":material/description:",
                       help="Everything, including exact per-entity counts and the audit's target users "
                            "(computed on private data without noise): for the analyst, not for publication.")
    d2.download_button("Download the public report", data=make(True), file_name=f"{stem}_public.html",
                       mime="text/html", key="audit_report_public", on_click="ignore",
                       icon=":material/public:",
                       help="Without exact per-entity counts, loader notes, named users or any metric: the "
                            "guarantee, trust model, ledger and message log.")


if have is None:
    st.info(f"Press **Run audit**. The settings above ({n_jobs} audit{'s' if n_jobs != 1 else ''} of {runs:,} runs "
            f"per class) release the entity's data {n_jobs * 2 * runs:,} times; the expected time is stated above "
            "the button. The defaults are two targets, the Federate run's DP method at its ε (or at ε = 1 and 4 "
            "for another method), k-means and k-random, 100 runs per class.", icon=":material/info:")
    _report_section()
    st.stop()

doc = have["doc"]
if have["key"] != key:
    st.caption("Showing the last audit; the settings above have changed since (press Run audit).")
summary = doc["summary"]
viol = [r for r in summary if r["verdict"] == "VIOLATION"]
ent = doc["entity"]
if viol:
    st.error("**Violation:** an empirical ε lower bound exceeds the claimed ε for "
             + ", ".join(f"{r['method']} at ε = {dash.format_epsilon(r['epsilon'])}" for r in viol)
             + ". The mechanism or its accounting is broken.", icon=":material/report:")
else:
    dp_rows = [r for r in summary if math.isfinite(float(r["epsilon"]))]
    inconclusive = [r for r in dp_rows if r["verdict"] == "inconclusive"]
    shown = [r for r in dp_rows if r["verdict"] == "consistent"]
    if shown:
        st.success("No empirical lower bound exceeds a DP method's claimed ε (largest: "
                   + ", ".join(f"ε = {dash.format_epsilon(r['epsilon'])}: {r['epsilon_lb']:.2f}" for r in shown)
                   + "; Bonferroni over targets × attacks).", icon=":material/check_circle:")
    if inconclusive:
        st.warning("**Inconclusive** for " + ", ".join(
            f"{r['method']} at ε = {dash.format_epsilon(r['epsilon'])} (these runs can certify at most "
            f"{r['max_certifiable_epsilon']:.2f})" for r in inconclusive)
            + ": even a perfect attack could not have shown a violation of the claim — a mechanism with "
              "half its noise would pass too. Raise the runs per class to test the claim.",
            icon=":material/help:")
np_rows = [r for r in summary if not math.isfinite(float(r["epsilon"]))]
if np_rows:
    st.warning("Non-private methods (no guarantee): " + "; ".join(
        f"**{r['method']}** AUC {r['auc']:.2f}, ε lower bound {r['epsilon_lb']:.2f}, the target's exact row "
        f"published in {r.get('verbatim_in', 0.0):.0%} of runs" for r in np_rows) + ".", icon=":material/warning:")

fprs = list(summary[0]["tpr_at_fpr"]) if summary else []
table = pd.DataFrame([{
    "method": r["method"], "claimed ε": dash.format_epsilon(r["epsilon"]), "ε lower bound": r["epsilon_lb"],
    "most certifiable": r["max_certifiable_epsilon"], "best AUC": r["auc"],
    **{f"TPR @ FPR {float(f):.0%}": r["tpr_at_fpr"][f] for f in fprs},
    "row published verbatim": r.get("verbatim_in", 0.0),
    "strongest target / attack": f"{r['epsilon_lb_target']} / {r['epsilon_lb_attack']}",
    "verdict": r["verdict"]} for r in summary])
st.dataframe(table, hide_index=True, key="audit_summary", column_config={
    "ε lower bound": st.column_config.NumberColumn(format="%.3f"),
    "most certifiable": st.column_config.NumberColumn(format="%.2f",
                                                      help="The largest bound any attack could certify with "
                                                           "this many runs (a perfect attack)."),
    "best AUC": st.column_config.NumberColumn(format="%.3f"),
    "row published verbatim": st.column_config.NumberColumn(format="percent"),
    **{f"TPR @ FPR {float(f):.0%}": st.column_config.NumberColumn(format="%.3f") for f in fprs}})
st.caption(f"Entity {dash.escape_md(ent['name'])}, {ent['n_users']} users; {doc['config']['runs']} runs per class; "
           f"bounds at {doc['config']['confidence']:.0%} Clopper–Pearson confidence on runs not used to "
           f"choose the attack's threshold; {doc['timings']['total']:.1f} s. Best AUC and TPR are the largest over "
           "the audit's targets and attacks; an empty TPR cell is a false-positive rate the runs cannot resolve "
           "(one false positive is already more: raise the runs per class). These numbers are computed on "
           "private data for the analyst only.")
if note := aud.prototypes_note(doc):
    st.warning(dash.escape_md(note.replace("the --k", "the “k (prototypes)”")), icon=":material/info:")

left, right = st.columns(2)
with left:
    st.plotly_chart(rep.audit_epsilon_figure(doc, "Empirical ε lower bound vs claimed ε"), key="audit_eps_fig")
with right:
    tnames = [t["name"] for t in doc["targets"]]
    attacks = list(dict.fromkeys(r["attack"] for r in doc["results"]))
    r1, r2 = st.columns(2)
    tsel = r1.selectbox("Target", tnames, key="audit_roc_target")
    asel = r2.selectbox("Attack", attacks, key="audit_roc_attack", format_func=lambda a: aud.ATTACK_LABELS.get(a, a))
    try:
        st.plotly_chart(rep.audit_roc_figure(doc, tsel, asel, title="ROC of the membership attack"),
                        key="audit_roc_fig")
    except DpfedError as exc:  # a target without a curve is named, never drawn as another target's
        ui.show_error(exc)

with st.expander("Targets and every result"):
    st.dataframe(pd.DataFrame(doc["targets"]), hide_index=True, key="audit_targets_table")
    res = pd.DataFrame([{k: v for k, v in r.items() if k != "roc"} for r in doc["results"]])
    res["tpr_at_fpr"] = res["tpr_at_fpr"].map(lambda d: ", ".join(
        f"{k}: {v:.3f}" if v is not None and v == v else f"{k}: not resolvable" for k, v in d.items()))
    res["epsilon"] = res["epsilon"].map(dash.format_epsilon)
    res["requested_epsilon"] = res["requested_epsilon"].map(dash.format_epsilon)
    st.dataframe(res, hide_index=True, key="audit_results_table")
with st.expander("How to read this"):
    st.markdown(
        "- **ε lower bound**: (ε, δ)-DP implies TPR ≤ e^ε·FPR + δ for every attack, so an attack with a "
        "high TPR at a low FPR *proves* ε is at least ln((TPR − δ)/FPR). Both rates are replaced by "
        "Clopper–Pearson bounds, so the value holds with the stated confidence. A DP method's bound "
        "above its claimed ε would be a bug; a bound of 0 means no leakage was measured (not a proof — "
        "the ledger is the proof).\n"
        "- **Most certifiable**: with N runs no attack can prove more than this; a perfectly leaking "
        "non-private method shows this ceiling, not ∞. More runs raise it.\n"
        "- **k-random** publishes raw rows: it leaks rarely (in about k/n of the runs) but completely — "
        "see *row published verbatim*. **k-means** centroids of small clusters are near-copies of "
        "outliers.\n"
        "- Targets: the synthetic worst case puts the public maximum on the items the entity's users touch "
        "least (so its presence moves sums that are otherwise zero); the real outlier is the user farthest "
        "from its nearest neighbour.")
st.download_button("Download the audit (JSON)", json.dumps(json_safe(doc), indent=2).encode(),
                   file_name=f"dpfed_audit_{ent['name'].replace(' ', '_')}.json", mime="application/json",
                   key="audit_json", on_click="ignore")
_report_section()
