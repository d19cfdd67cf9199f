"""How the guarantee is stated: exact totals only in analyst-only sections,
"guarantee (ledger)" with its assumptions instead of "proven", δ ≥ 1e-2 refused with the flag and the
control that fix it, δ above 1/n̂ warned, no error that depends on a true count, simulation labelled."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import make_split, run_method
from dpfed_core.federation.dp_prototypes import DPGaussianPrototypes, DPPrototypes
from dpfed_core.privacy.ledger import PrivacyLedger, delta_warning, validate_budget
from dpfed_core.privacy.noise import PRODUCTION_SAMPLER_LABEL, SIMULATION_LABEL, SecureGenerator
from dpfed_core.reporting import report as rep
from dpfed_core.ui import engine as dash
from report_docs import small_dataset


def _section(page: str, sid: str) -> str:
    m = re.search(rf"<section id='{sid}'.*?</section>", page, re.S)
    assert m, sid
    return m.group(0)


@pytest.fixture(scope="module")
def runs():
    ds = small_dataset()
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-6, k=5, rank=3, seed=0, max_iter=30)
    split = make_split(ds, cfg)
    prod, _ = run_method(ds, cfg, split)
    sim, _ = run_method(ds, cfg.replace(simulation=True), split)
    return ds, prod, sim


def test_report_summary_states_a_ledger_guarantee_with_assumptions_and_no_exact_total(runs):
    ds, prod, _ = runs
    page = rep.build_report(prod, dataset=ds, generated="2026-01-01T00:00:00+00:00")
    summary = _section(page, "summary")
    markup = re.sub(r"<script type='text/javascript'>.*?</script>", "", page, count=1, flags=re.S)
    assert not re.search(r"\b[Pp]roven\b", markup)
    assert "Guarantee (ledger)" in summary and "assumptions" in summary
    assert "The noise is secret" in summary and "OpenDP" in summary
    # the exact total number of users appears only in analyst-only sections (it is a private count)
    assert not re.search(rf"\b{ds.n_users}\b", summary)
    assert str(ds.n_users) in _section(page, "data")
    assert prod["privacy"]["samplers"] == [PRODUCTION_SAMPLER_LABEL]


def test_simulation_run_is_labelled_in_json_ledger_dashboard_and_report(runs):
    ds, _, sim = runs
    p = sim["privacy"]
    assert p["simulation"] and SIMULATION_LABEL in p["label"] and SIMULATION_LABEL in p["statement"]
    assert {r["sampler"] for r in p["ledger"]} == {SIMULATION_LABEL}
    assert SIMULATION_LABEL in dash.guarantee_text(sim)
    page = rep.build_report(sim, dataset=ds, generated="2026-01-01T00:00:00+00:00")
    assert SIMULATION_LABEL in _section(page, "summary") and "Guarantee (ledger)" not in _section(page, "summary")
    assert "floating-point" in _section(page, "privacy")  # which float sampler ran is said
    # its assumptions say the noise is NOT secret; a production run's say where its secret noise came from
    said = " ".join(p["assumptions"])
    assert "it is NOT" in said and "seed can reproduce" in said and "operating system's entropy" not in said
    prod_said = " ".join(runs[1]["privacy"]["assumptions"])
    assert "operating system's entropy" in prod_said and "it is NOT" not in prod_said


def test_the_dashboard_says_where_a_secure_sum_was_formed(runs):
    """In process the sum is formed directly; on a deployment Flower's SecAgg+ formed it — the
    guarantee text says which, from the run's own trust record, never one of them for both."""
    prod = runs[1]
    trust = {"aggregation": "secure", "against_server": {"epsilon": 1.0, "delta": 1e-6},
             "against_server_and_other_entities": {"epsilon": 9.5, "delta": 1e-6}}
    here = dash.guarantee_text({**prod, "privacy": {**prod["privacy"], "trust": {**trust, "in_process": True}}})
    there = dash.guarantee_text({**prod, "privacy": {**prod["privacy"], "trust": {**trust, "in_process": False}}})
    assert "formed in-process" in here and "SecAgg+" not in here
    assert "formed by Flower's SecAgg+" in there and "in-process" not in there
    assert "9.5" in here and "9.5" in there


def test_the_dashboards_guarantee_carries_the_float_sampler_note_and_every_warning(runs):
    """A production run whose ledger has a row not drawn by OpenDP (a comparison system's own float
    steps) says so beside its guarantee, and every warning of its privacy record (e.g. δ above 1/n̂) is
    shown with it; a run drawn by OpenDP alone carries neither."""
    from dpfed_core.privacy.statement import FLOAT_SAMPLER_NOTE, UNSTATED_SAMPLER

    prod = runs[1]
    assert FLOAT_SAMPLER_NOTE not in dash.guarantee_text(prod)
    warned = "δ = 0.001 is above 1/n̂ = 0.02 of the smallest entity"
    mixed = {**prod, "privacy": {**prod["privacy"], "samplers": [PRODUCTION_SAMPLER_LABEL, UNSTATED_SAMPLER],
                                 "warnings": [warned]}}
    text = dash.guarantee_text(mixed)
    assert FLOAT_SAMPLER_NOTE in text and warned in text


