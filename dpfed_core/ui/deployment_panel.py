"""The Federate page's "separate processes (Flower)" option: the same run as a real local Flower
deployment (one SuperLink, one SuperNode process per entity, the ServerApp), with per-node progress.

The page calls :func:`flower_panel`; everything here is Streamlit layout over the run service
(:func:`dpfed_core.evaluation.service.execute_run`, checked, charged and recorded as ``deploy-local`` is)
with the deployment as its run step (:func:`dpfed_core.deployment.deployed.deployment_runner`).
"""
from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from dpfed_core.errors import DpfedError

EXECUTION_OPTIONS = ["in this process", "separate processes (Flower)"]
DOC_KEY = "fed_flower_doc"


def execution_choice() -> str:
    return st.radio("Execution", EXECUTION_OPTIONS, horizontal=True, key="fed_execution",
                    help="Separate processes: every entity runs as its own Flower SuperNode process on this "
                         "machine, the server as a Flower ServerApp; only the protocol's messages cross "
                         "between them (summable releases through SecAgg+). Slower: it starts real processes.")


def site_decision_text(decision: dict) -> str:
    """One site's policy decision as the panel shows it: accepted, or refused with its rule."""
    if decision.get("decision") == "accepted":
        return "accepted"
    return f"refused ({decision.get('rule')}): {decision.get('message', '')}"



def deploy_command(config, data: str | None, data_options: dict | None, site_policy: str | None,
                   round_timeout: float, out: str = "r.json") -> str:
    """The ``python -m dpfed_core deploy-local …`` line of the panel's run: the run's own command line
    (every setting written out, :func:`~dpfed_core.evaluation.defaults.cli_command`) with the panel's
    deployment settings (round timeout, site policy) as their flags."""
    import shlex

    from dpfed_core.evaluation.defaults import cli_command

    extra = ["--round-timeout", f"{round_timeout:g}"] + (["--site-policy", shlex.quote(site_policy)] if site_policy
                                                         else [])
    return cli_command(config, data, data_options, out=out, command="deploy-local", extra=extra)

