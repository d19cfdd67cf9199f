"""Recommend: one user's top-N from the federated model, beside their history and the individual model."""
from __future__ import annotations

import math

import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.ui import engine as dash
from dpfed_core.errors import DpfedError

ui.page_setup("Recommend", ":material/lightbulb:")
st.title("Recommend")
ds = ui.require_dataset()
r = ui.require_run("get recommendations")
cfg, result = r["config"], r["result"]
split = dash.split_for(ds, cfg)  # the engine's split of this run (seeded by the config)

c1, c2, c3, c4 = st.columns([2, 2, 2, 1])
ui.widget_default("rec_entity", ds.entity_names[0])
entity = c1.selectbox("Entity", ds.entity_names, key="rec_entity")
users = dash.entity_users(ds, entity, split.test_users)
picked = c2.selectbox(f"User ({len(users)}; test users first)", users, key=f"rec_user_{entity}")
typed = c3.text_input("or type a user id", key="rec_typed", placeholder="e.g. " + users[0])
n = c4.number_input("Top-N", 1, 50, 10, key="rec_n")
ui.remember("rec_entity")
user = typed.strip() or picked

try:
    mine = dash.recommend_table(ds, split, result, entity, user, int(n))
    history = dash.user_history(ds, split, entity, user)
except DpfedError as exc:
    ui.show_error(exc)
    st.stop()

try:
    ind_cfg = cfg.replace(method="individual", epsilon=math.inf, delta=1e-6, prototype_params={},
                          server_weighting="none")
    with st.spinner("Fitting the individual model (cached afterwards)…"):
        ind = ui.run(ds, ind_cfg)[1]
    theirs = dash.recommend_table(ds, split, ind, entity, user, int(n))
except DpfedError as exc:
    theirs = None
    st.warning(f"Individual model unavailable: {exc}")

st.caption(f"User **{user}** of **{entity}**. Items the user has in the training data are never "
           "recommended; ✔ marks a recommendation that is one of the entries hidden for testing. "
           f"Values are {ds.value_kind} (≤ {ds.value_max:g}).")
a, b, c = st.columns(3)
cols = {"score": st.column_config.NumberColumn("score", format="%.3f")}
with a:
    st.markdown(f"**Federated model** (`{cfg.method}`, ε = {dash.format_epsilon(r['doc']['privacy']['epsilon'])})")
    st.dataframe(mine, hide_index=True, column_config=cols)
    st.caption(f"{(mine['hidden test item'] == '✔').sum()} of the hidden items in the top {len(mine)}")
with b:
    st.markdown("**Individual model** (this entity's data only)")
    if theirs is not None:
        st.dataframe(theirs, hide_index=True, column_config=cols)
        st.caption(f"{(theirs['hidden test item'] == '✔').sum()} of the hidden items in the top {len(theirs)}")
with c:
    st.markdown(f"**What the user already has** ({len(history)} items)")
    st.dataframe(history, hide_index=True,
                 column_config={"value": st.column_config.NumberColumn("value", format="%g")})
