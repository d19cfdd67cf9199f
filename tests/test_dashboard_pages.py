"""AppTest (headless Streamlit) of the page behaviour: a configuration run again in the same
and in another session is served from the shared cache without an exception; bad budgets are refused
before a run; the History page lists and reopens results; the column mapper refuses nonsense."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]


def app(page: str = "app.py", dataset=None) -> AppTest:
    """A session of the app open on ``page``; ``dataset``: the session's data, as if loaded on the Data page."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    if dataset is not None:
        at.session_state["dataset"] = dataset
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    return at


def clean(at):
    assert not at.exception, [e.value for e in at.exception]


def errors(at) -> str:
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in at.error)


def test_same_configuration_twice_and_in_another_session():
    a = app("pages/2_Federate.py")
    a.button(key="fed_run").click().run()
    clean(a)
    first = a.session_state["run"]["doc"]["overall"]["mar"]
    # right after a run the button says what pressing it again does: nothing new is spent
    again = a.button(key="fed_run_cached")
    assert "nothing new spent" in again.label
    again.click().run()
    clean(a)
    assert a.session_state["run"]["cached"]
    assert a.session_state["run"]["doc"]["overall"]["mar"] == first
    b = app("pages/2_Federate.py")  # a second session: the cache is shared, no crash
    b.button(key="fed_run").click().run()
    clean(b)
    assert b.session_state["run"]["cached"] and b.session_state["run"]["doc"]["overall"]["mar"] == first
    # (the sidebar's data / last run / budget on every page is checked in the browser test: AppTest
    # does not keep the sidebar of pages run through st.navigation)


def test_a_run_whose_ledger_spent_less_than_asked_says_so_on_the_federate_page():
    """dp-prototypes' stages compose by zCDP to less than the ε asked for: the page shows the ledger's ε
    with the reason beside it, and the rest of the page (ledger, messages, download) below it."""
    a = app("pages/2_Federate.py")
    a.selectbox(key="fed_method").set_value("dp-prototypes").run()
    a.toggle(key="fed_simulation").set_value(True).run()
    from dpfed_core.ui.catalogue import EARLY_STOP_NOTE

    # before the run: the plan of each k the automatic k may use, each a maximum, and why one can be less
    plans = [c.value for c in a.caption if c.value.startswith("Planned ε per stage and entity")]
    uses = "Planned ε per stage and entity if an entity uses k = "
    assert [p.split(",")[0] for p in plans] == [f"{uses}1", f"{uses}{a.session_state['fed_k']}"], plans
    assert "at most" in plans[1] and EARLY_STOP_NOTE in plans[1] and EARLY_STOP_NOTE not in plans[0]
    a.button(key="fed_run").click().run()
    clean(a)
    doc = a.session_state["run"]["doc"]
    assert doc["privacy"]["epsilon"] < doc["privacy"]["requested_epsilon"]
    shown = [m for m in a.metric if m.label.startswith("ε")]
    assert shown and "requested" in str(shown[0].proto.delta), shown
    assert a.tabs, "the page stopped before its tabs"


def test_evaluate_says_no_entity_has_test_users_instead_of_crashing():
    """More hidden entries than any user holds leaves every entity without test users: the Evaluate page
    says every metric is undefined, and its per-entity plot (30 hospitals: one dot row each) is empty."""
    a = app("pages/2_Federate.py")
    a.toggle(key="fed_simulation").set_value(True).run()
    a.number_input(key="fed_n_hidden").set_value(1000).run()
    a.button(key="fed_run").click().run()
    clean(a)
    a.switch_page("pages/3_Evaluate.py").run()
    clean(a)
    a.button(key="eval_run").click().run()
    clean(a)
    assert any("No entity has test users" in w.value for w in a.warning), [w.value for w in a.warning]
    # and the per-entity table says so in words, never "nan" nor a number that could read as a win
    from dpfed_core.ui.tables import NO_TEST_USERS

    wide = a.dataframe[-1].value
    assert len(wide) == 30 + 1 and (wide.to_numpy() == NO_TEST_USERS).all(), wide.head()  # and the overall row


def test_bad_budgets_refused_before_a_run():
    at = app("pages/2_Federate.py")
    for eps, delta, needle in (("1e50", "1e-6", "above 10000"), ("1", "0.5", "refused"),
                               ("1", "0.01", "refused")):
        at.text_input(key="fed_eps_text").set_value(eps)
        at.text_input(key="fed_delta").set_value(delta).run()
        clean(at)
        assert needle in errors(at), (eps, delta, errors(at))
        assert at.button(key="fed_run").disabled


