"""The budget store names a dataset's account by its content key under the store's secret, never by the
content key itself: whoever holds the store file, a result document, a report or a sweep's partial file and
every other row of the data cannot test whether a person is in it by hashing the table with and without them."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dpfed_core.cli.main import main
from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.data.synthetic import reexport
from dpfed_core.errors import DpfedError
from dpfed_core.evaluation.history import RunHistory
from dpfed_core.evaluation.service import execute_sweep
from dpfed_core.privacy.budget_records import dataset_key, keyed_key
from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused, PlannedRelease
from dpfed_core.privacy.store import SCHEMA_VERSION, Store

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def plan(ds, eps: float) -> PlannedRelease:
    return PlannedRelease("run", "dp-gaussian", eps, 1e-6, {e: (eps, 1e-6) for e in ds.entity_names})


def store_bytes(path: Path) -> bytes:
    """The store file and its write-ahead log, as they are on disk."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_the_content_key_is_written_nowhere_a_run_a_sweep_and_an_audit_leave_a_trace(tmp_path, capsys, clinic):
    store = tmp_path / "s.sqlite3"
    content = dataset_key(clinic)
    secret = content[3:]  # the digest, whatever prefix a writer would put before it
    data = ["--data", "sample:clinic", "--store", str(store)]
    run, sweep, audit, html = (tmp_path / n for n in ("run.json", "sweep.json", "audit.json", "r.html"))
    assert main(["run", *data, "--method", "dp-popularity", "--epsilon", "1", "--delta", "1e-6", "--out", str(run)]) == 0
    assert main(["sweep", *data, "--method", "dp-popularity", "--epsilons", "0.5,1", "--seeds", "0",
                 "--references", "individual", "--out", str(sweep)]) == 0
    assert main(["audit", *data, "--methods", "dp-popularity", "--epsilons", "1", "--targets", "typical",
                 "--runs", "8", "--out", str(audit)]) == 0
    assert main(["report", "--run", str(run), "--sweep", str(sweep), "--audit", str(audit), "--out", str(html)]) == 0
    assert main(["budget", "show", *data]) == 0
    assert main(["budget", "show", *data, "--json"]) == 0
    assert main(["budget", "releases", *data]) == 0
    assert main(["budget", "list", "--store", str(store)]) == 0
    printed = capsys.readouterr()
    partials: list = []
    execute_sweep(clinic, RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6), [0.3, 0.6], [1], ["individual"],
                  store=store, checkpoint=lambda doc: partials.append(json.dumps(doc, default=str)), save=False)
    name = BudgetOdometer(store).account_key(clinic)
    assert name.startswith("dk-") and len(name) == len(content) and name != content
    docs = {p.name: p.read_text(encoding="utf-8") for p in (run, sweep, audit)}
    history = [json.dumps(RunHistory(store).open(r["id"]), default=str) for r in RunHistory(store).list()]
    assert {json.loads(t)["odometer"]["dataset_key"] for t in docs.values()} == {name}
    assert json.loads(docs["sweep.json"])["data_key"] == name and partials and all(name in p for p in partials)
    assert len(history) == 3 and all(name in h for h in history)
    written = {"store": store_bytes(store).decode("latin-1"), "report": html.read_text(encoding="utf-8"),
               "output": printed.out + printed.err, **docs, **{f"history {i}": h for i, h in enumerate(history)},
               **{f"partial {i}": p for i, p in enumerate(partials)}}
    assert name in written["store"] and name in written["output"]
    assert [where for where, text in written.items() if secret in text] == []


def _content_named(path: Path, name: str, content: str) -> None:
    """The store as a dpfed of the older naming wrote it: every occurrence of the account's name is its
    content key, and the schema is the one before the keyed names."""
    con = sqlite3.connect(path)
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        for col in [c[1] for c in con.execute(f'PRAGMA table_info("{table}")') if c[2] == "TEXT"]:
            con.execute(f'UPDATE "{table}" SET "{col}" = replace("{col}", ?, ?)', (name, content))
    con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION - 1,))
    con.commit()
    con.close()


