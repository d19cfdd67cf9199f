"""Charges follow what was released: a resumed sweep pays only for the points it computes, a run that
fails before its first draw gives its reservation back (and one that drew does not), a cap cannot be
set below the spend, the store answers when it cannot be written and leaves nothing behind when it
cannot be created, and every release and cap change says who made it. Stores live under tmp_path."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpfed_core.cli.main import main
from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation import experiments
from dpfed_core.evaluation.service import execute_run, execute_sweep
from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused, PlannedRelease
from dpfed_core.privacy.store import Store, StoreError, actor

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def clinic():
    return load_data("sample:clinic")


def cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def spent(odo, ds) -> float:
    return max(b.spent_epsilon for b in odo.balance(ds))


# ------------------------------------------------------------------------------ sweeps resumed
def test_a_resumed_sweep_is_charged_only_for_the_points_it_computes(tmp_path, clinic):
    store = tmp_path / "sweep.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6)
    full = execute_sweep(clinic, cfg, [0.5, 1.0], [0], ["individual"], store=store, save=False).doc
    odo = BudgetOdometer(store)
    before = spent(odo, clinic)
    n_before = len(odo.releases(clinic))
    assert n_before == len(full["runs"]) >= 3
    partial = json.loads(json.dumps(experiments.json_safe(full)))
    partial["runs"] = [r for r in partial["runs"] if not (r["method"] == "dp-gaussian" and r["epsilon"] == 1.0)]
    partial["complete"] = False
    out = execute_sweep(clinic, cfg, [0.5, 1.0], [0], ["individual"], store=store, resume=partial, save=False)
    rows = odo.releases(clinic)
    new = [r for r in rows if r["operation"] == out.odometer["operation"]]
    assert [(r["method"], r["epsilon"]) for r in new] == [("dp-gaussian", 1.0)]
    assert len(rows) == n_before + 1
    assert before < spent(odo, clinic) <= before + 1.0 + 1e-9  # one point of ε = 1, not the sweep again
    assert len(out.doc["runs"]) == len(full["runs"])
    # resuming the complete document computes nothing and charges nothing
    with pytest.raises(ConfigError, match="already holds every point"):
        execute_sweep(clinic, cfg, [0.5, 1.0], [0], ["individual"], store=store,
                      resume=json.loads(json.dumps(experiments.json_safe(out.doc))), save=False)
    assert len(odo.releases(clinic)) == n_before + 1


@pytest.mark.parametrize("stop", ["before the second point", "in the second point, after its draws"])
def test_a_sweep_that_stops_gives_back_the_points_it_never_started_and_its_resume_pays_for_each_once(
        tmp_path, clinic, monkeypatch, stop):
    """Interrupted (Ctrl-C) at its second point, a sweep keeps the charge of the points it finished and of
    a point that had drawn, and gives back every point it never reached — its resume charges those once,
    not twice. A point that drew stays charged in both operations: its noise was drawn."""
    store = tmp_path / "stop.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6)
    grid = ([0.5, 1.0], [0, 1], ["individual"])  # per seed: dp-gaussian at 0.5 and 1, then individual
    real, calls, saved = experiments.run_method, [], {}

    def stopped(*a, **k):
        calls.append(1)
        if len(calls) == 2 and stop.startswith("before"):
            raise KeyboardInterrupt
        out = real(*a, **k)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(experiments, "run_method", stopped)
    with pytest.raises(KeyboardInterrupt):
        execute_sweep(clinic, cfg, *grid, store=store, save=False,
                      checkpoint=lambda d: saved.update(doc=json.loads(json.dumps(experiments.json_safe(d)))))
    odo = BudgetOdometer(store)
    first = sorted(odo.releases(clinic), key=lambda r: r["id"])
    assert len(first) == 6 and len(saved["doc"]["runs"]) == 1
    withdrawn = [r["status"] == "withdrawn" for r in first]
    drew = stop.startswith("in")
    assert withdrawn == [False, not drew, True, True, True, True], [r["status"] for r in first]
    assert all("not started before the sweep stopped" in r["note"] for r in first if r["status"] == "withdrawn")
    monkeypatch.setattr(experiments, "run_method", real)
    out = execute_sweep(clinic, cfg, *grid, store=store, resume=saved["doc"], save=False)
    rows = odo.releases(clinic)
    again = [r for r in rows if r["operation"] == out.odometer["operation"]]
    assert len(again) == 5 and all(r["charged"] for r in again if r["method"] == "dp-gaussian")
    kept = {}
    for r in rows:
        if r["status"] != "withdrawn" and r["method"] == "dp-gaussian":
            kept[(r["epsilon"], r["seed"])] = kept.get((r["epsilon"], r["seed"]), 0) + 1
    # every point charged once; the one that drew before the stop twice (its first draw was real)
    assert kept == {(0.5, 0): 1, (1.0, 0): 1 + drew, (0.5, 1): 1, (1.0, 1): 1}, kept


def test_a_sweep_run_in_worker_processes_gives_nothing_back_when_it_stops(tmp_path, clinic, monkeypatch):
    """With n_jobs = 2 a prototype method's entities release in worker processes, whose ledger rows this
    process sees only when they return: no row counted here is no proof that nothing was drawn, so a
    stopped sweep keeps every point charged."""
    store = tmp_path / "workers.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6, n_jobs=2)
    real, calls = experiments.run_method, []

    def stopped(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(experiments, "run_method", stopped)
    with pytest.raises(KeyboardInterrupt):
        execute_sweep(clinic, cfg, [0.5, 1.0], [0], ["individual"], store=store, save=False)
    rows = BudgetOdometer(store).releases(clinic)
    assert len(rows) == 3 and not [r for r in rows if r["status"] == "withdrawn"], [r["status"] for r in rows]


KILLED_SWEEP = """
import json, os, signal, sys
from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation import experiments
from dpfed_core.evaluation.service import execute_sweep

