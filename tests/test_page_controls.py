"""Every control of the Federate page reaches the run it starts, a loaded run document sets every
control back, the ε the pages show is the one the run's ledger recorded (AppTest, sample:clinic), the
budget boxes take their whole range and name the box at fault, and the progress bar places each phase."""
from __future__ import annotations

import math

import pytest

from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation.experiments import run_method
from dpfed_core.ui import defaults as dd
from dpfed_core.ui import engine as dash
from tests.test_app_pages import app, assert_clean

#: A setting where every control differs from the page's default (dp-gaussian: a prototype method with
#: k, a server weighting, declared parameters and a budget split).
CHANGED = dict(method="dp-gaussian", epsilon=2.0, delta=1e-5, k=3, rank=2, lam=0.3, mode="observed", seed=7,
               simulation=True, max_iter=5, test_fraction=0.3, n_hidden=2, server_weighting="counts",
               aggregation="none")


@pytest.fixture(scope="module")
def changed_run():
    """A Federate session whose every control was moved off its default, after pressing Run."""
    at = app("pages/2_Federate.py").run()
    at.selectbox(key="fed_method").set_value("dp-gaussian").run()
    at.text_input(key="fed_eps_text").set_value("2").run()
    at.text_input(key="fed_delta").set_value("1e-5")
    at.number_input(key="fed_k").set_value(3)
    at.number_input(key="fed_rank").set_value(2)
    at.number_input(key="fed_lam").set_value(0.3)
    at.selectbox(key="fed_mode").set_value("observed")
    at.number_input(key="fed_seed").set_value(7)
    at.toggle(key="fed_simulation").set_value(True)
    at.selectbox(key="fed_weighting").set_value("counts")
    at.number_input(key="fed_max_iter").set_value(5)
    at.number_input(key="fed_test_fraction").set_value(0.3)
    at.number_input(key="fed_n_hidden").set_value(2)
    at.number_input(key="fed_p_dp-gaussian_trials").set_value(2)
    at.checkbox(key="fed_p_dp-gaussian_final_choice").set_value(False)
    at.text_input(key="fed_p_dp-gaussian_search_steps").set_value("3")
    at.number_input(key="fed_split_search").set_value(0.6).run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    at.button(key="fed_run").click().run()
    assert_clean(at)
    return at


def test_every_federate_control_reaches_the_run(changed_run):
    """A control whose value is not passed on runs the default without a word: the run's configuration is
    exactly the controls', and its document is the engine's for that configuration."""
    clinic = load_data(dash.DEFAULT_SAMPLE)
    r = changed_run.session_state["run"]
    split = {**dash.budget_split_defaults("dp-gaussian"), "search": 0.6}
    want = dash.default_config(clinic).replace(
        **CHANGED, prototype_params={"trials": 2, "final_choice": False, "search_steps": 3, "split": split})
    assert r["config"] == want
    doc, _ = run_method(clinic, want)
    assert r["doc"]["overall"] == pytest.approx(doc["overall"])
    assert r["doc"]["privacy"]["epsilon"] == pytest.approx(doc["privacy"]["epsilon"])


def test_the_epsilon_shown_is_the_ledgers():
    """dp-prototypes' stages compose by zCDP to less than the ε asked: the pages show what was spent."""
    at = app("pages/2_Federate.py").run()
    at.selectbox(key="fed_method").set_value("dp-prototypes").run()
    at.toggle(key="fed_simulation").set_value(True).run()
    at.button(key="fed_run").click().run()
    assert_clean(at)
    spent = at.session_state["run"]["doc"]["privacy"]["epsilon"]
    assert dash.format_epsilon(spent) != dash.format_epsilon(at.session_state["run"]["config"].epsilon)
    shown = [m for m in at.metric if m.label.startswith("ε (")]
    assert shown and shown[0].value == dash.format_epsilon(spent), [m.value for m in shown]
    at.switch_page("pages/4_Recommend.py").run()
    assert_clean(at)
    label = [m.value for m in at.markdown if m.value.startswith("**Federated model**")]
    assert label and f"ε = {dash.format_epsilon(spent)}" in label[0], label


def test_a_loaded_document_sets_every_control():
    """The other direction: each control of the page holds the document's own value, the ranges' ends
    included (λ = 0, a test fraction of 0.99, the largest seed the page holds)."""
    cfg = RunConfig(method="dp-gaussian", epsilon=0.005, delta=1e-5, k=3, rank=2, lam=0.0, mode="observed",
                    seed=2**53 - 1, simulation=True, max_iter=1, test_fraction=0.99, n_hidden=1000,
                    server_weighting="counts")
    state = dd.widget_state(cfg.to_dict())
    assert {k: state[k] for k in ("fed_method", "fed_epsilon", "fed_eps_text", "fed_delta", "fed_k", "fed_rank",
                                  "fed_lam", "fed_mode", "fed_seed", "fed_simulation", "fed_secure",
                                  "fed_max_iter", "fed_test_fraction", "fed_n_hidden", "fed_weighting")} == {
        "fed_method": "dp-gaussian", "fed_epsilon": 0.005, "fed_eps_text": "0.005", "fed_delta": "1e-05",
        "fed_k": 3, "fed_rank": 2, "fed_lam": 0.0, "fed_mode": "observed", "fed_seed": 2**53 - 1,
        "fed_simulation": True, "fed_secure": False, "fed_max_iter": 1, "fed_test_fraction": 0.99,
        "fed_n_hidden": 1000, "fed_weighting": "counts"}
    assert dd.widget_state(cfg.replace(epsilon=math.inf, test_fraction=0.01).to_dict())["fed_eps_text"] == "inf"


