"""The Streamlit glue every page shares (``dpfed_core.ui.widgets``), read through a stand-in for
Streamlit that records what the pages would show: what a new dataset clears, what an upload's cache
key holds, which results are kept, what the sidebar and a run's warnings say, and how a background
job's error and progress reach the page."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.ui import widgets as ui
from dpfed_core.ui.jobs import JobCache


class FakeStreamlit:
    """What the glue calls on ``st``: ``session_state`` is a dict, every element call is recorded."""

    def __init__(self):
        self.session_state: dict = {}
        self.calls: list[tuple[str, tuple, dict]] = []

    def said(self, kind: str) -> list[str]:
        return [str(a[0]) for k, a, _ in self.calls if k == kind and a]

    @contextmanager
    def expander(self, label, **kw):
        self.calls.append(("expander", (label,), kw))
        yield self

    def progress(self, value, text=""):
        self.calls.append(("progress", (value,), {"text": text}))
        return self

    def stop(self):
        raise RuntimeError("st.stop")

    def __getattr__(self, name):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
        return record


@pytest.fixture
def st(monkeypatch):
    fake = FakeStreamlit()
    monkeypatch.setattr(ui, "st", fake)
    return fake


def small_dataset(values=(1.0, 2.0, 3.0), name="small") -> FederatedDataset:
    X = sp.csr_matrix(np.array([[values[0], 0.0], [0.0, values[1]], [values[2], 1.0]]))
    return FederatedDataset.from_parts(X, np.array(["A", "A", "B"]), value_kind="ratings", name=name)


# ------------------------------------------------------------------------------ session state
def test_new_data_clears_the_old_datas_results_and_choices_and_the_same_data_keeps_them(st):
    ds = small_dataset()
    ui.set_dataset(ds, "first", ("sample:clinic", {}))
    assert (st.session_state[ui.DATASET_SOURCE], st.session_state[ui.DATA_CLI]) == ("first", ("sample:clinic", {}))
    old = {ui.RUN: {"doc": 1}, ui.COMPARISON: 2, ui.SWEEP: 3, ui.CONFIG: 4, "audit_result": 5, "fed_epsilon": 1.0,
           "sweep_grid": "1,2", "rec_user": "u1", "audit_k": 3, "data_choice": "keep me"}
    st.session_state.update(old)
    st.session_state[ui._STORE].update({"fed_epsilon": 1.0, "audit_k": 3, "data_choice": "keep me"})
    ui.set_dataset(ds, "again")  # the same data: nothing of it is stale
    assert all(st.session_state[k] == v for k, v in old.items())
    assert st.session_state[ui.DATA_CLI] is None  # read again from an upload: no --data flags
    ui.set_dataset(small_dataset((5.0, 2.0, 3.0)), "other")
    assert [k for k in old if k in st.session_state] == ["data_choice"]
    assert st.session_state[ui._STORE] == {"data_choice": "keep me"}
    assert st.session_state[ui.DATASET_SOURCE] == "other"


def test_a_widget_gets_its_remembered_value_its_default_or_keeps_what_it_holds(st):
    ui.widget_default("fed_rank", 4)
    assert st.session_state["fed_rank"] == 4
    st.session_state["fed_rank"] = 8
    ui.widget_default("fed_rank", 4)  # a value the user set is not reset
    assert st.session_state["fed_rank"] == 8
    ui.remember("fed_rank", "fed_not_created")
    assert st.session_state[ui._STORE] == {"fed_rank": 8}
    del st.session_state["fed_rank"]  # the page was left: Streamlit dropped the widget's value
    ui.widget_default("fed_rank", 4)
    assert st.session_state["fed_rank"] == 8
    ui.forget("fed_")
    assert "fed_rank" not in st.session_state and st.session_state[ui._STORE] == {}
    ui.widget_default("fed_rank", 4)
    assert st.session_state["fed_rank"] == 4


def test_non_private_releases_are_not_allowed_until_the_box_is_ticked(st):
    assert ui.allow_non_private() is False
    st.session_state[ui.ALLOW_NP] = True
    assert ui.allow_non_private() is True


def test_the_owner_key_is_recomputed_when_the_data_changes(st, monkeypatch):
    from dpfed_core.ui import history

    monkeypatch.setattr(history, "owner_key", lambda ds: f"key of {ds.name}")
    assert ui.owner_key() is None
    st.session_state.update({ui.DATASET: small_dataset(), ui.DATASET_KEY: "k1"})
    assert ui.owner_key() == "key of small"
    st.session_state.update({ui.DATASET: small_dataset(name="other"), ui.DATASET_KEY: "k2"})
    assert ui.owner_key() == "key of other"


def test_the_owner_key_read_before_the_store_has_a_key_is_named_again_after_the_first_charge(st, monkeypatch, tmp_path):
    """A store with no fingerprint key yet is read under a name of this process only (reading never makes the key):
    the session must not keep that name, or its results would be filed where no later session finds them."""
    from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease
    from dpfed_core.privacy.store import Store

    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    ds = small_dataset()
    st.session_state.update({ui.DATASET: ds, ui.DATASET_KEY: "k1"})
    early = ui.owner_key()
    assert BudgetOdometer.names_no_account(ds, early)
    odo = BudgetOdometer(Store(tmp_path / "s.sqlite3"))
    odo.reserve(ds, [PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in ds.entity_names})])
    assert ui.owner_key() == odo.account_key(ds, create=False) != early
    assert ui.owner_key() == odo.account_key(ds, create=False)


def test_a_result_of_a_simulation_that_opened_no_store_is_not_kept_and_a_store_failure_is_a_warning(st, monkeypatch):
    from dpfed_core.ui import history

    saved = []
    monkeypatch.setattr(history, "save", lambda ds, kind, doc, result=None, key=None: saved.append((kind, key)))
    monkeypatch.setattr(history, "owner_key", lambda ds: "owner")
    ui.record("run", {"odometer": {"store": "/x.sqlite3"}})  # no dataset in the session: nothing to file under
    assert saved == []
    st.session_state.update({ui.DATASET: small_dataset(), ui.DATASET_KEY: "k"})
    ui.record("run", {"odometer": {"store": None}})
    assert saved == []
    ui.record("run", {"odometer": {"store": "/x.sqlite3"}})
    ui.record("sweep", {"odometer": {}})
    assert saved == [("run", "owner"), ("sweep", "owner")]

    def fail(*a, **k):
        raise PermissionError("read-only")

    monkeypatch.setattr(history, "save", fail)
    ui.record("run", {})
    assert st.said("warning") == ["This result could not be saved to the history (PermissionError); it is shown "
                                  "but will not survive a reload."]


def test_an_upload_is_kept_for_the_session_until_it_is_forgotten(st):
    class Uploader:
        def __init__(self, up):
            self.up, self.fake = up, st

        def file_uploader(self, *a, **k):
            return self.up

        def columns(self, spec):
            return self.fake, self.fake

    class Upload:
        name = "ratings.csv"

        def getvalue(self):
            return b"u,i,r\n"

    got = ui.kept_upload(Uploader(Upload()), "Upload", ["csv"], "up")
    assert (got.name, got.getvalue()) == ("ratings.csv", b"u,i,r\n")
    again = ui.kept_upload(Uploader(None), "Upload", ["csv"], "up")  # the page was left and came back
    assert (again.name, again.getvalue()) == ("ratings.csv", b"u,i,r\n")
    assert any("Using **ratings.csv**" in c for c in st.said("caption"))


# ------------------------------------------------------------------------------ an upload's cache key
def _upload_keys(st, monkeypatch, calls):
    keys = []
    monkeypatch.setattr(ui, "run_job", lambda key, fn, label, **kw: (keys.append((key, kw["expected_seconds"])),
                                                                      (None, False))[1])
    monkeypatch.setattr(ui, "_LOADS", None)
    for session, args, kwargs in calls:
        st.session_state = session
        ui.load_upload_job(*args, **kwargs)
    return keys


def test_an_uploads_cache_key_is_its_sessions_and_holds_its_name_options_header_and_attributes(st, monkeypatch):
    """Another session uploading the same bytes gets its own job (it learns nothing from a cached reply),
    and every input of the read is in the key, so no read is served another read's result."""
    one, two = {}, {}
    attrs = {"data": b"user,age\n", "user_col": "user", "filename": "a.csv"}
    keys = _upload_keys(st, monkeypatch, [
        (one, (b"data", "r.csv", "{}"), {}),
        (one, (b"data", "r.csv", "{}"), {}),
        (two, (b"data", "r.csv", "{}"), {}),
        (one, (b"data", "s.csv", "{}"), {}),
        (one, (b"data", "r.csv", '{"entity": "x"}'), {}),
        (one, (b"data", "r.csv", "{}"), {"headerless": True}),
        (one, (b"data", "r.csv", "{}"), {"attributes": attrs}),
        (one, (b"data", "r.csv", "{}"), {"attributes": {**attrs, "user_col": "id"}}),
    ])
    k = [key for key, _ in keys]
    assert k[0] == k[1] and len(set(k)) == 7
    assert all(key.startswith("load:") for key in k)


