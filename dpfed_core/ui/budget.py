"""Dashboard side of the privacy budget odometer and the run history (no Streamlit at import).

For the pages (helper "dashboard" lays them out):

* :func:`budget_line` — the sidebar's one-line budget status;
* :func:`budget_view` — cap, per-entity spent / remaining and the releases, as plain rows;
* :func:`charge` — context manager that charges (or refuses, raising
  :class:`~dpfed_core.privacy.odometer.BudgetRefused` with the message to show) **before** the
  computation inside it, e.g. ``with charge(store, ds, plan_run(ds, cfg)) as r: doc = …;
  settle_run(r, [doc])``; then :func:`save_result` keeps the document in the history;
* :func:`charged_run`, :func:`charged_sweep`, :func:`charged_audit` — the engine calls, charged first
  and kept in the history;
* :func:`current_store` and :func:`render_budget` — the session's store and a small Streamlit section
  (cap form starting at "No cap" with a confirmation step, per-entity table with the accountant,
  cap-change log, releases; shown on the History page);
* :func:`refusal_text` — a :class:`~dpfed_core.privacy.odometer.BudgetRefused` with its fixes named as
  the dashboard's controls (:data:`DASH_CONTROLS`), never CLI flags.
"""
from __future__ import annotations

import math
from typing import Sequence

from dpfed_core.config import MIN_EPSILON
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.budget import runs_left_text, save_result  # noqa: F401  (save_result: the pages' API)
from dpfed_core.evaluation.service import charged_run, charged_sweep  # noqa: F401  (the pages' API)
from dpfed_core.evaluation.history import RunHistory  # noqa: F401
from dpfed_core.privacy.budget_records import RECOGNISED_BY
from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease
from dpfed_core.privacy.store import Store

#: Label of the cap control, as named in refusal messages.
CAP_LABEL = "Budget cap ε per entity"
ALLOW_NON_PRIVATE_LABEL = "Allow non-private releases"
NO_CAP_LABEL = "No cap"
CONFIRM_RAISE_LABEL = "Yes, raise the cap"

#: How a refusal names its fixes on the dashboard (controls, never CLI flags).
DASH_CONTROLS = {
    "cap": f'the "{CAP_LABEL}" control on the History page',
    "allow_non_private": f'the "{ALLOW_NON_PRIVATE_LABEL}" checkbox beside the run button',
    "simulation": 'the "Simulation" toggle on the Federate page',
    "epsilon": "a smaller ε (the ε control on the Federate page)",
    "epsilons": "a smaller or shorter grid (“ε grid” on the Trade-off page)",
    "delta": "a smaller δ (the δ control on the Federate page)",
    "confirm_raise": f'the "{CONFIRM_RAISE_LABEL}" confirmation',
}


def refusal_text(exc: BaseException) -> str:
    """A budget refusal in the dashboard's words: its fixes named as controls."""
    from dpfed_core.privacy.odometer import BudgetRefused

    if isinstance(exc, BudgetRefused):
        return exc.render(DASH_CONTROLS)
    return " ".join(str(exc).split())


def dash_escape(text: str) -> str:
    """Markdown-inert text (entity and dataset names come from the data)."""
    from dpfed_core.ui.engine import escape_md

    return escape_md(text)


def _fmt(x: float, digits: int = 3) -> str:
    return "∞" if math.isinf(x) else f"{x:.{digits}g}"


def _read_key(odo: BudgetOdometer, dataset: FederatedDataset, key: str | None) -> str:
    """The key to read by, on ``odo``: the data is read through first (matched to its account in memory,
    nothing written), so reads by its key on the same odometer find a re-export's account before its
    first charge. ``key``: another stored dataset's, read as it is."""
    content = odo.key_of(dataset)
    return key or content


