"""Dashboard: defaults and advice from one measurement, in-place validation, one
colour per method, a run download without the server's paths, and the public report."""
from __future__ import annotations

import html
import json
import math
import re

import pytest

from dpfed_core.data.loaders import load_data
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.verdicts import sweep_verdict_sentence
from dpfed_core.ui import defaults as dd
from dpfed_core.ui import engine as dash


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def _measurement(tmp_path, beats: bool):
    setting = {"method": "dp-cooccurrence", "aggregation": "secure", "rank": 4, "epsilon": 3.0,
               "mar_mean": 0.140 if beats else 0.160, "mar_sd": 0.01, "local_mar_mean": 0.150,
               "individual_mar_mean": 0.170, "H": 30, "seeds": 3, "mode": "zero", "metric": "mar",
               "verdict": {"local": {"better": 9 if beats else 2, "worse": 1 if beats else 8, "tie": 20,
                                     "word": "better" if beats else "worse"},
                           "individual": {"better": 12, "worse": 0, "tie": 18, "word": "better"}},
               "single_run_words": {"local": ["better"] * 3, "individual": ["better"] * 3}}
    doc = {"data": "sample:clinic", "entities": 30, "seeds": [0, 1, 2], "mode": "zero", "interactions": 1000,
           "defaults": {"method": "dp-cooccurrence", "aggregation": "secure", "rank": 4, "epsilon": 3.0,
                        "delta": 1e-6, "beats_local": beats, "reason": "the test's rule"},
           "settings": [setting], "cpu_seconds_per_run": {"dp-cooccurrence": {"median": 2.0, "max": 3.0, "n": 3}}}
    p = tmp_path / f"defaults_{beats}.json"
    p.write_text(json.dumps(doc))
    return p


def test_defaults_and_advice_come_from_the_measurement(tmp_path, clinic):
    p = _measurement(tmp_path, beats=True)
    cfg = dd.default_config(clinic, path=p)
    assert (cfg.method, cfg.aggregation, cfg.rank, cfg.epsilon, cfg.mode) == ("dp-cooccurrence", "secure", 4, 3.0,
                                                                              "zero")
    text = dd.advice_text(p)
    # the advice's verdict is the sweep verdict sentence of the same numbers: they cannot disagree
    assert sweep_verdict_sentence(dd.default_verdict(dd.measured_defaults(p))) in text
    assert "better than each entity alone" in text and "rank 4" in text and "ε = 3" in text
    assert "0.1400" in text and "0.1500" in text


def test_the_advice_quotes_the_measured_setting_at_the_defaults_epsilon(tmp_path):
    """The measurement holds the same method, aggregation and rank at several ε: the advice quotes the
    one at the defaults' ε, not another ε's numbers."""
    p = _measurement(tmp_path, beats=True)
    doc = json.loads(p.read_text())
    other = {**doc["settings"][0], "epsilon": 1.0, "mar_mean": 0.190, "local_mar_mean": 0.180}
    doc["settings"] = [other, doc["settings"][0]]
    p.write_text(json.dumps(doc))
    assert dd.chosen_setting(dd.measured_defaults(p))["epsilon"] == 3.0
    text = dd.advice_text(p)
    assert "0.1400" in text and "0.1500" in text and "0.1900" not in text


def test_advice_is_honest_when_nothing_beats_local(tmp_path):
    text = dd.advice_text(_measurement(tmp_path, beats=False))
    assert "No measured DP setting beat the entities alone" in text and "not a win" in text


def test_without_a_measurement_nothing_is_invented(tmp_path, clinic):
    missing = tmp_path / "none.json"
    assert dd.measured_defaults(missing) is None
    assert "No measurement" in dd.advice_text(missing)
    cfg = dd.default_config(clinic, path=missing)
    assert cfg.aggregation == "none" and cfg.rank == 5


