"""The privacy budget as a data owner sets and reads it: caps, what is spent and left, as every front end
states them (a spend never shown below what was spent, a cap never shown above what was set)."""
from __future__ import annotations

import math
import re

import pytest

from dpfed_core.cli.main import main
from dpfed_core.data.loaders import load_data
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease

#: A cap whose rounding to nearest at four digits (1.235) is above it: rounded down it reads 1.234.
ODD_CAP = 1.23456789


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_a_dry_run_states_the_spend_after_it_rounded_up_and_the_cap_rounded_down(tmp_path, capsys, clinic):
    """dp-gaussian composes by basic composition: at ε = 0.12344 the most-spent entity ends at exactly 0.12344,
    which reads 0.1235 (0.1234 would be below the spend), under a cap read 1.234 (1.235 would be above it)."""
    store = tmp_path / "s.sqlite3"
    BudgetOdometer(store).set_cap(clinic, ODD_CAP, 1e-5)
    rc, out, _ = _cli(capsys, "run", "--data", "sample:clinic", "--method", "dp-gaussian", "--epsilon", "0.12344",
                      "--dry-run", "--store", str(store))
    assert rc == 0
    assert "after it: the most-spent entity would be at ε = 0.1235 of the cap ε = 1.234 (fits)" in out, out


def test_a_dry_run_of_a_non_private_release_states_the_dp_spend_up_and_the_cap_down(tmp_path, capsys, clinic):
    """Under a cap a non-private release voids the guarantee; the DP releases' figure beside it is a spend
    (rounded up) of a cap (rounded down)."""
    store = tmp_path / "s.sqlite3"
    odo = BudgetOdometer(store)
    odo.set_cap(clinic, ODD_CAP, 1e-5)
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 0.12344, 1e-6,
                                        {e: (0.12344, 1e-6) for e in clinic.entity_names})]).close()
    rc, out, _ = _cli(capsys, "run", "--data", "sample:clinic", "--method", "central", "--dry-run",
                      "--store", str(store))
    assert rc == 0
    assert "the most-spent entity's DP releases at ε = 0.1235 of the cap ε = 1.234)" in out, out


def test_set_cap_and_its_change_log_never_state_a_cap_above_the_one_set(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite3")
    data = ["--data", "sample:clinic", "--store", store]
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--epsilon", repr(ODD_CAP))
    assert rc == 0
    assert "ε = 1.234, δ = 1e-05 per entity" in out.splitlines()[0], out
    assert "none → ε = 1.234, δ = 1e-05" in out, out
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--epsilon", "1")
    assert rc == 0 and "ε = 1.234, δ = 1e-05 → ε = 1, δ = 1e-05" in out, out
    assert not re.search(r"1\.235|1\.23457", out), out


def _budget_section(path):
    """The dashboard's budget section of the clinic sample over the store at ``path``, run once."""
    from streamlit.testing.v1 import AppTest

    section = ("from dpfed_core.data.loaders import load_data\nfrom dpfed_core.privacy.store import Store\n"
               "from dpfed_core.ui.budget import render_budget\n"
               f"render_budget(Store({str(path)!r}), load_data('sample:clinic'))\n")
    return AppTest.from_string(section, default_timeout=60).run()


def test_the_dashboards_cap_is_never_shown_above_the_one_set(tmp_path, clinic):
    path = tmp_path / "s.sqlite3"
    BudgetOdometer(path).set_cap(clinic, ODD_CAP, 1e-5)
    at = _budget_section(path)
    assert not at.exception and not at.error
    assert any("Current cap:** ε = 1.234, δ = 1e-05" in m.value for m in at.markdown)
    log = next(d.value for d in at.dataframe if "to" in d.value.columns)
    assert list(log["to"]) == ["ε 1.234, δ 1e-05"]
    assert not math.isinf(BudgetOdometer(path).datasets()[0]["cap_epsilon"])


def _three_entities():
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((24, 12)) < 0.4).astype(float))
    return FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], 8), value_kind="implicit", value_max=1.0,
                                       name="three")