def test_a_budget_outside_a_runs_range_is_one_error_naming_its_box():
    """ε below the run's floor, or δ ≥ 1 with ε = ∞: the values a run itself refuses are refused at
    the box, the page stays usable with the Run button disabled."""
    at = app("pages/2_Federate.py")
    for eps, delta, box, needle in (("1e-7", "1e-6", "“or type ε”", "below 1e-06"),
                                    ("5e-7", "1e-6", "“or type ε”", "below 1e-06"),
                                    ("inf", "1", "“δ”", "below 1"), ("inf", "inf", "“δ”", "below 1")):
        at.text_input(key="fed_eps_text").set_value(eps)
        at.text_input(key="fed_delta").set_value(delta).run()
        clean(at)
        assert len(at.error) == 1 and errors(at).startswith(f"{box}: ") and needle in errors(at), (eps, delta,
                                                                                                   errors(at))
        assert at.button(key="fed_run").disabled
    at.text_input(key="fed_eps_text").set_value("1")
    at.text_input(key="fed_delta").set_value("1e-6").run()
    clean(at)
    assert not at.error and not at.button(key="fed_run").disabled


def test_history_lists_and_reopens_a_run():
    a = app("pages/2_Federate.py")
    a.number_input(key="fed_seed").set_value(7)
    a.button(key="fed_run").click().run()
    clean(a)
    mar = a.session_state["run"]["doc"]["overall"]["mar"]
    b = app("pages/8_History.py")  # a new session (as after a reload)
    clean(b)
    table = b.dataframe[0].value
    assert (table["kind"] == "run").any()
    run_ids = [int(i) for i, k in zip(table["id"], table["kind"]) if k == "run"]
    b.selectbox(key="hist_pick").set_value(run_ids[0])
    b.button(key="hist_open").click().run()
    clean(b)
    r = b.session_state["run"]
    assert r["config"].seed == 7 and r["doc"]["overall"]["mar"] == mar
    b.switch_page("pages/4_Recommend.py").run()
    clean(b)
    assert any("score" in d.value.columns for d in b.dataframe)


def _upload(data: bytes, name: str) -> AppTest:
    at = app("pages/1_Data.py")
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    return at


def test_mapper_refuses_user_equal_item():
    rows = "\n".join(f"s{i},drug {i % 4},{i % 3 + 1},H{i % 2}" for i in range(40))
    at = _upload(("patientunitstayid,drugname,count,hospitalid\n" + rows + "\n").encode(), "meds.csv")
    clean(at)
    assert at.selectbox(key="map_user").value == "patientunitstayid"
    assert at.selectbox(key="map_item").value == "drugname"
    at.selectbox(key="map_item").set_value("patientunitstayid").run()
    assert "“User” and “Item” are both" in errors(at)
    assert at.button(key="build_upload").disabled


def test_a_table_of_one_column_per_item_is_refused_not_read_as_item_ids():
    header = "user,site," + ",".join(f"i{j}" for j in range(1, 201))
    rows = "\n".join(f"u{i},S{i % 3}," + ",".join(str((i * j) % 4) for j in range(1, 201)) for i in range(60))
    at = _upload((header + "\n" + rows + "\n").encode(), "wide.csv")
    clean(at)
    assert at.selectbox(key="map_user").value == "user" and at.selectbox(key="map_item").value is None
    assert len(at.error) == 1 and errors(at).startswith("Choose “Item”") and "one column per item" in errors(at)
    assert at.button(key="build_upload").disabled
    assert "wide.csv" not in " ".join(s.value for s in at.subheader)  # the sample stays loaded