store, saved = sys.argv[1], sys.argv[2]
real, calls = experiments.run_method, []

def killed(*a, **k):
    calls.append(1)
    if len(calls) == 2:  # the second point has started: killed outright, no code runs as it stops
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **k)

def checkpoint(doc):
    with open(saved, "w", encoding="utf-8") as fh:
        json.dump(experiments.json_safe(doc), fh)

experiments.run_method = killed
cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6)
execute_sweep(load_data("sample:clinic"), cfg, [0.5, 1.0], [0, 1], ["individual"], store=store, save=False,
              checkpoint=checkpoint)
"""


def test_a_sweep_killed_outright_has_its_never_started_points_given_back_by_the_next_charge(tmp_path, clinic):
    """SIGKILL runs no code in the sweep: its progress, kept in the store after every finished point, tells
    the next charge on this machine which points never started once the process is provably gone. The point
    it was computing stays charged (it may have drawn), the finished one is released, the others withdrawn;
    the resume then pays for each of those once."""
    store, saved = tmp_path / "killed.sqlite3", tmp_path / "partial.json"
    script = tmp_path / "killed_sweep.py"
    script.write_text(KILLED_SWEEP, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "DPFED_STORE": str(tmp_path / "unused.sqlite3")}
    done = subprocess.run([sys.executable, str(script), str(store), str(saved)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr[-2000:]
    odo = BudgetOdometer(store)
    left = sorted(odo.releases(clinic), key=lambda r: r["id"])
    assert [r["status"] for r in left] == ["reserved"] * 6  # as the killed process left them
    partial = json.loads(saved.read_text(encoding="utf-8"))
    assert len(partial["runs"]) == 1
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6)
    out = execute_sweep(clinic, cfg, [0.5, 1.0], [0, 1], ["individual"], store=store, resume=partial, save=False)
    first = sorted((r for r in odo.releases(clinic) if r["operation"] != out.odometer["operation"]),
                   key=lambda r: r["id"])
    assert [r["status"] for r in first] == ["failed", "failed"] + ["withdrawn"] * 4, [r["status"] for r in first]
    assert all("not started before its process was killed" in r["note"] for r in first[2:])
    assert all("its process ended before settling it" in r["note"] for r in first[:2])
    assert any("gave back 4 releases that a killed sweep had reserved" in n for n in out.doc["notes"])
    kept = {}
    for r in odo.releases(clinic):
        if r["status"] != "withdrawn" and r["method"] == "dp-gaussian":
            kept[(r["epsilon"], r["seed"])] = kept.get((r["epsilon"], r["seed"]), 0) + 1
    # every point charged once; the one in flight when the process was killed twice (it may have drawn)
    assert kept == {(0.5, 0): 1, (1.0, 0): 2, (0.5, 1): 1, (1.0, 1): 1}, kept
    with Store(store).read() as con:
        assert not con.execute("SELECT name FROM meta WHERE name LIKE 'progress:%'").fetchall()


KILLED_RUN = """
import os, signal, sys
from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation import experiments
from dpfed_core.evaluation.service import execute_run

def killed(*a, **k):  # the run has started: killed outright, no code runs as it stops
    os.kill(os.getpid(), signal.SIGKILL)

experiments.run_method = killed
execute_run(load_data("sample:clinic"), RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6),
            compare=["local"], store=sys.argv[1], save=False)
