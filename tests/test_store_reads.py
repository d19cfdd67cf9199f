"""Reading the budget store never writes it: a store with no fingerprint key yet is read as "nothing spent" and
keeps no key file and no row it did not have; only a charge gives it its key. A store whose key file is gone
cannot name any account: every charge and every read of data is refused with one error naming the key file,
and no new key is ever made (it would orphan every account and give the people already charged a fresh budget)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from dpfed_core.cli.main import main
from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.budget import plan_run, planned_charge
from dpfed_core.evaluation.experiments import json_safe
from dpfed_core.evaluation.service import resumed_points, sweep_data_key
from dpfed_core.privacy import fingerprint
from dpfed_core.privacy.fingerprint import FingerprintKeyError, secret_path
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease
from dpfed_core.privacy.store import Store
from dpfed_core.ui import history
from dpfed_core.ui.budget import budget_line, budget_view


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def plan(ds, eps: float) -> PlannedRelease:
    return PlannedRelease("run", "dp-gaussian", eps, 1e-6, {e: (eps, 1e-6) for e in ds.entity_names})


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of the store's folder (store, write-ahead log, key) with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


DATA = ["--data", "sample:clinic"]
RUN = ["--method", "dp-popularity", "--epsilon", "1", "--delta", "1e-6"]


def reads(store: Path, ds, capsys) -> None:
    """Every way a user reads the store about these data: the command line's `budget show` and dry runs, the
    dashboard's budget page, line, history and a run's planned charge, a resumed sweep's check of its document."""
    at = ["--store", str(store)]
    assert main(["budget", "show", *DATA, *at]) == 0
    assert main(["budget", "show", *DATA, *at, "--json"]) == 0
    assert main(["budget", "releases", *DATA, *at]) == 0
    assert main(["run", *DATA, *at, *RUN, "--dry-run"]) == 0
    assert main(["sweep", *DATA, *at, "--method", "dp-popularity", "--epsilons", "0.5,1", "--seeds", "0",
                 "--references", "individual", "--dry-run"]) == 0
    capsys.readouterr()
    config = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6)
    s = Store(store)
    odo = BudgetOdometer(s)
    assert all(b.spent_epsilon == 0 for b in odo.balance(ds))
    assert odo.preview(ds, [plan(ds, 1.0)])["spend"] > 0
    assert not odo.knows(ds)
    odo.identity(ds)
    odo.account_key(ds, create=False)
    assert planned_charge(s, ds, plan_run(ds, config))["fits"]
    assert budget_view(s, ds)["releases"] == []
    assert budget_line(s, ds).startswith("Budget: nothing released yet")
    key = history.owner_key(ds)
    assert history.list_entries(ds, key=key) == []
    assert sweep_data_key(ds, config, [1.0], [0], ["individual"], s)
    other = {"config": json_safe(config.to_dict()), "runs": [], "data_key": "dk-" + "0" * 40}
    with pytest.raises(ConfigError, match="other data"):  # a document of other data: refused, by reading alone
        resumed_points(other, ds, config, [1.0], [0], ["individual"], s)