def test_a_sweep_or_a_run_is_listed_under_the_same_words_whether_the_cli_or_a_page_ran_it(
        tmp_path, monkeypatch, capsys):
    from dpfed_core.cli import main

    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "store.sqlite3"))
    # a seed of their own: a result shown from the cache of an earlier test is not stored again
    f = app("pages/2_Federate.py")
    f.number_input(key="fed_seed").set_value(5)
    f.button(key="fed_run").click().run()
    clean(f)
    assert main(["run", "--data", "sample:clinic", "--seed", "5"]) == 0, capsys.readouterr().err
    a = app("pages/5_Trade-off.py")
    a.text_input(key="sweep_grid").set_value("1, 3")
    a.text_input(key="sweep_seeds").set_value("5")
    a.multiselect(key="sweep_refs").set_value(["individual"])
    a.run()
    a.button(key="sweep_run").click().run()
    clean(a)
    assert main(["sweep", "--data", "sample:clinic", "--epsilons", "1,3", "--seeds", "5",
                 "--references", "individual"]) == 0, capsys.readouterr().err
    h = app("pages/8_History.py")
    clean(h)
    table = h.dataframe[0].value
    labels = list(table.loc[table["kind"] == "sweep", "what"])
    assert labels == ["sweep of dp-cooccurrence (secure aggregation) over ε ∈ {1, 3}, seeds 5 on sample: clinic"] * 2
    labels = list(table.loc[table["kind"] == "run", "what"])
    assert labels == ["dp-cooccurrence (secure aggregation), ε = 3, rank = 8, seed = 5 on sample: clinic"] * 2


@pytest.mark.parametrize("stem", ["item", "movie_"])
def test_a_wide_table_whose_columns_are_named_like_items_gets_no_item_preselected(stem):
    header = "user,site," + ",".join(f"{stem}{j}" for j in range(1, 201))
    rows = "\n".join(f"u{i},S{i % 3}," + ",".join(str((i * j) % 4) for j in range(1, 201)) for i in range(60))
    at = _upload((header + "\n" + rows + "\n").encode(), "wide.csv")
    clean(at)
    assert at.selectbox(key="map_user").value == "user" and at.selectbox(key="map_item").value is None
    assert errors(at) == (f"Choose “Item”: the 200 columns {stem}1 … {stem}200 are one column per item (a wide table), "
                          "which is not read: convert it to a long table with one row per user–item interaction — "
                          "columns user, item[, rating] (and the entity) — and upload that.")
    assert at.button(key="build_upload").disabled


def test_headerless_upload_is_detected():
    rows = "\n".join(f"{i}\t{i % 7}\t{i % 5 + 1}\t88125{i:04d}" for i in range(1, 60))
    at = _upload((rows + "\n").encode(), "log.tsv")  # a name of no known format
    clean(at)
    assert any("no header line" in i.value for i in at.info)
    assert at.selectbox(key="map_user").options[0] == "column 1"


def test_automatic_k_explained_where_k_is_set():
    at = app("pages/2_Federate.py")
    at.selectbox(key="fed_method").set_value("dp-gaussian").run()
    clean(at)
    text = " ".join(c.value for c in at.caption)
    assert "is a **maximum**" in text and "k_eff" in text
    # the planned stages carry the ledger's names
    assert "recovery: sums" in text


def test_recommend_opens_on_an_entity_with_users_and_says_a_declared_one_without_has_none():
    """A declared entity without users (an empty hospital of the federation) has no one to recommend to:
    the page opens on the first entity that has users and, on the empty one, says so instead of failing."""
    from dataclasses import replace

    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((60, 12)) < 0.4).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["b", "c"], 30), value_kind="counts", value_max=1.0,
                                     name="with an empty entity", entities=["a", "b", "c"])
    ds = replace(ds, item_source="declared")
    assert ds.entity_names[0] == "a" and ds.entity_slices()[0].stop == ds.entity_slices()[0].start
    at = app("pages/2_Federate.py", ds)
    at.toggle(key="fed_simulation").set_value(True).run()
    at.selectbox(key="fed_method").set_value("local").run()
    at.button(key="fed_run").click().run()
    clean(at)
    at.switch_page("pages/4_Recommend.py").run()
    clean(at)
    assert at.selectbox(key="rec_entity").value == "b"
    at.selectbox(key="rec_entity").set_value("a").run()
    clean(at)
    assert any("is declared but has no" in i.value and "Choose another entity" in i.value for i in at.info)


def test_the_audit_page_refuses_a_real_target_of_an_entity_without_users_before_anything_is_charged():
    """The entity box shows each entity's size; an entity of fewer than 2 users cannot have a real user
    audited, and the page says so with the button disabled — nothing is charged for a refusal — and it
    opens on an entity whose users can be audited."""
    from dataclasses import replace

    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((60, 12)) < 0.4).astype(float))
    ds = replace(FederatedDataset.from_parts(X, np.repeat(["b", "c"], 30), value_kind="counts", value_max=1.0,
                                             name="with an empty entity", entities=["a", "b", "c"]),
                 item_source="declared")
    at = app("pages/7_Privacy_audit.py", ds)
    clean(at)
    assert at.selectbox(key="audit_entity").value == "b"
    at.selectbox(key="audit_entity").set_value("a").run()
    clean(at)
    assert any("needs an entity with at least 2 users, and a has 0" in e.value for e in at.error)
    assert at.button(key="audit_run").disabled
    at.multiselect(key="audit_targets").set_value(["synthetic"]).run()
    assert not any("at least 2 users" in e.value for e in at.error)