def test_committed_measurement_defaults_are_not_worse_than_local():
    doc = dd.measured_defaults()
    if doc is None:
        pytest.skip("bench/results/dashboard_defaults.json not committed")
    s = dd.chosen_setting(doc)
    assert s is not None
    qualifying = [x for x in doc["settings"] if x["verdict"]["local"]["word"] != "worse"]
    if qualifying:  # the verdict must not be "worse" with the defaults if any measured setting is not
        assert s["verdict"]["local"]["word"] != "worse"
    assert doc["defaults"]["beats_local"] == (s["mar_mean"] <= s["local_mar_mean"]
                                              and s["verdict"]["local"]["word"] != "worse")


def test_k_and_rank_validated_in_place(clinic):
    assert dash.check_k_rank(5, 5, clinic) == []
    assert dash.check_k_rank(None, 5, clinic) == []  # k unused by the method: not checked
    assert "“k (prototypes per entity)” must be a whole number from 1" in dash.check_k_rank(0, 5, clinic)[0]
    msg = dash.check_k_rank(5, 10_000, clinic)
    assert len(msg) == 1 and "rank ℓ" in msg[0] and "10000" in msg[0]
    assert "143 items" in dash.check_k_rank(5, 150, clinic)[0]
    # the CLI's limit: the smaller of 1,000 and the items (a rank of 300 on 671 items is run by both)
    from dpfed_core.config import MAX_RANK

    assert MAX_RANK == 1000 and dash.check_k_rank(5, 300) == [] and dash.check_k_rank(5, 1000) == []
    assert "the smaller of 1,000 and the data's 143 items" in dash.check_k_rank(5, 150, clinic)[0]


def test_one_distinct_colour_per_registered_method():
    from dpfed_core.reporting.plots import _EXTRA, METHOD_COLORS, method_color

    import example_method  # noqa: F401  (a method registered outside the map: its colour is derived)

    methods = list(dash.method_catalogue()["method"])
    assert len(methods) >= 20 and example_method.NAME in methods
    colours = [method_color(m).lower() for m in methods]
    assert len(set(colours)) == len(colours), sorted(zip(colours, methods))
    listed = {c.lower() for c in METHOD_COLORS.values()}
    assert len(listed) == len(METHOD_COLORS)  # the map itself gives no two methods one colour
    for m in methods:
        if m not in METHOD_COLORS:  # derived from the fixed palette, never a built-in method's colour
            assert method_color(m) in _EXTRA and method_color(m).lower() not in listed, m
    assert method_color("some-new-method") == method_color("some-new-method")
    assert method_color("some-new-method").lower() not in listed


def test_run_download_carries_no_absolute_store_path():
    doc = {"odometer": {"store": "/home/someone/.local/share/dpfed/budget.sqlite", "dataset_key": "k"}, "x": 1}
    out = dash.shareable_document(doc)
    assert out["odometer"]["store"] == "budget.sqlite" and out["x"] == 1
    assert doc["odometer"]["store"].startswith("/home")  # the session's document is not changed
    assert "/home" not in json.dumps(out)


def test_undefined_metric_shown_as_no_test_users():
    import pandas as pd

    wide = pd.DataFrame({"dp": [0.1, math.nan]}, index=["A", "B"])
    out = dash.undefined_as_words(wide)
    assert out.loc["A", "dp"] == "0.1000" and out.loc["B", "dp"] == "no test users"


