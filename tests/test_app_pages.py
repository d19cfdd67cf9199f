"""AppTest (headless Streamlit) tests of the dashboard: every page renders, the happy path gives the
engine's numbers, and every bad input shows its specific error (never an exception).

All tests use the default sample (``sample:clinic``); Streamlit's caches are process-wide, so the
expensive runs are computed once per test session.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpfed_core.ui import engine as dash
from dpfed_core.evaluation.experiments import make_split, run_method, sweep, sweep_table
from dpfed_core.data.loaders import load_data
from tests.test_cli import cli_sweep

REPO = Path(__file__).resolve().parents[1]
PAGES = ["app.py", "pages/1_Data.py", "pages/2_Federate.py", "pages/3_Evaluate.py",
         "pages/4_Recommend.py", "pages/5_Trade-off.py"]
TIMEOUT = 120


def app(page: str = "app.py") -> AppTest:
    """A new session opened on ``page``. Always entered through ``app.py`` (as in a browser), so the
    multipage navigation exists and page links resolve."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    if page != "app.py":
        at.run()
        at.switch_page(page)
    return at


def assert_clean(at: AppTest) -> None:
    """No exception element (a traceback) on the page."""
    assert not at.exception, [e.value for e in at.exception]


def errors(at: AppTest) -> list[str]:
    """Error texts as the reader sees them (Markdown escapes of user data removed)."""
    import re

    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


@pytest.fixture(scope="module")
def clinic():
    return load_data(dash.DEFAULT_SAMPLE)


@pytest.fixture(scope="module")
def federated(clinic):
    """An AppTest session that has run the default federation (shared by the flow tests)."""
    at = app().run()
    at.switch_page("pages/2_Federate.py").run()
    at.toggle(key="fed_simulation").set_value(True).run()  # reproducible noise, to compare with the engine
    at.button(key="fed_run").click().run()
    assert_clean(at)
    return at


# ------------------------------------------------------------------------------ rendering
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_fresh(page):
    """Each page opened directly in a new session renders without an exception (pages that need a
    run say so and link to Federate)."""
    at = app(page).run()
    assert_clean(at)
    assert not errors(at)
    assert at.title, "every page has a title"


def test_home_has_three_parts():
    at = app().run()
    text = " ".join(m.value for m in at.markdown)
    assert "prototypes" in text and "ε" in text
    assert any(s.value == "The two rounds" for s in at.subheader)
    assert any(s.value == "Where to start" for s in at.subheader)


# ------------------------------------------------------------------------------ happy path
def test_data_page_loads_default_sample_and_lists_entities(clinic):
    at = app("pages/1_Data.py").run()
    assert_clean(at)
    table = at.dataframe[-1].value
    assert list(table["entity"]) == clinic.entity_names
    assert table["users"].sum() == clinic.n_users
    # switching the federation key to region gives the 4 regions
    at.selectbox(key="sample_fed").set_value("region").run()
    at.button(key="load_sample").click().run()
    assert_clean(at)
    assert at.success, "a success message after loading"
    table = at.dataframe[-1].value
    assert len(table) == 4 and table["users"].sum() == clinic.n_users


def test_federate_matches_engine(federated, clinic):
    at = federated
    r = at.session_state["run"]
    cfg = dash.default_config(clinic).replace(simulation=True)
    assert dash.config_key(r["config"]) == dash.config_key(cfg)
    doc, _ = run_method(clinic, cfg)
    for key in ("test_rmse", "mar", "ndcg_at_10", "train_rmse"):
        assert r["doc"]["overall"][key] == pytest.approx(doc["overall"][key], rel=1e-12, abs=1e-12)
    shown = {m.label: m.value for m in at.metric}
    assert shown["MAR"] == f"{doc['overall']['mar']:.4f}"
    # every stage ran: the ε shown is the requested one, with no "the rest was not spent" beside it
    (eps,) = [m for m in at.metric if m.label.startswith("ε")]
    assert eps.value == dash.format_epsilon(doc["privacy"]["epsilon"]) and not eps.delta
    # zero mode ranks: its headline is the ranking metrics, not an RMSE against the counts
    assert "test RMSE" not in shown and shown["precision@10"] == f"{doc['overall']['precision_at_10']:.4f}"
    # the live status reported the protocol steps and finished
    status = at.status[0]
    assert status.state == "complete"
    lines = " ".join(m.value for m in status.markdown)
    assert "Round 1" in lines and "Evaluat" in lines  # (summable methods have no separate server step)
    # what the server saw, V, messages, ledger; a simulation run states no guarantee, only its label
    tabs = [t.label for t in at.tabs]
    assert tabs == ["What the server saw", "V: item factors", "Message log", "Privacy ledger", "Run document"]
    text = " ".join(m.value for m in at.markdown)
    assert "simulation: noise reproducible, no privacy claim" in text
    assert f"({dash.format_epsilon(doc['privacy']['epsilon'])}, {doc['privacy']['delta']:.3g})" in text
    assert "-DP**" not in text
    msgs = at.tabs[2].dataframe[0].value
    assert len(msgs) == len(doc["messages"])
    assert set(msgs["round"]) == {1, 2}