def test_the_evaluate_page_charges_comparisons_as_comparisons_states_no_epsilon_for_local_and_stops_at_a_refusal(
        tmp_path, monkeypatch):
    """What the Evaluate page adds to the budget is what the CLI's --compare adds: comparison rows (not a
    second run); `local` releases nothing and is stored without the run's ε; and once the budget refuses
    one comparison the page stops there — one refusal, not one per method."""
    from dpfed_core.privacy.odometer import BudgetOdometer
    from dpfed_core.privacy.store import Store

    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    at = app("pages/2_Federate.py")
    at.number_input(key="fed_seed").set_value(13)  # a seed of its own: nothing served from another test's cache
    at.toggle(key="fed_secure").set_value(True)
    at.button(key="fed_run").click().run()
    clean(at)
    ds = at.session_state["dataset"]
    # the ledger's chart draws, beside each entity's ε, the weaker ε against the server and all other entities
    import json

    traces = [t.get("name") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]
    assert "ε of the entity's releases (composed)" in traces
    assert any(str(t).startswith("ε against the server + all other entities (") for t in traces), traces
    at.switch_page("pages/3_Evaluate.py").run()
    at.multiselect(key="eval_methods").set_value(["local"]).run()
    assert any("They release nothing and spend nothing" in c.value for c in at.caption)
    at.multiselect(key="eval_methods").set_value(["local", "dp-popularity"]).run()
    assert any("Each comparison that releases something is charged to the privacy budget" in c.value
               for c in at.caption), [c.value for c in at.caption]
    at.button(key="eval_run").click().run()
    clean(at)
    odo = BudgetOdometer(Store(path))
    rows = odo.releases(ds)
    assert sorted((r["kind"], r["method"]) for r in rows) == [("comparison", "dp-popularity"),
                                                              ("run", "dp-cooccurrence")], rows
    # the verdict is on MAR unless the reader picks another metric; a method taken off the list leaves the table
    assert at.radio(key="eval_verdict_metric").value == "mar"
    assert list(at.dataframe[0].value.index) == ["dp-cooccurrence", "local", "dp-popularity"]
    at.multiselect(key="eval_methods").set_value(["local"]).run()
    assert list(at.dataframe[0].value.index) == ["dp-cooccurrence", "local"]
    local = at.session_state["comparison"]["docs"]["local"]
    assert local["config"]["epsilon"] in (None, "inf", float("inf")), local["config"]
    spent = max(b.spent_epsilon for b in odo.balance(ds))
    odo.set_cap(ds, spent)  # nothing left: every further DP comparison is refused before it computes
    at.multiselect(key="eval_methods").set_value(["local", "dp-popularity", "dp-gaussian", "dp-prototypes"]).run()
    at.button(key="eval_run").click().run()
    clean(at)
    refusals = [e.value for e in at.error if "budget" in e.value.lower()]
    assert len(refusals) == 1, [e.value for e in at.error]
    assert len(odo.releases(ds)) == 2  # nothing more charged


def test_the_federate_page_runs_the_trust_model_its_toggle_shows_and_none_for_a_prototype_method():
    """Secure aggregation switched off runs without it (each entity adds the full noise, the server sees
    every release) and the run document says so; a prototype method sends each entity's release to the
    server whatever the (disabled) toggle still shows."""
    at = app("pages/2_Federate.py")
    at.toggle(key="fed_simulation").set_value(True)
    at.number_input(key="fed_seed").set_value(32).run()  # its own seed: no other test's cached run
    at.toggle(key="fed_secure").set_value(True).run()
    assert any("**Secure aggregation on**" in c.value for c in at.caption)
    at.toggle(key="fed_secure").set_value(False).run()
    assert any("**Secure aggregation off**" in c.value for c in at.caption)
    at.button(key="fed_run").click().run()
    clean(at)
    run = at.session_state["run"]
    assert run["config"].method == "dp-cooccurrence" and run["config"].aggregation == "none"
    assert run["doc"]["config"]["aggregation"] == "none"
    # the same settings again are the cached result: the button says nothing new is spent, and pressing it
    # shows the result with that said
    at.run()
    assert "nothing new spent" in at.button(key="fed_run").label
    at.button(key="fed_run").click().run()
    assert at.session_state["run"]["cached"]
    assert any(c.value.startswith("Same data and configuration as an earlier run (this or another session)")
               for c in at.caption)
    # a control changed since the run: the results below are said to be the last run's
    at.number_input(key="fed_seed").set_value(at.number_input(key="fed_seed").value + 1).run()
    assert any("the controls above have changed since" in c.value for c in at.caption)
    assert "nothing new spent" not in at.button(key="fed_run").label
    at.toggle(key="fed_secure").set_value(True).run()
    at.selectbox(key="fed_method").set_value("dp-gaussian").run()
    assert at.toggle(key="fed_secure").disabled and at.toggle(key="fed_secure").value
    at.button(key="fed_run").click().run()
    clean(at)
    run = at.session_state["run"]
    assert run["config"].method == "dp-gaussian" and run["config"].aggregation == "none"


