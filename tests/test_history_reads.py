"""The dashboard's History reads are reads: listing and reopening stored results work on a store this process
cannot write, take no write lock and create nothing (no table, no row); a store that does not exist yet is
answered as "nothing stored, nothing spent" and stays absent (no file, no folder); a result kept right after
the first charge of a fresh store is filed under the account the charge named."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from dpfed_core.data.loaders import load_data
from dpfed_core.models.entity_factors import EntityFactors
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease
from dpfed_core.privacy.store import Store
from dpfed_core.ui import history


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def plan(ds, eps: float) -> PlannedRelease:
    return PlannedRelease("run", "dp-gaussian", eps, 1e-6, {e: (eps, 1e-6) for e in ds.entity_names})


def factors_result(seed: int = 0):
    """A run's result as :func:`history.save` reads it: factors and one prototype block per entity."""
    rng = np.random.default_rng(seed)
    factors = EntityFactors(rng.random((4, 2)), rng.random((3, 2)))
    releases = [SimpleNamespace(prototypes=rng.random((2, 3))) for _ in range(2)]
    return SimpleNamespace(entity_factors=lambda: factors, model=SimpleNamespace(releases_=releases))


RUN_DOC = {"config": {"method": "kmeans", "k": 1}, "dataset": {"name": "clinic"}}
SWEEP_DOC = {"config": {"method": "kmeans"}, "epsilons": [1.0], "runs": [], "dataset": {"name": "clinic"}}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as con:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def unwritable(monkeypatch, folder: Path) -> None:
    """The store's folder cannot be written by this process (a reviewer reading a shared store)."""
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if Path(p) == folder and mode & os.W_OK
                        else real(p, mode, *a, **k))


def test_a_stored_run_reopens_with_its_factors_from_a_store_this_process_cannot_write(tmp_path, monkeypatch,
                                                                                      clinic):
    folder = tmp_path / "shared"
    folder.mkdir()
    monkeypatch.setenv("DPFED_STORE", str(folder / "s.sqlite3"))
    res = factors_result()
    rid = history.save(clinic, "run", RUN_DOC, res)
    sid = history.save(clinic, "sweep", SWEEP_DOC)
    unwritable(monkeypatch, folder)
    assert history.owner_store(clinic)[0].readonly
    key = history.owner_key(clinic)
    assert [e.id for e in history.list_entries(clinic, key=key)] == [sid, rid]
    stored = history.load(clinic, rid, key=key)
    np.testing.assert_array_equal(stored["arrays"]["U"], res.entity_factors().U)
    np.testing.assert_array_equal(stored["arrays"]["P1"], res.model.releases_[1].prototypes)
    assert history.load(clinic, sid, key=key)["arrays"] == {}


def test_a_run_kept_without_factors_reopens_from_its_document_on_a_read_only_store_with_no_arrays_table(
        tmp_path, monkeypatch, clinic):
    """A store whose results came from the command line has no table of factors: reading it makes none."""
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    rid = history.save(clinic, "run", RUN_DOC)
    assert "dashboard_arrays" not in tables(path)
    unwritable(monkeypatch, folder)
    stored = history.load(clinic, rid, key=history.owner_key(clinic))
    assert stored["arrays"] == {} and stored["doc"]["config"] == RUN_DOC["config"]
    with pytest.raises(ValueError, match="stored without its factors"):
        history.restored_run(stored)