def test_evaluate_matches_engine(federated, clinic):
    at = federated
    at.switch_page("pages/3_Evaluate.py").run()
    assert_clean(at)
    # nothing is computed on a visit; the button says what the comparisons will charge
    assert len(at.dataframe[0].value.index) == 1
    (run,) = [b for b in at.button if b.key == "eval_run"]
    assert "comparison" in run.label and ("spends ε ≈" in run.label or "simulation" in run.label)
    run.click().run()
    assert_clean(at)
    overall = at.dataframe[0].value
    cfg = dash.default_config(clinic).replace(simulation=True)
    split = make_split(clinic, cfg)
    extra = ["dp-popularity"] if ("dp-popularity" in dash.method_catalogue()["method"].tolist()
                                  and "dp-popularity" not in dash.BASE_REFERENCES) else []
    assert list(overall.index) == [cfg.method, *[m for m in dash.BASE_REFERENCES if m != cfg.method], *extra]
    # the headline verdict, one metric (MAR), against local with individual beside it, in a banner
    # coloured by its word
    text = " ".join(m.value for m in [*at.markdown, *at.success, *at.error, *at.info])
    assert "the federation is" in text and "of 30" in text and "each entity alone" in text
    docs = {cfg.method: at.session_state["run"]["doc"], **at.session_state["comparison"]["docs"]}
    v = dash.entity_verdict(docs, cfg.method, "mar")
    word = dash.verdict_word(v) or dash.verdict_word(v, "individual")
    banner = {"better": at.success, "worse": at.error}.get(word, at.info)
    assert any(dash.escape_md(dash.verdict_sentence(v)) == b.value for b in banner), (word, text)
    # where the results are, how the run differs from the paper (the CLI's and the report's sentence)
    captions = " ".join(c.value for c in at.caption)
    assert dash.escape_md(dash.paper_differences_text(cfg.to_dict())) in captions
    for m in overall.index:
        doc, _ = run_method(clinic, cfg.replace(method=m), split)
        assert overall.loc[m, "mar"] == pytest.approx(doc["overall"]["mar"], abs=1e-12)
        assert overall.loc[m, "test_rmse"] == pytest.approx(doc["overall"]["test_rmse"], abs=1e-12)
    assert "user-level DP" in overall.loc[cfg.method, "privacy"]
    assert at.get("download_button"), "a CSV download"


