"""Recommend: one user's top-N from the federated model, beside their history and the list of the entity
alone (`local`: its own model and its own popularity, the reference every verdict is stated against)."""
from __future__ import annotations

import math

import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.ui import engine as dash
from dpfed_core.errors import DpfedError

ui.page_setup("Recommend", ":material/lightbulb:")
st.title("Recommend")
ds = ui.require_dataset()
clinical = dash.is_clinical(ds)
unit, units = dash.unit_word(ds, plural=False), dash.unit_word(ds)
if clinical:
    st.warning("**Decision support, not clinical advice.** These lists rank items by how often similar "
               "stays had them; they know nothing of contraindications, doses or the patient's "
               "current state. A clinician decides.", icon=":material/medical_information:")
r = ui.require_run("get recommendations")
cfg, result = r["config"], r["result"]
split = dash.split_for(ds, cfg)  # the engine's split of this run (seeded by the config)

c1, c2, c3, c4 = st.columns([2, 2, 2, 1])
# a declared entity may have no users: the page opens on the first that has some
sizes = [sl.stop - sl.start for sl in ds.entity_slices()]
ui.widget_default("rec_entity", next((e for e, n in zip(ds.entity_names, sizes) if n), ds.entity_names[0]))
entity = c1.selectbox("Entity", ds.entity_names, key="rec_entity")
users = dash.entity_users(ds, entity, split.test_users)
if not users:
    st.info(f"Entity {dash.escape_md(entity)} is declared but has no {units} in the data: there is no one to "
            "recommend to. Choose another entity.", icon=":material/info:")
    st.stop()
picked = c2.selectbox(f"{unit.capitalize()} ({len(users)}; test {units} first)", users, key=f"rec_user_{entity}")
typed = c3.text_input(f"or type a {unit} id", key="rec_typed", placeholder="e.g. " + str(users[0]))
# a list holds at most the catalogue, as the command line's --top-n
_most = min(50, ds.n_items)
n = c4.number_input("Top-N", 1, _most, min(10, _most), key="rec_n", help=f"At most {_most}: the smaller of 50 and "
                    f"the {ds.n_items} items.")
ui.remember("rec_entity")
user = typed.strip() or picked

try:
    dash.check_user(ds, entity, user)
    mine, mine_not = dash.explained_list(ds, split, result, entity, user, int(n), "federated model")
    history = dash.user_history(ds, split, entity, user)
except DpfedError as exc:
    ui.show_error(exc)
    st.stop()

# The entity alone, as every verdict of the product states it (verdicts.REFERENCE): its own model and
# its own popularity, fitted with the care round 2 gets — the list this entity has without the federation.
alone = dash.REFERENCE
alone_doc = alone_result = theirs = theirs_not = None
try:
    alone_cfg = cfg.replace(method=alone, epsilon=math.inf, delta=1e-6, prototype_params={}, server_weighting="none")
    alone_doc, alone_result, _ = ui.run(ds, alone_cfg, label="Fitting each entity alone (cached afterwards)")
    theirs, theirs_not = dash.explained_list(ds, split, alone_result, entity, user, int(n), "entity's own model")
except DpfedError as exc:
    st.warning(f"The entity-alone list is unavailable: {dash.friendly_message(exc)}")

# ------------------------------------------------ is the federated list worse here? (held-out data)
fed_mar = dash.entity_metric(r["doc"], entity, "mar")
alone_mar = dash.entity_metric(alone_doc, entity, "mar") if alone_doc else None
events = dash.is_event_data(ds)
fed_set = dash.entity_set_metrics(ds, split, result, entity, int(n)) if events else None
alone_set = (dash.entity_set_metrics(ds, split, alone_result, entity, int(n))
             if (events and alone_result is not None) else None)
spread = (dash.entity_paired_spread(ds, split, result, alone_result, entity, int(n), events)
          if alone_result is not None else None)
cmp = dash.entity_against_alone(fed_mar, alone_mar, fed_set, alone_set, spread)
n_test = dash.entity_metric(r["doc"], entity, "n_test_users") or 0
ent_md = dash.escape_md(entity)
alone_name = dash.BASELINE_NAMES[alone].replace("each entity", "this entity")
_banner = dash.entity_standing_banner(cmp, n_test, ent_md, unit, units, alone_name, fed_mar, alone_mar,
                                     cfg.n_hidden) if alone_doc is not None else None
if _banner:
    _kind, _text, _icon = _banner
    getattr(st, _kind)(_text, icon=_icon)

st.caption(f"{unit.capitalize()} **{dash.escape_md(user)}** of **{ent_md}**. Items the {unit} already has in the "
           "training data are never suggested; ✔ marks a suggestion that is one of the entries hidden for "
           f"testing. “Why” counts, among up to 40 {units} of {ent_md} most like this one, those that had the item.")
