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