def test_the_evaluate_verdict_is_shown_in_the_colour_of_its_word():
    """A federation that loses to each entity alone is said in red, never in green: a random V (MAR about 0.5)
    against local (about 0.15)."""
    from dpfed_core.ui import engine as dash

    at = app("pages/2_Federate.py")
    at.toggle(key="fed_simulation").set_value(True)
    at.number_input(key="fed_seed").set_value(33).run()  # its own seed: no other test's cached run
    at.selectbox(key="fed_method").set_value("random-v").run()
    at.button(key="fed_run").click().run()
    clean(at)
    at.switch_page("pages/3_Evaluate.py").run()
    at.multiselect(key="eval_methods").set_value(["local"]).run()
    at.button(key="eval_run").click().run()
    clean(at)
    docs = {"random-v": at.session_state["run"]["doc"], **at.session_state["comparison"]["docs"]}
    v = dash.entity_verdict(docs, "random-v", "mar")
    assert dash.verdict_word(v) == "worse"
    said = dash.escape_md(dash.verdict_sentence(v))
    assert [e.value for e in at.error if e.value == said] and not [s for s in at.success if s.value == said]
    # against individual alone the page asks for local, the reference every verdict is stated against
    at.multiselect(key="eval_methods").set_value(["individual"]).run()
    at.button(key="eval_run").click().run()
    clean(at)
    assert any(c.value.startswith("The verdict is stated against *local*") for c in at.caption)
    at.multiselect(key="eval_methods").set_value([]).run()
    assert any(i.value.startswith("Add *local* (each entity alone) to the comparison") for i in at.info)


def test_the_history_page_filters_by_kind_reopens_runs_sweeps_and_audits_where_they_are_shown_and_deletes(
        tmp_path, monkeypatch):
    """Every kind of stored result is listed under its kind, reopens on its own page with its own settings
    (an older run's seed, not the last run's), and a deleted result is gone from the list."""
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "store.sqlite3"))
    at = app("pages/2_Federate.py")
    for seed in (21, 22, 22):  # the last is the cached result of the second: shown, not stored again
        at.number_input(key="fed_seed").set_value(seed).run()
        at.button(key="fed_run").click().run()
        clean(at)
    at.switch_page("pages/5_Trade-off.py").run()
    at.text_input(key="sweep_grid").set_value("1")
    at.text_input(key="sweep_seeds").set_value("21")
    at.multiselect(key="sweep_refs").set_value(["individual"]).run()
    at.button(key="sweep_run").click().run()
    clean(at)
    at.switch_page("pages/7_Privacy_audit.py").run()
    at.multiselect(key="audit_methods").set_value(["kmeans"])
    at.multiselect(key="audit_targets").set_value(["synthetic"])
    at.number_input(key="audit_runs").set_value(4).run()
    at.button(key="audit_run").click().run()
    clean(at)
    audit_doc = at.session_state["audit_result"]["doc"]
    for k in ("sweep", "audit_result"):
        del at.session_state[k]
    at.switch_page("pages/8_History.py").run()
    clean(at)

    def listed(kind):
        at.radio(key="hist_kind").set_value(kind).run()
        clean(at)
        t = at.dataframe[0].value
        return dict(zip(t["id"], t["kind"]))

    every = listed("all")
    assert sorted(every.values()) == ["audit", "run", "run", "sweep"]
    for kind in ("run", "sweep", "audit"):
        assert set(listed(kind).values()) == {kind}
    runs = sorted(i for i, k in every.items() if k == "run")
    at.radio(key="hist_kind").set_value("all").run()
    at.selectbox(key="hist_pick").set_value(runs[0])  # the first run (seed 21), after the one of seed 22
    at.button(key="hist_open").click().run()
    clean(at)
    assert at.session_state["run"]["config"].seed == 21 and at.session_state["run_config"].seed == 21
    (sweep_id,) = [i for i, k in every.items() if k == "sweep"]
    at.selectbox(key="hist_pick").set_value(sweep_id)
    at.button(key="hist_open").click().run()
    clean(at)
    assert at.session_state["sweep"]["doc"]["seeds"] == [21]
    (audit_id,) = [i for i, k in every.items() if k == "audit"]
    at.selectbox(key="hist_pick").set_value(audit_id)
    at.button(key="hist_open").click().run()
    clean(at)
    assert at.session_state["audit_result"]["doc"]["config"] == audit_doc["config"]
    at.switch_page("pages/7_Privacy_audit.py").run()     # the reopened audit is shown there, not dropped
    clean(at)
    assert at.session_state["audit_result"]["doc"]["config"] == audit_doc["config"]
    assert any(c.value.startswith("Showing the last audit") for c in at.caption)
    assert not any(i.value.startswith("Press **Run audit**") for i in at.info)
    at.switch_page("pages/8_History.py").run()
    at.selectbox(key="hist_pick").set_value(runs[1])
    at.button(key="hist_delete").click().run()
    clean(at)
    assert runs[1] not in listed("all") and len(listed("all")) == 3