def test_an_audit_that_reads_every_entitys_rows_charges_every_entity(tmp_path):
    """A summable method's audit with ``others="data"`` simulates the rest of the secure sum with the other
    entities' exact rows: each of them is charged the non-private analysis (∞), as the CLI's ``--others data``
    is; with zeros for the others only the audited entity is."""
    from dpfed_core.privacy.store import Store
    from dpfed_core.ui.budget import charged_audit

    ds = _three_entities()
    common = dict(methods=["dp-popularity"], epsilons=[1.0], delta=1e-6, targets=("outlier",), runs=4, seed=0,
                  save=False)
    charged_audit(Store(tmp_path / "data.sqlite3"), ds, "a", others="data", **common)
    charged_audit(Store(tmp_path / "zeros.sqlite3"), ds, "a", others="zeros", **common)
    voided = {name: {b.entity for b in BudgetOdometer(tmp_path / f"{name}.sqlite3").balance(ds) if b.void}
              for name in ("data", "zeros")}
    assert voided == {"data": {"a", "b", "c"}, "zeros": {"a"}}


def test_each_methods_charge_follows_its_privacy_model():
    """A user-level DP method is charged its (ε, δ) per entity; a rating-level ε at a trusted curator bounds
    nothing per person, so it is charged as non-private (∞); a method that sends nothing charges no one; a DP
    method at ε = ∞ is non-private."""
    from dpfed_core.evaluation.budget import method_charges

    names = ["a", "b"]
    assert method_charges("dp-popularity", 1.5, 1e-6, names) == {"a": (1.5, 1e-6), "b": (1.5, 1e-6)}
    assert method_charges("friedman-ge", 1.5, 1e-6, names) == {"a": (math.inf, 0.0), "b": (math.inf, 0.0)}
    assert method_charges("central", 1.5, 1e-6, names) == {"a": (math.inf, 0.0), "b": (math.inf, 0.0)}
    assert method_charges("dp-popularity", math.inf, 1e-6, names) == {"a": (math.inf, 0.0), "b": (math.inf, 0.0)}
    assert method_charges("individual", 1.5, 1e-6, names) == {}


def test_a_run_plans_its_method_once_and_each_compared_method_as_a_comparison(clinic):
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.budget import plan_run

    cfg = RunConfig(method="dp-popularity", epsilon=2.0, delta=1e-6)
    plans = plan_run(clinic, cfg, ["dp-popularity", "local", "central"])
    assert [(p.kind, p.method) for p in plans] == [("run", "dp-popularity"), ("comparison", "local"),
                                                   ("comparison", "central")]
    assert plans[0].charges == {e: (2.0, 1e-6) for e in clinic.entity_names} and plans[0].rho is not None
    assert plans[1].charges == {} and all(math.isinf(c[0]) for c in plans[2].charges.values())
    # the dashboard's Evaluate page runs each comparison on its own: recorded as one all the same
    assert [p.kind for p in plan_run(clinic, cfg, comparison=True)] == ["comparison"]


def test_a_sweep_plans_one_batch_point_per_job_and_seed_and_none_for_points_a_resumed_document_holds(clinic):
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.budget import plan_sweep
    from dpfed_core.evaluation.experiments import job_key

    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6)
    plans = plan_sweep(clinic, cfg, [0.5, 2.0], [0, 1], references=["local", "central"])
    assert [(p.method, p.epsilon, p.seed) for p in plans] == [
        (m, e, s) for s in (0, 1) for m, e in (("dp-popularity", 0.5), ("dp-popularity", 2.0), ("local", math.inf),
                                               ("central", math.inf))]
    assert all(p.kind == "sweep point" and p.batch for p in plans)
    done = {job_key("dp-popularity", 0.5, 0, "dp-popularity"), job_key("central", math.inf, 1, "dp-popularity")}
    left = plan_sweep(clinic, cfg, [0.5, 2.0], [0, 1], references=["local", "central"], done=done)
    assert [(p.method, p.epsilon, p.seed) for p in left] == [
        ("dp-popularity", 2.0, 0), ("local", math.inf, 0), ("central", math.inf, 0), ("dp-popularity", 0.5, 1),
        ("dp-popularity", 2.0, 1), ("local", math.inf, 1)]


def test_an_audit_charges_the_audited_entity_or_every_entity_whose_rows_it_reads(clinic):
    from dpfed_core.evaluation.budget import plan_audit

    one = clinic.entity_names[3]
    (own,) = plan_audit(clinic, one, ["dp-popularity"], [1.0], 1e-6, seed=2)
    (every,) = plan_audit(clinic, one, ["dp-popularity"], [1.0], 1e-6, seed=2, all_entities=True)
    assert own.charges == {one: (math.inf, 0.0)} and own.non_private and own.kind == "audit"
    assert every.charges == {e: (math.inf, 0.0) for e in clinic.entity_names}