"""


def test_a_run_killed_outright_has_its_releases_settled_as_failed_and_charged_by_the_next_charge(tmp_path, clinic):
    """A run and its comparisons are not computed in a known order, so which drew is in doubt: killed
    outright, they all stay charged, but the next charge on this machine marks them failed with the reason,
    not 'reserved' for ever as if still running, and gives nothing back."""
    store = tmp_path / "killed_run.sqlite3"
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "DPFED_STORE": str(tmp_path / "unused.sqlite3")}
    done = subprocess.run([sys.executable, str(script), str(store)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == -9, done.stderr[-2000:]
    odo = BudgetOdometer(store)
    killed = sorted(odo.releases(clinic), key=lambda r: r["id"])
    assert [(r["status"], r["method"]) for r in killed] == [("reserved", "dp-gaussian"), ("reserved", "local")]
    before = spent(odo, clinic)
    plan = PlannedRelease("run", "dp-gaussian", 0.5, 1e-6, {e: (0.5, 1e-6) for e in clinic.entity_names})
    assert odo.reserve(clinic, [plan]).recovered == []  # nothing given back
    after = {r["id"]: r for r in odo.releases(clinic)}
    assert [after[r["id"]]["status"] for r in killed] == ["failed", "failed"]
    assert all("its process ended before settling it" in after[r["id"]]["note"] for r in killed)
    assert before == pytest.approx(1.0) and spent(odo, clinic) == pytest.approx(1.5)  # the killed run's ε stays
    with Store(store).read() as con:
        assert not con.execute("SELECT name FROM meta WHERE name LIKE 'progress:%'").fetchall()


@pytest.mark.parametrize("owner", ["this process, still running", "another machine", "another PID namespace",
                                   "another user", "a process /proc will not show", "a row of another version",
                                   "a process id no process has"])
def test_progress_of_a_process_that_may_still_run_is_left_as_it_is(tmp_path, clinic, owner, monkeypatch):
    """Only a process provably gone has its points given back: a live one (this test), one recorded on
    another host, in another PID namespace (its PID means nothing here) or by another user (a hidepid mount
    hides another user's processes), one whose /proc entry refuses the read, a row this code did not
    write and a row naming process 0 keep every point reserved."""
    from pathlib import Path as _Path

    store = tmp_path / "alive.sqlite3"
    odo = BudgetOdometer(store)
    plans = [PlannedRelease("sweep point", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names},
                            seed=s) for s in range(3)]
    res = odo.reserve(clinic, plans)
    res.track()
    gone_pid = 2 ** 22 + 7  # no such process here
    if owner != "this process, still running":
        with Store(store).write() as con:
            name, value = con.execute("SELECT name, value FROM meta WHERE name LIKE 'progress:%'").fetchone()
            progress = json.loads(value)
            progress["owner"]["pid"] = gone_pid
            if owner == "another machine":
                progress["owner"]["host"] += "-elsewhere"
            elif owner == "another PID namespace":
                progress["owner"]["pidns"] += "-elsewhere"
            elif owner == "another user":
                progress["owner"]["uid"] += 1
            elif owner == "a row of another version":
                progress["version"] += 1
            elif owner == "a process id no process has":  # 0: the row is damaged, nothing provably ended
                progress["owner"]["pid"] = 0
            con.execute("UPDATE meta SET value = ? WHERE name = ?", (json.dumps(progress), name))
    if owner == "a process /proc will not show":
        read = _Path.read_text

        def refused(self, *a, **k):
            if str(self) == f"/proc/{gone_pid}/stat":
                raise PermissionError(13, "Permission denied", str(self))
            return read(self, *a, **k)

        monkeypatch.setattr(_Path, "read_text", refused)
    # the next charge looks for killed processes' progress
    assert odo.reserve(clinic, plans[:1]).recovered == []
    rows = [r for r in odo.releases(clinic) if r["operation"] == res.operation]
    assert [r["status"] for r in rows] == ["reserved"] * 3
    res.untrack()
    with Store(store).read() as con:
        assert not con.execute("SELECT name FROM meta WHERE name LIKE 'progress:%'").fetchall()


def test_a_process_whose_proc_is_another_namespaces_keeps_no_progress_to_recover(tmp_path, clinic, monkeypatch):
    """In a sandbox that did not mount its own /proc, /proc/self is another PID namespace's process: the
    identity it would record names someone else, whose end would give back a live sweep's points. No
    progress is kept then; a kill leaves every point charged."""
    import dpfed_core.privacy.store as store_module

    real = os.readlink
    monkeypatch.setattr(store_module.os, "readlink",
                        lambda p, *a, **k: str(os.getpid() + 1) if str(p) == "/proc/self" else real(p, *a, **k))
    assert store_module.process_identity() is None
    odo = BudgetOdometer(tmp_path / "sandbox.sqlite3")
    plan = PlannedRelease("sweep point", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names})
    odo.reserve(clinic, [plan, plan]).track()
    with Store(tmp_path / "sandbox.sqlite3").read() as con:
        assert not con.execute("SELECT name FROM meta WHERE name LIKE 'progress:%'").fetchall()


def test_unstarted_points_given_back_are_only_points_of_the_plan_still_reserved_and_keep_their_note(tmp_path, clinic):
    """A negative index names no point (Python would read it from the end: the last point, which may have
    drawn) and a settled point stays charged; the evidence is added to what the release already says."""
    odo = BudgetOdometer(tmp_path / "points.sqlite3")
    plans = [PlannedRelease("sweep point", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names},
                            seed=s, note=f"point {s + 1} of 3") for s in range(3)]
    res = odo.reserve(clinic, plans)
    res.settle(0)
    assert res.withdraw_unstarted([-1, 3, 0, 1, 1], "never started") == [1]
    res.close()
    rows = sorted(odo.releases(clinic), key=lambda r: r["id"])
    assert [r["status"] for r in rows] == ["released", "withdrawn", "released"]
    assert rows[1]["note"] == "point 2 of 3; never started" and rows[2]["note"] == "point 3 of 3"
    assert spent(odo, clinic) == pytest.approx(2.0)


def test_a_progress_row_settles_only_releases_of_its_own_operation(tmp_path, clinic):
    """A row naming releases of another operation (edited, or written over) proves nothing about them: that
    operation's releases stay as they are, even when the row's own process is gone."""
    store = tmp_path / "edited.sqlite3"
    odo = BudgetOdometer(store)
    plan = PlannedRelease("sweep point", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names})
    other = odo.reserve(clinic, [plan, plan])
    mine = odo.reserve(clinic, [plan, plan])
    mine.track()
    with Store(store).write() as con:
        name, value = con.execute("SELECT name, value FROM meta WHERE name LIKE 'progress:%'").fetchone()
        progress = json.loads(value)
        progress["owner"]["pid"] = 2 ** 22 + 7  # no such process: gone
        progress["ids"] = [[mine.release_ids[0], other.release_ids[0]], [mine.release_ids[1], other.release_ids[1]]]
        con.execute("UPDATE meta SET value = ? WHERE name = ?", (json.dumps(progress), name))
    assert odo.reserve(clinic, [plan]).recovered == [mine.release_ids[1]]
    status = {r["id"]: r["status"] for r in odo.releases(clinic)}
    assert [status[r] for r in mine.release_ids] == ["failed", "withdrawn"]
    assert [status[r] for r in other.release_ids] == ["reserved", "reserved"]


def _owner_gone(store) -> None:
    """The process that kept the store's progress row is gone: its owner names a PID no process has."""
    with Store(store).write() as con:
        name, value = con.execute("SELECT name, value FROM meta WHERE name LIKE 'progress:%'").fetchone()
        progress = json.loads(value)
        progress["owner"]["pid"] = 2 ** 22 + 7
        con.execute("UPDATE meta SET value = ? WHERE name = ?", (json.dumps(progress), name))


def test_releases_computed_in_no_known_order_stay_charged_whatever_was_noted_finished(tmp_path, clinic):
    """A run and its comparisons: which of them drew is in doubt, so a count of finished ones proves
    nothing and a killed process's releases are all charged (failed), none given back."""
    from dpfed_core.privacy.store import process_identity

    if process_identity() is None:
        pytest.skip("no /proc of this PID namespace: no progress is kept")
    store = tmp_path / "doubt.sqlite3"
    odo = BudgetOdometer(store)
    plan = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names})
    res = odo.reserve(clinic, [plan, plan, plan])
    res.track(sequential=False)
    res.note_finished(1)
    _owner_gone(store)
    assert odo.reserve(clinic, [plan]).recovered == []
    status = {r["id"]: r["status"] for r in odo.releases(clinic)}
    assert [status[r] for r in res.release_ids] == ["failed", "failed", "failed"]