def test_the_tradeoff_verdict_is_stated_at_epsilon_one_of_the_grid_and_a_changed_grid_is_said(monkeypatch):
    """With ε = 1 on the grid the sweep's verdict against each entity alone is the one at ε = 1 (not the
    grid's first point); a grid edited after the sweep leaves its result on screen, said to be the last sweep's."""
    from dpfed_core.ui import engine as dash

    at = app("pages/2_Federate.py")
    at.toggle(key="fed_simulation").set_value(True)
    at.number_input(key="fed_seed").set_value(31).run()  # its own seed: no other test's cached run or sweep
    at.button(key="fed_run").click().run()
    at.switch_page("pages/5_Trade-off.py").run()
    at.text_input(key="sweep_grid").set_value("0.2, 1, inf")
    at.text_input(key="sweep_seeds").set_value("31")
    at.multiselect(key="sweep_refs").set_value(["individual", "local", "dp-popularity"]).run()
    at.button(key="sweep_run").click().run()
    clean(at)
    doc = at.session_state["sweep"]["doc"]
    # the crossing is against local (each entity alone) whenever it was run, individual beside it or not
    assert any(m.value.startswith("Crossing ε (MAR) vs local:") for m in at.markdown)
    # where the engine finds the swept method losing to dp-popularity at an ε, the page says so in a warning
    from dpfed_core.evaluation import experiments

    rows = experiments.versus_dp_popularity(doc, "mar")
    assert not any(w.value.startswith("**dp-cooccurrence loses to dp-popularity**") for w in at.warning)
    lost = [{**rows[0], "verdict": "LOSES to dp-popularity", "mean": 0.31, "dp_popularity_mean": 0.22}, *rows[1:]]
    monkeypatch.setattr(experiments, "versus_dp_popularity", lambda d, m: lost)
    at.run()
    (warn,) = [w.value for w in at.warning if w.value.startswith("**dp-cooccurrence loses to dp-popularity**")]
    assert f"ε = {dash.format_epsilon(rows[0]['epsilon'])} (MAR 0.310 vs 0.220)" in warn
    monkeypatch.undo()
    at_one, at_first = (dash.sweep_verdict_sentence(dash.sweep_entity_verdict(doc, e, "mar"), 1) for e in (1.0, 0.2))
    assert at_one != at_first
    shown = [m.value for m in at.markdown]
    assert dash.escape_md(at_one) in shown and dash.escape_md(at_first) not in shown
    assert not any("settings above have changed since" in c.value for c in at.caption)
    # the ε planner reads its box as a percentage: within 1 % of the swept method's non-private value
    at.number_input(key="sweep_tol").set_value(1.0).run()
    plan = dash.epsilon_for_utility(doc, "mar", 0.01)
    said = " ".join(m.value for m in at.markdown)
    assert plan["reference"] is not None and f"within 1 % of {plan['reference']}" in said
    assert (f"ε = {dash.format_epsilon(plan['epsilon'])}**" in said if plan["epsilon"] is not None
            else "No ε on this grid gets MAR within 1 %" in said), said
    assert plan != dash.epsilon_for_utility(doc, "mar", 1.0)
    # the users planner runs at the ε its own slider shows, not the last run's
    from dpfed_core.evaluation import planner

    asked = []
    monkeypatch.setattr(planner, "users_needed", lambda cfg, **kw: asked.append(cfg) or {
        "points": [{"users": 50.0, "advantage": 0.01, "sd": 0.0}], "mode": cfg.mode})
    at.select_slider(key="sweep_sub_eps").set_value(0.2).run()
    at.button(key="sweep_sub_run").click().run()
    clean(at)
    assert [c.epsilon for c in asked] == [0.2] and at.session_state["run_config"].epsilon != 0.2
    monkeypatch.undo()
    at.text_input(key="sweep_grid").set_value("0.2, 1, 2").run()
    assert any("Showing the last sweep; the settings above have changed since" in c.value for c in at.caption)