def test_the_budget_boxes_take_their_range_and_name_their_box():
    """δ = 0 (a Laplace method's), ε = 100 without a warning, k and rank at their limits are accepted; δ = 1e-2,
    ε = 0, a seed of −1 are refused — each error naming the box typed in, never the other."""
    from dpfed_core.config import MAX_K, MAX_RANK
    from dpfed_core.errors import ConfigError
    from dpfed_core.ui import inputs

    assert inputs.check_budget("1", "0", eps_control="“E”", delta_control="“D”") == (1.0, 0.0, [])
    assert inputs.check_budget("100", "1e-4", eps_control="“E”", delta_control="“D”") == (100.0, 1e-4, [])
    eps, delta, warned = inputs.check_budget("101", "2e-4", eps_control="“E”", delta_control="“D”")
    assert (eps, delta) == (101.0, 2e-4) and len(warned) == 2 and "δ = 0.0002 is large" in warned[0]
    for eps_text, delta_text, box in (("0", "1e-6", "“E”"), ("1", "1e-2", "“D”"), ("1", "-1e-9", "“D”"),
                                      ("1", "1", "“D”"), ("1", "x", "“D”"), ("-2", "1e-6", "“E”")):
        with pytest.raises(ConfigError) as err:
            inputs.check_budget(eps_text, delta_text, eps_control="“E”", delta_control="“D”")
        assert str(err.value).startswith(box + ": "), (eps_text, delta_text, str(err.value))
    with pytest.raises(ConfigError) as err:
        inputs.check_budget("1", "0", eps_control="“E”", delta_control="“D”", method="dp-cooccurrence")
    assert str(err.value).startswith("“D”: ")
    assert inputs.parse_seeds("0, 3") == [0, 3]
    with pytest.raises(ConfigError, match="seeds must be whole numbers from 0"):
        inputs.parse_seeds("-1")
    assert inputs.check_k_rank(MAX_K, MAX_RANK) == [] and inputs.check_k_rank(1, 1) == []
    assert len(inputs.check_k_rank(MAX_K + 1, MAX_RANK + 1)) == 2 and len(inputs.check_k_rank(0, 0)) == 2
    clinic = load_data(dash.DEFAULT_SAMPLE)
    assert inputs.check_k_rank(None, clinic.n_items, clinic) == []
    assert "it is" in inputs.check_k_rank(None, clinic.n_items + 1, clinic)[0]


@pytest.mark.parametrize("method", ["dp-gaussian", "dp-prototypes"])
def test_a_delta_the_method_refuses_is_named_before_run(method):
    """δ = 0 passes the budget boxes (a Laplace method's δ) but a prototype method's private partition needs
    δ > 0: the page says so before the run, naming the box, and Run stays disabled — not an error after
    pressing Run."""
    at = app("pages/2_Federate.py").run()
    at.selectbox(key="fed_method").set_value(method).run()
    at.text_input(key="fed_delta").set_value("0").run()
    assert_clean(at)
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any(f"{method} needs δ > 0" in e and "“δ” on the Federate page" in e for e in shown), shown
    assert at.button(key="fed_run").disabled
    at.text_input(key="fed_delta").set_value("1e-6").run()
    assert not at.error and not at.button(key="fed_run").disabled


def test_the_progress_bar_places_each_phase_and_waits_to_extrapolate():
    """A run's bar: round 1 fills 0–60 %, counting an entity when it is done; round 2 75–90 %; a round of
    the FCF baseline 90 % over its rounds; the time left is extrapolated only from 2 % on."""
    from dpfed_core.ui.jobs import Job, fraction_of

    assert fraction_of("round1_start", {"index": 1, "total": 4}) == pytest.approx(0.15)
    assert fraction_of("round1_done", {"index": 1, "total": 4}) == pytest.approx(0.3)
    assert fraction_of("round2_done", {"index": 3, "total": 4}) == pytest.approx(0.9)
    assert fraction_of("round2_start", {"index": 0, "total": 4}) == pytest.approx(0.75)
    assert fraction_of("fcf_round", {"round": 2, "total": 4}) == pytest.approx(0.45)
    assert fraction_of("server_done", {}) == 0.72 and fraction_of("unknown", {}) is None
    job = Job(key="k", label="run", started=0.0)
    job.fraction, job.finished = 0.019, 10.0
    assert job.seconds_left() is None
    job.fraction = 0.25
    assert job.seconds_left() == pytest.approx(30.0)


def test_the_tradeoff_page_refuses_a_reference_the_sweep_would_refuse_before_its_button():
    """A reference method whose own rule the settings break (friedman-pals' output perturbation needs λ > 0)
    is said on the page, naming the control that fixes it, and the sweep's button is not offered; the same
    settings without that reference get their button."""
    from dpfed_core.errors import DpfedError
    from dpfed_core.evaluation.service import check_run

    clinic = load_data(dash.DEFAULT_SAMPLE)
    at = app("pages/2_Federate.py").run()
    at.session_state["run_config"] = dash.default_config(clinic).replace(lam=0.0)
    at.switch_page("pages/5_Trade-off.py").run()
    at.multiselect(key="sweep_refs").set_value(["local", "friedman-pals"]).run()
    assert_clean(at)
    with pytest.raises(DpfedError) as refused:
        check_run(clinic, at.session_state["run_config"], ["local", "friedman-pals"], "references")
    shown = " ".join(e.value for e in at.error)
    assert shown == dash.friendly_message(refused.value) and "“λ \\(ridge\\)” on the Federate page" in shown
    assert not [b for b in at.button if b.key == "sweep_run"]
    at.multiselect(key="sweep_refs").set_value(["local"]).run()
    assert_clean(at)
    assert not at.error and [b for b in at.button if b.key == "sweep_run"]
