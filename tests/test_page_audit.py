"""AppTest of the "Privacy audit" page: renders, runs a small audit, shows the verdicts and charts,
offers the compliance report once a federation run exists, and reports bad input as an error."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
PAGE = "pages/7_Privacy_audit.py"
TIMEOUT = 120


def open_page() -> AppTest:
    """Enter through app.py (as a browser does) when the page is registered in its navigation;
    otherwise open the page file on its own."""
    if PAGE in (REPO / "app.py").read_text():
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
        at.run()
        at.switch_page(PAGE)
        return at
    return AppTest.from_file(str(REPO / PAGE), default_timeout=TIMEOUT)


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_renders_and_runs_a_small_audit():
    at = open_page().run()
    clean(at)
    assert any("Run audit" in i.value for i in at.info)
    assert any("federation run" in i.value for i in at.info)  # report needs a run first
    # its time is stated before the button: timed on synthetic data of the entity's shape
    assert any(re.match(r"Expected time: (about|under) .* for \d+ audits of 100 runs per class, timed on a short "
                        r"audit of synthetic data of this entity's shape \([\d,]+ users × [\d,]+ items\)", c.value)
               for c in at.caption)
    at.number_input(key="audit_runs").set_value(12)
    at.text_input(key="audit_grid").set_value("1")
    at.button(key="audit_run").click().run()
    clean(at)
    assert not at.error
    # 6 evaluation runs per class cannot certify ε = 1: inconclusive, not a green pass
    assert any("Inconclusive" in w.value for w in at.warning)
    assert not any("No empirical lower bound exceeds" in s.value for s in at.success)
    assert any("Non-private methods" in w.value for w in at.warning)
    table = at.dataframe[0].value
    own = at.session_state["audit_methods"][0]  # the run's own method is audited by default
    from dpfed_core.ui import engine as dash
    from dpfed_core.data.loaders import load_data
    default = dash.default_config(load_data(dash.DEFAULT_SAMPLE)).method
    # the run's own method when it releases prototypes (auditable here), else the DP prototype method
    assert own == default or (own == "dp-gaussian" and default not in ("dp-prototypes", "dp-gaussian"))
    assert set(table["method"]) == {own, "kmeans", "krandom"}
    assert (table.loc[table["method"] == own, "verdict"] == "inconclusive").all()
    labels = [b.label for b in at.get("download_button")]
    assert "Download the audit (JSON)" in labels


def test_a_k_above_the_entitys_users_is_said_under_the_table():
    at = open_page().run()
    at.number_input(key="audit_runs").set_value(12)
    at.number_input(key="audit_k").set_value(10_000)
    at.text_input(key="audit_grid").set_value("1")
    at.button(key="audit_run").click().run()
    clean(at)
    notes = [w.value.replace("\\", "") for w in at.warning if "k = 10000 is above the" in w.value]
    assert len(notes) == 1 and "; prototypes a release held: " in notes[0], [w.value for w in at.warning]
    assert notes[0].endswith("Audit with the “k (prototypes)” your runs use"), notes[0]


def test_bad_grid_is_an_error_not_a_traceback():
    at = open_page().run()
    at.text_input(key="audit_grid").set_value("one, two").run()
    clean(at)
    assert any("ε must be a positive number" in e.value for e in at.error)
    assert at.button(key="audit_run").disabled
    # past a run's largest ε: refused here, naming this page's box, before anything is charged
    at.text_input(key="audit_grid").set_value("1e7").run()
    clean(at)
    assert any("“ε grid for DP methods”" in e.value and "above 10000" in e.value for e in at.error), \
        [e.value for e in at.error]
    assert at.button(key="audit_run").disabled


def test_an_audit_grid_past_a_runs_range_is_refused_before_it_is_planned_or_charged(tmp_path, capsys):
    from dpfed_core.cli.main import main

    store = tmp_path / "s.sqlite3"
    args = ["audit", "--data", "sample:clinic", "--entity", "hospital 01", "--methods", "dp-cooccurrence",
            "--epsilons", "1e7", "--runs", "10", "--allow-non-private", "--store", str(store)]
    for extra in ([], ["--dry-run"]):
        assert main(args + extra) == 2
        err = capsys.readouterr().err
        assert "ε = 1e+07 is above 10000" in err and "--epsilons" in err and "--epsilon]" not in err, err
    assert not store.exists()  # nothing planned, charged or opened
    assert main(args[:-5] + ["--epsilons", "1", "--runs", "3", "--store", str(store)]) == 2
    assert "--runs" in capsys.readouterr().err


def test_report_button_with_a_run():
    from dpfed_core.ui import engine as dash
    from dpfed_core.evaluation.experiments import run_method
    from dpfed_core.data.loaders import load_data

    ds = load_data(dash.DEFAULT_SAMPLE)
    cfg = dash.default_config(ds).replace(max_iter=30)
    doc, result = run_method(ds, cfg)
    at = open_page()
    at.session_state["dataset"] = ds
    at.session_state["dataset_key"] = dash.dataset_fingerprint(ds)
    at.session_state["run"] = {"doc": doc, "result": result, "config": cfg, "seconds": 0.0}
    at.run()
    clean(at)
    labels = [b.label for b in at.get("download_button")]
    # two downloads: the analyst's full report and a public one
    assert "Download the analyst's full report" in labels and "Download the public report" in labels


@pytest.fixture(scope="module")
def clinic_audit():
    """The sample and one small audit of its first entity (a real document, whose verdicts the tests below
    rewrite: the page must say each in its own words)."""
    from dpfed_core.audit import membership as aud
    from dpfed_core.data.loaders import load_data
    from dpfed_core.ui import engine as dash

    ds = load_data(dash.DEFAULT_SAMPLE)
    aud.ensure_prototype_methods()
    doc = aud.run_audit(ds, ds.entity_names[0], methods=["dp-gaussian", "kmeans"], epsilons=[1.0], delta=1e-6, k=5,
                        targets=["synthetic"], runs=4, attacks=["distance"], seed=0)
    return ds, doc


def shown_audit(ds, doc, rows=None, data_key=None) -> AppTest:
    """The page with ``doc`` (its summary replaced by ``rows``) as the session's last audit."""
    import copy

    from dpfed_core.ui import engine as dash

    doc = copy.deepcopy(doc)
    if rows is not None:
        doc["summary"] = rows
    at = open_page()
    at.session_state["dataset"] = ds
    at.session_state["dataset_key"] = dash.dataset_fingerprint(ds)
    at.session_state["audit_result"] = {"key": (data_key or dash.dataset_fingerprint(ds), "other settings"),
                                        "doc": doc}
    return at.run()