def test_a_progress_row_of_a_gone_process_with_a_negative_count_gives_nothing_back(tmp_path, clinic):
    """A count below zero is not one this code writes: read as one, it would give back the point being
    computed (which may have drawn)."""
    from dpfed_core.privacy.store import process_identity

    if process_identity() is None:
        pytest.skip("no /proc of this PID namespace: no progress is kept")
    store = tmp_path / "negative.sqlite3"
    odo = BudgetOdometer(store)
    plan = PlannedRelease("sweep point", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names})
    res = odo.reserve(clinic, [plan, plan])
    res.track()
    _owner_gone(store)
    with Store(store).write() as con:
        con.execute("UPDATE meta SET value = json_set(value, '$.finished', -1) WHERE name LIKE 'progress:%'")
    assert odo.reserve(clinic, [plan]).recovered == []
    status = {r["id"]: r["status"] for r in odo.releases(clinic)}
    assert [status[r] for r in res.release_ids] == ["reserved", "reserved"]


def test_a_processes_start_time_is_read_after_its_names_last_parenthesis_and_a_garbled_line_gives_none():
    from dpfed_core.privacy import store as store_mod

    # field 22 of /proc/PID/stat, here each field its own number; the command name (field 2) may hold ") "
    tail = " ".join(str(n) for n in range(3, 53))
    assert store_mod._start_ticks(f"42 (plain) {tail}") == 22
    assert store_mod._start_ticks(f"42 (a) b) {tail}") == 22
    assert store_mod._start_ticks("42 (short) S 1 2") is None
    assert store_mod._start_ticks(f"42 (x) {tail}".replace(" 22 ", " 2x ")) is None


def test_an_identity_of_another_shape_another_boot_or_an_unreadable_start_is_never_taken_for_gone(monkeypatch):
    """Giving back a reservation needs proof that its process ended: an identity with a key more or less, one
    recorded before a reboot (PIDs start again), or a /proc entry whose start time cannot be read is none."""
    from dpfed_core.privacy import store as store_mod

    me = store_mod.process_identity()
    if me is None:
        pytest.skip("this process's /proc is not its own PID namespace's")
    gone = {**me, "pid": 2 ** 22 + 7}  # above any pid_max: no process has it
    assert store_mod.process_gone(gone)
    assert not store_mod.process_gone({**gone, "note": "edited"})
    assert not store_mod.process_gone({k: v for k, v in gone.items() if k != "start"})
    assert not store_mod.process_gone({**gone, "boot": me["boot"] + "-before-a-reboot"})
    monkeypatch.setattr(store_mod, "process_identity", lambda: me)
    monkeypatch.setattr(store_mod, "_start_ticks", lambda stat: None)
    assert not store_mod.process_gone(dict(me))


@pytest.mark.parametrize("row", ["null", "[]", '"x"', '{"version": 1, "owner": "me", "finished": 0, "ids": [[1]]}',
                                 '{"version": 1, "owner": {}, "finished": "one", "ids": [[1]]}',
                                 '{"version": 1, "owner": {}, "finished": 0, "ids": [1, 2]}', "{not json"])
def test_a_damaged_progress_row_never_stops_a_charge_and_gives_nothing_back(tmp_path, clinic, row):
    """A progress row this code did not write (damaged, edited, of another shape) proves nothing: every later
    charge goes on, and the releases it names stay as they are."""
    store = tmp_path / "damaged.sqlite3"
    odo = BudgetOdometer(store)
    plan = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names})
    first = odo.reserve(clinic, [plan])
    with Store(store).write() as con:
        con.execute("INSERT INTO meta (name, value) VALUES (?, ?)", ("progress:" + first.operation, row))
    assert odo.reserve(clinic, [plan]).recovered == []
    assert [r["status"] for r in odo.releases(clinic)] == ["reserved", "reserved"]


def test_cli_resume_of_a_complete_sweep_is_refused_and_not_charged(tmp_path, capsys):
    store, doc = str(tmp_path / "s.sqlite3"), tmp_path / "sweep.json"
    args = ["sweep", "--data", "sample:clinic", "--method", "dp-gaussian", "--k", "3", "--epsilons", "1",
            "--seeds", "0", "--references", "individual", "--store", store]
    rc, _, err = cli(capsys, *args, "--out", str(doc))
    assert rc == 0, err
    n = len(BudgetOdometer(store).releases(BudgetOdometer(store).account_key(load_data("sample:clinic"))))
    rc, _, err = cli(capsys, *args, "--resume", str(doc))
    assert rc == 2 and "already holds every point" in err and "Traceback" not in err
    assert len(BudgetOdometer(store).releases(BudgetOdometer(store).account_key(load_data("sample:clinic")))) == n


