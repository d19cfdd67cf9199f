"""Dashboard helpers without a browser: cache keys over the whole dataset, the job cache
(progress outside any Streamlit cache, one job per key across sessions), budget checks, messages in
the page's words, the column mapper, the per-owner history store, verdicts and the ε planner."""
from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError, DataError
from dpfed_core.ui import engine as dash
from dpfed_core.ui import history
from dpfed_core.ui.jobs import JobCache, fraction_of


def tiny(name="t", notes=None, user_ids=None, item_names=None, value=1.0) -> FederatedDataset:
    X = sp.csr_matrix(np.array([[value, 0, 2], [0, 1, 0], [1, 1, 0], [0, 0, 3]], float))
    return FederatedDataset.from_parts(X, np.array(["A", "A", "B", "B"]), user_ids=user_ids,
                                       item_names=item_names, value_kind="counts", value_max=5, name=name,
                                       notes=notes)


# ------------------------------------------------------------------------------ cache keys
def test_fingerprint_covers_the_whole_dataset():
    base = dash.dataset_fingerprint(tiny())
    assert base == dash.dataset_fingerprint(tiny())
    variants = [tiny(name="other"), tiny(notes=["a note"]), tiny(value=2.0),
                tiny(user_ids=np.array(["u0", "u1", "u2", "LAST"])),
                tiny(item_names=np.array(["i0", "i1", "renamed"]))]
    keys = {dash.dataset_fingerprint(v) for v in variants}
    assert base not in keys and len(keys) == len(variants)