def test_recommend_matches_engine(federated, clinic):
    at = federated
    at.switch_page("pages/4_Recommend.py").run()
    assert_clean(at)
    entity = at.selectbox(key="rec_entity").value
    user = at.selectbox(key=f"rec_user_{entity}").value
    frames = [d.value for d in at.dataframe]
    mine, theirs = [f for f in frames if "score" in getattr(f, "columns", [])][:2]
    history = [f for f in frames if "status" in getattr(f, "columns", [])][0]
    # the model's ε is labelled as a simulation's where the run's noise is reproducible
    sim = bool(at.session_state["run"]["doc"]["privacy"].get("simulation"))
    label = [m.value for m in at.markdown if m.value.startswith("**Federated model**")]
    assert label and (dash.SIMULATION_LABEL in label[0]) == sim
    # clinicians: the disclaimer, and the clinical set metrics for event data next to MAR
    assert any("Decision support, not clinical advice" in w.value for w in at.warning)
    sets = [f for f in frames if "jaccard" in getattr(f, "columns", [])]
    assert sets and {"f1", "pr_auc"} <= set(sets[0].columns)
    from dpfed_core.federation.protocol import recommend_from_factors

    result = at.session_state["run"]["result"]
    split = make_split(clinic, at.session_state["run"]["config"])
    items, scores = recommend_from_factors(clinic, split.train, result.entity_factors(), None, entity, user, 10, True)
    assert list(mine["item"]) == list(clinic.item_names[items])
    np.testing.assert_allclose(mine["score"].to_numpy(), scores)
    assert len(theirs) == 10 and len(history) > 0
    # beside it, the entity alone as every verdict states it (local: own model + own popularity),
    # and the page's word for this entity is the verdicts' rule on the two runs' MAR
    cfg = at.session_state["run"]["config"]
    local_doc, local = run_method(clinic, cfg.replace(method="local", epsilon=math.inf, delta=1e-6,
                                                      prototype_params={}, server_weighting="none"), split)
    items, scores = recommend_from_factors(clinic, split.train, local.entity_factors(), None, entity, user, 10, True)
    assert list(theirs["item"]) == list(clinic.item_names[items])
    fed_mar = dash.entity_metric(at.session_state["run"]["doc"], entity, "mar")
    local_mar = dash.entity_metric(local_doc, entity, "mar")
    spread = dash.entity_paired_spread(clinic, split, result, local, entity, 10, True)
    # the paired spread is over the very differences the documents measured
    assert spread["mar_diff"] == pytest.approx(fed_mar - local_mar, abs=1e-12)
    cmp = dash.entity_against_alone(fed_mar, local_mar, dash.entity_set_metrics(clinic, split, result, entity, 10),
                                    dash.entity_set_metrics(clinic, split, local, entity, 10), spread)
    word = ("mixed" if cmp["worse"] and cmp["better"] else "worse" if cmp["worse"] else
            "better" if cmp["better"] else "noise" if cmp["noise"] else "tie")
    banners = {"worse": [e.value for e in at.error], "better": [s.value for s in at.success],
               "tie": [i.value for i in at.info], "mixed": [w.value for w in at.warning],
               "noise": [i.value for i in at.info if "differ by less than their noise" in i.value]}
    n_test = dash.entity_metric(at.session_state["run"]["doc"], entity, "n_test_users")
    if n_test < dash.MIN_EVIDENCE_USERS:  # a handful of held-out stays: no verdict either way, only numbers
        said = [i.value for i in at.info if f"{n_test} test stays" in i.value and "no verdict" in i.value]
        assert said and not at.error and not at.success, banners
        # and where such an entity is still counted: Evaluate's and the CLI's verdict across entities
        assert "count its direction as one entity's in their verdict across entities" in said[0], said
    else:
        said = [b for b in banners[word] if "than this entity alone (own model + own popularity)" in b
                or "as well as this entity alone (own model + own popularity)" in b
                or "and this entity alone (own model + own popularity) differ by less than their noise" in b]
        assert said, (word, banners)
        assert word != "mixed" or "the two measures disagree" in said[0]
    # the score is said to order the list, never to be a value on the data's scale (a blend's is not)
    meaning = [m.value for m in at.markdown if m.value.startswith("The **score** orders the list")]
    assert meaning and "not on the data's scale" in meaning[0] and "higher first" in meaning[0], meaning
    # every suggestion explained in words, from the entity's own similar stays
    assert all(w.startswith("seen with ") and w.split()[5] == "similar" and " stays" in w for w in mine["why"])
    # clinicians see lab / medication names, not ids
    assert all(not str(n).isdigit() for n in mine["item"])
    # a shorter list for a user typed by id, one whose two lists hold different numbers of hidden entries:
    # both lists follow Top-N and the typed user as the engine ranks them, and so do the counts and the set
    # metrics beside them (the federated row from the federated model, the entity-alone row from local)
    other = next(u for u in at.selectbox(key=f"rec_user_{entity}").options if u != user and (
        dash.user_set_metrics(clinic, split, result, entity, u, 5)["hits"]
        != dash.user_set_metrics(clinic, split, local, entity, u, 5)["hits"]))
    at.number_input(key="rec_n").set_value(5).run()
    at.text_input(key="rec_typed").set_value(f" {other} ").run()
    assert_clean(at)
    frames = [d.value for d in at.dataframe]
    mine5, theirs5 = [f for f in frames if "score" in getattr(f, "columns", [])][:2]
    items, _ = recommend_from_factors(clinic, split.train, result.entity_factors(), None, entity, other, 5, True)
    assert list(mine5["item"]) == list(clinic.item_names[items])
    items, _ = recommend_from_factors(clinic, split.train, local.entity_factors(), None, entity, other, 5, True)
    assert list(theirs5["item"]) == list(clinic.item_names[items])
    assert any(f"**{dash.escape_md(other)}** of" in c.value for c in at.caption)
    want = [dash.user_set_metrics(clinic, split, fit, entity, other, 5) for fit in (result, local)]
    sets5 = [f for f in frames if "jaccard" in getattr(f, "columns", [])][0]
    assert list(sets5["hits"]) == [int(w["hits"]) for w in want]
    assert [round(r, 12) for r in sets5["jaccard"]] == [round(w["jaccard"], 12) for w in want]
    hits = [c.value.split(" of the hidden items in the top ")[0] for c in at.caption
            if " of the hidden items in the top 5" in c.value]
    assert hits == [str(int((f["hidden test item"] == "✔").sum())) for f in (mine5, theirs5)]
    assert hits == [str(int(w["hits"])) for w in want]
    # typing an unknown id is a message, not a traceback
    at.text_input(key="rec_typed").set_value("no-such-patient").run()
    assert_clean(at)
    assert any("no-such-patient" in e for e in errors(at))
    # an id of another entity's patient is not ranked by this entity's model: the error names where it is
    h = clinic.entity_index(entity)
    stranger = str(np.asarray(clinic.user_ids)[np.flatnonzero(np.asarray(clinic.entity_of_user) != h)[0]])
    at.text_input(key="rec_typed").set_value(stranger).run()
    assert_clean(at)
    assert any(f"{stranger!r} is in entity" in e and "“Entity”" in e for e in errors(at)), errors(at)
    assert not [d for d in at.dataframe if "score" in getattr(d.value, "columns", [])]