def test_every_read_of_a_store_with_no_key_yet_leaves_it_byte_for_byte_as_it_was(tmp_path, monkeypatch, capsys,
                                                                                  clinic):
    store = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(store))
    Store(store)
    before = snapshot(tmp_path)
    reads(store, clinic, capsys)
    assert snapshot(tmp_path) == before
    assert not secret_path(store).exists()
    # a charge gives the store its key, and every read finds what it charged
    assert main(["run", *DATA, "--store", str(store), *RUN, "--out", str(tmp_path / "r.json")]) == 0
    assert secret_path(store).exists()
    capsys.readouterr()
    odo = BudgetOdometer(Store(store))
    assert odo.knows(clinic)
    assert max(b.spent_epsilon for b in odo.balance(clinic)) > 0
    assert budget_view(Store(store), clinic)["key"] == odo.account_key(clinic, create=False)
    assert main(["budget", "show", *DATA, "--store", str(store), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert max(e["spent_epsilon"] for e in shown["entities"]) > 0


def test_a_read_of_a_store_whose_key_is_named_by_the_environment_writes_no_row(tmp_path, monkeypatch, capsys,
                                                                               clinic):
    """A key shared through the environment exists before the store is first charged: a read finds it and still
    records nothing (the store is bound to its key by its first charge)."""
    key = tmp_path / "shared.fpkey"
    fingerprint.create_secret(key)
    monkeypatch.setenv(fingerprint.SECRET_ENV, str(key))
    store = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(store))
    Store(store)
    before = snapshot(tmp_path)
    reads(store, clinic, capsys)
    assert snapshot(tmp_path) == before
    BudgetOdometer(Store(store)).reserve(clinic, [plan(clinic, 1.0)])
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT COUNT(*) FROM meta WHERE name = 'fingerprint_key_id'").fetchone()[0] == 1


def test_a_name_read_before_the_store_had_a_key_charges_and_files_under_the_accounts_name(tmp_path, monkeypatch,
                                                                                          clinic):
    """The dashboard names its data by a read (no key yet) and charges and files its result with that name: the
    charge and the history use the name under the key the charge creates, which later reads find."""
    store = tmp_path / "s.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(store))
    early = history.owner_key(clinic)
    assert BudgetOdometer.names_no_account(clinic, early)
    assert history.charged(clinic, [plan(clinic, 1.0)], lambda: "done", key=early) == "done"
    entry = history.save(clinic, "run", {"method": "dp-gaussian", "config": {}}, key=early)
    odo = BudgetOdometer(Store(store))
    named = odo.account_key(clinic, create=False)
    assert named != early and not BudgetOdometer.names_no_account(clinic, named)
    assert max(b.spent_epsilon for b in odo.balance(named)) == pytest.approx(1.0)
    assert [e.id for e in history.list_entries(clinic, key=history.owner_key(clinic))] == [entry]


def test_naming_an_account_for_a_charge_reads_the_key_once(tmp_path, monkeypatch, clinic):
    odo = BudgetOdometer(Store(tmp_path / "s.sqlite3"))
    odo.register(clinic)
    calls = []
    real = fingerprint.read_secret
    monkeypatch.setattr(fingerprint, "read_secret", lambda p: calls.append(p) or real(p))
    odo.register(clinic)
    assert len(calls) == 1


def charged_store(tmp_path: Path, clinic) -> tuple[Path, Path]:
    store = tmp_path / "s.sqlite3"
    assert main(["run", *DATA, "--store", str(store), *RUN, "--out", str(tmp_path / "r.json")]) == 0
    key = secret_path(store)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    key.rename(moved / key.name)
    return store, key


def test_a_store_whose_key_file_is_gone_refuses_every_charge_and_read_of_data_naming_the_key(tmp_path, capsys,
                                                                                           clinic):
    store, key = charged_store(tmp_path, clinic)
    capsys.readouterr()
    before = snapshot(tmp_path)
    for argv in (["run", *DATA, "--store", str(store), *RUN, "--out", str(tmp_path / "r2.json")],
                 ["budget", "set-cap", *DATA, "--store", str(store), "--epsilon", "5"],
                 ["budget", "show", *DATA, "--store", str(store)],
                 ["run", *DATA, "--store", str(store), *RUN, "--dry-run"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("error:") == 1 and "Traceback" not in err
        assert f"expected at {key}" in err
        assert "accounts are named with it" in err
        assert "backup" in err and "--store" in err and "DPFED_STORE" in err
        assert "does not reset the budget these data already spent" in err
    odo = BudgetOdometer(Store(store))
    with pytest.raises(FingerprintKeyError, match="is missing"):
        odo.reserve(clinic, [plan(clinic, 1.0)])
    with pytest.raises(FingerprintKeyError, match="is missing"):
        odo.balance(clinic)
    assert not key.exists()
    assert snapshot(tmp_path) == before
    # the accounts the store holds are still listed, by the names they are stored under
    assert main(["budget", "list", "--store", str(store)]) == 0
    listed = capsys.readouterr().out
    assert "dk-" in listed and "sample: clinic" in listed


def test_a_store_holding_accounts_without_a_recorded_key_still_refuses_to_make_a_new_one(tmp_path, clinic):
    """The accounts' names are the proof a key existed, even with no key id and no keyed fingerprint stored."""
    store, key = charged_store(tmp_path, clinic)
    with sqlite3.connect(store) as con:
        con.execute("DELETE FROM meta WHERE name = 'fingerprint_key_id'")
        con.execute("DELETE FROM fingerprints")
    with pytest.raises(FingerprintKeyError, match="accounts are named with it"):
        BudgetOdometer(Store(store)).reserve(clinic, [plan(clinic, 1.0)])
    assert not key.exists()