def test_reopening_a_stored_result_takes_no_write_lock_and_changes_nothing(tmp_path, monkeypatch, clinic):
    path = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    rid = history.save(clinic, "run", RUN_DOC)
    key = history.owner_key(clinic)
    before = snapshot(tmp_path)
    assert history.load(clinic, rid, key=key)["doc"]["config"] == RUN_DOC["config"]
    assert [e.id for e in history.list_entries(clinic, key=key)] == [rid]
    assert snapshot(tmp_path) == before
    assert "dashboard_arrays" not in tables(path)
    writer = sqlite3.connect(path, isolation_level=None)  # another session charging meanwhile
    writer.execute("BEGIN IMMEDIATE")
    try:
        store = Store(path, timeout=0.5)
        monkeypatch.setattr(history, "owner_store", lambda ds, k=None: (store, k or key))
        assert history.load(clinic, rid, key=key)["doc"]["config"] == RUN_DOC["config"]
        assert [e.id for e in history.list_entries(clinic, key=key)] == [rid]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_the_dashboards_reads_of_a_store_that_does_not_exist_yet_make_no_store_and_no_folder(tmp_path, monkeypatch,
                                                                                            clinic):
    """First start, nothing run yet: the owner's name, the history list, a stored result, the budget line and a
    button's planned charge answer "nothing stored, nothing spent"; the first charge makes the store."""
    from dpfed_core.evaluation.budget import plan_run
    from dpfed_core.config import RunConfig
    from dpfed_core.ui.budget import budget_line

    path = tmp_path / "new" / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    key = history.owner_key(clinic)
    assert BudgetOdometer.names_no_account(clinic, key)
    assert history.list_entries(clinic, key=key) == []
    assert history.load(clinic, 1, key=key) is None and history.delete(clinic, 1, key=key) is False
    with history.reading_store(clinic, key) as (store, read_key):
        assert budget_line(store, clinic, read_key) == "Budget: nothing released yet (no cap set)"
    text = history.planned_charge_text(clinic, plan_run(clinic, RunConfig(method="dp-gaussian", epsilon=1.0)))
    assert text.startswith("spends ε") and "unknown" not in text, text
    assert not path.parent.exists()
    history.charged(clinic, [plan(clinic, 1.0)], lambda: None, key=key)
    assert path.exists()
    with history.reading_store(clinic, history.owner_key(clinic)) as (store, read_key):
        assert store.path == path and "nothing released" not in budget_line(store, clinic, read_key)


def test_the_history_page_on_a_first_start_shows_nothing_stored_and_leaves_no_store(tmp_path, monkeypatch):
    from tests.test_app_pages import app, assert_clean

    path = tmp_path / "new" / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    at = app("pages/8_History.py").run()
    assert_clean(at)
    assert any("Nothing stored for this dataset yet" in i.value for i in at.info)
    assert any("Nothing spent yet" in i.value for i in at.info), [i.value for i in at.info]
    assert not path.parent.exists()
    at.button(key="hist_make_store_button").click().run()  # a cap is a write: asked for, it makes the store
    assert_clean(at)
    assert [n.label for n in at.number_input][:1] == ["Budget cap ε per entity"] and path.exists()


def test_a_run_kept_right_after_the_first_charge_of_a_new_store_is_listed_and_reopens_with_its_factors(
        tmp_path, monkeypatch, clinic):
    """The dashboard names the data before the store exists (a name that finds nothing), charges with that
    name — the charge makes the store and its key — and keeps the result: it is filed under the account the
    charge named, so the next read lists it and reopens it."""
    path = tmp_path / "new" / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    early = history.owner_key(clinic)
    history.charged(clinic, [plan(clinic, 1.0)], lambda: None, key=early)
    res = factors_result(3)
    rid = history.save(clinic, "run", RUN_DOC, res, key=early)
    odo = BudgetOdometer(Store(path))
    charged_to = odo.releases(odo.account_key(clinic, create=False))
    assert len(charged_to) == 1
    key = history.owner_key(clinic)
    assert key == odo.account_key(clinic, create=False) != early
    assert [e.id for e in history.list_entries(clinic, key=key)] == [rid]
    stored = history.load(clinic, rid, key=key)
    np.testing.assert_array_equal(stored["arrays"]["V"], res.entity_factors().V)
    assert history.load(clinic, rid, key=early) is None  # a name of no account finds nothing