def test_the_dashboards_guarantee_is_the_ledgers_epsilon_and_delta_beside_the_request(runs):
    """The guarantee the Federate and Evaluate pages state is the ledger's (ε, δ), which may be below
    the request; the request is stated beside it, never in its place."""
    prod = runs[1]
    spent = {**prod, "privacy": {**prod["privacy"], "epsilon": 0.62, "delta": 4e-7,
                                 "requested_epsilon": 1.0, "requested_delta": 1e-6}}
    text = dash.guarantee_text(spent)
    assert "(0.62, 4e-07)-DP** for every user" in text
    assert "requested ε = 1, δ = 1e-06" in text
    assert "(1, " not in text.split("requested")[0]


@pytest.mark.parametrize("delta", [0.5, 0.01, 0.2])
def test_large_delta_is_refused_naming_the_flag_and_the_control(delta):
    with pytest.raises(ConfigError) as e:
        validate_budget(1.0, delta)
    # the engine names the parameter; each front end renders its own name for it
    from dpfed_core.cli.main import render_error
    from dpfed_core.ui.engine import friendly_message

    assert e.value.param == "delta"
    assert "--delta" in render_error(e.value) and "Federate page" in friendly_message(e.value)
    with pytest.raises(ConfigError):
        RunConfig(method="dp-gaussian", epsilon=1.0, delta=delta).validate()
    validate_budget(math.inf, delta)  # a non-private run has no δ to speak of
    validate_budget(1.0, 0.0099)


def test_cli_refuses_a_large_delta(tmp_path, capsys):
    from dpfed_core.cli import main
    from tests.test_cli import TOY_ARGS, _toy_csv

    csv = _toy_csv(tmp_path / "toy.csv")
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--method", "dp-gaussian", "--delta", "0.5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--delta" in err and "Traceback" not in err


def test_delta_above_one_over_noisy_size_is_warned():
    assert delta_warning(1e-6, 500.0) is None
    w = delta_warning(5e-3, 500.0)  # 1/500 = 2e-3 < δ
    assert w and "1/n̂" in w and "lower δ" in w
    assert delta_warning(5e-3, -3.0) is None  # a noisy size can be ≤ 0: floored at 1, no error


@pytest.mark.parametrize("cls", [DPPrototypes, DPGaussianPrototypes])
def test_empty_and_one_user_entities_behave_alike(cls):
    # an error at n = 0 but not at n = 1 would itself reveal a true count
    out = []
    for n in (0, 1):
        L = PrivacyLedger(1.0, 1e-6)
        rel = cls(k=4, value_max=1.0, cluster_size=None, projection_dim=2).release(
            sp.csr_matrix(np.ones((n, 9))), SecureGenerator(), L.for_entity("e"))
        out.append((rel.prototypes.shape, [(r.stage, r.epsilon, r.delta, r.noise_scale) for r in L.rows]))
    assert out[0] == out[1]


def test_the_trust_model_sentence_names_where_the_sum_was_formed_and_the_coalitions_guarantee():
    from dpfed_core.privacy.statement import trust_model_text

    assert "no secure aggregation" in trust_model_text({}) and "against everyone else" in trust_model_text({})
    against = {"epsilon": 9.53, "delta": 1e-6}
    here = trust_model_text({"trust": {"aggregation": "secure", "in_process": True,
                                       "against_server_and_other_entities": against}})
    there = trust_model_text({"trust": {"aggregation": "secure", "in_process": False,
                                        "against_server_and_other_entities": against}})
    assert "formed in-process" in here and "SecAgg+" not in here
    assert "formed by Flower's SecAgg+" in there and "in-process" not in there
    for text in (here, there):
        assert text.endswith("ε = 9.53 (δ = 1e-06)")
    none = trust_model_text({"trust": {"aggregation": "none",
                                       "against_server_and_other_entities": {"epsilon": "inf"}}})
    assert "the server sees every entity's release" in none and none.endswith("(ε = ∞)")


def test_an_entity_list_read_from_the_data_is_stated_as_unprotected_membership():
    from dpfed_core.privacy.statement import ENTITY_FROM_DATA, assumptions, entity_assumptions

    items = assumptions({PRODUCTION_SAMPLER_LABEL}, simulation=False)
    out = entity_assumptions(items)
    assert out[-1] == ENTITY_FROM_DATA and len(out) == len(items) + 1
    assert any("the item catalogue are public inputs" in x and "entity list" not in x for x in out[:-1])