def test_tradeoff_matches_engine(federated, clinic, monkeypatch):
    at = federated
    at.switch_page("pages/5_Trade-off.py").run()
    assert_clean(at)
    # the sweep follows the last Federate run, its noise said: that run was a simulation
    assert any("the last run on the Federate page" in c.value and "simulation noise" in c.value
               for c in at.caption), [c.value for c in at.caption]
    # a grid or seed a run would refuse is one error naming the page's box, not a traceback
    for key, bad, box in (("sweep_grid", "1e7", "“ε grid”"), ("sweep_grid", "1, abc", "“ε grid”"),
                          ("sweep_grid", "0, 1", "“ε grid”"), ("sweep_seeds", "-1", "“Seeds”"),
                          ("sweep_seeds", "99999999999999999999", "“Seeds”")):
        at.text_input(key="sweep_grid").set_value("1, inf")
        at.text_input(key="sweep_seeds").set_value("0")
        at.text_input(key=key).set_value(bad).run()
        assert_clean(at)
        assert any(box in e and "Federate" not in e for e in errors(at)), (bad, errors(at))
    at.text_input(key="sweep_grid").set_value("1, inf")
    at.text_input(key="sweep_seeds").set_value("0, 1")
    at.multiselect(key="sweep_refs").set_value(["individual", "popularity"])
    at.run()
    at.button(key="sweep_run").click().run()
    assert_clean(at)
    doc = at.session_state["sweep"]["doc"]
    cfg = dash.default_config(clinic).replace(simulation=True)
    ref = sweep(clinic, cfg, [1.0, math.inf], [0, 1], ["individual", "popularity"])
    got = {(r["method"], r["epsilon"]): r["mean"] for r in sweep_table(doc, "mar")}
    want = {(r["method"], r["epsilon"]): r["mean"] for r in sweep_table(ref, "mar")}
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], abs=1e-12)
    assert len(at.get("plotly_chart")) >= 2
    assert any("Crossing ε" in m.value for m in at.markdown)
    # the command line of the sweep just run: its runs (simulation noise too), and the headline metric
    at.radio(key="sweep_metric").set_value("ndcg_at_10").run()
    args, _, cli_cfg = cli_sweep(sweep_command_of(at))
    assert args.metric == "ndcg_at_10" and cli_cfg.simulation
    assert dash.sweep_configs(cli_cfg, args.epsilons, args.seeds, args.references) == \
        dash.sweep_configs(cfg, [1.0, math.inf], [0, 1], ["individual", "popularity"])
    # a revisit shows the cached sweep without pressing the button
    at.switch_page("pages/1_Data.py").run()
    at.switch_page("pages/5_Trade-off.py").run()
    assert any("Crossing ε" in m.value for m in at.markdown)
    # the users planner: the engine's points and the engine's sentence, with the mode
    from dpfed_core.evaluation import planner

    real = planner.users_needed
    monkeypatch.setattr(planner, "users_needed",  # two small sizes keep the test short
                        lambda cfg, **kw: real(cfg, **{**kw, "users_grid": (4, 12), "seeds": (0, 1)}))
    at.button(key="sweep_sub_run").click().run()
    assert_clean(at)
    sub = at.session_state["sweep_sub_result"]
    assert [p["users"] for p in sub["points"]] == [4.0, 12.0]
    table = [d.value for d in at.dataframe if "advantage over local" in getattr(d.value, "columns", [])]
    assert table and list(table[0]["users per entity"]) == [4.0, 12.0]
    want = dash.users_to_pay_sentence(dash.users_to_pay(sub["points"]), dash.format_epsilon(sub["eps"]), sub["mode"])
    assert any(m.value == want for m in at.markdown) and "observation mode" in want
    assert not any("too few grid" in w.value for w in at.warning)  # ε = 1: proved against the server
    # a point whose shares carry too few grid steps of noise is named, as the CLI names it
    at.text_input(key="sweep_grid").set_value("1, 300")
    at.text_input(key="sweep_seeds").set_value("0")
    at.multiselect(key="sweep_refs").set_value([])
    at.run()
    at.button(key="sweep_run").click().run()
    assert_clean(at)
    doc = at.session_state["sweep"]["doc"]
    assert doc["unproved_epsilons"] == [300.0]
    assert [w.value for w in at.warning if "too few grid" in w.value] == [dash.escape_md(dash.unproved_sweep_text(doc))]


# ------------------------------------------------------------------------------ bad input
GOOD_ROWS = [(f"u{e}{i}", f"item{j}", (i + j) % 5 + 1, e) for e in "ABC" for i in range(12)
             for j in range(6) if (i + 2 * j) % 3]