def test_a_document_of_another_sweep_is_refused_before_anything_is_charged(tmp_path, clinic):
    store = tmp_path / "other.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6)
    doc = json.loads(json.dumps(experiments.json_safe(
        execute_sweep(clinic, cfg, [1.0], [0], ["individual"], store=store, save=False).doc)))
    n = len(BudgetOdometer(store).releases(clinic))
    with pytest.raises(ConfigError, match="other settings") as exc:
        execute_sweep(clinic, cfg.replace(k=4), [1.0], [0], ["individual"], store=store, resume=doc, save=False)
    assert exc.value.param == "resume"
    assert len(BudgetOdometer(store).releases(clinic)) == n


# ------------------------------------------------------------------------------ failures before any draw
def test_a_run_that_fails_before_its_first_draw_gives_its_reservation_back(tmp_path, clinic, monkeypatch):
    store = tmp_path / "fail.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5)

    def broken_split(*a, **k):
        raise RuntimeError("the split failed")

    monkeypatch.setattr(experiments, "make_split", broken_split)
    with pytest.raises(RuntimeError):
        execute_run(clinic, cfg, store=store)
    odo = BudgetOdometer(store)
    (rel,) = odo.releases(clinic)
    assert rel["status"] == "withdrawn" and not rel["charged"] and "no ledger row" in rel["note"]
    assert rel["settled_by"] == actor()
    assert spent(odo, clinic) == 0.0 and all(b.n_releases == 0 for b in odo.balance(clinic))


def test_a_run_that_fails_after_drawing_stays_charged(tmp_path, clinic, monkeypatch):
    store = tmp_path / "drew.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5)
    real = experiments.run_method

    def drew_then_failed(*a, **k):
        real(*a, **k)
        raise RuntimeError("failed after the release")

    monkeypatch.setattr(experiments, "run_method", drew_then_failed)
    with pytest.raises(RuntimeError):
        execute_run(clinic, cfg, store=store)
    odo = BudgetOdometer(store)
    (rel,) = odo.releases(clinic)
    assert rel["status"] == "failed" and rel["charged"]
    assert spent(odo, clinic) == pytest.approx(1.0)


def test_a_runner_that_never_started_is_given_back_and_one_that_did_is_not(tmp_path, clinic):
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5)

    class NeverStarted(RuntimeError):
        ledger_rows = 0

    def runner_no_start(*a):
        raise NeverStarted("Flower missing")

    def runner_started(*a):
        raise RuntimeError("a node died")

    for runner, status, eps in ((runner_no_start, "withdrawn", 0.0), (runner_started, "failed", 1.0)):
        store = tmp_path / f"{status}.sqlite3"
        with pytest.raises(RuntimeError):
            execute_run(clinic, cfg, store=store, runner=runner)
        odo = BudgetOdometer(store)
        assert [r["status"] for r in odo.releases(clinic)] == [status]
        assert spent(odo, clinic) == pytest.approx(eps)


def test_withdraw_is_refused_once_anything_was_drawn_or_settled(tmp_path, clinic):
    odo = BudgetOdometer(tmp_path / "w.sqlite3")
    plan = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names}, seed=0)
    res = odo.reserve(clinic, [plan])
    for rows in (1, 3, -1):  # one row is one draw already: it stays charged; a count below zero proves nothing
        with pytest.raises(ValueError):
            res.withdraw(rows, f"{rows} rows")
    res.settle(0)
    with pytest.raises(ValueError):
        res.withdraw(0, "too late")
    assert spent(odo, clinic) == pytest.approx(1.0)
    # a run and its comparison: one of them settled is enough, the other stays charged too
    two = odo.reserve(clinic, [plan, plan])
    two.settle(0)
    with pytest.raises(ValueError, match="already settled"):
        two.withdraw(0, "too late")
    two.close()
    assert spent(odo, clinic) == pytest.approx(3.0)


def test_a_withdrawn_release_does_not_count_towards_the_cap(tmp_path, clinic):
    odo = BudgetOdometer(tmp_path / "cap.sqlite3")
    odo.set_cap(clinic, 1.0)
    plan = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names}, seed=0)
    odo.reserve(clinic, [plan]).withdraw(0, "nothing drawn")
    odo.reserve(clinic, [plan]).close()
    with pytest.raises(BudgetRefused):
        odo.reserve(clinic, [plan])
    assert odo.runs_left(clinic)["n"] == 0


def test_deploy_local_without_flower_is_refused_before_any_charge(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "flwr" else real(name, *a))
    store = str(tmp_path / "dep.sqlite3")
    rc, _, err = cli(capsys, "deploy-local", "--data", "sample:clinic", "--method", "dp-popularity",
                     "--aggregation", "secure", "--epsilon", "1", "--store", store)
    assert rc != 0 and "Flower" in err and "nothing was charged" in err
    if Path(store).exists():
        assert BudgetOdometer(store).releases(BudgetOdometer(store).account_key(load_data("sample:clinic"))) == []


# ------------------------------------------------------------------------------ caps and who
def test_cli_set_cap_below_the_spend_is_refused_and_changes_nothing(tmp_path, capsys, clinic):
    store = str(tmp_path / "c.sqlite3")
    data = ["--data", "sample:clinic", "--store", store]
    assert cli(capsys, "budget", "set-cap", *data, "--epsilon", "2")[0] == 0
    plan = PlannedRelease("run", "dp-gaussian", 1.5, 1e-6, {e: (1.5, 1e-6) for e in clinic.entity_names}, seed=0)
    BudgetOdometer(store).reserve(clinic, [plan]).close()
    rc, _, err = cli(capsys, "budget", "set-cap", *data, "--epsilon", "1")
    assert rc == 2 and "below what is already spent" in err and "Traceback" not in err
    assert BudgetOdometer(store).cap(BudgetOdometer(store).account_key(clinic)) == (2.0, 1e-5)
    assert cli(capsys, "budget", "set-cap", *data, "--epsilon", "1.6")[0] == 0


