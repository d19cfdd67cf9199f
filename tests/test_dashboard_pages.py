"""AppTest (headless Streamlit) of the page behaviour: a configuration run again in the same
and in another session is served from the shared cache without an exception; bad budgets are refused
before a run; the History page lists and reopens results; the column mapper refuses nonsense."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]


def app(page: str = "app.py") -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
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
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.session_state["dataset"] = ds
    at.run()
    at.switch_page("pages/2_Federate.py").run()
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
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.session_state["dataset"] = ds
    at.run()
    at.switch_page("pages/7_Privacy_audit.py").run()
    clean(at)
    assert at.selectbox(key="audit_entity").value == "b"
    at.selectbox(key="audit_entity").set_value("a").run()
    clean(at)
    assert any("needs an entity with at least 2 users, and a has 0" in e.value for e in at.error)
    assert at.button(key="audit_run").disabled
    at.multiselect(key="audit_targets").set_value(["synthetic"]).run()
    assert not any("at least 2 users" in e.value for e in at.error)