def test_public_report_has_no_exact_count_and_no_user_id():
    from report_docs import make_docs

    from dpfed_core.reporting import report as rep

    docs = make_docs()
    run = docs["run"]
    # distinctive counts, so that finding one in the text can only mean it was printed
    fake = {"clinic A": (9973, 1997, 4409), "clinic B": (9967, 1993, 4421)}
    for e in run["entities"]:
        e["n_users"], e["n_test_users"], _ = fake[e["name"]]
    summary = [{**s, "users": fake[s["entity"]][0], "interactions": fake[s["entity"]][2]}
               for s in docs["dataset"].summary()]
    kw = dict(sweep_doc=docs["sweep"], audit_doc=docs["audit"], data_summary=summary, generated="x")
    full = rep.build_report(run, **kw)
    public = rep.build_report(run, public=True, **kw)
    targets = [t["name"] for t in docs["audit"]["targets"]]

    def text(page: str) -> str:  # what a reader sees: the markup without the inline plotly.js
        return re.sub(r"<script type='text/javascript'>.*?</script>", "", page, count=1, flags=re.S)

    def numbers(page: str) -> str:  # the text without hex digests (data keys, hashes: any digits by chance)
        return re.sub(r"\b[0-9a-f]{16,}\b", "#", text(page))

    for n in (c for trio in fake.values() for c in trio):
        assert str(n) in text(full) or f"{n:,}" in text(full)
        assert str(n) not in numbers(public) and f"{n:,}" not in numbers(public)
    for t in map(html.escape, targets):  # target users as the report prints them
        assert t in text(full) and t not in text(public)
    assert "public version" in public and "withheld" in public
    # both open offline: one inline plotly.js, no external resource in the markup
    for page in (full, public):
        assert page.count("<script type='text/javascript'>") == 1
        assert not re.search(r"""(src|href)\s*=\s*['"]https?://""", text(page))
    # "what is released" comes from the message log of this run
    scope = re.search(r"<section id='scope'.*?</section>", public, re.S).group(0)
    contents = {m["content"] for m in run["messages"]}
    assert all(c in scope for c in contents)