def test_a_documents_charges_add_up_its_ledger_rows_per_entity_without_a_per_entity_summary():
    """An older document without ``per_entity``: basic composition of its rows, ε and δ added per entity (δ
    at most 1), the JSON ``"inf"`` read as ∞."""
    from dpfed_core.evaluation.budget import ledger_charges

    rows = [{"entity": "a", "epsilon": 0.25, "delta": 1e-7}, {"entity": "a", "epsilon": 0.5, "delta": 2e-7},
            {"entity": "b", "epsilon": "inf", "delta": 0.0}, {"entity": "c", "epsilon": 1.0, "delta": 0.75},
            {"entity": "c", "epsilon": 1.0, "delta": 0.75}]
    got = ledger_charges({"ledger": rows})
    assert got["a"] == (0.75, pytest.approx(3e-7)) and got["b"] == (math.inf, 0.0) and got["c"] == (2.0, 1.0)
    assert ledger_charges({"ledger": rows}, entities=["a"]) == {"a": got["a"]}
    summary = {"per_entity": [{"entity": "a", "epsilon": 0.6, "delta": 2e-7}], "ledger": rows}
    assert ledger_charges(summary) == {"a": (0.6, 2e-7)}


def test_the_store_is_skipped_only_when_nothing_is_released_or_every_release_is_an_unnamed_simulation(
        monkeypatch):
    from dpfed_core.evaluation.budget import skip_store
    from dpfed_core.privacy.store import STORE_ENV

    monkeypatch.delenv(STORE_ENV, raising=False)
    dp = PlannedRelease("run", "dp-popularity", 1.0, 1e-6, {"a": (1.0, 1e-6)})
    nothing = PlannedRelease("comparison", "local", math.inf, 0.0, {})
    sim = PlannedRelease("run", "dp-popularity", 1.0, 1e-6, {"a": (1.0, 1e-6)}, simulation=True)
    assert skip_store(None, [nothing]) and skip_store(None, [sim]) and skip_store(None, [sim, sim])
    assert not skip_store(None, [dp, nothing]) and not skip_store(None, [sim, dp]) and not skip_store(None, [])
    assert not skip_store("/tmp/named.sqlite3", [sim])
    monkeypatch.setenv(STORE_ENV, "/tmp/named.sqlite3")
    assert not skip_store(None, [sim])