def test_a_store_deleted_beside_its_key_is_refused_by_the_history_not_read_as_a_first_start(tmp_path, monkeypatch,
                                                                                           clinic):
    """A store that held a budget and was deleted (its key is still there) is a lost budget, not a new one: the
    History list says so instead of answering "nothing stored"."""
    from dpfed_core.privacy.store import StoreError

    path = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    history.charged(clinic, [plan(clinic, 1.0)], lambda: None)
    history.save(clinic, "sweep", SWEEP_DOC)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert not history.store_missing()
    with pytest.raises(StoreError, match="deleted or moved"):
        history.list_entries(clinic, key="dk-" + "0" * 40)
    assert not path.exists()


def test_the_history_page_of_a_store_deleted_beside_its_key_names_the_lost_store_without_a_traceback(
        tmp_path, monkeypatch, clinic):
    from tests.test_app_pages import app, assert_clean

    path = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    history.charged(clinic, [plan(clinic, 1.0)], lambda: None)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    at = app("pages/8_History.py").run()
    assert_clean(at)
    assert any("deleted or moved" in e.value for e in at.error), [e.value for e in at.error]
    assert not path.exists()


def test_the_history_page_names_what_failed_and_where_when_the_store_cannot_be_read(tmp_path, monkeypatch, clinic):
    from dpfed_core.privacy.store import StoreError
    from tests.test_app_pages import app, assert_clean

    path = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    history.charged(clinic, [plan(clinic, 1.0)], lambda: None)

    def locked(*a, **k):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(history, "list_entries", locked)
    at = app("pages/8_History.py").run()
    assert_clean(at)
    said = [e.value.replace("\\", "") for e in at.error]  # as read, without markdown's escapes
    assert len(said) == 1 and "database is locked (OperationalError)" in said[0] and "s.sqlite3" in said[0], said

    def refused(*a, **k):
        raise StoreError("the store is damaged; restore it from a backup (--store)")

    monkeypatch.setattr(history, "list_entries", refused)
    at = app("pages/8_History.py").run()
    said = [e.value.replace("\\", "") for e in at.error]
    assert len(said) == 1 and said[0].startswith("the store is damaged; restore it from a backup"), said


def test_deleting_a_result_removes_its_arrays_and_adds_no_table_to_a_store_that_kept_none(tmp_path, monkeypatch,
                                                                                        clinic):
    path = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(path))
    history.charged(clinic, [plan(clinic, 1.0)], lambda: None)
    key = history.owner_key(clinic)
    sweep = history.save(clinic, "sweep", SWEEP_DOC, key=key)
    before = tables(path)
    assert "dashboard_arrays" not in before
    assert history.delete(clinic, sweep, key=key)
    assert tables(path) == before and history.list_entries(clinic, key=key) == []
    run = history.save(clinic, "run", RUN_DOC, factors_result(1), key=key)
    assert history.delete(clinic, run, key=key)
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT COUNT(*) FROM dashboard_arrays").fetchone() == (0,)


def test_deleting_a_result_checks_its_owner_from_the_document_and_never_unpacks_its_arrays(tmp_path, monkeypatch,
                                                                                         clinic):
    """A stored run's arrays (U, V, every entity's prototypes) can be large: deleting it reads the entry's
    document to check the owner and removes the arrays unread; another owner's id is still refused."""
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    history.charged(clinic, [plan(clinic, 1.0)], lambda: None)
    key = history.owner_key(clinic)
    run = history.save(clinic, "run", RUN_DOC, factors_result(2), key=key)
    unpacked: list = []
    real = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: unpacked.append(a) or real(*a, **k))
    assert history.delete(clinic, run, key="dk-" + "0" * 64) is False
    assert history.list_entries(clinic, key=key) != []
    assert history.delete(clinic, run, key=key) is True
    assert unpacked == [] and history.list_entries(clinic, key=key) == []
    assert history.load(clinic, run, key=key) is None