def test_data_page_joins_user_attributes_and_federates_by_occupation():
    """U.data (header-less, tab-separated) + u.user (header-less, |-separated) from the
    browser; the entity taken from the attribute table's occupation column."""
    from test_app_pages import app
    from test_upload import U_DATA, U_USER

    at = app("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("u.data", U_DATA.encode(), "text/plain")).run()
    assert at.selectbox(key="map_user").value == "user id" and at.selectbox(key="map_item").value == "item id"
    assert at.selectbox(key="map_value").value == "rating"
    assert any("Recognised as **MovieLens 100K ratings**" in i.value for i in at.info)
    at.file_uploader(key="upload_attrs").set_value(("u.user", U_USER.encode(), "text/plain")).run()
    assert at.selectbox(key="map_attr_user").value == "user id"
    # the uploads stay in the session when the user leaves the page and comes back
    at.switch_page("pages/2_Federate.py").run()
    at.switch_page("pages/1_Data.py").run()
    assert any("Using **u.data**, uploaded earlier" in c.value for c in at.caption)
    assert any("Using **u.user**, uploaded earlier" in c.value for c in at.caption)
    at.selectbox(key="map_entity").set_value("attribute: occupation").run()
    at.selectbox(key="map_kind").set_value("ratings").run()
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert sorted(ds.entity_names) == ["other", "technician", "writer"] and ds.n_users == 4
    assert at.session_state["dataset_source"] == "upload u.data + u.user"
    assert at.session_state["dataset_cli"] is None  # a user-attribute join has no CLI flag to reproduce it
    # the Data page remembers the chosen source on return
    at.switch_page("pages/3_Evaluate.py").run()
    at.switch_page("pages/1_Data.py").run()
    assert at.radio(key="data_source").value == "upload"


def test_federate_epsilon_is_one_value_and_out_of_range_disables_run():
    """The ε slider and the typed ε are one value (one session-state key), and k = 0 or rank = 10000
    disables Run with a visible message — in the page itself, without a browser."""
    from test_app_pages import app

    at = app("pages/2_Federate.py").run()
    assert not at.exception
    run = at.button(key="fed_run")
    assert not run.disabled
    assert at.session_state["fed_epsilon"] == dash.default_config(at.session_state["dataset"]).epsilon
    at.text_input(key="fed_eps_text").set_value("0.3").run()
    assert at.session_state["fed_epsilon"] == 0.3 and at.select_slider(key="fed_eps_slider").value == 0.3
    at.select_slider(key="fed_eps_slider").set_value(10.0).run()
    assert at.session_state["fed_epsilon"] == 10.0 and at.text_input(key="fed_eps_text").value == "10"
    at.text_input(key="fed_eps_text").set_value("-1").run()
    assert any("ε must be a positive number" in e.value for e in at.error)
    for bad in ("0", "-1"):  # the box typed in is named, as for an unreadable or too large ε
        at.text_input(key="fed_eps_text").set_value(bad).run()
        assert any(e.value.startswith("“or type ε”") and "ε must be a positive number" in e.value
                   for e in at.error), \
            [e.value for e in at.error]
    # the range an error names is the range accepted: a large ε is taken with a warning, past the limit refused
    with pytest.raises(ConfigError, match=r"a value up to 10000 "):
        dash.check_budget("1e12", "1e-6", eps_control="“or type ε”")
    assert dash.check_budget("500", "1e-6")[2] and dash.check_budget("10000", "1e-6")[0] == 10000.0
    assert at.button(key="fed_run").disabled
    at.text_input(key="fed_eps_text").set_value("1").run()
    at.number_input(key="fed_rank").set_value(10_000).run()
    assert any("“rank ℓ (latent factors)” must be a whole number" in e.value for e in at.error)
    assert at.button(key="fed_run").disabled
    at.number_input(key="fed_rank").set_value(5).run()
    at.selectbox(key="fed_method").set_value("dp-gaussian").run()
    at.number_input(key="fed_k").set_value(0).run()
    assert any("“k (prototypes per entity)” must be a whole number" in e.value for e in at.error)
    assert at.button(key="fed_run").disabled
    at.number_input(key="fed_k").set_value(3).run()
    assert not at.error and not at.button(key="fed_run").disabled
    # δ = 0 for a Gaussian method is named under the δ box before a run, never offered as "spends ε ≈ 0"
    at.selectbox(key="fed_method").set_value("dp-cooccurrence").run()
    at.text_input(key="fed_delta").set_value("0").run()
    assert any(e.value.startswith("“δ”") and "dp-cooccurrence adds Gaussian noise" in e.value and "needs δ" in e.value
               for e in at.error), [e.value for e in at.error]
    assert at.button(key="fed_run").disabled
    at.text_input(key="fed_delta").set_value("1e-6").run()
    assert not at.error
    # a split that gives no entity a test user is said before the run, which stays possible (it recommends)
    at.number_input(key="fed_n_hidden").set_value(1000).run()
    assert any("no entity will have a test user" in w.value and "Hidden entries per test user" in w.value
               for w in at.warning), [w.value for w in at.warning]
    assert not at.button(key="fed_run").disabled
    at.number_input(key="fed_n_hidden").set_value(5).run()
    assert not any("test user" in w.value for w in at.warning)


def test_signals_match_what_happened():
    """Outcome icons, the spend line's reason, the duplicates wording and the headline metrics."""
    from dpfed_core.data.long_table import DUPLICATE_WORDS, fixed_duplicate_rule
    from dpfed_core.evaluation.budget import spend_reason
    from dpfed_core.ui.history import planned_charge_text
    from dpfed_core.ui.tables import headline_metrics, run_outcome

    base = {"privacy": {"label": "(3, 1e-06)-DP per user"}, "warnings": []}
    assert run_outcome(base, 2.0) == ("complete", "Done in 2 s — (3, 1e-06)-DP per user")
    partial = {**base, "warnings": [{"code": "no-test-users", "text": "1 entity has no test users"}]}
    state, label = run_outcome(partial, 280.0)
    assert state == "complete" and "1 warning, see below" in label and "4 min 40 s" in label  # a success
    state, label = run_outcome({**base, "warnings": [{"code": "empty-catalogue", "text": "x"}]}, 1.0)
    assert state == "error" and "learned nothing" in label
    # the spend line says why it is not the slider's ε, and a cached result spends nothing
    from dpfed_core.privacy.odometer import PlannedRelease

    plan = [PlannedRelease("run", "dp-cooccurrence", 3.0, 1e-6, {"a": (3.0, 1e-6)})]
    p = {"text": "spends ε ≈ 1.79 per entity (no cap set)", "spend": 1.79, "after": 7.2, "simulation": False,
         "identity": "same people as the stored dataset 'clinic' (ab12, similarity 0.98 of their value profiles)"}
    line = spend_reason(p, plan)
    assert "recognised as a re-export" in line and "less than the requested ε = 3" in line and "5.41" in line
    fresh = spend_reason({**p, "spend": 3.0, "after": 3.0, "identity": ""}, plan)
    assert fresh == p["text"]  # nothing to explain on a first release
    assert "nothing new spent" in planned_charge_text(None, plan, cached=True)
    # the duplicates control and the loader's note use the same words
    assert fixed_duplicate_rule("counts") == "sum" and fixed_duplicate_rule("ratings") is None
    assert DUPLICATE_WORDS["last"] == "keep the last" and "add them up" in DUPLICATE_WORDS["sum"]
    # a ranking (zero-mode) model's RMSE is never headlined
    assert "test_rmse" not in [k for k, *_ in headline_metrics("zero")]
    assert [k for k, *_ in headline_metrics("observed")][0] == "test_rmse"


def test_loader_note_on_repeated_rows_says_what_the_control_says():
    import pandas as pd

    from dpfed_core.data.long_table import DUPLICATE_WORDS, load_long_table

    t = pd.DataFrame({"u": ["a", "a", "b"], "i": ["x", "x", "y"], "v": [2, 3, 1], "h": ["H", "H", "K"]})
    for kind, how in (("counts", "sum"), ("ratings", "last"), ("ratings", "mean")):
        ds = load_long_table(t, user_col="u", item_col="i", value_col="v", entity_col="h", value_kind=kind,
                             value_max=5, entities_from_data=True, duplicates=how)
        assert any(f"merged 1 repeated (user, item) rows: {DUPLICATE_WORDS[how]}" in n for n in ds.notes), ds.notes


def test_observed_mode_explains_why_central_ranks_worst():
    from dpfed_core.evaluation.defaults import observed_ranking_note

    docs = {"local": {"overall": {"mar": 0.127}}, "central": {"overall": {"mar": 0.283}}}
    note = observed_ranking_note(docs, "observed")
    assert "central MF ranks worst" in note and "zero mode" in note
    assert "(MAR 0.283, the highest of the 2 compared)" in note  # this run's figures, no other data's
    assert "ranks worst" not in observed_ranking_note({**docs, "central": {"overall": {"mar": 0.1}}}, "observed")
    assert observed_ranking_note(docs, "zero") is None


def test_a_flat_list_is_no_ranking_and_evidence_counts_similar_rows():
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.data.split import Split
    from dpfed_core.ui.tables import cannot_rank, similar_evidence

    assert "learned nothing" in cannot_rank(np.zeros(10), "individual model", "stay")
    assert "same score" in cannot_rank(np.full(5, 0.3), "individual model", "stay")
    assert cannot_rank(np.array([0.3, 0.2, 0.0]), "individual model") is None
    # user 0 has items {0, 1}; users 1 and 2 are like it (share item 0), user 3 shares nothing;
    # item 2 is had by user 1 only, item 3 by users 1 and 2
    X = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 0, 1, 1], [1, 0, 0, 1], [0, 0, 0, 1.0]]))
    ds = FederatedDataset.from_parts(X, np.array(["A"] * 4), value_kind="counts", value_max=5, name="t")
    split = Split.of(X, sp.csr_matrix(X.shape), np.array([], dtype=int))
    words = similar_evidence(ds, split, "A", ds.user_ids[0], [2, 3], k=40)
    assert words == ["seen with 1 of 2 similar users", "seen with 2 of 2 similar users"]