def test_fingerprint_sees_ids_beyond_the_first_fifty():
    n = 120
    X = sp.csr_matrix(np.ones((n, 2)))
    ent = np.repeat(["A", "B"], n // 2)
    ids = np.array([f"u{i}" for i in range(n)])
    a = FederatedDataset.from_parts(X, ent, user_ids=ids, value_max=1)
    ids2 = ids.copy()
    ids2[-1] = "someone else"
    b = FederatedDataset.from_parts(X, ent, user_ids=ids2, value_max=1)
    assert dash.dataset_fingerprint(a) != dash.dataset_fingerprint(b)


def test_run_key_covers_the_whole_config():
    ds = tiny()
    cfg = RunConfig(method="kmeans", k=1)
    keys = {dash.run_key(ds, c) for c in (cfg, cfg.replace(seed=1), cfg.replace(simulation=True),
                                         cfg.replace(prototype_params={"x": 1}), cfg.replace(n_hidden=3))}
    assert len(keys) == 5


# ------------------------------------------------------------------------------ jobs
def test_progress_fraction_of_events():
    assert fraction_of("sweep_step", {"done": 3, "total": 4}) == 0.75
    assert fraction_of("round1_start", {"index": 0, "total": 2}) == 0.0
    assert fraction_of("round1_done", {"index": 1, "total": 2}) == pytest.approx(0.6)
    assert fraction_of("evaluate_done", {}) == 1.0
    assert fraction_of("something", {}) is None


def test_job_cache_runs_a_key_once_across_concurrent_callers():
    cache = JobCache()
    calls = []
    gate = threading.Event()

    def work(progress):
        calls.append(1)
        for i in range(4):
            progress("sweep_step", done=i + 1, total=4)
        gate.wait(5)
        return "result"

    jobs = []
    threads = [threading.Thread(target=lambda: jobs.append(cache.submit("k", work, "x"))) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gate.set()
    assert all(j.wait(5) for j, _ in jobs)
    assert len(calls) == 1  # 20 "sessions", one computation
    assert sum(1 for _, existed in jobs if not existed) == 1
    assert {j.result for j, _ in jobs} == {"result"}
    job = jobs[0][0]
    assert job.fraction == 1.0 and "100%" in job.status_text()
    # once more later: served from the cache
    again, existed = cache.submit("k", work, "x")
    assert existed and again.result == "result" and len(calls) == 1


def test_failed_job_is_not_kept():
    cache = JobCache()
    n = []

    def bad(progress):
        n.append(1)
        raise ConfigError("broken input")

    j, _ = cache.submit("bad", bad)
    j.wait(5)
    assert isinstance(j.error, ConfigError)
    j2, existed = cache.submit("bad", bad)
    j2.wait(5)
    assert not existed and len(n) == 2


def test_job_time_left():
    cache = JobCache()
    release = threading.Event()

    def slow(progress):
        progress("sweep_step", done=1, total=4)
        release.wait(5)
        return 1

    j, _ = cache.submit("slow", slow)
    time.sleep(0.2)
    assert j.fraction == 0.25 and j.seconds_left() is not None and j.seconds_left() > 0
    assert "25%" in j.status_text() and "left" in j.status_text()
    release.set()
    j.wait(5)


def test_a_jobs_fraction_never_passes_one_nor_moves_back_and_its_time_left_extrapolates_it():
    from dpfed_core.ui.jobs import Job

    assert fraction_of("sweep_step", {"done": 5, "total": 4}) == 1.0
    job = Job(key="k", label="x")
    job.progress("sweep_step", done=3, total=4)
    job.progress("sweep_step", done=1, total=4)  # a late event of an earlier step
    assert job.fraction == 0.75 and job.last_info == {"done": 1, "total": 4}
    job = Job(key="k", label="x", started=time.monotonic() - 10.0)
    job.fraction = 0.25  # a quarter done in 10 s: three quarters left take about 30 s
    before = job.elapsed
    left = job.seconds_left()
    after = job.elapsed  # the clock runs between the reads: the estimate lies between the two
    assert 3 * before <= left <= 3 * after
    assert 29.0 < job.seconds_left() < 32.0


def test_the_job_cache_drops_a_failed_job_keeps_a_running_one_and_evicts_the_least_recently_used():
    def wait_for(job):
        assert job.wait(5)
        return job

    cache = JobCache()
    failed, _ = cache.submit("bad", lambda progress: 1 / 0)
    wait_for(failed)
    assert isinstance(failed.error, ZeroDivisionError)
    assert cache.get("bad") is None and len(cache) == 0
    cache = JobCache(max_entries=1)
    gate = threading.Event()
    running, _ = cache.submit("running", lambda progress: gate.wait(5))
    done, _ = cache.submit("quick", lambda progress: 1)
    wait_for(done)
    assert cache.get("running") is running  # never evicted while it runs
    gate.set()
    wait_for(running)
    cache = JobCache(max_entries=2)
    a, _ = cache.submit("a", lambda progress: "a")
    b, _ = cache.submit("b", lambda progress: "b")
    wait_for(a), wait_for(b)
    assert cache.get("a") is a  # read last: "b" is now the least recently used
    wait_for(cache.submit("c", lambda progress: "c")[0])
    assert cache.get("b") is None and cache.get("a") is a and cache.get("c") is not None


# ------------------------------------------------------------------------------ budget checks
@pytest.mark.parametrize("eps, delta, needle", [
    ("1e50", "1e-6", "above 10000"), ("1e300", "1e-6", "above"), ("0", "1e-6", "positive"),
    ("1", "0.5", "refused"), ("1", "0.01", "refused"), ("1", "abc", "δ must be a number"),
    ("1", "-1", "≥ 0"), ("1e-7", "1e-6", "below 1e-06"), ("inf", "1", "below 1"),
])
def test_bad_budget_is_refused_before_a_run(eps, delta, needle):
    with pytest.raises(ConfigError, match=needle):
        dash.check_budget(eps, delta, delta_control="“δ”")


def test_good_budgets():
    assert dash.check_budget("1", "1e-6")[:2] == (1.0, 1e-6)
    eps, delta, warn = dash.check_budget("inf", "0.5")  # non-private: δ is irrelevant
    assert math.isinf(eps)
    assert dash.check_budget("1", "1e-3")[2], "a large δ is warned"


def test_the_largest_epsilon_is_accepted_and_a_typed_grid_is_read_in_ascending_order():
    from dpfed_core.config import MAX_EPSILON
    from dpfed_core.ui.inputs import parse_grid

    assert dash.check_budget(str(MAX_EPSILON), "1e-6")[0] == MAX_EPSILON
    assert parse_grid("10; 0.1, inf, 1") == [0.1, 1.0, 10.0, math.inf]


# ------------------------------------------------------------------------------ messages
def test_messages_name_the_page_controls_not_code_parameters():
    msg = dash.friendly_message(DataError(
        "use drop_missing=True, entity_transform='prefix:1' or small_entities='drop'; min_entity_users too high"))
    for code in ("drop_missing", "entity_transform", "small_entities", "min_entity_users"):
        assert code.replace("_", "\\_") not in msg and code not in msg
    assert "Rows with a missing value" in msg and "Derived as" in msg and "Entities below the minimum" in msg


def test_a_placeholder_the_engine_writes_for_the_cli_is_the_control_alone_on_the_page():
    """``items=FILE`` is the CLI's ``--items FILE``; on a page the upload is the control, and "set to
    FILE" would name a value nobody can type. A real value stays: ``entity_transform='prefix:1'``."""
    from dpfed_core.ui.inputs import CONTROL_NAMES

    text = dash.friendly_text("declare the catalogue (items=FILE) to share every item; or entity_transform='prefix:1'")
    plain = text.replace("\\", "")
    assert f"declare the catalogue ({CONTROL_NAMES['items']}) to share every item" in plain
    assert "FILE" not in plain and "set to prefix:1" in plain


def test_an_angle_bracketed_placeholder_is_the_control_alone_on_the_page():
    """The eICU loader writes ``events=<table>`` for a table the directory lacks: on the Data page that is
    the multiselect itself, not "set to <table>"."""
    from dpfed_core.ui.inputs import CONTROL_NAMES

    plain = dash.friendly_text("Choose the event table(s) with events=<table>.").replace("\\", "")
    assert plain == f"Choose the event table(s) with {CONTROL_NAMES['events']}.", plain


def test_an_error_naming_its_parameter_points_at_the_control_that_sets_it():
    msg = dash.friendly_message(ConfigError("must be at least 2, got 1", param="rank"))
    assert msg.startswith("must be at least 2, got 1") and "set it with" in msg and "rank ℓ" in msg
    said = dash.friendly_message(ConfigError("“rank ℓ” on the Federate page must be at least 2", param="rank"))
    assert "set it with" not in said  # the control already named is not named twice


def test_a_message_naming_several_controls_names_each_page_once():
    msg = dash.friendly_message(ConfigError(
        "lower n_hidden to at most 3 and raise test_fraction above 0.1, or set epsilon=3, max_iter=50 and seeds=4",
        param="test_fraction")).replace("\\", "")
    assert msg.count("on the Federate page") == 1 and msg.count("on the Trade-off page") == 1
    assert msg.startswith("lower “Hidden entries per test user” (Advanced) on the Federate page to at most 3 "
                          "and raise “Test users per entity” (Advanced) above 0.1")
    assert "“ε per entity” set to 3, “Server / MF iterations” (Advanced) set to 50" in msg
    assert "set it with" not in msg


def test_user_strings_are_escaped():
    s = dash.escape_md("![x](http://example.org/a.png) <img src=x onerror=1> :red[hi] **b**")
    import re

    for raw in (r"!\[", r"\]\(", "<img", r":red\[", r"\*\*"):
        assert not re.search(r"(?<!\\)" + raw, s), raw
    assert "://" not in s.replace("\\", "") and "www." not in dash.escape_md("see www.example.org")


def test_a_name_that_reads_as_a_list_item_or_a_heading_is_escaped_at_its_start():
    import re

    assert dash.escape_md("- not a bullet") == "\\- not a bullet"
    assert dash.escape_md("12. not a numbered item") == "12\\. not a numbered item"  # shown as typed
    assert dash.escape_md("0.9% sodium chloride") == "0\\.9% sodium chloride"
    assert not re.match(r"\d+[.)]", dash.escape_md("3) nor this"))
    assert dash.escape_md("+ x").startswith("\\+") and dash.escape_md("> quote").startswith("\\>")
    assert dash.escape_md("St.-Luke 7") == "St.-Luke 7"  # inner hyphens and dots stay as they read


def test_path_errors_never_list_a_directory(tmp_path):
    (tmp_path / ".ssh").mkdir()
    (tmp_path / "secret.txt").write_text("x")
    for kind in ("movielens", "eicu"):
        with pytest.raises(DataError) as e:
            dash.check_data_dir(str(tmp_path), kind)
        assert ".ssh" not in str(e.value) and "secret" not in str(e.value)
        with pytest.raises(DataError) as e:
            dash.check_data_dir(str(tmp_path / "nope"), kind)
        assert ".ssh" not in str(e.value)
    assert "found" not in dash.safe_loader_message(DataError("no u.data in /x (found: .ssh, .bashrc)."))


def test_a_loader_error_shown_under_a_path_box_names_no_file_of_the_directory(tmp_path):
    """The loaders list what a directory holds so the person at the command line sees what is there;
    under the Data page's path boxes no file or table name of the typed directory is shown, dotted
    names included, and the sentence around the listing survives."""
    from dpfed_core.data.eicu import load_eicu
    from dpfed_core.data.loaders import load_data
    from dpfed_core.data.movielens import load_movielens

    eicu = tmp_path / "eicu"
    eicu.mkdir()
    (eicu / "hospital.csv").write_text("hospitalid,region\n1,West\n")
    (eicu / "patient.csv").write_text("patientunitstayid,hospitalid\n1,1\n")
    for name in ("lab.csv", "medication.csv", "private_notes_of_dr_x.csv"):
        (eicu / name).write_text("patientunitstayid,x\n1,a\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "private_notes_of_dr_x.csv").write_text("a\n")
    (other / "payroll.2026.xlsx").write_text("a\n")
    for load in (lambda: load_eicu(eicu, event_table="treatment"), lambda: load_movielens(other),
                 lambda: load_data(str(other))):
        with pytest.raises(DataError) as e:
            load()
        assert "private_notes_of_dr_x" in str(e.value)          # the command line still lists them
        shown = dash.safe_loader_message(e.value)
        for name in ("private_notes", "payroll", "lab.csv", "medication.csv", "xlsx",
                     "tables here"):
            assert name not in shown, (name, shown)
        assert shown.strip() and "Found" not in shown
    with pytest.raises(DataError) as e:
        load_eicu(eicu, event_table="treatment")
    assert "Choose the event table" in dash.safe_loader_message(e.value)  # the advice stays, without the names
    # a message from elsewhere: its listing runs to the end of its sentence, dotted names and all
    said = dash.safe_loader_message(DataError("No table here. Found: a.csv, b.tsv.gz. Check the path."))
    assert "csv" not in said and "tsv" not in said and "Check the path." in said


# ------------------------------------------------------------------------------ mapping
def test_headerless_table_is_detected():
    data = b"196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n"
    df, no_header = dash.read_upload(data, "log.tsv")
    assert no_header and len(df) == 3 and list(df.columns)[0] == "column 1"
    assert list(dash.read_upload(data, "u.data")[0].columns)[0] == "user id"  # a known format's names
    assert df.iloc[0, 0] == "196"
    df2, no_header2 = dash.read_upload(b"user,item,value,entity\n1,2,3,A\n", "t.csv")
    assert not no_header2


def test_mapper_never_guesses_one_column_twice():
    g = dash.guess_mapping(["patientunitstayid", "drugname", "hospitalid", "count"])
    assert g["user"] == "patientunitstayid" and g["item"] == "drugname" and g["entity"] == "hospitalid"
    g = dash.guess_mapping(["patientunitstayid", "hospitalid"] + ["x"])
    chosen = [v for v in g.values() if v]
    assert len(chosen) == len(set(chosen))


def test_mapping_problems_user_item_entity_distinct():
    assert dash.mapping_problems("a", "a", "c", None, None)
    assert dash.mapping_problems("a", "b", "a", None, None)
    assert dash.mapping_problems("a", "b", "b", None, None)
    assert dash.mapping_problems("a", "b", "c", "a", None)
    assert dash.mapping_problems("a", "b", "c", "d", None) == []


# ------------------------------------------------------------------------------ history store
def test_history_is_per_owner_and_survives(tmp_path, monkeypatch):
    from dpfed_core.evaluation.budget import plan_run, settle_run
    from dpfed_core.evaluation.experiments import run_method
    from dpfed_core.privacy.odometer import BudgetOdometer

    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds, other = tiny(), tiny(value=4.0)  # another upload: other content
    cfg = RunConfig(method="kmeans", k=1, rank=2, seed=0, max_iter=20, test_fraction=0.5, n_hidden=1)
    doc, res = history.charged(ds, plan_run(ds, cfg), lambda: run_method(ds, cfg),
                               settle=lambda r, out: settle_run(r, [out[0]]))
    rid = history.save(ds, "run", doc, res)
    history.save(other, "sweep", {"config": {}, "runs": []})
    assert [e.id for e in history.list_entries(ds)] == [rid]
    assert history.load(other, rid) is None  # another owner's result is invisible
    stored = history.load(ds, rid)
    doc2, res2, cfg2 = history.restored_run(stored)
    np.testing.assert_array_equal(res2.U, res.U)
    np.testing.assert_array_equal(res2.V, res.V)
    assert dash.config_key(cfg2) == dash.config_key(cfg)
    assert doc2["overall"]["mar"] == doc["overall"]["mar"]
    assert len(res2.model.releases_) == ds.n_entities
    # the run was recorded by the odometer (kmeans: non-private, so a release without a DP charge)
    store, key = history.owner_store(ds)
    assert len(BudgetOdometer(store).releases(key)) == 1
    assert history.delete(ds, rid) and not history.list_entries(ds)


def test_a_stored_result_comes_back_with_both_infinities_as_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds = tiny()
    doc = {"config": {"epsilons": [1.0, math.inf]}, "runs": [{"epsilon": math.inf, "gap": -math.inf, "name": "inf run"}]}
    got = history.load(ds, history.save(ds, "sweep", doc))["doc"]
    assert got["config"]["epsilons"] == [1.0, math.inf]
    assert got["runs"] == [{"epsilon": math.inf, "gap": -math.inf, "name": "inf run"}]


def test_another_owner_cannot_delete_a_stored_result(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds, other = tiny(), tiny(value=4.0)
    rid = history.save(ds, "sweep", {"config": {}, "runs": []})
    assert history.delete(other, rid) is False
    assert history.load(ds, rid) is not None and [e.id for e in history.list_entries(ds)] == [rid]


def _factors_result(seed: int = 0):
    """A run's result as :func:`history.save` reads it: the factors and one released prototype block
    per entity, with values no other run shares."""
    from types import SimpleNamespace

    from dpfed_core.models.entity_factors import EntityFactors

    rng = np.random.default_rng(seed)
    factors = EntityFactors(rng.random((4, 2)), rng.random((3, 2)))
    releases = [SimpleNamespace(prototypes=rng.random((2, 3))) for _ in range(2)]
    return SimpleNamespace(entity_factors=lambda: factors, model=SimpleNamespace(releases_=releases))


def test_the_history_lists_an_owners_results_of_one_kind_newest_first_up_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds = tiny(name="clinic")
    run_doc = {"config": {"method": "kmeans", "k": 1}, "dataset": {"name": "clinic"}}
    sweep_doc = {"config": {"method": "kmeans"}, "epsilons": [1.0], "runs": [], "dataset": {"name": "clinic"}}
    first = history.save(ds, "run", run_doc)
    sweep = history.save(ds, "sweep", sweep_doc)
    last = history.save(ds, "run", run_doc)
    entries = history.list_entries(ds)
    assert [e.id for e in entries] == [last, sweep, first]
    assert [e.id for e in history.list_entries(ds, "run")] == [last, first]
    assert [e.id for e in history.list_entries(ds, "sweep")] == [sweep]
    assert [e.id for e in history.list_entries(ds, limit=2)] == [last, sweep]
    assert [e.dataset for e in entries] == ["clinic"] * 3 and [e.kind for e in entries] == ["run", "sweep", "run"]
    # a reopened result carries the label and the time it was listed under
    stored = history.load(ds, sweep)
    assert (stored["label"], stored["created"]) == (entries[1].label, entries[1].created)
    assert stored["label"].startswith("sweep of kmeans")


def test_only_a_run_keeps_its_factors_and_a_deleted_run_leaves_none_in_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds, res = tiny(), _factors_result()
    rid = history.save(ds, "run", {"config": {"method": "kmeans", "k": 1}}, res)
    sid = history.save(ds, "sweep", {"config": {"method": "kmeans"}, "runs": []}, res)
    assert history.load(ds, sid)["arrays"] == {}  # a sweep reopens its document, never a run's factors
    arrays = history.load(ds, rid)["arrays"]
    np.testing.assert_array_equal(arrays["U"], res.entity_factors().U)
    for h, rel in enumerate(res.model.releases_):
        np.testing.assert_array_equal(arrays[f"P{h}"], rel.prototypes)
    assert history.delete(ds, rid) and history.load(ds, rid) is None
    store, _ = history.owner_store(ds)
    with store.read() as con:  # the deleted run's user factors are gone from the file, not only unlisted
        assert con.execute("SELECT COUNT(*) FROM dashboard_arrays WHERE history_id = ?", (rid,)).fetchone()[0] == 0


def test_a_reopened_run_keeps_its_message_log_and_its_configuration_with_an_infinite_epsilon(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds = tiny()
    message = {"round": 1, "sender": "A", "receiver": "server", "shape": [2, 3], "bytes": 48}
    doc = {"config": {"method": "kmeans", "k": 1, "epsilon": math.inf, "compare": ["central"]},  # not a setting
           "dataset": {"name": "t"}, "messages": [message]}
    _, result, config = history.restored_run(history.load(ds, history.save(ds, "run", doc, _factors_result())))
    assert config.epsilon == math.inf and config.method == "kmeans"
    assert [vars(m) for m in result.messages] == [message]


def test_a_run_stored_without_factors_says_where_they_stayed():
    deployed = {"kind": "run", "config": {}, "arrays": {}, "doc": {"deployment": {"supernodes": 3}}}
    with pytest.raises(ValueError, match="a Flower deployment: each entity's user factors stayed at its node"):
        history.restored_run(deployed)
    with pytest.raises(ValueError, match="the command line, which keeps no factors"):
        history.restored_run({**deployed, "doc": {}})


def test_a_charged_computation_is_settled_with_its_result_and_a_non_private_one_past_a_cap_is_refused(
        tmp_path, monkeypatch):
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.privacy.budget_records import BudgetRefused
    from dpfed_core.privacy.odometer import BudgetOdometer

    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds = tiny()
    plans = plan_run(ds, RunConfig(method="kmeans", k=1, rank=2, seed=0, max_iter=20, test_fraction=0.5, n_hidden=1))
    seen = []
    assert history.charged(ds, plans, lambda: "result", settle=lambda res, out: seen.append(out)) == "result"
    assert seen == ["result"]  # the reservation is settled with what the body computed
    store, key = history.owner_store(ds)
    BudgetOdometer(store).set_cap(key, 5.0)
    ran = []
    with pytest.raises(BudgetRefused, match="non-private"):
        history.charged(ds, plans, lambda: ran.append(1))
    assert ran == []  # refused before anything is computed
    assert history.charged(ds, plans, lambda: "allowed", allow_non_private=True) == "allowed"


def test_a_simulations_planned_charge_and_a_cached_result_read_no_store(tmp_path, monkeypatch):
    from dpfed_core.privacy.budget_records import PlannedRelease

    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"garbage" * 500)
    monkeypatch.setenv("DPFED_STORE", str(bad))
    ds = tiny()

    def plan(simulation):
        return [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {"A": (1.0, 1e-6), "B": (1.0, 1e-6)}, seed=0,
                               simulation=simulation)]

    assert "nothing is charged" in history.planned_charge_text(ds, plan(True))
    assert "nothing new spent" in history.planned_charge_text(ds, plan(False), cached=True)
    assert history.planned_charge_text(ds, plan(False)).startswith("planned charge unknown")  # said, not raised


def test_a_result_saved_under_a_given_owner_key_is_read_under_that_key(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds = tiny()
    sid = history.save(ds, "sweep", {"config": {}, "runs": []}, key="account-of-these-people")
    assert history.list_entries(ds) == []
    assert [e.id for e in history.list_entries(ds, key="account-of-these-people")] == [sid]
    assert history.load(ds, sid) is None and history.load(ds, sid, key="account-of-these-people") is not None


def test_the_dashboard_charges_the_store_the_command_line_caps(tmp_path, monkeypatch, capsys):
    """No $DPFED_STORE: the cap set with `budget set-cap` binds the dashboard's runs (the same file),
    and a copy of the data read another way is refused there too."""
    import pandas as pd

    from dpfed_core.cli.main import main
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.privacy.odometer import BudgetRefused

    monkeypatch.delenv("DPFED_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    rng = np.random.default_rng(0)
    rows = [(f"u{u}", f"item{i}", int(rng.integers(1, 6)), "AB"[u % 2])
            for u in range(60) for i in rng.choice(40, 8, replace=False)]
    table = pd.DataFrame(rows, columns=["user", "item", "rating", "site"])
    table.to_csv(tmp_path / "t.csv", index=False)
    table.sample(frac=1.0, random_state=1)[["site", "rating", "item", "user"]].to_csv(tmp_path / "copy.tsv",
                                                                                    sep="\t", index=False)
    cols = ["--user-col", "user", "--item-col", "item", "--value-col", "rating", "--entity-col", "site",
            "--entities-from-data"]
    assert main(["budget", "set-cap", "--data", str(tmp_path / "t.csv"), *cols, "--epsilon", "1"]) == 0
    copy = load_data(str(tmp_path / "copy.tsv"), user_col="user", item_col="item", value_col="rating",
                     entity_col="site")
    store, _ = history.owner_store(copy)
    assert store.path == tmp_path / "xdg" / "dpfed" / "dpfed.sqlite3"
    ran = []
    with pytest.raises(BudgetRefused):
        history.charged(copy, plan_run(copy, RunConfig(method="dp-popularity", epsilon=2.0)), lambda: ran.append(1))
    assert ran == []


def test_budget_cap_refuses_before_computing(tmp_path, monkeypatch):
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused

    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds = tiny()
    store, key = history.owner_store(ds)
    BudgetOdometer(store).set_cap(ds, 1.0, 1e-5)
    cfg = RunConfig(method="dp-gaussian", epsilon=2.0, k=1, rank=2)
    ran = []
    with pytest.raises(BudgetRefused):
        history.charged(ds, plan_run(ds, cfg), lambda: ran.append(1))
    assert ran == []


# ------------------------------------------------------------------------------ verdicts, planner
def _doc(vals: dict[str, float], eps=1.0):
    return {"entities": [{"name": k, "mar": v} for k, v in vals.items()], "privacy": {"epsilon": eps}}


def test_entity_verdict_counts():
    docs = {"dp-gaussian": _doc({"A": 0.2, "B": 0.4, "C": 0.3}),
            "individual": _doc({"A": 0.3, "B": 0.3, "C": 0.3})}
    v = dash.entity_verdict(docs, "dp-gaussian", "mar")
    r = v["baselines"]["individual"]
    assert (r["better"], r["worse"], r["tie"]) == (1, 1, 1)
    assert "of 3" in dash.verdict_sentence(v) and "ε = 1" in dash.verdict_sentence(v)


def _sweep(points: dict[float, list[float]], central: list[float], individual: list[float]):
    runs = []
    for eps, vals in points.items():
        for s, v in enumerate(vals):
            runs.append({"method": "dp-gaussian", "epsilon": eps, "seed": s, "overall": {"mar": v},
                         "entities": [{"name": "A", "mar": v}, {"name": "B", "mar": v + 0.01}]})
    for m, vals in (("central", central), ("individual", individual)):
        for s, v in enumerate(vals):
            runs.append({"method": m, "epsilon": math.inf, "seed": s, "overall": {"mar": v},
                         "entities": [{"name": "A", "mar": v}, {"name": "B", "mar": v}]})
    return {"config": {"method": "dp-gaussian"}, "runs": runs, "epsilons": list(points),
            "seeds": [0, 1], "references": ["central", "individual"]}


def test_epsilon_planner_and_crossing():
    doc = _sweep({0.1: [0.40, 0.41], 1.0: [0.30, 0.31], 10.0: [0.205, 0.206], math.inf: [0.2, 0.2]},
                 central=[0.2, 0.2], individual=[0.32, 0.33])
    plan = dash.epsilon_for_utility(doc, "mar", 0.05)
    assert plan["epsilon"] == 10.0 and plan["reference"] == "central"
    assert dash.epsilon_for_utility(doc, "mar", 0.0)["epsilon"] is None or True
    v = dash.sweep_entity_verdict(doc, 1.0, "mar")
    assert v["H"] == 2 and v["baselines"]["individual"]["better"] + v["baselines"]["individual"]["tie"] == 2
    assert "ε ≈ 1" in dash.pays_from_sentence(dash.sweep_crossing(doc, "mar", "individual"), baseline="individual")


def test_a_crossing_beyond_one_sd_but_inside_its_t_interval_is_called_weak_evidence():
    """The crossing rule (mean beyond one sd) and the per-entity counts (95 % t interval) must not read as
    "pays" over "inconclusive" without a word: the headline says when its difference is inside the
    interval the counts use."""
    from dpfed_core.evaluation.verdicts import pays_from_sentence

    two = {"epsilon": 1.0, "mean": 0.01, "sd": 0.008, "n": 2, "state": "beats"}
    text = pays_from_sentence(1.0, effect=two)
    assert "pays from ε ≈ 1" in text and "Weak evidence" in text and "over 2 seeds (± 0.072)" in text
    five = {**two, "sd": 0.002, "n": 5}  # 2.78 · 0.002 / √5 = 0.0025 < 0.01: beyond the interval too
    assert "Weak evidence" not in pays_from_sentence(1.0, effect=five)
    edge = {**five, "sd": 0.0081}  # 2.78 · 0.0081 / √5 = 0.0101 > 0.01
    assert "Weak evidence" in pays_from_sentence(1.0, effect=edge)
    assert "Weak evidence" not in pays_from_sentence(None, effect={**two, "state": "inconclusive"})


def test_users_to_pay():
    pts = [{"users": 10, "advantage": -0.05}, {"users": 40, "advantage": 0.05}]
    est = dash.users_to_pay(pts)
    assert est["how"] == "interpolated" and 10 < est["users"] < 40
    est = dash.users_to_pay([{"users": 10, "advantage": -0.05}, {"users": 20, "advantage": -0.02}])
    assert est["how"].startswith("extrapolated") and est["users"] > 20
    est = dash.users_to_pay([{"users": 10, "advantage": -0.01}, {"users": 20, "advantage": -0.05}])
    assert est["users"] is None


def test_users_to_pay_counts_only_advantages_beyond_their_spread_and_reads_both_directions():
    # a positive mean inside its own sd does not pay: measured on the planner's synthetic federations
    # (4 entities, ε = 1) the smallest size had +0.0017 ± 0.0075 — "already pays" was wrong there
    pts = [{"users": 25, "advantage": 0.0017, "sd": 0.0075}, {"users": 100, "advantage": -0.0004, "sd": 0.0002},
           {"users": 400, "advantage": -0.0015, "sd": 0.0071}, {"users": 1600, "advantage": 0.0088, "sd": 0.0019}]
    est = dash.users_to_pay(pts)
    assert est["direction"] == "from" and est["how"] == "interpolated" and 400 < est["users"] < 1600
    # where z = advantage − sd crosses 0 on a log scale: z(400) = −0.0086, z(1600) = 0.0069
    t = 0.0086 / (0.0086 + 0.0069)
    assert est["users"] == pytest.approx(float(np.exp(np.log(400) + t * np.log(4))), rel=1e-9)
    # the federation pays for small entities only: larger ones do as well alone
    down = [{"users": 50, "advantage": 0.03, "sd": 0.01}, {"users": 200, "advantage": 0.01, "sd": 0.005},
            {"users": 800, "advantage": 0.001, "sd": 0.004}]
    est = dash.users_to_pay(down)
    assert est["direction"] == "up to" and 200 < est["users"] < 800
    assert "up to about" in dash.users_to_pay_sentence(est, "1", "zero") and "observation mode zero" in \
        dash.users_to_pay_sentence(est, "1", "zero")
    # every size pays / paying sizes that are not one range
    assert dash.users_to_pay([{**p, "advantage": 0.05} for p in down])["users"] == 50
    gap = [{"users": 50, "advantage": 0.03, "sd": 0.0}, {"users": 200, "advantage": -0.01, "sd": 0.0},
           {"users": 800, "advantage": 0.03, "sd": 0.0}]
    assert dash.users_to_pay(gap)["users"] is None and "not one range" in dash.users_to_pay(gap)["how"]
    assert "no size found" in dash.users_to_pay_sentence(dash.users_to_pay(gap), "1", "zero")


@pytest.mark.parametrize("declared", [True, False], ids=["declared catalogue", "DP-selected catalogue"])
def test_planned_stages_are_ledger_stages(declared):
    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.experiments import run_method

    ds = load_data(dash.DEFAULT_SAMPLE)
    cfg = dash.default_config(ds, "dp-gaussian").replace(simulation=True)
    if not declared:  # the same rows, no declared catalogue: the run selects one per entity first
        ds = FederatedDataset.from_parts(ds.X, np.asarray(ds.entity_names)[ds.entity_of_user], value_kind=ds.value_kind,
                                         value_max=ds.value_max, name="no catalogue")
        cfg = cfg.replace(epsilon=40.0)
        assert ds.item_source != "declared"
    doc, res = run_method(ds, cfg)
    if not declared:
        assert "catalogue" in {r["stage"] for r in doc["privacy"]["per_stage"]} and res.model.releases_
    plans = dash.budget_plans(cfg.method, ds, cfg)
    used_k = {len(r.prototypes) for r in res.model.releases_}
    for k in used_k:
        plan = plans[f"k = {k}"]
        ledger = {(r["stage"]) for r in doc["privacy"]["per_stage"]}
        assert set(plan["stage"]) == ledger
        spent = {r["stage"]: r["epsilon"] for r in doc["privacy"]["per_stage"]}
        for row in plan.itertuples():
            assert spent[row.stage] == pytest.approx(row.epsilon, rel=1e-9)
    assert "maximum" in dash.k_note(cfg.method, cfg)


def test_with_one_prototype_the_plan_has_no_clustering_stage_and_spends_the_whole_budget():
    """The automatic k may send one prototype (every user in one cluster): its plan lists only the
    stages that then run — no candidates, search or trial choice — and their ε adds up to the
    request, like the plan at the largest k."""
    from dpfed_core.data.loaders import load_data

    ds = load_data(dash.DEFAULT_SAMPLE)
    for method in ("dp-gaussian", "dp-prototypes"):
        cfg = dash.default_config(ds, method).replace(simulation=True)
        plans = dash.budget_plans(method, ds, cfg)
        one, most = plans["k = 1"], plans[f"k = {cfg.k}"]
        assert not {"candidates", "local search", "trial choice"} & set(one["stage"]), (method, one)
        assert {"candidates", "local search"} <= set(most["stage"])
        assert one["epsilon"].sum() == pytest.approx(cfg.epsilon) and most["epsilon"].sum() == pytest.approx(cfg.epsilon)


def test_a_stage_that_stops_on_an_earlier_release_spends_at_most_its_plan_and_the_caption_says_why():
    """With a fixed k on small entities the candidate stage finds no heavy cell at its first level and the
    search has no more candidates than k: the ledger records less than the plan on those stages, never
    more on any, and the caption calls the plan a maximum and says which stages stop early (with the LSH
    coreset's candidates, whose stages are planned jointly, it says that instead)."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.experiments import run_method
    from dpfed_core.ui.catalogue import EARLY_STOP_NOTE, LSH_PLAN_NOTE

    ds = load_data(dash.DEFAULT_SAMPLE)
    cfg = dash.default_config(ds, "dp-gaussian").replace(
        simulation=True, epsilon=3.0, k=5, prototype_params={"cluster_size": None, "projection_dim": 8})
    plans = dash.budget_plans(cfg.method, ds, cfg)
    assert list(plans) == ["k = 5"]
    planned = dict(zip(plans["k = 5"]["stage"], plans["k = 5"]["epsilon"]))
    doc, _ = run_method(ds, cfg)
    spent: dict[tuple[str, str], float] = {}
    for r in doc["privacy"]["ledger"]:
        spent[(r["entity"], r["stage"])] = spent.get((r["entity"], r["stage"]), 0.0) + r["epsilon"]
    assert {stage for _, stage in spent} <= set(planned)
    assert all(eps <= planned[stage] * (1 + 1e-9) for (_, stage), eps in spent.items())
    assert all(spent[(e, "candidates")] < planned["candidates"] / 2 for e in ds.entity_names)
    assert not any(stage == "local search" for _, stage in spent)
    (line,) = dash.plan_captions(cfg.method, cfg, plans)
    assert line.startswith("Planned ε per stage and entity, at most: candidates ")
    assert EARLY_STOP_NOTE in line and "the ledger after the run shows what was spent" in line
    one = dash.plan_captions(cfg.method, cfg.replace(k=1), dash.budget_plans(cfg.method, ds, cfg.replace(k=1)))
    assert len(one) == 1 and "candidate" not in one[0] and one[0].startswith("Planned ε per stage and entity, at")
    # the LSH coreset's releases are planned jointly: its ledger has a stage the split has not and may spend more
    # on one than the split says, so the caption states no bound per stage, only the run's
    lsh = cfg.replace(prototype_params={"cluster_size": None, "candidates": "lsh"})
    plans = dash.budget_plans(lsh.method, ds, lsh)
    doc, _ = run_method(ds, lsh)
    stages = {r["stage"] for r in doc["privacy"]["ledger"]}
    assert "coreset sums" in set(plans["k = 5"]["stage"]) <= stages and doc["privacy"]["epsilon"] <= lsh.epsilon
    (line,) = dash.plan_captions(lsh.method, lsh, plans)
    assert line.startswith("Planned ε per stage and entity: candidates ") and "at most" not in line
    assert LSH_PLAN_NOTE in line and EARLY_STOP_NOTE not in line


@pytest.mark.parametrize("method", ["dp-prototypes", "dp-gaussian"])
@pytest.mark.parametrize("params", [{}, {"candidates": "lsh"}, {"candidates": "lsh", "refine_steps": 1}],
                         ids=["partition", "lsh coreset", "lsh coreset refined"])
def test_every_stage_the_plan_names_is_a_stage_of_the_runs_ledger(method, params):
    """The plan shown before a run names each stage as the ledger after it does, whichever candidates
    the method uses: the search share is the ledger's "local search", or with the LSH coreset its
    "coreset sums"."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.experiments import run_method

    ds = load_data(dash.DEFAULT_SAMPLE)
    cfg = dash.default_config(ds, method).replace(simulation=True, epsilon=20.0, k=2,
                                                  prototype_params={"cluster_size": None, **params})
    (plan,) = dash.budget_plans(method, ds, cfg).values()
    doc, _ = run_method(ds, cfg)
    ledger = {r["stage"] for r in doc["privacy"]["ledger"]}
    assert set(plan["stage"]) <= ledger, (set(plan["stage"]) - ledger, ledger)
    assert ("coreset sums" if params else "local search") in set(plan["stage"])


def test_method_colours_fixed():
    from dpfed_core.reporting.plots import method_color

    assert method_color("individual") == method_color("individual")
    assert method_color("dp-gaussian") != method_color("individual")
    assert method_color("some-new-method") == method_color("some-new-method")


def test_many_entities_chart_uses_categories_and_rows():
    import pandas as pd

    from dpfed_core.reporting.plots import metric_bars

    rows = [{"method": m, "entity": str(100 + h), "mar": 0.1 * (h % 5)} for m in ("dp-gaussian", "individual")
            for h in range(40)]
    fig = metric_bars(pd.DataFrame(rows), "mar", metric_label="MAR")
    assert fig.layout.yaxis.type == "category"  # numeric ids as categories, one row per entity
    assert all(t.type == "scatter" for t in fig.data)
    assert "method: dp-gaussian" in fig.data[1].hovertemplate and "MAR" in fig.data[1].hovertemplate
    few = metric_bars(pd.DataFrame(rows[:6] + rows[40:46]), "mar")
    assert few.layout.xaxis.type == "category"
    assert few.data[0].marker.color != few.data[1].marker.color


def test_report_explains_the_automatic_k():
    from dpfed_core.reporting.report_sections import k_explanation

    run = {"config": {"method": "dp-gaussian", "k": 6, "prototype_params": {}},
           "messages": [{"round": 1, "sender": "A", "receiver": "server", "content": "1 prototypes",
                         "shape": [1, 40]}]}
    text = k_explanation(run)
    assert "k = 6 is a maximum" in text and "⌊n̂ / 1000⌋" in text and "sent 1 prototype" in text
    assert k_explanation({"config": {"method": "kmeans", "k": 3}, "messages": []}) == ""
    # every method whose declared cluster_size sets its k (dp-prototypes' default too), never a cap by size
    text = k_explanation({**run, "config": {**run["config"], "method": "dp-prototypes", "k": 10}})
    assert "k = 10 is a maximum" in text and "non-private" not in text


def test_unlisted_methods_never_share_a_colour():
    from dpfed_core.reporting.plots import _EXTRA, _derived_colors

    names = frozenset(f"plug-in-{i}" for i in range(len(_EXTRA)))
    colours = _derived_colors(names)
    assert sorted(colours.values()) == sorted(_EXTRA)


def test_grouped_bars_up_to_the_limit_with_overall_last_and_dots_beyond_sorted_by_the_first_method():
    import pandas as pd

    from dpfed_core.reporting.plots import MANY_ENTITIES, metric_bars

    def frame(n, methods=("zeta", "alpha")):
        rows = [{"method": m, "entity": "overall", "mar": 0.5} for m in methods]
        return pd.DataFrame(rows + [{"method": m, "entity": f"site {h:02d}", "mar": (h * (7 if m == "zeta" else 3)) % 11}
                                    for m in methods for h in range(n)])

    few = metric_bars(frame(MANY_ENTITIES), "mar")
    assert all(t.type == "bar" for t in few.data) and list(few.data[0].x)[-1] == "overall"
    many = metric_bars(frame(MANY_ENTITIES + 1), "mar", methods=["alpha", "zeta"])
    dots = [t for t in many.data if t.mode == "markers"]
    assert [t.name for t in dots] == ["alpha", "zeta"] and list(dots[0].x) == sorted(dots[0].x)
    assert list(dots[1].x) != sorted(dots[1].x)
    assert "overall" not in list(dots[0].y)


def test_the_trade_off_chart_draws_mean_and_sd_along_sorted_epsilon_and_infinity_right_of_the_grid():
    import pandas as pd

    from dpfed_core.reporting.plots import INF_OFFSET_DECADES, tradeoff_chart

    table = pd.DataFrame({"method": ["m"] * 4 + ["local"], "epsilon": [4.0, 1.0, np.inf, 2.0, np.nan],
                          "mean": [0.4, 0.1, 0.5, 0.2, 0.3], "sd": [0.04, 0.01, 0.05, 0.02, 0.0], "n": [3] * 5})
    fig = tradeoff_chart(table, "m", "mar", references=["local"], crossing=np.inf)
    line = next(t for t in fig.data if t.name == "m (mean ± sd)")
    assert list(line.x) == [1.0, 2.0, 4.0] and list(line.y) == [0.1, 0.2, 0.4]
    band = next(t for t in fig.data if t.fill == "toself" and t.legendgroup == "m")
    assert list(band.x) == [1.0, 2.0, 4.0, 4.0, 2.0, 1.0]
    assert list(band.y) == pytest.approx([0.11, 0.22, 0.44, 0.36, 0.18, 0.09])
    inf_x = 4.0 * 10 ** INF_OFFSET_DECADES
    assert fig.layout.xaxis.tickvals[-1] == pytest.approx(inf_x)
    assert fig.layout.shapes[-1].x0 == pytest.approx(inf_x)  # the crossing at ε = ∞


def test_heatmaps_show_the_items_of_largest_mass_with_labels_cut_to_their_width():
    from dpfed_core.reporting.plots import factor_heatmap, prototype_heatmap

    names = [f"item {j} " + "x" * (j % 3) * 20 for j in range(40)]
    P = np.zeros((2, 40))
    P[0, 35], P[1, 3], P[1, 20] = 5.0, 4.0, 3.0
    fig = prototype_heatmap(P, names)
    xs = list(fig.data[0].x)
    assert len(xs) == 30 and all(len(x) <= 28 for x in xs)
    assert xs[:3] == [names[35][:27] + "…", names[3], names[20][:27] + "…"]
    V = np.zeros((50, 2))
    V[7] = [2.0, 2.0]
    V[42] = [1.0, 0.5]
    fig = factor_heatmap(V, [f"i{j}" for j in range(50)], n_items=5)
    assert list(fig.data[0].y)[:2] == ["i7", "i42"]


def _scored_run():
    """A small dataset, its split and a model whose scores put a test user's hidden items first."""
    from dpfed_core.data.synthetic import make_poisson
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.methods import MethodResult
    from dpfed_core.privacy.ledger import PrivacyLedger

    ds = make_poisson(60, 30, 2, density=0.2, rng=3)
    split = make_split(ds, RunConfig(seed=0))
    row = int(split.test_users[0])
    hidden = split.test[row].indices
    V = np.arange(ds.n_items, dtype=float)[:, None] / 100
    V[hidden, 0] = 10.0 + np.arange(len(hidden))
    result = MethodResult(U=np.ones((ds.n_users, 1)), V=V, ledger=PrivacyLedger(np.inf))
    h = int(ds.entity_of_user[row])
    entity, user = ds.entity_names[h], str(ds.user_ids[row])
    return ds, split, result, entity, user, row, hidden


def test_a_users_list_ranks_from_one_and_marks_exactly_their_hidden_items():
    ds, split, result, entity, user, row, hidden = _scored_run()
    df = dash.recommend_table(ds, split, result, entity, user, n=len(hidden) + 2)
    assert df["rank"].tolist() == list(range(1, len(hidden) + 3))
    assert df["hidden test item"].tolist() == ["✔"] * len(hidden) + ["", ""]
    assert set(df["item"].iloc[:len(hidden)]) == set(ds.item_names[hidden])
    assert not set(df.attrs["items"]) & set(split.train[row].indices)


def test_equal_scores_share_a_rank_and_the_cut_through_a_tie_is_said():
    """Three items scored alike are ranked 1, 1, 1 (their order is the catalogue's, no advice), and a
    list cut inside a tie says how many more items score as its last one."""
    ds, split, result, entity, user, row, hidden = _scored_run()
    V = np.full((ds.n_items, 1), 0.01)
    unseen = [j for j in range(ds.n_items) if j not in set(split.train[row].indices)]
    V[unseen[:3], 0] = 5.0
    V[unseen[3:8], 0] = 2.0
    result.V = V
    df = dash.recommend_table(ds, split, result, entity, user, n=5)
    assert df["rank"].tolist() == [1, 1, 1, 4, 4] and df.attrs["tied_beyond"] == 3
    listed, note = dash.explained_list(ds, split, result, entity, user, 5, "the model")
    assert listed["rank"].tolist() == [1, 1, 1, 4, 4]
    assert "share a rank" in note and "3 more items score the same as the last one" in note, note


def test_a_top_n_below_1_is_one_error_naming_the_control_not_a_list_cut_from_its_end():
    """A negative n is refused, not read as a slice from the end (n = −2 would list every candidate but the last two)."""
    ds, split, result, entity, user, row, hidden = _scored_run()
    assert len(dash.recommend_table(ds, split, result, entity, user, n=1)) == 1
    for n in (0, -2, 1.5):
        with pytest.raises(ConfigError, match=f"n \\(“Top-N” on the Recommend page\\), the length of the "
                                              f"recommendation list, must be a whole number of at least 1, got {n}"):
            dash.recommend_table(ds, split, result, entity, user, n=n)


def test_the_why_column_marks_only_the_items_the_dp_selection_left_out():
    ds, split, result, entity, user, row, hidden = _scored_run()
    top = int(np.argmax(result.V[:, 0]))
    result.extra = {"catalogue": [j for j in range(ds.n_items) if j != top]}
    df, why_not = dash.explained_list(ds, split, result, entity, user, 3, "the model")
    assert why_not is None and "why" in df.columns and not df.attrs
    marked = ["left out of the shared catalogue" in w for w in df["why"]]
    assert marked == [True, False, False] and df["item"].iloc[0] == ds.item_names[top]


def test_the_why_column_marks_only_the_items_outside_a_declared_catalogue():
    ds, split, result, entity, user, row, hidden = _scored_run()
    top = int(np.argmax(result.V[:, 0]))
    item_key = np.arange(ds.n_items)
    item_key[top] = -1
    result.extra = {"catalogue_item_key": item_key, "catalogue_declared": True}
    assert dash.declared_outside_items(ds, result).tolist() == [top]
    assert dash.dp_excluded_items(ds, result) is None
    df, why_not = dash.explained_list(ds, split, result, entity, user, 3, "the model")
    marked = ["not in the declared item catalogue, so never shared" in w for w in df["why"]]
    assert why_not is None and marked == [True, False, False] and df["item"].iloc[0] == ds.item_names[top]
    result.extra = {"catalogue_item_key": item_key}  # a DP-selected catalogue's map: not declared
    assert dash.declared_outside_items(ds, result) is None


def test_the_why_column_says_when_an_items_shared_key_also_stands_for_other_items():
    """A federation-wide DP catalogue shares hash keys: two names in one bucket share what the federation
    learned, so a site's item can carry another's popularity — said in "why", for those items only."""
    ds, split, result, entity, user, row, hidden = _scored_run()
    order = np.argsort(-result.V[:, 0])
    top, second, other = int(order[0]), int(order[1]), int(order[-1])
    item_key = np.arange(ds.n_items)
    item_key[other] = item_key[top]                                    # the top item's key also holds `other`
    result.extra = {"catalogue_item_key": item_key, "catalogue_keys": ds.n_items - 1}
    assert dash.key_partners(ds, result) == {top: [str(ds.item_names[other])], other: [str(ds.item_names[top])]}
    df, _ = dash.explained_list(ds, split, result, entity, user, 3, "the model")
    said = [f"its shared key also stands for {ds.item_names[other]}" in w for w in df["why"]]
    assert said == [True, False, False] and df["item"].iloc[1] == ds.item_names[second]
    result.extra = {"catalogue_item_key": item_key, "catalogue_declared": True}   # declared names: no hash keys
    assert dash.key_partners(ds, result) == {}


def _two_disjoint_sites():
    """Site A holds items 0–5 only, site B items 6–11 only; a model that scores A's items and 0 elsewhere,
    and a hashed catalogue putting A's item 0 and B's item 6 in one key."""
    import scipy.sparse as sp

    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.methods import MethodResult
    from dpfed_core.privacy.ledger import PrivacyLedger

    rng = np.random.default_rng(5)
    X = np.zeros((80, 12))
    X[:40, :6] = rng.integers(0, 3, (40, 6)) * (rng.random((40, 6)) < 0.6)
    X[40:, 6:] = rng.integers(0, 3, (40, 6)) * (rng.random((40, 6)) < 0.6)
    X[:20, 0] = X[40:60, 6] = 1.0
    X[20:40, 0] = X[60:, 6] = 0.0
    ds = FederatedDataset.from_parts(sp.csr_matrix(X), np.repeat(np.array(["A", "B"], dtype=object), 40),
                                     item_names=np.array([f"a{j}" for j in range(6)] + [f"b{j}" for j in range(6)],
                                                         dtype=object), value_max=3.0)
    split = make_split(ds, RunConfig(seed=0, test_fraction=0.5, n_hidden=1))
    V = np.r_[np.linspace(2.0, 1.0, 6), np.zeros(6)][:, None]
    result = MethodResult(U=np.ones((ds.n_users, 1)), V=V, ledger=PrivacyLedger(np.inf))
    item_key = np.arange(12)
    item_key[6] = 0                                                     # b0 shares a0's public hash key
    result.extra = {"catalogue_item_key": item_key, "catalogue_keys": 11, "catalogue": np.arange(12)}
    return ds, split, result


def test_a_site_is_never_suggested_a_name_only_other_sites_hold_nor_shown_one_in_why():
    """A federation-wide DP catalogue releases hash keys, not names: a site suggests only items it knows
    (its own rows, public lists) — a name only another site holds, on which the model learned nothing,
    is no suggestion — and "why" names only the key partners it knows."""
    ds, split, result = _two_disjoint_sites()
    user = next(str(ds.user_ids[r]) for r in split.test_users if ds.entity_of_user[r] == 0
                and 0 not in set(split.train[r].indices))                # a0, the top item, is suggested
    known = dash.names_known_to(ds, split, result, "A")
    assert known[:6].all() and not known[6:].any()
    df, note = dash.explained_list(ds, split, result, "A", user, 10, "the model")
    assert set(df["item"]) <= {f"a{j}" for j in range(6)} and df["item"].iloc[0] == "a0"
    assert note is None                                                 # b0–b5 were never candidates here
    assert not any("b0" in w for w in df["why"])
    assert dash.key_partners(ds, result, known) == {}
    assert dash.key_partners(ds, result) == {0: ["b0"], 6: ["a0"]}
    # public names (a declared catalogue) are known to every site
    declared = FederatedDataset.from_parts(ds.X, np.asarray(ds.entity_names, dtype=object)[ds.entity_of_user],
                                           item_names=ds.item_names, value_max=3.0, item_source="declared")
    assert dash.names_known_to(declared, split, result, "A").all()


def test_a_list_stops_before_candidates_the_model_scores_zero_and_says_how_many():
    """Ties at 0 beside items the model ranks would be listed in catalogue order: they are cut, and the
    note says how many and why."""
    ds, split, result = _two_disjoint_sites()
    unseen = {r: [j for j in range(1, 6) if j not in set(split.train[r].indices)]
              for r in split.test_users if ds.entity_of_user[r] == 0}
    row = max(unseen, key=lambda r: len(unseen[r]))
    assert len(unseen[row]) >= 4
    zero, below = unseen[row][1:-1], unseen[row][-1]                    # nothing learned; one scored below 0
    result.V[zero, 0] = 0.0
    result.V[below, 0] = -0.5
    df, note = dash.explained_list(ds, split, result, "A", str(ds.user_ids[row]), 10, "federated model")
    assert (df["score"] != 0).all() and not set(df["item"]) & {f"a{j}" for j in zero} and len(df) >= 1
    assert df["item"].iloc[-1] == f"a{below}" and df["rank"].tolist() == list(range(1, len(df) + 1))
    # each row's "why" is its own item's evidence, also after the cut
    items = [int(str(x)[1:]) for x in df["item"]]
    assert df["why"].tolist() == dash.similar_evidence(ds, split, "A", str(ds.user_ids[row]), items)
    assert note == (f"{len(zero)} further candidate items score 0 for this user: the federated model learned "
                    "nothing for them, and their order would be the catalogue's, so they are not listed.")
    # one such item alone is cut too: a score of 0 is no advice, even without a tie to order
    result.V[zero[1:], 0] = 0.9 + 0.01 * np.arange(1, len(zero))  # distinct scores: no tie to mention
    df, note = dash.explained_list(ds, split, result, "A", str(ds.user_ids[row]), 10, "federated model")
    assert f"a{zero[0]}" not in set(df["item"]) and (df["score"] != 0).all()
    assert note == ("1 further candidate item scores 0 for this user: the federated model learned nothing for it, so "
                    "it is not listed.")


def test_the_recommend_page_names_each_kind_of_unshared_item_and_how_to_share_it():
    ds, split, result, entity, user, row, hidden = _scored_run()
    result.extra = {"catalogue": list(range(2, ds.n_items))}  # the DP selection left out items 0 and 1
    (dp,) = dash.unshared_items_notes(ds, result, "patients")
    assert dp == (f"**2 of {ds.n_items} items were left out of the shared catalogue by the DP selection** (too few "
                  "patients across the entities had them to pass the noise threshold at this ε): the shared part of "
                  f"the model knows nothing of them — {ds.item_names[0]}, {ds.item_names[1]}. Each entity's own part "
                  "still scores those it has rows for (marked in “why”). Declaring the item list (a formulary) on "
                  "the Data page shares every item.")
    item_key = np.where(np.arange(ds.n_items) < ds.n_items - 10, np.arange(ds.n_items), -1)
    result.extra = {"catalogue_item_key": item_key, "catalogue_declared": True}
    (declared,) = dash.unshared_items_notes(ds, result, "patients")
    assert declared.startswith(f"**10 of {ds.n_items} items are not in the declared item catalogue**, so they were "
                               "never shared: the federation's part of the model knows nothing of them — ")
    assert declared.endswith(" …. Each entity's own part scores those it has rows for (marked in “why”). Adding "
                             "them to the item catalogue on the Data page shares them.")
    result.extra = {}
    assert dash.unshared_items_notes(ds, result, "patients") == []


def test_the_server_view_states_each_released_quantitys_shape_and_range():
    class Model:
        public_ = {"V": np.array([[0.5, -2.0], [3.0, 1.0]]), "edge": np.float64(0.25), "none": np.zeros(0)}

    from dpfed_core.methods import MethodResult
    from dpfed_core.privacy.ledger import PrivacyLedger

    view = dash.server_view(MethodResult(U=np.ones((1, 1)), V=np.ones((2, 1)), ledger=PrivacyLedger(1.0), model=Model()))
    assert view.to_dict("records") == [
        {"quantity": "V", "shape": "2×2", "value": "min -2, max 3"},
        {"quantity": "edge", "shape": "scalar", "value": "0.25"},
        {"quantity": "none", "shape": "0", "value": "empty"},
    ]


def test_federated_methods_list_the_dp_method_then_every_private_method_before_the_non_private(monkeypatch):
    """Whatever their names sort as: a plug-in DP method named after kmeans is still offered before it."""
    from dpfed_core.methods import METHODS, available_methods
    from dpfed_core.ui import catalogue

    available_methods()  # the built-in methods registered
    monkeypatch.setitem(METHODS, "zz-private-plug-in", METHODS["dp-gaussian"])
    monkeypatch.setattr(catalogue, "available_methods",
                        lambda: ["kmeans", "zz-private-plug-in", "krandom", catalogue.DP_METHOD, "dp-gaussian"])
    assert catalogue.federated_methods() == [catalogue.DP_METHOD, "dp-gaussian", "zz-private-plug-in", "kmeans",
                                             "krandom"]


def test_the_pages_show_a_missing_number_as_a_dash():
    from dpfed_core.ui.widgets import fmt

    assert (fmt(None), fmt(float("nan")), fmt(0.5), fmt(0.123456, 2), fmt(3)) == ("—", "—", "0.5000", "0.12", "3")


def test_the_pages_tables_number_factors_from_one_list_test_users_first_and_say_who_sent_cluster_sizes():
    from types import SimpleNamespace

    from dpfed_core.ui.tables import cannot_rank, entity_users, prototype_summary, top_items_per_factor

    V = np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])
    top = top_items_per_factor(V, np.array(["a", "b", "c"]), n=2)
    assert top.to_dict("list") == {"factor 1": ["b (0.80)", "c (0.50)"], "factor 2": ["a (0.90)", "c (0.50)"]}
    assert list(top.index) == [1, 2]
    # scores equal up to a relative 1e-12 are one score, however large they are
    assert "same score" in cannot_rank(np.array([1e6, 1e6 * (1 + 1e-12), 1e6]), "model")
    assert cannot_rank(np.array([1e6, 1e6 + 1.0]), "model") is None
    ds = tiny(user_ids=["u0", "u1", "u2", "u3"])
    assert entity_users(ds, "A", test_users_only=np.array([1, 3])) == ["u1", "u0"]
    assert entity_users(ds, "B", test_users_only=np.array([1, 3])) == ["u3", "u2"]
    result = SimpleNamespace(
        messages=[SimpleNamespace(round=1, sender="A", content="noisy cluster sizes"),
                  SimpleNamespace(round=1, sender="B", content="prototypes")],
        model=SimpleNamespace(releases_=[SimpleNamespace(prototypes=np.array([[1.0, 0, 2]])),
                                         SimpleNamespace(prototypes=np.zeros((2, 3)))]))
    assert prototype_summary(result, ds).to_dict("records") == [
        {"entity": "A", "prototypes": 1, "items": 3, "non-zeros per prototype": 2.0, "cluster sizes sent": "yes"},
        {"entity": "B", "prototypes": 2, "items": 3, "non-zeros per prototype": 0.0, "cluster sizes sent": "no"}]


def test_the_data_pages_counts_flag_entities_strictly_below_the_minimum_and_keys_cover_every_seed():
    from types import SimpleNamespace

    from dpfed_core.ui.datasets import (dataset_overview, entity_table, is_event_data, small_entity_warning,
                                        sweep_key)

    ds = tiny()  # two entities of two users each, 6 entries in 4 × 3
    assert entity_table(ds, small=2)["too_small"].tolist() == [False, False]
    assert entity_table(ds, small=3)["too_small"].tolist() == [True, True]
    assert dataset_overview(ds)["density"] == pytest.approx(6 / 12)
    X = sp.csr_matrix(np.eye(10))
    many = FederatedDataset.from_parts(X, np.array([f"e{i}" for i in range(10)]), value_kind="counts", value_max=5)
    text = small_entity_warning(many, small=2)
    assert text.startswith("10 of 10 entities have fewer than 2 users") and " and 2 more." in text
    assert small_entity_warning(many, small=1) is None
    cfg = RunConfig(method="kmeans", k=1, rank=2)
    assert sweep_key(ds, cfg, [1.0], [0, 1], ["local"]) != sweep_key(ds, cfg, [1.0], [0, 2], ["local"])
    higher = FederatedDataset.from_parts(ds.X, ds.entity_of_user.choose(ds.entity_names), value_kind="counts",
                                         value_max=10, name=ds.name)
    assert dash.dataset_fingerprint(higher) != dash.dataset_fingerprint(ds)  # the declared bound is content too
    assert is_event_data(SimpleNamespace(value_kind="implicit")) and is_event_data(ds)
    assert not is_event_data(SimpleNamespace(value_kind="ratings"))


def test_each_protocol_event_reads_as_a_sentence_counting_entities_from_one():
    from dpfed_core.ui.tables import progress_text

    assert progress_text("round1_start", {"entity": "A", "index": 0, "total": 3}) == (
        "Round 1 · entity **A** (1/3) computes its prototypes on its own training data…")
    assert "**B** (3/3) fits its own user factors" in progress_text("round2_start", {"entity": "B", "index": 2,
                                                                                     "total": 3})
    assert progress_text("round1_done", {"entity": "A", "shape": (4, 9)}) == (
        "Round 1 · **A** sent 4 prototypes × 9 items to the server")
    assert progress_text("round2_done", {"entity": "A"}) is None
    # with a DP-selected catalogue V's rows are shared keys, which can outnumber the items (208 on a 206-item table)
    assert progress_text("server_done", {"shape": (208, 9), "keys": True}) == "Server · V ready (208 shared keys × 9 factors)"
    assert progress_text("round1_done", {"entity": "A", "shape": (4, 9), "keys": True}).endswith("× 9 shared keys to the server")
    assert progress_text("server_done", {"shape": (9, 2)}) == "Server · V ready (9 items × 2 factors)"


def test_a_run_on_a_dp_catalogue_says_its_server_fits_shared_keys():
    """What the protocol reports is what the page says: a summable run without a declared catalogue
    fits V on the shared keys (the event says so), one on a declared catalogue on the items."""
    from dataclasses import replace

    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.experiments import make_split, run_method

    ds = load_data("sample:clinic")
    for source, keyed in (("data", True), ("declared", False)):
        d = replace(ds, item_source=source)
        cfg = RunConfig(method="dp-cooccurrence", epsilon=3.0, rank=3, max_iter=20, simulation=True, seed=0)
        events = []
        run_method(d, cfg, make_split(d, cfg), progress=lambda ev, **info: events.append((ev, info)))
        (info,) = [i for e, i in events if e == "server_done"]
        assert bool(info.get("keys")) is keyed, (source, info)


def test_the_ledger_tab_states_each_entitys_composed_delta_and_a_heatmap_takes_the_heaviest_items():
    from dpfed_core.ui.tables import per_stage_table, top_columns

    stages = [{"entity": e, "stage": s, "epsilon": v} for e in ("A", "B") for s, v in (("size", 0.5), ("sums", 0.7))]
    doc = {"privacy": {"per_stage": stages, "per_entity": [
        {"entity": "A", "epsilon": 1.0, "delta": 1e-6, "accountant": "zCDP"},
        {"entity": "B", "epsilon": 0.9, "delta": 2e-6, "accountant": "basic"}]}}
    assert per_stage_table(doc).to_dict("records") == [
        {"entity": "A", "size (alone)": 0.5, "sums (alone)": 0.7, "ε (composed)": 1.0, "δ (composed)": 1e-6,
         "composed by": "zCDP"},
        {"entity": "B", "size (alone)": 0.5, "sums (alone)": 0.7, "ε (composed)": 0.9, "δ (composed)": 2e-6,
         "composed by": "basic"}]
    P = np.array([[0.0, 5.0, -1.0, 0.0], [0.0, -4.0, 0.0, 3.0]])
    assert top_columns(P, 2).tolist() == [1, 3]  # by absolute mass over the rows
    assert top_columns(P, 10).tolist() == [1, 3, 2, 0]


def test_the_flower_panel_shows_a_sites_refusal_with_the_rule_that_refused():
    from dpfed_core.ui.deployment_panel import site_decision_text

    assert site_decision_text({"entity": "A", "decision": "accepted"}) == "accepted"
    assert site_decision_text({"entity": "A", "decision": "refused", "rule": "max_epsilon",
                               "message": "ε = 2 per run is above the site's max_epsilon = 1"}) == (
        "refused (max_epsilon): ε = 2 per run is above the site's max_epsilon = 1")


def test_the_broadcast_factors_of_a_dp_catalogue_are_shown_on_the_items_of_each_key():
    """The server's V has one row per shared key; the page labels rows by item, so each item of a kept
    key takes its key's row (items sharing a key share it) and every other item a zero row — never key
    k's row under item k's name. The top-items table has as many rows as there are items at most, and
    says "—" where an item does not load on a factor."""
    from types import SimpleNamespace

    from dpfed_core.ui.tables import top_items_per_factor

    V_keys = np.array([[0.3, 0.0], [0.0, 0.7], [0.9, 0.1]])  # 3 keys; more keys than the 2 items known below is fine
    item_key = np.array([2, -1, 0, 2, -1])                     # items 0 and 3 in key 2, item 2 in key 0
    result = SimpleNamespace(entity_factors=lambda: SimpleNamespace(local_widths=[1, 2]),
                             model=SimpleNamespace(public_={"V": V_keys}), extra={"catalogue_item_key": item_key})
    V, local = dash.broadcast_factors(result)
    np.testing.assert_array_equal(V, [[0.9, 0.1], [0, 0], [0.3, 0.0], [0.9, 0.1], [0, 0]])
    assert local == 3 and dash.broadcast_keys(result) == (3, 3)
    declared = SimpleNamespace(entity_factors=result.entity_factors, model=result.model, extra={})
    assert dash.broadcast_factors(declared)[0] is not None and dash.broadcast_keys(declared) is None
    top = top_items_per_factor(V, np.array(list("abcde")), n=8)
    assert len(top) == 5 and top["factor 2"].tolist() == ["a (0.10)", "d (0.10)", "—", "—", "—"]


def test_the_time_hint_counts_users_and_items_of_the_loaded_data():
    from dpfed_core.data.samples import load_sample

    data = load_sample("clinic")
    line = dash.estimate_line(data, [RunConfig(method="dp-cooccurrence", epsilon=3.0)])
    assert f"on these {data.n_users:,} users × {data.n_items:,} items in {data.n_entities} entities" in line


def test_a_typed_user_of_another_entity_names_the_entity_control():
    ds = tiny(user_ids=np.array(["a1", "a2", "b1", "b2"]))
    dash.check_user(ds, "A", "a2")
    with pytest.raises(ConfigError, match="the user with id 'b1' is in entity 'B', not in 'A': choose 'B' in “Entity”"):
        dash.check_user(ds, "A", "b1")
    # users are patients, stays or customers as often as users: the message reads right for any of them
    with pytest.raises(ConfigError, match=r"^no user with id 'zz' in entity 'A' \(nor in any other\): choose one "
                                          "from the list or type an id of this entity$"):
        dash.check_user(ds, "A", "zz")


def test_the_broadcast_columns_are_named_factors_and_the_dp_popularity():
    from dpfed_core.ui.tables import broadcast_column_names, top_items_per_factor

    names = broadcast_column_names((slice(0, 8), 8), 9)
    assert names[:8] == [f"factor {i}" for i in range(1, 9)] and names[8] == "DP popularity"
    assert broadcast_column_names((None, 0), 1) == ["DP popularity"]
    assert broadcast_column_names(None, 2) == ["factor 1", "factor 2"]
    V = np.array([[0.5, 0.1], [0.2, 0.9]])
    table = top_items_per_factor(V, np.array(["a", "b"]), 2, columns=["factor 1", "DP popularity"])
    assert list(table.columns) == ["factor 1", "DP popularity"] and table["DP popularity"].iloc[0] == "b (0.90)"


def test_a_summable_run_records_which_broadcast_column_is_its_dp_popularity():
    from dpfed_core.config import RunConfig
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.experiments import run_method

    ds = load_data("sample:clinic")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=3.0, rank=4, simulation=True, aggregation="secure")
    _, result = run_method(ds, cfg)
    fac, pop = result.model.broadcast_parts_
    assert pop == np.shape(result.model.public_["V"])[1] - 1 and fac == slice(0, pop)


def test_a_small_entity_without_its_own_baseline_measure_is_said_not_crashed():
    """An entity alone whose MAR is undefined (its fit failed, or no test user measured) reads as
    "undefined" in the sentence, never as a format error."""
    text = dash.few_test_users_text("hospital 01", 3, "stay", "stays", "this entity alone", 0.21, None)
    assert "**3 test stays**" in text and "MAR 0.210 vs undefined" in text and "no verdict for this entity alone" in text
    assert "1 test stay**" in dash.few_test_users_text("h", 1, "stay", "stays", "x", float("nan"), 0.3)


def test_the_recommend_banner_names_both_measures_when_they_disagree():
    """Event data: better on one measure and worse on the other is neither word for the entity (the
    Evaluate page judges its chosen metric), so the page warns with both; one-sided results keep theirs."""
    mixed = dash.entity_against_alone(0.10, 0.12, {"pr_auc": 0.20}, {"pr_auc": 0.30})
    kind, text, _ = dash.entity_standing_banner(mixed, 40, "H1", "stay", "stays", "this entity alone", 0.10, 0.12, 5)
    assert kind == "warning" and "the two measures disagree" in text
    assert "better than this entity alone by MAR 0.100 vs 0.120" in text and "worse by PR-AUC 0.200 vs 0.300" in text
    worse = dash.entity_against_alone(0.14, 0.12, {"pr_auc": 0.20}, {"pr_auc": 0.30})
    assert dash.entity_standing_banner(worse, 40, "H1", "stay", "stays", "x", 0.14, 0.12, 5)[0] == "error"
    better = dash.entity_against_alone(0.10, 0.12, None, None)
    assert dash.entity_standing_banner(better, 40, "H1", "stay", "stays", "x", 0.10, 0.12, 5)[0] == "success"
    kind, text, _ = dash.entity_standing_banner(worse, 12, "H1", "stay", "stays", "x", 0.14, 0.12, 5)
    assert kind == "info" and "no verdict for this entity alone" in text  # under 20 test users
    none = dash.entity_against_alone(None, 0.12)
    assert "no test users" in dash.entity_standing_banner(none, 0, "H1", "stay", "stays", "x", None, 0.12, 5)[1]


def test_the_recommend_banner_gives_no_word_inside_the_entitys_own_paired_noise():
    """A difference within 1.96 standard errors of the paired difference over the entity's test users is
    no verdict for that entity (an information with its ± at 95 %); beyond them the word stands, with its ±."""
    inside = dash.entity_against_alone(0.14, 0.12, spread={"mar": 0.0103})  # 0.02 ≤ 1.96 × 0.0103
    assert inside["mar"] == "noise" and not inside["worse"]
    assert inside["noise"] == ["MAR 0.140 vs 0.120, ± 0.020 at 95 %"]
    kind, text, _ = dash.entity_standing_banner(inside, 40, "H1", "stay", "stays", "x", 0.14, 0.12, 5)
    assert kind == "info" and "differ by less than their noise on its 40 held-out stays" in text
    assert "no verdict for this entity alone" in text
    beyond = dash.entity_against_alone(0.14, 0.12, spread={"mar": 0.0101})  # 0.02 > 1.96 × 0.0101
    assert beyond["worse"] == ["MAR 0.140 vs 0.120, ± 0.020 at 95 %"]
    assert dash.entity_standing_banner(beyond, 40, "H1", "stay", "stays", "x", 0.14, 0.12, 5)[0] == "error"
    # one measure inside its noise, the other beyond: the one beyond is the word
    mixed = dash.entity_against_alone(0.10, 0.12, {"pr_auc": 0.20}, {"pr_auc": 0.30}, {"mar": 0.001, "pr_auc": 0.06})
    assert mixed["better"] and mixed["pr_auc"] == "noise"
    assert dash.entity_standing_banner(mixed, 40, "H1", "stay", "stays", "x", 0.10, 0.12, 5)[0] == "success"
    # a tie by the verdicts' rule stays a tie whatever the spread
    assert dash.entity_against_alone(0.1200, 0.1201, spread={"mar": 1e-9})["mar"] == "tie"


def test_the_paired_spread_of_an_entity_is_the_ratio_estimators_over_its_test_users():
    """The standard error of the federated − alone MAR difference: residuals x_u − D·d_u of the ratio of sums
    over the entity's test users, checked against a direct computation on two fixed score models."""
    from types import SimpleNamespace

    from dpfed_core.evaluation.metrics import ranking_metrics

    rng = np.random.default_rng(3)
    n_users, m = 30, 12
    train = sp.csr_matrix((rng.random((n_users, m)) < 0.3).astype(float))
    test = sp.csr_matrix(((rng.random((n_users, m)) < 0.2) & (train.toarray() == 0)).astype(float))
    ds = SimpleNamespace(entity_slices=lambda: [slice(0, 15), slice(15, 30)], entity_index=["A", "B"].index)
    split = SimpleNamespace(train=train, test=test, test_users=np.arange(n_users))
    S1, S2 = rng.random((n_users, m)), rng.random((n_users, m))
    model = lambda S: SimpleNamespace(entity_factors=lambda: SimpleNamespace(scores=lambda u: S[u]))  # noqa: E731
    out = dash.entity_paired_spread(ds, split, model(S1), model(S2), "B")
    users = np.arange(15, 30)
    a = ranking_metrics(S1[users], train[users], test[users])
    b = ranking_metrics(S2[users], train[users], test[users])
    x, den = a["mar_num"] - b["mar_num"], a["mar_den"]
    d = x.sum() / den.sum()
    assert out["n"] == 15
    assert out["mar_diff"] == pytest.approx(a["mar_num"].sum() / den.sum() - b["mar_num"].sum() / den.sum())
    assert out["mar"] == pytest.approx(np.sqrt(15 / 14 * np.sum((x - d * den) ** 2)) / den.sum())
    assert out["pr_auc"] is None  # only for event data
    assert dash.entity_paired_spread(ds, split, model(S1), model(S1), "A")["mar"] == 0.0  # the same model: no spread


def test_the_recommend_banner_states_the_tie_band_in_percent_of_the_alone_value():
    """A tie is a difference below half a percent of the entity-alone value (the verdicts' rule): the banner says
    "within 0.5 %", the band the word was decided by."""
    from dpfed_core.evaluation.verdicts import TIE_FRACTION

    tie = dash.entity_against_alone(0.2000, 0.2005)
    assert tie["mar"] == "tie" and TIE_FRACTION == 0.005
    kind, text, _ = dash.entity_standing_banner(tie, 40, "H1", "stay", "stays", "this entity alone", 0.2000, 0.2005, 5)
    assert kind == "info" and "(MAR 0.200 vs 0.201, within 0.5 %)" in text, text


def test_a_stored_runs_line_says_where_it_ran():
    """The History page's line of a stored run names a Flower deployment and its SuperNodes when the run was
    deployed, "in one process" otherwise — never the in-process words for a deployed run."""
    from dpfed_core.ui.tables import stored_run_summary

    doc = {"method": {"name": "dp-popularity"}, "privacy": {"label": "DP"}, "config": {"mode": "zero"},
           "overall": {"mar": 0.1234}}
    assert "a Flower deployment of 3 SuperNodes" in stored_run_summary({**doc, "deployment": {"supernodes": 3}})
    assert "in one process" in stored_run_summary(doc) and "Flower" not in stored_run_summary(doc)
    assert "0.1234" in stored_run_summary(doc)


def test_a_run_under_a_second_states_its_time_in_hundredths():
    from dpfed_core.ui.tables import run_outcome

    doc = {"privacy": {"label": "DP"}, "warnings": []}
    assert run_outcome(doc, 0.42) == ("complete", "Done in 0.42 s — DP")
    assert run_outcome(doc, 75.0) == ("complete", "Done in 1 min 15 s — DP")


def test_the_method_box_opens_on_the_recommended_method_and_its_parameters_leave_the_budget_split_to_its_own_control():
    """The Federate page lists the recommended DP method first (its default); a method's Advanced
    parameters leave out the budget split, which has its own per-stage boxes; and the k note gives the
    size below which an entity sends one prototype: twice the cluster size."""
    from dpfed_core.config import RunConfig

    methods = dash.federated_methods()
    assert methods[0] == dash.DP_METHOD == "dp-cooccurrence" == dash.default_method()
    # the references that run no federation are offered after the federated methods, not among them
    assert not {"local", "central", "popularity", "individual"} & set(methods) and "kmeans" in methods
    names = [p.name for p in dash.method_parameters("dp-gaussian")]
    assert names and "split" not in names and dash.budget_split_defaults("dp-gaussian")
    note = dash.k_note("dp-gaussian", RunConfig(method="dp-gaussian", k=5, epsilon=1.0,
                                                prototype_params={"cluster_size": 300}))
    assert "clip(⌊n̂ / 300⌋, 1, 5)" in note and "fewer than about 600 users sends **one** prototype" in note


def test_the_privacy_statement_says_each_assumption_and_condition_the_run_document_records():
    """The Federate page's statement of a DP run: every warning of the run, the float-sampler caveat
    when a stage drew from another sampler than the production one, where a secure sum was formed (in
    this process unless the document says otherwise), the noise drawn once on the sum, and a run without
    secure aggregation said to be one."""
    from dpfed_core.privacy.noise import PRODUCTION_SAMPLER_LABEL
    from dpfed_core.privacy.statement import FLOAT_SAMPLER_NOTE

    trust = {"aggregation": "secure", "against_server_and_other_entities": {"epsilon": 5.0, "delta": 1e-6}}
    privacy = {"private": True, "simulation": False, "epsilon": 1.0, "delta": 1e-6, "requested_epsilon": 1.0,
               "requested_delta": 1e-6, "assumptions": ["entities disjoint"], "samplers": [PRODUCTION_SAMPLER_LABEL],
               "warnings": ["an entity had no test users"], "trust": trust, "label": "DP"}
    text = dash.guarantee_text({"privacy": privacy})
    assert "(1) entities disjoint" in text and "\n\n⚠️ an entity had no test users" in text
    assert FLOAT_SAMPLER_NOTE not in text
    assert "formed in-process (the cryptographic protocol runs in the Flower deployment)" in text
    assert "(5, 1e-06)-DP" in text and "Its noise was drawn once" not in text
    text = dash.guarantee_text({"privacy": {**privacy, "samplers": [PRODUCTION_SAMPLER_LABEL, "numpy float"],
                                            "trust": {**trust, "in_process": False, "noise": "once"}}})
    assert FLOAT_SAMPLER_NOTE in text and "formed by Flower's SecAgg+" in text and "Its noise was drawn once" in text
    text = dash.guarantee_text({"privacy": {**privacy, "trust": {"aggregation": "none"}}})
    assert text.endswith("\n\nNo secure aggregation: every entity added the full noise to its own release.")


def test_an_observed_runs_headline_is_rmse_then_two_ranking_metrics_and_messages_state_their_shape():
    from dpfed_core.ui.tables import headline_metrics, messages_table

    assert [k for k, _, _ in headline_metrics("observed")] == ["test_rmse", "mar", "ndcg_at_10"]
    assert [k for k, _, _ in headline_metrics("zero")] == ["mar", "ndcg_at_10", "precision_at_10"]
    df = messages_table({"messages": [{"round": 1, "sender": "A", "receiver": "server", "content": "prototypes",
                                       "shape": [4, 9], "bytes": 288}]})
    assert df["shape"].tolist() == ["4 × 9"] and df["sender"].tolist() == ["A"]


def test_a_non_private_run_is_said_not_private_and_states_no_guarantee():
    from dpfed_core.ui.tables import guarantee_text

    doc = {"privacy": {"private": False, "label": "not private (central)", "epsilon": math.inf, "delta": 0.0,
                       "requested_epsilon": math.inf, "requested_delta": 0.0, "assumptions": ["a"],
                       "simulation": False, "warnings": []}}
    text = guarantee_text(doc)
    assert text.startswith("**Not private.** not private") and "-DP" not in text and "(1) a" not in text


def test_the_metrics_table_has_each_methods_entities_then_overall():
    from dpfed_core.ui.tables import metrics_frame

    def doc(label, a, overall):
        return {"method": {"label": label, "privacy_model": "pm"}, "privacy": {"label": "g"},
                "entities": [{"name": "A", "mar": a}], "overall": {"name": "overall", "mar": overall}}

    df = metrics_frame({"m1": doc("one", 0.2, 0.25), "m2": doc("two", 0.3, 0.35)})
    assert df[["method", "entity", "mar"]].values.tolist() == [["m1", "A", 0.2], ["m1", "overall", 0.25],
                                                               ["m2", "A", 0.3], ["m2", "overall", 0.35]]


def test_clinical_data_is_named_in_stays_whatever_the_case_of_its_name():
    from dpfed_core.ui.tables import unit_word

    for name in ("eICU-CRD demo", "Sample: clinic (regions)", "Clinic export"):
        assert unit_word(tiny(name=name)) == "stays" and unit_word(tiny(name=name), plural=False) == "stay"
    assert unit_word(tiny(name="MovieLens 100k")) == "users"


def test_scores_that_are_not_finite_are_no_candidates_for_a_ranking():
    from dpfed_core.ui.tables import cannot_rank

    assert "same score" in cannot_rank(np.array([0.5, 0.5, -np.inf, np.nan]), "model")
    assert "no item left" in cannot_rank(np.array([-np.inf, np.nan]), "model")
    assert cannot_rank(np.array([0.5, 0.4, -np.inf]), "model") is None


def test_the_evidence_counts_only_the_k_nearest_rows():
    import scipy.sparse as sp

    from dpfed_core.data.split import Split
    from dpfed_core.ui.tables import similar_evidence

    # user 0 has items {0, 1}; user 2 ({0, 3}) is nearer to it than user 1 ({0, 2, 3})
    X = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 0, 1, 1], [1, 0, 0, 1], [0, 0, 0, 1.0]]))
    ds = FederatedDataset.from_parts(X, np.array(["A"] * 4), value_kind="counts", value_max=5, name="t")
    split = Split.of(X, sp.csr_matrix(X.shape), np.array([], dtype=int))
    assert similar_evidence(ds, split, "A", ds.user_ids[0], [2, 3], k=1) == ["seen with 0 of 1 similar users",
                                                                           "seen with 1 of 1 similar users"]