def _rows(path: Path) -> dict:
    con = sqlite3.connect(path)
    tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    out = {t: sorted(map(repr, con.execute(f'SELECT * FROM "{t}"'))) for t in tables}
    con.close()
    return out


def test_an_older_store_is_renamed_once_and_keeps_balances_caps_aliases_reservations_and_history(tmp_path, clinic):
    path = tmp_path / "old.sqlite3"
    odo = BudgetOdometer(path)
    odo.set_cap(clinic, 3.0, 1e-5)
    odo.reserve(clinic, [plan(clinic, 1.0)]).close()
    again = reexport(clinic, pseudonyms=True, reorder=True, name="re-export.csv")
    odo.register(again)
    pending = odo.reserve(again, [plan(again, 0.5)])             # reserved, never settled
    name, alias = odo.account_key(clinic), odo.account_key(again)
    RunHistory(odo.store).add("run", {"config": {"method": "dp-gaussian"}, "dataset": {"name": "clinic"},
                                      "odometer": {"dataset_key": name}}, dataset_key=name)
    before = {b.entity: b.spent_epsilon for b in odo.balance(clinic)}
    content, alias_content = dataset_key(clinic), dataset_key(again)
    _content_named(path, name, content)
    _content_named(path, alias, alias_content)
    assert content.encode() in store_bytes(path)               # the older naming, as it was on disk

    odo = BudgetOdometer(path)
    assert odo.store.schema_version() == SCHEMA_VERSION
    assert odo.account_key(clinic) == name and odo.account_key(again) == alias
    assert {d["key"] for d in odo.datasets()} == {name, alias}
    assert odo.identity(again).account == name                   # the re-export is still the same people
    assert odo.cap(name) == (3.0, 1e-5)
    assert {b.entity: b.spent_epsilon for b in odo.balance(clinic)} == before
    assert [(r["id"], r["status"]) for r in odo.releases(clinic) if r["status"] == "reserved"] == [
        (i, "reserved") for i in sorted(pending.release_ids, reverse=True)]
    (entry,) = RunHistory(odo.store).list(dataset_key=name)
    assert RunHistory(odo.store).open(entry["id"])["document"]["odometer"]["dataset_key"] == name
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert content[3:].encode() not in store_bytes(path) and alias_content[3:].encode() not in store_bytes(path)

    rows, secret = _rows(path), odo.secret_path.read_bytes()
    BudgetOdometer(path)                                          # a second open: nothing to rename
    assert _rows(path) == rows and odo.secret_path.read_bytes() == secret
    odo.reserve(clinic, [plan(clinic, 1.0)]).close()              # charges go on to the same account
    assert max(b.spent_epsilon for b in odo.balance(name)) > max(before.values())
    with pytest.raises(BudgetRefused):
        odo.reserve(clinic, [plan(clinic, 2.0)])


def test_an_older_store_that_cannot_be_written_is_read_by_its_older_names(tmp_path, monkeypatch, clinic):
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "old.sqlite3"
    odo = BudgetOdometer(path)
    odo.set_cap(clinic, 3.0, 1e-5)
    odo.reserve(clinic, [plan(clinic, 1.0)]).close()
    _content_named(path, odo.account_key(clinic), dataset_key(clinic))
    rows = _rows(path)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if Path(p) == folder and mode & os.W_OK
                        else real(p, mode, *a, **k))
    odo = BudgetOdometer(path)
    assert odo.store.readonly and odo.knows(clinic)
    assert odo.cap(odo.key_of(clinic)) == (3.0, 1e-5)
    assert max(b.spent_epsilon for b in odo.balance(clinic)) == pytest.approx(1.0)
    assert _rows(path) == rows                                     # read as it is: renamed when next writable