def test_the_spend_line_gives_the_composition_reason_only_for_one_plan_after_an_earlier_spend():
    from dpfed_core.privacy.odometer import PlannedRelease
    from dpfed_core.evaluation.budget import spend_reason

    plan = [PlannedRelease("run", "dp-cooccurrence", 3.0, 1e-6, {"a": (3.0, 1e-6)})]
    first = {"text": "spends ε ≈ 2.5 per entity", "spend": 2.5, "after": 2.5, "simulation": False}
    assert spend_reason(first, plan) == first["text"]  # nothing spent before: no composition to explain
    later = {**first, "after": 4.0}
    assert "composes with the ε ≈ 1.5 already spent" in spend_reason(later, plan)
    # entities spent unequally: the already-spent ε is the one of the entity that ends highest (1.394 after
    # adding 0.474 to its 0.92), not its total less a fresh entity's larger increase (1.394 − 0.993)
    unequal = {**first, "spend": 0.993, "after": 1.394, "binding_spend": 0.474}
    # and the increase said is that entity's own (0.474), not the fresh entity's 0.993 the line's spend gives
    assert ("the most-spent entity adds less, ε ≈ 0.474, because it composes with the ε ≈ 0.92 it has already "
            "spent") in spend_reason(unequal, plan)
    # several plans (a run with its comparison) request no single ε to compare the spend with
    assert spend_reason(later, plan + [PlannedRelease("run", "dp-popularity", 1.0, 1e-6, {"a": (1.0, 1e-6)})]) \
        == first["text"]