def test_the_federate_page_forecasts_the_items_a_dp_catalogue_keeps_before_a_run_on_data_without_one():
    """Data without a declared catalogue: before the Run button the page says how many items the DP
    selection is expected to share at this ε, that each entity keeps its own items, and which control
    declares the catalogue; with the catalogue declared there is nothing to forecast."""
    import numpy as np

    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.data.loaders import load_data
    from dpfed_core.ui.engine import DEFAULT_SAMPLE

    declared = load_data(DEFAULT_SAMPLE)
    ds = FederatedDataset.from_parts(declared.X, np.asarray(declared.entity_names)[declared.entity_of_user],
                                     value_kind=declared.value_kind, value_max=declared.value_max,
                                     name="the sample without its catalogue")
    for data, forecast in ((ds, True), (declared, False)):
        at = app("pages/2_Federate.py", data)
        clean(at)
        said = [i.value for i in at.info if "expected to be shared" in i.value]
        if not forecast:
            assert not said
            continue
        assert len(said) == 1, [i.value for i in at.info]
        assert "of 143 items are expected to be shared" in said[0]
        assert "Each entity still recommends every item it has rows for" in said[0]
        assert "“Item catalogue” / “Formulary” upload on the Data page" in said[0]  # the control, not a flag


def test_a_federate_run_is_charged_to_the_owners_store_and_a_non_private_one_past_a_cap_needs_the_checkbox(
        tmp_path, monkeypatch):
    """The page's runs are releases: charged to the store before they compute. Once a cap is set, ε = ∞
    (the exact data leaves each entity) is refused — nothing computed or charged — until "Allow
    non-private releases" is ticked."""
    from dpfed_core.privacy.odometer import BudgetOdometer
    from dpfed_core.privacy.store import Store

    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    at = app("pages/2_Federate.py")
    at.number_input(key="fed_seed").set_value(41).run()  # its own seed: no other test's cached run
    at.button(key="fed_run").click().run()
    clean(at)
    ds = at.session_state["dataset"]
    odo = BudgetOdometer(Store(path))
    assert [(r["kind"], r["method"], r["simulation"]) for r in odo.releases(ds)] == [("run", "dp-cooccurrence", 0)]
    odo.set_cap(ds, 100.0)
    at.text_input(key="fed_eps_text").set_value("inf").run()
    at.button(key="fed_run").click().run()
    clean(at)
    assert any("non-private" in e.value for e in at.error), [e.value for e in at.error]
    assert len(odo.releases(ds)) == 1 and at.session_state["run"]["config"].epsilon != float("inf")
    # a refused run is no result: the button does not offer it as a cached one
    assert "nothing new spent" not in at.button(key="fed_run").label
    (box,) = [c for c in at.checkbox if c.label == "Allow non-private releases"]
    box.check().run()
    at.button(key="fed_run").click().run()
    clean(at)
    assert at.session_state["run"]["config"].epsilon == float("inf") and len(odo.releases(ds)) == 2
    # a sweep's non-private point likewise, on the Trade-off page (the box is one setting of the session)
    box = [c for c in at.checkbox if c.label == "Allow non-private releases"][0]
    box.uncheck().run()
    at.switch_page("pages/5_Trade-off.py").run()
    at.text_input(key="sweep_grid").set_value("inf")
    at.text_input(key="sweep_seeds").set_value("41")
    at.multiselect(key="sweep_refs").set_value([]).run()
    at.button(key="sweep_run").click().run()
    clean(at)
    assert any("non-private" in e.value for e in at.error), [e.value for e in at.error]
    assert "sweep" not in at.session_state and len(odo.releases(ds)) == 2
    [c for c in at.checkbox if c.label == "Allow non-private releases"][0].check().run()
    at.button(key="sweep_run").click().run()
    clean(at)
    assert at.session_state["sweep"]["doc"]["epsilons"] == [float("inf")] and len(odo.releases(ds)) == 3