def test_an_uploads_time_estimate_counts_both_files_at_the_measured_speed(st, monkeypatch):
    attrs = {"data": b"a" * 2_000_000, "user_col": "user", "filename": "a.csv"}
    keys = _upload_keys(st, monkeypatch, [({}, (b"d" * 4_000_000, "r.csv", "{}"), {}),
                                          ({}, (b"d" * 4_000_000, "r.csv", "{}"), {"attributes": attrs})])
    assert [e for _, e in keys] == pytest.approx([1.0 + 4 / 12, 1.0 + 6 / 12])


# ------------------------------------------------------------------------------ runs
@pytest.fixture
def direct_jobs(monkeypatch):
    """Jobs run in the calling thread; the stores runs would open are recorded."""
    from dpfed_core.evaluation import service
    from dpfed_core.ui import history

    seen = {}
    monkeypatch.setattr(ui, "run_job", lambda key, fn, label, **kw: (fn(lambda *a, **k: None), False))
    monkeypatch.setattr(history, "owner_store", lambda ds, key=None: ("the owner's store", "key"))

    def charged_run(store, dataset, config, path, progress, **kw):
        seen["run"] = (store, kw)
        return {"doc": True}, "result", None

    def charged_sweep(store, dataset, config, epsilons, seeds, references, progress, **kw):
        seen["sweep"] = (store, kw)
        return {"sweep": True}, None

    monkeypatch.setattr(service, "charged_run", charged_run)
    monkeypatch.setattr(service, "charged_sweep", charged_sweep)
    return seen