def test_a_runs_settings_line_names_only_what_its_method_uses_and_its_controls_come_back():
    from dpfed_core.config import RunConfig

    assert dd.settings_line(RunConfig(method="kmeans", k=4, rank=3, seed=1)) == "kmeans, k ≤ 4, rank = 3, seed = 1"
    secure = RunConfig(method="dp-cooccurrence", epsilon=3.0, aggregation="secure", k=4, rank=3, seed=1)
    assert dd.settings_line(secure) == "dp-cooccurrence (secure aggregation), ε = 3, rank = 3, seed = 1"
    assert dd.settings_line(RunConfig(method="dp-prototypes", epsilon=1.0, k=6, rank=3, seed=1)) == (
        "dp-prototypes, ε = 1, k ≤ 6, rank = 3, seed = 1")
    assert dd.widget_state(secure.to_dict())["fed_secure"] is True
    assert dd.widget_state(secure.replace(aggregation="none").to_dict())["fed_secure"] is False


def test_a_loaded_run_document_sets_every_parameter_it_leaves_out_to_its_default():
    """A parameter or a budget share the document leaves out must not keep what the session had set:
    the run would differ from the document's without a word. A stage the method lacks is refused, and
    the settings the page cannot set are named where they differ."""
    from dpfed_core.config import RunConfig
    from dpfed_core.errors import ConfigError
    from dpfed_core.methods import METHODS

    state = dd.widget_state(RunConfig(method="dp-cooccurrence", epsilon=1.0).to_dict())
    for p in METHODS["dp-cooccurrence"].parameters:
        assert f"fed_p_dp-cooccurrence_{p.name}" in state
    assert state["fed_p_dp-cooccurrence_max_items"] == {p.name: p for p in
                                                        METHODS["dp-cooccurrence"].parameters}["max_items"].default
    proto = dd.widget_state(RunConfig(method="dp-prototypes", epsilon=1.0).to_dict())
    assert {k for k in proto if k.startswith("fed_split_")}  # every stage, at its default share
    with pytest.raises(ConfigError, match=r"budget split names 'prototypes', not a stage of dp-prototypes"):
        dd.widget_state(RunConfig(method="dp-prototypes", epsilon=1.0,
                                  prototype_params={"split": {"prototypes": 0.7}}).to_dict())
    assert dd.settings_not_loaded(RunConfig(top_n=25).to_dict()) == [
        "top_n = 25 (here 10: the metrics' N (CLI --top-n))"]
    assert dd.settings_not_loaded(RunConfig().to_dict()) == []