def test_an_item_with_public_features_is_known_to_every_site():
    from dataclasses import replace

    ds, split, result = _two_disjoint_sites()
    F = np.zeros((ds.n_items, 1))
    F[8] = 1.0  # b2 is described in the public feature table
    featured = replace(ds, item_features=F, item_feature_names=("f",))
    assert dash.names_known_to(featured, split, result, "A").tolist() == [True] * 6 + [False, False, True] + [False] * 3


def test_the_unshared_note_counts_every_item_and_marks_more_only_beyond_the_eight_it_names():
    ds, split, result, *_ = _scored_run()
    for n, more in ((8, False), (9, True)):
        result.extra = {"catalogue": list(range(n, ds.n_items))}
        (note,) = dash.unshared_items_notes(ds, result, "patients")
        assert note.startswith(f"**{n} of {ds.n_items} items were left out")
        assert (" …. Each entity's" in note) is more and str(ds.item_names[7]) in note
        assert str(ds.item_names[8]) not in note.split(" — ")[1].split(". Each")[0]


def test_an_entitys_users_and_test_users_hold_none_of_the_next_entity_and_a_history_lists_the_largest_values_first():
    import scipy.sparse as sp

    from dpfed_core.data.split import Split
    from dpfed_core.ui.tables import entity_test_users, entity_users, user_history

    ds = tiny(user_ids=["u0", "u1", "u2", "u3"])  # A: rows 0–1, B: rows 2–3
    assert entity_users(ds, "A", test_users_only=np.array([2, 1])) == ["u1", "u0"]
    test = sp.csr_matrix(np.array([[0, 4.0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]))
    split = Split.of(ds.X, test, np.array([0, 2]))
    assert entity_test_users(ds, split, "A").tolist() == [0] and entity_test_users(ds, split, "B").tolist() == [2]
    df = user_history(ds, split, "A", "u0")
    assert df[["value", "status"]].values.tolist() == [[4.0, "hidden (test)"], [2.0, "training data"],
                                                       [1.0, "training data"]]


def test_event_measures_of_an_entity_skip_users_without_hidden_items_and_their_spread_is_the_sample_sds():
    """PR-AUC's paired spread is the sd of the per-user differences (n − 1) over √n; one test user has no
    spread at all; the entity's set measures average over the users who have hidden items."""
    from types import SimpleNamespace

    from dpfed_core.evaluation.metrics import set_metrics
    from dpfed_core.ui.tables import entity_set_metrics

    rng = np.random.default_rng(4)
    n_users, m = 30, 12
    train = sp.csr_matrix((rng.random((n_users, m)) < 0.3).astype(float))
    hidden = (rng.random((n_users, m)) < 0.25) & (train.toarray() == 0)
    hidden[16] = False  # a test user whose row has nothing hidden
    test = sp.csr_matrix(hidden.astype(float))
    ds = SimpleNamespace(entity_slices=lambda: [slice(0, 15), slice(15, 30)], entity_index=["A", "B"].index)
    split = SimpleNamespace(train=train, test=test, test_users=np.arange(n_users))
    S1, S2 = rng.random((n_users, m)), rng.random((n_users, m))
    model = lambda S: SimpleNamespace(entity_factors=lambda: SimpleNamespace(scores=lambda u: S[u]))  # noqa: E731
    users = np.arange(15, 30)
    a, b = (set_metrics(S[users], train[users], test[users], 10) for S in (S1, S2))
    diff = (a["pr_auc"] - b["pr_auc"])[np.isfinite(a["pr_auc"] - b["pr_auc"])]
    assert diff.size == 14
    out = dash.entity_paired_spread(ds, split, model(S1), model(S2), "B", events=True)
    assert out["pr_auc"] == pytest.approx(np.std(diff, ddof=1) / np.sqrt(14))
    got = entity_set_metrics(ds, split, model(S1), "B")
    assert got["n"] == 15 and got["pr_auc"] == pytest.approx(np.nanmean(a["pr_auc"]))
    assert got["jaccard"] == pytest.approx(np.nanmean(a["jaccard"])) and math.isfinite(got["f1"])
    one = SimpleNamespace(train=train, test=test, test_users=np.array([3, 20]))
    assert dash.entity_paired_spread(ds, one, model(S1), model(S2), "B", events=True) == {
        "mar": None, "pr_auc": None, "n": 1, "mar_diff": None}


def test_an_entity_gets_its_word_at_exactly_the_evidence_rules_test_users_and_beside_a_measure_inside_its_noise():
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS

    worse = dash.entity_against_alone(0.14, 0.12)
    assert dash.entity_standing_banner(worse, MIN_EVIDENCE_USERS, "H1", "stay", "stays", "x", 0.14, 0.12, 5)[0] == "error"
    assert dash.entity_standing_banner(worse, MIN_EVIDENCE_USERS - 1, "H1", "stay", "stays", "x", 0.14, 0.12,
                                       5)[0] == "info"
    # MAR inside its noise, PR-AUC worse beyond its own: the worse word stands
    mixed = dash.entity_against_alone(0.14, 0.12, {"pr_auc": 0.20}, {"pr_auc": 0.30}, {"mar": 0.0103, "pr_auc": 0.001})
    assert mixed["mar"] == "noise" and mixed["worse"]
    assert dash.entity_standing_banner(mixed, 40, "H1", "stay", "stays", "x", 0.14, 0.12, 5)[0] == "error"


def test_a_downloaded_document_is_strict_json_and_a_stored_runs_line_skips_undefined_metrics_and_escapes():
    import json

    from dpfed_core.ui.tables import document_json, stored_run_summary

    text = document_json({"privacy": {"epsilon": math.inf, "requested_epsilon": -math.inf}, "overall": {"mar": 0.2}})
    back = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert back["privacy"] == {"epsilon": "inf", "requested_epsilon": "-inf"}
    doc = {"method": {"name": "dp-cooccurrence"}, "config": {"mode": "zero"},
           "privacy": {"label": "**(3, 1e-06)-DP**"}, "overall": {"mar": float("nan"), "ndcg_at_10": 0.31}}
    line = stored_run_summary(doc)
    assert "MAR" not in line and "nan" not in line and "NDCG@10 0.3100" in line
    assert "**" not in line  # a label is text, never Markdown of its own


def test_the_server_broadcast_and_ledger_tab_state_their_counts_and_name_every_column():
    from dpfed_core.models.blend import MIN_EVIDENCE_USERS
    from dpfed_core.ui.tables import broadcast_column_names, ledger_table, progress_text

    assert progress_text("server_start", {"n_prototypes": 30}) == (
        "Server · fitting V on 30 stacked prototypes (no privacy cost)…")
    assert progress_text("broadcast", {"receivers": 4}) == "Round 2 · server broadcasts V to 4 entities"
    assert broadcast_column_names((slice(0, 2), None), 4) == ["factor 1", "factor 2", "column 3", "column 4"]
    assert list(ledger_table({"privacy": {"ledger": []}}).columns) == [
        "entity", "stage", "mechanism", "epsilon", "delta", "sensitivity", "noise_scale", "note"]
    few = dash.few_test_users_text("H1", 3, "stay", "stays", "x", 0.2, 0.21)
    assert f"(under {MIN_EVIDENCE_USERS})" in few
    none = dash.entity_against_alone(None, 0.12)
    assert "A test stay needs more than 5 entries" in dash.entity_standing_banner(none, 0, "H1", "stay", "stays", "x",
                                                                                   None, 0.12, 5)[1]


def test_a_download_keeps_every_figure_of_the_odometer_and_a_user_without_training_rows_is_said_to_have_none():
    from dpfed_core.data.split import Split
    from dpfed_core.ui.tables import shareable_document, similar_evidence

    doc = {"odometer": {"store": "/srv/owner/budget.sqlite3", "spent": 1.5, "cap": 10.0}, "overall": {"mar": 0.2}}
    assert shareable_document(doc) == {"odometer": {"store": "budget.sqlite3", "spent": 1.5, "cap": 10.0},
                                       "overall": {"mar": 0.2}}
    X = sp.csr_matrix(np.array([[0, 0, 0, 0], [1, 0, 1, 1], [1, 0, 0, 1.0]]))
    ds = FederatedDataset.from_parts(X, np.array(["A"] * 3), value_kind="counts", value_max=5, name="t")
    split = Split.of(X, sp.csr_matrix(X.shape), np.array([], dtype=int))
    assert similar_evidence(ds, split, "A", ds.user_ids[0], [2, 3]) == ["no training data for this user to compare"] * 2


def test_mapping_problems_refuse_a_wide_tables_column_as_the_value():
    """A wide table's item2 chosen as the Value beside a real Item column is another item's cells read
    as every row's value: the Data page says so, as the CLI refuses --value-col item2."""
    wide = dash.wide_item_columns(["user", "site", "drug", "item1", "item2", "item3"])
    (problem,) = dash.mapping_problems("user", "drug", "site", "item2", None, wide=wide)
    assert problem.startswith("Choose another “Value”: the 3 columns item1 … item3 are one column per item")
    assert dash.mapping_problems("user", "drug", "site", None, None, wide=wide) == []