def test_every_release_and_cap_change_records_who_and_budget_releases_shows_it(tmp_path, capsys, clinic):
    store = str(tmp_path / "who.sqlite3")
    data = ["--data", "sample:clinic", "--store", store]
    assert cli(capsys, "budget", "set-cap", *data, "--epsilon", "5")[0] == 0
    odo = BudgetOdometer(store)
    plan = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names}, seed=0)
    odo.reserve(clinic, [plan]).close()
    odo.reserve(clinic, [plan]).withdraw(0, "nothing drawn")
    me = actor()
    assert "@" in me
    rows = odo.releases(clinic)
    assert [r["actor"] for r in rows] == [me, me] and [r["settled_by"] for r in rows] == [me, me]
    assert odo.cap_changes(clinic)[0]["actor"] == me
    rc, out, _ = cli(capsys, "budget", "releases", *data)
    assert rc == 0 and out.count(me) >= 2 and "withdrawn" in out and f"by {me}" in out
    rc, out, _ = cli(capsys, "budget", "releases", *data, "--json")
    view = json.loads(out)
    assert {r["actor"] for r in view["releases"]} == {me} and view["cap_changes"][0]["actor"] == me


# ------------------------------------------------------------------------------ the store file
def test_a_store_that_cannot_be_created_leaves_nothing_behind(tmp_path, monkeypatch):
    from dpfed_core.privacy import store as store_mod

    path = tmp_path / "new.sqlite3"

    def full(self):
        raise StoreError("database or disk is full")

    monkeypatch.setattr(store_mod.Store, "_migrate", full)
    with pytest.raises(StoreError):
        Store(path)
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_fails_to_be_set_up_leaves_no_journal_behind_either(tmp_path, monkeypatch):
    from dpfed_core.privacy import store as store_mod

    path = tmp_path / "new.sqlite3"

    def half_written(self):  # SQLite's side files were made before the failure
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").write_bytes(b"\0" * 32)
        raise StoreError("database or disk is full")

    monkeypatch.setattr(store_mod.Store, "_migrate", half_written)
    with pytest.raises(StoreError):
        Store(path)
    assert list(tmp_path.iterdir()) == []


def test_a_store_in_a_directory_this_process_cannot_write_opens_read_only(tmp_path, monkeypatch):
    """Its write-ahead log lives beside it: a writable file in a read-only directory takes no write either,
    so it opens for reading and a write says read-only before it touches anything."""
    d = tmp_path / "shared"
    d.mkdir()
    Store(d / "s.sqlite3")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if Path(p) == d and mode & os.W_OK
                        else real(p, mode, *a, **k))
    store = Store(d / "s.sqlite3")
    assert store.readonly and store.schema_version() >= 1
    with pytest.raises(StoreError, match="read-only here .*nothing was charged"):
        with store.write():
            pass


def _namespace_ok() -> bool:
    if shutil.which("unshare") is None:
        return False
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return r.returncode == 0


needs_ns = pytest.mark.skipif(not _namespace_ok(), reason="needs unshare -m (a private mount namespace)")


def _in_namespace(script: str, env_store: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), DPFED_STORE=env_store)
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=300)


def test_reading_a_store_that_does_not_exist_makes_nothing(tmp_path, capsys):
    """A mistyped --store answered from a new, empty store would read as a fresh budget and leave a
    store (and its folder) behind; a store deleted beside its key is still refused as a lost budget."""
    store = tmp_path / "typo" / "s.sqlite3"
    for argv in (["show", "--data", "sample:clinic"], ["releases", "--data", "sample:clinic"], ["list"]):
        code, out, _ = cli(capsys, "budget", *argv, "--store", str(store))
        assert code == 0 and f"store: {store} does not exist: nothing has been charged there" in out, out
        code, out, _ = cli(capsys, "budget", *argv, "--store", str(store), "--json")
        assert code == 0 and json.loads(out)["exists"] is False
    assert not store.parent.exists()
    kept = tmp_path / "kept.sqlite3"
    assert cli(capsys, "budget", "set-cap", "--data", "sample:clinic", "--epsilon", "2", "--store", str(kept))[0] == 0
    kept.unlink()
    code, out, err = cli(capsys, "budget", "show", "--data", "sample:clinic", "--store", str(kept))
    assert code == 2 and "was deleted or moved" in err and not kept.exists()


@needs_ns
def test_budget_show_works_on_a_read_only_store(tmp_path, clinic):
    d = tmp_path / "ro"
    d.mkdir()
    store = d / "owner.sqlite3"
    odo = BudgetOdometer(store)
    odo.set_cap(clinic, 3.0)
    plan = PlannedRelease("run", "dp-gaussian", 1.0, 1e-6, {e: (1.0, 1e-6) for e in clinic.entity_names}, seed=0)
    odo.reserve(clinic, [plan]).close()
    before = {p.name: p.stat().st_mtime_ns for p in d.iterdir()}
    py = sys.executable
    r = _in_namespace(f"mount --bind {d} {d} && mount -o remount,bind,ro {d} && "
                      f"{py} -m dpfed_core budget show --data sample:clinic --store {store} && "
                      f"{py} -m dpfed_core budget releases --data sample:clinic --store {store} && "
                      f"{py} -m dpfed_core run --data sample:clinic --method dp-gaussian --k 3 --epsilon 0.5 "
                      f"--store {store}", str(store))
    assert "cap: ε = 3" in r.stdout and "read-only here" in r.stdout and "dp-gaussian" in r.stdout, r.stderr
    assert r.returncode == 2 and "read-only" in r.stderr and "Traceback" not in r.stderr
    assert {p.name: p.stat().st_mtime_ns for p in d.iterdir()} == before