def test_a_simulation_opens_no_store_and_a_run_is_charged_to_the_owners_as_the_page_asked(st, direct_jobs):
    ds = small_dataset()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0)
    ui.run(ds, cfg, comparison=True)
    assert direct_jobs["run"] == ("the owner's store", {"allow_non_private": False, "save": False,
                                                        "comparison": True})
    st.session_state[ui.ALLOW_NP] = True
    ui.run(ds, cfg.replace(simulation=True))
    assert direct_jobs["run"] == (None, {"allow_non_private": True, "save": False, "comparison": False})
    ui.run_sweep(ds, cfg, [1.0], [0], [])
    assert direct_jobs["sweep"] == ("the owner's store", {"allow_non_private": True, "save": False})
    ui.run_sweep(ds, cfg.replace(simulation=True), [1.0], [0], [])
    assert direct_jobs["sweep"][0] is None


def test_a_jobs_error_reaches_the_page_and_a_second_submit_says_it_was_cached(st):
    cache = JobCache()
    assert ui.run_job("k", lambda progress: 42, "Work", cache=cache) == (42, False)
    assert ui.run_job("k", lambda progress: 43, "Work", cache=cache) == (42, True)

    def boom(progress):
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        ui.run_job("k2", boom, "Work", cache=cache)


def test_a_job_without_progress_shows_at_most_95_percent_and_every_line_of_its_events(st):
    cache = JobCache()
    gate = threading.Event()

    def slow(progress):
        progress("step", n=1)
        time.sleep(1.0)
        progress("step", n=2)
        gate.set()
        return "done"

    class Box(FakeStreamlit):
        pass

    box = Box()
    result, cached = ui.run_job("slow", slow, "Reading", container=box, expected_seconds=0.1, cache=cache,
                                lines=lambda event, info: f"{event} {info['n']}")
    assert (result, cached, gate.is_set()) == ("done", False, True)
    shown = [a[0] for k, a, _ in box.calls if k == "progress"]
    assert len(shown) >= 2 and max(shown) == pytest.approx(0.95)
    assert box.said("write") == ["step 1", "step 2"]