def test_raising_a_cap_needs_its_confirmation_and_the_log_marks_it_raised(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite3")
    data = ["--data", "sample:clinic", "--store", store]
    assert _cli(capsys, "budget", "set-cap", *data, "--epsilon", "2")[0] == 0
    rc, out, err = _cli(capsys, "budget", "set-cap", *data, "--epsilon", "3")
    assert rc == 2 and "confirm with --confirm-raise" in err + out
    assert BudgetOdometer(store).datasets()[0]["cap_epsilon"] == 2.0
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--epsilon", "3", "--confirm-raise")
    assert rc == 0 and "ε = 2, δ = 1e-05 → ε = 3, δ = 1e-05  (raised, confirmed)" in out, out
    assert "none → ε = 2, δ = 1e-05  by" in out and "none → ε = 2, δ = 1e-05  (raised" not in out
    rc, out, _ = _cli(capsys, "budget", "set-cap", *data, "--epsilon", "inf", "--confirm-raise")
    assert rc == 0 and out.startswith("cap removed for sample: clinic"), out
    assert math.isinf(BudgetOdometer(store).datasets()[0]["cap_epsilon"])


def test_the_cap_log_shows_the_newest_changes_and_counts_the_older_ones():
    from dpfed_core.cli.budget_cmd import cap_change_lines

    rows = [{"changed_at": f"t{i:02d}", "old_epsilon": None if i == 0 else float(i), "old_delta": 1e-5,
             "new_epsilon": float(i + 1), "new_delta": 1e-5, "raised": int(i > 0), "note": "", "actor": ""}
            for i in range(12)][::-1]
    lines = cap_change_lines(rows, limit=10)
    assert lines[0] == "cap changes (newest first):" and len(lines) == 12
    assert lines[1].startswith("  t11  ε = 11, δ = 1e-05 → ε = 12,") and lines[-1] == "  … 2 older change(s)"
    assert cap_change_lines(rows[:10], limit=10)[-1].startswith("  t02") and cap_change_lines([]) == []


def test_a_dry_run_allowed_to_release_non_private_data_is_still_refused_when_its_dp_releases_pass_the_cap(
        tmp_path, capsys, clinic):
    store = tmp_path / "s.sqlite3"
    BudgetOdometer(store).set_cap(clinic, 1.0, 1e-5)
    argv = ["run", "--data", "sample:clinic", "--method", "dp-popularity", "--compare", "central", "--epsilon", "3",
            "--dry-run", "--store", str(store), "--allow-non-private"]
    rc, out, _ = _cli(capsys, *argv)
    assert rc == 0 and "would be REFUSED" in out and "allowed by --allow-non-private" not in out, out
    rc, out, _ = _cli(capsys, *argv[:8], "0.1", *argv[9:])
    assert rc == 0 and "allowed by --allow-non-private" in out and "REFUSED" not in out, out


def test_budget_releases_lists_the_newest_limit_and_a_read_of_a_missing_store_creates_nothing(tmp_path, capsys,
                                                                                                clinic):
    store = tmp_path / "s.sqlite3"
    data = ["--data", "sample:clinic", "--store", str(store)]
    for verb in (["show"], ["releases"], ["show", "--json"]):
        rc, out, _ = _cli(capsys, "budget", *verb, *data)
        assert rc == 0 and "does not exist" in out or '"exists": false' in out, out
    assert not store.exists() and list(tmp_path.iterdir()) == []
    odo = BudgetOdometer(store)
    for eps in (0.5, 0.25):
        odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", eps, 1e-7,
                                            {e: (eps, 1e-7) for e in clinic.entity_names})]).close()
    rc, out, _ = _cli(capsys, "budget", "releases", *data, "--limit", "1")
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+ ", line)]
    assert rc == 0 and len(rows) == 1 and rows[0].split()[0] == "2" and " 0.25 " in rows[0], out


def test_a_dashboard_refusal_names_the_pages_controls_and_its_charge_never_allows_a_non_private_release(
        tmp_path, clinic):
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.config import RunConfig
    from dpfed_core.privacy.odometer import BudgetRefused
    from dpfed_core.privacy.store import Store
    from dpfed_core.ui import budget as bud

    path = tmp_path / "s.sqlite3"
    BudgetOdometer(path).set_cap(clinic, 1.0, 1e-5)
    plans = plan_run(clinic, RunConfig(method="central"))
    with pytest.raises(BudgetRefused) as exc:
        with bud.charge(Store(path), clinic, plans):
            pass
    text = bud.refusal_text(exc.value)
    assert bud.ALLOW_NON_PRIVATE_LABEL in text and "--allow-non-private" not in text, text
    assert BudgetOdometer(path).releases(clinic) == []
    with bud.charge(Store(path), clinic, plans, allow_non_private=True):
        pass
    assert all(b.void for b in BudgetOdometer(path).balance(clinic))


def test_the_budget_view_reads_the_account_of_the_key_it_is_given(tmp_path, clinic):
    """The History page shows a stored dataset by its key: its cap and releases, not those of the data loaded."""
    from dpfed_core.privacy.store import Store
    from dpfed_core.ui import budget as bud

    path = tmp_path / "s.sqlite3"
    odo = BudgetOdometer(path)
    other = load_data("sample:synthetic")
    key = odo.set_cap(other, 4.0, 1e-6)
    odo.set_cap(clinic, 2.0, 1e-5)
    view = bud.budget_view(Store(path), clinic, key)
    assert (view["key"], view["cap_epsilon"], view["cap_delta"]) == (key, 4.0, 1e-6)
    assert len(view["entities"]) == other.n_entities
    assert bud.budget_view(Store(path), clinic)["cap_epsilon"] == 2.0


def test_the_accountant_record_names_every_entity_a_non_private_release_reached(tmp_path, clinic):
    from dpfed_core.evaluation.budget import accountant_record
    from dpfed_core.privacy.store import Store

    path = tmp_path / "s.sqlite3"
    odo = BudgetOdometer(path)
    a, b = clinic.entity_names[:2]
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in (a, b)}),
                         PlannedRelease("audit", "kmeans", math.inf, 0.0, {b: (math.inf, 0.0)})]).close()
    rec = accountant_record(Store(path), clinic)
    assert rec["non_private_entities"] == [b] and rec["spent_epsilon"] == pytest.approx(1.0)