@needs_ns
def test_budget_show_works_on_a_full_disk_and_a_new_store_there_leaves_nothing(tmp_path, clinic):
    d = tmp_path / "full"
    d.mkdir()
    py = sys.executable
    setup = (f"{py} -c \"from dpfed_core.data.loaders import load_data; from dpfed_core.privacy.odometer import "
             f"BudgetOdometer, PlannedRelease; ds = load_data('sample:clinic'); o = BudgetOdometer('{d}/s.sqlite3'); "
             f"o.set_cap(ds, 2.0); o.reserve(ds, [PlannedRelease('run', 'dp-gaussian', 1.0, 1e-6, "
             f"{{e: (1.0, 1e-6) for e in ds.entity_names}}, seed=0)]).close()\"")
    r = _in_namespace(f"mount -t tmpfs -o size=4m tmpfs {d} && {setup} && "
                      f"(dd if=/dev/zero of={d}/fill bs=64k 2>/dev/null; true) && "
                      f"{py} -m dpfed_core budget show --data sample:clinic --store {d}/s.sqlite3; "
                      f"echo show=$?; {py} -m dpfed_core budget show --data sample:clinic --store {d}/new.sqlite3; "
                      f"echo new=$?; ls {d}", str(d / "s.sqlite3"))
    assert "cap: ε = 2" in r.stdout and "show=0" in r.stdout, r.stdout + r.stderr
    # a read of a store that does not exist answers so and makes nothing
    assert "new.sqlite3 does not exist: nothing has been charged there" in r.stdout, r.stdout + r.stderr
    assert "new=0" in r.stdout and "new.sqlite3" not in r.stdout.split("new=0", 1)[1], r.stdout + r.stderr


# ------------------------------------------------------------------------------ the run service
def test_a_compared_method_is_the_runs_own_only_once_and_the_parameters_note_needs_parameters(tmp_path, clinic):
    from dpfed_core.evaluation.history import RunHistory

    store = tmp_path / "run.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6)
    out = execute_run(clinic, cfg, compare=["dp-gaussian", "individual"], store=store, save=False)
    assert list(out.doc["comparison"]) == ["individual"] and list(out.comparison) == ["individual"]
    assert not [n for n in out.doc.get("notes", []) if n.startswith("parameters ")]
    # save=False: charged, but nothing kept in the history
    assert out.history_id is None and RunHistory(store).list() == []
    assert out.odometer["store"] == str(store)


def test_a_sweep_not_to_be_saved_leaves_the_history_empty(tmp_path, clinic):
    from dpfed_core.evaluation.history import RunHistory

    store = tmp_path / "sweep.sqlite3"
    cfg = RunConfig(method="dp-gaussian", epsilon=1.0, k=3, max_iter=5, delta=1e-6)
    out = execute_sweep(clinic, cfg, [1.0], [0], ["individual"], store=store, save=False)
    assert out.history_id is None and RunHistory(store).list() == []


def test_a_compared_dp_method_needs_a_declared_federation_too(clinic):
    from dataclasses import replace

    from dpfed_core.evaluation.service import check_run

    undeclared = replace(clinic, entity_source="data", entities_accepted=False)
    check_run(undeclared, RunConfig(method="individual"), ["central"])
    with pytest.raises(ConfigError, match="entity list is read from the private data") as e:
        check_run(undeclared, RunConfig(method="individual", epsilon=1.0), ["dp-gaussian"])
    assert e.value.param == "entities"
    # a run that spends no ε (here at ε = ∞) compares a DP method at the default ε, where it is a DP release
    from dpfed_core.evaluation.defaults import default_config

    default = default_config(clinic, "dp-popularity").epsilon
    with pytest.raises(ConfigError, match=rf"a DP run \(dp-popularity at ε = {default:g}\)") as e:
        check_run(undeclared, RunConfig(method="popularity", epsilon=float("inf")), ["dp-popularity"])
    assert e.value.param == "entities"


def test_the_sweep_summary_compares_with_individual_beside_local_and_with_dp_popularity_as_its_baseline():
    import math

    from dpfed_core.evaluation.service import summarise_sweep

    runs = []
    for s in range(2):
        runs += [{"method": "dp", "epsilon": e, "seed": s, "entities": [], "overall": {"mar": m}}
                 for e, m in ((1.0, 0.30), (3.0, 0.10))]
        runs += [{"method": "dp-popularity", "epsilon": e, "seed": s, "entities": [], "overall": {"mar": 0.2}}
                 for e in (1.0, 3.0)]
        runs.append({"method": "individual", "epsilon": 0.0, "seed": s, "entities": [], "overall": {"mar": 0.4}})
    doc = summarise_sweep({"config": {"method": "dp", "mode": "zero"}, "runs": runs,
                           "references": ["individual", "dp-popularity"]}, metrics=("mar",))
    assert doc["crossing"]["mar"]["baseline"] == "individual" and doc["crossing_epsilon"]["mar"] == 1.0
    assert "crossing_vs_individual" not in doc  # beside local only: here it is the crossing itself
    vs = doc["crossing_vs_dp_popularity"]["mar"]
    assert vs["baseline"] == "dp-popularity" and vs["epsilon"] == 3.0
    assert [r["verdict"] for r in doc["versus_dp_popularity"]["mar"]] == ["LOSES to dp-popularity",
                                                                         "beats dp-popularity"]
    assert math.isclose(doc["tables"]["mar"][0]["mean"], 0.30)


# ------------------------------------------------------------------------------ the sweep document
def _tiny():
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((45, 12)) < 0.35).astype(float))
    return FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], 15), value_kind="binary", value_max=1.0,
                                       item_source="declared", name="tiny")