def test_each_verdict_of_the_last_audit_is_said_in_its_own_words(clinic_audit):
    ds, doc = clinic_audit
    dp, np_row = (next(r for r in doc["summary"] if r["method"] == m) for m in ("dp-gaussian", "kmeans"))
    at = shown_audit(ds, doc, [{**dp, "verdict": "VIOLATION", "epsilon": 1.0, "epsilon_lb": 3.0}, np_row])
    clean(at)
    assert [e.value for e in at.error] == [
        "**Violation:** an empirical ε lower bound exceeds the claimed ε for dp-gaussian at ε = 1. The mechanism "
        "or its accounting is broken."]
    assert not at.success
    assert any("Showing the last audit; the settings above have changed" in c.value for c in at.caption)
    at = shown_audit(ds, doc, [{**dp, "verdict": "consistent", "epsilon": 4.0, "epsilon_lb": 0.5},
                               {**dp, "verdict": "inconclusive", "epsilon": 1.0, "max_certifiable_epsilon": 0.75},
                               np_row])
    clean(at)
    assert not at.error
    assert [s.value for s in at.success] == [
        "No empirical lower bound exceeds a DP method's claimed ε (largest: ε = 4: 0.50; Bonferroni over targets × "
        "attacks)."]
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("**Inconclusive** for dp-gaussian at ε = 1 (these runs can certify at most 0.75)")
               for w in warnings), warnings
    assert any(w.startswith("Non-private methods (no guarantee): **kmeans** AUC") for w in warnings), warnings
    table = at.dataframe[0].value
    assert list(table["verdict"]) == ["consistent", "inconclusive", np_row["verdict"]]


def test_an_audit_of_other_data_is_not_shown(clinic_audit):
    ds, doc = clinic_audit
    at = shown_audit(ds, doc, data_key="fingerprint of other data")
    clean(at)
    assert "audit_result" not in at.session_state
    assert any("Press **Run audit**" in i.value for i in at.info)
    assert not at.dataframe


def test_the_release_count_before_the_button_counts_every_epsilon_target_and_both_classes():
    at = open_page().run()
    at.multiselect(key="audit_methods").set_value(["dp-gaussian", "kmeans"])
    at.multiselect(key="audit_targets").set_value(["synthetic"])
    at.text_input(key="audit_grid").set_value("1, 4")
    at.number_input(key="audit_runs").set_value(10).run()
    clean(at)
    assert any("release the entity's data 60 times" in i.value for i in at.info)
    assert any(c.value.startswith("3 audits × 20 releases = **60 releases** of entity") for c in at.caption), \
        [c.value for c in at.caption]
    at.text_input(key="audit_user").set_value(" u1 ").run()  # a specific user is one more target
    clean(at)
    assert any(c.value.startswith("6 audits × 20 releases = **120 releases**") for c in at.caption)


def test_an_audit_of_no_method_or_no_target_is_refused_before_the_button():
    at = open_page().run()
    at.multiselect(key="audit_methods").set_value([]).run()
    clean(at)
    assert "Choose at least one method to audit." in [e.value for e in at.error]
    assert at.button(key="audit_run").disabled
    at.multiselect(key="audit_methods").set_value(["kmeans"])
    at.multiselect(key="audit_targets").set_value([]).run()
    clean(at)
    assert [e.value for e in at.error] == ["Choose at least one target user."]
    assert at.button(key="audit_run").disabled