def test_a_sample_loaded_with_an_entity_left_out_has_every_other_entity():
    at = app("pages/1_Data.py")
    at.selectbox(key="sample_spec").set_value("sample:clinic").run()
    at.text_input(key="exclude_entities").set_value("hospital 01, hospital 07").run()
    at.button(key="load_sample").click().run()
    clean(at)
    ds = at.session_state["dataset"]
    assert ds.n_entities == 28 and not {"hospital 01", "hospital 07"} & set(ds.entity_names)
    assert "hospital 02" in ds.entity_names


def test_the_data_page_names_an_entity_too_small_to_evaluate():
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(1)
    X = sp.csr_matrix((g.random((63, 12)) < 0.4).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["big", "tiny"], [60, 3]), value_kind="counts", value_max=1.0,
                                     name="one tiny entity", entities=["big", "tiny"])
    at = app("pages/1_Data.py", ds)
    clean(at)
    from dpfed_core.ui.engine import small_entity_warning

    want = small_entity_warning(ds)
    assert want and "tiny (3 users)" in want and [w.value for w in at.warning if w.value == want]


def test_recommend_lists_at_most_the_catalogue_as_the_cli_top_n():
    """The Top-N of a catalogue of 6 items stops at 6 (and opens there, below its usual 10): a longer list
    holds items that are not there, and the command line refuses --top-n above the items the same way."""
    at = _run_on_small_catalogue(6, 0.5, "six items", "local")
    at.switch_page("pages/4_Recommend.py").run()
    clean(at)
    top = at.number_input(key="rec_n")
    assert (top.max, top.value) == (6, 6)
    assert "At most 6" in top.help


def _run_on_small_catalogue(n_items: int, density: float, name: str, method: str):
    """The Federate page after a simulated run of ``method`` at rank 2 on 60 users of two entities over a
    declared catalogue of ``n_items`` items."""
    from dataclasses import replace

    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((60, n_items)) < density).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["b", "c"], 30), value_kind="counts", value_max=1.0,
                                     name=name, entities=["b", "c"])
    at = app("pages/2_Federate.py", replace(ds, item_source="declared"))
    at.toggle(key="fed_simulation").set_value(True).run()
    at.selectbox(key="fed_method").set_value(method).run()
    at.number_input(key="fed_rank").set_value(2).run()
    at.button(key="fed_run").click().run()
    clean(at)
    return at


@pytest.mark.parametrize("n_items", [3, 5])
def test_the_federate_page_shows_the_prototypes_of_a_catalogue_of_five_items_or_fewer(n_items):
    """The server's view of a prototype run over a catalogue of at most 5 items shows every item: an
    "Items shown" slider from 5 to the catalogue would have no range to choose from."""
    at = _run_on_small_catalogue(n_items, 0.6, f"{n_items} items", "dp-prototypes")
    assert not [s for s in at.slider if s.key == "fed_n_cols"]
    assert len(at.get("plotly_chart")) >= 1


def test_the_audit_page_refuses_a_specific_user_id_not_in_the_entity_before_anything_is_charged():
    """A specific user id that is not one of the audited entity's users is one error naming the box, with
    the button disabled: a refused audit leaves no release in the entity's budget."""
    from dataclasses import replace

    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((60, 12)) < 0.4).astype(float))
    ds = replace(FederatedDataset.from_parts(X, np.repeat(["b", "c"], 30), value_kind="counts", value_max=1.0,
                                             name="two entities", entities=["b", "c"]), item_source="declared")
    at = app("pages/7_Privacy_audit.py", ds)
    at.selectbox(key="audit_entity").set_value("b").run()
    for typed, said in (("nosuch", "no user with id 'nosuch' in entity 'b'"),
                        (str(ds.user_ids[45]), "is in entity 'c', not in 'b'")):
        at.text_input(key="audit_user").set_value(typed).run()
        clean(at)
        msg = errors(at)
        assert said in msg and "“Specific user id”" in msg and "--entity" not in msg, msg
        assert at.button(key="audit_run").disabled
    at.text_input(key="audit_user").set_value(str(ds.user_ids[3])).run()
    clean(at)
    assert not at.button(key="audit_run").disabled