for note in dash.unshared_items_notes(ds, result, units):
    st.info(note, icon=":material/info:")
with st.expander("What the numbers mean", expanded=False):
    st.markdown(
        f"The **score** orders the list for this {unit}, higher first: a predicted value (û = u·v) or, where "
        "the model blends parts (its own factor model, the federation's item factors, popularity), their "
        f"weighted sum with each part scaled to unit length — so it is not on the data's scale ({ds.value_kind}, "
        f"0 to {ds.value_max:g}) and may lie above it. It is **not a probability** and not a dose, and the two "
        "models' scores cannot be compared with each other. **Why** says how common the item is "
        f"among the {units} most like this one at the same entity — the evidence a reader can check. "
        "Where a model gives every candidate the same score (it learned nothing that applies here), no "
        "list is shown: its order would be the catalogue's, not advice.")

cols = {"score": st.column_config.NumberColumn("score", format="%.3f", width="small",
                                               help="The model's predicted value: it orders the list"),
        "rank": st.column_config.NumberColumn("rank", width="small"),
        "item": st.column_config.TextColumn("item", width="medium"),
        "hidden test item": st.column_config.TextColumn("hidden (test) item?", width="small")}

if events:
    mine_m = dash.user_set_metrics(ds, split, result, entity, user, int(n))
    theirs_m = (dash.user_set_metrics(ds, split, alone_result, entity, user, int(n))
                if alone_result is not None else None)
    if not math.isnan(mine_m["jaccard"]):
        st.markdown(f"**This {unit}'s hidden events against the top-N**"
                    + (" (clinical set metrics)" if clinical else " (set metrics)"))
        rows = [{"model": f"federated ({cfg.method})", **{k: mine_m[k] for k in ("jaccard", "f1", "pr_auc")},
                 "hits": int(mine_m["hits"]), "hidden events": int(mine_m["n_hidden"])}]
        if theirs_m:
            rows.append({"model": f"{entity} alone ({alone})",
                         **{k: theirs_m[k] for k in ("jaccard", "f1", "pr_auc")},
                         "hits": int(theirs_m["hits"]), "hidden events": int(theirs_m["n_hidden"])})
        st.dataframe(rows, hide_index=True, width="stretch", column_config={
            "jaccard": st.column_config.NumberColumn("Jaccard", format="%.3f",
                                                     help="|top-N ∩ hidden| / |top-N ∪ hidden|"),
            "f1": st.column_config.NumberColumn("F1", format="%.3f", help="harmonic mean of precision and recall of the top-N"),
            "pr_auc": st.column_config.NumberColumn("PR-AUC", format="%.3f",
                                                    help="average precision of the whole ranking against the hidden events")})
        if fed_set and alone_set and cmp["mar"] is not None:
            st.caption(f"Entity {ent_md}, mean over its {fed_set['n']} test {units if fed_set['n'] != 1 else unit}: "
                       "federated Jaccard "
                       f"{fed_set['jaccard']:.3f} / F1 {fed_set['f1']:.3f} / PR-AUC {fed_set['pr_auc']:.3f}; "
                       f"alone {alone_set['jaccard']:.3f} / {alone_set['f1']:.3f} / {alone_set['pr_auc']:.3f}; "
                       f"MAR {fed_mar:.3f} vs {alone_mar:.3f}.")

cols["why"] = st.column_config.TextColumn("why", width="large")
st.markdown(f"**Federated model** (`{dash.escape_md(cfg.method)}`, ε = "
            f"{dash.format_epsilon(r['doc']['privacy']['epsilon'])}"
            + (f"; *{dash.SIMULATION_LABEL}*" if r["doc"]["privacy"].get("simulation") else "") + ")")
if mine is not None:
    st.dataframe(mine, hide_index=True, column_config=cols, width="stretch")
    st.caption(f"{(mine['hidden test item'] == '✔').sum()} of the hidden items in the top {len(mine)}"
               + (f". {mine_not}" if mine_not else ""))
else:
    st.info(mine_not, icon=":material/info:")
st.markdown(f"**{ent_md} alone** (`{alone}`: its own model and its own popularity, from this entity's data only)")
if theirs is not None:
    st.dataframe(theirs, hide_index=True, column_config=cols, width="stretch")
    st.caption(f"{(theirs['hidden test item'] == '✔').sum()} of the hidden items in the top {len(theirs)}"
               + (f". {theirs_not}" if theirs_not else ""))
elif theirs_not:
    st.info(theirs_not, icon=":material/info:")
st.markdown(f"**What the {unit} already has** ({len(history)} items)")
st.dataframe(history, hide_index=True, width="stretch",
             column_config={"value": st.column_config.NumberColumn("value", format="%g"),
                            "item": st.column_config.TextColumn("item", width="large")})