def flower_panel(ds, config, disabled: bool = False) -> None:
    """Run ``config`` on a local Flower deployment and show the result with per-node progress."""
    from dpfed_core.deployment.deployed import deployable_methods
    from dpfed_core.deployment import flower_available

    ok, info = flower_available()
    if not ok:
        st.warning(f"Flower is not available here: {info}. Install it with "
                   "`pip install -r requirements-deploy.txt` and restart the dashboard.")
        return
    if config.method not in deployable_methods():
        st.error(f"{config.method} does not run as a deployment (it pools raw data or is not a federated "
                 f"protocol). Choose one of: {', '.join(deployable_methods())} in **Method**.")
        return
    from dpfed_core.evaluation.cost import deployment_estimate

    st.caption(f"Flower {info}: 1 SuperLink + {ds.n_entities} SuperNode processes on 127.0.0.1 (TLS and node "
               "authentication), started for this run and stopped after it; each node keeps its own "
               f"evaluation report. {deployment_estimate(ds, config)}.")
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.ui import history
    from dpfed_core.ui.tables import guarantee_text
    from dpfed_core.ui.widgets import allow_non_private, data_cli_args, record, run_messages, show_error

    policy = st.text_input(
        "Site policy (TOML file on this machine, optional)", key="fed_site_policy",
        help="Every local site's own policy: the methods it accepts, the most ε and δ per run, its total budget "
             "in its own store, whether simulation and non-private methods are allowed (docs/DEPLOYMENT.md). "
             "Empty: each site gets a policy matching this run, without simulation.").strip() or None
    round_timeout = st.number_input(
        "Round timeout (s)", min_value=5, max_value=3600, value=600, step=30, key="fed_round_timeout",
        help="How long the server waits for the sites at each step; a site silent that long leaves the run "
             "(within the tolerated dropouts) or stops it. Lengthen it for slow sites.")
    with st.expander("The same deployment on the command line"):
        st.code(deploy_command(config, *data_cli_args(), policy, float(round_timeout)), language="bash")
    plans = plan_run(ds, config)
    charge = history.planned_charge_text(ds, plans)
    if st.button(f"Run on Flower — {charge}", type="primary", disabled=disabled, key="fed_run_flower"):
        nodes = pd.DataFrame({"entity": list(ds.entity_names), "site policy": "waiting", "round 1": "waiting",
                              "round 2": "waiting"})
        status = st.status(f"Deploying {ds.n_entities} SuperNodes…", expanded=True)
        line = status.empty()
        table = status.empty()
        table.dataframe(nodes, hide_index=True)
        t0 = time.perf_counter()

        def progress(ev: dict) -> None:
            e = ev.get("event")
            idx = nodes.index[nodes["entity"] == ev.get("entity")]
            if e == "site_decisions":
                for d in ev.get("decisions", []):
                    nodes.loc[nodes["entity"] == d["entity"], "site policy"] = site_decision_text(d)
            elif e == "round1_sent":
                nodes["round 1"] = "computing release"
            elif e == "secagg_stage":
                nodes["round 1"] = f"SecAgg+: {ev.get('stage')} ({ev.get('replies')}/{ev.get('sent')} replied)"
            elif e == "round1_done" and len(idx):
                nodes.loc[idx, "round 1"] = "sent"
            elif e == "round2_sent":
                nodes["round 2"] = "fitting U locally"
            elif e == "round2_done" and len(idx):
                nodes.loc[idx, "round 2"] = "done"
            line.write(f"{time.perf_counter() - t0:.0f} s — {e.replace('_', ' ')}")
            table.dataframe(nodes, hide_index=True)

        try:
            # the checks a deployment needs before anything is charged (as deploy-local makes them), then
            # the one run service: charged to the data owner's budget (or refused) before any node starts,
            # settled to the nodes' ledgers, recorded with the odometer's record
            from dpfed_core.deployment.deployed import check_deployable, check_site_policy, deployment_runner
            from dpfed_core.evaluation.service import execute_run

            check_site_policy(check_deployable(ds, config)[0], policy, ds)  # as the sites will see the run
            runner = deployment_runner(progress=progress, site_policy=policy, on_policy=st.info,
                                       round_timeout=float(round_timeout))
            # a simulation (no privacy claim) opens no store unless DPFED_STORE names one
            store = None if config.simulation else history.owner_store(ds)[0]
            doc = execute_run(ds, config, store=store, allow_non_private=allow_non_private(), runner=runner,
                              save=False).doc
        except DpfedError as exc:
            status.update(label="The deployment stopped", state="error", expanded=True)
            show_error(exc)
        else:
            st.session_state[DOC_KEY] = doc
            # kept in the run history like an in-process run; without factors (each U stays at its node)
            record("run", doc)
            status.update(label=f"Done in {time.perf_counter() - t0:.1f} s — {doc['privacy']['label']}",
                          state="complete", expanded=False)
    doc = st.session_state.get(DOC_KEY)
    if doc is None:
        return
    dep, o = doc["deployment"], doc["overall"]
    st.markdown(f"**Last Flower run** ({doc['method']['name']}, {dep['supernodes']} SuperNodes): "
                f"{doc['privacy']['label']}")
    st.markdown(guarantee_text(doc))
    run_messages(doc, ds.notes)
    m = st.columns(5)
    m[0].metric("Wall time", f"{dep['wall_seconds']:.1f} s")
    m[1].metric("Bytes on the wire", f"{dep['bytes_on_wire']:,}")
    m[2].metric("Messages", dep["n_messages"])
    m[3].metric("MAR", f"{o['mar']:.4f}")
    top_n = int((doc.get("config") or {}).get("top_n", 10))  # a deploy-local run's --top-n
    m[4].metric(f"NDCG@{top_n}", f"{o[f'ndcg_at_{top_n}']:.4f}")
    if dep.get("secure_aggregation"):
        sa = dep["secure_aggregation"]
        st.caption(f"SecAgg+: the server saw masked vectors and their sum only; threshold "
                   f"{sa['reconstruction_threshold']} of {sa['num_shares']}, tolerated dropouts {sa['max_dropouts']}.")
    st.caption(f"Connections: {dep.get('transport', '')}. Metrics: {dep.get('evaluation_source', '')}.")
    t1, t2, t3 = st.tabs(["Per entity", "Message log (as Flower carried it)", "Privacy ledger"])
    decisions = {d["entity"]: site_decision_text(d) for d in dep.get("site_decisions") or []}
    t1.dataframe(pd.DataFrame([{**e, "site policy": decisions.get(e.get("name"), "—")} for e in doc["entities"]]),
                 hide_index=True)
    t2.dataframe(pd.DataFrame(doc["messages"]).drop(columns=["records"], errors="ignore"), hide_index=True)
    t3.dataframe(pd.DataFrame(doc["privacy"]["ledger"]), hide_index=True)
    from dpfed_core.ui.tables import document_json

    st.download_button("Download the result document (JSON)", document_json(doc), mime="application/json",
                       file_name=f"dpfed_{doc['method']['name']}_flower_run.json", key="fed_flower_download")