def csv_bytes(rows, header="user,item,value,entity") -> bytes:
    return (header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n").encode()


def upload(data: bytes, name: str = "table.csv") -> AppTest:
    at = app("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    kinds = [w for w in at.selectbox if w.key == "map_kind"]
    if kinds and kinds[0].value is None:  # a column named "value" does not say its kind
        kinds[0].set_value("ratings").run()
    return at


def build(at: AppTest) -> AppTest:
    at.button(key="build_upload").click().run()
    return at


def test_good_upload_builds_entities_and_is_not_altered():
    data = csv_bytes(GOOD_ROWS)
    at = build(upload(data))
    assert_clean(at)
    assert not errors(at), errors(at)
    table = at.dataframe[-1].value
    assert list(table["entity"]) == ["A", "B", "C"]
    assert at.session_state["upload"].getvalue() == data  # the upload itself is untouched
    assert at.session_state["dataset_source"] == "upload table.csv"


def test_upload_with_derived_federation_key():
    rows = [(u, i, v, f"{ '19' if e == 'A' else '27' if e == 'B' else '35'}{n % 10}00")
            for n, (u, i, v, e) in enumerate(GOOD_ROWS)]
    # a ZIP-like column: the entity is its first digit; users keep one ZIP each
    zips = {}
    rows = [(u, i, v, zips.setdefault(u, z)) for u, i, v, z in rows]
    at = upload(csv_bytes(rows, "user,item,value,zip"))
    at.selectbox(key="map_entity").set_value("zip")
    at.selectbox(key="map_transform").set_value("first_digit")
    build(at)
    assert_clean(at)
    assert not errors(at), errors(at)
    assert list(at.dataframe[-1].value["entity"]) == ["1", "2", "3"]
    # the first N characters, N from its box: 19x00 / 27x00 / 35x00 by their first three
    at.selectbox(key="map_transform").set_value("prefix").run()
    at.number_input(key="map_prefix").set_value(3)
    build(at)
    assert_clean(at)
    assert not errors(at), errors(at)
    assert sorted(at.dataframe[-1].value["entity"]) == sorted({z[:3] for z in zips.values()})


def test_malformed_csv():
    at = upload(b'user,item,value,entity\nu1,i1,3,A\nu2,"i2,4,A,extra,fields\nu3,i3,1,B,x,y,z\n')
    assert_clean(at)
    # the quote opened on line 3 is never closed: named with its line, not as a field count
    assert any("line 3: a field opens a double quote" in e and "never closed" in e for e in errors(at)), errors(at)


def test_missing_column():
    at = upload(b"user,item\nu1,i1\nu2,i2\n")
    assert_clean(at)
    assert any("needs at least a user, an item and an entity column" in e for e in errors(at)), errors(at)


def test_text_in_value_column():
    rows = list(GOOD_ROWS)
    rows[7] = (rows[7][0], rows[7][1], "five", rows[7][3])
    at = build(upload(csv_bytes(rows)))
    assert_clean(at)
    msg = " ".join(errors(at))
    assert "'five'" in msg and "value" in msg and "line 9" in msg, msg


def test_entity_with_two_users():
    # a small entity takes part (no rule on a true count decides who takes part);
    # leaving it out is a public declaration made with the "Leave out entities" box
    rows = GOOD_ROWS + [("z1", "item1", 3, "D"), ("z2", "item2", 4, "D")]
    at = build(upload(csv_bytes(rows)))
    assert_clean(at)
    assert not errors(at), errors(at)
    assert list(at.dataframe[-1].value["entity"]) == ["A", "B", "C", "D"]
    at.text_input(key="exclude_entities").set_value("D").run()
    build(at)
    assert not errors(at), errors(at)
    assert list(at.dataframe[-1].value["entity"]) == ["A", "B", "C"]


def test_leaving_out_every_entity_is_named_as_the_cause():
    at = build(upload(csv_bytes(GOOD_ROWS)))
    at.text_input(key="exclude_entities").set_value("A, B, C").run()
    build(at)
    assert_clean(at)
    msg = " ".join(errors(at))
    assert len(at.error) == 1 and "Leave out entities" in msg and "leaves no entity (all 3 are left out)" in msg, msg
    assert "one entity" not in msg and "Entity from column" not in msg, msg


def test_epsilon_not_positive(federated):
    at = federated
    at.switch_page("pages/2_Federate.py").run()
    for bad in ("0", "-1", "abc"):
        at.text_input(key="fed_eps_text").set_value(bad).run()
        assert_clean(at)
        assert any("ε must be a positive number" in e for e in errors(at)), (bad, errors(at))
        assert at.button(key="fed_run").disabled
    at.text_input(key="fed_eps_text").set_value("inf").run()
    assert not errors(at)
    assert not at.button(key="fed_run").disabled


def test_k_larger_than_every_entity(clinic):
    # Non-private prototypes need k ≤ entity size; DP methods treat k as a maximum (no check on
    # the true size, which would leak it).
    at = app("pages/2_Federate.py").run()
    at.selectbox(key="fed_method").set_value("kmeans").run()
    at.number_input(key="fed_k").set_value(5000)
    at.button(key="fed_run").click().run()
    assert_clean(at)
    msg = " ".join(errors(at))
    assert "k (prototypes per entity)" in msg and "5000" in msg and "largest entity" in msg, msg
    assert at.status[0].state == "error"


# ------------------------------------------------------------------------------ real loaders
@pytest.mark.parametrize("source, path_key, button, sub", [
    ("movielens", "ml_path", "load_ml", "ml-100k"),
    ("eicu", "eicu_path", "load_eicu", "eicu-demo"),
])
def test_real_loader_from_path(shared_data, source, path_key, button, sub):
    """The real loaders through the page: the path box (pre-filled when ../shared/data exists)."""
    at = app("pages/1_Data.py").run()
    at.radio(key="data_source").set_value(source).run()
    at.text_input(key=path_key).set_value(str(shared_data / sub))
    at.button(key=button).click().run()
    assert_clean(at)
    assert not errors(at), errors(at)
    assert at.success and at.session_state["dataset"].n_entities >= 2
    # a wrong path is a message, not a traceback
    at.text_input(key=path_key).set_value(str(shared_data / "does-not-exist")).run()
    at.button(key=button).click().run()
    assert_clean(at)
    assert any("does-not-exist" in e for e in errors(at)), errors(at)


def test_advanced_budget_split_reaches_the_engine(clinic):
    """A changed stage share is part of the run's config (and cache key) and shows in the ledger."""
    at = app("pages/2_Federate.py").run()
    # the prototype DP method's stage split (dp-cooccurrence's split is its pop_share parameter)
    at.selectbox(key="fed_method").set_value("dp-gaussian").run()
    shares = dash.budget_split_defaults("dp-gaussian")
    assert shares, "the DP method exposes its default split"
    stage = "search" if "search" in shares else next(iter(shares))
    at.number_input(key=f"fed_split_{stage}").set_value(0.6)
    at.text_input(key="fed_eps_text").set_value("2").run()
    assert at.select_slider(key="fed_eps_slider").value == 2.0  # typed ε moves the slider
    at.button(key="fed_run").click().run()
    assert_clean(at)
    r = at.session_state["run"]
    assert r["config"].epsilon == 2.0
    assert r["config"].prototype_params["split"][stage] == 0.6
    doc, _ = run_method(clinic, r["config"])
    assert r["doc"]["privacy"]["per_stage"] == doc["privacy"]["per_stage"]
    assert r["doc"]["privacy"]["epsilon"] <= 2.0


def test_federate_run_document_reproduces_on_the_cli_and_back(tmp_path):
    """The Run document tab writes the run out as a CLI command line (every setting, the CLI's flags);
    a run document (the CLI's --out) loaded on the page sets its controls; the sidebar names only the
    settings the method uses (no "k ≤" for a method without prototypes)."""
    import json
    import shlex

    at = app("pages/2_Federate.py").run()
    at.toggle(key="fed_simulation").set_value(True).run()
    at.button(key="fed_run").click().run()  # the cached run of the shared fixture, when it ran first
    assert_clean(at)
    cfg = at.session_state["run"]["config"]
    code = [c.value for c in at.tabs[4].code]
    assert code and code[0].startswith("python -m dpfed_core run --data sample:clinic --method dp-cooccurrence")
    argv = shlex.split(code[0])
    for flag, value in (("--epsilon", "3"), ("--max-iter", str(cfg.max_iter)), ("--aggregation", "secure"),
                        ("--rank", str(cfg.rank))):
        assert argv[argv.index(flag) + 1] == value
    assert "--simulation" in argv and "--k" not in argv
    side = dash.settings_line(cfg)  # the sidebar's "Last run" line (AppTest does not expose the sidebar slot)
    assert side.startswith("dp-cooccurrence (secure aggregation), ε = 3") and "k ≤" not in side
    assert "k ≤ 6" in dash.settings_line(cfg.replace(method="dp-prototypes", k=6))
    assert "ε" not in dash.settings_line(cfg.replace(method="kmeans"))
    # the other direction: a CLI document's settings set the page's controls
    doc = {"config": {**cfg.to_dict(), "epsilon": 1.0, "rank": 4, "max_iter": 30, "lam": 0.5}}
    at2 = app("pages/2_Federate.py").run()
    at2.file_uploader(key="fed_settings_doc").set_value(
        ("r.json", json.dumps(doc).encode(), "application/json")).run()
    assert_clean(at2)
    assert at2.session_state["fed_epsilon"] == 1.0 and at2.number_input(key="fed_rank").value == 4
    assert at2.number_input(key="fed_max_iter").value == 30 and at2.number_input(key="fed_lam").value == 0.5
    assert any("Settings of r.json loaded" in s.value for s in at2.success)
    # a CLI seed the page's control cannot hold is refused by name; the controls keep their values
    at2.file_uploader(key="fed_settings_doc").set_value(
        ("big.json", json.dumps({"config": {**doc["config"], "seed": 2**60}}).encode(), "application/json")).run()
    shown = [e.value.replace("\\", "") for e in at2.error]  # as rendered: the page escapes Markdown
    assert any("Seed (split and method) 1152921504606846976" in e for e in shown), shown
    assert at2.number_input(key="fed_rank").value == 4 and at2.number_input(key="fed_seed").value == cfg.seed
    # a parameter the document leaves out is reset, not kept from the session; settings the page cannot set
    # are named where they differ
    key = f"fed_p_{cfg.method}_max_items"
    at2.session_state[key] = 100
    at2.file_uploader(key="fed_settings_doc").set_value(
        ("t.json", json.dumps({"config": {**doc["config"], "top_n": 25}}).encode(), "application/json")).run()
    assert at2.session_state[key] != 100
    assert any("top_n = 25 (here 10" in w.value for w in at2.warning), [w.value for w in at2.warning]
    # JSON that is no run document is told what it lacks (the engine's error, not "not JSON")
    at2.file_uploader(key="fed_settings_doc").set_value(("c.json", b'{"config": {"rank": 3}}', "application/json")).run()
    assert any("has no 'config' with a 'method'" in e.value for e in at2.error), [e.value for e in at2.error]
    # a value no run can take is the document's, named with the control that holds it, not a field name
    at2.file_uploader(key="fed_settings_doc").set_value(
        ("f.json", json.dumps({"config": {**doc["config"], "test_fraction": 1.5}}).encode(), "application/json")).run()
    shown = [e.value.replace("\\", "") for e in at2.error]
    assert any("the document's settings cannot run here" in e and "1.5" in e
               and "“Test users per entity” (Advanced) on the Federate page" in e for e in shown), shown
    assert at2.number_input(key="fed_rank").value == 4  # the controls keep their values


def test_recommend_says_why_no_list_and_speaks_of_users_off_clinical_data():
    """A model that scores every candidate alike gets a sentence, not an alphabetical list; the
    clinical wording (stays, the disclaimer) only on clinical data."""
    at = app("pages/1_Data.py").run()
    at.selectbox(key="sample_spec").set_value("sample:synthetic").run()
    at.button(key="load_sample").click().run()
    at.switch_page("pages/2_Federate.py").run()
    at.toggle(key="fed_simulation").set_value(True).run()
    at.button(key="fed_run").click().run()
    at.switch_page("pages/4_Recommend.py").run()
    assert_clean(at)
    assert not any("clinical advice" in w.value for w in at.warning)
    assert at.selectbox(key=f"rec_user_{at.selectbox(key='rec_entity').value}").label.startswith("User (")
    mine = [d.value for d in at.dataframe if "why" in getattr(d.value, "columns", [])][0]
    assert all("similar users" in w for w in mine["why"])


def test_a_prototype_method_swept_after_a_secure_run_runs_its_summable_references_as_the_cli_does(clinic):
    """The Federate page's secure aggregation belongs to its summable method: a prototype method swept
    on the Trade-off page sends each entity's release to the server, so its dp-popularity line runs
    without secure aggregation, as `sweep --method dp-gaussian --references dp-popularity` does."""
    at = app().run()
    at.switch_page("pages/2_Federate.py").run()
    at.toggle(key="fed_simulation").set_value(True).run()
    at.button(key="fed_run").click().run()
    assert at.session_state["run"]["config"].aggregation == "secure"
    at.switch_page("pages/5_Trade-off.py").run()
    at.selectbox(key="sweep_method").set_value("dp-gaussian").run()
    at.text_input(key="sweep_grid").set_value("1")
    at.text_input(key="sweep_seeds").set_value("0")
    at.multiselect(key="sweep_refs").set_value(["dp-popularity"]).run()
    at.button(key="sweep_run").click().run()
    assert_clean(at)
    doc = at.session_state["sweep"]["doc"]
    assert doc["config"]["aggregation"] == "none"
    cfg = dash.default_config(clinic, "dp-gaussian").replace(simulation=True, epsilon=1.0)
    assert cfg.aggregation == "none"                      # the CLI's starting point for this method
    ref = sweep(clinic, cfg, [1.0], [0], ["dp-popularity"])
    got = {(r["method"], r["epsilon"]): r["mean"] for r in sweep_table(doc, "mar")}
    want = {(r["method"], r["epsilon"]): r["mean"] for r in sweep_table(ref, "mar")}
    assert got == pytest.approx(want, abs=1e-12)
    assert any("dp-popularity ran without secure aggregation" in c.value and "dp-gaussian sends" in c.value
               for c in at.caption), [c.value for c in at.caption]


@pytest.mark.parametrize("measured_epsilon", [3.0, 0.5])
def test_a_dp_method_after_a_run_that_spent_no_epsilon_gets_the_measured_default_epsilon(clinic, monkeypatch,
                                                                                        measured_epsilon):
    """After a non-private run (a method without ε, or a DP method at ε = ∞) the Trade-off page's method
    starts at the measured default ε the Federate page and the CLI start at, never at ∞ nor at 1."""
    from dpfed_core.evaluation import defaults

    real = defaults.measured_defaults()
    doc = {"defaults": {"method": "dp-cooccurrence", "aggregation": "none", "rank": 5, "delta": 1e-6,
                        **((real or {}).get("defaults") or {}), "epsilon": measured_epsilon}}
    monkeypatch.setattr(defaults, "measured_defaults", lambda path=None: doc)
    for base in (dash.default_config(clinic, "local"), dash.default_config(clinic, "popularity"),
                 dash.default_config(clinic, "dp-cooccurrence").replace(epsilon=math.inf)):
        assert dash.with_method(base, "dp-gaussian").epsilon == measured_epsilon, base.method
        assert dash.default_config(clinic, "dp-gaussian").epsilon == measured_epsilon
    assert dash.with_method(dash.default_config(clinic, "dp-cooccurrence").replace(epsilon=2.0),
                            "dp-gaussian").epsilon == 2.0


def test_another_method_keeps_secure_aggregation_only_where_it_means_something(clinic):
    base = dash.default_config(clinic, "dp-cooccurrence").replace(aggregation="secure", epsilon=3.0)
    assert dash.with_method(base, "dp-gaussian").aggregation == "none"
    assert dash.with_method(base, "dp-popularity").aggregation == "secure"
    assert dash.with_method(base.replace(aggregation="none"), "dp-als").aggregation == "none"
    proto = dash.default_config(clinic, "dp-gaussian")
    measured = dash.measured_defaults()
    assert dash.with_method(proto, "dp-popularity").aggregation == \
        (measured["defaults"]["aggregation"] if measured else "none") == \
        dash.default_config(clinic, "dp-popularity").aggregation
    assert dash.with_method(base, "dp-gaussian").epsilon == 3.0
    assert dash.with_method(dash.default_config(clinic, "local"), "dp-gaussian").epsilon == \
        dash.default_config(clinic, "dp-gaussian").epsilon
    assert dash.trust_model_note("dp-gaussian", "none", ["dp-gaussian", "local"]) is None
    assert "with secure aggregation" in dash.trust_model_note("dp-cooccurrence", "secure",
                                                              ["dp-cooccurrence", "dp-popularity"])


def test_hidden_entries_above_every_users_entries_say_the_largest_value_that_draws_test_users(clinic):
    at = app("pages/2_Federate.py").run()
    at.number_input(key="fed_n_hidden").set_value(1000).run()
    assert_clean(at)
    most = int(np.diff(clinic.X.tocsr().indptr).max())
    # raising the test fraction cannot help here: only the hidden entries can, and by how much is said
    shown = [w.value.replace("\\", "") for w in at.warning]     # as read: Markdown escapes removed
    assert any("undefined:" in w and f"at most {most - 1}" in w.split("undefined:")[1]
               and "Test users per entity" not in w.split("undefined:")[1] for w in shown), shown


def sweep_command_of(at: AppTest) -> str:
    """The Trade-off page's "same sweep on the command line"."""
    lines = [c.value for c in at.code if c.value.startswith("python -m dpfed_core sweep")]
    assert len(lines) == 1, [c.value for c in at.code]
    return lines[0]


def test_tradeoff_prints_the_cli_command_of_the_sweep_it_runs(clinic):
    """Before any Federate run the page sweeps the Federate page's defaults in zero mode; the command it
    prints, read by the CLI's own parser, is every run its button would start, no more and no fewer."""
    import re

    at = app("pages/5_Trade-off.py").run()
    at.selectbox(key="sweep_method").set_value("dp-popularity")
    at.text_input(key="sweep_grid").set_value("0.5, 5, inf")
    at.text_input(key="sweep_seeds").set_value("4, 9")
    at.multiselect(key="sweep_refs").set_value(["local", "central"])
    at.run()
    assert_clean(at)
    args, _, cli_cfg = cli_sweep(sweep_command_of(at))
    assert (args.epsilons, args.seeds, args.references, args.metric) == \
        ([0.5, 5.0, math.inf], [4, 9], ["local", "central"], "mar")
    page = dash.with_method(dash.default_config(clinic).replace(mode="zero"), "dp-popularity")
    runs = dash.sweep_configs(cli_cfg, args.epsilons, args.seeds, args.references)
    assert runs == dash.sweep_configs(page, [0.5, 5.0, math.inf], [4, 9], ["local", "central"])
    assert {r.mode for r in runs} == {"zero"} and not any(r.simulation for r in runs)
    n = int(re.search(r"Run sweep \((\d+) runs", at.button(key="sweep_run").label).group(1))
    assert len(runs) == n


def test_tradeoff_defaults_are_the_cli_sweep_defaults(capsys):
    """The Trade-off page left at its defaults is the CLI's ``sweep`` without flags: the same ε grid,
    seeds and references, so the charge its button states is the one the CLI's dry run prints."""
    from dpfed_core.cli.main import main

    at = app("pages/5_Trade-off.py").run()
    assert_clean(at)
    grid = dash.parse_grid(at.text_input(key="sweep_grid").value)
    seeds = dash.parse_seeds(at.text_input(key="sweep_seeds").value)
    assert main(["sweep", "--data", dash.DEFAULT_SAMPLE, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    planned = next(line for line in printed.splitlines() if line.startswith("planned charge: "))
    assert "ε ∈ {" + ", ".join(f"{e:g}" for e in grid) + "}" in printed, printed
    assert "seeds {" + ", ".join(map(str, seeds)) + "}" in printed, printed
    assert ", ".join(at.multiselect(key="sweep_refs").value) in printed, printed
    assert planned.removeprefix("planned charge: ") in at.button(key="sweep_run").label, (planned, at.button(key="sweep_run").label)


def test_evaluate_runs_a_dp_comparison_of_a_non_private_run_at_the_default_epsilon(clinic):
    """The Evaluate page's DP comparison of a kmeans run (ε = ∞) runs at the default ε, as run --compare
    does, and the page says so before it is charged — never ∞ under a DP method's name."""
    at = app("pages/2_Federate.py").run()
    at.selectbox(key="fed_method").set_value("kmeans").run()
    at.toggle(key="fed_simulation").set_value(True).run()
    at.button(key="fed_run").click().run()
    assert_clean(at)
    at.switch_page("pages/3_Evaluate.py").run()
    at.multiselect(key="eval_methods").set_value(["dp-popularity"]).run()
    want = dash.default_config(clinic, "dp-popularity").epsilon
    captions = " ".join(c.value for c in at.caption)
    assert f"dp-popularity is run at the default ε = {want:g} per entity" in captions, captions
    at.button(key="eval_run").click().run()
    assert_clean(at)
    doc = at.session_state["comparison"]["docs"]["dp-popularity"]
    assert float(doc["privacy"]["epsilon"]) == pytest.approx(want)


def test_a_run_at_top_n_5_is_labelled_at_5_on_every_dashboard_table(tmp_path, monkeypatch):
    """A command-line run at --top-n 5 measured precision@5 and NDCG@5: the History page's summary of it
    headlines them, and the dashboard's tables, choices and tooltips label them @5, as the report does —
    never left out for not being @10, never labelled @10."""
    import pandas as pd

    from dpfed_core.cli import main

    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    assert main(["run", "--data", "sample:clinic", "--method", "popularity", "--top-n", "5"]) == 0
    at = app("pages/8_History.py").run()
    assert_clean(at)
    at.button(key="hist_open").click().run()
    assert_clean(at)
    (summary,) = [m.value for m in at.markdown if m.value.startswith("popularity, in one process")]
    assert re.search(r"MAR \d\.\d{4}, NDCG@5 \d\.\d{4}, precision@5 \d\.\d{4}$", summary), summary
    assert [k for k, _, _ in dash.headline_metrics("observed", 5)] == ["test_rmse", "mar", "ndcg_at_5"]
    (_, label, help_) = dash.headline_metrics("zero", 5)[2]
    assert (label, help_) == ("precision@5", "Share of the 5 recommendations that were hidden items.")
    frame = pd.DataFrame(columns=["method", "entity", "mar", "precision_at_5", "recall_at_5", "ndcg_at_5"])
    assert dash.metric_columns(frame) == ["mar", "precision_at_5", "recall_at_5", "ndcg_at_5"]
    assert [dash.metric_at(m) for m in dash.metric_columns(frame)][1:] == ["precision@5", "recall@5", "NDCG@5"]
    assert dash.metric_at("precision_at_5", dash.METRIC_SHORT) == "P@5"