def test_a_sweep_checkpoints_every_point_but_the_last_and_lists_its_references_without_the_swept_method():
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=2, simulation=True)
    seen = []
    doc = experiments.sweep(_tiny(), cfg, [0.5, 2.0], [0], ["dp-popularity", "individual"],
                            checkpoint=lambda d: seen.append((len(d["runs"]), d["complete"])))
    assert doc["references"] == ["individual"] and doc["complete"] is True
    assert [(r["method"], r["epsilon"]) for r in doc["runs"]] == [("dp-popularity", 0.5), ("dp-popularity", 2.0),
                                                                 ("individual", 0.0)]
    assert seen == [(1, False), (2, False)]


def test_a_resumed_sweep_keeps_each_point_once_in_the_grids_order_and_refuses_other_data(tmp_path):
    ds = _tiny()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=2, simulation=True)
    name = BudgetOdometer(tmp_path / "s.sqlite3").account_key  # the data's name in the sweep's store
    full = json.loads(json.dumps(experiments.json_safe(experiments.sweep(ds, cfg, [0.5, 2.0], [0, 1], ["individual"],
                                                                         data_key=name(ds)))))
    key = [(r["method"], r["epsilon"], r["seed"]) for r in full["runs"]]
    last = full["runs"][-1]
    partial = {**full, "runs": [last, last, *full["runs"][:2]], "complete": False}
    out = experiments.sweep(ds, cfg, [0.5, 2.0], [0, 1], ["individual"], resume=partial, data_key=name(ds))
    assert [(r["method"], r["epsilon"], r["seed"]) for r in out["runs"]] == [
        (m, float(e) if e != "inf" else math.inf, s) for m, e, s in key]
    # other values under the same name and the same counts: refused by the data's content key
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    flipped = ds.X.tocsr(copy=True)
    flipped.data[:] = 0.5
    same_shape = FederatedDataset.from_parts(sp.csr_matrix(flipped), np.repeat(["a", "b", "c"], 15),
                                             value_kind="binary", value_max=1.0, item_source="declared", name="tiny")
    assert experiments.dataset_summary(same_shape) == experiments.dataset_summary(ds)
    with pytest.raises(ConfigError, match="written for other data: 'tiny' there, 'tiny' here, and their contents"):
        experiments.sweep(same_shape, cfg, [0.5, 2.0], [0, 1], ["individual"], resume=partial,
                          data_key=name(same_shape))
    # the same data under another name (a copy of the file) resumes
    renamed = FederatedDataset.from_parts(ds.X, np.repeat(["a", "b", "c"], 15), value_kind="binary", value_max=1.0,
                                          item_source="declared", name="tiny copy")
    assert len(experiments.sweep(renamed, cfg, [0.5, 2.0], [0, 1], ["individual"], resume=partial,
                                 data_key=name(renamed))["runs"]) == 6
    # a document written before sweeps kept the data's name: compared by name and counts
    old = {k: v for k, v in partial.items() if k != "data_key"}
    other = {**old, "dataset": {**old["dataset"], "n_interactions": old["dataset"]["n_interactions"] + 1}}
    with pytest.raises(ConfigError, match="written for other data"):
        experiments.sweep(ds, cfg, [0.5, 2.0], [0, 1], ["individual"], resume=other)


def test_a_comparison_run_on_its_own_is_recorded_as_the_cli_records_a_compared_method(tmp_path, clinic):
    """The dashboard's Evaluate page runs each comparison on its own; its release is a comparison in the
    store, as the same method given to ``run --compare`` is, never a second "run"."""
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6)
    alone, together = tmp_path / "alone.sqlite3", tmp_path / "together.sqlite3"
    execute_run(clinic, cfg, store=alone, save=False, comparison=True)
    execute_run(clinic, cfg.replace(method="individual"), compare=["dp-popularity"], store=together, save=False)
    kinds = {path.name: {r["method"]: r["kind"] for r in BudgetOdometer(path).releases(clinic)}
             for path in (alone, together)}
    assert kinds["alone.sqlite3"] == {"dp-popularity": "comparison"}
    assert kinds["together.sqlite3"]["dp-popularity"] == "comparison"
    execute_run(clinic, cfg, store=alone, save=False)
    assert sorted(r["kind"] for r in BudgetOdometer(alone).releases(clinic)) == ["comparison", "run"]


def test_cli_resume_without_out_completes_the_document_it_reads_and_a_complete_one_is_refused(tmp_path, capsys):
    """`sweep --resume FILE` without --out writes the finished sweep back to FILE: the document it resumes
    is the one input it is meant to rewrite, and the points it lacked are computed into it."""
    store, doc = str(tmp_path / "s.sqlite3"), tmp_path / "sweep.json"
    args = ["sweep", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilons", "0.5,1", "--seeds", "0",
            "--references", "", "--store", store]
    rc, _, err = cli(capsys, *args, "--out", str(doc))
    assert rc == 0, err
    partial = json.loads(doc.read_text())
    partial["runs"] = [r for r in partial["runs"] if r["epsilon"] != 1.0]
    partial["complete"] = False
    doc.write_text(json.dumps(partial))
    rc, out, err = cli(capsys, *args, "--resume", str(doc))
    assert rc == 0, err
    assert f"wrote {doc}" in out
    back = json.loads(doc.read_text())
    assert back["complete"] is True and sorted(r["epsilon"] for r in back["runs"]) == [0.5, 1.0]
    # now complete: a resume (a dry run too) is refused naming the file, and nothing is computed
    for extra in ([], ["--dry-run"]):
        rc, out, err = cli(capsys, *args, "--resume", str(doc), *extra)
        assert rc == 2 and f"--resume {doc} already holds every point" in err and "predicted" not in out, err