def test_a_run_document_beyond_the_pages_controls_is_refused_by_name_not_loaded_as_their_lowest():
    """A number input given a value outside its range shows its lowest without a word: a CLI run with
    seed 5,000,000,000 or 10,000 iterations would load as seed 0 or 1 iteration and be a different run."""
    from dpfed_core.config import RunConfig
    from dpfed_core.errors import ConfigError

    cfg = RunConfig(method="dp-cooccurrence", epsilon=3.0, seed=5_000_000_000, max_iter=10_000, lam=5000.0)
    state = dd.widget_state(cfg.to_dict())  # within the page's ranges, which reach as far as the engine here
    assert (state["fed_seed"], state["fed_max_iter"], state["fed_lam"]) == (5_000_000_000, 10_000, 5000.0)
    with pytest.raises(ConfigError, match=r"the document's Seed \(split and method\) 9223372036854775807 \(it "
                                          r"takes 0–9007199254740991\); Test users per entity 0\.995 \(it takes 0\.01–0\.99\) "
                                          r"lie beyond this page's control"):
        dd.widget_state(cfg.replace(seed=2**63 - 1, test_fraction=0.995).to_dict())
    for key, (label, lo, hi) in dd.CONTROL_RANGES.items():
        assert lo <= dd.widget_state(RunConfig().to_dict())[key] <= hi, label


def test_the_trade_off_page_says_before_its_button_that_no_entity_will_have_a_test_user(clinic):
    """A sweep on settings whose split gives no entity a test user is charged for points with no metric:
    the page says so before the button, as the Federate page does before a run."""
    from test_app_pages import app

    from dpfed_core.ui import widgets as ui

    at = app("pages/5_Trade-off.py").run()  # loads the sample (a new dataset clears the run's settings)
    assert not any("test user" in w.value for w in at.warning)
    at.session_state[ui.CONFIG] = dash.default_config(clinic).replace(n_hidden=1000)  # as a Federate run sets it
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("no entity will have a test user" in w.value and "Hidden entries per test user" in w.value
               for w in at.warning), [w.value for w in at.warning]
    at.session_state[ui.CONFIG] = dash.default_config(clinic)
    at.run()
    assert not any("test user" in w.value for w in at.warning)


def test_the_advice_quotes_the_measurement_only_on_the_measured_data_read_as_measured(tmp_path):
    """The sample read with loader options of its own (another value column, a subset) is other data: the
    advice names where the defaults were measured and quotes none of the sample's numbers as these data's;
    the sample read as measured gets them."""
    p = _measurement(tmp_path, beats=True)
    other = dd.advice_text(p, data=("sample:clinic", {"value_kind": "implicit"}))
    assert other.startswith("The defaults (dp-cooccurrence with secure aggregation, rank 4, ε = 3) were measured on "
                            "sample:clinic (30 entities), not on the data loaded here"), other
    assert "0.1400" not in other and "0.1500" not in other
    assert "0.1400" in dd.advice_text(p, data=("sample:clinic", {}))
    assert "not on the data loaded here" in dd.advice_text(p, data=("upload:x.csv", {}))


def test_an_epsilon_below_the_request_is_explained_by_the_accountant_that_composed_it():
    """A run whose stages compose by zCDP states that as the reason its ε is below the request; one composed by
    basic composition points to its notes for the stage that did not spend."""
    doc = {"privacy": {"requested_epsilon": 1.0, "accountant": {"within_run": "zCDP (ρ adds up), converted at δ"}},
           "notes": []}
    assert dash.epsilon_below_request(doc) == "of ε = 1 requested: its stages compose by zCDP to less than their sum"
    basic = {**doc, "privacy": {**doc["privacy"], "accountant": {"within_run": "basic composition (ε and δ add up)"}}}
    assert dash.epsilon_below_request(basic) == "of ε = 1 requested; the rest was not spent (the run's notes say why)"


def _defaults_file(tmp_path, name, **changes):
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps({"defaults": {"method": "dp-cooccurrence", "aggregation": "secure", "rank": 4,
                                          "epsilon": 3.0, "delta": 2e-6, **changes}}))
    return p