def budget_line(store: Store, dataset: FederatedDataset, key: str | None = None) -> str:
    """E.g. ``Budget: ε 2 of 10 spent at δ = 1e-05 (most: hospital 07), 8 left · 3 releases`` or ``Budget:
    no cap · ε 2 spent at δ = 1e-05 (most: hospital 07) · 3 releases``. Plain text: entity names are
    escaped by the caller."""
    odo = BudgetOdometer(store)
    key = _read_key(odo, dataset, key)
    bal = odo.balance(key)
    n_rel = len(odo.releases(key))
    if not bal or n_rel == 0:
        cap_e, _ = odo.cap(key)
        cap = "no cap set" if math.isinf(cap_e) else f"cap ε = {epsilon_left(cap_e)} per entity"  # as below
        return f"Budget: nothing released yet ({cap})"
    top = max(bal, key=lambda b: b.spent_epsilon)
    void = sum(b.void for b in bal)
    tail = f" · {n_rel} release{'s' if n_rel != 1 else ''}" + (f" · {void} entities with non-private releases"
                                                                  if void else "")
    # the spend is an ε at the budget's δ (every release composed at it), which may differ from a run's
    # own δ: stated, so a total below a run's ε at a smaller δ does not read as a contradiction
    at = f" at δ = {top.guarantee_delta:.3g}"
    if math.isinf(top.cap_epsilon):
        return f"Budget: no cap · ε {epsilon_that_holds(top.spent_epsilon)} spent{at} (most: {top.entity}){tail}"
    return (f"Budget: ε {epsilon_that_holds(top.spent_epsilon)} of {epsilon_left(top.cap_epsilon)} spent{at} (most: "
            f"{top.entity}), {epsilon_left(top.remaining_epsilon)} left{tail}")


def budget_view(store: Store, dataset: FederatedDataset, key: str | None = None, limit: int = 200,
                odo: BudgetOdometer | None = None) -> dict:
    """``{"key", "cap_epsilon", "cap_delta", "entities": [balance rows], "releases": [rows]}``. A read:
    data the store does not know is matched to its account in memory (``odo``'s), never registered."""
    odo = odo or BudgetOdometer(store)
    key = _read_key(odo, dataset, key)
    cap_e, cap_d = odo.cap(key)
    return {"key": key, "cap_epsilon": cap_e, "cap_delta": cap_d,
            "entities": [b.to_dict() for b in odo.balance(key)],
            "releases": odo.releases(key, limit=limit)}


def charge(store: Store, dataset: FederatedDataset, plans: Sequence[PlannedRelease],
           allow_non_private: bool = False, key: str | None = None):
    """``BudgetOdometer(store).charge(...)``: refuses before the body runs, charges otherwise."""
    return BudgetOdometer(store).charge(dataset, plans, allow_non_private=allow_non_private, key=key)


# ------------------------------------------------------------------------------ charged computations
def charged_audit(store: Store, dataset: FederatedDataset, entity, *, methods, epsilons, delta: float,
                  allow_non_private: bool = False, save: bool = True, **audit_kwargs):
    """``run_audit`` charged first (a non-private analysis of the audited entity; with ``others="data"`` a
    summable method's audit reads every entity's exact rows, so every entity is charged, as the CLI's
    ``audit --others data`` is). Returns (doc, id)."""
    from dpfed_core.audit.membership import is_summable, run_audit
    from dpfed_core.evaluation.budget import plan_audit

    key = BudgetOdometer(store).account_key(dataset)
    methods = list(methods)
    reads_all = audit_kwargs.get("others") == "data" and any(is_summable(m) for m in methods)
    plans = plan_audit(dataset, entity, methods, epsilons, delta, seed=audit_kwargs.get("seed"),
                       all_entities=reads_all)
    with charge(store, dataset, plans, allow_non_private, key) as res:
        doc = run_audit(dataset, entity, methods=methods, epsilons=epsilons, delta=delta, **audit_kwargs)
    doc["odometer"] = {"store": str(store.path), "dataset_key": key, "operation": res.operation,
                       "releases": res.release_ids}
    return doc, (save_result(store, "audit", doc, dataset, res) if save else None)


# ------------------------------------------------------------------------------ Streamlit
#: Session-state key of the store file of the session's data owner.
STORE_PATH = "store_path"