def test_an_older_store_whose_key_is_another_is_refused_and_left_as_it_was(tmp_path, clinic):
    path = tmp_path / "old.sqlite3"
    odo = BudgetOdometer(path)
    odo.reserve(clinic, [plan(clinic, 1.0)]).close()
    _content_named(path, odo.account_key(clinic), dataset_key(clinic))
    rows = _rows(path)
    odo.secret_path.write_bytes(bytes(32))
    with pytest.raises(DpfedError, match="not the key of the store"):
        Store(path)
    assert _rows(path) == rows                                     # all or nothing: not one row renamed


def test_an_older_store_without_a_key_gets_one_and_its_accounts_keyed_names(tmp_path, clinic):
    path = tmp_path / "old.sqlite3"
    odo = BudgetOdometer(path)
    odo.reserve(clinic, [plan(clinic, 1.0)]).close()
    name, secret = odo.account_key(clinic), odo.secret_path
    _content_named(path, name, dataset_key(clinic))
    with sqlite3.connect(path) as con:                           # written before stores had a key
        con.execute("DELETE FROM meta")
        con.execute("DELETE FROM fingerprints")
    secret.unlink()
    odo = BudgetOdometer(path)
    assert secret.exists() and [d["key"] for d in odo.datasets()] == [odo.account_key(clinic)] != [name]
    assert odo.account_key(clinic) == keyed_key(secret.read_bytes(), dataset_key(clinic))
    assert max(b.spent_epsilon for b in odo.balance(clinic)) == pytest.approx(1.0)


def test_two_stores_name_the_same_data_apart_and_one_store_alike_in_another_process(tmp_path, clinic):
    a, b = BudgetOdometer(tmp_path / "a.sqlite3"), BudgetOdometer(tmp_path / "b.sqlite3")
    name_a, name_b = a.account_key(clinic), b.account_key(clinic)
    assert name_a != name_b and {name_a[:3], name_b[:3]} == {"dk-"}
    assert a.account_key(load_data("sample:clinic")) == name_a    # another reading of the same file
    code = ("from dpfed_core.data.loaders import load_data\nfrom dpfed_core.privacy.odometer import BudgetOdometer\n"
            f"print(BudgetOdometer({str(a.path)!r}).account_key(load_data('sample:clinic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == name_a, out.stderr


def test_a_sweep_resumed_with_another_store_is_refused_before_it_is_charged(tmp_path, capsys):
    data = ["sweep", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilons", "0.5,1", "--seeds", "0",
            "--references", "individual"]
    first = tmp_path / "first.sqlite3"
    assert main([*data, "--store", str(first), "--out", str(tmp_path / "sweep.json")]) == 0
    doc = json.loads((tmp_path / "sweep.json").read_text(encoding="utf-8"))
    (tmp_path / "partial.json").write_text(json.dumps({**doc, "runs": doc["runs"][:1], "complete": False}))
    capsys.readouterr()
    for other in (tmp_path / "other.sqlite3", tmp_path / "new.sqlite3"):
        if other.name == "other.sqlite3":
            Store(other)
        assert main([*data, "--store", str(other), "--resume", str(tmp_path / "partial.json"), "--dry-run"]) == 2
        err = capsys.readouterr().err
        assert "another budget store" in err and "--store" in err and "Traceback" not in err, err
    assert not (tmp_path / "new.sqlite3").exists()                 # a dry run creates no store
    assert main([*data, "--store", str(first), "--resume", str(tmp_path / "partial.json"), "--dry-run"]) == 0


def test_a_report_compares_an_older_documents_name_by_the_datas_shape(clinic):
    from dpfed_core.reporting import report as rep

    shape = {"n_users": 10, "n_items": 5, "n_entities": 2, "n_interactions": 30}
    older = {"dataset": shape, "odometer": {"dataset_key": dataset_key(clinic)}}
    newer = {"dataset": shape, "odometer": {"dataset_key": "dk-" + "0" * 40}}
    assert rep.same_data(older, newer)
    assert not rep.same_data(newer, {**newer, "odometer": {"dataset_key": "dk-" + "1" * 40}})