def test_the_report_includes_comparisons_only_of_the_runs_own_configuration(clinic_audit):
    from dpfed_core.ui import engine as dash

    ds, doc = clinic_audit
    cfg = dash.default_config(ds)
    at = open_page()
    at.session_state["dataset"] = ds
    at.session_state["dataset_key"] = dash.dataset_fingerprint(ds)
    at.session_state["run"] = {"doc": {}, "result": None, "config": cfg, "seconds": 0.0}
    at.session_state["comparison"] = {"config_key": "another configuration", "docs": {}}
    at.run()
    clean(at)
    assert any(c.value.endswith("Includes: the run.") for c in at.caption), [c.value for c in at.caption]
    at.session_state["comparison"] = {"config_key": dash.config_key(cfg), "docs": {}}
    at.run()
    assert any(c.value.endswith("Includes: the run, comparison methods.") for c in at.caption)


def test_the_run_button_charges_with_the_checkbox_runs_the_chosen_attacks_and_keeps_a_new_audit_once(
        clinic_audit, monkeypatch):
    """What the button hands the engine: the "Allow non-private releases" box as ticked, the likelihood-ratio
    attack only when chosen; a new audit is kept in the history and timed, one shown again from the cache is
    neither kept twice nor timed again. (The budget store and the audit itself are stood in for: their own
    tests cover them.)"""
    from dpfed_core.audit import membership as aud
    from dpfed_core.ui import history

    ds, doc = clinic_audit
    calls, saved, charging = [], [], []
    real_run_audit = aud.run_audit

    def charged(dataset, plans, body, *, allow_non_private=False, **kw):
        calls.append({"allow_non_private": allow_non_private})
        charging.append(True)
        try:
            return body()
        finally:
            charging.clear()

    def run_audit(*args, **kwargs):
        if not charging:  # the time estimate's calibration on synthetic data
            return real_run_audit(*args, **kwargs)
        calls[-1]["attacks"] = kwargs["attacks"]
        return doc

    monkeypatch.setattr(history, "charged", charged)
    monkeypatch.setattr(aud, "run_audit", run_audit)
    monkeypatch.setattr(history, "save", lambda ds, kind, doc, result=None, key=None: saved.append(kind))
    at = open_page().run()
    at.number_input(key="audit_seed").set_value(987_654)  # a seed no other test audits: not in the job cache
    at.text_input(key="audit_grid").set_value("1")
    at.button(key="audit_run").click().run()
    clean(at)
    assert calls == [{"allow_non_private": False, "attacks": ["distance", "lr", "counts"]}]
    assert saved == ["audit"] and at.session_state["audit_seconds"] >= 0
    at.session_state["audit_seconds"] = 1234.0
    at.button(key="audit_run").click().run()  # the same settings: the cached audit, nothing released
    clean(at)
    assert len(calls) == 1 and saved == ["audit"] and at.session_state["audit_seconds"] == 1234.0
    at.checkbox(key="audit_lr").uncheck()
    at.checkbox(key="allow_non_private_audit").check().run()
    at.button(key="audit_run").click().run()
    clean(at)
    assert calls[1:] == [{"allow_non_private": True, "attacks": ["distance", "counts"]}]



def test_the_federate_pages_dp_parameters_are_audited_only_with_the_method_they_were_set_for(clinic_audit):
    """The audit runs the Federate run's method with that run's DP parameters; a run of a method the audit
    cannot run privately lends none of its parameters to the DP methods audited here."""
    from dpfed_core.ui import engine as dash

    ds, _ = clinic_audit

    def caption_with(method):
        at = open_page()
        at.session_state["dataset"] = ds
        at.session_state["dataset_key"] = dash.dataset_fingerprint(ds)
        at.session_state["run_config"] = dash.default_config(ds).replace(method=method,
                                                                         prototype_params={"threshold": 0.5})
        at.run()
        clean(at)
        return next(c.value for c in at.caption if " audits × " in c.value)

    assert 'DP parameters from the Federate page: {"threshold": 0.5}' in caption_with("dp-gaussian")
    assert "DP parameters" not in caption_with("kmeans")


def test_the_public_report_is_made_public_and_the_analysts_in_full(clinic_audit, monkeypatch):
    """Each download builds its report when it is clicked; building each here shows which report each
    button gives (the public one leaves out exact counts and named users)."""
    from streamlit.delta_generator import DeltaGenerator

    from dpfed_core.reporting import report as rep
    from dpfed_core.ui import engine as dash

    ds, _ = clinic_audit
    made = {}
    real_button = DeltaGenerator.download_button

    def download_button(self, label, data, *args, **kwargs):
        if callable(data):
            made[label] = data()
        return real_button(self, label, data, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", download_button)
    monkeypatch.setattr(rep, "report_from_session", lambda run, **kw: f"public={kw['public']}")
    at = open_page()
    at.session_state["dataset"] = ds
    at.session_state["dataset_key"] = dash.dataset_fingerprint(ds)
    at.session_state["run"] = {"doc": {}, "result": None, "config": dash.default_config(ds), "seconds": 0.0}
    at.run()
    clean(at)
    assert made == {"Download the analyst's full report": "public=False", "Download the public report": "public=True"}