def test_a_simulation_is_charged_as_non_private_on_peoples_records_and_not_on_a_generated_sample(clinic):
    from dpfed_core.evaluation.budget import simulation_is_non_private

    assert not simulation_is_non_private(clinic) and simulation_is_non_private(_three_entities())


def test_a_gaussian_method_at_delta_zero_is_refused_naming_delta_and_a_non_private_or_laplace_one_is_not():
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.budget import check_gaussian_delta

    with pytest.raises(ConfigError, match="δ > 0") as exc:
        check_gaussian_delta(["local", "dp-popularity"], 1.0, 0.0)
    assert exc.value.param == "delta" and "dp-popularity adds Gaussian noise" in str(exc.value)
    check_gaussian_delta(["dp-popularity"], math.inf, 0.0)
    check_gaussian_delta(["dp-popularity"], 1.0, 1e-300)
    check_gaussian_delta(["dp-gaussian", "central"], 1.0, 0.0)


def test_a_sweep_point_its_plan_did_not_list_is_charged_after_it_ran(tmp_path, clinic):
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.budget import plan_sweep, settle_sweep

    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6)
    res = odo.reserve(clinic, plan_sweep(clinic, cfg, [1.0], [0], references=[]))
    doc = {"config": {"method": "dp-popularity", "delta": 1e-6},
           "runs": [{"method": "dp-popularity", "epsilon": 1.0, "seed": 0},
                    {"method": "dp-popularity", "epsilon": 2.0, "seed": 0}]}
    (extra,) = settle_sweep(odo, res, clinic, doc)
    res.close()
    assert (extra.method, extra.epsilon) == ("dp-popularity", 2.0)
    rows = odo.releases(clinic)
    assert sorted(r["epsilon"] for r in rows) == [1.0, 2.0]
    assert "ran outside the sweep's plan" in next(r["note"] for r in rows if r["epsilon"] == 2.0)
    assert settle_sweep(odo, res, clinic, {**doc, "runs": doc["runs"][:1]}) == []


def test_a_charged_release_is_kept_in_the_history_with_its_operation(tmp_path, capsys, clinic):
    from dpfed_core.cli.budget_cmd import record_release
    from dpfed_core.evaluation.history import RunHistory

    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    key = odo.register(clinic)
    res = odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6,
                                              {e: (1.0, 1e-6) for e in clinic.entity_names})], key=key)
    res.close()
    doc = {"config": {"method": "dp-gaussian", "epsilon": 1.0}, "privacy": {"epsilon": 1.0}}
    record_release("run", doc, odo, RunHistory(odo.store), key, res, clinic)
    (entry,) = RunHistory(odo.store).list()
    assert (entry["kind"], entry["operation"], entry["dataset_key"]) == ("run", res.operation, key)
    assert doc["odometer"]["releases"] == res.release_ids
    assert doc["privacy"]["accountant"]["spent_epsilon"] == pytest.approx(1.0)
    assert "has spent ε = 1 at δ = 1e-05" in capsys.readouterr().out


def test_the_dashboard_asks_to_confirm_a_larger_delta_as_a_raise(tmp_path, clinic):
    """A larger δ under the same ε is more budget for the same people: the form warns and asks for the raise's
    own confirmation, as it does for a larger ε."""
    from dpfed_core.ui import budget as bud

    path = tmp_path / "s.sqlite3"
    BudgetOdometer(path).set_cap(clinic, 2.0, 1e-6)
    at = _budget_section(path)
    at.number_input[1].set_value(1e-5)
    at.button[0].click().run()
    assert not at.exception and any("more budget" in w.value for w in at.warning)
    next(b for b in at.button if b.label == bud.CONFIRM_RAISE_LABEL).click().run()
    assert not at.exception and not at.error
    (row,) = BudgetOdometer(path).datasets()
    assert (row["cap_epsilon"], row["cap_delta"]) == (2.0, 1e-5)