def test_every_setting_of_a_default_run_is_the_measurements_or_its_stated_constant(tmp_path, clinic):
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.evaluation import defaults as ed

    p = _defaults_file(tmp_path, "measured")
    cfg = ed.default_config(clinic, path=p)
    assert (cfg.method, cfg.epsilon, cfg.delta, cfg.rank, cfg.aggregation) == ("dp-cooccurrence", 3.0, 2e-6, 4, "secure")
    assert (cfg.k, cfg.lam, cfg.seed, cfg.max_iter, cfg.mode) == (10, 0.1, 0, 100, "zero")
    # a method that spends no ε runs at ∞ whatever was measured; a prototype method never runs secure aggregation
    local = ed.default_config(clinic, "local", path=p)
    assert math.isinf(local.epsilon) and local.aggregation == "none" and local.rank == 4
    proto = ed.default_config(clinic, "dp-gaussian", path=p)
    assert (proto.epsilon, proto.aggregation, proto.k) == (3.0, "none", 10)
    assert ed.default_config(clinic, "dp-popularity", path=p).aggregation == "secure"
    assert math.isinf(ed.default_config(clinic, path=_defaults_file(tmp_path, "inf", epsilon="inf")).epsilon)
    # a measured method this registry does not know is not run: the recommended one is
    assert ed.default_method(_defaults_file(tmp_path, "plugin", method="no-such-method")) == ed.RECOMMENDED_METHOD
    assert ed.default_method(_defaults_file(tmp_path, "als", method="dp-als")) == "dp-als"
    # a file whose defaults are not a mapping is no measurement: the plain defaults, nothing claimed
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"defaults": "dp-als"}))
    assert ed.measured_defaults(bad) is None
    plain = ed.default_config(clinic, path=bad)
    assert (plain.method, plain.epsilon, plain.delta, plain.rank, plain.aggregation) == (
        "dp-cooccurrence", 1.0, 1e-6, 5, "none")
    ratings = FederatedDataset.from_parts(sp.csr_matrix(np.array([[4.0, 0], [0, 5.0]])), np.array(["A", "B"]),
                                          value_kind="ratings", value_max=5)
    assert ed.default_config(ratings, path=p).mode == "observed"


def test_the_trust_note_sweep_mode_and_method_words_follow_the_runs_method():
    from dpfed_core.evaluation.defaults import method_words, observed_ranking_note, sweep_mode, trust_model_note

    assert trust_model_note("dp-gaussian", "none", ["dp-gaussian", "dp-cooccurrence", "local"]) == (
        "dp-cooccurrence ran without secure aggregation (each entity adds the full noise to its own release): "
        "dp-gaussian sends each entity's release to the server, and the methods it is compared with run under that "
        "trust model")
    assert trust_model_note("dp-popularity", "secure", ["dp-popularity", "dp-cooccurrence", "dp-popularity"]) == (
        "dp-popularity, dp-cooccurrence ran with secure aggregation (the server learns only the entities' sum): "
        "the run's trust model, the same for every method here")
    # a ranking metric sweeps in zero mode unless a mode is given; an RMSE keeps the run's own
    assert sweep_mode(None) == sweep_mode(None, "ndcg_at_10") == "zero"
    assert sweep_mode(None, "test_rmse") is None and sweep_mode("observed", "mar") == "observed"
    assert method_words({"method": "dp-cooccurrence", "aggregation": "secure"}) == "dp-cooccurrence (secure aggregation)"
    assert method_words({"method": "dp-gaussian", "aggregation": "secure"}) == "dp-gaussian"
    # a method whose MAR is undefined is not one of those compared
    docs = {"local": {"overall": {"mar": 0.127}}, "central": {"overall": {"mar": 0.283}},
            "dp-als": {"overall": {"mar": float("nan")}}}
    assert "(MAR 0.283, the highest of the 2 compared)" in observed_ranking_note(docs, "observed")
    assert observed_ranking_note({"central": {"overall": {"test_rmse": 0.9}}}, "observed") is None  # nothing ranked