def current_store() -> Store:
    """The session's store: ``st.session_state[STORE_PATH]`` if the page set one, else
    :func:`~dpfed_core.privacy.store.default_store_path` (the command line's)."""
    import streamlit as st

    return Store(st.session_state.get(STORE_PATH) or None)


def _cap_words(cap_epsilon: float, cap_delta: float) -> str:
    """A cap as the budget section states it: "no cap" or "ε = 4, δ = 1e-05 per entity"."""
    return "no cap" if math.isinf(cap_epsilon) else f"ε = {epsilon_left(cap_epsilon)}, δ = {cap_delta:.3g} per entity"


def render_budget(store: Store, dataset: FederatedDataset, key: str | None = None) -> None:
    """Streamlit section: the cap (with a control to set it), spent / remaining per entity, releases."""
    import pandas as pd
    import streamlit as st

    from dpfed_core.errors import DpfedError

    odo = BudgetOdometer(store)
    try:
        view = budget_view(store, dataset, key, odo=odo)
    except DpfedError as exc:
        st.error(str(exc), icon=":material/error:")
        return
    cap_e = view["cap_epsilon"]
    from dpfed_core.privacy.accounting import ACCOUNTANT

    ident = odo.identity(view["key"])
    st.caption("Every release of this dataset (run, compared method, sweep point, audit) is charged to each "
               f"entity it touches. Composition: {ACCOUNTANT}. A simulation run on generated data (a bundled sample) "
               "is not charged; on any other data its noise can be reproduced from the seed, so it is recorded as a "
               "non-private release (ε = ∞: no overall guarantee). Store file: "
               f"`{store.path.name.replace('`', '')}`")
    if ident.alias_of:
        st.info(f"Same people as the stored dataset {ident.alias_name!r} ({RECOGNISED_BY}): this data is "
                "charged to that dataset's budget and cap.",
                icon=":material/group:")
    current = _cap_words(cap_e, view["cap_delta"])
    cap_line = st.empty()  # rewritten below when the cap changes in this run
    cap_line.markdown(f"**Current cap:** {current}")
    pending = st.session_state.get("budget_cap_pending")
    # a cap set on the command line may lie outside the form's usual range (ε below 0.01, δ above 0.0099): the
    # range widens to hold it (and, for ε, to lower it further), or the widget would refuse its own starting value
    eps_floor = 0.01 if math.isinf(cap_e) or cap_e >= 0.01 else min(MIN_EPSILON, float(cap_e))
    dlt_ceiling = 0.0099 if math.isinf(cap_e) else max(0.0099, float(view["cap_delta"]))
    with st.form("budget_cap_form"):
        c0, c1, c2, c3 = st.columns([1, 2, 2, 1])
        no_cap = c0.checkbox(NO_CAP_LABEL, value=math.isinf(cap_e), help="Releases are charged but never refused.",
                             key=f"budget_cap_none_{view['key']}")
        eps = c1.number_input(CAP_LABEL, min_value=eps_floor, value=10.0 if math.isinf(cap_e) else float(cap_e),
                              help="Releases that would take an entity past it are refused. Ignored with "
                                   f"“{NO_CAP_LABEL}” ticked.", key=f"budget_cap_eps_{view['key']}")
        dlt = c2.number_input("Budget cap δ per entity", min_value=0.0, max_value=dlt_ceiling, format="%.1e",
                              value=1e-5 if math.isinf(cap_e) else float(view["cap_delta"]),
                              key=f"budget_cap_delta_{view['key']}")
        submitted = c3.form_submit_button("Set cap…")
    if submitted:
        pending = {"epsilon": math.inf if no_cap else float(eps), "delta": float(dlt), "key": view["key"]}
        st.session_state["budget_cap_pending"] = pending
    if pending and pending.get("key") == view["key"]:
        new_e, new_d = pending["epsilon"], pending["delta"]
        raising = (not math.isinf(cap_e)) and (new_e > cap_e or new_d > view["cap_delta"])
        what = "remove the cap" if math.isinf(new_e) else f"set the cap to ε = {epsilon_left(new_e)}, δ = {new_d:.3g} per entity"
        # the question and its buttons are cleared once answered: the page then says what happened
        prompt = st.empty()
        with prompt.container():
            if raising:
                st.warning(f"You are about to **{what}** — more budget for the same people than the current cap "
                           f"({current}). Spent budget is never refunded; this change is logged.",
                           icon=":material/warning:")
            else:
                st.info(f"You are about to **{what}**. This change is logged.", icon=":material/info:")
            k1, k2 = st.columns([1, 4])
            confirmed = k1.button(CONFIRM_RAISE_LABEL if raising else "Confirm", type="primary",
                                  key="budget_cap_confirm")
            cancelled = k2.button("Cancel", key="budget_cap_cancel")
        if confirmed:
            prompt.empty()
            try:
                # through the data itself when the view is of it: a cap registers data the store did not
                # know (a first cap before any release), and sets its account's cap for a re-export
                named = odo.account_key(dataset, create=False)
                odo.set_cap(dataset if view["key"] == named else view["key"], new_e, new_d,
                            confirm_raise=raising, refuse_below_spent=True, note="dashboard")
                st.session_state.pop("budget_cap_pending", None)
                view = budget_view(store, dataset, view["key"], odo=odo)
                cap_line.markdown(f"**Current cap:** {_cap_words(view['cap_epsilon'], view['cap_delta'])}")
                st.success("Cap changed.", icon=":material/check_circle:")
            except DpfedError as exc:
                st.session_state.pop("budget_cap_pending", None)
                st.error(dash_escape(refusal_text(exc)), icon=":material/error:")
        if cancelled:
            prompt.empty()
            st.session_state.pop("budget_cap_pending", None)
    changes = odo.cap_changes(view["key"])
    if changes:
        with st.expander(f"Cap changes ({len(changes)})"):
            st.dataframe(pd.DataFrame([{
                "when (UTC)": c["changed_at"],
                "from": "no cap" if c["old_epsilon"] is None else f"ε {epsilon_left(c['old_epsilon'])}, δ {c['old_delta']:.3g}",
                "to": "no cap" if math.isinf(c["new_epsilon"]) else f"ε {epsilon_left(c['new_epsilon'])}, δ {c['new_delta']:.3g}",
                "raised": bool(c["raised"]), "note": c["note"]} for c in changes]), hide_index=True, width="stretch")
    left = odo.runs_left(view["key"])
    if left is not None and left["n"] is not None:
        st.caption(f"Runs left: {runs_left_text(left)}.")
    ent = pd.DataFrame(view["entities"])
    if not ent.empty:
        # the figures as `budget show` states them: a spend rounded up, what is left rounded down
        ent = ent.assign(entity=ent["entity"].astype(str), **{c: ent[c].map(epsilon_that_holds) for c in
                                                              ("spent_epsilon", "basic_epsilon", "tight_epsilon")},
                         remaining_epsilon=ent["remaining_epsilon"].map(epsilon_left))[
            ["entity", "spent_epsilon", "remaining_epsilon", "basic_epsilon", "tight_epsilon", "accountant",
             "n_releases", "n_non_private"]].rename(columns={
                 "spent_epsilon": "spent ε", "remaining_epsilon": "left ε", "basic_epsilon": "basic ε",
                 "tight_epsilon": "zCDP ε", "n_releases": "releases", "n_non_private": "non-private"})
        st.dataframe(ent, hide_index=True, width="stretch")
        from dpfed_core.evaluation.budget import basic_epsilon_note

        why = basic_epsilon_note(view["entities"])
        if why:
            st.caption(why[0].upper() + why[1:] + ".")
    rel = pd.DataFrame(view["releases"])
    if rel.empty:
        st.caption("No releases of this dataset yet.")
    else:
        from dpfed_core.evaluation.budget import release_cells

        cells = [release_cells(r) for r in view["releases"]]   # the CLI's `budget releases` cells
        rel["ε"] = [c[0] for c in cells]
        rel["charged ε (max)"] = [c[1] for c in cells]
        st.dataframe(rel[["id", "created", "kind", "method", "ε", "delta", "seed", "charged ε (max)",
                          "status"]].rename(columns={"delta": "δ"}),
                     hide_index=True, width="stretch")