@pytest.mark.parametrize("delta", ["1_0e-6", "１e-5", "0x1p-17", "inf", "nan"])
def test_set_cap_reads_its_delta_as_every_number_flag_and_refuses_what_python_alone_would_take(delta, tmp_path,
                                                                                                capsys):
    """'1_0e-6' is no δ of 1e-5, nor full-width digits a number: refused naming --delta, and no cap is set."""
    store = tmp_path / "s.sqlite3"
    rc, out, err = _cli(capsys, "budget", "set-cap", "--data", "sample:clinic", "--store", str(store), "--epsilon", "5",
                        "--delta", delta)
    assert rc == 2 and "argument --delta" in err + out
    assert not store.exists()


def test_the_dashboards_cap_form_holds_a_cap_set_on_the_command_line_outside_its_usual_range(tmp_path, clinic):
    """set-cap accepts ε below 0.01 and δ up to just under 0.01: the History page shows such a cap and lowers it
    further, where its form refused its own starting value with a traceback."""
    path = tmp_path / "s.sqlite3"
    BudgetOdometer(path).set_cap(clinic, 0.005, 0.00995)
    at = _budget_section(path)
    assert not at.exception and not at.error
    assert any("Current cap:** ε = 0.005, δ = 0.00995" in m.value for m in at.markdown)
    at.number_input[0].set_value(0.004)
    at.button[0].click().run()
    next(b for b in at.button if b.label == "Confirm").click().run()
    assert not at.exception and not at.error
    (row,) = BudgetOdometer(path).datasets()
    assert (row["cap_epsilon"], row["cap_delta"]) == (0.004, 0.00995)


def test_a_cap_refused_below_the_spend_at_its_smaller_delta_says_the_spend_is_stated_at_that_delta(tmp_path, clinic):
    """The same releases state a larger ε at a smaller δ: a new cap of a smaller δ is checked against that
    larger spend, and its refusal says so — or its figure would contradict the spend `budget show` states."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.privacy.odometer import BudgetRefused

    odo = BudgetOdometer(tmp_path / "s.sqlite3")
    odo.set_cap(clinic, 5.0, 1e-5)
    odo.reserve(clinic, plan_run(clinic, RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6))).close()
    now = max(b.spent_epsilon for b in odo.balance(clinic))
    with pytest.raises(BudgetRefused) as exc:
        odo.set_cap(clinic, now * 1.01, 1e-8)
    text = str(exc.value)
    assert "at this cap's δ = 1e-08 (the current cap's δ = 1e-05 states a smaller spend" in text, text
    assert text.endswith(", or a δ nearer 1e-05") and exc.value.param == "epsilon"
    with pytest.raises(BudgetRefused) as exc:
        odo.set_cap(clinic, now * 0.99, 1e-5)
    assert "at this cap's δ = 1e-05)" in str(exc.value) and "nearer" not in str(exc.value)
    assert odo.cap(odo.key_of(clinic)) == (5.0, 1e-5)


def test_a_planned_charge_and_a_cap_refusal_never_state_a_cap_above_the_one_set(tmp_path, clinic):
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.budget import plan_run, planned_charge
    from dpfed_core.privacy.odometer import BudgetRefused

    store = tmp_path / "s.sqlite3"
    odo = BudgetOdometer(store)
    odo.set_cap(clinic, ODD_CAP, 1e-5)
    over = planned_charge(store, clinic, plan_run(clinic, RunConfig(method="dp-popularity", epsilon=3.0)))
    assert "more than is left (cap ε = 1.234): it will be refused" in over["text"], over["text"]
    exact = planned_charge(store, clinic, plan_run(clinic, RunConfig(method="central")))
    assert "under the cap ε = 1.234: refused unless" in exact["text"], exact["text"]
    with pytest.raises(BudgetRefused, match=r"from ε = 1\.234, δ = 1e-05 to ε = 2\.345, δ"):
        odo.set_cap(clinic, 2.3456789, 1e-5)


def test_the_dashboard_says_when_no_run_like_the_last_fits_under_the_cap(tmp_path, clinic):
    path = tmp_path / "s.sqlite3"
    odo = BudgetOdometer(path)
    odo.set_cap(clinic, 1.5, 1e-5)
    odo.reserve(clinic, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6,
                                        {e: (1.0, 1e-6) for e in clinic.entity_names})]).close()
    at = _budget_section(path)
    assert not at.exception and not at.error
    (line,) = [c.value for c in at.caption if c.value.startswith("Runs left:")]
    assert line.startswith("Runs left: none — another release like the last operation (run of dp-gaussian at ε = 1")
    assert "0 more" not in line