# ------------------------------------------------------------------------------------ the run's privacy section
def _result(ledger, releases=()):
    from types import SimpleNamespace

    from dpfed_core.methods import MethodResult

    return MethodResult(np.zeros((2, 1)), np.zeros((3, 1)), ledger,
                        model=SimpleNamespace(releases_=[SimpleNamespace(counts=np.asarray(c)) for c in releases]))


def test_a_non_dp_method_requests_no_delta_and_is_never_labelled_a_simulation():
    from dpfed_core.evaluation.experiments import privacy_summary

    led = PrivacyLedger(math.inf, 0.0)
    led.spend("A", "raw data", "raw rows (non-private)", math.inf)
    # the summary itself reads no request off a non-private method's configuration, whatever ε it holds
    out = privacy_summary(_result(led), RunConfig(method="central", epsilon=1.0, delta=1e-6, simulation=True), False)
    assert out["requested_delta"] == 0.0 and math.isinf(out["requested_epsilon"])
    assert out["simulation"] is False and SIMULATION_LABEL not in out["label"]
    assert out["label"].startswith("non-private")


def test_the_label_states_the_ledgers_epsilon_to_four_significant_digits():
    """The label the CLI prints and the pages show after a run: the ledger's ε to four significant
    digits, rounded up (0.1235, not 0.12; 0.12341 → 0.1235: never below what holds)."""
    from dpfed_core.evaluation.experiments import privacy_summary

    led = PrivacyLedger(1.0, 1e-6)
    led.spend("A", "counts", "Laplace", 0.123456, 0.0)
    out = privacy_summary(_result(led), RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-6), True)
    assert out["label"].startswith("(0.1235, 0)-DP per user of each entity")
    led = PrivacyLedger(1.0, 1e-6)
    led.spend("A", "counts", "Laplace", 0.12341, 0.0)
    out = privacy_summary(_result(led), RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-6), True)
    assert out["label"].startswith("(0.1235, 0)-DP per user of each entity")


def test_a_spend_the_accountant_rounds_to_zero_is_labelled_as_noisy_releases_not_as_nothing_sent():
    from dpfed_core.evaluation.experiments import privacy_summary

    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, delta=1e-6)
    quiet = PrivacyLedger(1.0, 1e-6)
    quiet.spend("A", "public input", "none", 0.0, 0.0)
    assert privacy_summary(_result(quiet), cfg, True)["label"].startswith("nothing derived from private data")
    assert privacy_summary(_result(quiet), cfg, True)["samplers"] == []  # no noisy row: no sampler to name
    led = PrivacyLedger(1.0, 1e-6)
    led.spend("A", "sizes", "Gaussian", 0.0, 1e-7, sampler="opendp")
    out = privacy_summary(_result(led), cfg, True)
    assert out["label"].startswith("(ε ≈ 0, ") and "noisy releases were sent" in out["label"]


def test_the_delta_warning_reads_the_smallest_entitys_released_size():
    from dpfed_core.evaluation.experiments import privacy_summary

    led = PrivacyLedger(1.0, 1e-2 - 1e-9)
    led.spend("A", "sums", "Gaussian", 0.5, 5e-3, sampler="opendp")
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, delta=5e-3)
    # δ > 1/n̂ for n̂ above 200: the entity of 250 is, the one of 300 is beside it and not the smallest
    out = privacy_summary(_result(led, releases=[[100.0, 150.0], [200.0, 100.0]]), cfg, True)
    assert len(out["warnings"]) == 1 and "released noisy size ≈ 250" in out["warnings"][0]
    # the smallest entity (150) is below 200: no warning, whatever the larger one's size
    assert privacy_summary(_result(led, releases=[[150.0], [400.0]]), cfg, True)["warnings"] == []


def test_the_dashboards_guarantee_states_the_trust_model_without_secure_aggregation_too():
    """Without secure aggregation the guarantee says every entity added the full noise to its own release (the
    server sees each); a document without a trust model says neither."""
    from dpfed_core.ui import tables

    p = {"private": True, "epsilon": 1.0, "delta": 1e-6, "requested_epsilon": 1.0, "requested_delta": 1e-6,
         "assumptions": [], "samplers": [], "warnings": [], "trust": {"aggregation": "none"}}
    text = tables.guarantee_text({"privacy": p})
    assert text.endswith("\n\nNo secure aggregation: every entity added the full noise to its own release."), text
    bare = tables.guarantee_text({"privacy": {k: v for k, v in p.items() if k != "trust"}})
    assert "secure aggregation" not in bare.lower()