def test_only_a_finished_job_without_an_error_is_a_cached_run(monkeypatch):
    from dpfed_core.ui import engine as dash
    from dpfed_core.ui import jobs

    cache = JobCache()
    monkeypatch.setattr(jobs, "JOBS", cache)
    monkeypatch.setattr(dash, "run_key", lambda ds, cfg: cfg)
    gate = threading.Event()
    job, _ = cache.submit("running", lambda p: gate.wait(5))
    assert not ui.is_cached_run(None, "running") and not ui.is_cached_run(None, "never")
    gate.set()
    job.wait(5)
    assert ui.is_cached_run(None, "running")

    def boom(progress):
        raise ValueError("x")

    failed, _ = cache.submit("failed", boom)
    failed.wait(5)
    cache._jobs["failed"] = failed  # a failed job the cache still holds is no cached run
    assert not ui.is_cached_run(None, "failed")


# ------------------------------------------------------------------------------ what the page says
def test_a_run_that_learned_nothing_is_an_error_and_only_notes_the_data_lacked_are_listed(st):
    doc = {"warnings": [{"code": "chance-ranking", "text": "ranks no better than chance"},
                        {"code": "few-users", "text": "few test users"}],
           "notes": ["said by the data", "said by the run", "also by the run"]}
    ui.run_messages(doc, dataset_notes=("said by the data",))
    assert [k for k, _, _ in st.calls if k in ("error", "warning")] == ["error", "warning"]
    assert "chance" in st.said("error")[0] and "few test users" in st.said("warning")[0]
    assert st.said("expander") == ["Notes from this run (2)"]
    assert st.said("markdown") == ["- said by the run", "- also by the run"]


def test_a_budget_refusal_names_the_dashboards_controls_and_another_error_is_one_message(st):
    from dpfed_core.errors import DpfedError
    from dpfed_core.privacy.budget_records import BudgetRefused

    ui.show_error(BudgetRefused("refused: tick {allow_non_private}"))
    ui.show_error(DpfedError("plain trouble"))
    first, second = st.said("error")
    assert "checkbox beside the run button" in first and "allow_non_private=True" not in first
    assert "plain trouble" in second


def test_the_sidebar_states_the_last_runs_spend_and_says_a_simulation(st, monkeypatch):
    monkeypatch.setattr(ui, "_odometer_line", lambda: None)
    ds = small_dataset()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=2.0)
    st.session_state.update({ui.DATASET: ds, ui.DATASET_SOURCE: "my upload",
                             ui.RUN: {"config": cfg, "doc": {"privacy": {"private": True, "epsilon": 2.0,
                                                                         "delta": 1e-6}}}})
    ui.sidebar_status()
    captions = st.said("caption")
    assert captions[0].startswith("**Data:** my upload — 3 users")
    assert "simulation" not in captions[1]
    assert captions[2] == "**Budget of the last run (ledger):** ε = 2, δ = 1e-06 per entity"
    st.calls.clear()
    st.session_state[ui.RUN] = {"config": cfg.replace(simulation=True), "doc": {"privacy": {"private": False}}}
    ui.sidebar_status()
    captions = st.said("caption")
    assert captions[1].endswith(" · *simulation: noise reproducible, no privacy claim*")
    assert captions[2] == "**Budget of the last run (ledger):** ∞ (not private)"
